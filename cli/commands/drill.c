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
	uint64_t samples;
	/* timed */
	double incl, excl, unc, incl_cpu;
	uint64_t calls;
};

static void pause_s(long secs)
{
	struct timespec ts = { secs, 0 };

	while (nanosleep(&ts, &ts))
		;
}

static struct json_object *by_name(struct json_object *a, const char *name)
{
	size_t k;

	for (k = 0; a && k < json_object_array_length(a); k++)
		if (!strcmp(gets_(json_object_array_get_idx(a, k), "name"), name))
			return json_object_array_get_idx(a, k);
	return NULL;
}

static int has_str(struct json_object *a, const char *s)
{
	size_t k;

	for (k = 0; a && k < json_object_array_length(a); k++)
		if (!strcmp(json_object_get_string(json_object_array_get_idx(a, k)), s))
			return 1;
	return 0;
}

/* Sampling with stacks for secs: the sampling report (a new reference) or NULL. */
static struct json_object *sample(long pid, long secs, const char *unwind)
{
	struct json_object *req = json_object_new_object(), *st, *sm = NULL;

	json_object_object_add(req, "hz", json_object_new_int(FP_DEFAULT_HZ));
	json_object_object_add(req, "stacks", json_object_new_boolean(1));
	if (unwind)
		json_object_object_add(req, "unwind", json_object_new_string(unwind));
	st = client_request("drill", "sample", pid, req);
	if (!st)
		return NULL;
	json_object_put(st);
	pause_s(secs);
	st = client_request("drill", "stats", pid, NULL);
	req = json_object_new_object();
	json_object_object_add(req, "on", json_object_new_boolean(0));
	json_object_put(client_request("drill", "sample", pid, req));
	if (st && json_object_object_get_ex(st, "sampling", &sm))
		json_object_get(sm);
	json_object_put(st);
	return sm;
}

/*
 * The functions below the one REGION begins in, in REGION's sampled stacks, counted once
 * per stack: the top n into f (sorted by samples). Their number.
 */
static int candidates(struct json_object *sm, const char *region, struct fnc *f, int n)
{
	struct json_object *reg = by_name(json_object_object_get(sm, "regions"), region);
	struct json_object *sk = json_object_object_get(sm, "stacks");
	struct json_object *home = geta(reg, "begins_in");
	struct json_object *fns = geta(sk, "functions"), *a = geta(sk, "samples");
	size_t nf = fns ? json_object_array_length(fns) : 0, i, k;
	uint64_t *cnt = calloc(nf + 1, sizeof(*cnt)), *seen = calloc(nf + 1, sizeof(*seen));
	int m = 0, j;

	for (i = 0; a && cnt && seen && i < json_object_array_length(a); i++) {
		struct json_object *x = json_object_array_get_idx(a, i), *st = geta(x, "stack");
		size_t len = st ? json_object_array_length(st) : 0, from = len;

		if (!has_str(geta(x, "regions"), region))
			continue;
		for (k = len; k-- > 0;) {	/* the innermost frame REGION begins in */
			int64_t id = json_object_get_int64(json_object_array_get_idx(st, k));
			struct json_object *fn = NULL;

			if (id >= 0 && (size_t)id < nf)
				fn = json_object_array_get_idx(fns, (size_t)id);
			if (fn && by_name(home, gets_(fn, "name"))) {
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
	}
	for (j = 0; j < n && cnt; j++) {	/* the n largest, a pass each */
		size_t best = nf;

		for (k = 0; k < nf; k++) {
			struct json_object *fk = json_object_array_get_idx(fns, k), *il;
			const char *nm = gets_(fk, "name");

			/* a name no symbol gave ("obj+0x..", "[vdso]") cannot be a region, nor
			 * a call the compiler inlined (no entry to probe) */
			if (json_object_object_get_ex(fk, "inlined", &il) &&
			    json_object_get_boolean(il))
				continue;
			if (cnt[k] && nm[0] != '[' && !strstr(nm, "+0x") &&
			    (best == nf || cnt[k] > cnt[best]))
				best = k;
		}
		if (best == nf)
			break;
		snprintf(f[m].name, sizeof(f[m].name), "%s",
			 gets_(json_object_array_get_idx(fns, best), "name"));
		snprintf(f[m].object, sizeof(f[m].object), "%s",
			 gets_(json_object_array_get_idx(fns, best), "object"));
		f[m++].samples = cnt[best];
		cnt[best] = 0;
	}
	free(cnt);
	free(seen);
	return m;
}

/* The position of f's region on path p after position from, or -1. */
static int find_fn(struct json_object *p, size_t from, const struct fnc *f)
{
	char alt[600];
	size_t k;

	snprintf(alt, sizeof(alt), "%.255s:%.255s", f->object, f->name);	/* named apart */
	for (k = from; k < json_object_array_length(p); k++) {
		const char *e = json_object_get_string(json_object_array_get_idx(p, k));

		if (!strcmp(e, f->name) || !strcmp(e, alt))
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

static void timed(struct json_object *a, struct json_object *b, const char *region,
		  struct fnc *f, int n, double *reg_ns, double *rem_ns, double *reg_unc,
		  uint64_t *reg_count)
{
	struct json_object *paths = geta(b, "paths");
	size_t k, r;
	int j;

	*reg_ns = *rem_ns = *reg_unc = 0;
	*reg_count = 0;
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
			int at = find_fn(p, r + 1, &f[j]);

			if (at < 0)
				continue;
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
}

/* Enables (on) or disables the drill's functions and, where asked, REGION: 0 or 1. */
static int toggle(long pid, const char *region, const char *feature, const struct fnc *f,
		  int n, int on, int with_region)
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
					f[j].object, f[j].name);
	if (on && (cli_add_function(&o, "drill", arg) || cli_request_defs(&o, &defs))) {
		cli_opts_free(&o);
		json_object_put(req);
		json_object_put(names);
		return 1;
	}
	cli_opts_free(&o);
	json_object_array_add(names, json_object_new_string(feature));
	json_object_object_add(req, "features", names);
	if (defs)
		json_object_object_add(req, "definitions", defs);
	res = client_request("drill", on ? "enable" : "disable", pid, req);
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
	res = client_request("drill", on ? "enable" : "disable", pid, req);
	json_object_put(res);
	return res ? 0 : 1;
}

static long long win[2];	/* CLOCK_MONOTONIC ns: the timing began after, ended before */

static void print(long pid, const char *region, const struct fnc *f, int n, double reg_ns,
		  double rem_ns, double reg_unc, uint64_t reg_count, uint64_t reg_samples,
		  long secs, int json)
{
	struct json_object *o, *a;
	int j;

	if (json) {
		o = json_object_new_object();
		json_object_object_add(o, "region", json_object_new_string(region));
		json_object_object_add(o, "region_ns", json_object_new_double(reg_ns));
		json_object_object_add(o, "region_count", json_object_new_int64(
					       (int64_t)reg_count));
		json_object_object_add(o, "region_uncertainty_ns", json_object_new_double(
					       reg_unc));
		json_object_object_add(o, "remainder_ns", json_object_new_double(rem_ns));
		json_object_object_add(o, "region_cpu_ns", json_object_new_double(reg_cpu));
		json_object_object_add(o, "remainder_cpu_ns", json_object_new_double(rem_cpu));
		json_object_object_add(o, "duration_s", json_object_new_int64(secs));
		a = json_object_new_array();
		json_object_array_add(a, json_object_new_int64(win[0]));
		json_object_array_add(a, json_object_new_int64(win[1]));
		json_object_object_add(o, "window_ns", a);
		a = json_object_new_array();
		for (j = 0; j < n; j++) {
			struct json_object *x = json_object_new_object();

			json_object_object_add(x, "name", json_object_new_string(f[j].name));
			json_object_object_add(x, "object", json_object_new_string(f[j].object));
			json_object_object_add(x, "sampled", json_object_new_int64(
						       (int64_t)f[j].samples));
			json_object_object_add(x, "calls", json_object_new_int64(
						       (int64_t)f[j].calls));
			json_object_object_add(x, "inclusive_ns",
					       json_object_new_double(f[j].incl));
			json_object_object_add(x, "exclusive_ns",
					       json_object_new_double(f[j].excl));
			json_object_object_add(x, "inclusive_cpu_ns", json_object_new_double(
						       f[j].incl_cpu));
			json_object_object_add(x, "share", json_object_new_double(
						       reg_ns > 0 ? f[j].incl / reg_ns : 0));
			json_object_object_add(x, "uncertainty_ns", json_object_new_double(
						       f[j].unc));
			json_object_array_add(a, x);
		}
		json_object_object_add(o, "functions", a);
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
		return;
	}
	printf("featprof drill: pid %ld, region %s: %.3f ms ± %.3f in %llu instances over %ld s "
	       "(%llu samples chose these functions)\n", pid, region, reg_ns / 1e6, reg_unc / 1e6,
	       (unsigned long long)reg_count, secs, (unsigned long long)reg_samples);
	printf("  %-32s %10s %14s %14s %7s %12s\n", "function (object)", "calls", "inclusive ms",
	       "exclusive ms", "share", "± ms");
	for (j = 0; j < n; j++) {
		char nm[600];

		snprintf(nm, sizeof(nm), "%.255s (%.255s)", f[j].name, f[j].object);
		printf("  %-32.32s %10llu %14.3f %14.3f %6.1f%% %12.3f\n", nm,
		       (unsigned long long)f[j].calls, f[j].incl / 1e6, f[j].excl / 1e6,
		       reg_ns > 0 ? 100 * f[j].incl / reg_ns : 0, f[j].unc / 1e6);
	}
	printf("  %-32s %10s %14.3f %14s %6.1f%%\n", "(the rest of the region)", "", rem_ns / 1e6,
	       "", reg_ns > 0 ? 100 * rem_ns / reg_ns : 0);
}

int cmd_drill(int argc, char **argv)
{
	struct json_object *sm, *a, *b, *reg;
	struct fnc f[DRILL_MAX];
	struct timespec w0, w1;	/* the timing's window, within the two stats */
	struct cli_opts o;
	char feature[300];
	double reg_ns, rem_ns, reg_unc;
	uint64_t reg_count, reg_samples;
	long pid = 0, secs, top;
	int rc = cli_parse(argc, argv, O_TOP | O_DURATION | O_JSON | O_UNWIND, &o), n, traced;

	if (rc || o.npos != 2 || parse_pid(o.pos[0], &pid)) {
		if (!rc && o.npos >= 1 && parse_pid(o.pos[0], &pid))
			fprintf(stderr, "featprof drill: not a pid: '%s'\n", o.pos[0]);
		fprintf(rc == 1 ? stdout : stderr, "usage: featprof drill PID REGION [--top N] "
			"[--duration S] [--unwind fp|dwarf] [--json]   (default 5, 5 s)\n");
		return rc == 1 ? 0 : 2;
	}
	secs = o.duration ? o.duration : 5;
	top = o.top ? (o.top < DRILL_MAX ? o.top : DRILL_MAX) : 5;
	memset(f, 0, sizeof(f));
	snprintf(feature, sizeof(feature), "drill-%s", o.pos[1]);
	a = client_request("drill", "attach", pid, NULL);	/* no-op when attached */
	json_object_put(a);
	a = a ? client_request("drill", "stats", pid, NULL) : NULL;
	if (!a)
		return 1;
	reg = by_name(geta(a, "regions"), o.pos[1]);
	traced = reg && json_object_get_boolean(json_object_object_get(reg, "enabled"));
	if (!reg || !strcmp(gets_(reg, "measured"), "in-process")) {
		/* function regions are traps: their paths nest only under traced regions */
		fprintf(stderr, "featprof drill: pid %ld: %s\n", pid, reg
			? "the region is timed in the process, and the functions drill times by "
			  "traps nest only under traced regions: featprof disable it, then drill "
			  "(it traces the region itself)"
			: "no region of that name (featprof list PID)");
		json_object_put(a);
		return 1;
	}
	json_object_put(a);
	/* REGION traced while drilling (a default build's samples need it open in the
	 * kernel's thread state; the timing needs it anyway) */
	if (!traced && toggle(pid, o.pos[1], feature, f, 0, 1, 1))
		return 1;
	sm = sample(pid, secs, o.unwind);
	reg = sm ? by_name(json_object_object_get(sm, "regions"), o.pos[1]) : NULL;
	reg_samples = (uint64_t)geti(reg, "samples");
	n = reg ? candidates(sm, o.pos[1], f, (int)top) : 0;
	json_object_put(sm);
	if (!n) {
		if (sm)
			fprintf(stderr, "featprof drill: pid %ld: %s: %s in %ld s\n", pid, o.pos[1],
				reg_samples ? "no function below the one it begins in was "
				"sampled inside it" : "no sample fell inside it", secs);
		if (!traced)
			toggle(pid, o.pos[1], feature, f, 0, 0, 1);
		return 1;
	}
	if (toggle(pid, o.pos[1], feature, f, n, 1, 0))
		return 1;
	a = client_request("drill", "stats", pid, NULL);
	clock_gettime(CLOCK_MONOTONIC, &w0);
	pause_s(secs);
	clock_gettime(CLOCK_MONOTONIC, &w1);
	b = client_request("drill", "stats", pid, NULL);
	toggle(pid, o.pos[1], feature, f, n, 0, !traced);
	if (!a || !b) {
		json_object_put(a);
		json_object_put(b);
		return 1;
	}
	timed(a, b, o.pos[1], f, n, &reg_ns, &rem_ns, &reg_unc, &reg_count);
	json_object_put(a);
	json_object_put(b);
	win[0] = w0.tv_sec * 1000000000LL + w0.tv_nsec;
	win[1] = w1.tv_sec * 1000000000LL + w1.tv_nsec;
	print(pid, o.pos[1], f, n, reg_ns, rem_ns, reg_unc, reg_count, reg_samples, secs, o.json);
	return 0;
}
