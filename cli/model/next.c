// SPDX-License-Identifier: GPL-2.0
/*
 * featprof model --plan --next N: the configurations to run next so that the wall model
 * featprof model chooses (cli/model/choose.c: white box, black box or their mean) is
 * least uncertain.
 *
 * Each model is linear in its terms, so what a new run of configuration x adds to it is
 * one row z(x) of its design, whatever the run's time turns out to be: a term's
 * variance is the noise's times (Z'Z)^-1, and a prediction's at x is s2 z(x)' (Z'Z)^-1
 * z(x). The candidates are every configuration the options' values, groups and
 * constraints allow (4096 of them drawn at random where there are more). The plan is
 * greedy: the candidate whose chosen prediction has the largest variance is run next
 * (adding the row of largest variance is what most increases det(Z'Z): D-optimal one
 * step at a time), its rows join each model's Z'Z (Sherman-Morrison), and so on N
 * times. A term the runs cannot tell from the others has no variance of its own: Z'Z
 * takes a ridge of 1e-6 of its diagonal's mean, so that such a term's direction has a
 * variance near 1e6 times a known one's and a configuration that identifies it is run
 * first (and a candidate that needs it is counted as not predictable, not averaged).
 *
 * The chosen model's variance: the white box's is the sum of its regions' and the
 * outside model's (their fits independent; on threads the CPU-time parts, the overlap's
 * model left out), the black box's its own, the mix's a quarter of both. Each model's
 * noise is its fit's residual variance, or where the runs leave it no residual degree
 * of freedom the mean of its stated uncertainties squared, else (1% of its mean time)^2.
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_impl.h"

#define MAXCAND 4096
#define RIDGE 1e-6
#define UNIDENT 1e3	/* z'(Z'Z + ridge)^-1 z past this: a term not identified */

struct comp {			/* one linear model of the chosen wall model */
	const int *opts;
	uint64_t cand[MAXP];
	int nc;
	double s2, w;		/* its noise variance, its weight */
	double ai[MAXP][MAXP];	/* (Z'Z + ridge)^-1 */
};

struct key {			/* an option, or a one-of group, and its values */
	int opt, group;		/* group >= 0: values are its options' indicators */
	double v[MAXCHOICE];
	int nv;
};

struct next {
	const struct fpm_model *m;
	const struct fpm_constraints *cs;
	struct comp *c;
	int nc;
	struct key k[MAXOPT];
	int nk;
	double (*x)[MAXOPT];	/* candidates, coded */
	int nx;
	int sampled;
	int lin[MAXOPT], lin_out[MAXOPT];	/* the black box's and outside model's options */
};

static double noise(const struct fpm_model *m, const struct fpm_fit *f, const double *y,
		    const double *u2)
{
	double s = 0, u = 0;
	int r;

	if (f->dof > 0 && f->s2 > 0)
		return f->s2;
	for (r = 0; r < m->nruns; r++) {
		s += fabs(y[r]);
		u += u2 ? u2[r] : 0;
	}
	if (u > 0)
		return u / m->nruns;
	s = 0.01 * s / m->nruns;
	return s * s;
}

static void rows(const struct comp *c, const double *x, double *z)
{
	int k;

	for (k = 0; k < c->nc; k++)
		z[k] = fpm_term_value(x, c->opts, c->cand[k]);
}

/* c's (Z'Z + ridge)^-1 over the runs; -1 if it cannot be inverted. */
static int start(const struct fpm_model *m, struct comp *c)
{
	static double a[MAXP][MAXP];
	double z[MAXP], tr = 0;
	int r, i, j;

	memset(a, 0, sizeof(a));
	for (r = 0; r < m->nruns; r++) {
		rows(c, m->x[r], z);
		for (i = 0; i < c->nc; i++)
			for (j = 0; j < c->nc; j++)
				a[i][j] += z[i] * z[j];
	}
	for (i = 0; i < c->nc; i++)
		tr += a[i][i] / c->nc;
	for (i = 0; i < c->nc; i++)
		a[i][i] += RIDGE * (tr > 0 ? tr : 1);
	if (fpm_invert(a, c->nc))
		return -1;
	memcpy(c->ai, a, sizeof(a));
	return 0;
}

/* z' ai z, and ai z into az. */
static double quad(const struct comp *c, const double *z, double *az)
{
	double q = 0;
	int i, j;

	for (i = 0; i < c->nc; i++) {
		az[i] = 0;
		for (j = 0; j < c->nc; j++)
			az[i] += c->ai[i][j] * z[j];
		q += z[i] * az[i];
	}
	return q;
}

/* The chosen prediction's variance at x; *unident set where a term it needs is not
 * identified. */
static double variance(const struct next *N, const double *x, int *unident)
{
	double z[MAXP], az[MAXP], v = 0, q;
	int i;

	*unident = 0;
	for (i = 0; i < N->nc; i++) {
		if (!N->c[i].w)
			continue;
		rows(&N->c[i], x, z);
		q = quad(&N->c[i], z, az);
		*unident |= q > UNIDENT;
		v += N->c[i].w * N->c[i].s2 * q;
	}
	return v;
}

/* x's run joins each model's design. */
static void add_run(struct next *N, const double *x)
{
	double z[MAXP], az[MAXP], d;
	int i, a, b;

	for (i = 0; i < N->nc; i++) {
		struct comp *c = &N->c[i];

		rows(c, x, z);
		d = 1 + quad(c, z, az);
		for (a = 0; a < c->nc; a++)
			for (b = 0; b < c->nc; b++)
				c->ai[a][b] -= az[a] * az[b] / d;
	}
}

static void add_comp(struct next *N, const int *opts, const uint64_t *cand, int nc, double s2,
		     double w)
{
	struct comp *c = &N->c[N->nc++];

	c->opts = opts;
	memcpy(c->cand, cand, sizeof(uint64_t) * (size_t)nc);
	c->nc = nc;
	c->s2 = s2;
	c->w = w;
}

/* The chosen model's parts, their designs started; -1 (e filled) if one cannot be. */
static int comps(struct next *N, const struct fpm_fits *F, int which, struct fp_err *e)
{
	const struct fpm_model *m = N->m;
	double wb = which == 0 ? 1 : which == 2 ? 0.25 : 0;
	double bb = which == 1 ? 1 : which == 2 ? 0.25 : 0;
	uint64_t cand[MAXP];
	int i, nc;

	N->c = calloc((size_t)m->nunits + 2, sizeof(*N->c));
	if (!N->c)
		return fp_fail(e, ENOMEM, "out of memory");
	for (i = 0; i < m->nunits; i++) {
		const struct fpm_unit *u = &m->units[i];
		const struct fpm_fit *f = m->threads ? &F->unit_cpu[i] : &F->unit[i];

		if (u->set)
			continue;
		nc = fpm_prune_terms(m, u->opts, cand, fpm_candidates(u->nopts, cand));
		add_comp(N, u->opts, cand, nc, noise(m, f, m->threads ? u->yc : u->y, u->u2), wb);
	}
	nc = fpm_outside_terms(m, N->lin_out, cand);
	add_comp(N, N->lin_out, cand, nc,
		 m->threads ? noise(m, &F->outc, m->outc, m->out_u2)
			    : noise(m, &F->out, m->out, m->out_u2), wb);
	nc = fpm_linear_terms(m, N->lin, cand);
	add_comp(N, N->lin, cand, nc, noise(m, &F->bb, m->wall, NULL), bb);
	for (i = 0; i < N->nc; i++)
		if (start(m, &N->c[i]))
			return fp_fail(e, EINVAL, "a model's design cannot be inverted");
	return 0;
}

/* Adds v to key K's values unless there; MAXCHOICE at most. */
static void add_value(struct key *K, double v)
{
	int i;

	for (i = 0; i < K->nv && K->v[i] != v; i++)
		;
	if (i == K->nv && K->nv < MAXCHOICE)
		K->v[K->nv++] = v;
}

/* The options as keys: a group's values, a binary option's 0 and 1, a numeric one's
 * values in the runs and its --choices levels. */
static void keys(struct next *N, const struct fpm_choices *ch)
{
	const struct fpm_model *m = N->m;
	int i, r, j;
	double d;

	for (i = 0; i < m->nopt; i++) {
		const struct fpm_opt *o = &m->opt[i];
		struct key *K = &N->k[N->nk];

		if (o->group >= 0 && m->group[o->group].first != i)
			continue;
		memset(K, 0, sizeof(*K));
		K->opt = i;
		K->group = o->group;
		N->nk++;
		if (o->group >= 0) {
			for (j = 0; j < m->group[o->group].n && j < MAXCHOICE; j++)
				K->v[K->nv++] = j;
		} else if (!o->numeric) {
			add_value(K, 0);
			add_value(K, 1);
		} else {
			const struct fpm_choice *c = fpm_choice_of(ch, o->name);

			for (r = 0; r < m->nruns; r++)
				add_value(K, m->x[r][i]);
			for (j = 0; c && j < c->n; j++)
				if (fpm_opt_number(c->v[j], &d))
					add_value(K, d);
		}
	}
}

static void set_key(const struct fpm_model *m, const struct key *K, int j, double *x)
{
	int g;

	if (K->group < 0) {
		x[K->opt] = K->v[j];
		return;
	}
	for (g = 0; g < m->group[K->group].n; g++)
		x[m->group[K->group].first + g] = g == j;
}

/* Literal l (NAME=VALUE as the runs spell it) at x; -1 if it names no option's value. */
static int lit_at(const struct fpm_model *m, const struct fpm_lit *l, const double *x)
{
	int g, j, i;
	double d;

	for (g = 0; g < m->ngroups; g++) {
		if (strcmp(m->group[g].name, l->name))
			continue;
		for (j = 0; j < m->group[g].n; j++)
			if (!strcmp(m->opt[m->group[g].first + j].value, l->value))
				return x[m->group[g].first + j] > 0.5;
		return -1;
	}
	i = fpm_opt_index(m, l->name);
	if (i < 0 || m->opt[i].group >= 0)
		return -1;
	if (m->opt[i].numeric)
		return fpm_opt_number(l->value, &d) ? d == x[i] : -1;
	j = fpm_binary_value(l->value, NULL);
	return j < 0 ? -1 : j == (int)x[i];
}

static int no_value(const struct fpm_constraint *c, const struct fpm_lit *l, struct fp_err *e)
{
	fp_fail(e, EINVAL, "--constraint %s: %s=%s is no option's value in the runs", c->text,
		l->name, l->value);
	return -1;
}

/* Whether x keeps every constraint (1), breaks one (0); -1 with e filled for a literal
 * that names no option's value. */
static int keeps(const struct next *N, const double *x, struct fp_err *e)
{
	int i, j, t;

	for (i = 0; i < N->cs->n; i++) {
		const struct fpm_constraint *c = &N->cs->c[i];
		int all = 1;

		for (j = 0; j < c->n; j++) {
			t = lit_at(N->m, &c->lit[j], x);
			if (t < 0)
				return no_value(c, &c->lit[j], e);
			all &= t;
		}
		t = c->implies ? lit_at(N->m, &c->then, x) : 0;
		if (t < 0)
			return no_value(c, &c->then, e);
		if (all && !t)
			return 0;
	}
	return 1;
}

/* The candidates: every combination of the keys' values, or MAXCAND drawn at random
 * (a fixed seed: the same runs, the same plan), those the constraints keep. */
static int candidates(struct next *N, struct fp_err *e)
{
	double total = 1, x[MAXOPT] = { 0 };
	uint64_t rnd = 0x9e3779b97f4a7c15ull;
	int i, k, ok, ncomb;

	for (k = 0; k < N->nk; k++)
		total *= N->k[k].nv;
	N->sampled = total > MAXCAND;
	ncomb = N->sampled ? MAXCAND : (int)total;
	N->x = calloc((size_t)ncomb, sizeof(*N->x));
	if (!N->x)
		return fp_fail(e, ENOMEM, "out of memory");
	for (i = 0; i < ncomb; i++) {
		int rest = i;

		for (k = 0; k < N->nk; k++) {
			int j;

			if (N->sampled) {
				rnd ^= rnd << 13, rnd ^= rnd >> 7, rnd ^= rnd << 17;
				j = (int)(rnd % (uint64_t)N->k[k].nv);
			} else {
				j = rest % N->k[k].nv;
				rest /= N->k[k].nv;
			}
			set_key(N->m, &N->k[k], j, x);
		}
		ok = keeps(N, x, e);
		if (ok < 0)
			return -1;
		if (ok)
			memcpy(N->x[N->nx++], x, sizeof(x));
	}
	if (!N->nx)
		return fp_fail(e, EINVAL, "no configuration keeps every constraint");
	return 0;
}

/* x as the runs spell it: {"NAME": "VALUE", ...}. */
static struct json_object *config_json(const struct next *N, const double *x)
{
	const struct fpm_model *m = N->m;
	struct json_object *o = json_object_new_object();
	char v[64];
	int k, j;

	for (k = 0; k < N->nk; k++) {
		const struct key *K = &N->k[k];
		const struct fpm_opt *op = &m->opt[K->opt];

		if (K->group >= 0) {
			const struct fpm_group *g = &m->group[K->group];

			for (j = 0; j < g->n && !(x[g->first + j] > 0.5); j++)
				;
			json_object_object_add(o, g->name, json_object_new_string(
				j < g->n ? m->opt[g->first + j].value : "?"));
			continue;
		}
		if (op->numeric)
			snprintf(v, sizeof(v), "%g", x[K->opt]);
		else
			snprintf(v, sizeof(v), "%s", x[K->opt] > 0.5 ? op->on : op->off);
		json_object_object_add(o, op->name, json_object_new_string(v));
	}
	return o;
}

/* The mean standard error over the predictable candidates (how many are not, into
 * *unpred). */
static double mean_se(const struct next *N, int *unpred)
{
	double s = 0;
	int i, n = 0, u;

	*unpred = 0;
	for (i = 0; i < N->nx; i++) {
		double v = variance(N, N->x[i], &u);

		if (u) {
			(*unpred)++;
			continue;
		}
		s += sqrt(v);
		n++;
	}
	return n ? s / n : 0;
}

/* The plan: next runs, greedily (see the top), into a JSON array. */
static struct json_object *pick(struct next *N, const struct fpm_fits *F,
				const struct fpm_wall_choice *ch, int next)
{
	struct json_object *a = json_object_new_array();
	int s, i, best, u, bu;
	double v, bv;

	for (s = 0; s < next; s++) {
		struct json_object *o = json_object_new_object();

		best = 0;
		bv = variance(N, N->x[0], &bu);
		for (i = 1; i < N->nx; i++) {
			v = variance(N, N->x[i], &u);
			if ((u && !bu) || (u == bu && v > bv))
				best = i, bv = v, bu = u;
		}
		json_object_object_add(o, "config", config_json(N, N->x[best]));
		json_object_object_add(o, "predicted_wall_ns", json_object_new_double(
			fpm_wall_choice_predict(N->m, F, ch, N->x[best])));
		json_object_object_add(o, "se_ns", bu ? NULL : json_object_new_double(sqrt(bv)));
		json_object_object_add(o, "identifies", json_object_new_boolean(bu));
		json_object_array_add(a, o);
		add_run(N, N->x[best]);
	}
	return a;
}

struct json_object *fpm_plan_next(char **files, int n, const struct fpm_spec *s, int next,
				  struct fp_err *e)
{
	static const struct fpm_spec none;
	struct fpm_model *m = fpm_model__new(files, n, s, NULL, e);
	struct next N = { .m = m, .cs = s ? &s->cs : &none.cs };
	struct json_object *o = NULL, *a;
	struct fpm_wall_choice ch;
	struct fpm_fits F = { 0 };
	bool *use = NULL;
	int i, unpred;
	double se;

	if (!m)
		return NULL;
	use = calloc((size_t)m->nruns, sizeof(bool));
	if (!use || fpm_fits_alloc(m, &F)) {
		fp_fail(e, ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < m->nruns; i++)
		use[i] = true;
	fpm_fit_all(m, use, &F);
	fpm_choose(m, &ch);
	keys(&N, s ? &s->ch : &none.ch);
	if (comps(&N, &F, ch.which, e) || candidates(&N, e))
		goto out;
	o = json_object_new_object();
	json_object_object_add(o, "chosen", json_object_new_string(
		fpm_wall_choice_name(ch.which)));
	json_object_object_add(o, "candidates", json_object_new_int(N.nx));
	json_object_object_add(o, "sampled", json_object_new_boolean(N.sampled));
	se = mean_se(&N, &unpred);
	json_object_object_add(o, "mean_se_ns_before", json_object_new_double(se));
	json_object_object_add(o, "unpredictable_before", json_object_new_int(unpred));
	a = pick(&N, &F, &ch, next);
	json_object_object_add(o, "next", a);
	se = mean_se(&N, &unpred);
	json_object_object_add(o, "mean_se_ns_after", json_object_new_double(se));
	json_object_object_add(o, "unpredictable_after", json_object_new_int(unpred));
out:
	free(use);
	free(N.c);
	free(N.x);
	fpm_fits_free(m, &F);
	fpm_model__free(m);
	return o;
}
