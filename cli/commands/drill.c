// SPDX-License-Identifier: GPL-2.0
/*
 * featprof drill PID REGION [--top N] [--duration S] [--unwind fp|dwarf] [--json]
 *
 * Inside a region, exactly: the second step after sample --stacks.
 *  1. Samples the target with call stacks for S seconds (default 5) and takes the N
 *     functions (default 5) that the most of REGION's samples pass through below the
 *     function REGION begins in (its "begins_in": frames at or above it hold the region,
 *     those below run inside it).
 *  2. Measures them as function regions of a feature "drill-REGION" (and REGION itself,
 *     if it was not traced yet) for S seconds: their instances nest under REGION's in
 *     the region paths (stats "paths"), so what ran while REGION was open on the thread
 *     is told apart from what ran outside it, which is left out.
 *  3. Prints, from the paths' change over those S seconds, per function its calls, its
 *     inclusive and exclusive time inside REGION (compensated, as stats), its share of
 *     REGION's time and its uncertainty (the paths' stated uncertainties added), and
 *     REGION's remainder (its time in none of them); then disables what it enabled.
 * A path's time counts for a function when the function comes after REGION on it; its
 * inclusive time counts each path once (recursion is not counted twice), its exclusive
 * time the paths that end in it.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/core/core.h"
#include "cli/writers/writers.h"
#include "commands_impl.h"

#define DRILL_MAX 64

struct fnc {
	char name[256], object[256];
	char sym[256];		/* its symbol: the function region's pattern and name (name
				 * is as people read it: demangled, clones folded) */
	uint64_t samples;	/* REGION's samples that pass through it */
	uint64_t self;		/* ... that stop in it */
	/* the probe before timing (probe()): calls a second, a call's trap pair, what its
	 * traps would cost REGION; sampled: over the bound, given sampled figures */
	double rate, pair_ns, overhead;	/* rate: calls a second of REGION's time */
	int sampled;		/* 1: its traps would cost too much; 2: its timing's stated
				 * uncertainty would exceed its time (short calls); 3: C++,
				 * its calls counted, not timed (fp_symbols__calls_only) */
	/* timed */
	double incl, excl, unc, incl_cpu;
	uint64_t calls;
	int clamped;		/* held to the function that holds it (compensation's error) */
};

/* secs seconds, what the drill is doing meanwhile said second by second on a terminal */
static void pause_s(long secs, const char *doing)
{
	long i;

	for (i = 0; i < secs; i++) {
		struct timespec ts = { 1, 0 };

		cli_progress("featprof drill: %s, %ld of %ld s", doing, i, secs);
		while (nanosleep(&ts, &ts))
			;
	}
	cli_progress_done();
}

static int has_str(struct json_object *a, const char *s)
{
	size_t k;

	for (k = 0; a && k < json_object_array_length(a); k++)
		if (!strcmp(json_object_get_string(json_object_array_get_idx(a, k)), s))
			return 1;
	return 0;
}

/* Sampling with stacks for secs: the sampling report (a new reference) or NULL; the
 * stats at its end into *st_out (a new reference, NULL if none). */
static struct json_object *sample(long pid, long secs, const char *unwind,
				  struct json_object **st_out)
{
	struct json_object *req = json_object_new_object(), *st, *sm = NULL;

	json_object_object_add(req, "hz", json_object_new_int(FP_DEFAULT_HZ));
	json_object_object_add(req, "stacks", json_object_new_boolean(1));
	if (unwind)
		json_object_object_add(req, "unwind", json_object_new_string(unwind));
	st = client_request_held("drill", "sample", pid, req, 1);	/* stopped if drill is */
	if (!st)
		return NULL;
	json_object_put(st);
	pause_s(secs, "sampling call stacks");
	st = client_request("drill", "stats", pid, NULL);
	req = json_object_new_object();
	json_object_object_add(req, "on", json_object_new_boolean(0));
	json_object_put(client_request_held("drill", "sample", pid, req, 0));
	if (st && json_object_object_get_ex(st, "sampling", &sm))
		json_object_get(sm);
	*st_out = st;
	return sm;
}

/* The n functions of fns (nf) with the most self samples, min at least, ties by total,
 * into f; how many. */
static int pick(struct json_object *fns, size_t nf, const uint64_t *cnt, uint64_t *self,
		uint64_t min, struct fnc *f, int n)
{
	size_t k;
	int j, m = 0;

	for (j = 0; j < n; j++) {	/* the n largest selves, a pass each */
		size_t best = nf;

		for (k = 0; k < nf; k++) {
			struct json_object *fk = json_object_array_get_idx(fns, k), *il;
			const char *nm = gets_(fk, "name");

			/* a name no symbol gave ("obj+0x..", "[vdso]") cannot be a region, nor
			 * a call the compiler inlined (no entry to probe) */
			if (json_object_object_get_ex(fk, "inlined", &il) &&
			    json_object_get_boolean(il))
				continue;
			/* where the time is spent: a wrapper (all its time its callees') has
			 * no self time and is not taken */
			if (self[k] >= min && nm[0] != '[' && !strstr(nm, "+0x") &&
			    (best == nf || self[k] > self[best] ||
			     (self[k] == self[best] && cnt[k] > cnt[best])))
				best = k;
		}
		if (best == nf)
			break;
		snprintf(f[m].name, sizeof(f[m].name), "%s",
			 gets_(json_object_array_get_idx(fns, best), "name"));
		snprintf(f[m].sym, sizeof(f[m].sym), "%.255s",
			 *gets_(json_object_array_get_idx(fns, best), "symbol")
				 ? gets_(json_object_array_get_idx(fns, best), "symbol")
				 : f[m].name);
		snprintf(f[m].object, sizeof(f[m].object), "%s",
			 gets_(json_object_array_get_idx(fns, best), "object"));
		f[m].self = self[best];
		f[m++].samples = cnt[best];
		self[best] = 0;
	}
	return m;
}

/*
 * The functions below the one REGION begins in, in REGION's sampled stacks, counted once
 * per stack (samples) and where a stack stops (self: its innermost frame that the
 * compiler did not inline): the n with the most self samples into f, where REGION's time
 * is spent. Their number.
 */
static int candidates(struct json_object *sm, const char *region, struct fnc *f, int n)
{
	struct json_object *reg = getn(json_object_object_get(sm, "regions"), region);
	struct json_object *sk = json_object_object_get(sm, "stacks");
	struct json_object *home = geta(reg, "begins_in");
	struct json_object *fns = geta(sk, "functions"), *a = geta(sk, "samples");
	size_t nf = fns ? json_object_array_length(fns) : 0, i, k;
	uint64_t *cnt = calloc(nf + 1, sizeof(*cnt)), *seen = calloc(nf + 1, sizeof(*seen));
	uint64_t *self = calloc(nf + 1, sizeof(*self));
	int m = 0;

	for (i = 0; a && cnt && seen && self && i < json_object_array_length(a); i++) {
		struct json_object *x = json_object_array_get_idx(a, i), *st = geta(x, "stack");
		size_t len = st ? json_object_array_length(st) : 0, from = len;

		if (!has_str(geta(x, "regions"), region))
			continue;
		for (k = len; k-- > 0;) {	/* the innermost frame REGION begins in */
			int64_t id = json_object_get_int64(json_object_array_get_idx(st, k));
			struct json_object *fn = NULL;

			if (id >= 0 && (size_t)id < nf)
				fn = json_object_array_get_idx(fns, (size_t)id);
			if (fn && getn(home, gets_(fn, "name"))) {
				from = k + 1;
				break;
			}
		}
		for (k = from; k < len; k++) {
			int64_t id = json_object_get_int64(json_object_array_get_idx(st, k));

			if (id < 0 || (size_t)id >= nf || seen[id] == i + 1)
				continue;
			seen[id] = i + 1;
			cnt[id] += (uint64_t)geti(x, "samples");
		}
		for (k = len; k-- > from;) {	/* self: the innermost frame not inlined */
			int64_t id = json_object_get_int64(json_object_array_get_idx(st, k));
			struct json_object *il, *fn;

			if (id < 0 || (size_t)id >= nf)
				break;
			fn = json_object_array_get_idx(fns, (size_t)id);
			if (json_object_object_get_ex(fn, "inlined", &il) &&
			    json_object_get_boolean(il))
				continue;
			self[id] += (uint64_t)geti(x, "samples");
			break;
		}
	}
	/* 1% of the region's samples at least: below, its self time is noise */
	m = cnt && self ? pick(fns, nf, cnt, self, (uint64_t)geti(reg, "samples") / 100 + 1,
				f, n)
			: 0;
	free(cnt);
	free(seen);
	free(self);
	return m;
}

/* The position of f's region on path p after position from, or -1. */
static int find_fn(struct json_object *p, size_t from, const struct fnc *f)
{
	char alt[600];
	size_t k;

	snprintf(alt, sizeof(alt), "%.255s:%.255s", f->object, f->sym);	/* named apart */
	for (k = from; k < json_object_array_length(p); k++) {
		const char *e = json_object_get_string(json_object_array_get_idx(p, k));

		if (!strcmp(e, f->sym) || !strcmp(e, alt))
			return (int)k;
	}
	return -1;
}

/* The paths of a stats reply by their names joined, for the difference of two. */
static struct json_object *path_of(struct json_object *st, struct json_object *path)
{
	const char *want = json_object_to_json_string(path);
	struct json_object *a = geta(st, "paths");
	size_t k;

	for (k = 0; a && k < json_object_array_length(a); k++) {
		struct json_object *x = json_object_array_get_idx(a, k);

		if (!strcmp(json_object_to_json_string(geta(x, "path")), want))
			return x;
	}
	return NULL;
}

/* The figures of REGION's paths between stats a and b, into f and region/remainder. */
static double reg_cpu, rem_cpu;	/* REGION's CPU time, and its remainder's */
/* paths[k]: REGION's paths function k is on; under[k][j]: those with j before k */
static int paths_of[DRILL_MAX], under[DRILL_MAX][DRILL_MAX];

/*
 * A function every path of which runs inside another (k only ever called from within j)
 * cannot take longer than it: where compensation's error says otherwise (each trap pair's
 * cost removed has its spread, and k's pairs are inside j's), k is held to j's time.
 */
static void clamp_children(struct fnc *f, int n)
{
	int j, k;

	for (k = 0; k < n; k++)
		for (j = 0; j < n; j++)
			if (j != k && paths_of[k] && under[k][j] == paths_of[k] &&
			    f[k].incl > f[j].incl) {
				f[k].incl = f[j].incl;
				f[k].excl = f[k].excl < f[k].incl ? f[k].excl : f[k].incl;
				f[k].clamped = 1;
			}
}

static void timed(struct json_object *a, struct json_object *b, const char *region,
		  struct fnc *f, int n, double *reg_ns, double *rem_ns, double *reg_unc,
		  uint64_t *reg_count)
{
	struct json_object *paths = geta(b, "paths");
	size_t k, r;
	int j;

	*reg_ns = *rem_ns = *reg_unc = 0;
	*reg_count = 0;
	reg_cpu = rem_cpu = 0;
	memset(paths_of, 0, sizeof(paths_of));
	memset(under, 0, sizeof(under));
	for (k = 0; paths && k < json_object_array_length(paths); k++) {
		struct json_object *x = json_object_array_get_idx(paths, k), *p = geta(x, "path");
		struct json_object *old = path_of(a, p);
		double ns = getd(x, "ns") - (old ? getd(old, "ns") : 0);
		double unc = getd(x, "uncertainty_ns") - (old ? getd(old, "uncertainty_ns") : 0);
		double cpu = getd(x, "cpu_ns") - (old ? getd(old, "cpu_ns") : 0);
		uint64_t cnt = (uint64_t)(geti(x, "count") - (old ? geti(old, "count") : 0));
		size_t len = p ? json_object_array_length(p) : 0;
		int inside = 0;

		for (r = 0; r < len; r++) {
			const char *e = json_object_get_string(json_object_array_get_idx(p, r));

			if (!strcmp(e, region))
				break;
		}
		if (r == len)
			continue;	/* REGION is not open on it */
		*reg_ns += ns;
		reg_cpu += cpu;
		*reg_unc += unc > 0 ? unc : 0;
		if (r == len - 1)
			*reg_count += cnt;
		for (j = 0; j < n; j++) {
			int at = find_fn(p, r + 1, &f[j]), i;

			if (at < 0)
				continue;
			paths_of[j]++;
			for (i = 0; i < n; i++) {
				int o = i == j ? -1 : find_fn(p, r + 1, &f[i]);

				under[j][i] += o >= 0 && o < at;
			}
			inside = 1;
			f[j].incl += ns;
			f[j].incl_cpu += cpu;
			f[j].unc += unc > 0 ? unc : 0;
			if (at == (int)len - 1) {
				f[j].excl += ns;
				f[j].calls += cnt;
			}
		}
		if (!inside) {
			*rem_ns += ns;
			rem_cpu += cpu;
		}
	}
	clamp_children(f, n);
}

/*
 * Enables (on) or disables the drill's functions f[j] with use[j] (NULL: all) and, where
 * asked, REGION: 0 or 1. The definitions sent are always all n candidates' (one feature,
 * FEATURE), so that the probe's and the timing's are the same; the regions enabled are
 * those used, by name.
 */
static int toggle(long pid, const char *region, const char *feature, const struct fnc *f,
		  int n, const int *use, int on, int with_region)
{
	struct json_object *req = json_object_new_object(), *names = json_object_new_array();
	struct json_object *res, *defs = NULL;
	struct cli_opts o = { 0 };
	char arg[16384];
	size_t len;
	int j;

	if (!n) {	/* REGION alone */
		json_object_put(req);
		json_object_put(names);
		goto region;
	}
	len = (size_t)snprintf(arg, sizeof(arg), "%s=", feature);
	for (j = 0; j < n && len < sizeof(arg); j++)
		len += (size_t)snprintf(arg + len, sizeof(arg) - len, "%s%s:%s", j ? "," : "",
					f[j].object, f[j].sym);
	if (on && (cli_add_function(&o, "drill", arg) || cli_request_defs(&o, &defs))) {
		cli_opts_free(&o);
		json_object_put(req);
		json_object_put(names);
		return 1;
	}
	cli_opts_free(&o);
	for (j = 0; j < n; j++)
		if (!use || use[j])
			json_object_array_add(names, json_object_new_string(f[j].sym));
	json_object_object_add(req, "regions", names);
	if (defs)
		json_object_object_add(req, "definitions", defs);
	/* held: featprofd disables them if drill ends before it does (Ctrl-C, a kill) */
	res = client_request_held("drill", on ? "enable" : "disable", pid, req, on);
	if (!res)
		return 1;
	json_object_put(res);
	if (!with_region)
		return 0;
region:
	req = json_object_new_object();
	names = json_object_new_array();
	json_object_array_add(names, json_object_new_string(region));
	json_object_object_add(req, "regions", names);
	if (on)	/* by traps also in an in-process build: the functions nest under it */
		json_object_object_add(req, "trap", json_object_new_boolean(1));
	res = client_request_held("drill", on ? "enable" : "disable", pid, req, on);
	json_object_put(res);
	return res ? 0 : 1;
}

/* A figure's change between stats a and b of region name (NULL: none). */
static double delta(struct json_object *a, struct json_object *b, const char *name,
		    const char *key)
{
	struct json_object *x = getn(geta(a, "regions"), name);
	struct json_object *y = getn(geta(b, "regions"), name);

	return y ? getd(y, key) - (x ? getd(x, key) : 0) : 0;
}

#define PROBE_MS 300

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

/*
 * Before timing: every candidate traced for PROBE_MS, which gives its calls inside
 * REGION and what one call's trap pair costs (the probe time compensation removed from
 * its region, per call): its traps would cost REGION calls x pair over REGION's time
 * (inst_ns: an instance's, as the sampling measured it; 0: unknown).
 * Those over max (a fraction) are marked sampled: their sampled figures are given
 * instead; so are those whose time the probe could not tell from its stated
 * uncertainty (calls far shorter than a trap pair's spread). 0, or 1 after a line.
 */
static int probe(long pid, const char *region, const char *feature, struct fnc *f, int n,
		 double max, double inst_ns)
{
	static struct fnc g[DRILL_MAX];
	struct json_object *a, *b;
	double reg_ns, rem_ns, reg_unc, comp, calls;
	uint64_t cnt;
	int j;

	if (toggle(pid, region, feature, f, n, NULL, 1, 0))
		return 1;
	a = client_request("drill", "stats", pid, NULL);
	pause_ms(PROBE_MS);
	b = client_request("drill", "stats", pid, NULL);
	toggle(pid, region, feature, f, n, NULL, 0, 0);
	if (!a || !b) {
		json_object_put(a);
		json_object_put(b);
		return 1;
	}
	memcpy(g, f, (size_t)n * sizeof(*g));
	timed(a, b, region, g, n, &reg_ns, &rem_ns, &reg_unc, &cnt);
	for (j = 0; j < n; j++) {
		int k;

		/* what compensation removed from it, less its callees' (their pairs ran
		 * inside it): its own pairs */
		comp = delta(a, b, f[j].sym, "raw_inclusive_ns") -
		       delta(a, b, f[j].sym, "inclusive_ns");
		for (k = 0; k < n; k++)
			if (k != j && paths_of[k] && under[k][j] == paths_of[k])
				comp -= delta(a, b, f[k].sym, "raw_inclusive_ns") -
					delta(a, b, f[k].sym, "inclusive_ns");
		calls = delta(a, b, f[j].sym, "count");
		/* calls a second of the region's own time: per instance of it over an
		 * instance's time in the sampling (the traps slowed the program meanwhile,
		 * and compensating thousands of pairs a millisecond is not exact), else
		 * over the probe's compensated time */
		if (cnt > 0 && inst_ns > 0)
			f[j].rate = (double)g[j].calls / (double)cnt / inst_ns * 1e9;
		else
			f[j].rate = reg_ns > 0 ? (double)g[j].calls / reg_ns * 1e9
				    : g[j].calls ? 1e9 : 0;
		f[j].pair_ns = calls > 0 && comp > 0 ? comp / calls : 0;
		f[j].overhead = f[j].rate * f[j].pair_ns / 1e9;
		f[j].sampled = f[j].overhead > max ? 1 : g[j].unc >= g[j].incl ? 2 : 0;
		if (!strcmp(gets_(getn(geta(b, "regions"), f[j].sym), "measured"), "calls")) {
			/* counted in the whole process, over REGION's time */
			f[j].rate = reg_ns > 0 ? calls / reg_ns * 1e9 : 0;
			f[j].sampled = 3;
		}
	}
	json_object_put(a);
	json_object_put(b);
	return 0;
}

static long long win[2];	/* CLOCK_MONOTONIC ns: the timing began after, ended before */

/* What drill found: REGION's figures over the timing window and the slowdown. */
struct drill_res {
	double reg_ns, rem_ns, reg_unc, slowdown;	/* slowdown < -1: not measured */
	uint64_t reg_count, reg_samples;
	long secs;
	double max;
};

static void fn_json(struct json_object *a, const struct fnc *f, const struct drill_res *d)
{
	struct json_object *x = json_object_new_object();

	json_object_object_add(x, "name", json_object_new_string(f->name));
	if (strcmp(f->sym, f->name))
		json_object_object_add(x, "symbol", json_object_new_string(f->sym));
	json_object_object_add(x, "object", json_object_new_string(f->object));
	json_object_object_add(x, "how", json_object_new_string(f->sampled ? "sampled"
									    : "timed"));
	json_object_object_add(x, "sampled", json_object_new_int64((int64_t)f->samples));
	json_object_object_add(x, "self_samples", json_object_new_int64((int64_t)f->self));
	json_object_object_add(x, "calls_per_region_s", json_object_new_double(f->rate));
	json_object_object_add(x, "trap_pair_ns", json_object_new_double(f->pair_ns));
	json_object_object_add(x, "trap_overhead", json_object_new_double(f->overhead));
	json_object_object_add(x, "calls", json_object_new_int64((int64_t)f->calls));
	json_object_object_add(x, "inclusive_ns", json_object_new_double(f->incl));
	json_object_object_add(x, "exclusive_ns", json_object_new_double(f->excl));
	json_object_object_add(x, "inclusive_cpu_ns", json_object_new_double(f->incl_cpu));
	json_object_object_add(x, "share", json_object_new_double(
				       d->reg_ns > 0 ? f->incl / d->reg_ns : 0));
	json_object_object_add(x, "uncertainty_ns", json_object_new_double(f->unc));
	json_object_object_add(x, "clamped", json_object_new_boolean(f->clamped));
	json_object_array_add(a, x);
}

static void print_json(const char *region, const struct fnc *f, int n,
		       const struct drill_res *d)
{
	struct json_object *o = json_object_new_object(), *a;
	int j;

	json_object_object_add(o, "region", json_object_new_string(region));
	json_object_object_add(o, "region_ns", json_object_new_double(d->reg_ns));
	json_object_object_add(o, "region_count", json_object_new_int64((int64_t)d->reg_count));
	json_object_object_add(o, "region_uncertainty_ns", json_object_new_double(d->reg_unc));
	json_object_object_add(o, "remainder_ns", json_object_new_double(d->rem_ns));
	json_object_object_add(o, "region_cpu_ns", json_object_new_double(reg_cpu));
	json_object_object_add(o, "remainder_cpu_ns", json_object_new_double(rem_cpu));
	json_object_object_add(o, "duration_s", json_object_new_int64(d->secs));
	json_object_object_add(o, "max_overhead", json_object_new_double(d->max));
	if (d->slowdown >= -1)
		json_object_object_add(o, "slowdown", json_object_new_double(d->slowdown));
	a = json_object_new_array();
	json_object_array_add(a, json_object_new_int64(win[0]));
	json_object_array_add(a, json_object_new_int64(win[1]));
	json_object_object_add(o, "window_ns", a);
	a = json_object_new_array();
	for (j = 0; j < n; j++)
		fn_json(a, &f[j], d);
	json_object_object_add(o, "functions", a);
	cli_cmd_print_json(o);
	json_object_put(o);
}

static void print(long pid, const char *region, const struct fnc *f, int n,
		  const struct drill_res *d)
{
	int j;

	printf("featprof drill: pid %ld, region %s: %.3f ms ± %.3f in %llu instances over %ld s "
	       "(%llu samples chose these functions, by their self time)\n", pid, region,
	       d->reg_ns / 1e6, d->reg_unc / 1e6, (unsigned long long)d->reg_count, d->secs,
	       (unsigned long long)d->reg_samples);
	printf("  %-40s %10s %14s %14s %7s %12s\n", "function (object)", "calls", "inclusive ms",
	       "exclusive ms", "share", "± ms");
	for (j = 0; j < n; j++) {
		char nm[600];
		size_t len;

		snprintf(nm, sizeof(nm), "%.255s (%.255s)", f[j].name, f[j].object);
		if ((len = strlen(nm)) > 40)	/* shortened, with a marker */
			memcpy(nm + 37, "...", 4);
		printf("  %-40s %10llu %14.3f %14.3f %6.1f%% %12.3f%s%s\n", nm,
		       (unsigned long long)f[j].calls, f[j].incl / 1e6, f[j].excl / 1e6,
		       d->reg_ns > 0 ? 100 * f[j].incl / d->reg_ns : 0, f[j].unc / 1e6,
		       f[j].sampled ? "  sampled" : "",
		       f[j].clamped ? "  (held to its caller)" : "");
	}
	printf("  %-40s %10s %14.3f %14s %6.1f%%\n", "(the rest: in no timed function)", "",
	       d->rem_ns / 1e6, "", d->reg_ns > 0 ? 100 * d->rem_ns / d->reg_ns : 0);
	for (j = 0; j < n; j++)
		if (f[j].sampled == 1)
			printf("  sampled, not timed: %s, ~%.0f calls a second of the region at "
			       "%.2f us a trap pair would cost it %.0f%% (over --max-overhead "
			       "%.3g%%): its share of the region's samples, calls estimated\n",
			       f[j].name, f[j].rate, f[j].pair_ns / 1e3, 100 * f[j].overhead,
			       100 * d->max);
		else if (f[j].sampled == 2)
			printf("  sampled, not timed: %s, ~%.0f calls a second of the region, "
			       "each too short to time by traps (its stated uncertainty would "
			       "exceed its time): its share of the region's samples, calls "
			       "estimated\n",
			       f[j].name, f[j].rate);
		else if (f[j].sampled == 3)
			printf("  sampled, not timed: %s, C++ code: its calls counted (~%.0f a "
			       "second of the region, in the whole process), not timed (an "
			       "exception must not meet a return probe): its share of the "
			       "region's samples\n",
			       f[j].name, f[j].rate);
	if (d->slowdown >= -1)
		printf("  the target's slowdown while timing: %+.1f%% (the region's instances' "
		       "raw time against the sampling's)\n", 100 * d->slowdown);
	else
		printf("  the target's slowdown while timing: not measured (too few instances "
		       "of the region ended)\n");
}

/* REGION's raw (uncompensated) time per instance between stats a and b; 0 if fewer
 * than 3 instances ended. */
static double raw_mean(struct json_object *a, struct json_object *b, const char *region)
{
	double c = delta(a, b, region, "count");

	return c >= 3 ? delta(a, b, region, "raw_inclusive_ns") / c : 0;
}

/* REGION's compensated time per instance in stats st (deltas: the sampling's); 0 if
 * fewer than 3 ended. */
static double inst_ns(struct json_object *st, const char *region)
{
	struct json_object *r = getn(geta(st, "regions"), region);

	return r && getd(r, "count") >= 3 ? getd(r, "inclusive_ns") / getd(r, "count") : 0;
}

/* The sampled functions' figures from their shares of REGION's samples. */
static void fill_sampled(struct fnc *f, int n, const struct drill_res *d)
{
	double N = (double)d->reg_samples;
	int j;

	for (j = 0; j < n && N > 0; j++) {
		double pi = (double)f[j].samples / N, ps = (double)f[j].self / N;

		if (!f[j].sampled)
			continue;
		f[j].incl = pi * d->reg_ns;
		f[j].excl = ps * d->reg_ns;
		f[j].unc = sqrt(pi * (1 - pi) / N) * d->reg_ns;
		f[j].calls = (uint64_t)(f[j].rate * d->reg_ns / 1e9);
	}
}

/* The timing step: functions not sampled timed as function regions for secs, the
 * figures into f and d. 0 or 1 (said). */
static int timing(long pid, const char *region, const char *feature, struct fnc *f, int n,
		  int traced, struct json_object *before, struct drill_res *d)
{
	struct json_object *a, *b;
	struct timespec w0, w1;
	int use[DRILL_MAX], j, nt = 0;
	double r0, r1;

	for (j = 0; j < n; j++)
		nt += use[j] = !f[j].sampled;
	if (nt && toggle(pid, region, feature, f, n, use, 1, 0))
		return 1;
	a = client_request("drill", "stats", pid, NULL);
	clock_gettime(CLOCK_MONOTONIC, &w0);
	pause_s(d->secs, "timing the functions");
	clock_gettime(CLOCK_MONOTONIC, &w1);
	b = client_request("drill", "stats", pid, NULL);
	if (nt)
		toggle(pid, region, feature, f, n, use, 0, 0);
	if (!traced)
		toggle(pid, region, feature, f, 0, NULL, 0, 1);
	if (!a || !b) {
		json_object_put(a);
		json_object_put(b);
		return 1;
	}
	timed(a, b, region, f, n, &d->reg_ns, &d->rem_ns, &d->reg_unc, &d->reg_count);
	r0 = before ? raw_mean(NULL, before, region) : 0;	/* before: deltas */
	r1 = raw_mean(a, b, region);
	d->slowdown = r0 > 0 && r1 > 0 ? r1 / r0 - 1 : -2;
	json_object_put(a);
	json_object_put(b);
	win[0] = w0.tv_sec * 1000000000LL + w0.tv_nsec;
	win[1] = w1.tv_sec * 1000000000LL + w1.tv_nsec;
	return 0;
}

/* REGION's stats (the reply, a new reference) and whether it is traced already; NULL
 * after a line (no such region, or one timed in the process). */
static struct json_object *check_region(long pid, const char *region, int *traced)
{
	struct json_object *a = client_request("drill", "attach", pid, NULL), *reg;

	json_object_put(a);	/* a no-op when attached */
	a = a ? client_request("drill", "stats", pid, NULL) : NULL;
	if (!a)
		return NULL;
	reg = getn(geta(a, "regions"), region);
	*traced = reg && json_object_get_boolean(json_object_object_get(reg, "enabled"));
	if (!reg || !strcmp(gets_(reg, "measured"), "in-process")) {
		/* function regions are traps: their paths nest only under traced regions */
		fprintf(stderr, "featprof drill: pid %ld: %s\n", pid, reg
			? "the region is timed in the process, and the functions drill times by "
			  "traps nest only under traced regions: featprof disable it, then drill "
			  "(it traces the region itself)"
			: "no region of that name (featprof list PID)");
		json_object_put(a);
		return NULL;
	}
	return a;
}

int cmd_drill(int argc, char **argv)
{
	struct json_object *sm, *reg, *s0, *s1 = NULL;
	static struct fnc f[DRILL_MAX];
	struct drill_res d = { .slowdown = -2 };
	struct cli_opts o;
	char feature[300];
	long pid = 0, top;
	int rc = cli_parse(argc, argv, O_TOP | O_DURATION | O_JSON | O_UNWIND | O_MAX_OVERHEAD,
			   &o), n, traced;

	if (rc || o.npos != 2 || parse_pid(o.pos[0], &pid)) {
		if (!rc && o.npos >= 1 && parse_pid(o.pos[0], &pid))
			fprintf(stderr, "featprof drill: not a pid: '%s'\n", o.pos[0]);
		fprintf(rc == 1 ? stdout : stderr, "usage: featprof drill PID REGION [--top N] "
			"[--duration S] [--max-overhead PCT] [--unwind fp|dwarf] [--json]   "
			"(default 5, 5 s, 5%%)\n");
		return rc == 1 ? 0 : 2;
	}
	d.secs = o.duration ? o.duration : 5;
	d.max = (o.max_overhead > 0 ? o.max_overhead : 5) / 100;
	top = o.top ? (o.top < DRILL_MAX ? o.top : DRILL_MAX) : 5;
	memset(f, 0, sizeof(f));
	snprintf(feature, sizeof(feature), "drill-%s", o.pos[1]);
	if (!(s0 = check_region(pid, o.pos[1], &traced)))
		return 1;
	json_object_put(s0);
	/* REGION traced while drilling (a default build's samples need it open in the
	 * kernel's thread state; the timing needs it anyway) */
	if (!traced && toggle(pid, o.pos[1], feature, f, 0, NULL, 1, 1))
		return 1;
	s0 = client_request("drill", "stats", pid, NULL);
	sm = sample(pid, d.secs, o.unwind, &s1);
	reg = sm ? getn(json_object_object_get(sm, "regions"), o.pos[1]) : NULL;
	d.reg_samples = (uint64_t)geti(reg, "samples");
	n = reg ? candidates(sm, o.pos[1], f, (int)top) : 0;
	json_object_put(sm);
	/* the sampling's raw time per instance, against which the timing's slowdown is said */
	if (s0 && s1 && getn(geta(s1, "regions"), o.pos[1])) {
		struct json_object *x = getn(geta(s0, "regions"), o.pos[1]);
		struct json_object *y = getn(geta(s1, "regions"), o.pos[1]);

		json_object_object_add(y, "count", json_object_new_double(getd(y, "count") -
									   getd(x, "count")));
		json_object_object_add(y, "raw_inclusive_ns", json_object_new_double(
					       getd(y, "raw_inclusive_ns") -
					       getd(x, "raw_inclusive_ns")));
		json_object_object_add(y, "inclusive_ns", json_object_new_double(
					       getd(y, "inclusive_ns") - getd(x, "inclusive_ns")));
	}
	if (!n || probe(pid, o.pos[1], feature, f, n, d.max, inst_ns(s1, o.pos[1]))) {
		if (sm && !n)
			fprintf(stderr, "featprof drill: pid %ld: %s: %s in %ld s\n", pid, o.pos[1],
				d.reg_samples ? "no function below the one it begins in was "
				"sampled inside it" : "no sample fell inside it", d.secs);
		if (!traced)
			toggle(pid, o.pos[1], feature, f, 0, NULL, 0, 1);
		json_object_put(s0);
		json_object_put(s1);
		return 1;
	}
	json_object_put(s0);
	rc = timing(pid, o.pos[1], feature, f, n, traced, s1, &d);
	json_object_put(s1);
	if (rc)
		return 1;
	fill_sampled(f, n, &d);
	if (o.json)
		print_json(o.pos[1], f, n, &d);
	else
		print(pid, o.pos[1], f, n, &d);
	return 0;
}
