/* SPDX-License-Identifier: GPL-2.0 */
/* The model library's private header (cli/model/: model.c the models, fit.c least
 * squares, wall.c the wall and CPU predictions, check.c lack of fit, opts.c the options,
 * plan.c --plan, next.c --plan --next): what its files share. */
#ifndef FP_CLI_MODEL_IMPL_H
#define FP_CLI_MODEL_IMPL_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "model.h"

#define MAXOPT 64	/* options */
#define MAXP 64		/* terms of one model */
#define MAXTERMS 4096	/* terms of the whole model, summed by option set */
#define MAXRUNS 4096

#define MAXCHOICE 32	/* values of a one-of option */
#define MAXLIT 8	/* literals of a constraint's left side */

struct fpm_opt {
	char name[64];		/* as --config names it; a one-of value's NAME=VALUE */
	bool numeric;
	char on[48], off[48];	/* how the runs spell a binary option's values */
	int group;		/* a one-of value's group, else -1 */
	char value[48];		/* a one-of value's VALUE */
};

/* A one-of option: its values are opt[first..first+n), the first the baseline. */
struct fpm_group {
	char name[64];
	int first, n;
};

/* --choices NAME=V1|V2|...: a one-of option's values, or a numeric one's levels. */
struct fpm_choice {
	char name[64];
	char v[MAXCHOICE][48];
	int n;
};
struct fpm_choices {
	struct fpm_choice c[MAXOPT];
	int n;
};

/* --constraint: lit[0] & ... & lit[n-1] never, or -> then. */
struct fpm_lit {
	char name[64], value[48];
};
struct fpm_constraint {
	struct fpm_lit lit[MAXLIT], then;
	int n;
	bool implies;
	char text[256];
};
struct fpm_constraints {
	struct fpm_constraint c[MAXOPT];
	int n;
};

struct fpm_unit {			/* a region, or a feature set */
	char *name;
	int opts[MAXOPT], nopts;	/* its options (indices) */
	double *y, *u2;			/* per run: its time, stated uncertainty squared */
	double *yc;			/* per run: its CPU time (regions only) */
	int named;			/* opts[0..named) its features name; the rest
					 * the runs showed it depends on (find_unnamed) */
	double unnamed_ns[MAXOPT], unnamed_ci[MAXOPT];	/* those: influence, 95% half */
	int tied[MAXOPT];	/* those: the option the runs cannot tell it from, else -1 */
	bool set;
	char **feats;			/* a set's features */
	int nfeats;
	char *object;		/* a function's object (model --functions), else NULL */
	struct json_object *in_regions;	/* a function's: {region: true} of the regions its
					 * samples were in, in any run */
	bool refined;			/* a function timed exactly (model --refine) */
	char *symbol;			/* a function's symbol where its name is not (a
					 * C++ or Rust name, a clone folded) */
};

struct fpm_fit {
	int p, dof, n;
	uint64_t mask[MAXP];	/* terms kept, over the unit's options' positions */
	double beta[MAXP];
	double s2;		/* residual variance (0: no residual dof) */
	double cov[MAXP][MAXP];	/* random: residual variance x (X'X)^-1 */
	double *h;		/* p x n: beta = h y (the weights of the runs used) */
	double *u;		/* n: the runs' stated uncertainties */
	int dropped;		/* terms the runs could not tell apart */
	uint64_t dropped_mask[8];
};

struct fpm_model {
	struct fpm_opt opt[MAXOPT];
	struct fpm_group group[MAXOPT];
	int nopt, nruns, nunits, ngroups;
	char **files;
	double (*x)[MAXOPT];	/* per run: coded option values */
	double *wall;		/* per run */
	double *out, *out_u2;	/* per run: time outside regions */
	double *cpu, *outc;	/* per run: the run's CPU time, the part outside regions */
	double *ovl;		/* per run: its overlap, CPU time less wall time */
	bool has_cpu;		/* every run has its CPU time (run.cpu_ns) */
	bool threads;		/* regions overlap on threads: wall = CPU - overlap */
	double overlap;		/* the largest of the runs' regions' sum / wall time */
	double wall_floor;	/* the least wall / CPU a prediction uses */
	uint64_t par_opts;	/* options the overlap changes with (find_parallel) */
	double xmin[MAXOPT];	/* each option's least coded value over the runs */
	double (*xc)[MAXOPT];	/* per run: coded options less xmin (the overlap's) */
	struct fpm_unit *units;
	char *exe;
	struct fp_err *err;		/* where its reading fails (fpm_model__new's e) */
	struct json_object *warnings;	/* what its report says besides: ["...", ...] */
	struct json_object *given;	/* the configuration to predict, NULL: none */
	double px[MAXOPT];		/* ... coded */
	double fn_min;			/* > 0: a model of functions (model --functions), of
					 * those with at least this share of a run's CPU time */
	struct json_object *region_feats;	/* model --functions: {region: [feature, ...]}
						 * of the runs' regions */
};

/* All models fitted with the runs in use (cli/model/wall.c): per region (and set), its
 * CPU time, outside (wall and CPU), black-box, the parallelism. */
struct fpm_fits {
	struct fpm_fit *unit, *unit_cpu;	/* per unit */
	struct fpm_fit out, outc, bb, ovl;
	int lin_opts[MAXOPT];
};



/*
 * Fits y (per run; runs with use[i] only) with the candidate terms cand[0..nc) over the
 * options opts: keeps, in the order given (main effects before interactions), each term
 * whose column the kept ones do not already explain (Gram-Schmidt), then solves the
 * normal equations.
 */
void fpm_fit(const struct fpm_model *m, const int *opts, const uint64_t *cand, int nc,
		const double *y, const double *u2, const bool *use, struct fpm_fit *f);
/* A term's column at coded options x: the product of the options of mask (over the
 * unit's options opts). */
double fpm_term_value(const double *x, const int *opts, uint64_t mask);
/* The systematic part of the 95% interval of sum_i w[i] beta[i]: twice the runs' stated
 * uncertainties, through h. */
double fpm_systematic(const struct fpm_fit *f, const double *w);
/* The fit's value at x (coded options), its random variance and systematic bound. */
double fpm_predict(const struct fpm_fit *f, const int *opts, const double *x, double *var,
		      double *sys);
void fpm_fit_free(struct fpm_fit *f);
/* Inverts the p x p matrix a in place (Gauss-Jordan, partial pivoting); -1 if singular. */
int fpm_invert(double a[MAXP][MAXP], int p);
/* Every product of a unit's options (all of them up to 6 options; beyond, pairs at most),
 * main effects first. */
int fpm_candidates(int nopts, uint64_t *cand);
/* model_opts.c: the options. The terms of models over every option: the intercept,
 * each option but a one-of group's baseline (opts: their indices); a unit's candidate
 * terms less those that multiply two values of one group (how many are left). */
int fpm_linear_terms(const struct fpm_model *m, int *opts, uint64_t *cand);
int fpm_prune_terms(const struct fpm_model *m, const int *opts, uint64_t *cand, int nc);
bool fpm_same_group(const struct fpm_model *m, int a, int b);
bool fpm_is_baseline(const struct fpm_model *m, int o);
/* Codes the runs' options into m (kinds, groups; px: the prediction's, given: its
 * NAME=VALUE); -1 with m->err filled. */
int fpm_code_options(struct fpm_model *m, struct json_object **docs, int n,
		     struct json_object *given, double *px, const struct fpm_choices *ch);
int fpm_choices_parse(struct fpm_choices *ch, const char *s, struct fp_err *e);
const struct fpm_choice *fpm_choice_of(const struct fpm_choices *ch, const char *name);
int fpm_constraint_parse(struct fpm_constraints *cs, const char *s, struct fp_err *e);
bool fpm_opt_number(const char *v, double *d);
/* model_wall.c: the fits and what they predict (never below zero): the wall time, the
 * CPU time, each with its random variance, systematic bound and dof; LOO MAPE (%). */
int fpm_fits_alloc(const struct fpm_model *m, struct fpm_fits *F);
/* The outside model's terms (opts, cand as fpm_linear_terms'): those and each
 * interaction a region names. */
int fpm_outside_terms(const struct fpm_model *m, int *opts, uint64_t *cand);
void fpm_fit_all(const struct fpm_model *m, const bool *use, struct fpm_fits *F);
void fpm_fits_free(const struct fpm_model *m, struct fpm_fits *F);
double fpm_predict_wall(const struct fpm_model *m, const struct fpm_fits *F, const double *x,
		    double *var, double *sys, int *dof);
/* What the overlap's column of term mask holds: a region's name, "(outside regions)" or
 * "the thread count alone". */
const char *fpm_ovl_column(const struct fpm_model *m, uint64_t mask);
double fpm_predict_cpu(const struct fpm_model *m, const struct fpm_fits *F, const double *x,
		   double *var, double *sys, int *dof);
void fpm_loo(const struct fpm_model *m, double *wb, double *bb, double *cpu);
int fpm_min_dof(int a, int b);
/* Adds to each unit the options its time changes with beyond its noise though its
 * features do not name them; how many it added in all. */
int fpm_find_unnamed(struct fpm_model *m);
/* Marks the options the overlap changes with as thread counts: those declared
 * (--parallel), else the one under which the overlap's model leaves the least residual
 * (others then show only through their products with it). The overlap's model holds
 * their products with every other option. */
void fpm_find_parallel(struct fpm_model *m, uint64_t declared);
/* check.c: whether the models fit (per region and feature set: leave-one-out error,
 * lack of fit against the replicates' spread and the stated uncertainty) as JSON; the
 * residual variance a new run of x adds to the wall time's prediction. */
struct json_object *fpm_fit_check(const struct fpm_model *m, const struct fpm_fits *F);
double fpm_predict_wall_noise(const struct fpm_model *m, const struct fpm_fits *F, const double *x);
/* A local mask (over a unit's options) as a global one. */
uint64_t fpm_global_mask(uint64_t local, const int *opts);
/* model.c: each region's options in runs files[0..n), named and found ({region:
 * [option, ...]}); NULL with e filled. */
struct json_object *fpm_region_options(char **files, int n, const struct fpm_choices *ch,
					struct fp_err *e);
/* choose.c: the wall model chosen by leave-one-out error: white-box, black-box linear
 * or their mean (which: FPM_CHOICE order), its MAPEs, its relative 95% prediction half
 * width; its prediction at x with fits F; it as JSON ("chosen", "why", "loo_mape_pct",
 * "pi95_relative"). */
#define FPM_NCHOICE 3
struct fpm_wall_choice {
	int which, n;
	double mape[FPM_NCHOICE], pi_rel;
};
void fpm_choose(const struct fpm_model *m, struct fpm_wall_choice *c);
const char *fpm_wall_choice_name(int which);
double fpm_wall_choice_predict(const struct fpm_model *m, const struct fpm_fits *F,
			  const struct fpm_wall_choice *c, const double *x);
struct json_object *fpm_wall_choice_json(const struct fpm_wall_choice *c);
/* functions.c: run r's functions into m's units (each function's sampled self CPU time,
 * its variance); after every run, those below m->fn_min of each run's CPU time left
 * out. -1 with m->err filled. */
int fpm_read_functions(struct fpm_model *m, int r, struct json_object *doc);
void fpm_keep_relevant(struct fpm_model *m);
/* check.c: unit i's leave-one-out error (%), -1 if the runs cannot say. */
double fpm_unit_loo(const struct fpm_model *m, int i);
/* model.c: the names of the options of global mask (a term's), as a JSON array. */
struct json_object *fpm_opts_json(const struct fpm_model *m, uint64_t mask);
/* model.c: a unit of m by name (and object, NULL for a region or set), made if new. */
struct fpm_unit *fpm_unit_get(struct fpm_model *m, const char *name, const char *object,
			      bool set);
/* model.c: an option's index in m, -1 if none; a run file read (NULL with e filled). */
int fpm_opt_index(const struct fpm_model *m, const char *name);
struct json_object *fpm_read_run(const char *file, struct fp_err *e);

/* 1 or 0 for a binary word (on/off, true/false, yes/no, enabled/disabled, 1/0; any
 * case), -1 otherwise; the pair's index in *pair. The pair's word for on or off. */
int fpm_binary_value(const char *v, int *pair);
const char *fpm_binary_word(int pair, bool on);

/* What the runs do not say (model.h's fpm_spec): --choices, --constraint, --parallel. */
struct fpm_spec {
	struct fpm_choices ch;
	struct fpm_constraints cs;
	char par[MAXOPT][64];	/* option names, as --config names them */
	int npar;
};

#endif
