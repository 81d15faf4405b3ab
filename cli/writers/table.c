// SPDX-License-Identifier: GPL-2.0
/* The stats table (featprof stats, top): a stats object for people. */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/core/core.h"
#include "writers.h"

/* " name=value" for each anomaly counter that is not zero ("none"), then a newline; those
 * that enabling or disabling explains (expected: the reply's "anomalies_expected", may be
 * NULL) left out, and said on a line of their own. */
void cli_write_anomalies(const char *prefix, struct json_object *an, struct json_object *expected)
{
	struct json_object_iterator it = json_object_iter_begin(an), end = json_object_iter_end(an);
	int any = 0, explained = 0;

	printf("%s", prefix);
	for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
		const char *name = json_object_iter_peek_name(&it);
		int64_t v = json_object_get_int64(json_object_iter_peek_value(&it));

		v -= expected ? geti(expected, name) : 0;
		if (v > 0) {
			printf(" %s=%lld", name, (long long)v);
			any = 1;
		}
	}
	printf("%s\n", any ? "" : " none");
	if (!expected)
		return;
	it = json_object_iter_begin(expected);
	end = json_object_iter_end(expected);
	for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
		int64_t v = json_object_get_int64(json_object_iter_peek_value(&it));

		if (v > 0 && !explained++)
			printf("at enable and disable (expected: a thread was inside):");
		if (v > 0)
			printf(" %s=%lld", json_object_iter_peek_name(&it), (long long)v);
	}
	if (explained)
		printf("\n");
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
		return cli_fmt_ns(ns, buf, len);
	snprintf(k, sizeof(k), "%suncertainty_ns", prefix);
	snprintf(buf, len, "<%s", cli_fmt_ns(getd(o, k), u, sizeof(u)));
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
		       (long long)geti(x, "samples"), cli_fmt_ns(getd(x, "sampled_ns"), b1, 40),
		       cli_fmt_ns(getd(x, "sampled_stderr_ns"), b2, 40), 100 * getd(x, "share"));
	}
	if (json_object_object_get_ex(sm, "base", &x))
		printf("%-22s %10lld %10s %10s %5.1f%%\n", "(outside regions)",
		       (long long)geti(x, "samples"), cli_fmt_ns(getd(x, "sampled_ns"), b1, 40),
		       cli_fmt_ns(getd(x, "sampled_stderr_ns"), b2, 40), 100 * getd(x, "share"));
	if (geti(sm, "probe_samples") > 0)	/* not in the shares above */
		printf("%-22s %10lld %10s   (featprofd's uprobes: left out)\n", "(probe handling)",
		       (long long)geti(sm, "probe_samples"),
		       cli_fmt_ns(getd(sm, "probe_ns"), b1, 40));
}

/* Whether feature name has a region that is not enabled among regs: its figure is then
 * of the enabled ones only (an interaction region enabled for another feature). */
static int partial(struct json_object *regs, const char *name)
{
	size_t i, k;

	for (i = 0; regs && i < json_object_array_length(regs); i++) {
		struct json_object *r = json_object_array_get_idx(regs, i);
		struct json_object *fl = geta(r, "features");

		if (json_object_get_boolean(json_object_object_get(r, "enabled")))
			continue;
		for (k = 0; fl && k < json_object_array_length(fl); k++)
			if (!strcmp(json_object_get_string(json_object_array_get_idx(fl, k)), name))
				return 1;
	}
	return 0;
}

/* What the marks mean, under the table. */
double cli_probes_ns(struct json_object *st)
{
	struct json_object *regs = geta(st, "regions"), *v;
	double ns;
	size_t i;

	if (json_object_object_get_ex(st, "probes_ns", &v))
		return json_object_get_double(v);
	ns = getd(st, "base_raw_ns") - getd(st, "base_ns");
	for (i = 0; regs && i < json_object_array_length(regs); i++) {
		struct json_object *r = json_object_array_get_idx(regs, i);

		ns += getd(r, "raw_exclusive_ns") - getd(r, "exclusive_ns");
	}
	return ns > 0 ? ns : 0;
}

/*
 * The time outside regions, then featprof's own (cli_probes_ns) on a line of its own:
 * in no figure of the table. Where the probes cost more than the regions' time, the
 * in-process build is said, which times a region for ~30 ns a pair instead of a trap's
 * microseconds (usdt/featprof_inprocess.h).
 */
static void print_outside(struct json_object *st, struct json_object *regs)
{
	double probes = cli_probes_ns(st), in = 0;
	char b1[40];
	size_t i;

	printf("%-22s %10s\n", "(outside regions)",
	       cli_fmt_ns((double)geti(st, "base_ns"), b1, 40));
	if (probes <= 0)
		return;
	printf("%-22s %10s  (probe time taken out of the times above)\n", "(featprof's probes)",
	       cli_fmt_ns(probes, b1, 40));
	for (i = 0; regs && i < json_object_array_length(regs); i++)
		in += getd(json_object_array_get_idx(regs, i), "exclusive_ns");
	if (probes > in && getd(json_object_object_get(st, "compensation"), "pair_ns") > 100)
		printf("the probes cost more than the regions' time: the in-process build times "
		       "such\nregions for ~30 ns a pair (pkg-config --cflags --libs "
		       "featprof-inprocess)\n");
}

static void print_legend(int partials, int calls)
{
	printf("\n±: the uncertainty, %% of the time beside it (about one standard error)\n"
	       "?: the probes cost more than the time, <U: it is below U\n"
	       "SHARE: of the measured threads' time (a region may be in several features: "
	       "they\noverlap)\n");
	if (partials)
		printf("*: a feature some of whose regions are not enabled (its figure: those "
		       "on)\n");
	if (calls)
		printf("calls only: C++ functions' calls counted at their entries, not timed "
		       "(an\nexception must not meet a return probe)\n");
}

/* The table's first lines: what it is of (a process, or an executable's processes). */
static void print_title(struct json_object *st, long pid, const char *title)
{
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
	if (json_object_get_boolean(json_object_object_get(st, "exited")))
		printf("pid %ld has exited: these are its last figures\n", pid);
}

void cli_write_table(struct json_object *st, long pid, const char *title)
{
	struct json_object *regs = geta(st, "regions"), *feats = geta(st, "features"), *an;
	struct json_object *sets = geta(st, "feature_sets"), *arr[4096];
	size_t i, n = 0;
	int wide = term_width() >= 122, mean = term_width() >= 88;
	char b1[40], b2[40], b3[40], b4[40], b5[40], b6[40], nb[80], fname[80], dn[1024];
	double total = (double)geti(st, "base_ns");
	int partials = 0, calls = 0;

	print_title(st, pid, title);
	/* the measured threads' time: outside regions plus every set (sets do not overlap) */
	for (i = 0; sets && i < json_object_array_length(sets); i++)
		total += (double)geti(json_object_array_get_idx(sets, i), "ns");
	printf("\n%-22s %10s %4s %10s %10s %6s\n", "FEATURE", "WALL", "±", "CPU", "OFF-CPU",
	       "SHARE");
	for (i = 0; feats && i < json_object_array_length(feats); i++) {
		struct json_object *f = json_object_array_get_idx(feats, i);
		double ns = (double)geti(f, "ns");
		int part = partial(regs, gets_(f, "name"));

		partials += part;
		snprintf(fname, sizeof(fname), "%s%s",
			 cut(gets_(f, "name"), part ? 21 : 22, nb, 64), part ? "*" : "");
		printf("%-22s %10s %4s %10s %10s %5.1f%%\n", fname,
		       fmt_comp(f, "", ns, b1, 40),
		       dominated(f, "") ? "?" : unc_pct(ns, (double)geti(f, "uncertainty_ns"),
							 b2, 40),
		       cli_fmt_ns((double)geti(f, "cpu_ns"), b3, 40),
		       cli_fmt_ns((double)geti(f, "offcpu_ns"), b4, 40),
		       total > 0 ? ns / total * 100 : 0);
	}
	print_outside(st, regs);
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
		const char *rn = cli_fmt_region(gets_(r, "name"), dn, sizeof(dn));

		for (k = 0; wide && fl && k < json_object_array_length(fl); k++) {
			strncat(feats_s, k ? "," : "  ", sizeof(feats_s) - strlen(feats_s) - 1);
			strncat(feats_s, json_object_get_string(json_object_array_get_idx(fl, k)),
				sizeof(feats_s) - strlen(feats_s) - 1);
		}
		if (mean)
			snprintf(mean_s, sizeof(mean_s), " %9s",
				 cli_fmt_ns((double)geti(r, "mean_ns"), b6, 40));
		if (!strcmp(gets_(r, "measured"), "calls")) {	/* counted, not timed */
			calls++;
			printf("%-24s %8lld %9s %4s %9s %9s %9s%s%s\n",
			       cut(rn, 24, nb, sizeof(nb)), (long long)geti(r, "count"), "calls",
			       on ? "only" : "off", "-", "-", "-", mean ? "         -" : "",
			       feats_s);
			continue;
		}
		printf("%-24s %8lld %9s %4s %9s %9s %9s%s%s\n",
		       cut(rn, 24, nb, sizeof(nb)), (long long)geti(r, "count"),
		       fmt_comp(r, "exclusive_", ex, b1, 40),
		       !on ? "off" : dominated(r, "exclusive_") ? "?"
			   : unc_pct(ex, (double)geti(r, "exclusive_uncertainty_ns"), b2, 40),
		       fmt_comp(r, "", (double)geti(r, "inclusive_ns"), b3, 40),
		       cli_fmt_ns((double)geti(r, "cpu_ns"), b4, 40),
		       cli_fmt_ns((double)geti(r, "offcpu_ns"), b5, 40), mean_s, feats_s);
	}
	if (json_object_object_get_ex(st, "anomalies", &an))
		cli_write_anomalies("\nanomalies:", an,
				    json_object_object_get(st, "anomalies_expected"));
	print_legend(partials, calls);
}
