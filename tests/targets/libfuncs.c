// SPDX-License-Identifier: GPL-2.0
/* The shared library of tests/targets/funcs.c: a function that times its own body. */
#include <time.h>

struct truth {
	long long calls, excl_ns;
};

static long long now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((noinline)) void lib_work(long ns, struct truth *t)
{
	long long t0 = now();

	while (now() - t0 < ns)
		;
	__atomic_add_fetch(&t->calls, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&t->excl_ns, now() - t0, __ATOMIC_RELAXED);
}
