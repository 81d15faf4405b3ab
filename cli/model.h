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

#define MAXCHOICE 32	/* values of a one-of option */
#define MAXLIT 8	/* literals of a constraint's left side */

struct opt {
	char name[64];		/* as --config names it; a one-of value's NAME=VALUE */
	bool numeric;
	char on[48], off[48];	/* how the runs spell a binary option's values */
	int group;		/* a one-of value's group, else -1 */
	char value[48];		/* a one-of value's VALUE */
};

/* A one-of option: its values are opt[first..first+n), the first the baseline. */
struct group {
	char name[64];
	int first, n;
};

/* --choices NAME=V1|V2|...: a one-of option's values, or a numeric one's levels. */
struct choice {
	char name[64];
	char v[MAXCHOICE][48];
	int n;
};
struct choices {
	struct choice c[MAXOPT];
	int n;
};

/* --constraint: lit[0] & ... & lit[n-1] never, or -> then. */
struct lit {
	char name[64], value[48];
};
struct constraint {
	struct lit lit[MAXLIT], then;
	int n;
	bool implies;
	char text[256];
};
struct constraints {
	struct constraint c[MAXOPT];
	int n;
};

struct unit {			/* a region, or a feature set */
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
};

struct fit {
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

struct model {
	struct opt opt[MAXOPT];
	struct group group[MAXOPT];
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
	struct unit *units;
	char *exe;
};

/* All models fitted with the runs in use (cli/model_wall.c): per region (and set), its
 * CPU time, outside (wall and CPU), black-box, the parallelism. */
struct fits {
	struct fit *unit, *unit_cpu;	/* per unit */
	struct fit out, outc, bb, ovl;
	int lin_opts[MAXOPT];
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
/* model_opts.c: the options. The terms of models over every option: the intercept,
 * each option but a one-of group's baseline (opts: their indices); a unit's candidate
 * terms less those that multiply two values of one group (how many are left). */
int linear_terms(const struct model *m, int *opts, uint64_t *cand);
int prune_terms(const struct model *m, const int *opts, uint64_t *cand, int nc);
bool same_group(const struct model *m, int a, int b);
bool is_baseline(const struct model *m, int o);
/* Codes the runs' options into m (kinds, groups; px: the prediction's, given: its
 * NAME=VALUE); -1 after a one-line error. */
int code_options(struct model *m, struct json_object **docs, int n, struct json_object *given,
		 double *px, const struct choices *ch);
int choices_parse(struct choices *ch, const char *s);
const struct choice *choice_of(const struct choices *ch, const char *name);
int constraint_parse(struct constraints *cs, const char *s);
bool opt_number(const char *v, double *d);
/* model_wall.c: the fits and what they predict (never below zero): the wall time, the
 * CPU time, each with its random variance, systematic bound and dof; LOO MAPE (%). */
int fits_alloc(const struct model *m, struct fits *F);
void fit_all(const struct model *m, const bool *use, struct fits *F);
void fits_free(const struct model *m, struct fits *F);
double predict_wall(const struct model *m, const struct fits *F, const double *x,
		    double *var, double *sys, int *dof);
/* The overlap (CPU time less wall time) at x. */
double predict_ovl(const struct model *m, const struct fits *F, const double *x, double *var);
/* What the overlap's column of term mask holds: a region's name, "(outside regions)" or
 * "the thread count alone". */
const char *ovl_column(const struct model *m, uint64_t mask);
double predict_cpu(const struct model *m, const struct fits *F, const double *x,
		   double *var, double *sys, int *dof);
void loo(const struct model *m, double *wb, double *bb, double *cpu);
int min_dof(int a, int b);
/* Adds to each unit the options its time changes with beyond its noise though its
 * features do not name them; how many it added in all. */
int find_unnamed(struct model *m);
/* Marks the options the overlap changes with as thread counts: those declared
 * (--parallel), else the one under which the overlap's model leaves the least residual
 * (others then show only through their products with it). The overlap's model holds
 * their products with every other option. */
void find_parallel(struct model *m, uint64_t declared);
/* model_check.c: whether the models fit (per region and feature set: leave-one-out
 * error, lack of fit against the replicates' spread and the stated uncertainty) as
 * JSON, the misfits printed; the residual variance a new run of x adds to the wall
 * time's prediction. */
struct json_object *fit_check(const struct model *m, const struct fits *F, bool print);
double predict_wall_noise(const struct model *m, const struct fits *F, const double *x);
/* A local mask (over a unit's options) as a global one. */
uint64_t global_mask(uint64_t local, const int *opts);
/* --plan of the run file `file`: its exit status. */
int cmd_plan(char **files, int n, int json, const struct choices *ch,
	     const struct constraints *cs, const char **par, int npar);
/* model.c: each region's options in runs files[0..n), named and found ({region:
 * [option, ...]}); NULL after a one-line error. */
struct json_object *region_options(char **files, int n, const struct choices *ch);
/* model.c: an option's index in m, -1 if none; a run file read (NULL after a one-line
 * error). */
int opt_index(const struct model *m, const char *name);
struct json_object *read_run(const char *file);

/* 1 or 0 for a binary word (on/off, true/false, yes/no, enabled/disabled, 1/0; any
 * case), -1 otherwise; the pair's index in *pair. The pair's word for on or off. */
int binary_value(const char *v, int *pair);
const char *binary_word(int pair, bool on);

#endif
