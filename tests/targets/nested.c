// SPDX-License-Identifier: GPL-2.0
/*
 * Short function regions nested deep, no featprof.h (tests/integration/test_functions.py,
 * t_function_short_nested; issue 44): a chain of four functions (chain4 calls chain3 ...
 * chain1) and a function recursive four deep (nest_rec), each level LEVEL_NS of its own
 * work, half before its call and half after, on several threads. Each function times
 * its own body with CLOCK_MONOTONIC, less the windows around the measured function it
 * calls: its exclusive time. That is the program's truth for featprof's compensated
 * figures; the window around the outermost call is not (it holds the probes of every
 * nested call, which featprof removes, as it should).
 *
 * Usage: nested N_THREADS ROUNDS LEVEL_NS. Says "ready PID", reads a line on stdin before
 * the work and after it; prints its truth as one JSON line between the two.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))
#define DEPTH 4

struct truth {
	long long calls, excl_ns;
};

static struct truth t_chain[DEPTH + 1], t_rec;
static long level_ns;

static long long now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void spin(long ns)
{
	long long t0 = now();

	while (now() - t0 < ns)
		;
}

static void add(struct truth *t, long long ns)
{
	__atomic_add_fetch(&t->calls, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&t->excl_ns, ns, __ATOMIC_RELAXED);
}

/* A level: half its work, the call (its window not its own), the other half. */
#define LEVEL(TRUTH, CALL)                                      \
	do {                                                    \
		long long t0 = now(), inner = 0, c0;            \
		spin(level_ns / 2);                             \
		c0 = now();                                     \
		CALL;                                           \
		inner = now() - c0;                             \
		spin(level_ns - level_ns / 2);                  \
		add(TRUTH, now() - t0 - inner);                 \
	} while (0)

NOINLINE void chain1(void)
{
	long long t0 = now();

	spin(level_ns);
	add(&t_chain[1], now() - t0);
}

NOINLINE void chain2(void)
{
	LEVEL(&t_chain[2], chain1());
}

NOINLINE void chain3(void)
{
	LEVEL(&t_chain[3], chain2());
}

NOINLINE void chain4(void)
{
	LEVEL(&t_chain[4], chain3());
}

NOINLINE void nest_rec(int depth)
{
	if (depth <= 1) {
		long long t0 = now();

		spin(level_ns);
		add(&t_rec, now() - t0);
		return;
	}
	LEVEL(&t_rec, nest_rec(depth - 1));
}

static int rounds;

static void *worker(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < rounds; i++) {
		spin(level_ns);
		chain4();
		spin(level_ns);
		nest_rec(DEPTH);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 1 ? atoi(argv[1]) : 2, i;
	pthread_t th[16];
	char line[64];

	rounds = argc > 2 ? atoi(argv[2]) : 2000;
	level_ns = argc > 3 ? atol(argv[3]) : 5000;
	if (nthreads < 1 || nthreads > 16 || rounds < 1 || level_ns < 2)
		return 2;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, worker, NULL))
			return 1;
	for (i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	printf("{");
	for (i = 1; i <= DEPTH; i++)
		printf("\"chain%d\": {\"calls\": %lld, \"excl_ns\": %lld}, ", i, t_chain[i].calls,
		       t_chain[i].excl_ns);
	printf("\"nest_rec\": {\"calls\": %lld, \"excl_ns\": %lld}}\n", t_rec.calls, t_rec.excl_ns);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 0;
	return 0;
}
