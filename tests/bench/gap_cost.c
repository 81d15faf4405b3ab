// SPDX-License-Identifier: GPL-2.0
/*
 * What a traced probe costs the thread, by what the thread did since its previous probe
 * (docs/TRACING.md, "Compensation and its uncertainty"). Each probe is timed from user
 * space: the window from a clock read right before the site to one right after (one
 * clock read more than the probe). Run it with featprof enabled on it (tests/bench/
 * gap_cost.py does).
 *
 * usage: gap_cost N      prints "ready PID", waits for a line, then:
 *   gaps:    N instances of a region per gap (the time the thread spins between probes,
 *            no clock reads in the spin): the windows' percentiles and mean
 *   threads: N instances of a nested pattern (outer; 240 us; inner begin; 320 us; inner
 *            end; 160 us; outer end) by 1 and 2 threads, and by 1 and 2 threads beside a
 *            thread that only spins: the mean window of the inner begin and end
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "featprof.h"

static uint64_t now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static double per_ns;	/* spin iterations per ns */
static volatile uint64_t sink;
static volatile int stop;
static int n;

static void spin(uint64_t ns)
{
	uint64_t i, k = (uint64_t)((double)ns * per_ns), x = 1;

	for (i = 0; i < k; i++)
		x = x * 6364136223846793005ULL + 1;
	sink = x;
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void gaps(void)
{
	static const uint64_t gap[] = { 3000, 60000, 600000, 4000000 };
	uint64_t *v = malloc(sizeof(*v) * (size_t)n * 2), t0, t1;
	size_t g;
	int i, m;

	for (g = 0; v && g < sizeof(gap) / sizeof(gap[0]); g++) {
		double mean = 0;

		for (i = m = 0; i < n; i++) {
			spin(gap[g]);
			t0 = now();
			FP_BEGIN(gap_probe, "Gap");
			t1 = now();
			v[m++] = t1 - t0;
			spin(gap[g]);
			t0 = now();
			FP_END(gap_probe);
			t1 = now();
			v[m++] = t1 - t0;
		}
		qsort(v, (size_t)m, sizeof(*v), cmp);
		for (i = 0; i < m; i++)
			mean += (double)v[i] / m;
		printf("gap %7llu ns: window p10 %5llu p50 %5llu p90 %5llu p99 %6llu "
		       "mean %.0f ns\n", (unsigned long long)gap[g], (unsigned long long)v[m / 10],
		       (unsigned long long)v[m / 2], (unsigned long long)v[9 * m / 10],
		       (unsigned long long)v[99 * m / 100], mean);
		fflush(stdout);
	}
	free(v);
}

struct win {
	double begin, end;
};

static void *nested(void *arg)
{
	struct win *w = arg;
	uint64_t t0;
	int i;

	for (i = 0; i < n; i++) {
		FP_BEGIN(gap_outer, "Gap");
		spin(240000);
		t0 = now();
		FP_BEGIN(gap_inner, "Gap");
		w->begin += (double)(now() - t0);
		spin(320000);
		t0 = now();
		FP_END(gap_inner);
		w->end += (double)(now() - t0);
		spin(160000);
		FP_END(gap_outer);
	}
	return NULL;
}

static void *spinner(void *arg)
{
	while (!stop)
		spin(1000);
	return arg;
}

static void threads(void)
{
	int busy, th, i;

	for (busy = 0; busy < 2; busy++) {
		pthread_t sp;

		stop = 0;
		if (busy && pthread_create(&sp, NULL, spinner, NULL))
			return;
		for (th = 1; th <= 2; th++) {
			struct win w[2] = { { 0, 0 }, { 0, 0 } };
			pthread_t t[2];

			for (i = 0; i < th; i++)
				pthread_create(&t[i], NULL, nested, &w[i]);
			for (i = 0; i < th; i++)
				pthread_join(t[i], NULL);
			printf("%d probing thread(s)%s: inner begin window %.0f ns, "
			       "end %.0f ns\n", th, busy ? " and one spinning" : "",
			       (w[0].begin + w[1].begin) / n / th,
			       (w[0].end + w[1].end) / n / th);
			fflush(stdout);
		}
		stop = 1;
		if (busy)
			pthread_join(sp, NULL);
	}
}

int main(int argc, char **argv)
{
	char line[16];
	uint64_t t0;

	n = argc > 1 ? atoi(argv[1]) : 0;
	if (n < 10)
		return 2;
	per_ns = 1;
	t0 = now();
	spin(50000000);
	per_ns = 5e7 / (double)(now() - t0);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 3;
	gaps();
	threads();
	return 0;
}
