// SPDX-License-Identifier: GPL-2.0
/*
 * A target built with FEATPROF_INPROCESS (tests/integration/test_inproc.py, make bench).
 * Protocol on stdin/stdout: prints "ready PID", waits for a line; then by mode:
 *   accuracy N T   T threads (default 1) run one warm-up round, "warm", wait for a line,
 *                  then N iterations of: ip_flat (1 us), ip_outer (1 us of its own
 *                  around ip_inner, 100 ns); each region times itself right after its
 *                  begin and right before its end, less the windows of nested sites, and
 *                  the truth is printed as one JSON object (ns, counts). The truth counts
 *                  the target's own clock reads as the region's work, as they are: a
 *                  read's cost (the mean gap of back-to-back reads, "read_ns") is added
 *                  once per pair of reads that bracket region time (see one())
 *   hot N NS [KB]  N instances of ip_body back to back, each NS ns of work measured inside
 *                  (its own clock reads, as accuracy's; with KB, each also reads KB KiB of
 *                  a 64 MiB buffer), then one JSON line: count, ip_body (the truth, ns),
 *                  read_ns, loop_ns (the whole loop's time)
 *   spin           ip_hot (a few ns of work) in a loop until a line arrives; prints
 *                  "iterations N ns_per_iteration X"
 *   hostile        ip_flat 1000 times, "ran", then on a line overwrites its own arena with
 *                  garbage (a list that loops, sizes past every bound, pointers out of
 *                  it), prints "scribbled", and spins ip_flat until a line arrives
 *   sleep          then per line "sleep N MS": N times ip_flat around a sleep of MS ms
 *                  (blocked inside a region), "slept N"; "spin N MS": N times ip_flat
 *                  around MS ms of spinning, "spun N"
 * A gate's state can be read by the test at the descriptor featprof_ipr_ip_flat (its
 * address is the gate note's semaphore).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "featprof.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t ticks(void)
{
	unsigned int lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

static uint64_t tsc_mult;	/* ns = ticks * tsc_mult >> 24; 0: CLOCK_MONOTONIC */

/* The target's own clock, independent of featprof's: the TSC where the kernel's
 * clocksource is the TSC (a clock_gettime may step coarser than a short region: 10 ns
 * on some guests), at the rate measured against CLOCK_MONOTONIC at the start. */
static uint64_t now_ns(void)
{
	if (tsc_mult)
		return (uint64_t)(((unsigned __int128)ticks() * tsc_mult) >> 24);
	return mono_ns();
}

static void setup_clock(void)
{
	char buf[32] = "";
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	uint64_t t0, c0;

	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	if (strcmp(buf, "tsc\n"))
		return;
	t0 = mono_ns();
	c0 = ticks();
	while (mono_ns() - t0 < 20000000)
		;
	tsc_mult = (uint64_t)((double)(mono_ns() - t0) / (double)(ticks() - c0) * (1 << 24));
}

static void busy_until(uint64_t end)
{
	while (now_ns() < end)
		;
}

struct truth {
	double flat, outer_incl, outer_excl, inner;
	uint64_t n;
};

static long iterations;
static volatile int go_on;
static double read_ns;	/* one clock read, measured at the start */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The mean gap between back-to-back clock reads, those over 4x the median (an interrupt)
 * left out: what a read adds to the time it is in. A median would be off by up to half
 * the clock's step. */
static double measure_read(void)
{
	static uint64_t gap[10001];
	double sum = 0;
	int i, n = 0;

	for (i = 0; i < 10001; i++) {
		uint64_t a = now_ns();

		gap[i] = now_ns() - a;
	}
	qsort(gap, 10001, sizeof(gap[0]), cmp_u64);
	for (i = 0; i < 10001 && gap[i] <= 4 * gap[5000] + 1; i++, n++)
		sum += (double)gap[i];
	return sum / n;
}

static void one(struct truth *t)
{
	uint64_t a, b, c, d, w0, win = 0;

	FP_BEGIN(ip_flat, "Flat");
	a = now_ns();
	busy_until(a + 1000);
	b = now_ns();
	FP_END(ip_flat);
	t->flat += (double)(b - a) + read_ns;	/* a's tail and b's head: one read */

	FP_BEGIN(ip_outer, "Outer");
	a = now_ns();
	busy_until(a + 500);
	w0 = now_ns();
	FP_BEGIN(ip_inner, "Outer", "Inner");
	c = now_ns();
	win += c - w0;
	busy_until(c + 100);
	d = now_ns();
	FP_END(ip_inner);
	w0 = now_ns();
	win += w0 - d;
	busy_until(w0 + 400);
	b = now_ns();
	FP_END(ip_outer);
	/* each window (w0..c, d..w0) holds a read of the target's own besides featprof's
	 * sites: outer's own time is b - a - win plus a read for (a, b) and one per window */
	t->inner += (double)(d - c) + read_ns;
	t->outer_incl += (double)(b - a - win) + 3 * read_ns;
	t->outer_excl += (double)(b - a - win - (d - c)) + 2 * read_ns;
	t->n++;
}

/* The truth is summed on the thread's own stack: threads writing neighbouring words
 * would stall each other's stores around the sites (a shared cache line). */
static void *run(void *arg)
{
	struct truth mine = { 0 };
	long i;

	for (i = 0; i < iterations; i++)
		one(&mine);
	*(struct truth *)arg = mine;
	return NULL;
}

static void wait_line(void)
{
	char line[64];

	if (!fgets(line, sizeof(line), stdin))
		exit(3);
}

static void accuracy(long n, int threads)
{
	struct truth t[16], sum = { 0 };
	pthread_t th[16];
	int i;

	if (threads < 1 || threads > 16)
		exit(2);
	read_ns = measure_read();
	memset(t, 0, sizeof(t));
	iterations = 50;	/* warm-up */
	for (i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, run, &t[i]);
	for (i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	printf("warm\n");
	fflush(stdout);
	wait_line();
	memset(t, 0, sizeof(t));
	iterations = n;
	for (i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, run, &t[i]);
	for (i = 0; i < threads; i++) {
		pthread_join(th[i], NULL);
		sum.flat += t[i].flat;
		sum.outer_incl += t[i].outer_incl;
		sum.outer_excl += t[i].outer_excl;
		sum.inner += t[i].inner;
		sum.n += t[i].n;
	}
	printf("{\"count\":%llu,\"ip_flat\":%.0f,\"ip_outer_incl\":%.0f,"
	       "\"ip_outer_excl\":%.0f,\"ip_inner\":%.0f,\"read_ns\":%.1f}\n",
	       (unsigned long long)sum.n, sum.flat, sum.outer_incl, sum.outer_excl, sum.inner,
	       read_ns);
}

static volatile unsigned long sink;

/* Regions of ns ns back to back: a hot region (issue 31, part 5). With kb > 0 each body
 * also reads kb KiB (a line in each 64 bytes) of a 64 MiB buffer, far apart: the
 * runtime's own lines are then not in the nearer caches when the region's sites run, as
 * in a program that streams through memory. */
static void hot(long n, long ns, long kb)
{
	size_t size = (size_t)64 << 20, at = 0;
	unsigned char *buf = kb > 0 ? calloc(size, 1) : malloc(1);
	uint64_t a, b, t0;
	double truth = 0;
	long i, j;

	if (!buf)
		exit(2);
	read_ns = measure_read();
	for (i = 0; i < 1000; i++) {	/* warm */
		FP_BEGIN(ip_body, "Body");
		a = now_ns();
		busy_until(a + (uint64_t)ns);
		FP_END(ip_body);
	}
	printf("warm\n");
	fflush(stdout);
	wait_line();
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		FP_BEGIN(ip_body, "Body");
		a = now_ns();
		for (j = 0; j < kb * 16; j++) {
			at = (at + 4096 * 9 + 64 * 7) % size;
			sink += buf[at];
		}
		busy_until(a + (uint64_t)ns);
		b = now_ns();
		FP_END(ip_body);
		truth += (double)(b - a) + read_ns;	/* a's tail and b's head: one read */
	}
	printf("{\"count\":%ld,\"ip_body\":%.0f,\"read_ns\":%.1f,\"loop_ns\":%llu}\n", n,
	       truth, read_ns, (unsigned long long)(now_ns() - t0));
	fflush(stdout);
	free(buf);
}

static void *watch_stdin(void *arg)
{
	wait_line();
	go_on = 0;
	return arg;
}

static void spin(void)
{
	unsigned long long n = 0;
	pthread_t w;
	uint64_t t0;

	go_on = 1;
	pthread_create(&w, NULL, watch_stdin, NULL);
	t0 = now_ns();
	while (go_on) {
		FP_BEGIN(ip_hot, "Hot");
		sink += n;
		FP_END(ip_hot);
		n++;
	}
	printf("iterations %llu ns_per_iteration %.2f\n", n, (double)(now_ns() - t0) / (double)n);
}

/* Garbage over the thread blocks of its own arena: what a broken or hostile program
 * may leave there for featprofd to read. */
static void scribble(void)
{
	struct featprof_ip_ctl *p = featprof_ip_ctl.primary ? featprof_ip_ctl.primary
							    : &featprof_ip_ctl;
	struct featprof_ip_arena *a = p->arena;
	struct featprof_ip_thread *t;
	int k;

	if (!a || a == (struct featprof_ip_arena *)1 || a == (struct featprof_ip_arena *)2)
		return;
	a->next_id = 0xffffffffu;	/* more ids than there can be */
	for (t = a->threads; t; t = t->next) {
		t->npaths = 0xfffffff0u;
		for (k = 0; k < FP_IP_PATHS; k++) {
			t->paths[k].parent = (unsigned int)(k * 7919);
			t->paths[k].id = (unsigned int)k;
			t->paths[k].count = ~0ULL;
		}
		for (k = 1; k < FP_IP_IDS / FP_IP_CHUNK; k++)	/* pointers out of the arena */
			t->chunk[k] = (struct featprof_ip_fig *)(uintptr_t)(0x1000 * k + 8);
		t->depth = 1000;
		if (!t->next) {
			t->next = t;	/* the list now loops */
			break;
		}
	}
}

static void sleeper(void)
{
	char line[128];
	long n, ms, k;

	printf("sleeping\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "sleep %ld %ld", &n, &ms) == 2) {
			struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

			for (k = 0; k < n; k++) {
				FP_BEGIN(ip_flat, "Flat");
				nanosleep(&ts, NULL);
				FP_END(ip_flat);
			}
			printf("slept %ld\n", n);
		} else if (sscanf(line, "spin %ld %ld", &n, &ms) == 2) {
			for (k = 0; k < n; k++) {
				FP_BEGIN(ip_flat, "Flat");
				busy_until(now_ns() + (uint64_t)ms * 1000000);
				FP_END(ip_flat);
			}
			printf("spun %ld\n", n);
		}
		fflush(stdout);
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "accuracy";
	int i;

	setup_clock();
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	wait_line();
	if (!strcmp(mode, "accuracy")) {
		accuracy(argc > 2 ? atol(argv[2]) : 2000, argc > 3 ? atoi(argv[3]) : 1);
	} else if (!strcmp(mode, "hot")) {
		hot(argc > 2 ? atol(argv[2]) : 1000000, argc > 3 ? atol(argv[3]) : 50,
		    argc > 4 ? atol(argv[4]) : 0);
	} else if (!strcmp(mode, "spin")) {
		spin();
	} else if (!strcmp(mode, "sleep")) {
		sleeper();
	} else if (!strcmp(mode, "hostile")) {
		struct truth t = { 0 };

		for (i = 0; i < 1000; i++)
			one(&t);
		printf("ran\n");
		fflush(stdout);
		wait_line();
		scribble();
		printf("scribbled\n");
		fflush(stdout);
		go_on = 1;
		{
			pthread_t w;

			pthread_create(&w, NULL, watch_stdin, NULL);
			while (go_on)
				one(&t);
		}
	} else {
		return 2;
	}
	fflush(stdout);
	return 0;
}
