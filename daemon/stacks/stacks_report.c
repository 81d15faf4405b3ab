// SPDX-License-Identifier: GPL-2.0
/*
 * sample --stacks' report (daemon/stacks/): a session's stacks tallied per region, feature,
 * outside regions and in all, their functions' self and total samples with binomial
 * errors, and every distinct (regions, stack) with the functions and objects it names.
 * stacks.c names and interns them.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "bpf/featprof_bpf.h"
#include "common/catalog.h"
#include "common/notes.h"
#include "common/symbols.h"
#include "stacks_impl.h"

static struct json_object *func_json(const struct fp_stacks *s, int i)
{
	struct json_object *o = json_object_new_object();
	int ob = s->fns[i].obj;

	json_object_object_add(o, "name", json_object_new_string(s->fns[i].name));
	json_object_object_add(
	    o, "object",
	    json_object_new_string(ob >= 0 ? fp_stacks_base_name(s->objs[ob].path) : "[unknown]"));
	json_object_object_add(o, "object_index", json_object_new_int(ob));
	if (s->fns[i].inlined)
		json_object_object_add(o, "inlined", json_object_new_boolean(true));
	if (s->fns[i].symbol)
		json_object_object_add(o, "symbol", json_object_new_string(s->fns[i].symbol));
	return o;
}

/* The objects frames fell in: [{"name", "path", "build_id", "symbols", "debug_file",
 * "start", "end", "offset"}], in the order functions' "object_index" refers to them;
 * "symbols" where the names came from (common/symbols.h: "symtab", "build-id",
 * "debuglink", "debuginfod", "minidebuginfo", "dynsym", "none"). */
static struct json_object *objects_json(const struct fp_stacks *s)
{
	struct json_object *a = json_object_new_array();
	int i;

	for (i = 0; i < s->nobjs; i++) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "name", json_object_new_string(
					       fp_stacks_base_name(s->objs[i].path)));
		json_object_object_add(o, "path", json_object_new_string(s->objs[i].path));
		json_object_object_add(o, "build_id", json_object_new_string(
					       s->objs[i].build_id));
		json_object_object_add(o, "symbols", json_object_new_string(
					       fp_symbols__source_name(s->objs[i].source)));
		if (s->objs[i].debug_file)
			json_object_object_add(o, "debug_file", json_object_new_string(
						       s->objs[i].debug_file));
		json_object_object_add(o, "start", json_object_new_int64(
					       (int64_t)s->objs[i].start));
		json_object_object_add(o, "end", json_object_new_int64((int64_t)s->objs[i].end));
		json_object_object_add(o, "offset", json_object_new_int64(
					       (int64_t)s->objs[i].off));
		json_object_array_add(a, o);
	}
	return a;
}

/* The pseudo-functions that make lost and cut stacks visible. */
enum { PS_LOST, PS_TRUNC, PS_N };

struct tallies {
	uint64_t *self, *total;
	uint64_t *iself;	/* an inlined function's: the samples in its inlined code */
	uint32_t *stamp, now;	/* a function's total counted once per sample key */
	int nf;
};

/* Self: the innermost function the compiler did not inline (what perf report --no-inline
 * and a symbol table say), so that a function's self time does not move when the
 * compiler inlines more or less into it; an inlined call's own is apart (inline_self:
 * the samples whose innermost frame it is, which its caller's self holds too). */
static void add_key(const struct fp_stacks *s, struct tallies *t, const struct fp_stack *st,
		    const int *ps, uint64_t c)
{
	int k;

	t->now++;
	if (!st) {
		t->self[ps[PS_LOST]] += c;
		t->total[ps[PS_LOST]] += c;
		return;
	}
	if (st->truncated)
		t->total[ps[PS_TRUNC]] += c;
	if (st->n && s->fns[st->fn[st->n - 1]].inlined)
		t->iself[st->fn[st->n - 1]] += c;
	for (k = st->n - 1; k >= 0 && s->fns[st->fn[k]].inlined; k--)
		;
	if (k >= 0)
		t->self[st->fn[k]] += c;
	for (k = 0; k < st->n; k++)
		if (t->stamp[st->fn[k]] != t->now) {
			t->stamp[st->fn[k]] = t->now;
			t->total[st->fn[k]] += c;
		}
}

static struct json_object *share(uint64_t c, uint64_t n, const char *what,
				 struct json_object *o)
{
	double p = n ? (double)c / (double)n : 0;
	char k[32];

	snprintf(k, sizeof(k), "%s_samples", what);
	json_object_object_add(o, k, json_object_new_int64((int64_t)c));
	snprintf(k, sizeof(k), "%s_share", what);
	json_object_object_add(o, k, json_object_new_double(p));
	snprintf(k, sizeof(k), "%s_stderr", what);	/* binomial, as a share */
	json_object_object_add(o, k, json_object_new_double(
				       n ? sqrt(p * (1 - p) / (double)n) : 0));
	return o;
}

static int cmp_total(const void *a, const void *b, void *tl)
{
	const struct tallies *cmp_t = tl;
	int x = *(const int *)a, y = *(const int *)b;

	if (cmp_t->total[x] != cmp_t->total[y])
		return cmp_t->total[x] > cmp_t->total[y] ? -1 : 1;
	if (cmp_t->self[x] != cmp_t->self[y])
		return cmp_t->self[x] > cmp_t->self[y] ? -1 : 1;
	return x - y;
}

#define FP_TOP_FUNCTIONS 100

/* The functions of n samples, the top first by total samples, into x. */
static void functions_into(const struct fp_stacks *s, struct tallies *t, uint64_t n,
			   struct json_object *x, int top)
{
	struct json_object *a = json_object_new_array();
	int *idx = malloc((size_t)t->nf * sizeof(*idx)), m = 0, k;

	for (k = 0; idx && k < t->nf; k++)
		if (t->total[k] || t->self[k])
			idx[m++] = k;
	if (idx)
		qsort_r(idx, (size_t)m, sizeof(*idx), cmp_total, t);
	for (k = 0; k < m && k < top; k++) {
		struct json_object *f = func_json(s, idx[k]);

		share(t->self[idx[k]], n, "self", f);
		share(t->total[idx[k]], n, "total", f);
		if (s->fns[idx[k]].inlined)
			share(t->iself[idx[k]], n, "inline_self", f);
		json_object_array_add(a, f);
	}
	free(idx);
	json_object_object_add(x, "functions", a);
	json_object_object_add(x, "functions_more", json_object_new_int(m > top ? m - top : 0));
}

static bool has_region(const struct fp_sampled *v, int r)
{
	int k;

	for (k = 0; k < v->nreg; k++)
		if (v->reg[k] == r)
			return true;
	return false;
}

/* which: a region (>= 0), a feature (-1 - f), the base (INT32_MIN), or every sample
 * (INT32_MAX). */
static bool key_in(const struct fp_sampled *v, int which)
{
	if (which == INT32_MAX)
		return true;
	if (which >= 0)
		return has_region(v, which);
	if (which == INT32_MIN)
		return !v->nreg && !v->bad;
	return (v->fmask >> (-1 - which)) & 1;
}

/* The functions of the n keys v that key_in(which) and, tid not 0, of thread tid, into
 * x ("functions", the top first): their samples. */
static uint64_t tally_into(const struct fp_stacks *s, struct tallies *t,
			   const struct fp_stack **st, const int *ps, const struct fp_sampled *v,
			   int n, int which, uint32_t tid, struct json_object *x, int top)
{
	uint64_t total = 0;
	int i;

	memset(t->self, 0, (size_t)t->nf * sizeof(*t->self));
	memset(t->iself, 0, (size_t)t->nf * sizeof(*t->iself));
	memset(t->total, 0, (size_t)t->nf * sizeof(*t->total));
	for (i = 0; i < n; i++)
		if (key_in(&v[i], which) && (!tid || v[i].tid == tid)) {
			add_key(s, t, st[i], ps, v[i].c);
			total += v[i].c;
		}
	if (x)
		functions_into(s, t, total, x, top);
	return total;
}

#define FP_TOP_THREADS 64
#define FP_TOP_THREAD_FUNCTIONS 20

static int cmp_thread(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;	/* {samples, tid} */

	return x[0] != y[0] ? (x[0] > y[0] ? -1 : 1) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* "threads": per thread sampled, the most sampled first (at most FP_TOP_THREADS), its
 * name ("comm (tid N)", unique in a sum over processes), tid, comm, samples and top
 * functions by total samples, shares of its own samples. */
static struct json_object *threads_json(struct fp_stacks *s, pid_t pid, struct tallies *t,
					const struct fp_stack **st, const int *ps,
					const struct fp_sampled *v, int n)
{
	struct json_object *a = json_object_new_array();
	uint64_t (*th)[2] = calloc((size_t)n + 1, sizeof(*th));
	int i, k, m = 0;

	for (i = 0; th && i < n; i++) {
		for (k = 0; k < m && th[k][1] != v[i].tid; k++)
			;
		if (k == m)
			th[m++][1] = v[i].tid;
		th[k][0] += v[i].c;
	}
	if (th)
		qsort(th, (size_t)m, sizeof(*th), cmp_thread);
	for (k = 0; th && k < m && k < FP_TOP_THREADS; k++) {
		struct json_object *x = json_object_new_object();
		const char *comm = fp_stacks__thread(s, pid, (uint32_t)th[k][1]);
		char name[64];

		snprintf(name, sizeof(name), "%s (tid %u)", comm && *comm ? comm : "?",
			 (unsigned)th[k][1]);
		json_object_object_add(x, "name", json_object_new_string(name));
		json_object_object_add(x, "tid", json_object_new_int64((int64_t)th[k][1]));
		json_object_object_add(x, "comm", json_object_new_string(comm ? comm : ""));
		json_object_object_add(x, "samples", json_object_new_int64((int64_t)th[k][0]));
		tally_into(s, t, st, ps, v, n, INT32_MAX, (uint32_t)th[k][1], x,
			   FP_TOP_THREAD_FUNCTIONS);
		json_object_array_add(a, x);
	}
	free(th);
	return a;
}

/* "stacks": the functions, the objects, each distinct (regions, stack) and its samples. */
static struct json_object *stacks_json(const struct fp_stacks *s, const struct fp_stack **st,
				       const int *ps, const struct fp_catalog *cat,
				       const struct fp_sampled *v, int n)
{
	struct json_object *o = json_object_new_object(), *a = json_object_new_array(), *x, *y;
	uint64_t lost = 0, trunc = 0, with = 0;
	int i, k;

	for (i = 0; i < n; i++) {
		x = json_object_new_object();
		y = json_object_new_array();
		for (k = 0; k < v[i].nreg; k++)
			json_object_array_add(y, json_object_new_string(
						      cat->regions[v[i].reg[k]].name));
		json_object_object_add(x, "regions", y);
		y = json_object_new_array();
		for (k = 0; k < cat->nfeatures && k < 64; k++)
			if ((v[i].fmask >> k) & 1)
				json_object_array_add(y, json_object_new_string(cat->features[k]));
		json_object_object_add(x, "features", y);
		y = json_object_new_array();
		if (st[i] && st[i]->truncated)
			json_object_array_add(y, json_object_new_int(ps[PS_TRUNC]));
		for (k = 0; st[i] && k < st[i]->n; k++)
			json_object_array_add(y, json_object_new_int(st[i]->fn[k]));
		if (!st[i])
			json_object_array_add(y, json_object_new_int(ps[PS_LOST]));
		json_object_object_add(x, "stack", y);
		json_object_object_add(x, "samples", json_object_new_int64((int64_t)v[i].c));
		json_object_object_add(x, "tid", json_object_new_int64((int64_t)v[i].tid));
		json_object_array_add(a, x);
		lost += st[i] ? 0 : v[i].c;
		trunc += st[i] && st[i]->truncated ? v[i].c : 0;
		with += st[i] ? v[i].c : 0;
	}
	json_object_object_add(o, "unwind", json_object_new_string("frame pointers"));
	json_object_object_add(o, "frames_max", json_object_new_int(FP_STACK_FRAMES));
	json_object_object_add(o, "with_stack", json_object_new_int64((int64_t)with));
	json_object_object_add(o, "lost", json_object_new_int64((int64_t)lost));
	json_object_object_add(o, "truncated", json_object_new_int64((int64_t)trunc));
	y = json_object_new_array();
	for (k = 0; k < s->nfns; k++)
		json_object_array_add(y, func_json(s, k));
	json_object_object_add(o, "functions", y);
	json_object_object_add(o, "objects", objects_json(s));
	json_object_object_add(o, "samples", a);
	return o;
}

/* The functions region r begins in (its begin sites', by the objects' symbols; a function
 * region: its function), [{name, object}]: frames at or above one of them in a stack
 * hold the region's begin, those below are inside it (featprof drill). */
static struct json_object *begins_in(const struct fp_catalog *cat, int r)
{
	const struct fp_region *reg = &cat->regions[r];
	struct json_object *a = json_object_new_array();
	int k, j;

	for (k = 0; k < reg->nsites; k++) {
		const struct fp_site_ref *ref = &reg->sites[k];
		const struct fp_site *site = fp_ref_site(cat->objs, ref);
		struct fp_object *o = cat->objs[ref->obj];
		const struct fp_func *f;
		struct json_object *x;
		bool dup = false;

		if (ref->kind != FP_KIND_BEGIN)
			continue;
		f = fp_symbols__at(fp_object__symbols(o), site->loc_off);
		if (!f)
			continue;
		for (j = 0; j < (int)json_object_array_length(a) && !dup; j++) {
			x = json_object_array_get_idx(a, (size_t)j);
			dup = !strcmp(json_object_get_string(json_object_object_get(x, "name")),
				      f->name);
		}
		if (dup)
			continue;
		x = json_object_new_object();
		json_object_object_add(x, "name", json_object_new_string(f->name));
		json_object_object_add(x, "object",
				       json_object_new_string(fp_stacks_base_name(o->path)));
		json_object_array_add(a, x);
	}
	return a;
}

void fp_stacks__report(struct fp_stacks *s, int map_fd, pid_t pid, struct fp_proc *proc,
		       const struct fp_catalog *cat, const struct fp_sampled *v, int n,
		       struct json_object *o)
{
	const struct fp_stack **st = calloc((size_t)n + 1, sizeof(*st));
	struct tallies t = { 0 };
	struct json_object *a;
	int ps[PS_N], i;

	ps[PS_LOST] = fp_stacks__intern(s, "[no stack]", -1, 0);
	ps[PS_TRUNC] = fp_stacks__intern(s, "[truncated]", -1, 0);
	if (!st || ps[PS_LOST] < 0 || ps[PS_TRUNC] < 0)
		goto out;
	for (i = 0; i < n; i++)
		st[i] = v[i].ustack >= 0 ? fp_stacks__get(s, map_fd, v[i].ustack, pid, proc)
					 : NULL;
	t.nf = s->nfns;
	t.self = calloc((size_t)t.nf, sizeof(*t.self));
	t.iself = calloc((size_t)t.nf, sizeof(*t.iself));
	t.total = calloc((size_t)t.nf, sizeof(*t.total));
	t.stamp = calloc((size_t)t.nf, sizeof(*t.stamp));
	if (!t.self || !t.iself || !t.total || !t.stamp)
		goto out;
	a = json_object_object_get(o, "regions");
	for (i = 0; a && i < cat->nregions && i < (int)json_object_array_length(a); i++) {
		tally_into(s, &t, st, ps, v, n, i, 0, json_object_array_get_idx(a, i),
			   FP_TOP_FUNCTIONS);
		json_object_object_add(json_object_array_get_idx(a, i), "begins_in",
				       begins_in(cat, i));
	}
	a = json_object_object_get(o, "features");
	for (i = 0; a && i < (int)json_object_array_length(a) && i < 64; i++)
		tally_into(s, &t, st, ps, v, n, -1 - i, 0, json_object_array_get_idx(a, i),
			   FP_TOP_FUNCTIONS);
	tally_into(s, &t, st, ps, v, n, INT32_MIN, 0, json_object_object_get(o, "base"),
		   FP_TOP_FUNCTIONS);
	tally_into(s, &t, st, ps, v, n, INT32_MAX, 0, o, FP_TOP_FUNCTIONS);	/* all */
	json_object_object_add(o, "threads", threads_json(s, pid, &t, st, ps, v, n));
	json_object_object_add(o, "stacks", stacks_json(s, st, ps, cat, v, n));
out:
	free(t.self);
	free(t.iself);
	free(t.total);
	free(t.stamp);
	free(st);
}
