// SPDX-License-Identifier: GPL-2.0
/*
 * Two threads, each in a function of its own (tests/integration/test_stacks.py
 * t_stacks_threads): "spin-a" runs spin_a, "spin-b" spin_b, each for SECONDS, while
 * main waits for them. Per thread, all of its CPU time is its own function's.
 *
 *	threads SECONDS
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;
static long secs = 2;

static int over(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec - t0->tv_sec + (t.tv_nsec - t0->tv_nsec) / 1e9 >= secs;
}

static __attribute__((noinline)) void spin(unsigned long n)
{
	unsigned long x = sink | 1;

	for (unsigned long i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	sink = x;
}

static __attribute__((noinline)) void spin_a(void)
{
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!over(&t0))
		spin(100000);
}

static __attribute__((noinline)) void spin_b(void)	/* not spin_a's code: GCC would fold
							 * the two into one (-fipa-icf) */
{
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!over(&t0))
		spin(50000);
}

static void *run(void *arg)
{
	pthread_setname_np(pthread_self(), arg ? "spin-b" : "spin-a");
	if (arg)
		spin_b();
	else
		spin_a();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;

	if (argc > 1)
		secs = atol(argv[1]);
	pthread_create(&a, NULL, run, NULL);
	pthread_create(&b, NULL, run, (void *)1);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
