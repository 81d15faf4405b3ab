// SPDX-License-Identifier: GPL-2.0
/* Prints every stapsdt note of an ELF file the way `readelf -n` prints it (the oracle). */
#include <stdio.h>

#include "common/notes.h"

/* A cleared record: every call here reports its own failure (the first one stays). */
static struct fp_err *fresh(struct fp_err *e)
{
	fp_err_clear(e);
	return e;
}

int main(int argc, char **argv)
{
	struct fp_object *obj;
	struct fp_err err = { 0 };
	int i;

	if (argc != 2) {
		fprintf(stderr, "usage: notes_dump FILE\n");
		return 2;
	}
	if (fp_object__read(argv[1], argv[1], &obj, fresh(&err))) {
		fprintf(stderr, "notes_dump: %s\n", err.msg);
		return 1;
	}
	for (i = 0; i < obj->nsites; i++) {
		const struct fp_site *s = &obj->sites[i];

		printf("Provider: %s\nName: %s\n", s->provider, s->name);
		printf("Location: 0x%016llx, Base: 0x%016llx, Semaphore: 0x%016llx\n",
		       (unsigned long long)s->pc, (unsigned long long)s->base,
		       (unsigned long long)s->sem);
		printf("Arguments: %s\n", s->args);
	}
	fp_object__free(obj);
	return 0;
}
