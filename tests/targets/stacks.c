// SPDX-License-Identifier: GPL-2.0
/*
 * A program whose region spends known shares of its time in known functions
 * (sample --stacks, drill: tests/integration/test_stacks.py):
 *
 *	stacks US ITERS [THREADS] [--wait]
 *
 * THREADS threads (default 2) each run ITERS iterations of: region work [Work] around
 * f1 (US/2 us, in the executable), lib_f2 (US/3 us, in libstacks.so) and its own loop
 * (US/6 us, in worker itself); then f1 again outside every region (US/4 us). Each part's
 * CPU time is measured (CLOCK_THREAD_CPUTIME_ID around it) and, at the end, printed as
 * one line of JSON: {"work_ns", "f1_in_ns", "f2_ns", "own_ns", "f1_out_ns"} summed over
 * the threads, the truth the samples are held to, and "buckets": per 100 ms of
 * CLOCK_MONOTONIC (the first starting at "t0_ns"), the same sums and the iterations that
 * ended in it, [work, f1_in, f2, own, f1_out, iterations], the truth of a window. With
 * --wait it prints "ready PID" and waits for a line first. With --chunks (ITERS and
 * THREADS unused) it prints "ready PID", then for each line N it reads runs N iterations
 * on its main thread and prints the nanoseconds they took (CLOCK_MONOTONIC), until its
 * input ends: windows a benchmark can sample or not in turn (tests/bench/stacks_bench.py).
 * Built with frame pointers (stacks_fp), without (stacks), and with FEATPROF_SAMPLING
 * (stacks_sampled).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "featprof.h"

void lib_f2(long units);

static long us, iters;
static double units_per_us;
static volatile unsigned long sink;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long long tot[5];	/* work, f1 in, f2, own, f1 out */
#define NBUCKETS 1200		/* 100 ms each: two minutes */
static long long bucket[NBUCKETS][6], start;

static long long mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static long long cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static inline unsigned long compute(unsigned long x, long units)
{
	long i;

	for (i = 0; i < units; i++)
		x = x * 6364136223846793005UL + (unsigned long)i;
	return x;
}

__attribute__((noinline)) void f1(long units)
{
	sink = compute(sink, units);
}

static void *worker(void *arg)
{
	long long t[5] = { 0 }, a, b, c, d, e;
	long u = (long)(units_per_us * (double)us), i, k, j;

	(void)arg;
	for (i = 0; i < iters; i++) {
		FP_BEGIN(work, "Work");
		a = cpu_ns();
		f1(u / 2);
		b = cpu_ns();
		lib_f2(u / 3);
		c = cpu_ns();
		sink = compute(sink, u / 6);	/* the region's own code */
		d = cpu_ns();
		FP_END(work);
		f1(u / 4);
		e = cpu_ns();
		t[0] += d - a;
		t[1] += b - a;
		t[2] += c - b;
		t[3] += d - c;
		t[4] += e - d;
		k = (mono_ns() - start) / 100000000;
		if (k >= 0 && k < NBUCKETS) {
			long long v[6] = { d - a, b - a, c - b, d - c, e - d, 1 };

			pthread_mutex_lock(&lock);
			for (j = 0; j < 6; j++)
				bucket[k][j] += v[j];
			pthread_mutex_unlock(&lock);
		}
	}
	pthread_mutex_lock(&lock);
	for (i = 0; i < 5; i++)
		tot[i] += t[i];
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 3 && argv[3][0] != '-' ? atoi(argv[3]) : 2, i;
	long long t0;
	pthread_t th[64];
	char line[64];

	if (argc < 3 || threads < 1 || threads > 64) {
		fprintf(stderr, "usage: stacks US ITERS [THREADS] [--wait|--chunks]\n");
		return 2;
	}
	us = atol(argv[1]);
	iters = atol(argv[2]);
	t0 = cpu_ns();	/* how many units a microsecond computes */
	f1(10000000);
	units_per_us = 1e7 / ((double)(cpu_ns() - t0) / 1e3);
	if (!strcmp(argv[argc - 1], "--chunks")) {
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		start = mono_ns();
		while (fgets(line, sizeof(line), stdin) && (iters = atol(line)) > 0) {
			t0 = mono_ns();
			worker(NULL);
			printf("%lld\n", mono_ns() - t0);
			fflush(stdout);
		}
		return 0;
	}
	if (!strcmp(argv[argc - 1], "--wait")) {
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 1;
	}
	start = mono_ns();
	for (i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	printf("{\"work_ns\": %lld, \"f1_in_ns\": %lld, \"f2_ns\": %lld, \"own_ns\": %lld, "
	       "\"f1_out_ns\": %lld, \"t0_ns\": %lld, \"buckets\": [", tot[0], tot[1], tot[2],
	       tot[3], tot[4], start);
	for (i = 0; i < NBUCKETS && (long long)i * 100000000 < mono_ns() - start; i++)
		printf("%s[%lld,%lld,%lld,%lld,%lld,%lld]", i ? "," : "", bucket[i][0],
		       bucket[i][1], bucket[i][2], bucket[i][3], bucket[i][4], bucket[i][5]);
	printf("]}\n");
	return 0;
}
