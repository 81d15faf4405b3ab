// SPDX-License-Identifier: GPL-2.0
/*
 * The in-process runtime's histogram (usdt/featprof_inprocess.h): an end puts its
 * instance, kept in clock units, into the log2(ns) bucket its figure's cache holds when
 * the instance falls inside it, else through __fp_ip_bucket, which counts it and refills
 * the cache from the arena's bucket starts. Every instance must land in the bucket of
 * log2(ns(duration)), the conversion featprofd applies, whatever the clock's rate: each
 * bucket's first and last tick, ticks spread over all buckets, and runs of one bucket,
 * under TSC rates from 0.1 to 5 GHz and under CLOCK_MONOTONIC (ns themselves).
 */
#define FEATPROF_INPROCESS
#define FEATPROF_IP_RUNTIME
#include <stdint.h>
#include <stdlib.h>
#include "usdt/featprof_abi.h"
#include "tests/unit/test.h"

static struct featprof_ip_arena arena;

static unsigned int want_bucket(const struct featprof_ip_ctl *p, unsigned long long t)
{
	unsigned int k = __fp_ip_log2(__fp_ip_ns(p, t));

	return k < FP_IP_HIST ? k : FP_IP_HIST - 1;
}

static unsigned long long rnd(void)
{
	static uint64_t x = 0x9e3779b97f4a7c15ULL;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x;
}

/* The instances' sequence: bucket edges, then spread ones, then runs in one bucket. */
static unsigned long long pick(int i, const unsigned long long *b)
{
	unsigned int k = (unsigned int)(i / 4) % FP_IP_HIST;
	unsigned long long hi = b[k + 1] == ~0ULL ? b[k] * 4 + 4 : b[k + 1];

	if (i < 4 * FP_IP_HIST)	/* each bucket's first, second, last and past it */
		return i % 4 == 0 ? b[k] : i % 4 == 1 ? b[k] + 1 : i % 4 == 2 ? hi - 1 : hi;
	if (i < 20000)	/* log-uniform over all the buckets */
		return rnd() >> (rnd() % 64);
	return 1000 + rnd() % 50;	/* steady: the cache's usual case */
}

static void one(const char *what, unsigned int clock, unsigned long long mult,
		unsigned int shift)
{
	struct featprof_ip_ctl *p = &featprof_ip_ctl;
	static struct featprof_ip_fig g;
	unsigned long long want[FP_IP_HIST] = { 0 }, t;
	int i, k, bad = 0, edges = 0;

	p->clock = clock;
	p->tsc_mult = mult;
	p->tsc_shift = shift;
	p->arena = &arena;
	memset(&arena, 0, sizeof(arena));
	memset(&g, 0, sizeof(g));
	__fp_ip_buckets(p, &arena);
	for (k = 1; k < FP_IP_HIST; k++) {	/* each start is the first of its bucket */
		t = arena.bucket[k];
		edges += want_bucket(p, t) >= (unsigned int)k &&
			 (!t || want_bucket(p, t - 1) < (unsigned int)k);
	}
	CHECK_INT(edges, FP_IP_HIST - 1);
	for (i = 0; i < 30000; i++) {
		t = pick(i, arena.bucket);
		__fp_ip_hist(p, &g, t);
		want[want_bucket(p, t)]++;
	}
	for (k = 0; k < FP_IP_HIST; k++)
		bad += g.hist[k] != want[k];
	CHECK(!bad, "%s: %d buckets differ from log2(ns)", what, bad);
	printf("  %s: 30000 instances, %d buckets differ; bucket 10 (1024 ns) starts at %llu "
	       "clock units\n", what, bad, (unsigned long long)arena.bucket[10]);
}

int main(void)
{
	one("TSC 2.6 GHz", FP_IP_CLOCK_TSC, (1ULL << 24) * 10 / 26, 24);
	one("TSC 1 GHz", FP_IP_CLOCK_TSC, 1ULL << 24, 24);
	one("TSC 5 GHz", FP_IP_CLOCK_TSC, (1ULL << 24) / 5, 24);
	one("TSC 0.1 GHz", FP_IP_CLOCK_TSC, (1ULL << 24) * 10, 24);
	one("TSC 3.7 GHz, shift 31", FP_IP_CLOCK_TSC, (1ULL << 31) * 10 / 37, 31);
	one("CLOCK_MONOTONIC", FP_IP_CLOCK_MONO, 0, 0);
	TEST_DONE("ip_buckets");
}
