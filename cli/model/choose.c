// SPDX-License-Identifier: GPL-2.0
/*
 * featprof model: which whole-run wall model to believe, chosen by what it did on the runs
 * there are, and said.
 *
 * The white-box model adds up per-region terms; with few configurations each region's
 * terms carry their own noise, and their sum can predict a held-out configuration worse
 * than one linear model of the wall time (the black box), which pools it. Neither is
 * better always, so each run is left out in turn, both models are fitted on the others
 * and predict it; so is their mean (the mix). The one with the least leave-one-out MAPE
 * is chosen (the white box on a tie: its terms explain). Its prediction interval is
 * empirical: the leave-one-out relative errors are what a new run's error is like, so
 * the interval is the prediction times 1 +- t(0.975, n - 1) times their root mean square
 * (Student's t for the few runs whose spread it is). It covers a held-out run at about
 * its stated rate where the held-out configurations are like the runs' (inside their
 * range); tests/integration/test_model.py counts how often.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>

#include "model_impl.h"

static const char *const names[FPM_NCHOICE] = { "white_box", "black_box_linear", "mix" };

/* The three predictions of x by fits F. */
static void predict3(const struct fpm_model *m, const struct fpm_fits *F, const double *x,
		     double *p)
{
	double var, sys;
	int dof;

	p[0] = fpm_predict_wall(m, F, x, &var, &sys, &dof);
	p[1] = fpm_predict(&F->bb, F->lin_opts, x, &var, NULL);
	p[1] = p[1] > 0 ? p[1] : 0;
	p[2] = (p[0] + p[1]) / 2;
}

void fpm_choose(const struct fpm_model *m, struct fpm_wall_choice *c)
{
	bool *use = calloc((size_t)m->nruns, sizeof(bool));
	double ss[FPM_NCHOICE] = { 0 }, p[FPM_NCHOICE];
	struct fpm_fits F = { 0 };
	int i, k;

	for (k = 0; k < FPM_NCHOICE; k++)
		c->mape[k] = 0;
	c->which = 0;
	c->pi_rel = 0;
	c->n = 0;
	if (!use || fpm_fits_alloc(m, &F))
		goto out;
	for (i = 0; i < m->nruns; i++) {
		for (k = 0; k < m->nruns; k++)
			use[k] = k != i;
		fpm_fit_all(m, use, &F);
		predict3(m, &F, m->x[i], p);
		for (k = 0; k < FPM_NCHOICE; k++) {
			double r = (p[k] - m->wall[i]) / m->wall[i];

			c->mape[k] += fabs(r) * 100 / m->nruns;
			ss[k] += r * r;
		}
	}
	c->n = m->nruns;
	for (k = 1; k < FPM_NCHOICE; k++)
		if (c->mape[k] < c->mape[c->which])
			c->which = k;
	c->pi_rel = fpm_t975(m->nruns - 1) * sqrt(ss[c->which] / m->nruns);
out:
	free(use);
	fpm_fits_free(m, &F);
}

const char *fpm_wall_choice_name(int which)
{
	return names[which];
}

double fpm_wall_choice_predict(const struct fpm_model *m, const struct fpm_fits *F,
			  const struct fpm_wall_choice *c, const double *x)
{
	double p[FPM_NCHOICE];

	predict3(m, F, x, p);
	return p[c->which];
}

struct json_object *fpm_wall_choice_json(const struct fpm_wall_choice *c)
{
	struct json_object *o = json_object_new_object(), *l = json_object_new_object();
	char why[256];
	int k;

	for (k = 0; k < FPM_NCHOICE; k++)
		json_object_object_add(l, names[k], json_object_new_double(c->mape[k]));
	snprintf(why, sizeof(why), "the least leave-one-out error over %d runs: %.2f%% "
		 "(white-box %.2f%%, black-box linear %.2f%%, their mean %.2f%%)", c->n,
		 c->mape[c->which], c->mape[0], c->mape[1], c->mape[2]);
	json_object_object_add(o, "chosen", json_object_new_string(names[c->which]));
	json_object_object_add(o, "why", json_object_new_string(why));
	json_object_object_add(o, "loo_mape_pct", l);
	json_object_object_add(o, "pi95_relative", json_object_new_double(c->pi_rel));
	return o;
}
