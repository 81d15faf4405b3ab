// SPDX-License-Identifier: GPL-2.0
/*
 * A region whose time goes to a hot leaf called about a million times a second and to a
 * heavier function, under two wrappers that spend nothing of their own, for featprof
 * drill (tests/integration/test_explain.py t_drill_hot):
 *
 *	hotleaf SECONDS
 *
 * For SECONDS, on one thread: region encode (feature Encode) -> outer_wrap ->
 * inner_wrap -> 10000 calls of hot_leaf (a few tens of ns each) and one block_work
 * of about the same time as those together (under a millisecond each here). Prints
 * "ready PID" first and each function's CPU time inside encode by its own clock at
 * the end (JSON).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "featprof.h"

static volatile unsigned long sink;
static long long t_block, t_leaf;	/* ns by the thread's CPU clock, per instance */

static long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline __attribute__((always_inline)) void burn(long n)
{
	unsigned long x = sink | 1;

	for (long i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	sink = x;
}

__attribute__((noinline)) static void hot_leaf(void)
{
	burn(40);
}

__attribute__((noinline)) static void block_work(void)
{
	burn(400000);
}

__attribute__((noinline)) static void inner_wrap(void)
{
	long long t0 = cpu_ns(), t1;

	for (int i = 0; i < 10000; i++)
		hot_leaf();
	t1 = cpu_ns();
	block_work();
	t_leaf += t1 - t0;
	t_block += cpu_ns() - t1;
}

__attribute__((noinline)) static void outer_wrap(void)
{
	inner_wrap();
	__asm__ volatile("" ::: "memory");	/* not a tail call: a frame of its own */
}

int main(int argc, char **argv)
{
	long long end, t0 = cpu_ns(), t_enc = 0;
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = ts.tv_sec + (argc > 1 ? atol(argv[1]) : 10);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	do {
		long long a = cpu_ns();

		FP_BEGIN(encode, "Encode");
		outer_wrap();
		FP_END(encode);
		t_enc += cpu_ns() - a;
		clock_gettime(CLOCK_MONOTONIC, &ts);
	} while (ts.tv_sec < end);
	printf("{\"encode_ns\": %lld, \"hot_leaf_ns\": %lld, \"block_work_ns\": %lld, "
	       "\"cpu_ns\": %lld}\n", t_enc, t_leaf, t_block, cpu_ns() - t0);
	return 0;
}
