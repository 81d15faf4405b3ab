// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the probe catalog reader and the symbol reader (function
 * regions). The first byte picks the input kind: even - a raw note section (stapsdt or
 * featprof section, by bit 1), odd - a whole ELF image, read for its notes and for its
 * functions (debug files looked for under a root that does not exist). Seeds: the test
 * targets' binaries and their note sections.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/notes.h"
#include "common/symbols.h"

/* A cleared record: every call here reports its own failure (the first one stays). */
static struct fp_err *fresh(struct fp_err *e)
{
	fp_err_clear(e);
	return e;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fp_object *obj = NULL;
	struct fp_err err = { 0 };
	uint8_t *copy;

	if (size < 1)
		return 0;
	/* exact-size copy so that ASan sees any read past the end */
	copy = malloc(size - 1 ? size - 1 : 1);
	memcpy(copy, data + 1, size - 1);
	if (data[0] & 1) {
		struct fp_symbols *sy = NULL;
		int k;

		if (!fp_object__read_mem(copy, size - 1, "fuzz", &obj, fresh(&err)))
			fp_object__free(obj);
		if (!fp_symbols__read_mem(copy, size - 1, "/fuzz/fuzz", "/nonexistent-root", &sy,
					  fresh(&err))) {
			for (k = 0; k < sy->n; k++)	/* every string read */
				(void)fp_func__unmeasurable(sy, &sy->f[k]);
			fp_symbols__free(sy);
		}
	} else {
		obj = calloc(1, sizeof(*obj));
		obj->fd = -1;
		obj->path = strdup("fuzz");
		obj->host_path = strdup("fuzz");
		fp_notes_parse(obj, copy, size - 1, 0, (data[0] >> 1) & 1, fresh(&err));
		fp_object__free(obj);
	}
	free(copy);
	return 0;
}
