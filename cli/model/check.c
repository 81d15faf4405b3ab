// SPDX-License-Identifier: GPL-2.0
/*
 * featprof model: whether the models fit the runs, said per region and feature set.
 *
 * - Leave-one-out error of the unit's own time: every model refitted without each run
 *   in turn, sum |predicted - measured| over sum |measured| (a percentage that a region
 *   absent from some configurations, 0 there, does not blow up).
 * - Lack of fit. Where configurations were measured more than once, the spread of the
 *   runs of one configuration (pure error) is what the machine does; the model's
 *   residuals beyond it (lack of fit: the configurations' means against the model) are
 *   what the model misses: a nonlinear numeric option, an interaction no feature names.
 *   A unit does not fit when its lack-of-fit RMS is over three times the pure error's,
 *   over twice its stated uncertainty's RMS (what featprof can tell apart) and over
 *   0.5% of its mean time. Without replicates: its residual RMS over twice the stated
 *   uncertainty's and over 1% of its mean (the machine's run-to-run spread, which only
 *   replicates measure).
 * - Prediction intervals: a new run varies by each model's residual variance beyond the
 *   fit's own uncertainty; --predict's wall_pi95_ns adds it (summed over the models: the
 *   units' residuals are not independent of one another, so this leans wide).
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

/* The configurations: cfg[r] = the index of run r's first run with the same options. */
static void configs(const struct fpm_model *m, int *cfg, int *ncfg)
{
	int r, k;

	*ncfg = 0;
	for (r = 0; r < m->nruns; r++) {
		for (k = 0; k < r && memcmp(m->x[k], m->x[r], sizeof(m->x[0])); k++)
			;
		cfg[r] = k;
		*ncfg += k == r;
	}
}

double fpm_unit_loo(const struct fpm_model *m, int i)
{
	const struct fpm_unit *u = &m->units[i];
	bool *use = calloc((size_t)m->nruns, sizeof(bool));
	uint64_t cand[MAXP];
	double err = 0, tot = 0, var;
	struct fpm_fit f = { 0 };
	int r, k, nc = fpm_prune_terms(m, u->opts, cand, fpm_candidates(u->nopts, cand));

	for (r = 0; use && r < m->nruns; r++) {
		for (k = 0; k < m->nruns; k++)
			use[k] = k != r;
		fpm_fit(m, u->opts, cand, nc, u->y, u->u2, use, &f);
		err += fabs(fpm_predict(&f, u->opts, m->x[r], &var, NULL) - u->y[r]);
		tot += fabs(u->y[r]);
	}
	fpm_fit_free(&f);
	free(use);
	return use && tot > 0 ? 100 * err / tot : -1;
}

struct json_object *fpm_fit_check(const struct fpm_model *m, const struct fpm_fits *F)
{
	struct json_object *a = json_object_new_array();
	int *cfg = calloc((size_t)m->nruns, sizeof(int)), ncfg, i, r, k;
	double *mean = calloc((size_t)m->nruns, sizeof(double));
	int *cnt = calloc((size_t)m->nruns, sizeof(int));

	if (!cfg || !mean || !cnt)
		goto out;
	configs(m, cfg, &ncfg);
	for (i = 0; i < m->nunits; i++) {
		const struct fpm_unit *u = &m->units[i];
		const struct fpm_fit *f = &F->unit[i];
		double ss_res = 0, ss_pe = 0, u2 = 0, avg = 0, var, lof_rms, pe_rms, unc_rms;
		double loo_pct;
		int dof_pe = m->nruns - ncfg, dof_lof = ncfg - f->p;
		struct json_object *o = json_object_new_object();
		bool fits;

		memset(mean, 0, sizeof(double) * (size_t)m->nruns);
		memset(cnt, 0, sizeof(int) * (size_t)m->nruns);
		for (r = 0; r < m->nruns; r++) {
			mean[cfg[r]] += u->y[r];
			cnt[cfg[r]]++;
		}
		for (r = 0; r < m->nruns; r++) {
			double res = u->y[r] - fpm_predict(f, u->opts, m->x[r], &var, NULL);

			ss_res += res * res;
			k = cfg[r];
			ss_pe += (u->y[r] - mean[k] / cnt[k]) * (u->y[r] - mean[k] / cnt[k]);
			u2 += u->u2[r];
			avg += fabs(u->y[r]) / m->nruns;
		}
		unc_rms = sqrt(u2 / m->nruns);
		loo_pct = fpm_unit_loo(m, i);	/* once: it refits the unit n times */
		pe_rms = dof_pe > 0 ? sqrt(ss_pe / dof_pe) : 0;
		if (dof_pe > 0 && dof_lof > 0) {
			lof_rms = sqrt(fmax(0, ss_res - ss_pe) / dof_lof);
			fits = !(lof_rms > 3 * pe_rms && lof_rms > 2 * unc_rms &&
				 lof_rms > 0.005 * avg);
		} else {
			lof_rms = f->dof > 0 ? sqrt(ss_res / f->dof) : 0;
			fits = !(lof_rms > 2 * unc_rms && lof_rms > 0.01 * avg);
		}
		json_object_object_add(o, "unit", json_object_new_string(u->name));
		json_object_object_add(o, "kind", json_object_new_string(
					       u->set ? "feature_set" : "region"));
		json_object_object_add(o, "loo_error_pct", json_object_new_double(loo_pct));
		json_object_object_add(o, "lack_of_fit_rms_ns", json_object_new_double(lof_rms));
		json_object_object_add(o, "pure_error_rms_ns", json_object_new_double(pe_rms));
		json_object_object_add(o, "uncertainty_rms_ns", json_object_new_double(unc_rms));
		json_object_object_add(o, "fits", json_object_new_boolean(fits));
		json_object_object_add(o, "replicates", json_object_new_boolean(dof_pe > 0));
		json_object_array_add(a, o);
	}
out:
	free(cfg);
	free(mean);
	free(cnt);
	return a;
}

double fpm_predict_wall_noise(const struct fpm_model *m, const struct fpm_fits *F, const double *x)
{
	double s = 0;
	int i;

	if (m->threads) {	/* the CPU models' residuals and the overlap's */
		s = F->outc.s2 + F->ovl.s2;
		for (i = 0; i < m->nunits; i++)
			s += m->units[i].set ? 0 : F->unit_cpu[i].s2;
		return s;
	}
	s = F->out.s2;
	for (i = 0; i < m->nunits; i++)
		s += m->units[i].set ? 0 : F->unit[i].s2;
	return s;
}
