// SPDX-License-Identifier: GPL-2.0
/*
 * featprof model --functions: performance-influence models of functions (the coarse
 * step of the white-box approach: docs/MODELS.md, "Functions").
 *
 * A run file of `featprof run --stacks` holds its samples' functions (sampling.functions:
 * every sample's, with self_ns, the function's sampled self CPU time, and its standard
 * error). Each function is a unit of the model as a region is, its time its self CPU
 * time, its variance the sampling's; no feature names a function, so its options are
 * those the runs show it depends on (fpm_find_unnamed), and its terms every product of
 * them, as a region's. A function is relevant when its mean time over the runs is at
 * least m->fn_min of their mean sampled CPU time; the others are left out (their count
 * said).
 *
 * An influence reaches a function through data when its option has regions of its own
 * in the runs (a feature of that name) and none of them holds the function in any run:
 * the option's code changed what the function does (a table, a window, a level) without
 * running it.
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/core/core.h"
#include "model_impl.h"

/* The name of run doc's executable without its folders ("" if none). */
static const char *exe_base(struct json_object *doc)
{
	const char *exe = gets_(doc, "exe"), *sl = strrchr(exe, '/');

	return sl ? sl + 1 : exe;
}

/* Each region's features, once ({region: [feature, ...]}), and the regions that hold
 * u's function in this run's samples. */
static void note_regions(struct fpm_model *m, struct json_object *sm)
{
	struct json_object *regs = geta(sm, "regions");
	size_t k, j;

	for (k = 0; regs && k < json_object_array_length(regs); k++) {
		struct json_object *x = json_object_array_get_idx(regs, k), *fl = NULL;
		struct json_object *fns = geta(x, "functions");
		const char *rn = gets_(x, "name");

		if (!json_object_object_get_ex(m->region_feats, rn, NULL)) {
			json_object_object_get_ex(x, "features", &fl);
			json_object_object_add(m->region_feats, rn,
					       fl ? json_object_get(fl) : json_object_new_array());
		}
		for (j = 0; fns && j < json_object_array_length(fns); j++) {
			struct json_object *f = json_object_array_get_idx(fns, j);
			int i;

			if (!geti(f, "total_samples"))
				continue;
			for (i = 0; i < m->nunits; i++)
				if (!strcmp(m->units[i].name, gets_(f, "name")) &&
				    m->units[i].in_regions)
					json_object_object_add(m->units[i].in_regions, rn,
							       json_object_new_boolean(1));
		}
	}
}

/* The region features of a run's sampling report: a run of a FEATPROF_SAMPLING build or
 * of traced regions names them in the top-level regions. */
static void region_features(struct fpm_model *m, struct json_object *doc)
{
	struct json_object *regs = geta(doc, "regions");
	size_t k;

	for (k = 0; regs && k < json_object_array_length(regs); k++) {
		struct json_object *x = json_object_array_get_idx(regs, k), *fl;

		if (json_object_object_get_ex(x, "features", &fl))
			json_object_object_add(m->region_feats, gets_(x, "name"),
					       json_object_get(fl));
	}
}

/* A run of model --functions --refine: its functions timed exactly (function regions of
 * the feature "refine") are taken at their exclusive CPU time instead of their samples:
 * their own time and their callees' that are not regions (a leaf's self time). */
static int refined_times(struct fpm_model *m, int r, struct json_object *doc)
{
	struct json_object *regs = geta(doc, "regions");
	size_t k, j;
	int i;

	for (k = 0; regs && k < json_object_array_length(regs); k++) {
		struct json_object *x = json_object_array_get_idx(regs, k);
		struct json_object *fl = geta(x, "features");
		const char *name = gets_(x, "name");
		struct fpm_unit *u = NULL;
		double unc = getd(x, "exclusive_uncertainty_ns");

		for (j = 0; fl && j < json_object_array_length(fl); j++)
			if (!strcmp(json_object_get_string(json_object_array_get_idx(fl, j)),
				    "refine"))
				break;
		if (!fl || j == json_object_array_length(fl))
			continue;
		for (i = 0; i < m->nunits && !u; i++)	/* a function region has its symbol */
			u = !strcmp(m->units[i].name, name) ||
				    (m->units[i].symbol && !strcmp(m->units[i].symbol, name))
				    ? &m->units[i] : NULL;
		if (!u && !(u = fpm_unit_get(m, name, "", false)))
			return fp_fail(m->err, ENOMEM, "out of memory");
		if (!u->in_regions && !(u->in_regions = json_object_new_object()))
			return fp_fail(m->err, ENOMEM, "out of memory");
		u->y[r] = json_object_object_get_ex(x, "exclusive_cpu_ns", NULL)
				  ? getd(x, "exclusive_cpu_ns") : getd(x, "exclusive_ns");
		u->yc[r] = u->y[r];
		u->u2[r] = unc * unc;
		u->refined = true;
	}
	return 0;
}

int fpm_read_functions(struct fpm_model *m, int r, struct json_object *doc)
{
	struct json_object *sm = json_object_object_get(doc, "sampling");
	struct json_object *fns = geta(sm, "functions");
	const char *exe = exe_base(doc);
	size_t k;

	if (!fns) {
		fp_fail(m->err, EINVAL, "%s: no call stacks (featprof run --stacks -o FILE)",
			m->files[r]);
		return -1;
	}
	if (!m->region_feats && !(m->region_feats = json_object_new_object()))
		return fp_fail(m->err, ENOMEM, "out of memory");
	m->cpu[r] = (double)geti(sm, "samples") * getd(sm, "period_ns");
	for (k = 0; k < json_object_array_length(fns); k++) {
		struct json_object *f = json_object_array_get_idx(fns, k);
		const char *obj = gets_(f, "object"), *name = gets_(f, "name");
		struct fpm_unit *u;
		double se = getd(f, "self_stderr_ns");

		if (name[0] == '[' || !geti(f, "self_samples"))
			continue;	/* [no stack], [unknown]: no function */
		/* the executable by no name: two builds of one program match */
		u = fpm_unit_get(m, name, !strcmp(obj, exe) ? "" : obj, false);
		if (!u || (!u->in_regions && !(u->in_regions = json_object_new_object())))
			return fp_fail(m->err, ENOMEM, "out of memory");
		if (!u->symbol && *gets_(f, "symbol"))	/* its region's name (--refine) */
			u->symbol = strdup(gets_(f, "symbol"));
		u->y[r] += getd(f, "self_ns");
		u->yc[r] = u->y[r];
		u->u2[r] += se * se;
	}
	region_features(m, doc);
	note_regions(m, sm);
	return refined_times(m, r, doc);
}

void fpm_keep_relevant(struct fpm_model *m)
{
	int i, r, kept = 0;
	char w[160];

	double cpu = 0;

	for (r = 0; r < m->nruns; r++)
		cpu += m->cpu[r] / m->nruns;
	for (i = 0; i < m->nunits; i++) {
		struct fpm_unit *u = &m->units[i];
		double y = 0;

		for (r = 0; r < m->nruns; r++)
			y += u->y[r] / m->nruns;
		if (cpu > 0 && y >= m->fn_min * cpu) {	/* of the runs' mean CPU time */
			m->units[kept++] = *u;
			continue;
		}
		free(u->name);
		free(u->y);
		free(u->u2);
		free(u->yc);
		free(u->object);
		free(u->symbol);
		json_object_put(u->in_regions);
	}
	if (m->nunits > kept) {
		snprintf(w, sizeof(w), "%d functions under %.3g%% of the runs' mean CPU time "
			 "are not modelled", m->nunits - kept, 100 * m->fn_min);
		json_object_array_add(m->warnings, json_object_new_string(w));
	}
	m->nunits = kept;
}

/* --- the report ---------------------------------------------------------------------- */

static struct json_object *ci_pair(double v, double half)
{
	struct json_object *a = json_object_new_array();

	json_object_array_add(a, json_object_new_double(v - half));
	json_object_array_add(a, json_object_new_double(v + half));
	return a;
}

/* Term j's 95% half width: the residuals' (Student's t), never below what the runs'
 * sampling errors alone give through the fit (a fit with no residual left). */
static double term_half(const struct fpm_fit *f, int j)
{
	double sv = 0, g;
	int k;

	for (k = 0; k < f->n; k++) {
		g = f->h[j * f->n + k];
		sv += g * g * f->u[k] * f->u[k];
	}
	return fpm_t975(f->dof) * sqrt(fmax(f->dof > 0 ? f->cov[j][j] : 0, sv));
}

/* Whether region rn's features include option o's name. */
static bool region_of_option(const struct fpm_model *m, const char *rn, int o)
{
	struct json_object *fl = json_object_object_get(m->region_feats, rn);
	size_t k;

	for (k = 0; fl && k < json_object_array_length(fl); k++)
		if (fpm_opt_index(m, json_object_get_string(json_object_array_get_idx(fl, k)))
		    == o)
			return true;
	return false;
}

/* How option o's influence reaches unit u: "in its regions" (a region of o's features
 * holds u), "through data" (o has regions, none holds u), "outside its regions" (o has
 * no region in the runs: its code unmarked). */
static const char *reach(const struct fpm_model *m, const struct fpm_unit *u, int o)
{
	bool has = false;

	json_object_object_foreach(m->region_feats, rn, fl) {
		(void)fl;
		if (!region_of_option(m, rn, o))
			continue;
		has = true;
		if (json_object_object_get_ex(u->in_regions, rn, NULL))
			return "in its regions";
	}
	return has ? "through data" : "no region of its own";
}

/* u's object as people name it: the executable's file name where the unit keeps "". */
static const char *obj_name(const struct fpm_model *m, const struct fpm_unit *u)
{
	const char *sl = m->exe ? strrchr(m->exe, '/') : NULL;

	return u->object && u->object[0] ? u->object : sl ? sl + 1 : m->exe ? m->exe : "";
}

static double mean_of(const struct fpm_model *m, const double *y)
{
	double s = 0;
	int r;

	for (r = 0; r < m->nruns; r++)
		s += y[r] / m->nruns;
	return s;
}

/* Unit i's terms (its intercept apart) into fo, and each into by (per option) and the
 * through-data list. */
static void unit_terms(const struct fpm_model *m, int i, const struct fpm_fit *f,
		       struct json_object *fo, struct json_object *by, struct json_object *data)
{
	const struct fpm_unit *u = &m->units[i];
	struct json_object *terms = json_object_new_array();
	int j, b;

	for (j = 0; j < f->p; j++) {
		uint64_t g = fpm_global_mask(f->mask[j], u->opts);
		double half = term_half(f, j);
		struct json_object *t;
		bool sig = fabs(f->beta[j]) > half;

		if (!g) {
			json_object_object_add(fo, "base_ns", json_object_new_double(f->beta[j]));
			continue;
		}
		t = json_object_new_object();
		json_object_object_add(t, "options", fpm_opts_json(m, g));
		json_object_object_add(t, "influence_ns", json_object_new_double(f->beta[j]));
		json_object_object_add(t, "ci95_ns", ci_pair(f->beta[j], half));
		json_object_object_add(t, "significant", json_object_new_boolean(sig));
		json_object_array_add(terms, t);
		for (b = 0; sig && b < m->nopt; b++) {
			struct json_object *x, *a;
			const char *how;

			if (!(g >> b & 1))
				continue;
			how = reach(m, u, b);
			x = json_object_new_object();
			json_object_object_add(x, "function", json_object_new_string(u->name));
			json_object_object_add(x, "object", json_object_new_string(obj_name(m, u)));
			json_object_object_add(x, "term", fpm_opts_json(m, g));
			json_object_object_add(x, "influence_ns",
					       json_object_new_double(f->beta[j]));
			json_object_object_add(x, "ci95_ns", ci_pair(f->beta[j], half));
			json_object_object_add(x, "reaches", json_object_new_string(how));
			if (!json_object_object_get_ex(by, m->opt[b].name, &a)) {
				a = json_object_new_array();
				json_object_object_add(by, m->opt[b].name, a);
			}
			if (!strcmp(how, "through data")) {
				struct json_object *d = NULL;

				json_object_deep_copy(x, &d, NULL);
				json_object_object_add(d, "option", json_object_new_string(
							       m->opt[b].name));
				json_object_array_add(data, d);
			}
			json_object_array_add(a, x);
		}
	}
	json_object_object_add(fo, "terms", terms);
}

/* Unit u's predicted time at m's given configuration (never below zero), its 95%
 * interval (random and sampling parts, as term_half), into fo. */
static void predict_unit(const struct fpm_model *m, const struct fpm_unit *u,
			 const struct fpm_fit *f, struct json_object *fo)
{
	double var, sys = 0, v = fpm_predict(f, u->opts, m->px, &var, &sys), sv = 0, g;
	int i, k;

	for (k = 0; k < f->n; k++) {	/* the sampling's part: sum_k (x'h_k)^2 u_k^2 */
		for (g = 0, i = 0; i < f->p; i++)
			g += fpm_term_value(m->px, u->opts, f->mask[i]) * f->h[i * f->n + k];
		sv += g * g * f->u[k] * f->u[k];
	}
	v = v > 0 ? v : 0;
	json_object_object_add(fo, "predicted_ns", json_object_new_double(v));
	json_object_object_add(fo, "predicted_ci95_ns",
			       ci_pair(v, fpm_t975(f->dof) * sqrt(fmax(f->dof > 0 ? var : 0, sv))));
}

static int by_size(const void *a, const void *b)
{
	double x = fabs(getd(*(struct json_object *const *)a, "influence_ns"));
	double y = fabs(getd(*(struct json_object *const *)b, "influence_ns"));

	return x > y ? -1 : x < y;
}

static int by_mean(const void *a, const void *b)
{
	double x = getd(*(struct json_object *const *)a, "mean_ns");
	double y = getd(*(struct json_object *const *)b, "mean_ns");

	return x > y ? -1 : x < y;
}

/* The function's own figures: its name, object, mean, largest share, the regions that
 * hold it, its leave-one-out error. */
static struct json_object *unit_head(const struct fpm_model *m, int i, double *loo)
{
	const struct fpm_unit *u = &m->units[i];
	struct json_object *o = json_object_new_object(), *regs = json_object_new_array();
	double share = 0;
	int r;

	for (r = 0; r < m->nruns; r++)
		if (m->cpu[r] > 0 && u->y[r] / m->cpu[r] > share)
			share = u->y[r] / m->cpu[r];
	json_object_object_foreach(u->in_regions, rn, v) {
		(void)v;
		json_object_array_add(regs, json_object_new_string(rn));
	}
	*loo = fpm_unit_loo(m, i);
	json_object_object_add(o, "name", json_object_new_string(u->name));
	if (u->symbol)
		json_object_object_add(o, "symbol", json_object_new_string(u->symbol));
	json_object_object_add(o, "object", json_object_new_string(obj_name(m, u)));
	json_object_object_add(o, "mean_ns", json_object_new_double(mean_of(m, u->y)));
	json_object_object_add(o, "max_share", json_object_new_double(share));
	json_object_object_add(o, "regions", regs);
	json_object_object_add(o, "loo_error_pct", json_object_new_double(*loo));
	json_object_object_add(o, "timed", json_object_new_boolean(u->refined));
	json_object_object_add(o, "hard", json_object_new_boolean(*loo >= 5));
	return o;
}

struct json_object *fpm_functions_report(struct fpm_model *m)
{
	struct json_object *o = json_object_new_object(), *fa = json_object_new_array();
	struct json_object *by = json_object_new_object(), *data = json_object_new_array();
	struct json_object *sum = json_object_new_object(), *opts = json_object_new_array();
	uint64_t cand[MAXP];
	int i, nc, within = 0, known = 0;

	for (i = 0; i < m->nopt; i++)
		json_object_array_add(opts, json_object_new_string(m->opt[i].name));
	for (i = 0; i < m->nunits; i++) {
		struct fpm_unit *u = &m->units[i];
		struct fpm_fit f = { 0 };
		struct json_object *fo;
		double loo;

		nc = fpm_prune_terms(m, u->opts, cand, fpm_candidates(u->nopts, cand));
		fpm_fit(m, u->opts, cand, nc, u->y, u->u2, NULL, &f);
		fo = unit_head(m, i, &loo);
		unit_terms(m, i, &f, fo, by, data);
		if (m->given)	/* --predict: its time in the configuration given */
			predict_unit(m, u, &f, fo);
		fpm_fit_free(&f);
		json_object_array_add(fa, fo);
		known += loo >= 0;
		within += loo >= 0 && loo < 5;
	}
	json_object_array_sort(fa, by_mean);
	json_object_object_foreach(by, k, a) {
		(void)k;
		json_object_array_sort(a, by_size);
	}
	json_object_array_sort(data, by_size);
	json_object_object_add(sum, "relevant", json_object_new_int(m->nunits));
	json_object_object_add(sum, "within_5pct", json_object_new_int(within));
	json_object_object_add(sum, "with_loo", json_object_new_int(known));
	json_object_object_add(o, "runs", json_object_new_int(m->nruns));
	json_object_object_add(o, "exe", json_object_new_string(m->exe ? m->exe : ""));
	json_object_object_add(o, "options", opts);
	json_object_object_add(o, "threshold_pct", json_object_new_double(100 * m->fn_min));
	json_object_object_add(o, "functions", fa);
	json_object_object_add(o, "by_option", by);
	json_object_object_add(o, "through_data", data);
	json_object_object_add(o, "summary", sum);
	json_object_object_add(o, "warnings", json_object_get(m->warnings));
	return o;
}
