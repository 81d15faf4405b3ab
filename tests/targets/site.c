// SPDX-License-Identifier: GPL-2.0
/* Probe-ABI test target: nesting, several sites per region, inline duplication, scopes. */
#include <stdio.h>
#include <stdlib.h>

#include "featprof.h"

FP_SCOPE_DEFINE(checksum);

static volatile unsigned long sink;

/* Inlined into two callers: the compiler duplicates the site, both copies are probes. */
static inline __attribute__((always_inline)) void hot(unsigned long v)
{
	FP_BEGIN(hot_inline, "Cache");
	sink += v;
	FP_END(hot_inline);
}

__attribute__((noinline)) static unsigned long checksum(unsigned long n)
{
	FP_SCOPE(checksum, "Checksum");
	unsigned long s = 0;

	for (unsigned long i = 0; i < n; i++) {
		if (i == 1000)
			return s; /* the scope still ends here */
		s += i * 31;
	}
	return s;
}

__attribute__((noinline)) static void compress(int level)
{
	FP_BEGIN(compress, "Compression");
	if (level > 5) {
		FP_BEGIN(compress_enc, "Compression", "Encryption");
		sink += checksum((unsigned long)level);
		FP_END(compress_enc);
		FP_END(compress); /* a second end site */
		return;
	}
	hot((unsigned long)level);
	FP_END(compress);
}

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 1;

	for (long i = 0; i < iters; i++) {
		compress((int)(i % 10));
		hot((unsigned long)i);
	}
	printf("%lu\n", (unsigned long)sink);
	return 0;
}
