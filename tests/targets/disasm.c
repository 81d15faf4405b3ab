// SPDX-License-Identifier: GPL-2.0
/*
 * Compiled twice by tests/unit/disasm.sh, as is and with empty sites: the two
 * disassemblies of every function must differ by whole sites only (4 instructions).
 */
#include "featprof.h"

#ifndef NO_SCOPE
FP_SCOPE_DEFINE(scoped);
#endif

unsigned long leaf_loop(const unsigned char *p, unsigned long n);
unsigned long nested(unsigned long x);
unsigned long scoped_fn(unsigned long x);

unsigned long leaf_loop(const unsigned char *p, unsigned long n)
{
	unsigned long h = 5381;

	FP_BEGIN(hash, "Checksum");
	for (unsigned long i = 0; i < n; i++) {
		FP_BEGIN(hash_step, "Checksum", "Cache");
		h = h * 33 + p[i];
		FP_END(hash_step);
	}
	FP_END(hash);
	return h;
}

unsigned long nested(unsigned long x)
{
	FP_BEGIN(outer, "A");
	if (x & 1) {
		FP_BEGIN(inner, "B");
		x = x * 3 + 1;
		FP_END(inner);
	} else {
		x /= 2;
	}
	FP_END(outer);
	return x;
}

#ifndef NO_SCOPE
unsigned long scoped_fn(unsigned long x)
{
	FP_SCOPE(scoped, "S");
	if (x > 10)
		return x - 10;
	return x + 1;
}
#endif
