// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>

#include "featprof.h"

int lib_work(int x);
void lib_begin_export(void);

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1;
	int acc = 0;

	for (long i = 0; i < n; i++) {
		lib_begin_export(); /* the region crosses from the library into main */
		acc += lib_work((int)i);
		FP_END(export_fmt);
	}
	printf("%d\n", acc);
	return 0;
}
