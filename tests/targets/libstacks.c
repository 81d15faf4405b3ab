// SPDX-License-Identifier: GPL-2.0
/* The library half of tests/targets/stacks.c: one function that computes for a while. */
volatile unsigned long lib_sink;

__attribute__((noinline)) void lib_f2(long units)
{
	unsigned long x = lib_sink;
	long i;

	for (i = 0; i < units; i++)
		x = x * 2862933555777941757UL + (unsigned long)i;
	lib_sink = x;
}
