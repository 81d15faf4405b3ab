// SPDX-License-Identifier: GPL-2.0
/*
 * featprof sample PID|--exe PATH [--hz N] [--duration S] [--remote] [--json]
 *                 [--stacks [--top N] [-o FILE --format folded|pprof]]
 *
 * Samples the target's threads for S seconds (default 10) at N Hz (default 997, prime so
 * that it does not beat with the program's own periods) and prints per feature, feature
 * set and region the sampled CPU time (samples x period) with its standard error, beside
 * the traced CPU time over the same window where the region is also traced (its
 * "window_cpu_ns" in --json: the stats at the end less at the start). Built with
 * FEATPROF_SAMPLING (usdt/featprof.h); no region needs to be enabled. Sampling stops at
 * the end; the figures stay in `featprof stats PID --json` ("sampling", and "samples",
 * "sampled_ns", "sampled_stderr_ns", "measured" in each region and feature).
 * --exe PATH (root): every process of an executable profiled with enable --exe, those
 * that join while sampling included, summed (featprof stats --exe PATH --json).
 * --remote: featprofd's sampler thread reads the running threads' stacks from its own
 * CPU at each tick instead of a cpu-clock event interrupting each thread (docs/TRACING.md
 * says when that is cheaper).
 * --stacks: each sample carries the thread's user call stack too (--unwind dwarf, the
 * default: by the objects' CFI, from a copy of the stack's top; fp: by the kernel's
 * frame-pointer walk, cheaper, right only where every frame keeps one); the table shows,
 * per feature and region, its top N functions (default 5) by total and self share
 * (cli/writers/stacks.c); -o FILE writes the stacks under their regions as folded lines or a
 * pprof profile. The regions open are read from the program's TLS stack where it keeps
 * one, else from the regions featprof enable traces (enable them first).
 */
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/core/core.h"
#include "cli/writers/writers.h"
#include "commands_impl.h"

static const char *exe;	/* --exe PATH: the executable's processes */
static int remote;	/* --remote */
static int stacks;	/* --stacks */
static const char *unwind;	/* --unwind fp|dwarf (else the daemon's default) */
static int split_clones;	/* --split-clones */

static struct json_object *call(const char *verb, long pid, long hz, int on)
{
	struct json_object *req = json_object_new_object();

	if (exe) {
		json_object_object_add(req, "exe", json_object_new_string(exe));
		verb = !strcmp(verb, "stats") ? "exe_stats" : "exe_sample";
	}
	if (hz) {
		json_object_object_add(req, "hz", json_object_new_int64(hz));
		json_object_object_add(req, "on", json_object_new_boolean(on));
		if (on && remote)
			json_object_object_add(req, "remote", json_object_new_boolean(1));
		if (on && stacks)
			json_object_object_add(req, "stacks", json_object_new_boolean(1));
		if (on && unwind)
			json_object_object_add(req, "unwind", json_object_new_string(unwind));
		if (on && split_clones)
			json_object_object_add(req, "split_clones", json_object_new_boolean(1));
	}
	if (!exe && hz)	/* held: featprofd stops sampling that outlives the command */
		return client_request_held("sample", verb, pid, req, on);
	return client_request("sample", verb, pid, req);
}

static void row(const char *kind, const char *name, struct json_object *x, double traced)
{
	char t[32] = "", nm[32];

	if (traced >= 0)
		snprintf(t, sizeof(t), "%12.3f", traced / 1e6);
	snprintf(nm, sizeof(nm), "%s", name);
	if (strlen(name) > 24)
		strcpy(nm + 23, "~");	/* shortened, and marked so */
	printf("%-8s %-24s %8lld %12.3f %10.3f %6.1f%% %12s\n", kind, nm,
	       (long long)geti(x, "samples"), getd(x, "sampled_ns") / 1e6,
	       getd(x, "sampled_stderr_ns") / 1e6, 100 * getd(x, "share"), t);
}

/*
 * The traced CPU time over the sampled window, beside the sampled: each traced region's
 * and feature's cpu_ns at the window's end less at its start (before), into its
 * "window_cpu_ns" (the stats' own figures are since enable or reset).
 */
static void traced_window(struct json_object *st, struct json_object *before)
{
	static const char *const arrs[] = { "regions", "features" };
	size_t i, k;

	for (i = 0; i < 2; i++) {
		struct json_object *a = geta(st, arrs[i]);

		for (k = 0; a && k < json_object_array_length(a); k++) {
			struct json_object *x = json_object_array_get_idx(a, k);
			struct json_object *b = getn(geta(before, arrs[i]), gets_(x, "name"));

			if (strstr(gets_(x, "measured"), "traced"))
				json_object_object_add(x, "window_cpu_ns", json_object_new_double(
					getd(x, "cpu_ns") - (b ? getd(b, "cpu_ns") : 0)));
		}
	}
}

/* The traced CPU time of the named region or feature over the window, -1 when not
 * traced. */
static double traced_cpu(struct json_object *st, const char *arr, const char *name)
{
	struct json_object *x = getn(geta(st, arr), name), *v;

	return x && json_object_object_get_ex(x, "window_cpu_ns", &v)
		       ? json_object_get_double(v) : -1;
}

/* The sampled table: features, sets, the base, regions (beside their traced CPU time in
 * st), anomalies. */
static void print_sampled(struct json_object *st, struct json_object *sm, long pid)
{
	struct json_object *a;
	size_t k;

	if (exe)
		printf("featprof sample: %s, %lld processes (%lld live), summed:\n", exe,
		       (long long)geti(st, "processes_joined"),
		       (long long)geti(st, "processes_live"));
	else
		printf("featprof sample: pid %ld (%s):\n", pid, gets_(st, "comm"));
	printf("%lld samples at %lld Hz (%s, %.3f ms each) over %.1f s", (long long)geti(sm,
	       "samples"), (long long)geti(sm, "hz"), gets_(sm, "clock"),
	       getd(sm, "period_ns") / 1e6, (double)geti(sm, "duration_ns") / 1e9);
	if (!strcmp(gets_(sm, "clock"), "remote"))
		printf("; %lld ticks, %lld passed over%s", (long long)geti(sm, "ticks"),
		       (long long)geti(sm, "ticks_missed"),
		       json_object_get_boolean(json_object_object_get(sm, "sampler_realtime"))
			       ? "" : "; sampler not realtime");
	printf("\n");
	printf("%-8s %-24s %8s %12s %10s %7s %12s\n", "", "name", "samples", "CPU ms",
	       "± ms (SE)", "share", "traced CPU ms");	/* both over the window */
	for (a = geta(sm, "features"), k = 0; a && k < json_object_array_length(a); k++) {
		struct json_object *x = json_object_array_get_idx(a, k);

		row("feature", gets_(x, "name"), x, traced_cpu(st, "features", gets_(x, "name")));
	}
	for (a = geta(sm, "feature_sets"), k = 0; a && k < json_object_array_length(a); k++) {
		struct json_object *x = json_object_array_get_idx(a, k), *fl = geta(x, "features");
		char name[256] = "";
		size_t j, len = 0;

		for (j = 0; fl && j < json_object_array_length(fl) && len < sizeof(name); j++)
			len += (size_t)snprintf(
				name + len, sizeof(name) - len, "%s%s", j ? "+" : "",
				json_object_get_string(json_object_array_get_idx(fl, j)));
		row("set", name, x, -1);
	}
	row("base", "(no region open)", json_object_object_get(sm, "base"), -1);
	for (a = geta(sm, "regions"), k = 0; a && k < json_object_array_length(a); k++) {
		struct json_object *x = json_object_array_get_idx(a, k);

		if (geti(x, "samples"))
			row("region", gets_(x, "name"), x,
			    traced_cpu(st, "regions", gets_(x, "name")));
	}
	a = json_object_object_get(sm, "anomalies");
	printf("anomalies: read_failed %lld, bad_magic %lld, unknown_region %lld, "
	       "deeper_than_stored %lld, stacks_full %lld, unmatched_ends %lld\n",
	       (long long)geti(a, "read_failed"), (long long)geti(a, "bad_magic"),
	       (long long)geti(a, "unknown_region"), (long long)geti(a, "deeper_than_stored"),
	       (long long)geti(a, "stacks_full"), (long long)geti(a, "unmatched_ends"));
	if (geti(sm, "probe_samples") > 0)	/* regions traced meanwhile */
		printf("probe handling: %lld samples (%.1f ms) in featprofd's uprobes of the "
		       "regions traced meanwhile, left out of the figures above\n",
		       (long long)geti(sm, "probe_samples"), getd(sm, "probe_ns") / 1e6);
	if (!strcmp(gets_(sm, "stack"), "gated"))
		printf("stack: gated (FEATPROF_SAMPLING_GATED: kept only while sampled; regions "
		       "open when sampling began are not in it, their ends are unmatched_ends)\n");
}

/* The options that go together: 0, or 1 (said). */
static int check_opts(const struct cli_opts *o)
{
	const char *why = !o->stacks && (o->top || o->output || o->format)
				  ? "--top, -o and --format go with --stacks"
			  : o->stacks && o->exe ? "--stacks samples one process: give its PID"
			  : !o->output != !o->format ? "-o FILE and --format go together"
						     : NULL;

	if (!why && o->format && strcmp(o->format, "folded") && strcmp(o->format, "pprof")) {
		fprintf(stderr, "featprof sample: unknown format '%s' (folded, pprof)\n",
			o->format);
		return 1;
	}
	if (why)
		fprintf(stderr, "featprof sample: %s\n", why);
	return why != NULL;
}

/* The sampled window: the traced figures at its start, secs seconds (progress on a
 * terminal; Ctrl-C ends it early), the stats at its end with the traced window's figures */
static struct json_object *window(long pid, long secs)
{
	struct json_object *before = call("stats", pid, 0, 0), *st;
	struct timespec ts = { 0, 100000000 };
	long i;

	cli_catch_interrupts();
	for (i = 0; i < secs * 10 && !cli_interrupted; i++) {
		if (i % 10 == 0)
			cli_progress("featprof sample: %ld of %ld s", i / 10, secs);
		nanosleep(&ts, NULL);
	}
	cli_progress_done();
	st = call("stats", pid, 0, 0);
	if (st)
		traced_window(st, before);
	json_object_put(before);
	return st;
}

int cmd_sample(int argc, char **argv)
{
	struct json_object *res, *st, *sm;
	struct cli_opts o;
	long pid = 0, hz, secs;
	int rc = cli_parse(argc, argv, O_HZ | O_DURATION | O_JSON | O_EXE | O_REMOTE |
			   O_SPLIT_CLONES | O_STACKS | O_TOP | O_OUTPUT | O_FORMAT | O_UNWIND, &o);
	char tmp[4200];
	FILE *out = NULL;

	if (rc || o.npos != !o.exe || (!o.exe && parse_pid(o.pos[0], &pid))) {
		if (!rc && o.npos == 1 && !o.exe)
			fprintf(stderr, "featprof sample: not a pid: '%s'\n", o.pos[0]);
		fprintf(rc == 1 ? stdout : stderr, "usage: featprof sample PID|--exe PATH [--hz N] "
			"[--duration S] [--remote] [--json]   (default 997 Hz, 10 s)\n"
			"       featprof sample PID --stacks [--unwind fp|dwarf] [--split-clones] "
			"[--top N] [-o FILE --format folded|pprof] ...\n");
		return rc == 1 ? 0 : 2;
	}
	if (check_opts(&o))
		return 2;
	exe = o.exe;
	remote = o.remote;
	stacks = o.stacks;
	unwind = o.unwind;
	split_clones = o.split_clones;
	if (o.output && !(out = cli_open_tmp(o.output, "sample", tmp, sizeof(tmp))))
		return 1;
	hz = o.hz ? o.hz : FP_DEFAULT_HZ;
	secs = o.duration ? o.duration : 10;
	res = call("sample", pid, hz, 1);
	if (!res) {
		if (out)
			cli_close_tmp(out, tmp, o.output, "sample", 0);
		return 1;
	}
	json_object_put(res);
	st = window(pid, secs);
	res = call("sample", pid, hz, 0);
	json_object_put(res);
	if (!st || !json_object_object_get_ex(st, "sampling", &sm)) {
		if (st)
			fprintf(stderr, "featprof sample: %s: no sampled figures\n",
				exe ? exe : o.pos[0]);
		json_object_put(st);
		if (out)
			cli_close_tmp(out, tmp, o.output, "sample", 0);
		return 1;
	}
	if (out) {
		int err = !strcmp(o.format, "folded")
				  ? cli_write_stacks_folded(out, sm)
				  : cli_write_stacks_pprof(out, sm, pid, geti(sm, "duration_ns"));

		if (cli_close_tmp(out, tmp, o.output, "sample", !err) || err) {
			json_object_put(st);
			return 1;
		}
	}
	if (o.json) {
		cli_cmd_print_json(st);
		json_object_put(st);
		return 0;
	}
	print_sampled(st, sm, pid);
	if (stacks)
		cli_write_stacks_table(sm, o.top ? o.top : 5);
	json_object_put(st);
	return 0;
}
