// SPDX-License-Identifier: GPL-2.0
/*
 * regress: a request loop with five regions of fixed compute work, and synthetic
 * regressions inserted under flags, to validate `featprof diff` (docs/REGRESSIONS.md).
 *
 *   parse [Query]   plan [Query]   execute [Exec] { scan [Exec] }
 *   store [Storage]   log [Logging]
 *
 * usage: regress [REGION=US ...]   e.g. regress plan=100 store=1000
 * A flag adds a busy-wait of US microseconds of the thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID) inside the region, at its end: the program's own cost, which
 * the machine's load (time preempted) does not shorten. Runs until killed. The work is
 * compute (an LCG over a buffer), so its time varies with the machine as real code does.
 * Built twice: regress, and regress_sampled with FEATPROF_SAMPLING (the sampling
 * accuracy test, t_sample).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "featprof.h"

enum { PARSE, PLAN, EXECUTE, SCAN, STORE, LOG, NREG };
static const char *names[NREG] = { "parse", "plan", "execute", "scan", "store", "log" };
static long extra_us[NREG];
static volatile uint64_t sink;

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* About 1 ns of work per unit on current x86-64. */
static void work(long units)
{
	uint64_t x = sink;

	for (long i = 0; i < units; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

static void extra(int r)
{
	uint64_t end;

	if (!extra_us[r])
		return;
	end = cpu_ns() + (uint64_t)extra_us[r] * 1000;
	while (cpu_ns() < end)
		;
}

/* store ends here, in another function than it begins: its code is not contiguous */
static __attribute__((noinline)) void store_finish(void)
{
	work(250000);
	extra(STORE);
	FP_END(store);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		int r;

		for (r = 0; r < NREG && (!eq || strncmp(argv[i], names[r], (size_t)(eq - argv[i]))
					       || strlen(names[r]) != (size_t)(eq - argv[i])); r++)
			;
		if (r == NREG) {
			fprintf(stderr, "regress: expected REGION=US with REGION one of parse, "
				"plan, execute, scan, store, log: '%s'\n", argv[i]);
			return 2;
		}
		extra_us[r] = atol(eq + 1);
	}
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		FP_BEGIN(parse, "Query");
		work(300000);
		extra(PARSE);
		FP_END(parse);
		FP_BEGIN(plan, "Query");
		work(700000);
		extra(PLAN);
		FP_END(plan);
		FP_BEGIN(execute, "Exec");
		work(600000);
		FP_BEGIN(scan, "Exec");
		work(900000);
		extra(SCAN);
		FP_END(scan);
		extra(EXECUTE);
		FP_END(execute);
		FP_BEGIN(store, "Storage");
		work(250000);
		store_finish();
		FP_BEGIN(log, "Logging");
		work(200000);
		extra(LOG);
		FP_END(log);
	}
}
