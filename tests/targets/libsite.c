// SPDX-License-Identifier: GPL-2.0
/* A region in a shared library, begun there and ended by the executable. */
#include "featprof.h"

int lib_work(int x);
void lib_begin_export(void);

int lib_work(int x)
{
	FP_BEGIN(lib_region, "Library");
	x = x * 7 + 1;
	FP_END(lib_region);
	return x;
}

void lib_begin_export(void)
{
	FP_BEGIN(export_fmt, "Export");
}
