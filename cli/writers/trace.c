// SPDX-License-Identifier: GPL-2.0
/*
 * featprof record's trace (Chrome Trace Event Format, JSON object form, which
 * ui.perfetto.dev and chrome://tracing open): one complete event per instance, one track
 * per thread, the region's features as "cat" and in "args", process and thread names as
 * metadata events; "otherData" the event and drop counts, the ring size and the
 * calibration used. Each thread runs on a clock from which the probes' cost is removed as
 * it accrues (cli/commands/record.c says how).
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/core/core.h"
#include "writers.h"

struct ev {
	int64_t tid, region, start, end, depth, ndesc, cstart, cend;
	double vstart, dur;	/* compensated, ns */
	double shown;		/* dur, cut to end within the parent */
};

static int cmp_placed(const void *a, const void *b)
{
	const struct ev *x = *(struct ev *const *)a, *y = *(struct ev *const *)b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->vstart != y->vstart)
		return x->vstart < y->vstart ? -1 : 1;
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

/*
 * Where the probes' real cost at an instance was below the calibrated average (tight
 * recursion: warm caches), a child's compensated end can pass its parent's by a few
 * hundred ns; trace viewers drop misnested slices, so the shown duration is cut at the
 * parent's end. The exact compensated duration stays in args.compensated_ns.
 */
static int nest(struct ev *ev, size_t n)
{
	struct ev **o = calloc(n + 1, sizeof(*o)), *stack[64];
	int64_t tid = -1;
	size_t i;
	int sp = 0;

	if (!o)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		o[i] = &ev[i];
		ev[i].shown = ev[i].dur;
	}
	qsort(o, n, sizeof(*o), cmp_placed);
	for (i = 0; i < n; i++) {
		struct ev *e = o[i];

		if (e->tid != tid) {
			tid = e->tid;
			sp = 0;
		}
		while (sp && stack[sp - 1]->depth >= e->depth)
			sp--;
		if (sp) {
			double pend = stack[sp - 1]->vstart + stack[sp - 1]->shown;

			if (e->vstart > pend)
				e->vstart = pend;
			if (e->vstart + e->shown > pend)
				e->shown = pend - e->vstart;
		}
		if (sp < 64)
			stack[sp++] = e;
	}
	free(o);
	return 0;
}

/* Every instance onto its thread's compensated clock (T - the cost so far at T). */
static int compensate(struct ev *ev, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		ev[i].vstart = (double)(ev[i].start - ev[i].cstart);
		ev[i].dur = (double)(ev[i].end - ev[i].cend) - ev[i].vstart;
		if (ev[i].dur < 0)
			ev[i].dur = 0;
	}
	return nest(ev, n);
}

static void write_trace(FILE *f, struct ev *ev, size_t n, struct json_object *names,
			struct json_object *done, long pid, uint32_t ring)
{
	struct json_object *st = NULL, *regs, *parts = NULL, *comm;
	double t0 = 0;
	int64_t *tids = calloc(n + 1, sizeof(*tids));
	size_t i, k, nt = 0, nregs = names ? json_object_array_length(names) : 0;
	struct json_object **fl = calloc(nregs + 1, sizeof(*fl));

	json_object_object_get_ex(done, "stats", &st);
	regs = geta(st, "regions");
	for (k = 0; regs && k < json_object_array_length(regs); k++) {
		struct json_object *r = json_object_array_get_idx(regs, k);

		for (i = 0; fl && i < nregs; i++)
			if (!strcmp(gets_(r, "name"),
				    json_object_get_string(json_object_array_get_idx(names, i))))
				fl[i] = geta(r, "features");
	}
	for (i = 0; i < n; i++)
		if (!i || ev[i].vstart < t0)
			t0 = ev[i].vstart;
	fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
	comm = json_object_new_string(gets_(st, "comm"));
	fprintf(f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%ld,\"tid\":0,"
		"\"args\":{\"name\":%s}}", pid, json_object_to_json_string(comm));
	json_object_put(comm);
	for (i = 0; i < n; i++) {
		const char *name = ev[i].region >= 0 && (size_t)ev[i].region < nregs
			? json_object_get_string(json_object_array_get_idx(names, ev[i].region))
			: "?";
		struct json_object *fe = fl && (size_t)ev[i].region < nregs ? fl[ev[i].region]
									   : NULL;
		struct json_object *cat = json_object_new_string("");

		for (k = 0; k < nt && tids[k] != ev[i].tid; k++)
			;
		if (k == nt && tids) {
			tids[nt++] = ev[i].tid;
			fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%ld,"
				"\"tid\":%lld,\"args\":{\"name\":\"thread %lld\"}}", pid,
				(long long)ev[i].tid, (long long)ev[i].tid);
		}
		if (fe) {
			char buf[1024] = "";
			size_t j, len = 0;

			for (j = 0; j < json_object_array_length(fe) && len < sizeof(buf) - 1; j++)
				len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s",
							j ? "," : "",
							json_object_get_string(
								json_object_array_get_idx(fe, j)));
			json_object_put(cat);
			cat = json_object_new_string(buf);
		}
		fprintf(f, ",\n{\"ph\":\"X\",\"name\":\"%s\",\"cat\":%s,\"pid\":%ld,\"tid\":%lld,"
			"\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"features\":%s,\"raw_ns\":%lld,"
			"\"compensated_ns\":%.1f,\"depth\":%lld,\"nested\":%lld}}", name,
			json_object_to_json_string(cat), pid, (long long)ev[i].tid,
			(ev[i].vstart - t0) / 1000.0, ev[i].shown / 1000.0,
			fe ? json_object_to_json_string(fe) : "[]",
			(long long)(ev[i].end - ev[i].start), ev[i].dur, (long long)ev[i].depth,
			(long long)ev[i].ndesc);
		json_object_put(cat);
	}
	json_object_object_get_ex(done, "probe_parts_ns", &parts);
	fprintf(f, "\n],\"otherData\":{\"format\":\"featprof-record\",\"version\":1,"
		"\"pid\":%ld,\"events\":%zu,\"dropped\":%lld,\"ring_bytes\":%u,"
		"\"window_ns\":%lld,\"probe_parts_ns\":%s,\"compensation\":%s}}\n", pid, n,
		(long long)geti(done, "dropped"), ring, (long long)geti(st, "elapsed_ns"),
		parts ? json_object_to_json_string(parts) : "null",
		json_object_to_json_string(json_object_object_get(st, "compensation")));
	free(tids);
	free(fl);
}

static int64_t field(struct json_object *e, size_t i)
{
	return json_object_get_int64(json_object_array_get_idx(e, i));
}

struct cli_trace {
	struct ev *ev;
	size_t n, cap;
};

struct cli_trace *cli_trace__new(void)
{
	return calloc(1, sizeof(struct cli_trace));
}

void cli_trace__free(struct cli_trace *t)
{
	if (t)
		free(t->ev);
	free(t);
}

int cli_trace__add(struct cli_trace *t, struct json_object *evs)
{
	size_t k;

	for (k = 0; k < json_object_array_length(evs); k++) {
		struct json_object *e = json_object_array_get_idx(evs, k);
		struct ev *x;

		if (t->n == t->cap) {
			size_t nc = t->cap ? 2 * t->cap : 4096;
			struct ev *g = realloc(t->ev, nc * sizeof(*t->ev));

			if (!g)
				return -ENOMEM;
			t->ev = g;
			t->cap = nc;
		}
		x = &t->ev[t->n++];
		memset(x, 0, sizeof(*x));
		x->tid = field(e, 0);
		x->region = field(e, 1);
		x->start = field(e, 2);
		x->end = field(e, 3);
		x->depth = field(e, 4);
		x->ndesc = field(e, 5);
		x->cstart = field(e, 6);	/* 0 from an older featprofd */
		x->cend = field(e, 7);
	}
	return 0;
}

int cli_trace__write(struct cli_trace *t, FILE *f, struct json_object *names,
		     struct json_object *done, long pid, uint32_t ring)
{
	if (compensate(t->ev, t->n))
		return -ENOMEM;
	write_trace(f, t->ev, t->n, names, done, pid, ring);
	return 0;
}
