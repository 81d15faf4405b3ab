/* SPDX-License-Identifier: GPL-2.0 */
/* featprof model's parts (cli/model.c the models and the command, model_fit.c least
 * squares, model_plan.c --plan): what they share. */
#ifndef FP_CLI_MODEL_H
#define FP_CLI_MODEL_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#define MAXOPT 64	/* options */
#define MAXP 64		/* terms of one model */
#define MAXTERMS 4096	/* terms of the whole model, summed by option set */
#define MAXRUNS 4096

struct opt {
	char name[64];
	bool numeric;
	char on[16], off[16];	/* how the runs spell a binary option's values */
};

struct unit {			/* a region, or a feature set */
	char *name;
	int opts[MAXOPT], nopts;	/* its options (indices) */
	double *y, *u2;			/* per run: its time, stated uncertainty squared */
	bool set;
	char **feats;			/* a set's features */
	int nfeats;
};

struct fit {
	int p, dof, n;
	uint64_t mask[MAXP];	/* terms kept, over the unit's options' positions */
	double beta[MAXP];
	double cov[MAXP][MAXP];	/* random: residual variance x (X'X)^-1 */
	double *h;		/* p x n: beta = h y (the weights of the runs used) */
	double *u;		/* n: the runs' stated uncertainties */
	int dropped;		/* terms the runs could not tell apart */
	uint64_t dropped_mask[8];
};

struct model {
	struct opt opt[MAXOPT];
	int nopt, nruns, nunits;
	char **files;
	double (*x)[MAXOPT];	/* per run: coded option values */
	double *wall;		/* per run */
	double *out, *out_u2;	/* per run: time outside regions */
	struct unit *units;
	char *exe;
};


/*
 * Fits y (per run; runs with use[i] only) with the candidate terms cand[0..nc) over the
 * options opts: keeps, in the order given (main effects before interactions), each term
 * whose column the kept ones do not already explain (Gram-Schmidt), then solves the
 * normal equations.
 */
void fit(const struct model *m, const int *opts, const uint64_t *cand, int nc,
		const double *y, const double *u2, const bool *use, struct fit *f);
/* The systematic part of the 95% interval of sum_i w[i] beta[i]: twice the runs' stated
 * uncertainties, through h. */
double systematic(const struct fit *f, const double *w);
/* The fit's value at x (coded options), its random variance and systematic bound. */
double predict(const struct fit *f, const int *opts, const double *x, double *var,
		      double *sys);
void fit_free(struct fit *f);
/* Every product of a unit's options (all of them up to 6 options; beyond, pairs at most),
 * main effects first. */
int candidates(int nopts, uint64_t *cand);
/* The outside model's and the black-box model's terms: the intercept, each option. */
int linear_terms(int nopt, int *opts, uint64_t *cand);
/* --plan of the run file `file`: its exit status. */
int cmd_plan(const char *file, int json);
/* model.c: an option's index in m, -1 if none; a run file read (NULL after a one-line
 * error). */
int opt_index(const struct model *m, const char *name);
struct json_object *read_run(const char *file);

/* 1 or 0 for a binary word (on/off, true/false, yes/no, enabled/disabled, 1/0; any
 * case), -1 otherwise; the pair's index in *pair. The pair's word for on or off. */
int binary_value(const char *v, int *pair);
const char *binary_word(int pair, bool on);

#endif
