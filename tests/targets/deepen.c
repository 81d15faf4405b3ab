// SPDX-License-Identifier: GPL-2.0
/*
 * A program whose stacks deepen after a while (tests/integration/test_stacks.py
 * t_stacks_copy_size): SHALLOW seconds in spin called from main, then, over and over, 0.3
 * s in spin under 40 frames of deep (48 bytes of locals each: ~2.6 KiB of stack) and
 * 0.3 s shallow again, until SECONDS have passed.
 *
 *	deepen SECONDS SHALLOW
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static __attribute__((noinline)) void spin(double secs)
{
	double end = now() + secs;
	unsigned long x = sink | 1;

	while (now() < end)
		for (int i = 0; i < 10000; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
	sink = x;
}

static __attribute__((noinline)) void deep(int n)
{
	volatile char pad[48];

	pad[0] = (char)n;
	if (n)
		deep(n - 1);
	else
		spin(0.3);
	sink += (unsigned long)pad[0];
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 6);

	spin(argc > 2 ? atof(argv[2]) : 2);
	while (now() < end) {
		deep(40);
		spin(0.3);
	}
	return 0;
}
