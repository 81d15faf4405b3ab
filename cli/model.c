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
 * or one-of (cli/model_opts.c). A region's options are those of its features that are
 * options, and those the runs show its time depends on (cli/model_wall.c
 * find_unnamed). Where threads overlap in regions the wall time is the CPU time less
 * the threads' overlap (cli/model_wall.c); whether each model fits: cli/model_check.c.
 *
 * --plan: from one run file's catalog, the fewest configurations (greedily) that give
 * every region every combination of its options, and vary every option enough for the
 * linear model outside regions (ConfigCrusher's compression), within one-of groups and
 * constraints; from several runs, again with what they found (cli/model_plan.c).
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "model.h"

/* --- reading run files --------------------------------------------------------------- */

static struct unit *unit_get(struct model *m, const char *name, bool set)
{
	struct unit *u;
	int i;

	for (i = 0; i < m->nunits; i++)
		if (m->units[i].set == set && !strcmp(m->units[i].name, name))
			return &m->units[i];
	u = realloc(m->units, sizeof(*u) * (size_t)(m->nunits + 1));
	if (!u)
		return NULL;
	m->units = u;
	u = &m->units[m->nunits++];
	memset(u, 0, sizeof(*u));
	u->name = strdup(name);
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
static void unit_features(struct model *m, struct unit *u, struct json_object *fl)
{
	size_t k;

	if (u->nfeats || !fl)
		return;
	u->feats = calloc(json_object_array_length(fl) + 1, sizeof(char *));
	for (k = 0; u->feats && k < json_object_array_length(fl); k++) {
		const char *f = json_object_get_string(json_object_array_get_idx(fl, k));
		int o = opt_index(m, f);

		u->feats[u->nfeats++] = strdup(f);
		if (o >= 0 && u->nopts < MAXOPT)
			u->opts[u->nopts++] = o;
	}
}

/* Run r's regions and sets into the units; the time outside regions. */
static int read_units(struct model *m, int r, struct json_object *st)
{
	struct json_object *regs = geta(st, "regions"), *sets = geta(st, "feature_sets");
	double in = 0, in_u2 = 0, in_cpu = 0;
	char name[1024];
	size_t k;

	for (k = 0; regs && k < json_object_array_length(regs); k++) {
		struct json_object *o = json_object_array_get_idx(regs, k);
		struct unit *u = unit_get(m, gets_(o, "name"), false);
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
		struct unit *u;
		double unc = getd(o, "uncertainty_ns");

		set_name(geta(o, "features"), name, sizeof(name));
		if (!(u = unit_get(m, name, true)))
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

struct json_object *read_run(const char *file)
{
	struct json_object *d = json_object_from_file(file), *r;

	if (!d || !json_object_object_get_ex(d, "run", &r) ||
	    !json_object_object_get_ex(r, "wall_ns", NULL) || !geta(d, "regions")) {
		fprintf(stderr, "featprof model: %s: not a file of featprof run -o%s\n", file,
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
struct term {
	uint64_t opts;
	double ns, var, sys;	/* influence, random variance, systematic bound */
	int dof;		/* smallest residual dof among its parts (0: none) */
	char where[512];
	struct json_object *parts;	/* per model: where, influence_ns, ci95_ns */
};

static struct term *term_get(struct term *t, int *n, uint64_t opts)
{
	int i;

	for (i = 0; i < *n; i++)
		if (t[i].opts == opts)
			return &t[i];
	if (*n == MAXTERMS) {	/* said once; the predictions keep them */
		static bool said;

		if (!said)
			fprintf(stderr, "featprof model: more than %d terms: the rest are not "
				"listed\n", MAXTERMS);
		said = true;
		return NULL;
	}
	memset(&t[*n], 0, sizeof(t[0]));
	t[*n].opts = opts;
	t[*n].parts = json_object_new_array();
	return &t[(*n)++];
}

static void term_add(struct term *t, const struct fit *f, int i, const char *where)
{
	double w[MAXP] = { 0 }, sys;
	struct json_object *o;

	if (!t)
		return;
	o = json_object_new_object();
	w[i] = 1;
	sys = systematic(f, w);
	t->ns += f->beta[i];
	t->var += f->cov[i][i];
	t->sys += sys;
	t->dof = min_dof(t->dof, f->dof);
	json_object_object_add(o, "where", json_object_new_string(where));
	json_object_object_add(o, "influence_ns", json_object_new_double(f->beta[i]));
	json_object_object_add(o, "ci95_ns", ci_json(f->beta[i], cli_t975(f->dof) *
							   sqrt(f->cov[i][i]) + sys));
	json_object_array_add(t->parts, o);
	if (strlen(t->where) + strlen(where) + 3 < sizeof(t->where))
		snprintf(t->where + strlen(t->where), sizeof(t->where) - strlen(t->where),
			 "%s%s", t->where[0] ? ", " : "", where);
}


static int cmp_term(const void *a, const void *b)
{
	const struct term *x = a, *y = b;
	int px = __builtin_popcountll(x->opts), py = __builtin_popcountll(y->opts);

	if (px != py)
		return px - py;
	return x->opts < y->opts ? -1 : x->opts > y->opts;
}

/* The white-box terms: each region's and the outside model's, summed by option set. */
static int white_terms(const struct model *m, const struct fits *F, struct term *t)
{
	int n = 0, i, j;

	/* overlapping threads: the terms are CPU time (it adds up across threads; a
	 * region's time on a thread also holds the time the thread waited for a CPU,
	 * which other threads' work decides) */
	for (i = 0; i < m->nunits; i++) {
		const struct fit *f = m->threads ? &F->unit_cpu[i] : &F->unit[i];

		for (j = 0; !m->units[i].set && j < f->p; j++)
			term_add(term_get(t, &n, global_mask(f->mask[j], m->units[i].opts)), f, j,
				 m->units[i].name);
	}
	for (j = 0; j < (m->threads ? F->outc.p : F->out.p); j++)
		term_add(term_get(t, &n, global_mask((m->threads ? F->outc : F->out).mask[j],
						     F->lin_opts)),
			 m->threads ? &F->outc : &F->out, j,
			 m->threads ? "(outside regions, CPU)" : "(outside regions)");
	qsort(t, (size_t)n, sizeof(*t), cmp_term);
	return n;
}

static void mask_names(const struct model *m, uint64_t mask, const char *sep, char *buf,
		       size_t len)
{
	int b;

	buf[0] = 0;
	for (b = 0; b < m->nopt; b++)
		if (mask >> b & 1)
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? sep : "",
				 m->opt[b].name);
	if (!buf[0])
		snprintf(buf, len, "(base)");
}

static struct json_object *opts_json(const struct model *m, uint64_t mask)
{
	struct json_object *a = json_object_new_array();
	int b;

	for (b = 0; b < m->nopt; b++)
		if (mask >> b & 1)
			json_object_array_add(a, json_object_new_string(m->opt[b].name));
	return a;
}

static struct json_object *terms_json(const struct model *m, const struct term *t, int n)
{
	struct json_object *a = json_object_new_array();
	int i;

	for (i = 0; i < n; i++) {
		struct json_object *o = json_object_new_object();
		double half = cli_t975(t[i].dof) * sqrt(t[i].var) + t[i].sys;

		json_object_object_add(o, "options", opts_json(m, t[i].opts));
		json_object_object_add(o, "influence_ns", json_object_new_double(t[i].ns));
		json_object_object_add(o, "ci95_ns", ci_json(t[i].ns, half));
		json_object_object_add(o, "where", json_object_new_string(t[i].where));
		json_object_object_add(o, "parts", json_object_get(t[i].parts));
		json_object_array_add(a, o);
	}
	return a;
}

/* The black-box model's terms, as terms. */
static int black_terms(const struct fits *F, struct term *t)
{
	int n = 0, j;

	for (j = 0; j < F->bb.p; j++)
		term_add(term_get(t, &n, global_mask(F->bb.mask[j], F->lin_opts)), &F->bb, j,
			 "wall");
	qsort(t, (size_t)n, sizeof(*t), cmp_term);
	return n;
}

/* Terms a region's runs could not tell apart: said once, so a user measures more. */
static struct json_object *not_estimable(const struct model *m, const struct fits *F,
					 bool print)
{
	struct json_object *a = json_object_new_array();
	char buf[512];
	int i, k;

	for (i = 0; i < m->nunits; i++) {
		const struct fit *f = &F->unit[i];

		for (k = 0; !m->units[i].set && k < f->dropped && k < 8; k++) {
			struct json_object *o = json_object_new_object();
			uint64_t g = global_mask(f->dropped_mask[k], m->units[i].opts);

			json_object_object_add(o, "region",
					       json_object_new_string(m->units[i].name));
			json_object_object_add(o, "options", opts_json(m, g));
			json_object_array_add(a, o);
			mask_names(m, g, "*", buf, sizeof(buf));
			if (print)
				printf("note: region %s: the runs cannot tell term %s apart "
				       "(measure the configurations of featprof model --plan)\n",
				       m->units[i].name, buf);
		}
	}
	for (k = 0; m->threads && k < F->ovl.dropped && k < 8; k++) {
		struct json_object *o = json_object_new_object();
		const char *w = ovl_column(m, F->ovl.dropped_mask[k]);

		json_object_object_add(o, "region", json_object_new_string("(overlap)"));
		json_object_object_add(o, "parallel_work", json_object_new_string(w));
		json_object_array_add(a, o);
		if (print)
			printf("note: the threads' overlap cannot tell the parallel work of %s "
			       "from the others': the runs vary them together (featprof model "
			       "--plan --parallel OPTION varies an option with every region's)\n",
			       w);
	}
	return a;
}

static const char *fmt(double ns, char *b, size_t len)
{
	double a = fabs(ns);

	if (a >= 1e9)
		snprintf(b, len, "%.3f s", ns / 1e9);
	else if (a >= 1e6)
		snprintf(b, len, "%.3f ms", ns / 1e6);
	else if (a >= 1e3)
		snprintf(b, len, "%.2f us", ns / 1e3);
	else
		snprintf(b, len, "%.0f ns", ns);
	return b;
}

static void print_terms(const struct model *m, const struct term *t, int n, const char *title)
{
	char b1[40], b2[40], b3[48], names[512];
	int i;

	printf("\n%-28s %12s %14s  %s\n", title, "INFLUENCE", "95% INTERVAL", "WHERE");
	for (i = 0; i < n; i++) {
		mask_names(m, t[i].opts, "*", names, sizeof(names));
		snprintf(b3, sizeof(b3), "± %s",
			 fmt(cli_t975(t[i].dof) * sqrt(t[i].var) + t[i].sys, b2, 40));
		printf("%-28s %12s %14s  %s\n", names, fmt(t[i].ns, b1, sizeof(b1)), b3,
		       t[i].where);
	}
}

/* The prediction at x: wall time (white-box and black-box) and each feature's time. */
static struct json_object *prediction(const struct model *m, const struct fits *F,
				      const double *x, struct json_object *given, bool print)
{
	struct json_object *o = json_object_new_object(), *fa = json_object_new_array();
	char **names = NULL, b1[40], b2[40], b3[40];
	int i, k, j, nf = 0, dof;
	double var, sys, wall = predict_wall(m, F, x, &var, &sys, &dof), bvar, pi;
	double bb = predict(&F->bb, F->lin_opts, x, &bvar, NULL);

	bb = bb > 0 ? bb : 0;
	double half = cli_t975(dof) * sqrt(var) + sys;

	json_object_object_add(o, "config", json_object_get(given));
	json_object_object_add(o, "wall_ns", json_object_new_double(wall));
	json_object_object_add(o, "wall_ci95_ns", ci_json(wall, half));
	pi = cli_t975(dof) * sqrt(var + predict_wall_noise(m, F, x)) + sys;
	json_object_object_add(o, "wall_pi95_ns", ci_json(wall, pi));
	json_object_object_add(o, "black_box_wall_ns", json_object_new_double(bb));
	json_object_object_add(o, "black_box_wall_ci95_ns",
			       ci_json(bb, cli_t975(F->bb.dof) * sqrt(bvar)));
	if (m->has_cpu) {
		double cpu = predict_cpu(m, F, x, &var, &sys, &dof);

		json_object_object_add(o, "cpu_ns", json_object_new_double(cpu));
		json_object_object_add(o, "cpu_ci95_ns",
				       ci_json(cpu, cli_t975(dof) * sqrt(var) + sys));
		if (print)
			printf("\nprediction: CPU %s ± %s", fmt(cpu, b1, 40),
			       fmt(cli_t975(dof) * sqrt(var) + sys, b2, 40));
	}
	if (print)
		printf("\nprediction: wall %s ± %s (black-box linear: %s)\n\n%-28s %12s %14s\n",
		       fmt(wall, b1, 40), fmt(half, b2, 40), fmt(bb, b3, 40), "FEATURE", "TIME",
		       "95% INTERVAL");
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
			const struct unit *u = &m->units[i];

			for (k = 0; u->set && k < u->nfeats && strcmp(u->feats[k], names[j]); k++)
				;
			if (!u->set || k == u->nfeats)
				continue;
			ns += predict(&F->unit[i], u->opts, x, &v, &sy);
			v2 += v;
			d = min_dof(d, F->unit[i].dof);
		}
		json_object_object_add(f, "name", json_object_new_string(names[j]));
		json_object_object_add(f, "ns", json_object_new_double(ns));
		json_object_object_add(f, "ci95_ns", ci_json(ns, cli_t975(d) * sqrt(v2) + sy));
		json_object_array_add(fa, f);
		if (print)
			printf("%-28s %12s %14s\n", names[j], fmt(ns, b1, 40),
			       (snprintf(b3, 40, "± %s", fmt(cli_t975(d) * sqrt(v2) + sy, b2, 40)),
				b3));
	}
	free(names);
	json_object_object_add(o, "features", fa);
	return o;
}

static void model_free(struct model *m)
{
	int i, k;

	for (i = 0; i < m->nunits; i++) {
		free(m->units[i].name);
		free(m->units[i].y);
		free(m->units[i].u2);
		free(m->units[i].yc);
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
}

/* Reads the files into m; px: the prediction's coded values (given: its K=V). */
static int model_read(struct model *m, char **files, int n, struct json_object *given,
		      double *px, const struct choices *ch, const char **par, int npar)
{
	uint64_t declared = 0;
	struct json_object **docs = calloc((size_t)n, sizeof(*docs));
	int r, ret = -1;

	m->files = files;
	m->nruns = n;
	m->x = calloc((size_t)n, sizeof(*m->x));
	m->wall = calloc((size_t)n, sizeof(double));
	m->out = calloc((size_t)n, sizeof(double));
	m->out_u2 = calloc((size_t)n, sizeof(double));
	m->cpu = calloc((size_t)n, sizeof(double));
	m->outc = calloc((size_t)n, sizeof(double));
	m->ovl = calloc((size_t)n, sizeof(double));
	m->xc = calloc((size_t)n, sizeof(*m->xc));
	for (r = 0; docs && r < n; r++)
		if (!(docs[r] = read_run(files[r])))
			goto out;
	if (!docs || !m->x || !m->wall || !m->out || !m->out_u2 || !m->cpu || !m->outc ||
	    !m->ovl || !m->xc || code_options(m, docs, n, given, px, ch))
		goto out;
	m->has_cpu = true;
	for (r = 0; r < n; r++) {
		struct json_object *run = json_object_object_get(docs[r], "run");

		m->wall[r] = getd(run, "wall_ns");
		m->cpu[r] = json_object_object_get_ex(run, "cpu_ns", NULL) ? getd(run, "cpu_ns")
									  : 0;
		m->has_cpu = m->has_cpu && m->cpu[r] > 0;
		if (m->wall[r] <= 0 || read_units(m, r, docs[r])) {
			fprintf(stderr, "featprof model: %s: no wall time\n", files[r]);
			goto out;
		}
		if (!m->exe)
			m->exe = strdup(gets_(docs[r], "exe"));
	}
	/* threads overlap in regions: beyond 2% (compensation's error) of the wall */
	m->threads = m->overlap > 1.02;
	if (m->threads && !m->has_cpu) {
		fprintf(stderr, "featprof model: warning: regions overlap on threads (up to "
			"%.2fx the wall time) but not every run has its CPU time (featprof run "
			"records run.cpu_ns): the wall time is predicted as if they did not\n",
			m->overlap);
		m->threads = false;
	}
	for (r = 0; r < n; r++)
		if (m->has_cpu && (!m->wall_floor || m->wall[r] / m->cpu[r] / 2 < m->wall_floor))
			m->wall_floor = m->wall[r] / m->cpu[r] / 2;
	for (r = 0; r < npar; r++) {
		int o = opt_index(m, par[r]);

		if (o < 0) {
			fprintf(stderr, "featprof model: --parallel %s: not an option of the "
				"runs\n", par[r]);
			goto out;
		}
		declared |= 1ull << o;
	}
	find_unnamed(m);
	find_parallel(m, declared);
	ret = 0;
out:
	for (r = 0; docs && r < n; r++)
		json_object_put(docs[r]);
	free(docs);
	return ret;
}

/* Each region's options of runs files[0..n): those its features name and those the runs
 * show it depends on (find_unnamed), as {region: [option, ...]}; NULL after a one-line
 * error. For --plan of several runs. */
struct json_object *region_options(char **files, int n, const struct choices *ch)
{
	struct model m = { 0 };
	double px[MAXOPT] = { 0 };
	struct json_object *o = NULL;
	int i, k;

	if (!model_read(&m, files, n, NULL, px, ch, NULL, 0)) {
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
	return o;
}

/* --- the command --------------------------------------------------------------------- */

/* --predict's K=V,... into an object; NULL after a one-line error. */
static struct json_object *parse_predict(const char *s)
{
	struct json_object *o = json_object_new_object();
	char *dup = strdup(s), *save = NULL, *kv;

	for (kv = dup ? strtok_r(dup, ",", &save) : NULL; kv; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');

		if (!eq || eq == kv || !eq[1]) {
			fprintf(stderr, "featprof model: --predict takes NAME=VALUE[,...]: "
				"'%s'\n", s);
			json_object_put(o);
			free(dup);
			return NULL;
		}
		*eq = 0;
		json_object_object_add(o, kv, json_object_new_string(eq + 1));
	}
	free(dup);
	return o;
}

/*
 * What the runs showed that the names miss: each unit's options that its features do
 * not name (find_unnamed), and the options the time outside regions changes with (its
 * main effects beyond their 95% interval: no feature names code outside regions).
 */
static struct json_object *unnamed_json(const struct model *m, const struct fits *F,
					bool print)
{
	struct json_object *a = json_object_new_array();
	const struct fit *out = m->threads ? &F->outc : &F->out;
	char b1[40], b2[40];
	int i, k;

	for (i = 0; i < m->nunits; i++) {
		const struct unit *u = &m->units[i];

		for (k = u->named; k < u->nopts; k++) {
			struct json_object *o = json_object_new_object();

			json_object_object_add(o, "unit", json_object_new_string(u->name));
			json_object_object_add(o, "kind", json_object_new_string(
						       u->set ? "feature_set" : "region"));
			json_object_object_add(o, "option", json_object_new_string(
						       m->opt[u->opts[k]].name));
			json_object_object_add(o, "influence_ns",
					       json_object_new_double(u->unnamed_ns[k]));
			json_object_object_add(o, "ci95_ns", json_object_new_double(
						       u->unnamed_ci[k]));
			if (u->tied[k] >= 0) {
				json_object_object_add(o, "tied_with", json_object_new_string(
							       m->opt[u->tied[k]].name));
				if (print)
					printf("%s %s depends on option %s or %s, which its "
					       "features do not name and these runs cannot tell "
					       "apart (featprof model --plan with these runs "
					       "varies both)\n", u->set ? "feature set" : "region",
					       u->name, m->opt[u->tied[k]].name,
					       m->opt[u->opts[k]].name);
			}
			json_object_array_add(a, o);
			if (print && u->tied[k] < 0)
				printf("%s %s depends on option %s, which its features do not name "
				       "(%s ± %s)\n", u->set ? "feature set" : "region", u->name,
				       m->opt[u->opts[k]].name, fmt(u->unnamed_ns[k], b1, 40),
				       fmt(u->unnamed_ci[k], b2, 40));
		}
	}
	for (k = 0; k < out->p; k++) {
		double w[MAXP] = { 0 }, half, v;
		struct json_object *o;
		int opt;

		if (__builtin_popcountll(out->mask[k]) != 1)
			continue;
		opt = F->lin_opts[__builtin_ctzll(out->mask[k])];
		w[k] = 1;
		half = cli_t975(out->dof) * sqrt(out->cov[k][k]) + systematic(out, w);
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
		if (print)
			printf("outside regions depends on option %s (%s ± %s)\n",
			       m->opt[opt].name, fmt(v, b1, 40), fmt(half, b2, 40));
	}
	return a;
}

static int report_model(struct model *m, struct json_object *given, const double *px,
			int json)
{
	struct fits F = { 0 };
	struct term *wt = calloc(MAXTERMS, sizeof(*wt)), *bt = calloc(MAXOPT + 1, sizeof(*bt));
	struct json_object *o = json_object_new_object(), *opts = json_object_new_array();
	int nw, nb, i;
	double wb, bbm, cpum;

	if (fits_alloc(m, &F) || !wt || !bt)
		return 1;
	fit_all(m, NULL, &F);
	nw = white_terms(m, &F, wt);
	nb = black_terms(&F, bt);
	loo(m, &wb, &bbm, &cpum);
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
	if (!json) {
		int nsets = 0;

		for (i = 0; i < m->nunits; i++)
			nsets += m->units[i].set;
		printf("featprof model: %d runs of %s, %d options, %d regions, %d feature sets\n",
		       m->nruns, m->exe && *m->exe ? m->exe : "?", m->nopt, m->nunits - nsets,
		       nsets);
		print_terms(m, wt, nw, "TERM (white-box)");
		print_terms(m, bt, nb, "TERM (black-box linear)");
		printf("\nleave-one-out error of the wall time (MAPE): white-box %.2f%%, black-box "
		       "linear %.2f%%", wb, bbm);
		if (m->has_cpu)
			printf("; of the CPU time: white-box %.2f%%", cpum);
		printf("\nwall time: %s\n", m->threads
		       ? "CPU time less the threads' overlap (regions overlap on threads)"
		       : "regions plus outside (one thread in regions at a time)");
	}
	json_object_object_add(o, "runs", json_object_new_int(m->nruns));
	json_object_object_add(o, "options", opts);
	json_object_object_add(o, "terms", terms_json(m, wt, nw));
	json_object_object_add(o, "black_box_terms", terms_json(m, bt, nb));
	json_object_object_add(o, "not_estimable", not_estimable(m, &F, !json));
	if (!json)
		printf("\n");
	json_object_object_add(o, "unnamed_influences", unnamed_json(m, &F, !json));
	json_object_object_add(o, "fit", fit_check(m, &F, !json));
	json_object_object_add(o, "loo_mape_pct", json_object_new_object());
	json_object_object_add(json_object_object_get(o, "loo_mape_pct"), "white_box",
			       json_object_new_double(wb));
	json_object_object_add(json_object_object_get(o, "loo_mape_pct"), "black_box_linear",
			       json_object_new_double(bbm));
	if (m->has_cpu)
		json_object_object_add(json_object_object_get(o, "loo_mape_pct"), "cpu",
				       json_object_new_double(cpum));
	json_object_object_add(o, "wall_model",
			       json_object_new_string(m->threads ? "cpu_less_overlap"
								 : "regions_plus_outside"));
	json_object_object_add(o, "regions_over_wall_max", json_object_new_double(m->overlap));
	if (given)
		json_object_object_add(o, "prediction", prediction(m, &F, px, given, !json));
	if (json)
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	fits_free(m, &F);
	for (i = 0; i < nw; i++)
		json_object_put(wt[i].parts);
	for (i = 0; i < nb; i++)
		json_object_put(bt[i].parts);
	free(wt);
	free(bt);
	return 0;
}

int cmd_model(int argc, char **argv)
{
	struct json_object *given = NULL;
	char **files = calloc((size_t)argc, sizeof(char *));
	int i, n = 0, json = 0, planf = 0, rc;
	double px[MAXOPT] = { 0 };
	struct model m = { 0 };
	struct choices *ch = calloc(1, sizeof(*ch));
	struct constraints *cs = calloc(1, sizeof(*cs));
	const char *par[MAXOPT];
	int npar = 0;

	for (i = 1; files && i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "--plan")) {
			planf = 1;
		} else if (!strcmp(argv[i], "--choices") && i + 1 < argc) {
			if (!ch || choices_parse(ch, argv[++i]))
				return free(files), free(ch), free(cs), json_object_put(given), 2;
		} else if (!strcmp(argv[i], "--parallel") && i + 1 < argc) {
			if (npar == MAXOPT)
				return free(files), free(ch), free(cs), json_object_put(given), 2;
			par[npar++] = argv[++i];
		} else if (!strcmp(argv[i], "--constraint") && i + 1 < argc) {
			if (!cs || constraint_parse(cs, argv[++i]))
				return free(files), free(ch), free(cs), json_object_put(given), 2;
		} else if (!strcmp(argv[i], "--predict") && i + 1 < argc) {
			json_object_put(given);
			if (!(given = parse_predict(argv[++i])))
				return free(files), free(ch), free(cs), 2;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: featprof model FILE... [--choices NAME=V1|V2|...]... "
			       "[--parallel NAME]... [--predict NAME=VALUE,...] [--json]\n"
			       "       featprof model --plan FILE... [--choices NAME=V1|V2|...]... "
			       "[--constraint NAME=V&...[->NAME=V]]... [--parallel NAME]... "
			       "[--json]\n");
			return free(files), free(ch), free(cs), 0;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "featprof model: unknown option or missing value '%s'\n",
				argv[i]);
			return free(files), free(ch), free(cs), json_object_put(given), 2;
		} else {
			files[n++] = argv[i];
		}
	}
	if (n > MAXRUNS) {
		fprintf(stderr, "featprof model: %d run files: at most %d\n", n, MAXRUNS);
		return free(files), free(ch), free(cs), json_object_put(given), 2;
	}
	if (!files || !n || (planf && given)) {
		fprintf(stderr, "featprof model: %s\n",
			planf ? "--plan does not predict"
			      : "no run files (featprof run -o FILE)");
		return free(files), free(ch), free(cs), json_object_put(given), 2;
	}
	if (planf)
		rc = cmd_plan(files, n, json, ch, cs, par, npar);
	else if (n < 2) {
		fprintf(stderr, "featprof model: one run: a model needs runs of several "
			"configurations (featprof model --plan %s)\n", files[0]);
		rc = 2;
	} else
		rc = model_read(&m, files, n, given, px, ch, par, npar)
			? 1 : report_model(&m, given, px, json);
	model_free(&m);
	json_object_put(given);
	free(files);
	free(ch);
	free(cs);
	return rc;
}
