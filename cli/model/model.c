// SPDX-License-Identifier: GPL-2.0
/*
 * featprof model FILE... [--predict K=V,...] [--json]      featprof model --plan FILE...
 *
 * Performance-influence models from run files (featprof run -o FILE --config ...).
 * White-box where featprof sees inside: each region's exclusive time is modelled over
 * the options its features name, with every product of them that the runs tell apart,
 * so an interaction term comes from a region that names both options (ConfigCrusher's
 * local models per region). Black-box outside: the run's wall time less every region's
 * exclusive time, linear in every option and in the interactions regions name. The
 * run's wall time is the sum of the two; a feature's time the sum of its feature sets'
 * models (sets partition the time in regions as regions do).
 *
 * Fits are least squares. A term's 95% interval has two parts: the random one from its
 * model's residual spread (Student's t; none where the runs leave no residual, one run
 * per combination), and the systematic one, featprof's stated uncertainty of each run's
 * figure carried through the fit linearly (sum over runs of |weight| x 2 x uncertainty:
 * the stated uncertainty is systematic, docs/TRACING.md, so it does not average out over
 * runs and is added to the random part, not in quadrature; it covers the error within
 * twice itself for 95% of figures, docs/COVERAGE.md). The leave-one-out error
 * (MAPE of the wall time) refits every model without each run in turn; a black-box
 * linear model of the wall time over all options is fitted and scored beside it.
 *
 * Options are the names given to featprof run --config: binary, numeric (time linear in
 * the value, an interaction the product of the values: a region's model is multilinear)
 * or one-of (cli/model/opts.c). A region's options are those of its features that are
 * options, and those the runs show its time depends on (cli/model/wall.c
 * find_unnamed). Where threads overlap in regions the wall time is the CPU time less
 * the threads' overlap (cli/model/wall.c); whether each model fits: cli/model/check.c.
 *
 * --plan: from one run file's catalog, the fewest configurations (greedily) that give
 * every region every combination of its options, and vary every option enough for the
 * linear model outside regions (ConfigCrusher's compression), within one-of groups and
 * constraints; from several runs, again with what they found (cli/model/plan.c).
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/core/core.h"
#include "model_impl.h"

/* --- reading run files --------------------------------------------------------------- */

struct fpm_unit *fpm_unit_get(struct fpm_model *m, const char *name, const char *object,
			      bool set)
{
	struct fpm_unit *u;
	int i;

	for (i = 0; i < m->nunits; i++)
		if (m->units[i].set == set && !strcmp(m->units[i].name, name) &&
		    !strcmp(m->units[i].object ? m->units[i].object : "", object ? object : ""))
			return &m->units[i];
	u = realloc(m->units, sizeof(*u) * (size_t)(m->nunits + 1));
	if (!u)
		return NULL;
	m->units = u;
	u = &m->units[m->nunits++];
	memset(u, 0, sizeof(*u));
	u->name = strdup(name);
	u->object = object ? strdup(object) : NULL;
	u->set = set;
	u->y = calloc((size_t)m->nruns, sizeof(double));
	u->u2 = calloc((size_t)m->nruns, sizeof(double));
	u->yc = calloc((size_t)m->nruns, sizeof(double));
	return u->name && u->y && u->u2 && u->yc ? u : NULL;
}

/* A set's name: its features joined by '+'. */
static void set_name(struct json_object *fl, char *buf, size_t len)
{
	size_t k;

	buf[0] = 0;
	for (k = 0; fl && k < json_object_array_length(fl); k++) {
		if (k)
			strncat(buf, "+", len - strlen(buf) - 1);
		strncat(buf, json_object_get_string(json_object_array_get_idx(fl, k)),
			len - strlen(buf) - 1);
	}
}

/* The unit's features (once): its options among them. */
static void unit_features(struct fpm_model *m, struct fpm_unit *u, struct json_object *fl)
{
	size_t k;

	if (u->nfeats || !fl)
		return;
	u->feats = calloc(json_object_array_length(fl) + 1, sizeof(char *));
	for (k = 0; u->feats && k < json_object_array_length(fl); k++) {
		const char *f = json_object_get_string(json_object_array_get_idx(fl, k));
		int o = fpm_opt_index(m, f);

		u->feats[u->nfeats++] = strdup(f);
		if (o >= 0 && u->nopts < MAXOPT)
			u->opts[u->nopts++] = o;
	}
}

/* Run r's regions and sets into the units; the time outside regions. */
static int read_units(struct fpm_model *m, int r, struct json_object *st)
{
	struct json_object *regs = geta(st, "regions"), *sets = geta(st, "feature_sets");
	double in = 0, in_u2 = 0, in_cpu = 0;
	char name[1024];
	size_t k;

	for (k = 0; regs && k < json_object_array_length(regs); k++) {
		struct json_object *o = json_object_array_get_idx(regs, k);
		struct fpm_unit *u = fpm_unit_get(m, gets_(o, "name"), NULL, false);
		double unc = getd(o, "exclusive_uncertainty_ns");

		if (!u)
			return -1;
		unit_features(m, u, geta(o, "features"));
		u->y[r] = getd(o, "exclusive_ns");
		u->yc[r] = json_object_object_get_ex(o, "exclusive_cpu_ns", NULL)
			? getd(o, "exclusive_cpu_ns") : u->y[r];
		u->u2[r] = unc * unc;
		in += u->y[r];
		in_cpu += u->yc[r];
		in_u2 += unc * unc;
	}
	for (k = 0; sets && k < json_object_array_length(sets); k++) {
		struct json_object *o = json_object_array_get_idx(sets, k);
		struct fpm_unit *u;
		double unc = getd(o, "uncertainty_ns");

		set_name(geta(o, "features"), name, sizeof(name));
		if (!(u = fpm_unit_get(m, name, NULL, true)))
			return -1;
		unit_features(m, u, geta(o, "features"));
		u->y[r] = getd(o, "ns");
		u->u2[r] = unc * unc;
	}
	m->out[r] = m->wall[r] - in;
	m->out_u2[r] = in_u2;
	if (in / m->wall[r] > m->overlap)
		m->overlap = in / m->wall[r];
	if (m->cpu[r] > 0) {
		m->outc[r] = m->cpu[r] > in_cpu ? m->cpu[r] - in_cpu : 0;
		m->ovl[r] = m->cpu[r] - m->wall[r];
	}
	return 0;
}

struct json_object *fpm_read_run(const char *file, struct fp_err *e)
{
	struct json_object *d = json_object_from_file(file), *r;

	/* a program without regions has none ("regions" absent or empty) */
	if (!d || !json_object_object_get_ex(d, "run", &r) ||
	    !json_object_object_get_ex(r, "wall_ns", NULL)) {
		fp_fail(e, EINVAL, "%s: not a file of featprof run -o%s", file,
			d ? "" : " (not JSON)");
		json_object_put(d);
		return NULL;
	}
	return d;
}

/* --- the models ---------------------------------------------------------------------- */

static struct json_object *ci_json(double v, double half)
{
	struct json_object *a = json_object_new_array();

	json_object_array_add(a, json_object_new_double(v - half));
	json_object_array_add(a, json_object_new_double(v + half));
	return a;
}

/* A term of the model: an option set (global mask) and its influence summed. */
struct fpm_term {
	uint64_t opts;
	double ns, var, sys;	/* influence, random variance, systematic bound */
	int dof;		/* smallest residual dof among its parts (0: none) */
	char where[512];
	struct json_object *parts;	/* per model: where, influence_ns, ci95_ns */
};

static struct fpm_term *term_get(struct fpm_term *t, int *n, uint64_t opts)
{
	int i;

	for (i = 0; i < *n; i++)
		if (t[i].opts == opts)
			return &t[i];
	if (*n == MAXTERMS)	/* not listed (the report says so); the predictions keep them */
		return NULL;
	memset(&t[*n], 0, sizeof(t[0]));
	t[*n].opts = opts;
	t[*n].parts = json_object_new_array();
	return &t[(*n)++];
}

static void term_add(struct fpm_term *t, const struct fpm_fit *f, int i, const char *where)
{
	double w[MAXP] = { 0 }, sys;
	struct json_object *o;

	if (!t)
		return;
	o = json_object_new_object();
	w[i] = 1;
	sys = fpm_systematic(f, w);
	t->ns += f->beta[i];
	t->var += f->cov[i][i];
	t->sys += sys;
	t->dof = fpm_min_dof(t->dof, f->dof);
	json_object_object_add(o, "where", json_object_new_string(where));
	json_object_object_add(o, "influence_ns", json_object_new_double(f->beta[i]));
	json_object_object_add(o, "ci95_ns", ci_json(f->beta[i], fpm_t975(f->dof) *
							   sqrt(f->cov[i][i]) + sys));
	json_object_array_add(t->parts, o);
	if (strlen(t->where) + strlen(where) + 3 < sizeof(t->where))
		snprintf(t->where + strlen(t->where), sizeof(t->where) - strlen(t->where),
			 "%s%s", t->where[0] ? ", " : "", where);
}


static int cmp_term(const void *a, const void *b)
{
	const struct fpm_term *x = a, *y = b;
	int px = __builtin_popcountll(x->opts), py = __builtin_popcountll(y->opts);

	if (px != py)
		return px - py;
	return x->opts < y->opts ? -1 : x->opts > y->opts;
}

/* The white-box terms: each region's and the outside model's, summed by option set. */
static int white_terms(const struct fpm_model *m, const struct fpm_fits *F, struct fpm_term *t)
{
	int n = 0, i, j;

	/* overlapping threads: the terms are CPU time (it adds up across threads; a
	 * region's time on a thread also holds the time the thread waited for a CPU,
	 * which other threads' work decides) */
	for (i = 0; i < m->nunits; i++) {
		const struct fpm_fit *f = m->threads ? &F->unit_cpu[i] : &F->unit[i];

		for (j = 0; !m->units[i].set && j < f->p; j++)
			term_add(term_get(t, &n, fpm_global_mask(f->mask[j], m->units[i].opts)), f,
				 j, m->units[i].name);
	}
	for (j = 0; j < (m->threads ? F->outc.p : F->out.p); j++)
		term_add(term_get(t, &n, fpm_global_mask((m->threads ? F->outc : F->out).mask[j],
						     F->lin_opts)),
			 m->threads ? &F->outc : &F->out, j,
			 m->threads ? "(outside regions, CPU)" : "(outside regions)");
	qsort(t, (size_t)n, sizeof(*t), cmp_term);
	return n;
}

struct json_object *fpm_opts_json(const struct fpm_model *m, uint64_t mask)
{
	struct json_object *a = json_object_new_array();
	int b;

	for (b = 0; b < m->nopt; b++)
		if (mask >> b & 1)
			json_object_array_add(a, json_object_new_string(m->opt[b].name));
	return a;
}

static struct json_object *terms_json(const struct fpm_model *m, const struct fpm_term *t, int n)
{
	struct json_object *a = json_object_new_array();
	int i;

	for (i = 0; i < n; i++) {
		struct json_object *o = json_object_new_object();
		double half = fpm_t975(t[i].dof) * sqrt(t[i].var) + t[i].sys;

		json_object_object_add(o, "options", fpm_opts_json(m, t[i].opts));
		json_object_object_add(o, "influence_ns", json_object_new_double(t[i].ns));
		json_object_object_add(o, "ci95_ns", ci_json(t[i].ns, half));
		json_object_object_add(o, "where", json_object_new_string(t[i].where));
		json_object_object_add(o, "parts", json_object_get(t[i].parts));
		json_object_array_add(a, o);
	}
	return a;
}

/* The black-box model's terms, as terms. */
static int black_terms(const struct fpm_fits *F, struct fpm_term *t)
{
	int n = 0, j;

	for (j = 0; j < F->bb.p; j++)
		term_add(term_get(t, &n, fpm_global_mask(F->bb.mask[j], F->lin_opts)), &F->bb, j,
			 "wall");
	qsort(t, (size_t)n, sizeof(*t), cmp_term);
	return n;
}

/* Terms a region's runs could not tell apart, so that a user measures more. */
static struct json_object *not_estimable(const struct fpm_model *m, const struct fpm_fits *F)
{
	struct json_object *a = json_object_new_array();
	int i, k;

	for (i = 0; i < m->nunits; i++) {
		const struct fpm_fit *f = &F->unit[i];

		for (k = 0; !m->units[i].set && k < f->dropped && k < 8; k++) {
			struct json_object *o = json_object_new_object();
			uint64_t g = fpm_global_mask(f->dropped_mask[k], m->units[i].opts);

			json_object_object_add(o, "region",
					       json_object_new_string(m->units[i].name));
			json_object_object_add(o, "options", fpm_opts_json(m, g));
			json_object_array_add(a, o);
		}
	}
	for (k = 0; m->threads && k < F->ovl.dropped && k < 8; k++) {
		struct json_object *o = json_object_new_object();
		const char *w = fpm_ovl_column(m, F->ovl.dropped_mask[k]);

		json_object_object_add(o, "region", json_object_new_string("(overlap)"));
		json_object_object_add(o, "parallel_work", json_object_new_string(w));
		json_object_array_add(a, o);
	}
	return a;
}

/* The prediction at m's given configuration: wall time (white-box and black-box), CPU
 * time and each feature's time. */
static struct json_object *prediction(const struct fpm_model *m, const struct fpm_fits *F,
				      const struct fpm_wall_choice *c)
{
	struct json_object *o = json_object_new_object(), *fa = json_object_new_array();
	const double *x = m->px;
	char **names = NULL;
	int i, k, j, nf = 0, dof;
	double var, sys, wall = fpm_predict_wall(m, F, x, &var, &sys, &dof), bvar, pi, half;
	double bb = fpm_predict(&F->bb, F->lin_opts, x, &bvar, NULL);

	bb = bb > 0 ? bb : 0;
	half = fpm_t975(dof) * sqrt(var) + sys;
	json_object_object_add(o, "config", json_object_get(m->given));
	json_object_object_add(o, "wall_ns", json_object_new_double(wall));
	json_object_object_add(o, "wall_ci95_ns", ci_json(wall, half));
	pi = fpm_t975(dof) * sqrt(var + fpm_predict_wall_noise(m, F, x)) + sys;
	json_object_object_add(o, "wall_pi95_ns", ci_json(wall, pi));
	json_object_object_add(o, "black_box_wall_ns", json_object_new_double(bb));
	json_object_object_add(o, "black_box_wall_ci95_ns",
			       ci_json(bb, fpm_t975(F->bb.dof) * sqrt(bvar)));
	wall = fpm_wall_choice_predict(m, F, c, x);	/* the model chosen (choose.c) */
	json_object_object_add(o, "chosen", json_object_new_string(fpm_wall_choice_name(c->which)));
	json_object_object_add(o, "chosen_wall_ns", json_object_new_double(wall));
	json_object_object_add(o, "chosen_wall_pi95_ns", ci_json(wall, wall * c->pi_rel));
	if (m->has_cpu) {
		double cpu = fpm_predict_cpu(m, F, x, &var, &sys, &dof);

		json_object_object_add(o, "cpu_ns", json_object_new_double(cpu));
		json_object_object_add(o, "cpu_ci95_ns",
				       ci_json(cpu, fpm_t975(dof) * sqrt(var) + sys));
	}
	/* the features, in the order the sets name them first */
	for (i = 0; i < m->nunits; i++)
		for (k = 0; m->units[i].set && k < m->units[i].nfeats; k++) {
			for (j = 0; j < nf && strcmp(names[j], m->units[i].feats[k]); j++)
				;
			if (j == nf && (names = realloc(names, sizeof(char *) * (size_t)(nf + 1))))
				names[nf++] = m->units[i].feats[k];
		}
	for (j = 0; names && j < nf; j++) {
		struct json_object *f = json_object_new_object();
		double ns = 0, v2 = 0, v, sy = 0;
		int d = 0;

		for (i = 0; i < m->nunits; i++) {
			const struct fpm_unit *u = &m->units[i];

			for (k = 0; u->set && k < u->nfeats && strcmp(u->feats[k], names[j]); k++)
				;
			if (!u->set || k == u->nfeats)
				continue;
			ns += fpm_predict(&F->unit[i], u->opts, x, &v, &sy);
			v2 += v;
			d = fpm_min_dof(d, F->unit[i].dof);
		}
		json_object_object_add(f, "name", json_object_new_string(names[j]));
		json_object_object_add(f, "ns", json_object_new_double(ns));
		json_object_object_add(f, "ci95_ns", ci_json(ns, fpm_t975(d) * sqrt(v2) + sy));
		json_object_array_add(fa, f);
	}
	free(names);
	json_object_object_add(o, "features", fa);
	return o;
}

/*
 * What the runs showed that the names miss: each unit's options that its features do
 * not name (fpm_find_unnamed), and the options the time outside regions changes with (its
 * main effects beyond their 95% interval: no feature names code outside regions).
 */
static void unit_unnamed(const struct fpm_model *m, const struct fpm_unit *u,
			 struct json_object *a)
{
	int k;

	for (k = u->named; k < u->nopts; k++) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "unit", json_object_new_string(u->name));
		json_object_object_add(o, "kind", json_object_new_string(u->set ? "feature_set"
										 : "region"));
		json_object_object_add(o, "option",
				       json_object_new_string(m->opt[u->opts[k]].name));
		json_object_object_add(o, "influence_ns", json_object_new_double(u->unnamed_ns[k]));
		json_object_object_add(o, "ci95_ns", json_object_new_double(u->unnamed_ci[k]));
		if (u->tied[k] >= 0)
			json_object_object_add(o, "tied_with",
					       json_object_new_string(m->opt[u->tied[k]].name));
		json_object_array_add(a, o);
	}
}

static struct json_object *unnamed_json(const struct fpm_model *m, const struct fpm_fits *F)
{
	struct json_object *a = json_object_new_array();
	const struct fpm_fit *out = m->threads ? &F->outc : &F->out;
	int i, k;

	for (i = 0; i < m->nunits; i++)
		unit_unnamed(m, &m->units[i], a);
	for (k = 0; k < out->p; k++) {
		double w[MAXP] = { 0 }, half, v;
		struct json_object *o;
		int opt;

		if (__builtin_popcountll(out->mask[k]) != 1)
			continue;
		opt = F->lin_opts[__builtin_ctzll(out->mask[k])];
		w[k] = 1;
		half = fpm_t975(out->dof) * sqrt(out->cov[k][k]) + fpm_systematic(out, w);
		v = out->beta[k];
		if (fabs(v) <= half)
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "unit", json_object_new_string("(outside regions)"));
		json_object_object_add(o, "kind", json_object_new_string("outside"));
		json_object_object_add(o, "option", json_object_new_string(m->opt[opt].name));
		json_object_object_add(o, "influence_ns", json_object_new_double(v));
		json_object_object_add(o, "ci95_ns", json_object_new_double(half));
		json_object_array_add(a, o);
	}
	return a;
}

static void model_free(struct fpm_model *m)
{
	int i, k;

	for (i = 0; i < m->nunits; i++) {
		free(m->units[i].name);
		free(m->units[i].y);
		free(m->units[i].u2);
		free(m->units[i].yc);
		free(m->units[i].object);
		free(m->units[i].symbol);
		json_object_put(m->units[i].in_regions);
		for (k = 0; k < m->units[i].nfeats; k++)
			free(m->units[i].feats[k]);
		free(m->units[i].feats);
	}
	free(m->units);
	free(m->x);
	free(m->wall);
	free(m->out);
	free(m->out_u2);
	free(m->cpu);
	free(m->outc);
	free(m->ovl);
	free(m->xc);
	free(m->exe);
	json_object_put(m->warnings);
	json_object_put(m->given);
	json_object_put(m->region_feats);
}

static int model_alloc(struct fpm_model *m, int n)
{
	m->nruns = n;
	m->x = calloc((size_t)n, sizeof(*m->x));
	m->wall = calloc((size_t)n, sizeof(double));
	m->out = calloc((size_t)n, sizeof(double));
	m->out_u2 = calloc((size_t)n, sizeof(double));
	m->cpu = calloc((size_t)n, sizeof(double));
	m->outc = calloc((size_t)n, sizeof(double));
	m->ovl = calloc((size_t)n, sizeof(double));
	m->xc = calloc((size_t)n, sizeof(*m->xc));
	m->warnings = json_object_new_array();
	if (!m->x || !m->wall || !m->out || !m->out_u2 || !m->cpu || !m->outc || !m->ovl ||
	    !m->xc || !m->warnings)
		return fp_fail(m->err, ENOMEM, "out of memory");
	return 0;
}

/* Each run's wall and CPU time and its units; whether threads overlap in regions. */
static int read_times(struct fpm_model *m, struct json_object **docs)
{
	char w[256];
	int r;

	m->has_cpu = true;
	for (r = 0; r < m->nruns; r++) {
		struct json_object *run = json_object_object_get(docs[r], "run");

		m->wall[r] = getd(run, "wall_ns");
		m->cpu[r] = json_object_object_get_ex(run, "cpu_ns", NULL) ? getd(run, "cpu_ns")
									  : 0;
		m->has_cpu = m->has_cpu && m->cpu[r] > 0;
		if (m->fn_min > 0) {	/* model --functions */
			if (m->wall[r] <= 0 || fpm_read_functions(m, r, docs[r]))
				return m->err->code ? -1 : fp_fail(m->err, EINVAL, "%s: no wall "
								   "time", m->files[r]);
		} else if (m->wall[r] <= 0 || read_units(m, r, docs[r])) {
			return fp_fail(m->err, EINVAL, "%s: no wall time", m->files[r]);
		}
		if (!m->exe)
			m->exe = strdup(gets_(docs[r], "exe"));
	}
	if (m->fn_min > 0) {	/* functions: each its own model, none of the wall's */
		fpm_keep_relevant(m);
		return 0;
	}
	/* threads overlap in regions: beyond 2% (compensation's error) of the wall */
	m->threads = m->overlap > 1.02;
	if (m->threads && !m->has_cpu) {
		snprintf(w, sizeof(w), "regions overlap on threads (up to %.2fx the wall time) "
			 "but not every run has its CPU time (featprof run records run.cpu_ns): "
			 "the wall time is predicted as if they did not", m->overlap);
		json_object_array_add(m->warnings, json_object_new_string(w));
		m->threads = false;
	}
	for (r = 0; r < m->nruns; r++)
		if (m->has_cpu && (!m->wall_floor || m->wall[r] / m->cpu[r] / 2 < m->wall_floor))
			m->wall_floor = m->wall[r] / m->cpu[r] / 2;
	return 0;
}

/* Reads the files into m (m->given: the configuration to predict, coded into m->px). */
static int model_read(struct fpm_model *m, char **files, int n, const struct fpm_spec *s)
{
	struct json_object **docs = calloc((size_t)n, sizeof(*docs));
	uint64_t declared = 0;
	int r, ret = -1;

	m->files = files;
	if (!docs || model_alloc(m, n))
		goto out;
	for (r = 0; r < n; r++)
		if (!(docs[r] = fpm_read_run(files[r], m->err)))
			goto out;
	if (fpm_code_options(m, docs, n, m->given, m->px, &s->ch) || read_times(m, docs))
		goto out;
	for (r = 0; r < s->npar; r++) {
		int o = fpm_opt_index(m, s->par[r]);

		if (o < 0) {
			fp_fail(m->err, EINVAL, "--parallel %s: not an option of the runs",
				s->par[r]);
			goto out;
		}
		declared |= 1ull << o;
	}
	fpm_find_unnamed(m);
	if (m->fn_min <= 0)
		fpm_find_parallel(m, declared);
	ret = 0;
out:
	for (r = 0; docs && r < n; r++)
		json_object_put(docs[r]);
	free(docs);
	return ret;
}

/* Each region's options of runs files[0..n): those its features name and those the runs
 * show it depends on (fpm_find_unnamed), as {region: [option, ...]}; NULL with e filled.
 * For --plan of several runs. */
struct json_object *fpm_region_options(char **files, int n, const struct fpm_choices *ch,
					struct fp_err *e)
{
	struct fpm_spec *s = fpm_spec__new();
	struct fpm_model m = { .err = e };
	struct json_object *o = NULL;
	int i, k;

	if (s)
		s->ch = *ch;
	if (s && !model_read(&m, files, n, s)) {
		o = json_object_new_object();
		for (i = 0; i < m.nunits; i++) {
			struct json_object *a = json_object_new_array();

			for (k = 0; !m.units[i].set && k < m.units[i].nopts; k++)
				json_object_array_add(a, json_object_new_string(
							      m.opt[m.units[i].opts[k]].name));
			if (m.units[i].set)
				json_object_put(a);
			else
				json_object_object_add(o, m.units[i].name, a);
		}
	}
	model_free(&m);
	fpm_spec__free(s);
	return o;
}

/* --- the public model ---------------------------------------------------------------- */

struct fpm_spec *fpm_spec__new(void)
{
	return calloc(1, sizeof(struct fpm_spec));
}

void fpm_spec__free(struct fpm_spec *s)
{
	free(s);
}

int fpm_spec__add_choices(struct fpm_spec *s, const char *text, struct fp_err *e)
{
	return fpm_choices_parse(&s->ch, text, e) ? -EINVAL : 0;
}

int fpm_spec__add_constraint(struct fpm_spec *s, const char *text, struct fp_err *e)
{
	return fpm_constraint_parse(&s->cs, text, e) ? -EINVAL : 0;
}

int fpm_spec__add_parallel(struct fpm_spec *s, const char *name, struct fp_err *e)
{
	if (s->npar == MAXOPT || strlen(name) >= sizeof(s->par[0]))
		return fp_fail(e, EINVAL, "--parallel %s: at most %d options of under %zu "
			       "characters", name, MAXOPT, sizeof(s->par[0]));
	snprintf(s->par[s->npar++], sizeof(s->par[0]), "%s", name);
	return 0;
}

struct fpm_model *fpm_model__new(char **files, int n, const struct fpm_spec *s,
				 struct json_object *given, struct fp_err *e)
{
	return fpm_model__new_of(files, n, s, given, 0, e);
}

struct fpm_model *fpm_model__new_of(char **files, int n, const struct fpm_spec *s,
				    struct json_object *given, double fn_min, struct fp_err *e)
{
	static const struct fpm_spec none;
	struct fpm_model *m;

	if (n < 2) {
		fp_fail(e, EINVAL, "one run: a model needs runs of several configurations "
			"(featprof model --plan %s)", n ? files[0] : "FILE");
		return NULL;
	}
	if (n > FPM_MAX_RUNS) {
		fp_fail(e, EINVAL, "%d run files: at most %d", n, FPM_MAX_RUNS);
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		fp_fail(e, ENOMEM, "out of memory");
		return NULL;
	}
	m->err = e;
	m->given = json_object_get(given);
	m->fn_min = fn_min;
	if (model_read(m, files, n, s ? s : &none)) {
		fpm_model__free(m);
		return NULL;
	}
	m->err = NULL;	/* the caller's record: not kept past this call */
	return m;
}

void fpm_model__free(struct fpm_model *m)
{
	if (!m)
		return;
	model_free(m);
	free(m);
}

/* The options: their names, kinds and one-of groups. */
static struct json_object *options_json(const struct fpm_model *m)
{
	struct json_object *opts = json_object_new_array();
	int i;

	for (i = 0; i < m->nopt; i++) {
		struct json_object *x = json_object_new_object();

		json_object_object_add(x, "name", json_object_new_string(m->opt[i].name));
		json_object_object_add(x, "kind", json_object_new_string(
					       m->opt[i].group >= 0 ? "one_of"
					       : m->opt[i].numeric ? "numeric" : "binary"));
		if (m->opt[i].group >= 0)
			json_object_object_add(x, "group", json_object_new_string(
						       m->group[m->opt[i].group].name));
		json_object_array_add(opts, x);
	}
	return opts;
}

/* The runs, regions and feature sets, and what the report warns of. */
static void report_head(const struct fpm_model *m, struct json_object *o, bool cut)
{
	struct json_object *w = json_object_get(m->warnings);
	int i, nsets = 0;
	char b[128];

	for (i = 0; i < m->nunits; i++)
		nsets += m->units[i].set;
	json_object_object_add(o, "runs", json_object_new_int(m->nruns));
	json_object_object_add(o, "exe", json_object_new_string(m->exe ? m->exe : ""));
	json_object_object_add(o, "regions", json_object_new_int(m->nunits - nsets));
	json_object_object_add(o, "feature_sets", json_object_new_int(nsets));
	json_object_object_add(o, "options", options_json(m));
	if (cut) {
		w = json_object_new_array();
		for (i = 0; i < (int)json_object_array_length(m->warnings); i++)
			json_object_array_add(w, json_object_get(json_object_array_get_idx(
							 m->warnings, i)));
		snprintf(b, sizeof(b), "more than %d terms: the rest are not listed", MAXTERMS);
		json_object_array_add(w, json_object_new_string(b));
	}
	json_object_object_add(o, "warnings", w);
}

static void terms_free(struct fpm_term *t, int n)
{
	int i;

	for (i = 0; t && i < n; i++)
		json_object_put(t[i].parts);
	free(t);
}

struct json_object *fpm_model__report(struct fpm_model *m)
{
	struct fpm_fits F = { 0 };
	struct fpm_term *wt = calloc(MAXTERMS, sizeof(*wt)), *bt = calloc(MAXOPT + 1, sizeof(*bt));
	struct json_object *o = NULL, *loo;
	struct fpm_wall_choice ch;
	double wb, bbm, cpum;
	int nw = 0, nb = 0;

	if (fpm_fits_alloc(m, &F) || !wt || !bt)
		goto out;
	fpm_fit_all(m, NULL, &F);
	nw = white_terms(m, &F, wt);
	nb = black_terms(&F, bt);
	fpm_loo(m, &wb, &bbm, &cpum);
	fpm_choose(m, &ch);
	o = json_object_new_object();
	report_head(m, o, nw == MAXTERMS);
	json_object_object_add(o, "terms", terms_json(m, wt, nw));
	json_object_object_add(o, "black_box_terms", terms_json(m, bt, nb));
	json_object_object_add(o, "not_estimable", not_estimable(m, &F));
	json_object_object_add(o, "unnamed_influences", unnamed_json(m, &F));
	json_object_object_add(o, "fit", fpm_fit_check(m, &F));
	loo = json_object_new_object();
	json_object_object_add(loo, "white_box", json_object_new_double(wb));
	json_object_object_add(loo, "black_box_linear", json_object_new_double(bbm));
	if (m->has_cpu)
		json_object_object_add(loo, "cpu", json_object_new_double(cpum));
	json_object_object_add(o, "loo_mape_pct", loo);
	json_object_object_add(o, "model_choice", fpm_wall_choice_json(&ch));
	json_object_object_add(o, "wall_model",
			       json_object_new_string(m->threads ? "cpu_less_overlap"
								 : "regions_plus_outside"));
	json_object_object_add(o, "regions_over_wall_max", json_object_new_double(m->overlap));
	if (m->given)
		json_object_object_add(o, "prediction", prediction(m, &F, &ch));
out:
	fpm_fits_free(m, &F);
	terms_free(wt, nw);
	terms_free(bt, nb);
	return o;
}
