// SPDX-License-Identifier: GPL-2.0
/*
 * featprof model: every model fitted with the runs in use, and a configuration's wall
 * and CPU time from them (cli/model/model.c reads the runs and reports).
 *
 * One thread at a time (in every run the regions' exclusive times sum to no more than
 * the wall time): the wall time is the regions' models plus the model of the time
 * outside them, additive because the regions' times are disjoint in time.
 *
 * Threads that overlap in regions (the regions sum to more than the wall in some run:
 * two worker threads compressing at once count twice) break that sum: the time outside
 * came out negative and so did the prediction. Then the wall time is the run's CPU time
 * less the threads' overlap. CPU time adds up across threads whatever they overlap (each
 * region's exclusive CPU time, white-box as above, plus the CPU time outside regions:
 * the run's CPU time from the kernel's accounting, getrusage of the command's process
 * tree, less the regions'). The overlap (CPU time less wall time: what running at once
 * saved) is learned from the work the threads get ("per-thread work plus a learned
 * parallel fraction"): a thread count T's share c = 1 - 1/T (parallel work P saves
 * P (1 - 1/T), Amdahl), and c times each region's CPU time and the CPU time outside
 * regions, from the CPU models at the run's options; a constant and the share, then each
 * work column kept where an F test says the runs tell it (fit_ovl), its coefficient the
 * fraction of that work that runs in parallel. Whatever sets a region's work (a level
 * and another option together) then sets its overlap through that region's own
 * white-box model; the overlap linear in T's products with each option alone, before,
 * missed pigz's 2-thread configurations by up to 47% (its compress threads' work is the
 * level's and --independent's product: docs/MODELS.md "Threads"). A ratio (CPU / wall)
 * linear in the options, before that, missed a held-out 2-thread configuration by 6-7%
 * (tests/integration/test_model.py t_model_threads). Which options the overlap changes
 * with: declared (--parallel), else found (find_parallel); featprof model --plan
 * --parallel T varies T with every other option, so that the work columns can be told
 * apart. Why not the main thread's critical path: featprof's figures are per region,
 * not per thread, and where the main thread waits for workers its wait depends on their
 * options, which its regions do not name.
 *
 * Influences the names miss (find_unnamed): a region's time may change with an option
 * none of its features names (a filter upstream that makes the encoder's input larger;
 * a thread count). For each unit and each such option, the unit's model with that
 * option's main effect added after all of the unit's own terms (so that it gets only
 * what they leave) is fitted to every run; the option joins the unit's options
 * (its interactions with them too, from then on) where its influence is beyond both the
 * 95% interval of its coefficient (the residual spread and the runs' stated
 * uncertainty) and 2% of the unit's mean time over the option's range (smaller ones are
 * within what compensation may leave: docs/TRACING.md). Decided once from all the runs,
 * before the leave-one-out refits (which are a little optimistic for it).
 *
 * No prediction is negative: a model's part below zero counts as zero, and the wall
 * time is held at no less than half the smallest wall / CPU measured times the CPU.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/core/core.h"
#include "model_impl.h"

uint64_t fpm_global_mask(uint64_t local, const int *opts)
{
	uint64_t g = 0;
	int b;

	for (b = 0; b < 64; b++)
		if (local >> b & 1)
			g |= 1ull << opts[b];
	return g;
}

/* The outside model's terms: the intercept, each option, and each interaction a region
 * names (what interacts in a region's code may interact around it: its set-up, its
 * allocations), so that such time does not lean on the main effects. */
int fpm_outside_terms(const struct fpm_model *m, int *opts, uint64_t *cand)
{
	int n = fpm_linear_terms(m, opts, cand), nlin = n - 1, i, j, k, b, nc;
	uint64_t c[MAXP];

	for (i = 0; i < m->nunits; i++) {
		nc = m->units[i].set ? 0 : fpm_candidates(m->units[i].nopts, c);
		nc = fpm_prune_terms(m, m->units[i].opts, c, nc);
		for (k = 0; k < nc; k++) {
			uint64_t g = fpm_global_mask(c[k], m->units[i].opts), l = 0;

			for (b = 0; b < 64; b++) {	/* over opts: a baseline is not there */
				if (!(g >> b & 1))
					continue;
				for (j = 0; j < nlin && opts[j] != b; j++)
					;
				if (j == nlin)
					break;
				l |= 1ull << j;
			}
			if (b < 64 || __builtin_popcountll(l) < 2)
				continue;
			for (j = 0; j < n && cand[j] != l; j++)
				;
			if (j == n && n < MAXP)
				cand[n++] = l;
		}
	}
	return n;
}

/* Option o's value v as the overlap's model codes it: a thread count (a numeric option
 * the overlap changes with, 1 or more) as 1 - 1/T less its least value's, so that the
 * overlap of parallel work P, P (1 - 1/T) (Amdahl), is linear in it; another as itself
 * less its least value. */
static double ovl_coded(const struct fpm_model *m, int o, double v)
{
	if ((m->par_opts >> o & 1) && m->opt[o].numeric && m->xmin[o] >= 1)
		return 1 / m->xmin[o] - 1 / (v > 1e-9 ? v : 1e-9);
	return v - m->xmin[o];
}

/* The threads' share at options x: the coded thread counts (par_opts), summed. */
static double par_share(const struct fpm_model *m, const double *x)
{
	double c = 0;
	int o;

	for (o = 0; o < m->nopt; o++)
		if (m->par_opts >> o & 1)
			c += ovl_coded(m, o, x[o]);
	return c;
}

/*
 * The overlap's columns: the threads' share c alone (parallel work no region holds: a
 * thread's start), then c times the CPU time outside regions, then c times each region's
 * CPU time. Its fit is a constant plus a coefficient per column: each one the share of
 * that work that runs in parallel. col[j]: OVL_SHARE, OVL_OUTSIDE or a unit's index.
 */
#define OVL_SHARE (-1)
#define OVL_OUTSIDE (-2)
static int ovl_columns(const struct fpm_model *m, int *col)
{
	int n = 0, i;

	col[n++] = OVL_SHARE;
	col[n++] = OVL_OUTSIDE;
	for (i = 0; i < m->nunits && n < MAXOPT; i++)
		if (!m->units[i].set)
			col[n++] = i;
	return n;
}

const char *fpm_ovl_column(const struct fpm_model *m, uint64_t mask)
{
	int col[MAXOPT], n = ovl_columns(m, col), j;

	for (j = 0; j < n && mask != 1ull << j; j++)
		;
	return j == n || col[j] == OVL_SHARE ? "the thread count alone" :
	       col[j] == OVL_OUTSIDE ? "(outside regions)" : m->units[col[j]].name;
}

/* A model's part of a prediction: never below zero. */
static double part(const struct fpm_fit *f, const int *opts, const double *x, double *var,
		   double *sys)
{
	double v = fpm_predict(f, opts, x, var, sys);

	return v > 0 ? v : 0;
}

/* The overlap's columns at options x into z: the work from the CPU models F (NULL: the
 * CPU times run r measured, when choosing the thread count before any fit). */
static int ovl_row(const struct fpm_model *m, const struct fpm_fits *F, const double *x, int r,
		   double *z)
{
	int col[MAXOPT], n = ovl_columns(m, col), j;
	double c = par_share(m, x), w, v, sys;

	for (j = 0; j < n; j++) {
		if (col[j] == OVL_SHARE)
			w = 1;
		else if (col[j] == OVL_OUTSIDE)
			w = F ? part(&F->outc, F->lin_opts, x, &v, &sys) : m->outc[r];
		else
			w = F ? part(&F->unit_cpu[col[j]], m->units[col[j]].opts, x, &v, &sys) :
				m->units[col[j]].yc[r];
		z[j] = c * w;
	}
	return n;
}

/* Residual sum of squares of the overlap's fit with terms cand[0..nc), into f (fpm_fit()
 * frees what f held). */
static double ovl_try(const struct fpm_model *mc, const int *opts, const uint64_t *cand, int nc,
		      const bool *use, struct fpm_fit *f)
{
	fpm_fit(mc, opts, cand, nc, mc->ovl, NULL, use, f);
	return f->p ? f->s2 * f->dof : INFINITY;
}

/* The overlap's fit over the runs in use: the constant and the threads' share, then each
 * work column, the largest work first, kept where it explains what the runs cannot
 * leave to noise (an F test at about 1%: the drop in residual over the residual
 * variance beyond twice t975(dof) squared; at 5%, a noise column entered one fit in four
 * or five, and pipeline's held-out wall moved by up to 4.5%). The columns are the CPU
 * models' figures (F), not the runs' own CPU times: a region whose model is a constant
 * then adds nothing the share does not hold rather than a column of its noise. Without
 * the test, every region its fraction: zstd's five regions, whose work moves together
 * with the level, got fractions the runs' noise set, and held-out 2-thread
 * configurations came out up to 90% off. */
static void fit_ovl(const struct fpm_model *m, const struct fpm_fits *F, const bool *use,
		    struct fpm_fit *f)
{
	struct fpm_model *mc = malloc(sizeof(*mc));
	int col[MAXOPT], opts[MAXOPT], order[MAXOPT], n = ovl_columns(m, col), nc = 2, j, k, r;
	double size[MAXOPT] = { 0 }, rss, best;
	uint64_t cand[MAXP] = { 0, 1 };	/* the constant, the share (column 0) */

	if (!mc)
		return;
	for (r = 0; m->xc && r < m->nruns; r++)
		ovl_row(m, F, m->x[r], r, m->xc[r]);
	*mc = *m;
	mc->x = m->xc;
	for (j = 0; j < n; j++) {
		opts[j] = j;
		order[j] = j;
		for (r = 0; m->xc && r < m->nruns; r++)
			size[j] += !use || use[r] ? fabs(m->xc[r][j]) : 0;
	}
	for (j = 2; j < n; j++)	/* the work columns, largest first (insertion sort) */
		for (k = j; k > 1 && size[order[k]] > size[order[k - 1]]; k--) {
			int t = order[k];

			order[k] = order[k - 1];
			order[k - 1] = t;
		}
	best = ovl_try(mc, opts, cand, nc, use, f);
	for (j = 1; j < n && nc < MAXP; j++) {
		cand[nc] = 1ull << order[j];
		rss = ovl_try(mc, opts, cand, nc + 1, use, f);
		if (f->dof > 0 && rss < best &&
		    (best - rss) / (rss / f->dof) > 2 * fpm_t975(f->dof) * fpm_t975(f->dof)) {
			best = rss;
			nc++;
		}
	}
	ovl_try(mc, opts, cand, nc, use, f);
	free(mc);
}

void fpm_fit_all(const struct fpm_model *m, const bool *use, struct fpm_fits *F)
{
	uint64_t cand[MAXP];
	int i, nc;

	for (i = 0; i < m->nunits; i++) {
		nc = fpm_candidates(m->units[i].nopts, cand);
		nc = fpm_prune_terms(m, m->units[i].opts, cand, nc);
		fpm_fit(m, m->units[i].opts, cand, nc, m->units[i].y, m->units[i].u2, use,
		    &F->unit[i]);
		if (m->has_cpu && !m->units[i].set)
			fpm_fit(m, m->units[i].opts, cand, nc, m->units[i].yc, m->units[i].u2, use,
			    &F->unit_cpu[i]);
	}
	nc = fpm_outside_terms(m, F->lin_opts, cand);
	fpm_fit(m, F->lin_opts, cand, nc, m->out, m->out_u2, use, &F->out);
	if (m->has_cpu)
		fpm_fit(m, F->lin_opts, cand, nc, m->outc, m->out_u2, use, &F->outc);
	nc = fpm_linear_terms(m, F->lin_opts, cand);
	fpm_fit(m, F->lin_opts, cand, nc, m->wall, NULL, use, &F->bb);
	if (m->threads)
		fit_ovl(m, F, use, &F->ovl);
}

/* The range of option o's coded values over the runs. */
static double opt_range(const struct fpm_model *m, int o)
{
	double lo = m->x[0][o], hi = lo;
	int r;

	for (r = 1; r < m->nruns; r++) {
		lo = m->x[r][o] < lo ? m->x[r][o] : lo;
		hi = m->x[r][o] > hi ? m->x[r][o] : hi;
	}
	return hi - lo;
}

/* The overlap's residual sum of squares with the options of par as its thread counts. */
static double ovl_rss(struct fpm_model *m, uint64_t par)
{
	struct fpm_fit f = { 0 };
	double rss;

	m->par_opts = par;
	fit_ovl(m, NULL, NULL, &f);
	rss = f.p ? f.s2 * f.dof : INFINITY;
	fpm_fit_free(&f);
	return rss;
}

void fpm_find_parallel(struct fpm_model *m, uint64_t declared)
{
	uint64_t par = declared;
	double none, best, rss;
	int k, o, r;

	m->par_opts = declared;
	if (!m->threads)
		return;
	for (k = 0; k < m->nopt; k++)
		for (r = 0; r < m->nruns; r++)
			m->xmin[k] = !r || m->x[r][k] < m->xmin[k] ? m->x[r][k] : m->xmin[k];
	/* not declared: the option under which, as the thread count, the overlap's model
	 * leaves the least residual (work spread over the threads also changes the
	 * overlap, but not as 1 - 1/T), if it explains more than half of what a constant
	 * leaves */
	none = best = ovl_rss(m, 0);
	for (o = 0; !declared && o < m->nopt; o++) {
		if (fpm_is_baseline(m, o) || opt_range(m, o) == 0)
			continue;
		rss = ovl_rss(m, 1ull << o);
		if (rss < best && rss < none / 2) {
			best = rss;
			par = 1ull << o;
		}
	}
	ovl_rss(m, par);	/* the codes of the one chosen */
}

/*
 * Option o's main effects in unit u's model (u's options and o's: o alone, or every value
 * of o's one-of group but the baseline, which the intercept holds), after all of u's
 * own terms: per added option its coefficient and the half width of its 95% interval,
 * and the fit's residual sum of squares; how many were added (0: the runs cannot tell
 * them apart).
 */
static int unnamed_effect(const struct fpm_model *m, const struct fpm_unit *u, int o, double *beta,
			  double *half, int *added, double *rss)
{
	int opts[MAXOPT + MAXCHOICE], nc, n = 0, na = 0, j, k, first = o, last = o;
	uint64_t own[MAXP], cand[MAXP + MAXCHOICE];
	struct fpm_fit f = { 0 };

	if (m->opt[o].group >= 0) {
		first = m->group[m->opt[o].group].first + 1;
		last = m->group[m->opt[o].group].first + m->group[m->opt[o].group].n - 1;
	}
	if (u->nopts + last - first + 1 > MAXOPT)
		return 0;
	memcpy(opts, u->opts, sizeof(int) * (size_t)u->nopts);
	nc = fpm_prune_terms(m, opts, own, fpm_candidates(u->nopts, own));
	/* u's own terms first, o's last: o gets only what they leave (a plan varies
	 * an unnamed option together with named ones; fitted before their interactions,
	 * it took seal's A*B in configurable's plan) */
	for (k = 0; k < nc; k++)
		cand[n++] = own[k];
	for (k = first; k <= last; k++) {
		opts[u->nopts + na] = k;
		added[na] = k;
		cand[n++] = 1ull << (u->nopts + na++);
	}
	fpm_fit(m, opts, cand, n, u->y, u->u2, NULL, &f);
	for (k = 0; k < na; k++) {
		double w[MAXP] = { 0 };

		for (j = 0; j < f.p && f.mask[j] != 1ull << (u->nopts + k); j++)
			;
		if (j == f.p) {
			fpm_fit_free(&f);
			return 0;
		}
		w[j] = 1;
		beta[k] = f.beta[j];
		half[k] = fpm_t975(f.dof) * sqrt(f.cov[j][j]) + fpm_systematic(&f, w);
	}
	*rss = f.s2 * f.dof;
	fpm_fit_free(&f);
	return na;
}

/* Whether option o's column is option b's given unit u's terms (o adds nothing to a fit
 * of u's options and b): the runs cannot tell their influences apart. */
static bool confounded(const struct fpm_model *m, const struct fpm_unit *u, int b, int o)
{
	int opts[MAXOPT + 1], nc, r;
	uint64_t cand[MAXP + 1];
	double *y = calloc((size_t)m->nruns, sizeof(double)), mean = 0, ss = 0, rss;
	struct fpm_fit f = { 0 };

	if (!y || u->nopts >= MAXOPT)
		return free(y), false;
	memcpy(opts, u->opts, sizeof(int) * (size_t)u->nopts);
	opts[u->nopts] = b;
	nc = fpm_prune_terms(m, opts, cand, fpm_candidates(u->nopts, cand));
	cand[nc++] = 1ull << u->nopts;
	for (r = 0; r < m->nruns; r++)
		mean += (y[r] = m->x[r][o]) / m->nruns;
	for (r = 0; r < m->nruns; r++)
		ss += (y[r] - mean) * (y[r] - mean);
	fpm_fit(m, opts, cand, nc, y, NULL, NULL, &f);
	rss = f.s2 * f.dof;
	fpm_fit_free(&f);
	free(y);
	return f.dof > 0 && ss > 0 && rss <= 1e-6 * ss;
}

/* Forward selection: of the options u's time changes with beyond their noise (a one-of
 * option with all of its values at once: it is one option), the one that leaves the
 * least residual joins first, then the rest are tried again given it (a plan that
 * switches two options on together makes each look like an influence alone; the one
 * that also explains the other runs is taken). Options whose columns are the taken one's
 * given the unit's terms (their runs moved together) join with it, marked tied: the
 * model cannot tell them apart (the later ones' terms are left out as not estimable),
 * and a plan from these runs varies both. */
int fpm_find_unnamed(struct fpm_model *m)
{
	int i, o, r, k, added = 0;

	for (i = 0; i < m->nunits; i++) {
		struct fpm_unit *u = &m->units[i];
		double mean = 0;

		u->named = u->nopts;
		for (r = 0; r < m->nruns; r++)
			mean += fabs(u->y[r]) / m->nruns;
		for (;;) {
			double beta[MAXCHOICE], half[MAXCHOICE], rss, best_rss = INFINITY;
			double bb[MAXCHOICE] = { 0 }, bh[MAXCHOICE] = { 0 };
			int add[MAXCHOICE], best[MAXCHOICE], na, nbest = 0;
			int ties[MAXOPT], nties = 0, sig[MAXOPT], nsig = 0;

			for (o = 0; o < m->nopt; o++) {
				bool beyond = false;

				for (k = 0; k < u->nopts && u->opts[k] != o &&
					    !fpm_same_group(m, u->opts[k], o); k++)
					;
				if (k < u->nopts || (m->opt[o].group >= 0 &&
						     m->group[m->opt[o].group].first + 1 != o))
					continue;	/* a group: once, at its first value */
				na = unnamed_effect(m, u, o, beta, half, add, &rss);
				for (k = 0; k < na; k++)
					beyond = beyond || (fabs(beta[k]) > half[k] &&
							    fabs(beta[k]) * opt_range(m, add[k]) >
								    0.02 * mean);
				if (!na || !beyond)
					continue;
				if (na == 1 && nsig < MAXOPT)
					sig[nsig++] = add[0];
				if (rss >= best_rss)
					continue;
				best_rss = rss;
				nbest = na;
				memcpy(best, add, sizeof(int) * (size_t)na);
				memcpy(bb, beta, sizeof(double) * (size_t)na);
				memcpy(bh, half, sizeof(double) * (size_t)na);
			}
			/* the others the runs cannot tell from the one taken: their columns are
			 * the same given the unit's terms (a design property, whatever the noise
			 * made of their residuals) */
			for (k = 0; nbest == 1 && k < nsig; k++)
				if (sig[k] != best[0] && confounded(m, u, best[0], sig[k]))
					ties[nties++] = sig[k];
			if (!nbest || u->nopts + nbest > MAXOPT)
				break;
			for (k = 0; k < nbest; k++) {
				u->unnamed_ns[u->nopts] = bb[k];
				u->unnamed_ci[u->nopts] = bh[k];
				u->tied[u->nopts] = -1;
				u->opts[u->nopts++] = best[k];
			}
			for (k = 0; k < nties && u->nopts < MAXOPT; k++) {
				u->unnamed_ns[u->nopts] = 0;
				u->unnamed_ci[u->nopts] = 0;
				u->tied[u->nopts] = best[0];
				u->opts[u->nopts++] = ties[k];
			}
			added += nbest + nties;
		}
	}
	return added;
}

int fpm_min_dof(int a, int b)
{
	return !a ? b : !b ? a : a < b ? a : b;
}


/* The outside model and every region's (units: per unit, the wall or the CPU fits) at x:
 * their sum, random variance, systematic bound and least dof. */
static double sum_parts(const struct fpm_model *m, const struct fpm_fits *F,
			const struct fpm_fit *units, const struct fpm_fit *outside, const double *x,
			double *var, double *sys, int *dof)
{
	double v, s;
	int i;

	*sys = 0;
	s = part(outside, F->lin_opts, x, var, sys);
	*dof = outside->dof;
	for (i = 0; i < m->nunits; i++) {
		if (m->units[i].set)
			continue;
		s += part(&units[i], m->units[i].opts, x, &v, sys);
		*var += v;
		*dof = fpm_min_dof(*dof, units[i].dof);
	}
	return s;
}

/* The overlap (CPU time less wall time) at x. */
static double predict_ovl(const struct fpm_model *m, const struct fpm_fits *F, const double *x,
		       double *var)
{
	int opts[MAXOPT], n, j;
	double z[MAXOPT];

	n = ovl_row(m, F, x, -1, z);
	for (j = 0; j < n; j++)
		opts[j] = j;
	return fpm_predict(&F->ovl, opts, z, var, NULL);
}

double fpm_predict_cpu(const struct fpm_model *m, const struct fpm_fits *F, const double *x,
		   double *var, double *sys, int *dof)
{
	if (m->has_cpu)
		return sum_parts(m, F, F->unit_cpu, &F->outc, x, var, sys, dof);
	*sys = *var = 0;
	*dof = 0;
	return 0;
}

double fpm_predict_wall(const struct fpm_model *m, const struct fpm_fits *F, const double *x,
		    double *var, double *sys, int *dof)
{
	double s, o, ov;

	if (!m->threads)
		return sum_parts(m, F, F->unit, &F->out, x, var, sys, dof);
	s = fpm_predict_cpu(m, F, x, var, sys, dof);	/* CPU time less the threads' overlap */
	o = predict_ovl(m, F, x, &ov);
	*var += ov;
	*dof = fpm_min_dof(*dof, F->ovl.dof);
	return s - o > s * m->wall_floor ? s - o : s * m->wall_floor;
}

int fpm_fits_alloc(const struct fpm_model *m, struct fpm_fits *F)
{
	F->unit = calloc((size_t)m->nunits + 1, sizeof(struct fpm_fit));
	F->unit_cpu = calloc((size_t)m->nunits + 1, sizeof(struct fpm_fit));
	return F->unit && F->unit_cpu ? 0 : -1;
}

void fpm_fits_free(const struct fpm_model *m, struct fpm_fits *F)
{
	int i;

	for (i = 0; F->unit && i < m->nunits; i++)
		fpm_fit_free(&F->unit[i]);
	for (i = 0; F->unit_cpu && i < m->nunits; i++)
		fpm_fit_free(&F->unit_cpu[i]);
	fpm_fit_free(&F->out);
	fpm_fit_free(&F->outc);
	fpm_fit_free(&F->bb);
	fpm_fit_free(&F->ovl);
	free(F->unit);
	free(F->unit_cpu);
}

/* Leave-one-out MAPE (%) of the white-box and the black-box models' wall time, and of
 * the white-box CPU time (0 where the runs have none). */
void fpm_loo(const struct fpm_model *m, double *wb, double *bb, double *cpu)
{
	bool *use = calloc((size_t)m->nruns, sizeof(bool));
	struct fpm_fits F = { 0 };
	int i, k, dof;
	double var, sys;

	*wb = *bb = *cpu = 0;
	if (fpm_fits_alloc(m, &F))
		goto out;
	for (i = 0; use && i < m->nruns; i++) {
		for (k = 0; k < m->nruns; k++)
			use[k] = k != i;
		fpm_fit_all(m, use, &F);
		*wb += fabs(fpm_predict_wall(m, &F, m->x[i], &var, &sys, &dof) - m->wall[i]) /
		       m->wall[i];
		*bb += fabs(fpm_predict(&F.bb, F.lin_opts, m->x[i], &var, NULL) - m->wall[i]) /
		       m->wall[i];
		if (m->has_cpu && m->cpu[i] > 0)
			*cpu +=
			    fabs(fpm_predict_cpu(m, &F, m->x[i], &var, &sys, &dof) - m->cpu[i]) /
			    m->cpu[i];
	}
	*wb *= 100.0 / m->nruns;
	*bb *= 100.0 / m->nruns;
	*cpu *= 100.0 / m->nruns;
out:
	free(use);
	fpm_fits_free(m, &F);
}
