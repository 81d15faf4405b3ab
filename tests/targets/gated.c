// SPDX-License-Identifier: GPL-2.0
/*
 * gated: the sampling stack's two builds side by side (t_sample_gated). Built twice:
 * gated (FEATPROF_SAMPLING_GATED: the stack kept only while a sampler raises the gate)
 * and gated_always (FEATPROF_SAMPLING: kept always).
 *
 * The main thread begins `outer` at once and then works in `inner` regions until
 * SIGUSR1, when it ends `outer` and says so; it goes on with `inner` alone until killed.
 * Commands on stdin: "gate" prints the gate's value (the semaphore featprofd raises;
 * 0 in the always build) and the thread's stack depth, as the program sees them.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "featprof.h"

static volatile sig_atomic_t end_outer;
static volatile uint64_t sink;
static volatile unsigned int main_depth;

static void on_usr1(int sig)
{
	(void)sig;
	end_outer = 1;
}

static void *commands(void *arg)
{
	char line[64];

	(void)arg;
	while (fgets(line, sizeof(line), stdin)) {
		if (!strncmp(line, "gate", 4)) {
#ifdef FEATPROF_SAMPLING_GATED
			unsigned int gate = featprof_sample_gate;
#else
			unsigned int gate = 0;
#endif
			printf("gate %u depth %u\n", gate, main_depth);
			fflush(stdout);
		}
	}
	return NULL;
}

int main(void)
{
	pthread_t th;
	int open = 1;

	signal(SIGUSR1, on_usr1);
	FP_BEGIN(outer, "Outer");
	/* before "ready": a "gate" command may come before the first inner ends */
	main_depth = featprof_tls.depth;
	pthread_create(&th, NULL, commands, NULL);
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		uint64_t x = sink;

		FP_BEGIN(inner, "Inner");
		for (int i = 0; i < 200000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		sink = x;
		FP_END(inner);
		main_depth = featprof_tls.depth;
		if (open && end_outer) {
			FP_END(outer);
			open = 0;
			printf("ended\n");
			fflush(stdout);
		}
	}
}
