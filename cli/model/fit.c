// SPDX-License-Identifier: GPL-2.0
/* featprof model: least squares by hand (normal equations, Gauss-Jordan inversion), the
 * terms a model may have, predictions with their random and systematic parts. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model_impl.h"

/* --- least squares ------------------------------------------------------------------ */

/* A term's value for a run: the product of its options' values. */
double fpm_term_value(const double *x, const int *opts, uint64_t mask)
{
	double v = 1;
	int b;

	for (b = 0; b < 64; b++)
		if (mask >> b & 1)
			v *= x[opts[b]];
	return v;
}

/* Inverts the p x p matrix a in place (Gauss-Jordan, partial pivoting); -1 if singular. */
int fpm_invert(double a[MAXP][MAXP], int p)
{
	static double inv[MAXP][MAXP];
	int i, j, k;

	for (i = 0; i < p; i++)
		for (j = 0; j < p; j++)
			inv[i][j] = i == j;
	for (i = 0; i < p; i++) {
		int piv = i;
		double d;

		for (k = i + 1; k < p; k++)
			if (fabs(a[k][i]) > fabs(a[piv][i]))
				piv = k;
		if (fabs(a[piv][i]) < 1e-300)
			return -1;
		for (j = 0; j < p; j++) {
			d = a[i][j], a[i][j] = a[piv][j], a[piv][j] = d;
			d = inv[i][j], inv[i][j] = inv[piv][j], inv[piv][j] = d;
		}
		d = a[i][i];
		for (j = 0; j < p; j++)
			a[i][j] /= d, inv[i][j] /= d;
		for (k = 0; k < p; k++) {
			if (k == i || a[k][i] == 0)
				continue;
			d = a[k][i];
			for (j = 0; j < p; j++)
				a[k][j] -= d * a[i][j], inv[k][j] -= d * inv[i][j];
		}
	}
	memcpy(a, inv, sizeof(inv));
	return 0;
}

/*
 * Fits y (per run; runs with use[i] only) with the candidate terms cand[0..nc) over the
 * options opts: keeps, in the order given (main effects before interactions), each term
 * whose column the kept ones do not already explain (Gram-Schmidt), then solves the
 * normal equations.
 */
/* The candidate terms kept, in the order given (main effects before interactions): each
 * whose column over runs idx[0..n) the kept ones do not already explain (Gram-Schmidt, two
 * passes); the others counted as dropped. Into f->mask, f->p, f->dropped. */
static void select_terms(const struct fpm_model *m, const int *opts, const uint64_t *cand,
			 int nc, const int *idx, int n, struct fpm_fit *f)
{
	double *q = NULL, *v;
	int j, k, c;

	q = calloc((size_t)MAXP * (size_t)(n + 1), sizeof(double));
	v = calloc((size_t)n + 1, sizeof(double));
	for (c = 0; q && v && c < nc && f->p < MAXP && f->p < n; c++) {
		double norm0 = 0, norm = 0, d;
		int pass;

		for (k = 0; k < n; k++) {
			v[k] = fpm_term_value(m->x[idx[k]], opts, cand[c]);
			norm0 += v[k] * v[k];
		}
		for (pass = 0; pass < 2; pass++)
			for (j = 0; j < f->p; j++) {
				for (d = 0, k = 0; k < n; k++)
					d += q[j * n + k] * v[k];
				for (k = 0; k < n; k++)
					v[k] -= d * q[j * n + k];
			}
		for (k = 0; k < n; k++)
			norm += v[k] * v[k];
		if (norm0 == 0 || norm <= 1e-16 * norm0) {
			if (f->dropped < 8)
				f->dropped_mask[f->dropped] = cand[c];
			f->dropped++;
			continue;
		}
		for (k = 0; k < n; k++)
			q[f->p * n + k] = v[k] / sqrt(norm);
		f->mask[f->p++] = cand[c];
	}
	for (; c < nc; c++) {	/* no room (more terms than runs) */
		if (f->dropped < 8)
			f->dropped_mask[f->dropped] = cand[c];
		f->dropped++;
	}
	free(q);
	free(v);
}

void fpm_fit(const struct fpm_model *m, const int *opts, const uint64_t *cand, int nc,
		const double *y, const double *u2, const bool *use, struct fpm_fit *f)
{
	int n = 0, i, j, k, idx[MAXRUNS];
	double a[MAXP][MAXP], xty[MAXP], rss = 0, s2r;

	free(f->h);
	free(f->u);
	memset(f, 0, sizeof(*f));
	for (i = 0; i < m->nruns && n < MAXRUNS; i++)
		if (!use || use[i])
			idx[n++] = i;
	select_terms(m, opts, cand, nc, idx, n, f);
	for (i = 0; i < f->p; i++) {
		xty[i] = 0;
		for (j = 0; j < f->p; j++)
			a[i][j] = 0;
		for (k = 0; k < n; k++) {
			double ti = fpm_term_value(m->x[idx[k]], opts, f->mask[i]);

			xty[i] += ti * y[idx[k]];
			for (j = 0; j < f->p; j++)
				a[i][j] += ti * fpm_term_value(m->x[idx[k]], opts, f->mask[j]);
		}
	}
	f->h = calloc((size_t)f->p * (size_t)n + 1, sizeof(double));
	f->u = calloc((size_t)n + 1, sizeof(double));
	if (!f->p || !f->h || !f->u || fpm_invert(a, f->p)) {
		f->p = 0;
		return;
	}
	f->n = n;
	for (k = 0; k < n; k++) {	/* h = (X'X)^-1 X' */
		f->u[k] = u2 ? sqrt(u2[idx[k]]) : 0;
		for (i = 0; i < f->p; i++)
			for (j = 0; j < f->p; j++)
				f->h[i * n + k] +=
				    a[i][j] * fpm_term_value(m->x[idx[k]], opts, f->mask[j]);
	}
	for (i = 0; i < f->p; i++)
		for (f->beta[i] = 0, j = 0; j < f->p; j++)
			f->beta[i] += a[i][j] * xty[j];
	for (k = 0; k < n; k++) {
		double r = y[idx[k]];

		for (i = 0; i < f->p; i++)
			r -= f->beta[i] * fpm_term_value(m->x[idx[k]], opts, f->mask[i]);
		rss += r * r;
	}
	f->dof = n - f->p;
	s2r = f->dof > 0 ? rss / f->dof : 0;
	f->s2 = s2r;
	for (i = 0; i < f->p; i++)
		for (j = 0; j < f->p; j++)
			f->cov[i][j] = a[i][j] * s2r;
}

/* The systematic part of the 95% interval of sum_i w[i] beta[i]: twice the runs' stated
 * uncertainties, through h. */
double fpm_systematic(const struct fpm_fit *f, const double *w)
{
	double s = 0, g;
	int i, k;

	for (k = 0; k < f->n; k++) {
		for (g = 0, i = 0; i < f->p; i++)
			g += w[i] * f->h[i * f->n + k];
		s += 2 * fabs(g) * f->u[k];
	}
	return s;
}

/* The fit's value at x (coded options), its random variance and systematic bound. */
double fpm_predict(const struct fpm_fit *f, const int *opts, const double *x, double *var,
		      double *sys)
{
	double t[MAXP], val = 0;
	int i, j;

	for (i = 0; i < f->p; i++) {
		t[i] = fpm_term_value(x, opts, f->mask[i]);
		val += f->beta[i] * t[i];
	}
	for (*var = 0, i = 0; i < f->p; i++)
		for (j = 0; j < f->p; j++)
			*var += t[i] * f->cov[i][j] * t[j];
	if (sys)
		*sys += fpm_systematic(f, t);
	return val;
}

void fpm_fit_free(struct fpm_fit *f)
{
	free(f->h);
	free(f->u);
	f->h = f->u = NULL;
}

/* Every product of a unit's options (all of them up to 6 options; beyond, pairs at most),
 * main effects first. */
int fpm_candidates(int nopts, uint64_t *cand)
{
	int order, nc = 0, maxorder = nopts <= 6 ? nopts : 2;
	uint64_t s, lim = 1ull << (nopts < 20 ? nopts : 20);	/* beyond: not modelled */

	for (order = 0; order <= maxorder; order++)
		for (s = 0; s < lim; s++)
			if (__builtin_popcountll(s) == order && nc < MAXP)
				cand[nc++] = s;
	return nc;
}
