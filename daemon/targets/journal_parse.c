// SPDX-License-Identifier: GPL-2.0
/* The attach journal's text read back (journal.c says what it holds and why). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target_impl.h"

/* The sites gathered for the current file, handed to fn at the next file or the end. */
struct gathered {
	char path[4096];
	unsigned long long dev, ino;
	uint64_t *offs, *refs;
	int n, cap;
};

static int flush(struct gathered *g, fp_journal_fn fn, void *ctx)
{
	int r = g->n && g->path[0] ? fn(ctx, g->path, g->dev, g->ino, g->offs, g->refs, g->n) : 0;

	g->n = 0;
	g->path[0] = 0;
	return r;
}

static int add_site(struct gathered *g, unsigned long long off, unsigned long long ref)
{
	if (g->n == g->cap) {
		int cap = g->cap ? g->cap * 2 : 256;
		uint64_t *o = realloc(g->offs, (size_t)cap * sizeof(*o)), *r;

		if (o)
			g->offs = o;
		r = o ? realloc(g->refs, (size_t)cap * sizeof(*r)) : NULL;
		if (!o || !r)
			return -ENOMEM;
		g->refs = r;
		g->cap = cap;
	}
	g->offs[g->n] = off;
	g->refs[g->n++] = ref;
	return 0;
}

int fp_journal_parse(FILE *f, fp_journal_fn fn, void *ctx)
{
	struct gathered g = { .path = "" };
	char line[4200];
	unsigned long long off, ref;
	int ret = 0;

	if (!fgets(line, sizeof(line), f) || strncmp(line, "featprof-journal 1", 18))
		return 0;	/* empty, or not a journal: nothing to do */
	while (!ret && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "file ", 5)) {
			ret = flush(&g, fn, ctx);
			if (sscanf(line, "file %llu %llu %4095[^\n]", &g.dev, &g.ino, g.path) != 3)
				g.path[0] = 0;	/* its sites are skipped */
		} else if (sscanf(line, "site %llu %llu", &off, &ref) == 2) {
			ret = add_site(&g, off, ref);
		}
	}
	if (!ret)
		ret = flush(&g, fn, ctx);
	free(g.offs);
	free(g.refs);
	return ret;
}
