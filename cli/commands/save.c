// SPDX-License-Identifier: GPL-2.0
/*
 * featprof save PID --duration S [--interval MS] -o FILE
 * featprof diff A B [--threshold PCT] [--json]
 * (featprof diff --functions A... --to B...: diff_functions.c)
 *
 * save keeps per-interval figures so that their variance is known: it subscribes for S
 * seconds and writes every interval's delta, then the target's whole stats (since
 * enable/reset, for `report FILE`). The file (FP_SAVE_VERSION):
 *   {"format":"featprof-save","version":1,"pid","comm","taken":UNIX_S,"interval_ms",
 *    "intervals":[{"elapsed_ns",
 *                  "regions":{NAME:{"count","inclusive_ns","exclusive_ns",
 *                               "exclusive_preempted_ns"}},
 *                  "features":{NAME:{"ns","preempted_ns"}}, "measured_ns"}, ...],
 *    "stats":{the stats reply at the end}}
 * Times are compensated like stats'. Written to FILE.tmp and renamed.
 *
 * diff compares two saves figure by figure, one value per interval:
 *  - a region: its mean exclusive time per instance in the interval, less the time its
 *    thread was preempted in it ((exclusive_ns - exclusive_preempted_ns) / count;
 *    intervals without an instance are left out). Per instance, so a change in
 *    throughput does not move it; exclusive, so a slower nested region does not flag its
 *    parents; without preempted time, because waiting for a CPU taken by another process
 *    is the machine's load, not the program's cost (blocked time, the program's own
 *    waits, stays in). Files without the preempted key count it as 0;
 *  - a feature: its share of the measured threads' time, preempted time left out of
 *    both ((ns - preempted_ns) / measured_ns, where measured_ns is the time outside
 *    regions, base_ns, plus every feature set's time less its preempted time). A share,
 *    so throughput does not move it; without preemption, because another process taking
 *    the CPU at some moments more than at others shifts wall-time shares. Files without
 *    measured_ns: ns / elapsed_ns.
 * Each figure's interval values of A and B are compared with Welch's t-test: an
 * interval's value is a mean over many instances, so close to normal, and two builds or
 * configurations need not have equal variances (Welch does not assume them). With
 * 10-20 intervals a rank test (Mann-Whitney) has less power and tests a shift of the
 * distribution rather than of the mean, which is what a cost is. Reported: both means,
 * the change and its 95% confidence interval (Welch-Satterthwaite degrees of freedom),
 * the relative change, and the two-sided p. A figure is a regression when it grew by
 * more than the threshold (default 5%) with p < 0.01 and the confidence interval above
 * zero. Exit 1 when one is flagged, 0 when none, 2 on bad input.
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/core/core.h"
#include "cli/writers/writers.h"
#include "commands_impl.h"
#include "cli/model/model.h"

#define FP_SAVE_VERSION 1
#define ALPHA 0.01
#define MIN_INTERVALS 3

static struct json_object *interval_of(struct json_object *st)
{
	struct json_object *o = json_object_new_object(), *rs = json_object_new_object();
	struct json_object *fs = json_object_new_object(), *a;
	double measured;
	size_t k;

	json_object_object_add(o, "elapsed_ns", json_object_new_int64(geti(st, "elapsed_ns")));
	for (a = geta(st, "regions"), k = 0; a && k < json_object_array_length(a); k++) {
		struct json_object *r = json_object_array_get_idx(a, k), *x;

		x = json_object_new_object();
		json_object_object_add(x, "count", json_object_new_int64(geti(r, "count")));
		json_object_object_add(x, "inclusive_ns",
				       json_object_new_double(getd(r, "inclusive_ns")));
		json_object_object_add(x, "exclusive_ns",
				       json_object_new_double(getd(r, "exclusive_ns")));
		json_object_object_add(x, "exclusive_preempted_ns",
				       json_object_new_double(
					       getd(r, "exclusive_offcpu_preempted_ns")));
		json_object_object_add(rs, gets_(r, "name"), x);
	}
	for (a = geta(st, "features"), k = 0; a && k < json_object_array_length(a); k++) {
		struct json_object *f = json_object_array_get_idx(a, k), *x;

		x = json_object_new_object();
		json_object_object_add(x, "ns", json_object_new_double(getd(f, "ns")));
		json_object_object_add(x, "preempted_ns",
				       json_object_new_double(getd(f, "offcpu_preempted_ns")));
		json_object_object_add(fs, gets_(f, "name"), x);
	}
	measured = getd(st, "base_ns");
	for (a = geta(st, "feature_sets"), k = 0; a && k < json_object_array_length(a); k++) {
		struct json_object *fset = json_object_array_get_idx(a, k);

		measured += getd(fset, "ns") - getd(fset, "offcpu_preempted_ns");
	}
	json_object_object_add(o, "measured_ns", json_object_new_double(measured));
	json_object_object_add(o, "regions", rs);
	json_object_object_add(o, "features", fs);
	return o;
}

/* Up to n intervals of the subscription on fd into ivs: 1 to write them (all n, or
 * those before a Ctrl-C), 0 for nothing (the target exited, the connection was lost). */
static int intervals(int fd, long pid, long n, struct json_object *ivs)
{
	struct json_object *push, *v;
	int ok = 1;

	cli_catch_interrupts();	/* Ctrl-C: stop, and write the intervals so far */
	while ((long)json_object_array_length(ivs) < n && ok) {
		cli_progress("featprof save: interval %zu of %ld",
			     json_object_array_length(ivs) + 1, n);
		push = client_read(fd);
		cli_progress_done();
		if (!push && cli_interrupted) {
			size_t got = json_object_array_length(ivs);

			fprintf(stderr, "featprof save: interrupted after %zu of %ld intervals%s\n",
				got, n, got ? "; those written" : "; nothing written");
			return got > 0;
		}
		if (!push || json_object_object_get_ex(push, "event", &v)) {
			fprintf(stderr, "featprof save: pid %ld %s after %zu of %ld intervals; "
				"nothing written\n", pid, push ? "exited" : "was lost",
				json_object_array_length(ivs), n);
			ok = 0;
		} else if (json_object_object_get_ex(push, "stats", &v)) {
			json_object_array_add(ivs, interval_of(v));
		}
		json_object_put(push);
	}
	return ok;
}

int cmd_save(int argc, char **argv)
{
	struct json_object *req, *res, *ivs, *o, *st = NULL;
	struct cli_opts opt;
	long pid = 0, n;
	int fd, rc = cli_parse(argc, argv, O_INTERVAL | O_DURATION | O_OUTPUT, &opt), ok = 1;
	char tmp[4096];
	FILE *f;

	if (rc || opt.npos != 1 || parse_pid(opt.pos[0], &pid) || !opt.duration ||
	    !opt.output) {
		if (!rc && opt.npos == 1 && parse_pid(opt.pos[0], &pid))
			fprintf(stderr, "featprof save: not a pid: '%s'\n", opt.pos[0]);
		else if (!rc && (!opt.duration || !opt.output))
			fprintf(stderr, "featprof save: --duration and -o are required\n");
		fprintf(rc == 1 ? stdout : stderr, "usage: featprof save PID --duration S "
			"[--interval MS] -o FILE\n");
		return rc == 1 ? 0 : 2;
	}
	if (opt.interval * 10 > opt.duration * 1000)
		opt.interval = opt.duration * 100;	/* at least 10 intervals */
	n = opt.duration * 1000 / opt.interval;
	f = cli_open_tmp(opt.output, "save", tmp, sizeof(tmp));	/* fail before waiting */
	if (!f)
		return 1;
	fd = client_connect();
	if (fd < 0)
		return cli_close_tmp(f, tmp, opt.output, "save", 0), 1;
	req = json_object_new_object();
	json_object_object_add(req, "verb", json_object_new_string("subscribe"));
	json_object_object_add(req, "pid", json_object_new_int64(pid));
	json_object_object_add(req, "interval_ms", json_object_new_int64(opt.interval));
	res = client_call(fd, "save", req);
	if (!res) {
		close(fd);
		return cli_close_tmp(f, tmp, opt.output, "save", 0), 1;
	}
	json_object_put(res);
	ivs = json_object_new_array();
	ok = intervals(fd, pid, n, ivs);
	close(fd);	/* a connection a read was interrupted on may hold half a line */
	if (ok) {
		st = client_request("save", "stats", pid, NULL);
		ok = st != NULL;
	}
	if (!ok) {
		json_object_put(ivs);
		return cli_close_tmp(f, tmp, opt.output, "save", 0), 1;
	}
	o = json_object_new_object();
	json_object_object_add(o, "format", json_object_new_string("featprof-save"));
	json_object_object_add(o, "version", json_object_new_int(FP_SAVE_VERSION));
	json_object_object_add(o, "pid", json_object_new_int64(pid));
	json_object_object_add(o, "comm", json_object_new_string(gets_(st, "comm")));
	json_object_object_add(o, "taken", json_object_new_int64((int64_t)time(NULL)));
	json_object_object_add(o, "interval_ms", json_object_new_int64(opt.interval));
	json_object_object_add(o, "intervals", ivs);
	json_object_object_add(o, "stats", st);
	fprintf(f, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return cli_close_tmp(f, tmp, opt.output, "save", 1) ? 1 : 0;
}

/* --- statistics -------------------------------------------------------------------- */

struct sample {
	double v[4096];
	int n;
};

static void mean_var(const double *v, int n, double *m, double *var)
{
	double sum = 0, ss = 0;
	int i;

	for (i = 0; i < n; i++)
		sum += v[i];
	*m = n ? sum / n : 0;
	for (i = 0; i < n; i++)
		ss += (v[i] - *m) * (v[i] - *m);
	*var = n > 1 ? ss / (n - 1) : 0;
}

void cli_cmd_welch(const double *a, int na, const double *b, int nb, struct cli_welch *w)
{
	double va, vb, sa, sb, se, t;

	mean_var(a, na, &w->ma, &va);
	mean_var(b, nb, &w->mb, &vb);
	sa = va / na;
	sb = vb / nb;
	se = sqrt(sa + sb);
	w->diff = w->mb - w->ma;
	w->rel = w->ma > 0 ? w->diff / w->ma : 0;
	if (se <= 0) {	/* both constant */
		w->p = w->diff ? 0 : 1;
		w->df = na + nb - 2;
		w->lo = w->hi = w->diff;
		return;
	}
	w->df = (sa + sb) * (sa + sb) /
		((na > 1 ? sa * sa / (na - 1) : 0) + (nb > 1 ? sb * sb / (nb - 1) : 0));
	t = w->diff / se;
	w->p = fpm_t_two_sided(fabs(t), w->df);
	t = fpm_t_quantile(0.05, w->df);
	w->lo = w->diff - t * se;
	w->hi = w->diff + t * se;
}

/* --- diff -------------------------------------------------------------------------- */

static struct json_object *load_save(const char *path)
{
	struct json_object *o, *ivs;
	const char *fmt;

	errno = 0;
	o = json_object_from_file(path);
	if (!o) {
		fprintf(stderr, "featprof diff: cannot read %s: %s\n", path,
			errno ? strerror(errno) : "not JSON");
		return NULL;
	}
	fmt = gets_(o, "format");
	ivs = geta(o, "intervals");
	if (strcmp(fmt ? fmt : "", "featprof-save") || geti(o, "version") != FP_SAVE_VERSION ||
	    !ivs) {
		fprintf(stderr, "featprof diff: %s is not a featprof save file (version %d)\n",
			path, FP_SAVE_VERSION);
		json_object_put(o);
		return NULL;
	}
	if (json_object_array_length(ivs) < MIN_INTERVALS) {
		fprintf(stderr, "featprof diff: %s has %zu intervals; at least %d are needed\n",
			path, json_object_array_length(ivs), MIN_INTERVALS);
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* One value per interval of the named region (kind 'r') or feature ('f'). */
static void collect(struct json_object *save, char kind, const char *name, struct sample *s)
{
	struct json_object *ivs = geta(save, "intervals"), *grp, *x;
	size_t i;

	s->n = 0;
	for (i = 0; i < json_object_array_length(ivs) && s->n < 4096; i++) {
		struct json_object *iv = json_object_array_get_idx(ivs, i);
		double el = (double)geti(iv, "elapsed_ns"), m = getd(iv, "measured_ns");

		if (!json_object_object_get_ex(iv, kind == 'r' ? "regions" : "features", &grp) ||
		    !json_object_object_get_ex(grp, name, &x))
			continue;
		if (kind == 'r' && geti(x, "count") > 0)
			s->v[s->n++] = (getd(x, "exclusive_ns") - getd(x, "exclusive_preempted_ns"))
				       / (double)geti(x, "count");
		else if (kind == 'f' && m > 0)
			s->v[s->n++] = (getd(x, "ns") - getd(x, "preempted_ns")) / m;
		else if (kind == 'f' && el > 0)
			s->v[s->n++] = getd(x, "ns") / el;
	}
}

static int compare(struct json_object *a, struct json_object *b, char kind, double thr,
		   int json, struct json_object *out)
{
	struct json_object *iv0 = json_object_array_get_idx(geta(a, "intervals"), 0), *grp;
	static struct sample sa, sb;
	int flagged = 0;

	if (!json_object_object_get_ex(iv0, kind == 'r' ? "regions" : "features", &grp))
		return 0;
	json_object_object_foreach(grp, name, unused)
	{
		struct cli_welch w;
		int reg;

		(void)unused;
		collect(a, kind, name, &sa);
		collect(b, kind, name, &sb);
		if (sa.n < 2 || sb.n < 2)
			continue;
		cli_cmd_welch(sa.v, sa.n, sb.v, sb.n, &w);
		reg = w.rel * 100 > thr && w.p < ALPHA && w.lo > 0;
		flagged += reg;
		if (json) {
			struct json_object *o = json_object_new_object();

			json_object_object_add(o, "kind", json_object_new_string(
						  kind == 'r' ? "region" : "feature"));
			json_object_object_add(o, "name", json_object_new_string(name));
			json_object_object_add(o, "a", json_object_new_double(w.ma));
			json_object_object_add(o, "b", json_object_new_double(w.mb));
			json_object_object_add(o, "change", json_object_new_double(w.diff));
			json_object_object_add(o, "ci95", json_object_new_array());
			json_object_array_add(json_object_object_get(o, "ci95"),
					      json_object_new_double(w.lo));
			json_object_array_add(json_object_object_get(o, "ci95"),
					      json_object_new_double(w.hi));
			json_object_object_add(o, "relative", json_object_new_double(w.rel));
			json_object_object_add(o, "p", json_object_new_double(w.p));
			json_object_object_add(o, "df", json_object_new_double(w.df));
			json_object_object_add(o, "intervals", json_object_new_int(sa.n));
			json_object_object_add(o, "intervals_b", json_object_new_int(sb.n));
			json_object_object_add(o, "regression", json_object_new_boolean(reg));
			json_object_array_add(out, o);
		} else if (kind == 'r') {
			printf("%-7s %-22.22s %11.0f %11.0f %+10.0f [%+.0f, %+.0f] %+7.1f%% "
			       "%8.2g%s\n", "region", name, w.ma, w.mb, w.diff, w.lo, w.hi,
			       100 * w.rel, w.p, reg ? "  REGRESSION" : "");
		} else {
			printf("%-7s %-22.22s %10.3f%% %10.3f%% %+9.3f%% [%+.3f, %+.3f] %+7.1f%% "
			       "%8.2g%s\n", "feature", name, 100 * w.ma, 100 * w.mb,
			       100 * w.diff, 100 * w.lo, 100 * w.hi, 100 * w.rel, w.p,
			       reg ? "  REGRESSION" : "");
		}
	}
	return flagged;
}

int cmd_diff(int argc, char **argv)
{
	struct json_object *a, *b, *out = NULL;
	struct cli_opts o;
	double thr = 5;
	char *end;
	int rc, n, i;

	for (i = 1; i < argc; i++)	/* run files compared by their functions */
		if (!strcmp(argv[i], "--functions"))
			return cmd_diff_functions(argc, argv);
	rc = cli_parse(argc, argv, O_JSON | O_THRESHOLD, &o);

	if (!rc && o.threshold) {
		thr = strtod(o.threshold, &end);
		if (*end || end == o.threshold || !(thr >= 0 && thr <= 1000)) {
			fprintf(stderr, "featprof diff: --threshold takes a percentage, 0 to "
				"1000: '%s'\n", o.threshold);
			return 2;
		}
	}
	if (rc || o.npos != 2) {
		fprintf(rc == 1 ? stdout : stderr, "usage: featprof diff A.json B.json "
			"[--threshold PCT] [--json]   (files of featprof save)\n"
			"       featprof diff --functions A.json... --to B.json... "
			"[--threshold PCT] [--json]   (files of featprof run --stacks)\n");
		return rc == 1 ? 0 : 2;
	}
	a = load_save(o.pos[0]);
	b = a ? load_save(o.pos[1]) : NULL;
	if (!b) {
		json_object_put(a);
		return 2;
	}
	if (o.json) {
		out = json_object_new_array();
	} else {
		printf("featprof diff: %s (A, %zu intervals) -> %s (B, %zu intervals)\n",
		       o.pos[0], json_object_array_length(geta(a, "intervals")), o.pos[1],
		       json_object_array_length(geta(b, "intervals")));
		printf("Welch's t-test per figure over intervals; regression: +%.1f%% or more, "
		       "p < %.2g, 95%% CI above 0; time preempted (waiting for a CPU) left "
		       "out\n", thr, ALPHA);
		printf("%-7s %-22s %11s %11s %10s %s\n", "", "region: excl ns/instance", "A",
		       "B", "change", "[95% CI]  relative  p");
	}
	n = compare(a, b, 'r', thr, o.json, out);
	if (!o.json)
		printf("%-7s %-22s %11s %11s %10s\n", "", "feature: share of time", "A", "B",
		       "change");
	n += compare(a, b, 'f', thr, o.json, out);
	if (o.json) {
		struct json_object *r = json_object_new_object();

		json_object_object_add(r, "threshold_pct", json_object_new_double(thr));
		json_object_object_add(r, "alpha", json_object_new_double(ALPHA));
		json_object_object_add(r, "test", json_object_new_string("welch-t"));
		json_object_object_add(r, "figures", out);
		json_object_object_add(r, "regressions", json_object_new_int(n));
		cli_cmd_print_json(r);
		json_object_put(r);
	} else {
		printf("%d regression%s flagged\n", n, n == 1 ? "" : "s");
	}
	json_object_put(a);
	json_object_put(b);
	return n ? 1 : 0;
}
