// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the region-definition parser (common/regdefs.c): client input,
 * so any text must give definitions or one error, never a crash or a leak. Seeds: the
 * installed definitions (usdt/regions.d).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/regdefs.h"

/* A cleared record: every call here reports its own failure (the first one stays). */
static struct fp_err *fresh(struct fp_err *e)
{
	fp_err_clear(e);
	return e;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fp_regdefs defs = { 0 };
	struct fp_err err = { 0 };
	char *copy = malloc(size ? size : 1);	/* exact size: ASan sees a read past it */

	memcpy(copy, data, size);
	/* twice into one set: the second parse meets the first one's names */
	if (!fp_regdefs__parse(&defs, copy, size, "fuzz", fresh(&err)))
		fp_regdefs__parse(&defs, copy, size, "fuzz2", fresh(&err));
	fp_regdefs__truncate(&defs, defs.ndefs / 2);
	fp_regdefs__clear(&defs);
	free(copy);
	return 0;
}
