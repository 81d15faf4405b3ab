// SPDX-License-Identifier: GPL-2.0
/* featprof commands that talk to featprofd. */
#include <json-c/json.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char *fmt_ns(double ns, char *buf, size_t len)
{
	if (ns < 1e3)
		snprintf(buf, len, "%.0f ns", ns);
	else if (ns < 1e6)
		snprintf(buf, len, "%.2f us", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, len, "%.2f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.3f s", ns / 1e9);
	return buf;
}

/* " name=value" for each anomaly counter that is not zero ("none"), then a newline. */
static void print_anomalies(const char *prefix, struct json_object *an)
{
	struct json_object_iterator it = json_object_iter_begin(an), end = json_object_iter_end(an);
	int any = 0;

	printf("%s", prefix);
	for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
		int64_t v = json_object_get_int64(json_object_iter_peek_value(&it));

		if (v) {
			printf(" %s=%lld", json_object_iter_peek_name(&it), (long long)v);
			any = 1;
		}
	}
	printf("%s\n", any ? "" : " none");
}

static void print_json(struct json_object *o)
{
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
}

/* A reply asked for with --json: printed as it is. Exit code 1 when there was none. */
static int json_done(struct json_object *res)
{
	if (!res)
		return 1;
	print_json(res);
	json_object_put(res);
	return 0;
}

/* featprof enable|disable --exe PATH NAME...|--all [--by-region] [--json] */
static int exe_toggle(const struct cli_opts *o, int on)
{
	struct json_object *req, *names = json_object_new_array(), *res;
	int i;

	struct json_object *defs = NULL;

	if (!o->all && !o->npos && !o->nfunc) {
		json_object_put(names);
		fprintf(stderr, "usage: featprof %s --exe PATH FEATURE...|--all [--by-region]"
			"%s\n", on ? "enable" : "disable",
			on ? " [--regions FILE] [--function FEATURE=[OBJECT:]PATTERN[,...]]..."
			   : "");
		return 2;
	}
	if (cli_request_defs(o, &defs)) {
		json_object_put(names);
		return 1;
	}
	for (i = 0; i < o->npos; i++)
		json_object_array_add(names, json_object_new_string(o->pos[i]));
	for (i = 0; i < o->nfunc && !o->regions; i++)	/* --function's features, enabled */
		json_object_array_add(names, json_object_new_string(o->func_features[i]));
	req = json_object_new_object();
	json_object_object_add(req, "exe", json_object_new_string(o->exe));
	if (defs)
		json_object_object_add(req, "definitions", defs);
	if (o->all)
		json_object_object_add(req, "all", json_object_new_boolean(1));
	json_object_object_add(req, o->regions ? "regions" : "features", names);
	res = client_request(on ? "enable" : "disable", on ? "exe_enable" : "exe_disable", 0,
			     req);
	if (!res || o->json)
		return json_done(res);
	printf("%s: %s, %d processes now", o->exe, on ? "enabled" : "disabled",
	       (int)json_object_array_length(geta(res, "processes")));
	if (geti(res, "summed"))	/* beyond the daemon's per-executable targets */
		printf(" with figures of their own, and %lld measured in the sum only",
		       (long long)geti(res, "summed"));
	printf("%s\n", geti(res, "ended") ? "; no longer followed (figures kept)" : "");
	json_object_put(res);
	return 0;
}

/* featprof enable|disable PID NAME...|--all [--by-region] [--regions FILE] [--json] */
static int do_toggle(int argc, char **argv, int on)
{
	struct json_object *req, *names, *res;
	const char *verb = on ? "enable" : "disable";
	struct cli_opts o;
	int opts = O_ALL | O_REGIONS | O_JSON | O_EXE | (on ? O_DEFS | O_TRAP | O_FUNCTION : 0);
	int i, fd, n, rc = cli_parse(argc, argv, opts, &o);
	struct json_object *defs = NULL;
	long pid = 0;

	if (!rc && o.exe) {
		rc = exe_toggle(&o, on);
		cli_opts_free(&o);
		return rc;
	}
	if (rc < 0) {	/* its one line said */
		cli_opts_free(&o);
		return 2;
	}
	if (rc || o.npos < 1 || parse_pid(o.pos[0], &pid) ||
	    (!o.all && o.npos < 2 && !o.nfunc)) {
		if (rc >= 0 && o.npos >= 1 && parse_pid(o.pos[0], &pid))
			fprintf(stderr, "featprof %s: not a pid: '%s'\n", verb, o.pos[0]);
		fprintf(rc == 1 ? stdout : stderr, "usage: featprof %s PID FEATURE...|--all "
			"[--by-region]%s [--json]\n", verb,
			on ? " [--regions FILE] [--function FEATURE=[OBJECT:]PATTERN[,...]]... "
			     "[--trap]" : "");
		cli_opts_free(&o);
		return rc == 1 ? 0 : 2;
	}
	if (cli_request_defs(&o, &defs)) {
		cli_opts_free(&o);
		return 1;
	}
	fd = client_connect();
	if (fd < 0) {
		json_object_put(defs);
		cli_opts_free(&o);
		return 1;
	}
	names = json_object_new_array();
	for (i = 1; i < o.npos; i++)
		json_object_array_add(names, json_object_new_string(o.pos[i]));
	for (i = 0; i < o.nfunc && !o.regions; i++)	/* --function's features, enabled */
		json_object_array_add(names, json_object_new_string(o.func_features[i]));
	cli_opts_free(&o);
	req = json_object_new_object();
	json_object_object_add(req, "verb", json_object_new_string(verb));
	json_object_object_add(req, "pid", json_object_new_int64(pid));
	if (o.all)
		json_object_object_add(req, "all", json_object_new_boolean(1));
	if (o.trap)	/* by uprobes, also where the program times itself */
		json_object_object_add(req, "trap", json_object_new_boolean(1));
	json_object_object_add(req, o.regions ? "regions" : "features", names);
	if (defs)
		json_object_object_add(req, "definitions", defs);
	res = client_call(fd, verb, req);
	close(fd);
	if (!res || o.json)
		return json_done(res);
	n = (int)json_object_array_length(geta(res, "enabled_regions"));
	printf("pid %ld: %d region%s enabled, %lld probe sites attached", pid, n,
	       n == 1 ? "" : "s", (long long)geti(res, "attached_sites"));
	if (geti(res, "inprocess_regions"))
		printf(", %lld region%s timed in the process", (long long)geti(res,
									"inprocess_regions"),
		       geti(res, "inprocess_regions") == 1 ? "" : "s");
	printf("\n");
	json_object_put(res);
	return 0;
}

int cmd_enable(int argc, char **argv)
{
	return do_toggle(argc, argv, 1);
}

int cmd_disable(int argc, char **argv)
{
	return do_toggle(argc, argv, 0);
}

static struct json_object *simple_call(const char *verb, long pid)
{
	return client_request(verb, verb, pid, NULL);
}

/* Parses "PID [--json]"; 0, or the exit code to return (usage printed). */
static int pid_args(int argc, char **argv, long *pid, int *json, const char *use)
{
	struct cli_opts o;
	int rc = cli_parse(argc, argv, O_JSON, &o);

	*json = o.json;
	if (!rc && o.npos == 1 && !parse_pid(o.pos[0], pid))
		return 0;
	if (!rc && o.npos == 1)
		fprintf(stderr, "featprof %s: not a pid: '%s'\n", argv[0], o.pos[0]);
	fprintf(rc == 1 ? stdout : stderr, "usage: featprof %s\n", use);
	return rc == 1 ? -1 : 2;
}

/* Commands without arguments but --json; 0, or the exit code (usage printed). */
static int json_only(int argc, char **argv, int *json)
{
	struct cli_opts o;
	int rc = cli_parse(argc, argv, O_JSON, &o);

	*json = o.json;
	if (!rc && !o.npos)
		return 0;
	fprintf(rc == 1 ? stdout : stderr, "usage: featprof %s [--json]\n", argv[0]);
	return rc == 1 ? -1 : 2;
}

/* The kernel's mechanisms: what each part uses, and what this kernel lacks. */
static void print_kernel(struct json_object *k)
{
	int i;

	if (!k)
		return;
	printf("kernel %s:\n", gets_(k, "release"));
	for (i = 0; i < 2; i++) {
		struct json_object *m = json_object_object_get(k, i ? "unavailable" : "mechanisms");

		if (!m)
			continue;
		json_object_object_foreach(m, name, v)
			printf("  %s%s: %s\n", i ? "unavailable, " : "", name,
			       json_object_get_string(v));
	}
}

static void print_group(struct json_object *g)
{
	struct json_object *ps = geta(g, "processes");
	size_t k;

	printf("%s: %zu processes now, %lld joined, %lld exited, %lld gone before they were "
	       "attached, %lld measured in the sum only\n", gets_(g, "exe"),
	       ps ? json_object_array_length(ps) : 0, (long long)geti(g, "processes_joined"),
	       (long long)geti(g, "processes_exited"), (long long)geti(g, "processes_missed"),
	       (long long)geti(g, "processes_summed"));
	if (ps && json_object_array_length(ps)) {
		printf("  pids:");
		for (k = 0; k < json_object_array_length(ps); k++)
			printf(" %lld", (long long)json_object_get_int64(
						json_object_array_get_idx(ps, k)));
		printf("\n");
	}
}

/* featprof status --exe PATH [--json]: one executable's entry. */
static int status_exe(struct json_object *res, const char *exe, int json)
{
	struct json_object *gs = geta(res, "executables"), *g = NULL;
	size_t i;

	for (i = 0; gs && i < json_object_array_length(gs) && !g; i++)
		if (!strcmp(gets_(json_object_array_get_idx(gs, i), "exe"), exe))
			g = json_object_array_get_idx(gs, i);
	if (!g) {
		fprintf(stderr, "featprof status: %s is not profiled as an executable\n", exe);
		json_object_put(res);
		return 1;
	}
	if (json)
		printf("%s\n", json_object_to_json_string_ext(g, JSON_C_TO_STRING_PLAIN));
	else
		print_group(g);
	json_object_put(res);
	return 0;
}

int cmd_status(int argc, char **argv)
{
	struct json_object *res, *ts, *gs, *cal = NULL, *at = NULL;
	struct cli_opts o;
	int rc = cli_parse(argc, argv, O_JSON | O_EXE, &o), json = o.json;
	size_t i;

	if (rc || o.npos) {
		fprintf(rc == 1 ? stdout : stderr, "usage: featprof status [--exe PATH] "
			"[--json]\n");
		return rc == 1 ? 0 : 2;
	}
	res = simple_call("status", 0);
	if (res && o.exe)
		return status_exe(res, o.exe, json);
	if (!res || json)
		return json_done(res);
	json_object_object_get_ex(res, "calibration", &cal);
	json_object_object_get_ex(res, "attach", &at);
	printf("featprofd: protocol %lld, %lld client(s), %lld subscription(s)\n",
	       (long long)geti(res, "version"), (long long)geti(res, "clients"),
	       (long long)geti(res, "subscriptions"));
	printf("probes: new targets attached at the %s (%s)\n",
	       json_object_get_boolean(json_object_object_get(res, "optimized_uprobes"))
		       ? "shielded nop5"
		       : "nop1 (int3)",
	       gets_(at, "why"));
	for (i = 0; i < 2; i++) {
		struct json_object *c = json_object_object_get(at, i ? "nop5" : "nop1");

		if (!c || !json_object_get_boolean(json_object_object_get(c, "valid")))
			continue;
		printf("  %s: pair %.0f ns (sd %.0f), bias %.0f ns (sd %.0f); begin %.0f+%.0f ns, "
		       "end %.0f+%.0f ns around the timestamp\n", i ? "nop5" : "nop1",
		       getd(c, "pair_ns"), getd(c, "pair_sd_ns"), getd(c, "bias_ns"),
		       getd(c, "bias_sd_ns"), getd(c, "begin_pre_ns"), getd(c, "begin_post_ns"),
		       getd(c, "end_pre_ns"), getd(c, "end_post_ns"));
	}
	printf("  calibrated %lld time(s), last took %.0f ms; compensation of new targets: "
	       "bias %.0f ns, pair %.0f ns\n", (long long)geti(at, "runs"), getd(at, "took_ms"),
	       getd(cal, "bias_ns"), getd(cal, "pair_ns"));
	print_kernel(json_object_object_get(res, "kernel"));
	ts = geta(res, "targets");
	if (!ts || !json_object_array_length(ts))
		printf("no targets\n");
	for (i = 0; ts && i < json_object_array_length(ts); i++) {
		struct json_object *t = json_object_array_get_idx(ts, i), *an, *er;
		size_t k;

		printf("pid %lld (%s)%s: %zu of %lld regions enabled, %lld sites attached\n",
		       (long long)geti(t, "pid"), gets_(t, "comm"),
		       json_object_get_boolean(json_object_object_get(t, "exited")) ? " exited"
										    : "",
		       json_object_array_length(geta(t, "enabled_regions")),
		       (long long)geti(t, "regions"), (long long)geti(t, "attached_sites"));
		er = geta(t, "enabled_regions");
		if (er && json_object_array_length(er)) {
			printf("  enabled:");
			for (k = 0; k < json_object_array_length(er); k++)
				printf(" %s",
				       json_object_get_string(json_object_array_get_idx(er, k)));
			printf("\n");
		}
		if (json_object_object_get_ex(t, "anomalies", &an))
			print_anomalies("  anomalies:", an);
		if (geti(t, "stray_breakpoints") > 0)
			printf("  %lld probe sites hold a breakpoint featprofd did not put there "
			       "(another tool's, or left behind: featprof repair %lld)\n",
			       (long long)geti(t, "stray_breakpoints"), (long long)geti(t, "pid"));
	}
	if (geti(res, "breakpoints_repaired_at_start") > 0)
		printf("at start: removed the breakpoints of %lld probe sites left by a featprofd "
		       "killed during an attach\n",
		       (long long)geti(res, "breakpoints_repaired_at_start"));
	gs = geta(res, "executables");
	for (i = 0; gs && i < json_object_array_length(gs); i++)
		print_group(json_object_array_get_idx(gs, i));
	json_object_put(res);
	return 0;
}

static int cmp_excl(const void *a, const void *b)
{
	int64_t x = geti(*(struct json_object *const *)a, "exclusive_ns");
	int64_t y = geti(*(struct json_object *const *)b, "exclusive_ns");

	return x < y ? 1 : x > y ? -1 : 0;
}

/* Terminal width: $COLUMNS, the terminal's, or 80. */
static int term_width(void)
{
	const char *e = getenv("COLUMNS");
	struct winsize ws;

	if (e && atoi(e) > 0)
		return atoi(e);
	if (isatty(1) && !ioctl(1, TIOCGWINSZ, &ws) && ws.ws_col)
		return ws.ws_col;
	return 80;
}

/* "12%" where the uncertainty of a figure exceeds 1% of it, else "". */
static const char *unc_pct(double ns, double unc, char *buf, size_t len)
{
	if (ns > 0 && unc > 0.01 * ns)
		snprintf(buf, len, "%.0f%%", unc / ns * 100 < 999 ? unc / ns * 100 : 999);
	else
		buf[0] = 0;
	return buf;
}

/* A compensated time: "<U" (with "?" in its "±" column) where the probes' cost dominates
 * it (its own time is somewhere below its uncertainty U), else the figure. */
static const char *fmt_comp(struct json_object *o, const char *prefix, double ns, char *buf,
			    size_t len)
{
	char k[64], u[32];

	snprintf(k, sizeof(k), "%sprobe_cost_dominates", prefix);
	if (!json_object_get_boolean(json_object_object_get(o, k)))
		return fmt_ns(ns, buf, len);
	snprintf(k, sizeof(k), "%suncertainty_ns", prefix);
	snprintf(buf, len, "<%s", fmt_ns(getd(o, k), u, sizeof(u)));
	return buf;
}

static int dominated(struct json_object *o, const char *prefix)
{
	char k[64];

	snprintf(k, sizeof(k), "%sprobe_cost_dominates", prefix);
	return json_object_get_boolean(json_object_object_get(o, k));
}

/* name, cut to w characters with a '~' where it was cut. */
static const char *cut(const char *name, int w, char *buf, size_t len)
{
	snprintf(buf, len, "%s", name);
	if ((int)strlen(buf) > w && w > 1) {
		buf[w - 1] = '~';
		buf[w] = 0;
	}
	return buf;
}

/*
 * The human table of a stats object (a reply or a push's delta), 80 columns wide; a
 * wider terminal also gets each region's features. Every time in it is compensated for
 * the probes' cost and one kind per row; "±" is the uncertainty where it exceeds 1%;
 * "<U ?" a time the probes' cost dominates (somewhere below U).
 * CPU is wall less off-CPU; SHARE, of the measured threads' time (features overlap
 * where regions belong to several). Raw times and min/max are in --json.
 */
/* The sampled figures (featprof sample), when the target is or was sampled: cumulative
 * since sampling started, CPU time, with the standard error. */
static void print_sampled(struct json_object *st)
{
	struct json_object *sm, *a, *x;
	char b1[40], b2[40];
	size_t i;

	if (!json_object_object_get_ex(st, "sampling", &sm))
		return;
	printf("\n%-22s %10s %10s %10s %6s   (%s%lld samples at %lld Hz since start)\n",
	       "SAMPLED", "SAMPLES", "CPU", "± SE", "SHARE",
	       json_object_get_boolean(json_object_object_get(sm, "active")) ? "" : "stopped: ",
	       (long long)geti(sm, "samples"), (long long)geti(sm, "hz"));
	for (a = geta(sm, "features"), i = 0; a && i < json_object_array_length(a); i++) {
		x = json_object_array_get_idx(a, i);
		printf("%-22.22s %10lld %10s %10s %5.1f%%\n", gets_(x, "name"),
		       (long long)geti(x, "samples"), fmt_ns(getd(x, "sampled_ns"), b1, 40),
		       fmt_ns(getd(x, "sampled_stderr_ns"), b2, 40), 100 * getd(x, "share"));
	}
	if (json_object_object_get_ex(sm, "base", &x))
		printf("%-22s %10lld %10s %10s %5.1f%%\n", "(outside regions)",
		       (long long)geti(x, "samples"), fmt_ns(getd(x, "sampled_ns"), b1, 40),
		       fmt_ns(getd(x, "sampled_stderr_ns"), b2, 40), 100 * getd(x, "share"));
	if (geti(sm, "probe_samples") > 0)	/* not in the shares above */
		printf("%-22s %10lld %10s   (featprofd's uprobes: left out)\n", "(probe handling)",
		       (long long)geti(sm, "probe_samples"), fmt_ns(getd(sm, "probe_ns"), b1, 40));
}

void cli_print_stats(struct json_object *st, long pid, const char *title)
{
	struct json_object *regs = geta(st, "regions"), *feats = geta(st, "features"), *an;
	struct json_object *sets = geta(st, "feature_sets"), *arr[4096];
	size_t i, n = 0;
	int wide = term_width() >= 122, mean = term_width() >= 88;
	char b1[40], b2[40], b3[40], b4[40], b5[40], b6[40], nb[80];
	double total = (double)geti(st, "base_ns");

	if (gets_(st, "exe") && *gets_(st, "exe"))
		printf("%s %s: %lld processes (%lld live, %lld exited, %lld gone before they "
		       "were attached, %lld in the sum only), summed (times compensated for "
		       "probe cost)\n", title, gets_(st, "exe"),
		       (long long)(geti(st, "processes_joined") + geti(st, "processes_pending") +
				   geti(st, "processes_summed")),
		       (long long)(geti(st, "processes_live") + geti(st, "processes_pending")),
		       (long long)geti(st, "processes_exited"),
		       (long long)geti(st, "processes_missed"),
		       (long long)geti(st, "processes_summed"));
	if (geti(st, "processes_inprocess_unread") > 0)
		printf("%s %lld processes exited before featprofd read what they timed "
		       "in-process (forked children that _exit at once): not in these figures\n",
		       title, (long long)geti(st, "processes_inprocess_unread"));
	if (!gets_(st, "exe") || !*gets_(st, "exe"))
		printf("%s pid %ld %s (times compensated for probe cost)\n", title, pid,
		       gets_(st, "comm"));
	/* the measured threads' time: outside regions plus every set (sets do not overlap) */
	for (i = 0; sets && i < json_object_array_length(sets); i++)
		total += (double)geti(json_object_array_get_idx(sets, i), "ns");
	printf("\n%-22s %10s %4s %10s %10s %6s\n", "FEATURE", "WALL", "±", "CPU", "OFF-CPU",
	       "SHARE");
	for (i = 0; feats && i < json_object_array_length(feats); i++) {
		struct json_object *f = json_object_array_get_idx(feats, i);
		double ns = (double)geti(f, "ns");

		printf("%-22s %10s %4s %10s %10s %5.1f%%\n", cut(gets_(f, "name"), 22, nb, 64),
		       fmt_comp(f, "", ns, b1, 40),
		       dominated(f, "") ? "?" : unc_pct(ns, (double)geti(f, "uncertainty_ns"),
							 b2, 40),
		       fmt_ns((double)geti(f, "cpu_ns"), b3, 40),
		       fmt_ns((double)geti(f, "offcpu_ns"), b4, 40),
		       total > 0 ? ns / total * 100 : 0);
	}
	printf("%-22s %10s\n", "(outside regions)", fmt_ns((double)geti(st, "base_ns"), b1, 40));
	print_sampled(st);
	for (i = 0; regs && i < json_object_array_length(regs) && n < 4096; i++)
		arr[n++] = json_object_array_get_idx(regs, i);
	qsort(arr, n, sizeof(arr[0]), cmp_excl);
	/* 24+8+9+4+9+9+9 and 6 blanks: 78 columns, so region names of up to 24 characters
	 * stay whole at 80; MEAN from 88 columns, the features from 112 */
	printf("\n%-24s %8s %9s %4s %9s %9s %9s%s%s\n", "REGION", "COUNT", "EXCL", "±",
	       "INCL", "CPU", "OFF-CPU", mean ? "      MEAN" : "", wide ? "  FEATURES" : "");
	for (i = 0; i < n; i++) {
		struct json_object *r = arr[i], *fl = geta(r, "features");
		double ex = (double)geti(r, "exclusive_ns");
		char feats_s[128] = "", mean_s[48] = "";
		size_t k;
		/* a region not enabled (its figures kept) says "off" where its ± would be */
		int on = json_object_get_boolean(json_object_object_get(r, "enabled"));

		for (k = 0; wide && fl && k < json_object_array_length(fl); k++) {
			strncat(feats_s, k ? "," : "  ", sizeof(feats_s) - strlen(feats_s) - 1);
			strncat(feats_s, json_object_get_string(json_object_array_get_idx(fl, k)),
				sizeof(feats_s) - strlen(feats_s) - 1);
		}
		if (mean)
			snprintf(mean_s, sizeof(mean_s), " %9s",
				 fmt_ns((double)geti(r, "mean_ns"), b6, 40));
		printf("%-24s %8lld %9s %4s %9s %9s %9s%s%s\n",
		       cut(gets_(r, "name"), 24, nb, sizeof(nb)), (long long)geti(r, "count"),
		       fmt_comp(r, "exclusive_", ex, b1, 40),
		       !on ? "off" : dominated(r, "exclusive_") ? "?"
			   : unc_pct(ex, (double)geti(r, "exclusive_uncertainty_ns"), b2, 40),
		       fmt_comp(r, "", (double)geti(r, "inclusive_ns"), b3, 40),
		       fmt_ns((double)geti(r, "cpu_ns"), b4, 40),
		       fmt_ns((double)geti(r, "offcpu_ns"), b5, 40), mean_s, feats_s);
	}
	if (json_object_object_get_ex(st, "anomalies", &an))
		print_anomalies("\nanomalies:", an);
}

int cmd_stats(int argc, char **argv)
{
	struct json_object *res, *req;
	struct cli_opts o;
	int json;
	long pid;
	int rc;

	if (cli_parse(argc, argv, O_JSON | O_EXE, &o) == 0 && o.exe && !o.npos) {
		req = json_object_new_object();
		json_object_object_add(req, "exe", json_object_new_string(o.exe));
		res = client_request("stats", "exe_stats", 0, req);
		if (!res || o.json)
			return json_done(res);
		cli_print_stats(res, 0, "featprof stats:");
		json_object_put(res);
		return 0;
	}
	rc = pid_args(argc, argv, &pid, &json, "stats PID|--exe PATH [--json]");
	if (rc)
		return rc < 0 ? 0 : rc;
	res = simple_call("stats", pid);
	if (!res || json)
		return json_done(res);
	cli_print_stats(res, pid, "featprof stats:");
	json_object_put(res);
	return 0;
}

/* A verb whose only argument is a pid and whose reply carries nothing to print. */
static int pid_verb(int argc, char **argv, const char *verb, const char *use)
{
	long pid_;
	struct json_object *res;
	int json, rc = pid_args(argc, argv, &pid_, &json, use);

	if (rc)
		return rc < 0 ? 0 : rc;
	res = simple_call(verb, pid_);
	json_object_put(res);
	return res ? 0 : 1;
}

/* featprof calibrate [--json]: measure the probe cost again (root). */
int cmd_calibrate(int argc, char **argv)
{
	struct json_object *res, *prev = NULL, *at = NULL;
	int i, json, rc = json_only(argc, argv, &json);

	if (rc)
		return rc < 0 ? 0 : rc;
	res = simple_call("calibrate", 0);
	if (!res || json)
		return json_done(res);
	json_object_object_get_ex(res, "previous", &prev);
	json_object_object_get_ex(res, "attach", &at);
	for (i = 0; i < 2; i++) {
		const char *k = i ? "nop5" : "nop1";
		struct json_object *n = json_object_object_get(at, k);
		struct json_object *o = json_object_object_get(prev, k);

		if (!n || !json_object_get_boolean(json_object_object_get(n, "valid")))
			continue;
		printf("%s: pair %.0f ns (sd %.0f), was %.0f ns; bias %.0f ns (sd %.0f), was %.0f "
		       "ns\n",
		       k, getd(n, "pair_ns"), getd(n, "pair_sd_ns"), getd(o, "pair_ns"),
		       getd(n, "bias_ns"), getd(n, "bias_sd_ns"), getd(o, "bias_ns"));
	}
	printf("new targets: %s (%s)\n", gets_(at, "attach_point"), gets_(at, "why"));
	json_object_put(res);
	return 0;
}

int cmd_reset(int argc, char **argv)
{
	return pid_verb(argc, argv, "reset", "reset PID");
}

int cmd_detach(int argc, char **argv)
{
	return pid_verb(argc, argv, "detach", "detach PID");
}

/*
 * featprof repair PID [--check]: probe sites of PID holding a breakpoint (int3) that no
 * live uprobe wants any more (left by a process killed while it attached or detached)
 * are cleared; sites featprofd or another tool has attached keep theirs (root).
 */
int cmd_repair(int argc, char **argv)
{
	struct json_object *req, *res;
	struct cli_opts o;
	long pid;
	int rc = cli_parse(argc, argv, O_JSON | O_CHECK, &o);

	if (rc || o.npos != 1 || parse_pid(o.pos[0], &pid)) {
		if (!rc && o.npos == 1)
			fprintf(stderr, "featprof repair: not a pid: '%s'\n", o.pos[0]);
		fprintf(rc == 1 ? stdout : stderr,
			"usage: featprof repair PID [--check] [--json]\n");
		return rc == 1 ? 0 : 2;
	}
	req = json_object_new_object();
	if (o.check)
		json_object_object_add(req, "check", json_object_new_boolean(1));
	res = client_request("repair", "repair", pid, req);
	if (!res)
		return 1;
	if (o.json) {
		printf("%s\n", json_object_to_json_string_ext(res, JSON_C_TO_STRING_PLAIN));
	} else if (!geti(res, "breakpoints")) {
		printf("pid %ld: no probe site holds a breakpoint\n", pid);
	} else if (o.check) {
		printf("pid %ld: %lld probe sites hold a breakpoint (attached now, or left "
		       "behind: featprof repair %ld removes those nothing owns)\n", pid,
		       (long long)geti(res, "breakpoints"), pid);
	} else {
		printf("pid %ld: %lld probe sites held a breakpoint: %lld removed, %lld still "
		       "held by a live uprobe (featprofd's or another tool's)\n", pid,
		       (long long)geti(res, "breakpoints"), (long long)geti(res, "removed"),
		       (long long)geti(res, "held"));
	}
	json_object_put(res);
	return 0;
}

static volatile sig_atomic_t interrupted;

static void on_int(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* stream and top: subscribe, then one push per interval. */
static int subscribe_loop(int argc, char **argv, int table)
{
	struct json_object *req, *res, *push, *v;
	long pid = 0, interval, count, seen = 0;
	struct cli_opts o;
	int fd, rc = cli_parse(argc, argv, O_INTERVAL | O_COUNT | O_EXE, &o);

	if (rc || o.npos != !o.exe || (!o.exe && parse_pid(o.pos[0], &pid))) {
		if (!rc && o.npos == 1 && !o.exe)
			fprintf(stderr, "featprof %s: not a pid: '%s'\n", argv[0], o.pos[0]);
		fprintf(rc == 1 ? stdout : stderr, "usage: featprof %s PID|--exe PATH "
			"[--interval MS] [--count N]\n", table ? "top" : "stream");
		return rc == 1 ? 0 : 2;
	}
	interval = o.interval;
	count = o.count;
	fd = client_connect();
	if (fd < 0)
		return 1;
	req = json_object_new_object();
	if (o.exe) {	/* the executable's processes, summed (root) */
		json_object_object_add(req, "verb", json_object_new_string("exe_subscribe"));
		json_object_object_add(req, "exe", json_object_new_string(o.exe));
	} else {
		json_object_object_add(req, "verb", json_object_new_string("subscribe"));
		json_object_object_add(req, "pid", json_object_new_int64(pid));
	}
	json_object_object_add(req, "interval_ms", json_object_new_int64(interval));
	res = client_call(fd, table ? "top" : "stream", req);
	if (!res) {
		close(fd);
		return 1;
	}
	json_object_put(res);
	signal(SIGINT, on_int);
	signal(SIGTERM, on_int);
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	while (!interrupted && (!count || seen < count)) {
		push = client_read(fd);
		if (!push)
			break;
		if (json_object_object_get_ex(push, "event", &v)) {
			if (!table)
				print_json(push);
			else
				printf("\npid %ld exited\n", pid);
			fflush(stdout);
			json_object_put(push);
			break;
		}
		if (!json_object_object_get_ex(push, "stats", &v)) {
			json_object_put(push);
			continue;
		}
		seen++;
		if (table) {
			if (isatty(1))
				printf("\033[H\033[2J");
			cli_print_stats(v, pid, "featprof top:");
			printf("(every %ld ms, figures of the last interval; Ctrl-C quits)\n",
			       interval);
		} else {
			print_json(push);
		}
		fflush(stdout);
		json_object_put(push);
	}
	close(fd);
	return 0;
}

int cmd_top(int argc, char **argv)
{
	return subscribe_loop(argc, argv, 1);
}

int cmd_stream(int argc, char **argv)
{
	return subscribe_loop(argc, argv, 0);
}
