// SPDX-License-Identifier: GPL-2.0
/*
 * A C program without featprof.h, as a distribution ships one (issue 45): its work in
 * static functions, which a stripped binary keeps in no symbol table of its own (not in
 * .dynsym), so that only a debug file names them (tests/integration/test_names.py installs
 * it five ways). shuffle does twice mix's work.
 *
 *	shipped_c SECONDS
 *
 * Prints "ready PID", works for SECONDS, then {"rounds": N}.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static __attribute__((noinline)) void shuffle(unsigned long n)
{
	unsigned long x = sink | 3;

	for (unsigned long i = 0; i < 2 * n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	sink = x;
}

static __attribute__((noinline)) void mix(unsigned long n)
{
	unsigned long x = sink | 5;

	for (unsigned long i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	sink = x;
}

int main(int argc, char **argv)
{
	long secs = argc > 1 ? atol(argv[1]) : 5, rounds = 0;
	struct timespec ts;
	time_t end;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = ts.tv_sec + secs;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;) {
		shuffle(20000);	/* two thirds of the time */
		mix(20000);	/* one third */
		rounds++;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (ts.tv_sec >= end)
			break;
	}
	printf("{\"rounds\": %ld}\n", rounds);
	return 0;
}
