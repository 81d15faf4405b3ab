/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Performance-influence models of featprof run files (cli/model/): a library that reads
 * run files, fits each region's time over the options its features name (and those the
 * runs show it depends on), the time outside regions and the threads' overlap, or each
 * sampled function's self time (model --functions), predicts, and plans the next runs.
 * It asks featprofd nothing and prints nothing.
 */
#ifndef FP_CLI_MODEL_H
#define FP_CLI_MODEL_H

#include "common/err.h"

struct json_object;

/*
 * What the runs do not say: a one-of option's values or a numeric option's levels
 * ("NAME=V1|V2|..."), a combination never run ("NAME=V&NAME=V", or "...->NAME=V"), an
 * option that is a thread count. Each adder: 0, or -EINVAL with e filled.
 */
struct fpm_spec;
struct fpm_spec *fpm_spec__new(void);
void fpm_spec__free(struct fpm_spec *s);
int fpm_spec__add_choices(struct fpm_spec *s, const char *text, struct fp_err *e);
int fpm_spec__add_constraint(struct fpm_spec *s, const char *text, struct fp_err *e);
int fpm_spec__add_parallel(struct fpm_spec *s, const char *name, struct fp_err *e);

/* The most run files a model or a plan reads. */
#define FPM_MAX_RUNS 4096

/*
 * The model of run files files[0..n) (featprof run -o FILE --config ...; two at least),
 * spec s (NULL: none); given: a configuration to predict ({"NAME": "VALUE", ...}, NULL:
 * none). NULL with e filled (a file that is no run file, options that differ, a value of
 * given no run had, ...).
 */
struct fpm_model;
struct fpm_model *fpm_model__new(char **files, int n, const struct fpm_spec *s,
				 struct json_object *given, struct fp_err *e);
/* fn_min > 0: a model of the runs' functions instead (run --stacks: each function's
 * sampled self CPU time), of those whose mean time is at least fn_min (a fraction) of
 * the runs' mean sampled CPU time; fpm_functions_report reads it. */
struct fpm_model *fpm_model__new_of(char **files, int n, const struct fpm_spec *s,
				    struct json_object *given, double fn_min, struct fp_err *e);
void fpm_model__free(struct fpm_model *m);
/*
 * The fitted model (a new reference; NULL: out of memory): "runs", "exe", "regions",
 * "feature_sets", "options", "terms" and "black_box_terms" ({"options", "influence_ns",
 * "ci95_ns", "where", "parts"}), "not_estimable", "unnamed_influences", "fit" (per region
 * and feature set), "loo_mape_pct", "model_choice" (the wall model chosen by leave-one-out
 * error: white-box, black-box or their mean, why, its prediction interval), "wall_model",
 * "regions_over_wall_max", "warnings", and with a configuration given, "prediction".
 */
struct json_object *fpm_model__report(struct fpm_model *m);

/*
 * featprof model --functions: per function of a model of functions, its terms with 95%
 * intervals, its leave-one-out error and whether it is hard (5% or more); per option,
 * the functions it slows or speeds up, largest first; the influences that reach a
 * function through data (an option with regions of its own, none of which holds the
 * function). A new reference: "runs", "exe", "options", "threshold_pct", "functions",
 * "by_option", "through_data", "summary"; NULL when memory ran out.
 */
struct json_object *fpm_functions_report(struct fpm_model *m);

/*
 * The configurations to run next (featprof model --plan): from one run file, the fewest
 * that give every region every combination of its options and vary every option; from
 * several, again with what they found. A new reference: "configurations", "dropped" (each
 * with the "constraint" it breaks), "measured", "all_combinations", "independent",
 * "options", "rank", "terms", "regions", "region_options"; NULL with e filled.
 */
struct json_object *fpm_plan(char **files, int n, const struct fpm_spec *s, struct fp_err *e);
/*
 * featprof model --plan --next N: from run files files[0..n) (two at least), the N
 * configurations whose runs would most reduce the uncertainty of the wall model
 * fpm_model__report chooses, within the options' values, groups and constraints. A new
 * reference: "chosen", "next" (each "config", "predicted_wall_ns", "se_ns",
 * "identifies"), "candidates", "sampled", "mean_se_ns_before", "mean_se_ns_after",
 * "unpredictable_before", "unpredictable_after"; NULL with e filled.
 */
struct json_object *fpm_plan_next(char **files, int n, const struct fpm_spec *s, int next,
				  struct fp_err *e);

/* Student's t (tdist.c): P(|T| > t) with df degrees of freedom; the t with that
 * probability p; the two-sided 95% point (1.96 for dof <= 0: a normal). */
double fpm_t_two_sided(double t, double df);
double fpm_t_quantile(double p, double df);
double fpm_t975(int dof);

#endif
