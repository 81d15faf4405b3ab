// SPDX-License-Identifier: GPL-2.0
/*
 * featprof sample --stacks: what a feature's time goes to. Reads the "stacks" of a
 * sampling report (daemon/stacks/stacks.c: every distinct pair of open regions
 * and user call stack, with its samples, and the functions they name) and writes
 *  - the table: per feature, per region and for the time outside regions, its samples
 *    and its top functions by self share (the samples whose innermost frame it is: where
 *    the time is spent), then total share (those whose stack holds it), each with its
 *    standard error, the frames every sample passes through folded into one line;
 *  - folded stacks, one line per distinct pair: "FEATURES;region;...;region;outer_fn;
 *    ...;leaf_fn COUNT" (FEATURES: the features of the open regions joined by '+',
 *    "[no region]" outside every region), as flamegraph.pl and speedscope read them.
 */
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/core/core.h"
#include "writers.h"

static bool inlined(struct json_object *f)
{
	struct json_object *il;

	return json_object_object_get_ex(f, "inlined", &il) && json_object_get_boolean(il);
}

/* A function's own figure (what: "share", "stderr", "samples"): an inlined function's is
 * the samples in its inlined code (inline_self_*, which its caller's self holds too), so
 * that it shows where the time is spent, as a region around that code does */
static double own(struct json_object *f, const char *what)
{
	char k[40];

	snprintf(k, sizeof(k), "%s_%s", inlined(f) ? "inline_self" : "self", what);
	return getd(f, k);
}

static int by_self_then_total(const void *a, const void *b)
{
	struct json_object *x = *(struct json_object *const *)a;
	struct json_object *y = *(struct json_object *const *)b;
	double sx = own(x, "share"), sy = own(y, "share");

	if (sx != sy)
		return sx > sy ? -1 : 1;
	sx = getd(x, "total_share");
	sy = getd(y, "total_share");
	return sx > sy ? -1 : sx < sy;
}

/*
 * x's functions, led by where the time is spent (self share, then total); the frames
 * every sample passes through without time of their own (main, the thread's start) are
 * folded into one line after them.
 */
static int fn_rows(struct json_object *x, long top)
{
	struct json_object *a = geta(x, "functions"), **v;
	size_t n = a ? json_object_array_length(a) : 0, k, shown = 0, common = 0;
	int inl = 0;

	v = calloc(n + 1, sizeof(*v));
	for (k = 0; v && k < n; k++)
		v[k] = json_object_array_get_idx(a, k);
	if (v)
		qsort(v, n, sizeof(*v), by_self_then_total);
	for (k = 0; v && k < n; k++) {
		struct json_object *f = v[k];

		if (getd(f, "total_share") >= 0.999 && !own(f, "samples")) {
			common++;	/* in every sample, nothing of its own */
			continue;
		}
		if ((long)shown >= top)
			continue;
		shown++;
		printf("    %6.1f%% ±%4.1f  %6.1f%% ±%4.1f  %s (%s%s)\n",
		       100 * getd(f, "total_share"), 100 * getd(f, "total_stderr"),
		       100 * own(f, "share"), 100 * own(f, "stderr"), gets_(f, "name"),
		       gets_(f, "object"), inlined(f) ? ", inlined" : "");
		inl += inlined(f);
	}
	if (common) {
		printf("    100.0%%          0.0%%        %zu frames every sample passes through:",
		       common);
		for (k = 0; k < n; k++)
			if (getd(v[k], "total_share") >= 0.999 && !own(v[k], "samples"))
				printf(" %s", gets_(v[k], "name"));
		printf("\n");
	}
	if (n - common > shown)
		printf("    ... %lld more functions\n",
		       (long long)(n - common - shown) + geti(x, "functions_more"));
	free(v);
	return inl;
}

/* A region's, a feature's or the base's functions; how many inlined ones it showed. */
static int block(const char *kind, const char *name, struct json_object *x, long top)
{
	if (!x || !geti(x, "samples"))
		return 0;
	printf("%s %s: %lld samples (%.1f%% of all)\n", kind, name, (long long)geti(x, "samples"),
	       100 * getd(x, "share"));
	printf("    %-13s  %-13s  %s\n", "total ± SE", "self ± SE", "function (object)");
	return fn_rows(x, top);
}

#define THREADS_SHOWN 8

/* Per thread sampled (where there are several), the most sampled first: its functions;
 * how many inlined ones it showed. */
static int threads_block(struct json_object *sm, long top)
{
	struct json_object *a = geta(sm, "threads");
	size_t n = a ? json_object_array_length(a) : 0, k;
	double all = (double)geti(sm, "samples");
	int inl = 0;

	for (k = 0; n > 1 && k < n && k < THREADS_SHOWN; k++) {
		struct json_object *x = json_object_array_get_idx(a, k);

		printf("thread %s: %lld samples (%.1f%% of all)\n", gets_(x, "name"),
		       (long long)geti(x, "samples"),
		       all > 0 ? 100 * (double)geti(x, "samples") / all : 0);
		printf("    %-13s  %-13s  %s\n", "total ± SE", "self ± SE", "function (object)");
		inl += fn_rows(x, top);
	}
	if (n > THREADS_SHOWN)
		printf("... %zu more threads (--json has them)\n", n - THREADS_SHOWN);
	return inl;
}

void cli_write_stacks_table(struct json_object *sm, long top)
{
	struct json_object *a, *s = json_object_object_get(sm, "stacks");
	char dn[1024];
	size_t k;
	int inl = 0;

	for (a = geta(sm, "features"), k = 0; a && k < json_object_array_length(a); k++) {
		struct json_object *x = json_object_array_get_idx(a, k);

		inl += block("feature", gets_(x, "name"), x, top);
	}
	for (a = geta(sm, "regions"), k = 0; a && k < json_object_array_length(a); k++) {
		struct json_object *x = json_object_array_get_idx(a, k);

		inl += block("region", cli_fmt_region(gets_(x, "name"), dn, sizeof(dn)), x, top);
	}
	inl += block("outside", "regions", json_object_object_get(sm, "base"), top);
	inl += threads_block(sm, top);
	if (inl)
		printf("inlined: a function the compiler inlined; its self is the samples in its "
		       "code,\nwhich its caller's self holds too (perf report --no-inline's "
		       "view of the caller)\n");
	printf("call stacks: %s, %lld of %lld samples with one; %lld lost, %lld cut at %lld "
	       "frames\n", gets_(s, "unwind"), (long long)geti(s, "with_stack"),
	       (long long)geti(sm, "samples"), (long long)geti(s, "lost"),
	       (long long)geti(s, "truncated"), (long long)geti(s, "frames_max"));
}

static int by_self(const void *a, const void *b)
{
	double x = getd(*(struct json_object *const *)a, "self_ns");
	double y = getd(*(struct json_object *const *)b, "self_ns");

	return x > y ? -1 : x < y;
}

void cli_write_run_functions(struct json_object *sm, long top)
{
	struct json_object *a = geta(sm, "functions"), **v;
	size_t n = a ? json_object_array_length(a) : 0, k;

	if (!sm) {
		printf("\nno call stacks: the run's processes were not sampled (featprofd's "
		       "log says why)\n");
		return;
	}
	v = calloc(n + 1, sizeof(*v));
	for (k = 0; v && k < n; k++)
		v[k] = json_object_array_get_idx(a, k);
	if (v)
		qsort(v, n, sizeof(*v), by_self);
	printf("\n%lld samples at %lld Hz (CPU time), call stacks by %s; functions by self "
	       "time:\n", (long long)geti(sm, "samples"), (long long)geti(sm, "hz"),
	       gets_(json_object_object_get(sm, "stacks"), "unwind"));
	printf("  %10s %8s %6s  %10s %6s  %s\n", "SELF", "±", "SHARE", "TOTAL", "SHARE",
	       "FUNCTION (OBJECT)");
	for (k = 0; v && k < n && (long)k < top; k++) {
		struct json_object *f = v[k];
		char b1[32], b2[32], b3[32];

		if (!geti(f, "self_samples"))
			break;
		printf("  %10s %8s %5.1f%%  %10s %5.1f%%  %s (%s)\n",
		       cli_fmt_ns(getd(f, "self_ns"), b1, sizeof(b1)),
		       cli_fmt_ns(getd(f, "self_stderr_ns"), b2, sizeof(b2)),
		       100 * getd(f, "self_share"), cli_fmt_ns(getd(f, "total_ns"), b3, sizeof(b3)),
		       100 * getd(f, "total_share"), gets_(f, "name"), gets_(f, "object"));
	}
	free(v);
	a = geta(sm, "threads");
	if (a && json_object_array_length(a) > 1) {
		printf("\nper thread:\n");
		threads_block(sm, top < 5 ? top : 5);
	}
}

static void put_name(FILE *f, const char *s)
{
	for (; *s; s++)	/* the format's separators, kept out of names */
		fputc(*s == ';' ? ':' : *s == ' ' ? '_' : *s == '\n' ? '_' : *s, f);
}

int cli_write_stacks_folded(FILE *f, struct json_object *sm)
{
	struct json_object *s = json_object_object_get(sm, "stacks");
	struct json_object *fns = geta(s, "functions"), *a = geta(s, "samples");
	size_t k, j;

	if (!a || !fns) {
		fprintf(stderr, "featprof sample: the report has no call stacks\n");
		return 1;
	}
	for (k = 0; k < json_object_array_length(a); k++) {
		struct json_object *x = json_object_array_get_idx(a, k);
		struct json_object *fl = geta(x, "features"), *rl = geta(x, "regions");
		struct json_object *st = geta(x, "stack");

		if (!fl || !json_object_array_length(fl))
			fputs(rl && json_object_array_length(rl) ? "[no feature]" : "[no region]",
			      f);
		for (j = 0; fl && j < json_object_array_length(fl); j++) {
			if (j)
				fputc('+', f);
			put_name(f, json_object_get_string(json_object_array_get_idx(fl, j)));
		}
		for (j = 0; rl && j < json_object_array_length(rl); j++) {
			fputc(';', f);
			put_name(f, json_object_get_string(json_object_array_get_idx(rl, j)));
		}
		for (j = 0; st && j < json_object_array_length(st); j++) {
			int64_t i = json_object_get_int64(json_object_array_get_idx(st, j));
			struct json_object *fi = i >= 0 && (size_t)i < json_object_array_length(fns)
							 ? json_object_array_get_idx(fns, (size_t)i)
							 : NULL;

			fputc(';', f);
			put_name(f, fi ? gets_(fi, "name") : "[unknown]");
		}
		fprintf(f, " %lld\n", (long long)geti(x, "samples"));
	}
	return ferror(f) ? 1 : 0;
}
