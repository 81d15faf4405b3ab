// SPDX-License-Identifier: GPL-2.0
/*
 * featprof report's page (cli/commands/report.c): one self-contained HTML page (inline
 * CSS and SVG, no script, nothing from the network) of a target's stats: from the daemon
 * for a PID (figures since enable/reset), or from a file of `featprof save` or `featprof
 * export --format json` (its "stats").
 * Sections, each with an id the test suite looks for:
 *   #features     per feature: wall time as a bar split into CPU, preempted, blocked
 *   #flamegraph   the region paths as an icicle graph (outermost on top; width =
 *                 inclusive time of the path: its own exclusive time plus its children's)
 *   #drilldown    after sample --stacks: per feature, an icicle graph of its samples'
 *                 open regions, then their call stacks (outermost first): the functions
 *                 its time goes to (width: sampled CPU time)
 *   #histograms   per region: the kernel's log2 buckets of instance time
 *   #regions      per region table: count, inclusive, exclusive, mean, min, max
 *   #sets         feature sets (which features were open together) and base
 *   #anomalies    events counted and never attributed
 *   #calibration  the probe cost the figures were compensated with
 * Figures are compensated like stats'; histograms and min/max are raw per instance.
 * featprof report A... --to B... (run files of run --stacks) writes another page:
 *   #diffgraph    B's call stacks (each side a mean run, B's speed factor taken out) as
 *                 an icicle graph, each frame coloured by the change of its inclusive time
 *                 from A's frame of the same path: red slower, blue faster, grey within 1%
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/core/core.h"
#include "writers.h"
#include "usdt/featprof_abi.h"	/* FEATPROF_VERSION */

#define W 960		/* drawing width, px */
#define ROW 18		/* flame graph row height */

static void esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

/* A stable colour per name (warm hues, as flame graphs are). */
static void colour(FILE *f, const char *name)
{
	unsigned h = 2166136261u;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	fprintf(f, "hsl(%u,%u%%,%u%%)", 10 + h % 40, 70 + (h >> 8) % 20, 55 + (h >> 16) % 10);
}

static const char css[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1000px}"
	"h1{font-size:20px}h2{font-size:16px;margin-top:28px;border-bottom:1px solid #ddd}"
	".n{white-space:nowrap;text-align:right;font-variant-numeric:tabular-nums;padding:0 8px}"
	"table.t{border-collapse:collapse}table.t td,table.t th{padding:2px 8px;"
	"border-bottom:1px solid #eee;text-align:left}"
	".bars th{text-align:left;padding-right:8px;font-weight:600}"
	".cpu{fill:#d9534f;background:#d9534f}.pre{fill:#f0ad4e;background:#f0ad4e}"
	".blk{fill:#5bc0de;background:#5bc0de}.k{padding:0 6px;color:#fff}"
	".flame text{font:11px sans-serif;fill:#000;pointer-events:none}"
	".flame rect{stroke:#fff;stroke-width:.5}"
	".hists{display:flex;flex-wrap:wrap;gap:12px}.hist{margin:0}"
	".hist rect{fill:#6f8fcf}.hist text{font:8px sans-serif}"
	"figcaption{font-weight:600}.d{font-size:12px;color:#555}"
	".k.slower{background:rgb(255,80,80)}.k.faster{background:rgb(80,80,255)}";

static void features(FILE *f, struct json_object *st)
{
	struct json_object *a = geta(st, "features");
	double max = 1;
	size_t k;
	char b1[32], b2[32], b3[32], b4[32];

	fputs("<section id=\"features\"><h2>Time per feature</h2>\n<p>Wall time with the "
	      "feature open, split into <span class=\"k cpu\">on CPU</span> <span class=\"k "
	      "pre\">preempted</span> <span class=\"k blk\">blocked</span>.</p>\n", f);
	for (k = 0; a && k < json_object_array_length(a); k++)
		if (getd(json_object_array_get_idx(a, k), "ns") > max)
			max = getd(json_object_array_get_idx(a, k), "ns");
	fputs("<table class=\"bars\">\n", f);
	for (k = 0; a && k < json_object_array_length(a); k++) {
		struct json_object *x = json_object_array_get_idx(a, k);
		double ns = getd(x, "ns"), pre = getd(x, "offcpu_preempted_ns");
		double blk = getd(x, "offcpu_blocked_ns"), cpu = ns - pre - blk;
		double s = 480 / max;
		char sampled[96] = "", b5[32], b6[32];
		struct json_object *v;

		if (json_object_object_get_ex(x, "sampled_ns", &v))	/* featprof sample */
			snprintf(sampled, sizeof(sampled), "; sampled CPU %s ± %s",
				 cli_fmt_ns(getd(x, "sampled_ns"), b5, sizeof(b5)),
				 cli_fmt_ns(getd(x, "sampled_stderr_ns"), b6, sizeof(b6)));

		if (cpu < 0)
			cpu = 0;
		fputs("<tr class=\"feature\"><th>", f);
		esc(f, gets_(x, "name"));
		fprintf(f, "</th><td><svg width=\"%d\" height=\"14\" role=\"img\">"
			"<rect class=\"cpu\" x=\"0\" width=\"%.1f\" height=\"14\"/>"
			"<rect class=\"pre\" x=\"%.1f\" width=\"%.1f\" height=\"14\"/>"
			"<rect class=\"blk\" x=\"%.1f\" width=\"%.1f\" height=\"14\"/></svg></td>"
			"<td class=\"n\">%s</td><td class=\"d\">cpu %s, preempted %s, blocked %s%s"
			"</td></tr>\n", 480, cpu * s, cpu * s, pre * s, (cpu + pre) * s, blk * s,
			cli_fmt_ns(ns, b1, sizeof(b1)), cli_fmt_ns(cpu, b2, sizeof(b2)),
			cli_fmt_ns(pre, b3, sizeof(b3)), cli_fmt_ns(blk, b4, sizeof(b4)), sampled);
	}
	fputs("</table></section>\n", f);
}

/* --- flame graph (icicle) ----------------------------------------------------------- */

struct node {
	char name[128];
	double self, total;
	int child, next;	/* first child, next sibling: indexes, -1 = none */
};

struct tree {
	struct node *n;
	int len, cap;
};

static int node_new(struct tree *t, const char *name)
{
	if (t->len == t->cap) {
		int cap = t->cap ? 2 * t->cap : 64;
		struct node *n = realloc(t->n, (size_t)cap * sizeof(*n));

		if (!n)
			return -1;
		t->n = n;
		t->cap = cap;
	}
	memset(&t->n[t->len], 0, sizeof(t->n[0]));
	snprintf(t->n[t->len].name, sizeof(t->n[0].name), "%s", name);
	t->n[t->len].child = t->n[t->len].next = -1;
	return t->len++;
}

static int child_of(struct tree *t, int parent, const char *name)
{
	int c, k;

	for (c = t->n[parent].child; c >= 0; c = t->n[c].next)
		if (!strcmp(t->n[c].name, name))
			return c;
	k = node_new(t, name);
	if (k < 0)
		return -1;
	t->n[k].next = t->n[parent].child;
	t->n[parent].child = k;
	return k;
}

static double totals(struct tree *t, int i)
{
	int c;

	t->n[i].total = t->n[i].self;
	for (c = t->n[i].child; c >= 0; c = t->n[c].next)
		t->n[i].total += totals(t, c);
	return t->n[i].total;
}

static int depth_of(struct tree *t, int i)
{
	int c, d = 0, x;

	for (c = t->n[i].child; c >= 0; c = t->n[c].next)
		if ((x = depth_of(t, c)) > d)
			d = x;
	return d + 1;
}

static void draw(FILE *f, struct tree *t, int i, double x, int y, double scale, double all)
{
	struct node *n = &t->n[i];
	double w = n->total * scale, cx = x;
	char b[32], b2[32];
	int c;

	if (w < 0.5)
		return;
	fprintf(f, "<g class=\"frame\"><title>");
	esc(f, n->name);
	fprintf(f, ": %s inclusive (%.1f%%), %s exclusive</title><rect x=\"%.1f\" y=\"%d\" "
		"width=\"%.1f\" height=\"%d\" fill=\"", cli_fmt_ns(n->total, b, sizeof(b)),
		all > 0 ? 100 * n->total / all : 0, cli_fmt_ns(n->self, b2, sizeof(b2)), x,
		y, w, ROW - 1);
	colour(f, n->name);
	fprintf(f, "\"/>");
	if (w > 40) {
		fprintf(f, "<text x=\"%.1f\" y=\"%d\">", x + 3, y + ROW - 5);
		esc(f, n->name);
		fputs("</text>", f);
	}
	fputs("</g>\n", f);
	for (c = n->child; c >= 0; c = t->n[c].next) {
		draw(f, t, c, cx, y + ROW, scale, all);
		cx += t->n[c].total * scale;
	}
}

static const char *name_at(struct json_object *a, size_t k)
{
	return json_object_get_string(json_object_array_get_idx(a, k));
}

/* One icicle graph of tree t (its root's total > 0). */
static void icicle(FILE *f, struct tree *t, int root)
{
	int h = depth_of(t, root) * ROW;

	fprintf(f, "<svg class=\"flame\" width=\"%d\" height=\"%d\" role=\"img\">\n", W, h);
	draw(f, t, root, 0, 0, W / t->n[root].total, t->n[root].total);
	fputs("</svg>\n", f);
}

/* Sample x of a sampling's stacks (fns: its functions, nf of them) into t under root:
 * its open regions, outermost first, then its stack; its samples x w into the frame. */
static void add_sample(struct tree *t, int root, struct json_object *x,
		       struct json_object *fns, size_t nf, double w)
{
	struct json_object *rl = geta(x, "regions"), *stk = geta(x, "stack"), *fn;
	int at = root;
	size_t j;

	for (j = 0; rl && at >= 0 && j < json_object_array_length(rl); j++)
		at = child_of(t, at, name_at(rl, j));
	for (j = 0; stk && at >= 0 && j < json_object_array_length(stk); j++) {
		int64_t id = json_object_get_int64(json_object_array_get_idx(stk, j));

		fn = id >= 0 && (size_t)id < nf ? json_object_array_get_idx(fns, (size_t)id)
						: NULL;
		at = child_of(t, at, fn ? gets_(fn, "name") : "[unknown]");
	}
	if (at >= 0)
		t->n[at].self += (double)geti(x, "samples") * w;
}

/* A feature's sampled stacks: its regions, then its functions, into t under root. */
static void feature_stacks(struct tree *t, int root, struct json_object *sm, const char *feat)
{
	struct json_object *sk = json_object_object_get(sm, "stacks");
	struct json_object *fns = geta(sk, "functions"), *a = geta(sk, "samples");
	size_t k, j, nf = fns ? json_object_array_length(fns) : 0;

	for (k = 0; a && k < json_object_array_length(a); k++) {
		struct json_object *x = json_object_array_get_idx(a, k), *fl = geta(x, "features");
		int in = 0;

		for (j = 0; fl && j < json_object_array_length(fl); j++)
			in |= !strcmp(name_at(fl, j), feat);
		if (in)
			add_sample(t, root, x, fns, nf, getd(sm, "period_ns"));
	}
}

/* --- differential flame graph (featprof report A... --to B...) --------------------- */

/* Every sample of run doc into t under root, weighted by w (over the side's runs: a mean
 * run). */
static void run_stacks(struct tree *t, int root, struct json_object *doc, double w)
{
	struct json_object *sm = json_object_object_get(doc, "sampling");
	struct json_object *sk = json_object_object_get(sm, "stacks");
	struct json_object *fns = geta(sk, "functions"), *a = geta(sk, "samples");
	size_t k, nf = fns ? json_object_array_length(fns) : 0;

	for (k = 0; a && k < json_object_array_length(a); k++)
		add_sample(t, root, json_object_array_get_idx(a, k), fns, nf,
			   w * getd(sm, "period_ns"));
}

/* The child of node i named name in t, or -1 (nothing made). */
static int find_child(const struct tree *t, int i, const char *name)
{
	int c;

	for (c = i >= 0 ? t->n[i].child : -1; c >= 0; c = t->n[c].next)
		if (!strcmp(t->n[c].name, name))
			return c;
	return -1;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The ratios B/A of the self times of the call paths (frames) below node ib of B and ia
 * of A that hold 1% of A's time (all) or more, into r (at most max; *n of them). */
static void path_ratios(const struct tree *tb, int ib, const struct tree *ta, int ia,
			double all, double *r, int *n, int max)
{
	int c;

	if (ia < 0)
		return;
	if (ta->n[ia].self >= 0.01 * all && tb->n[ib].self > 0 && *n < max)
		r[(*n)++] = tb->n[ib].self / ta->n[ia].self;
	for (c = tb->n[ib].child; c >= 0; c = tb->n[c].next)
		path_ratios(tb, c, ta, find_child(ta, ia, tb->n[c].name), all, r, n, max);
}

/* B's speed against A: the median ratio B/A of the self times of the call paths with 1%
 * of A's time or more (1 where none). Runs of one build differ by a few % in every
 * function here (the machine's speed), which is not a change of the code; a path, not a
 * function, so that a change of one caller's work in a leaf they share (a memcpy) does
 * not move every caller's. */
static double speed_factor(const struct tree *ta, const struct tree *tb)
{
	static double r[4096];
	int n = 0;

	path_ratios(tb, 0, ta, 0, ta->n[0].total, r, &n, 4096);
	if (!n)
		return 1;
	qsort(r, (size_t)n, sizeof(r[0]), cmp_dbl);
	return n % 2 ? r[n / 2] : (r[n / 2 - 1] + r[n / 2]) / 2;
}

/* Frame i of B's tree (its A counterpart ia, -1: none) and its children, coloured by the
 * change of its inclusive time: red slower in B, blue faster, grey within 1%; new in B
 * dark red. B's times are divided by its speed factor sf before. */
static void draw_diff(FILE *f, const struct tree *tb, int i, const struct tree *ta, int ia,
		      double x, int y, double scale, double sf)
{
	const struct node *n = &tb->n[i];
	double w = n->total * scale, cx = x, b = n->total / sf, a = ia >= 0 ? ta->n[ia].total : 0;
	double r = (b - a) / (a > b ? a : b);
	int c, g = (int)(230 - 180 * (r < 0 ? -r : r));
	char b1[32], b2[32], b3[32];

	if (w < 0.5)
		return;
	fputs("<g class=\"frame\"><title>", f);
	esc(f, n->name);
	fprintf(f, ": A %s, B %s, %s%s (%+.1f%%)</title><rect x=\"%.1f\" y=\"%d\" "
		"width=\"%.1f\" height=\"%d\" fill=\"", cli_fmt_ns(a, b1, sizeof(b1)),
		cli_fmt_ns(b, b2, sizeof(b2)), b >= a ? "+" : "", cli_fmt_ns(b - a, b3, sizeof(b3)),
		a > 0 ? 100 * (b - a) / a : 100.0, x, y, w, ROW - 1);
	if (ia < 0)
		fputs("rgb(160,0,0)", f);
	else if (r > -0.01 && r < 0.01)
		fputs("rgb(221,221,221)", f);
	else
		fprintf(f, r > 0 ? "rgb(255,%d,%d)" : "rgb(%d,%d,255)", g, g);
	fprintf(f, "\" class=\"%s\"/>", ia < 0 ? "new" : r >= 0.01 ? "slower"
					: r <= -0.01 ? "faster" : "same");
	if (w > 40) {
		fprintf(f, "<text x=\"%.1f\" y=\"%d\">", x + 3, y + ROW - 5);
		esc(f, n->name);
		fputs("</text>", f);
	}
	fputs("</g>\n", f);
	for (c = n->child; c >= 0; c = tb->n[c].next) {
		draw_diff(f, tb, c, ta, find_child(ta, ia, tb->n[c].name), cx, y + ROW, scale, sf);
		cx += tb->n[c].total * scale;
	}
}

int cli_write_html_diff(FILE *f, struct json_object **a, int na, struct json_object **b,
			int nb)
{
	struct tree ta = { 0 }, tb = { 0 };
	int ra = node_new(&ta, "all"), rb = node_new(&tb, "all"), k;
	double sf;
	char b1[32], b2[32];

	for (k = 0; ra >= 0 && k < na; k++)
		run_stacks(&ta, ra, a[k], 1.0 / na);
	for (k = 0; rb >= 0 && k < nb; k++)
		run_stacks(&tb, rb, b[k], 1.0 / nb);
	if (ra < 0 || rb < 0 || totals(&ta, ra) <= 0 || totals(&tb, rb) <= 0) {
		free(ta.n);
		free(tb.n);
		return -EINVAL;
	}
	sf = speed_factor(&ta, &tb);
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	      "<title>featprof differential report</title><style>", f);
	fputs(css, f);
	fprintf(f, "</style></head><body>\n<h1>featprof: B against A, by call stack</h1>\n"
		"<p id=\"summary\">A: %d run%s, %s of sampled CPU time a run; B: %d run%s, %s a "
		"run; B's speed factor %.3f (the median ratio B/A of the call paths' self times "
		"with 1%% of A's or more: the machine's speed between the runs, taken out of B's "
		"figures below).</p>\n<section id=\"diffgraph\"><h2>Differential flame graph"
		"</h2>\n<p>B's call stacks (open regions first, then functions, outermost on top; "
		"width: B's sampled CPU time), each frame coloured by the change of its inclusive "
		"time from A: <span class=\"k slower\">slower in B</span> <span class=\"k "
		"faster\">faster in B</span> (the deeper, the larger the change), grey within "
		"1%%, dark red: not in A. Hover for A, B and the change. The change of one "
		"function with its interval and significance: featprof diff --functions.</p>\n",
		na, na == 1 ? "" : "s", cli_fmt_ns(ta.n[ra].total, b1, sizeof(b1)), nb,
		nb == 1 ? "" : "s", cli_fmt_ns(tb.n[rb].total, b2, sizeof(b2)), sf);
	fprintf(f, "<svg class=\"flame\" width=\"%d\" height=\"%d\" role=\"img\">\n", W,
		depth_of(&tb, rb) * ROW);
	draw_diff(f, &tb, rb, &ta, ra, 0, 0, W / tb.n[rb].total, sf);
	fputs("</svg>\n</section>\n<p><small>featprof " FEATPROF_VERSION
	      "</small></p></body></html>\n", f);
	free(ta.n);
	free(tb.n);
	return ferror(f) ? -EIO : 0;
}

static void drilldown(FILE *f, struct json_object *st)
{
	struct json_object *sm = json_object_object_get(st, "sampling"), *feats;
	size_t k;

	if (!sm || !json_object_object_get(sm, "stacks"))
		return;
	fputs("<section id=\"drilldown\"><h2>Inside each feature: sampled call stacks</h2>\n"
	      "<p>Per feature (featprof sample --stacks): its open regions, outermost first, "
	      "then the call stacks sampled under them; width: sampled CPU time. Hover for "
	      "figures.</p>\n", f);
	feats = geta(sm, "features");
	for (k = 0; feats && k < json_object_array_length(feats); k++) {
		const char *name = gets_(json_object_array_get_idx(feats, k), "name");
		struct tree t = { 0 };
		int root = node_new(&t, name);

		if (root < 0)
			break;
		feature_stacks(&t, root, sm, name);
		if (totals(&t, root) > 0) {
			fputs("<h3>", f);
			esc(f, name);
			fputs("</h3>\n", f);
			icicle(f, &t, root);
		}
		free(t.n);
	}
	fputs("</section>\n", f);
}

static void flamegraph(FILE *f, struct json_object *st)
{
	struct json_object *paths = geta(st, "paths");
	struct tree t = { 0 };
	int root = node_new(&t, "all regions");
	size_t k, j;

	fputs("<section id=\"flamegraph\"><h2>Region flame graph</h2>\n<p>Outermost region "
	      "on top; width: inclusive time of the path. Hover for figures.</p>\n", f);
	for (k = 0; root >= 0 && paths && k < json_object_array_length(paths); k++) {
		struct json_object *p = json_object_array_get_idx(paths, k);
		struct json_object *names = geta(p, "path");
		int at = root;

		for (j = 0; names && at >= 0 && j < json_object_array_length(names); j++)
			at = child_of(&t, at, json_object_get_string(
						       json_object_array_get_idx(names, j)));
		if (at >= 0 && names && json_object_array_length(names))
			t.n[at].self += getd(p, "ns");
	}
	if (root < 0 || totals(&t, root) <= 0) {
		fputs("<p class=\"none\">No region time yet.</p></section>\n", f);
		free(t.n);
		return;
	}
	icicle(f, &t, root);
	fputs("</section>\n", f);
	free(t.n);
}

static void histograms(FILE *f, struct json_object *st)
{
	struct json_object *regs = geta(st, "regions");
	size_t k, b;
	char b1[32], b2[32], dn[1024];

	fputs("<section id=\"histograms\"><h2>Instance time per region</h2>\n<p>The kernel's "
	      "log2 buckets of each instance's raw inclusive time.</p>\n<div class=\"hists\">",
	      f);
	for (k = 0; regs && k < json_object_array_length(regs); k++) {
		struct json_object *r = json_object_array_get_idx(regs, k);
		struct json_object *h = geta(r, "histogram");
		int64_t max = 1;
		size_t n = h ? json_object_array_length(h) : 0;

		if (!n)
			continue;
		for (b = 0; b < n; b++)
			if (geti(json_object_array_get_idx(h, b), "count") > max)
				max = geti(json_object_array_get_idx(h, b), "count");
		fputs("<figure class=\"hist\"><figcaption>", f);
		esc(f, cli_fmt_region(gets_(r, "name"), dn, sizeof(dn)));
		fprintf(f, "</figcaption><svg width=\"%zu\" height=\"84\" role=\"img\">",
			n * 34 + 4);
		for (b = 0; b < n; b++) {
			struct json_object *e = json_object_array_get_idx(h, b);
			double hh = 60.0 * (double)geti(e, "count") / (double)max;

			fprintf(f, "<g><title>%s to %s: %lld</title><rect x=\"%zu\" y=\"%.1f\" "
				"width=\"30\" height=\"%.1f\"/>",
				cli_fmt_ns((double)geti(e, "ge_ns"), b1, sizeof(b1)),
				cli_fmt_ns(2.0 * (double)geti(e, "ge_ns"), b2, sizeof(b2)),
				(long long)geti(e, "count"), b * 34 + 2, 62 - hh, hh);
			if (!(b % 2))	/* every other lower bound: they would overlap */
				fprintf(f, "<text x=\"%zu\" y=\"80\">%s</text>", b * 34 + 2,
					cli_fmt_ns((double)geti(e, "ge_ns"), b1, sizeof(b1)));
			fputs("</g>", f);
		}
		fputs("</svg></figure>\n", f);
	}
	fputs("</div></section>\n", f);
}

static void regions(FILE *f, struct json_object *st)
{
	struct json_object *regs = geta(st, "regions");
	size_t k;
	char b[6][32], dn[1024];

	fputs("<section id=\"regions\"><h2>Regions</h2>\n<table class=\"t\"><tr><th>region"
	      "</th><th>features</th><th>count</th><th>inclusive</th><th>exclusive</th>"
	      "<th>mean</th><th>min (raw)</th><th>max (raw)</th></tr>\n", f);
	for (k = 0; regs && k < json_object_array_length(regs); k++) {
		struct json_object *r = json_object_array_get_idx(regs, k);
		struct json_object *fl = geta(r, "features");
		size_t j;

		fputs("<tr class=\"region\"><td>", f);
		esc(f, cli_fmt_region(gets_(r, "name"), dn, sizeof(dn)));
		fputs("</td><td>", f);
		for (j = 0; fl && j < json_object_array_length(fl); j++) {
			fputs(j ? ", " : "", f);
			esc(f, json_object_get_string(json_object_array_get_idx(fl, j)));
		}
		fprintf(f, "</td><td class=\"n\">%lld</td><td class=\"n\">%s</td><td class=\"n\">"
			"%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s"
			"</td></tr>\n", (long long)geti(r, "count"),
			cli_fmt_ns(getd(r, "inclusive_ns"), b[0], 32),
			cli_fmt_ns(getd(r, "exclusive_ns"), b[1], 32),
			cli_fmt_ns(getd(r, "mean_ns"), b[2], 32),
			cli_fmt_ns((double)geti(r, "min_ns"), b[3], 32),
			cli_fmt_ns((double)geti(r, "max_ns"), b[4], 32));
	}
	fputs("</table></section>\n", f);
}

static void sets(FILE *f, struct json_object *st)
{
	struct json_object *a = geta(st, "feature_sets");
	size_t k, j;
	char b[32];

	fputs("<section id=\"sets\"><h2>Feature sets (interactions)</h2>\n<table class=\"t\">"
	      "<tr><th>features open together</th><th>time</th></tr>\n", f);
	for (k = 0; a && k < json_object_array_length(a); k++) {
		struct json_object *x = json_object_array_get_idx(a, k), *fl = geta(x, "features");

		fputs("<tr class=\"set\"><td>", f);
		for (j = 0; fl && j < json_object_array_length(fl); j++) {
			fputs(j ? " + " : "", f);
			esc(f, json_object_get_string(json_object_array_get_idx(fl, j)));
		}
		fprintf(f, "</td><td class=\"n\">%s</td></tr>\n", cli_fmt_ns(getd(x, "ns"), b, 32));
	}
	fprintf(f, "<tr class=\"set\"><td><i>base</i> (no region open)</td><td class=\"n\">%s"
		"</td></tr>\n</table></section>\n", cli_fmt_ns(getd(st, "base_ns"), b, 32));
}

static void anomalies(FILE *f, struct json_object *st)
{
	struct json_object *an;
	int any = 0;

	fputs("<section id=\"anomalies\"><h2>Anomalies</h2>\n<table class=\"t\">", f);
	if (json_object_object_get_ex(st, "anomalies", &an)) {
		json_object_object_foreach(an, k, v) {
			any = 1;
			fputs("<tr class=\"anomaly\"><td>", f);
			esc(f, k);
			fprintf(f, "</td><td class=\"n\">%lld</td></tr>\n",
				(long long)json_object_get_int64(v));
		}
	}
	fprintf(f, "%s</table></section>\n", any ? "" : "<tr><td>none reported</td></tr>");
}

static void calibration(FILE *f, struct json_object *st)
{
	struct json_object *c;
	char b[4][32];

	fputs("<section id=\"calibration\"><h2>Calibration</h2>\n", f);
	if (!json_object_object_get_ex(st, "compensation", &c)) {
		fputs("<p>No calibration in these figures.</p></section>\n", f);
		return;
	}
	fprintf(f,
		"<p>Figures are compensated for the probes' own cost: pair (begin + end) "
		"%s ± %s, bias per instance %s ± %s, over %lld rounds.</p></section>\n",
		cli_fmt_ns(getd(c, "pair_ns"), b[0], 32),
		cli_fmt_ns(getd(c, "pair_sd_ns"), b[1], 32),
		cli_fmt_ns(getd(c, "bias_ns"), b[2], 32),
		cli_fmt_ns(getd(c, "bias_sd_ns"), b[3], 32), (long long)geti(c, "rounds"));
}

int cli_write_html(FILE *f, struct json_object *st, const char *source)
{
	char b[32];
	time_t now = time(NULL);

	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	      "<title>featprof report</title><style>", f);
	fputs(css, f);
	fputs("</style></head><body>\n<h1>featprof: ", f);
	esc(f, gets_(st, "comm"));
	fprintf(f, " (pid %lld)</h1>\n<p id=\"summary\">Source: ", (long long)geti(st, "pid"));
	esc(f, source);
	fprintf(f, "; measured for %s; written %s</p>\n",
		cli_fmt_ns((double)geti(st, "elapsed_ns"), b, sizeof(b)), ctime(&now));
	features(f, st);
	flamegraph(f, st);
	drilldown(f, st);
	histograms(f, st);
	regions(f, st);
	sets(f, st);
	anomalies(f, st);
	calibration(f, st);
	fputs("<p><small>featprof " FEATPROF_VERSION "</small></p></body></html>\n", f);
	return ferror(f) ? -EIO : 0;
}

/* The stats in a file of save or export --format json; NULL after a line. */
