// SPDX-License-Identifier: GPL-2.0
/*
 * A function with two names at one address (tests/integration/test_names.py
 * t_global_names): static spin, and __alias_spin_v2, a global alias of it, as glibc
 * exports __clone3 beside its local __GI___clone3, here with the global name the one
 * with more underscores, so that only "the global name first" picks it.
 *
 *	alias SECONDS
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static __attribute__((noinline, used)) void spin(unsigned long n)
{
	unsigned long x = sink | 3;

	for (unsigned long i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	sink = x;
}

extern void __alias_spin_v2(unsigned long n) __attribute__((alias("spin")));

int main(int argc, char **argv)
{
	time_t end = time(NULL) + (argc > 1 ? atol(argv[1]) : 3);

	while (time(NULL) < end)
		__alias_spin_v2(100000);
	return 0;
}
