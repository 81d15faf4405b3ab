// SPDX-License-Identifier: GPL-2.0
/*
 * featprof diff --functions A.json... --to B.json... [--threshold PCT] [--json]
 *
 * Explains a change between two builds or versions (or two configurations) of a program
 * by its functions: runs of `featprof run --stacks -o` of each side, one value per run
 *  - a function: its sampled self CPU time in the run (0 where no sample fell in it),
 *    matched across the sides by name and object, the executable by no name (two builds
 *    of one program have two file names);
 *  - a region: its exclusive time; a feature: its time (as the run's table gives them).
 * Each figure's runs of A and B go through Welch's t-test (save.c: cli_cmd_welch); the
 * p-values of all the figures tested are corrected for their number by Benjamini and
 * Hochberg's step-up procedure (q: the false discovery rate at which the figure would be
 * flagged), since a program has hundreds of functions and a test at 5% each would flag
 * several in two identical builds. A figure is flagged when q < 0.05 and it moved by
 * more than the threshold (default 1% of its A mean): "REGRESSION" when it grew,
 * "improvement" when it shrank. A function is said with the feature whose samples hold
 * it most (its callers' feature: "feature F, function g: +X ± u (q = ...)"). The sides'
 * objects are listed with their build ids. Exit 1 when a regression is flagged, 0 when
 * none, 2 on bad input.
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/core/core.h"
#include "commands_impl.h"

#define FDR 0.05
#define MAXSIDE 512	/* run files a side */

/* One figure: its runs' values on each side. */
struct fig {
	char kind;		/* 'f' function, 'r' region, 'F' feature */
	char *name, *object;	/* object "" for the executable, regions and features */
	double *a, *b;		/* per run of each side (0 where absent) */
	struct cli_welch w;
	double q;
	int tested;
	char feature[128];	/* a function's: the feature its samples are most under */
	double feat_samples;
};

struct side {
	struct json_object *doc[MAXSIDE];
	const char *file[MAXSIDE];
	int n;
};

struct figs {
	struct fig *f;
	int n, cap, na, nb;
};

static const char *base_of(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static struct fig *fig_get(struct figs *F, char kind, const char *name, const char *object)
{
	struct fig *f;
	int i;

	for (i = 0; i < F->n; i++)
		if (F->f[i].kind == kind && !strcmp(F->f[i].name, name) &&
		    !strcmp(F->f[i].object, object))
			return &F->f[i];
	if (F->n == F->cap) {
		int cap = F->cap ? 2 * F->cap : 256;
		struct fig *g = realloc(F->f, (size_t)cap * sizeof(*g));

		if (!g)
			return NULL;
		F->f = g;
		F->cap = cap;
	}
	f = &F->f[F->n];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->name = strdup(name);
	f->object = strdup(object);
	f->a = calloc((size_t)F->na, sizeof(double));
	f->b = calloc((size_t)F->nb, sizeof(double));
	if (!f->name || !f->object || !f->a || !f->b)
		return NULL;
	F->n++;
	return f;
}

/* The feature under which function f's samples fall most, over doc's sampling. */
static void note_feature(struct fig *f, struct json_object *sm)
{
	struct json_object *fa = geta(sm, "features");
	size_t i, k;

	for (i = 0; fa && i < json_object_array_length(fa); i++) {
		struct json_object *x = json_object_array_get_idx(fa, i);
		struct json_object *fns = geta(x, "functions");

		for (k = 0; fns && k < json_object_array_length(fns); k++) {
			struct json_object *g = json_object_array_get_idx(fns, k);

			if (strcmp(gets_(g, "name"), f->name))
				continue;
			if (getd(g, "total_samples") > f->feat_samples) {
				f->feat_samples = getd(g, "total_samples");
				snprintf(f->feature, sizeof(f->feature), "%s", gets_(x, "name"));
			}
		}
	}
}

/* Run r of side b (or a) into the figures; -1 after a line (no stacks, no memory). */
static int read_run(struct figs *F, struct json_object *doc, const char *file, int r, int b)
{
	struct json_object *sm = json_object_object_get(doc, "sampling"), *a;
	const char *exe = base_of(gets_(doc, "exe"));
	size_t k;
	int kind;

	if (!geta(sm, "functions")) {
		fprintf(stderr, "featprof diff: %s: no call stacks (featprof run --stacks -o "
			"FILE)\n", file);
		return -1;
	}
	for (kind = 0; kind < 3; kind++) {
		a = geta(kind ? doc : sm, kind == 0 ? "functions" : kind == 1 ? "regions"
							    : "features");
		for (k = 0; a && k < json_object_array_length(a); k++) {
			struct json_object *x = json_object_array_get_idx(a, k);
			const char *name = gets_(x, "name"), *obj = kind ? "" : gets_(x, "object");
			struct fig *f;

			if (!kind && (name[0] == '[' || !geti(x, "self_samples")))
				continue;	/* [no stack], [unknown]: no function */
			f = fig_get(F, kind == 0 ? 'f' : kind == 1 ? 'r' : 'F', name,
				    !strcmp(obj, exe) ? "" : obj);
			if (!f) {
				fprintf(stderr, "featprof diff: out of memory\n");
				return -1;
			}
			(b ? f->b : f->a)[r] = getd(x, kind == 0 ? "self_ns" : kind == 1
							     ? "exclusive_ns" : "ns");
			if (!kind)
				note_feature(f, sm);
		}
	}
	return 0;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/*
 * The machine's speed in each run, taken out: a run on a busier or slower-clocked moment
 * has every function slower by one factor (seen here: every function 4-5% apart between
 * runs of one build), which would hide a change of one function in a few runs a side.
 * Run r's factor is the median, over the functions with 1% or more of the pooled mean
 * CPU time, of its time over that function's pooled mean (a median: one function that
 * changed does not move it); every figure of the run is divided by it. The factors are
 * kept (fa, fb) and their sides compared as a figure of their own, so that a change that
 * slows everything shows there.
 */
static void normalize(struct figs *F, double *fa, double *fb)
{
	double *mean = calloc((size_t)F->n + 1, sizeof(double)), tot = 0;
	double *ratio = calloc((size_t)F->n + 1, sizeof(double));
	int i, r, k, n = F->na + F->nb;

	for (r = 0; r < n; r++)
		(r < F->na ? fa : fb)[r < F->na ? r : r - F->na] = 1;
	if (!mean || !ratio)
		goto out;
	for (i = 0; i < F->n; i++) {
		for (r = 0; r < n; r++)
			mean[i] += (r < F->na ? F->f[i].a[r] : F->f[i].b[r - F->na]) / n;
		tot += F->f[i].kind == 'f' ? mean[i] : 0;
	}
	for (r = 0; r < n; r++) {
		for (k = 0, i = 0; i < F->n; i++)
			if (F->f[i].kind == 'f' && mean[i] >= 0.01 * tot && mean[i] > 0)
				ratio[k++] = (r < F->na ? F->f[i].a[r] : F->f[i].b[r - F->na]) /
					     mean[i];
		qsort(ratio, (size_t)k, sizeof(double), cmp_double);
		if (k && ratio[k / 2] > 0)
			(r < F->na ? fa : fb)[r < F->na ? r : r - F->na] =
				k % 2 ? ratio[k / 2] : (ratio[k / 2 - 1] + ratio[k / 2]) / 2;
	}
	for (i = 0; i < F->n; i++) {
		if (F->f[i].kind == 's')	/* the factors themselves */
			continue;
		for (r = 0; r < F->na; r++)
			F->f[i].a[r] /= fa[r];
		for (r = 0; r < F->nb; r++)
			F->f[i].b[r] /= fb[r];
	}
out:
	free(mean);
	free(ratio);
}

static int by_p(const void *x, const void *y)
{
	const struct fig *const *a = x, *const *b = y;

	return (*a)->w.p < (*b)->w.p ? -1 : (*a)->w.p > (*b)->w.p;
}

/* Welch per figure, then Benjamini-Hochberg's q over those tested: the number tested.
 * The runs' speed factors first (normalize), as a figure of their own. */
static int test_all(struct figs *F)
{
	struct fig **v, *sp = fig_get(F, 's', "(every function: the runs' speed)", "");
	double q = 1;
	int i, m = 0;

	if (!sp)
		return -1;
	normalize(F, sp->a, sp->b);
	if (!(v = calloc((size_t)F->n + 1, sizeof(*v))))
		return -1;

	for (i = 0; i < F->n; i++) {
		struct fig *f = &F->f[i];

		cli_cmd_welch(f->a, F->na, f->b, F->nb, &f->w);
		f->tested = 1;
		if (v)
			v[m++] = f;
	}
	qsort(v, (size_t)m, sizeof(*v), by_p);
	for (i = m - 1; i >= 0; i--) {	/* q_i = min over j >= i of p_j m / j */
		double x = v[i]->w.p * m / (i + 1);

		q = x < q ? x : q;
		v[i]->q = q;
	}
	free(v);
	return m;
}

/* The sides' objects with their build ids: [{"name", "a", "b"}]. */
static struct json_object *objects(struct side *A, struct side *B)
{
	struct json_object *o = json_object_new_array();
	struct side *s[2] = { A, B };
	int k;
	size_t i;

	for (k = 0; k < 2; k++) {
		struct json_object *st = json_object_object_get(
			json_object_object_get(s[k]->doc[0], "sampling"), "stacks");
		struct json_object *objs = geta(st, "objects");

		for (i = 0; objs && i < json_object_array_length(objs); i++) {
			struct json_object *x = json_object_array_get_idx(objs, i), *y = NULL;
			size_t j;

			for (j = 0; j < json_object_array_length(o) && !y; j++)
				if (!strcmp(gets_(json_object_array_get_idx(o, j), "name"),
					    gets_(x, "name")))
					y = json_object_array_get_idx(o, j);
			if (!y) {
				y = json_object_new_object();
				json_object_object_add(y, "name", json_object_new_string(
							       gets_(x, "name")));
				json_object_array_add(o, y);
			}
			json_object_object_add(y, k ? "b" : "a",
					       json_object_new_string(gets_(x, "build_id")));
		}
	}
	return o;
}

static const char *kind_word(char k)
{
	return k == 'f' ? "function" : k == 'r' ? "region" : k == 's' ? "speed" : "feature";
}

static int flagged(const struct fig *f, double thr)
{
	if (!(f->q < FDR) || (f->w.ma > 0 && fabs(f->w.rel) * 100 <= thr))
		return 0;	/* a function new in B moved by all it has */
	return f->w.diff > 0 ? 1 : -1;
}

static struct json_object *fig_json(const struct fig *f, double thr)
{
	struct json_object *o = json_object_new_object(), *ci = json_object_new_array();
	int fl = flagged(f, thr);

	json_object_object_add(o, "kind", json_object_new_string(kind_word(f->kind)));
	json_object_object_add(o, "name", json_object_new_string(f->name));
	if (f->kind == 'f') {
		json_object_object_add(o, "object", json_object_new_string(f->object));
		json_object_object_add(o, "feature", json_object_new_string(f->feature));
	}
	json_object_object_add(o, "a_ns", json_object_new_double(f->w.ma));
	json_object_object_add(o, "b_ns", json_object_new_double(f->w.mb));
	json_object_object_add(o, "change_ns", json_object_new_double(f->w.diff));
	json_object_array_add(ci, json_object_new_double(f->w.lo));
	json_object_array_add(ci, json_object_new_double(f->w.hi));
	json_object_object_add(o, "ci95_ns", ci);
	json_object_object_add(o, "relative", json_object_new_double(f->w.rel));
	json_object_object_add(o, "p", json_object_new_double(f->w.p));
	json_object_object_add(o, "q", json_object_new_double(f->q));
	json_object_object_add(o, "flagged", json_object_new_string(
				       fl > 0 ? "regression" : fl < 0 ? "improvement" : ""));
	return o;
}

static int by_change(const void *x, const void *y)
{
	const struct fig *a = x, *b = y;

	if (a->q != b->q)
		return a->q < b->q ? -1 : 1;
	return fabs(a->w.diff) > fabs(b->w.diff) ? -1 : fabs(a->w.diff) < fabs(b->w.diff);
}

static void print_fig(const struct fig *f, double thr)
{
	char b1[32], b2[32], b3[32], b4[32], what[300], rel[32];
	int fl = flagged(f, thr);

	if (f->kind == 's') {	/* a factor, not a time */
		printf("%-11s every function together (the runs' speed, taken out of the "
		       "figures): %+.1f%% ± %.1f%% (p = %.2g, q = %.2g)\n",
		       fl > 0 ? "REGRESSION" : fl < 0 ? "improvement" : "", 100 * f->w.rel,
		       100 * (f->w.hi - f->w.lo) / 2 / (f->w.ma > 0 ? f->w.ma : 1), f->w.p, f->q);
		return;
	}
	if (f->kind == 'f')
		snprintf(what, sizeof(what), "feature %s, function %s%s%s%s",
			 f->feature[0] ? f->feature : "(outside regions)", f->name,
			 f->object[0] ? " (" : "", f->object, f->object[0] ? ")" : "");
	else
		snprintf(what, sizeof(what), "%s %s", kind_word(f->kind), f->name);
	if (f->w.ma > 0)
		snprintf(rel, sizeof(rel), "%+.1f%%", 100 * f->w.rel);
	else
		snprintf(rel, sizeof(rel), "new");
	printf("%-11s %s: %s%s ± %s (%s; %s -> %s; p = %.2g, q = %.2g)\n",
	       fl > 0 ? "REGRESSION" : fl < 0 ? "improvement" : "", what,
	       f->w.diff >= 0 ? "+" : "", cli_fmt_ns(f->w.diff, b1, sizeof(b1)),
	       cli_fmt_ns((f->w.hi - f->w.lo) / 2, b2, sizeof(b2)), rel,
	       cli_fmt_ns(f->w.ma, b3, sizeof(b3)), cli_fmt_ns(f->w.mb, b4, sizeof(b4)),
	       f->w.p, f->q);
}

/* The report: flagged figures first; --json the whole. The number of regressions. */
static int report(struct figs *F, struct side *A, struct side *B, double thr, int json,
		  int m)
{
	struct json_object *o = json_object_new_object(), *a = json_object_new_array();
	struct json_object *objs = objects(A, B);
	int i, reg = 0, imp = 0, shown = 0;
	size_t k;

	qsort(F->f, (size_t)F->n, sizeof(*F->f), by_change);
	for (i = 0; i < F->n; i++) {
		reg += flagged(&F->f[i], thr) > 0;
		imp += flagged(&F->f[i], thr) < 0;
		json_object_array_add(a, fig_json(&F->f[i], thr));
	}
	if (json) {
		json_object_object_add(o, "format", json_object_new_string("featprof-diff"));
		json_object_object_add(o, "version", json_object_new_int(1));
		json_object_object_add(o, "a_runs", json_object_new_int(A->n));
		json_object_object_add(o, "b_runs", json_object_new_int(B->n));
		json_object_object_add(o, "fdr", json_object_new_double(FDR));
		json_object_object_add(o, "threshold_pct", json_object_new_double(thr));
		json_object_object_add(o, "tests", json_object_new_int(m));
		json_object_object_add(o, "objects", json_object_get(objs));
		json_object_object_add(o, "figures", json_object_get(a));
		json_object_object_add(o, "regressions", json_object_new_int(reg));
		json_object_object_add(o, "improvements", json_object_new_int(imp));
		cli_cmd_print_json(o);
	} else {
		printf("featprof diff --functions: %d runs (A) -> %d runs (B); %d figures tested "
		       "(Welch's t per figure, Benjamini-Hochberg q over all of them); flagged: "
		       "q < %.2g and more than %.3g%% of A's\n", A->n, B->n, m, FDR, thr);
		for (k = 0; k < json_object_array_length(objs); k++) {
			struct json_object *x = json_object_array_get_idx(objs, k);

			printf("  object %s: build id %s -> %s\n", gets_(x, "name"),
			       gets_(x, "a")[0] ? gets_(x, "a") : "?",
			       gets_(x, "b")[0] ? gets_(x, "b") : "?");
		}
		for (i = 0; i < F->n; i++)
			if (flagged(&F->f[i], thr) || F->f[i].kind == 's' ||
			    (shown < 10 && F->f[i].kind == 'f')) {
				shown += !flagged(&F->f[i], thr);
				print_fig(&F->f[i], thr);
			}
		printf("%d regression%s, %d improvement%s flagged (± is the 95%% interval's "
		       "half)\n", reg, reg == 1 ? "" : "s", imp, imp == 1 ? "" : "s");
	}
	json_object_put(o);
	json_object_put(a);
	json_object_put(objs);
	return reg;
}

/* The arguments: A's files, --to, B's files, --threshold, --json. 0 or the status. */
static int parse(int argc, char **argv, struct side *A, struct side *B, double *thr,
		 int *json)
{
	struct side *s = A;
	int i;

	for (i = 1; i < argc; i++) {
		const char *x = argv[i];
		char *end;

		if (!strcmp(x, "--functions"))
			continue;
		if (!strcmp(x, "--json")) {
			*json = 1;
		} else if (!strcmp(x, "--to")) {
			s = B;
		} else if (!strcmp(x, "--threshold") && i + 1 < argc) {
			*thr = strtod(argv[++i], &end);
			if (*end || !(*thr >= 0 && *thr <= 1000)) {
				fprintf(stderr, "featprof diff: --threshold takes a percentage, 0 "
					"to 1000: '%s'\n", argv[i]);
				return 2;
			}
		} else if (x[0] == '-') {
			fprintf(stderr, "featprof diff: unknown option or missing value '%s'\n",
				x);
			return 2;
		} else if (s->n == MAXSIDE) {
			fprintf(stderr, "featprof diff: at most %d run files a side\n", MAXSIDE);
			return 2;
		} else if (!(s->doc[s->n] = json_object_from_file(x)) ||
			   !json_object_object_get_ex(s->doc[s->n], "run", NULL)) {
			fprintf(stderr, "featprof diff: %s: not a file of featprof run -o%s\n", x,
				s->doc[s->n] ? "" : " (not JSON)");
			json_object_put(s->doc[s->n]);
			s->doc[s->n] = NULL;
			return 2;
		} else {
			s->file[s->n++] = x;
		}
	}
	if (A->n < 2 || B->n < 2) {
		fprintf(stderr, "usage: featprof diff --functions A.json... --to B.json... "
			"[--threshold PCT] [--json]   (two runs a side at least, of featprof run "
			"--stacks -o)\n");
		return 2;
	}
	return 0;
}

int cmd_diff_functions(int argc, char **argv)
{
	static struct side A, B;
	struct figs F = { 0 };
	double thr = 1;
	int json = 0, rc, i, m = 0;

	rc = parse(argc, argv, &A, &B, &thr, &json);
	F.na = A.n;
	F.nb = B.n;
	for (i = 0; !rc && i < A.n; i++)
		rc = read_run(&F, A.doc[i], A.file[i], i, 0) ? 2 : 0;
	for (i = 0; !rc && i < B.n; i++)
		rc = read_run(&F, B.doc[i], B.file[i], i, 1) ? 2 : 0;
	if (!rc && (m = test_all(&F)) < 0) {
		fprintf(stderr, "featprof diff: out of memory\n");
		rc = 2;
	}
	if (!rc)
		rc = report(&F, &A, &B, thr, json, m) ? 1 : 0;
	for (i = 0; i < F.n; i++) {
		free(F.f[i].name);
		free(F.f[i].object);
		free(F.f[i].a);
		free(F.f[i].b);
	}
	free(F.f);
	for (i = 0; i < A.n; i++)
		json_object_put(A.doc[i]);
	for (i = 0; i < B.n; i++)
		json_object_put(B.doc[i]);
	return rc;
}
