// SPDX-License-Identifier: GPL-2.0
/*
 * featprof model FILE... [--predict K=V,...] [--json]      featprof model --plan FILE...
 * featprof model --functions FILE... [--min-share PCT] [--json]
 *
 * The command around the model library (cli/model/model.h, whose head comment says how
 * the models are made): its arguments, and its answer for people (a table of terms, the
 * leave-one-out errors, what the runs showed that the names miss, whether each model
 * fits, the prediction) or, with --json, the library's report as it is.
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/core/core.h"
#include "cli/model/model.h"
#include "commands_impl.h"

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

/* The half width of a [lo, hi] interval. */
static double half_of(struct json_object *ci)
{
	return (json_object_get_double(json_object_array_get_idx(ci, 1)) -
		json_object_get_double(json_object_array_get_idx(ci, 0))) / 2;
}

/* "A*B" of a term's options, "(base)" for none. */
static const char *term_name(struct json_object *opts, char *buf, size_t len)
{
	size_t i;

	buf[0] = 0;
	for (i = 0; opts && i < json_object_array_length(opts); i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", i ? "*" : "",
			 json_object_get_string(json_object_array_get_idx(opts, i)));
	if (!buf[0])
		snprintf(buf, len, "(base)");
	return buf;
}

static void print_terms(struct json_object *terms, const char *title)
{
	char b1[40], b2[40], b3[48], names[512];
	size_t i;

	printf("\n%-28s %12s %14s  %s\n", title, "INFLUENCE", "95% INTERVAL", "WHERE");
	for (i = 0; terms && i < json_object_array_length(terms); i++) {
		struct json_object *t = json_object_array_get_idx(terms, i);

		snprintf(b3, sizeof(b3), "± %s",
			 cli_fmt_ns(half_of(json_object_object_get(t, "ci95_ns")), b2, 40));
		printf("%-28s %12s %14s  %s\n", term_name(geta(t, "options"), names, sizeof(names)),
		       cli_fmt_ns(getd(t, "influence_ns"), b1, sizeof(b1)), b3, gets_(t, "where"));
	}
}

static void print_not_estimable(struct json_object *a)
{
	char buf[512];
	size_t i;

	for (i = 0; a && i < json_object_array_length(a); i++) {
		struct json_object *o = json_object_array_get_idx(a, i);

		if (json_object_object_get_ex(o, "parallel_work", NULL))
			printf("note: the threads' overlap cannot tell the parallel work of %s "
			       "from the others': the runs vary them together (featprof model "
			       "--plan --parallel OPTION varies an option with every region's)\n",
			       gets_(o, "parallel_work"));
		else
			printf("note: region %s: the runs cannot tell term %s apart (measure the "
			       "configurations of featprof model --plan)\n", gets_(o, "region"),
			       term_name(geta(o, "options"), buf, sizeof(buf)));
	}
}

static void print_unnamed(struct json_object *a)
{
	char b1[40], b2[40];
	size_t i;

	for (i = 0; a && i < json_object_array_length(a); i++) {
		struct json_object *o = json_object_array_get_idx(a, i);
		const char *kind = gets_(o, "kind");

		if (!strcmp(kind, "outside"))
			printf("outside regions depends on option %s (%s ± %s)\n",
			       gets_(o, "option"), cli_fmt_ns(getd(o, "influence_ns"), b1, 40),
			       cli_fmt_ns(getd(o, "ci95_ns"), b2, 40));
		else if (json_object_object_get_ex(o, "tied_with", NULL))
			printf("%s %s depends on option %s or %s, which its features do not name "
			       "and these runs cannot tell apart (featprof model --plan with these "
			       "runs varies both)\n",
			       strcmp(kind, "region") ? "feature set" : "region", gets_(o, "unit"),
			       gets_(o, "tied_with"), gets_(o, "option"));
		else
			printf("%s %s depends on option %s, which its features do not name (%s ± "
			       "%s)\n", strcmp(kind, "region") ? "feature set" : "region",
			       gets_(o, "unit"), gets_(o, "option"),
			       cli_fmt_ns(getd(o, "influence_ns"), b1, 40),
			       cli_fmt_ns(getd(o, "ci95_ns"), b2, 40));
	}
}

static void print_fit(struct json_object *a)
{
	size_t i;
	int bad = 0;

	for (i = 0; a && i < json_object_array_length(a); i++) {
		struct json_object *o = json_object_array_get_idx(a, i);

		if (json_object_get_boolean(json_object_object_get(o, "fits")))
			continue;
		bad++;
		printf("%s %s does not fit: its residuals %.3f ms RMS beyond %s %.3f ms (stated "
		       "uncertainty %.3f ms; leave-one-out error %.1f%%): an option it names may "
		       "act nonlinearly, or one it does not name may act on it\n",
		       strcmp(gets_(o, "kind"), "region") ? "feature set" : "region",
		       gets_(o, "unit"), getd(o, "lack_of_fit_rms_ns") / 1e6,
		       json_object_get_boolean(json_object_object_get(o, "replicates"))
			       ? "the replicates' spread" : "none measured,",
		       getd(o, "pure_error_rms_ns") / 1e6, getd(o, "uncertainty_rms_ns") / 1e6,
		       getd(o, "loo_error_pct"));
	}
	if (!bad)
		printf("every region and feature set fits its runs (lack of fit within the "
		       "replicates' spread or the stated uncertainty)\n");
}

static void print_prediction(struct json_object *p)
{
	struct json_object *fa = geta(p, "features");
	char b1[40], b2[40], b3[48];
	size_t i;

	if (json_object_object_get_ex(p, "cpu_ns", NULL))
		printf("\nprediction: CPU %s ± %s", cli_fmt_ns(getd(p, "cpu_ns"), b1, 40),
		       cli_fmt_ns(half_of(json_object_object_get(p, "cpu_ci95_ns")), b2, 40));
	printf("\nprediction: wall %s ± %s (white-box; black-box linear: %s)\n",
	       cli_fmt_ns(getd(p, "wall_ns"), b1, 40),
	       cli_fmt_ns(half_of(json_object_object_get(p, "wall_ci95_ns")), b2, 40),
	       cli_fmt_ns(getd(p, "black_box_wall_ns"), b3, 40));
	printf("prediction of the model chosen (%s): wall %s, 95%% of runs within ± %s\n"
	       "\n%-28s %12s %14s\n", gets_(p, "chosen"),
	       cli_fmt_ns(getd(p, "chosen_wall_ns"), b1, 40),
	       cli_fmt_ns(half_of(json_object_object_get(p, "chosen_wall_pi95_ns")), b2, 40),
	       "FEATURE", "TIME", "95% INTERVAL");
	for (i = 0; fa && i < json_object_array_length(fa); i++) {
		struct json_object *f = json_object_array_get_idx(fa, i);

		snprintf(b3, sizeof(b3), "± %s",
			 cli_fmt_ns(half_of(json_object_object_get(f, "ci95_ns")), b2, 40));
		printf("%-28s %12s %14s\n", gets_(f, "name"), cli_fmt_ns(getd(f, "ns"), b1, 40),
		       b3);
	}
}

/* The report for people. */
static void print_model(struct json_object *o)
{
	struct json_object *loo = json_object_object_get(o, "loo_mape_pct");

	printf("featprof model: %lld runs of %s, %zu options, %lld regions, %lld feature sets\n",
	       (long long)geti(o, "runs"), *gets_(o, "exe") ? gets_(o, "exe") : "?",
	       geta(o, "options") ? json_object_array_length(geta(o, "options")) : 0,
	       (long long)geti(o, "regions"), (long long)geti(o, "feature_sets"));
	print_terms(geta(o, "terms"), "TERM (white-box)");
	print_terms(geta(o, "black_box_terms"), "TERM (black-box linear)");
	printf("\nleave-one-out error of the wall time (MAPE): white-box %.2f%%, black-box "
	       "linear %.2f%%", getd(loo, "white_box"), getd(loo, "black_box_linear"));
	if (json_object_object_get_ex(loo, "cpu", NULL))
		printf("; of the CPU time: white-box %.2f%%", getd(loo, "cpu"));
	printf("\nwall model chosen: %s, %s; its 95%% prediction interval ±%.1f%%\n",
	       gets_(json_object_object_get(o, "model_choice"), "chosen"),
	       gets_(json_object_object_get(o, "model_choice"), "why"),
	       100 * getd(json_object_object_get(o, "model_choice"), "pi95_relative"));
	printf("wall time: %s\n", !strcmp(gets_(o, "wall_model"), "cpu_less_overlap")
	       ? "CPU time less the threads' overlap (regions overlap on threads)"
	       : "regions plus outside (one thread in regions at a time)");
	print_not_estimable(geta(o, "not_estimable"));
	printf("\n");
	print_unnamed(geta(o, "unnamed_influences"));
	print_fit(geta(o, "fit"));
	if (json_object_object_get_ex(o, "prediction", NULL))
		print_prediction(json_object_object_get(o, "prediction"));
}

/* A plan's configuration as the line featprof run --config takes. */
static const char *conf_line(struct json_object *c, char *buf, size_t len)
{
	buf[0] = 0;
	json_object_object_foreach(c, k, v) {
		if (strcmp(k, "constraint"))
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s=%s", buf[0] ? "," : "",
				 k, json_object_get_string(v));
	}
	return buf;
}

static void print_plan(struct json_object *o)
{
	struct json_object *confs = geta(o, "configurations");
	size_t nconf = confs ? json_object_array_length(confs) : 0, i;
	long long had = geti(o, "measured");
	char line[4096];

	printf("featprof model --plan: %lld configurations give each of %lld regions every "
	       "combination of its options%s and vary each of %lld options (all "
	       "combinations: %.0f)\n", (long long)nconf + had, (long long)geti(o, "regions"),
	       json_object_object_get_ex(o, "region_options", NULL)
		       ? " (those the runs showed it depends on included)" : "",
	       (long long)geti(o, "options"), getd(o, "all_combinations"));
	if (had)
		printf("%lld of them measured already; to run:\n", had);
	for (i = 0; i < nconf; i++)
		printf("  %s\n",
		       conf_line(json_object_array_get_idx(confs, i), line, sizeof(line)));
	if (!json_object_get_boolean(json_object_object_get(o, "independent")))
		printf("note: within the constraints the options are not all varied "
		       "independently (rank %lld of %lld): some influences will not be told "
		       "apart\n", (long long)geti(o, "rank"), (long long)geti(o, "terms"));
}

/* featprof model --plan --next N's answer. */
static void print_next(struct json_object *o)
{
	struct json_object *next = geta(o, "next");
	size_t n = next ? json_object_array_length(next) : 0, i;
	char line[4096];

	printf("featprof model --plan --next %zu: the runs that most reduce the uncertainty "
	       "of the chosen wall model (%s), of %lld configurations%s:\n", n,
	       gets_(o, "chosen"), (long long)geti(o, "candidates"),
	       json_object_get_boolean(json_object_object_get(o, "sampled"))
		       ? " drawn at random" : "");
	for (i = 0; i < n; i++) {
		struct json_object *x = json_object_array_get_idx(next, i);
		double se = getd(x, "se_ns");

		conf_line(json_object_object_get(x, "config"), line, sizeof(line));
		if (json_object_get_boolean(json_object_object_get(x, "identifies")))
			printf("  %s  predicted %.1f ms, a term not yet identified\n", line,
			       getd(x, "predicted_wall_ns") / 1e6);
		else
			printf("  %s  predicted %.1f ms +- %.1f (SE)\n", line,
			       getd(x, "predicted_wall_ns") / 1e6, se / 1e6);
	}
	printf("the chosen model's standard error, mean over the configurations: %.2f ms now, "
	       "%.2f ms with these runs (at the runs' noise); not predictable: %lld now, "
	       "%lld then\n", getd(o, "mean_se_ns_before") / 1e6,
	       getd(o, "mean_se_ns_after") / 1e6, (long long)geti(o, "unpredictable_before"),
	       (long long)geti(o, "unpredictable_after"));
}

/* What the answer says besides, on stderr (with --json too): the model's warnings, the
 * plan's configurations dropped for a constraint. */
static void print_remarks(struct json_object *o)
{
	struct json_object *w = geta(o, "warnings"), *drop = geta(o, "dropped");
	char line[4096];
	size_t i;

	for (i = 0; w && i < json_object_array_length(w); i++)
		fprintf(stderr, "featprof model: warning: %s\n",
			json_object_get_string(json_object_array_get_idx(w, i)));
	for (i = 0; drop && i < json_object_array_length(drop); i++) {
		struct json_object *d = json_object_array_get_idx(drop, i);
		const char *why = gets_(d, "constraint");

		fprintf(stderr,
			"featprof model --plan: dropped %s: it breaks %s and the plan "
			"leaves nothing to change\n",
			conf_line(d, line, sizeof(line)),
			strcmp(why, "(no value left)") ? why
						       : "(a one-of option with no value left)");
	}
}

/* model --functions --refine: each hard function's error before and after, and those
 * left out for their traps' cost. */
static void print_refined(struct json_object *o)
{
	struct json_object *fa;
	size_t i;

	fa = geta(o, "refined");
	if (fa)
		printf("\nREFINED: the hard functions timed exactly (function regions) in the "
		       "same configurations: %s\n", json_object_array_length(fa) ? "" : "none");
	for (i = 0; fa && i < json_object_array_length(fa); i++) {
		struct json_object *x = json_object_array_get_idx(fa, i);

		printf("  %s (%s): leave-one-out error %.1f%% sampled, %.1f%% timed%s\n",
		       gets_(x, "name"), gets_(x, "object"), getd(x, "loo_before_pct"),
		       getd(x, "loo_after_pct"), geti(x, "moved") ? ": moved under 5%" : "");
	}
	fa = geta(o, "not_refined");
	for (i = 0; fa && i < json_object_array_length(fa); i++) {
		struct json_object *x = json_object_array_get_idx(fa, i);

		if (!strcmp(gets_(x, "why"), "calls only"))
			printf("  %s (%s): not refined: C++ code, its calls counted (%lld), not "
			       "timed (an exception must not meet a return probe)\n",
			       gets_(x, "name"), gets_(x, "object"), (long long)geti(x, "calls"));
		else
			printf("  %s (%s): not refined: its traps cost a run %.0f%% of its CPU "
			       "time (%lld calls; over 5%%)\n", gets_(x, "name"),
			       gets_(x, "object"), getd(x, "trap_cost_pct"),
			       (long long)geti(x, "calls"));
	}
}

/* model --functions: per function its terms; per option the functions it moves; the
 * influences through data. */
static void print_functions(struct json_object *o)
{
	struct json_object *fa = geta(o, "functions"), *sum = json_object_object_get(o, "summary");
	char b1[32], b2[32], name[256];
	size_t i, k;

	printf("%d runs of %s: %lld functions with %.3g%% or more of a run's CPU time "
	       "(sampled self time), %lld of them within 5%% leave-one-out error\n",
	       (int)geti(o, "runs"), gets_(o, "exe"), (long long)geti(sum, "relevant"),
	       getd(o, "threshold_pct"), (long long)geti(sum, "within_5pct"));
	printf("\n%-32s %10s %7s  %s\n", "FUNCTION (OBJECT)", "MEAN", "LOO", "TERMS (± 95%)");
	for (i = 0; fa && i < json_object_array_length(fa); i++) {
		struct json_object *f = json_object_array_get_idx(fa, i), *t = geta(f, "terms");
		char fn[80];

		snprintf(fn, sizeof(fn), "%s (%s)", gets_(f, "name"), gets_(f, "object"));
		printf("%-32.32s %10s %6.1f%%%s", fn,
		       cli_fmt_ns(getd(f, "mean_ns"), b1, sizeof(b1)),
		       getd(f, "loo_error_pct"), geti(f, "hard") ? "!" : " ");
		for (k = 0; t && k < json_object_array_length(t); k++) {
			struct json_object *x = json_object_array_get_idx(t, k);

			printf("%s%s %s%s ±%s", k ? ", " : " ",
			       term_name(geta(x, "options"), name, sizeof(name)),
			       getd(x, "influence_ns") >= 0 ? "+" : "",
			       cli_fmt_ns(getd(x, "influence_ns"), b1, sizeof(b1)),
			       cli_fmt_ns(half_of(geta(x, "ci95_ns")), b2, sizeof(b2)));
		}
		printf("%s\n", t && json_object_array_length(t) ? "" : " (no option moves it)");
	}
	printf("\nBY OPTION: the functions each option moves (significant terms), largest "
	       "first\n");
	json_object_object_foreach(json_object_object_get(o, "by_option"), opt, a) {
		printf("  %s:", opt);
		for (k = 0; k < json_object_array_length(a) && k < 6; k++) {
			struct json_object *x = json_object_array_get_idx(a, k);

			printf("%s %s %s%s ±%s [%s]", k ? "," : "", gets_(x, "function"),
			       getd(x, "influence_ns") >= 0 ? "+" : "",
			       cli_fmt_ns(getd(x, "influence_ns"), b1, sizeof(b1)),
			       cli_fmt_ns(half_of(geta(x, "ci95_ns")), b2, sizeof(b2)),
			       term_name(geta(x, "term"), name, sizeof(name)));
		}
		printf("\n");
	}
	fa = geta(o, "through_data");
	printf("\nTHROUGH DATA: options whose influence reaches a function none of their "
	       "regions holds: %s\n", fa && json_object_array_length(fa) ? "" : "none");
	for (i = 0; fa && i < json_object_array_length(fa); i++) {
		struct json_object *x = json_object_array_get_idx(fa, i);

		printf("  %s -> %s (%s): %s%s ±%s as %s\n", gets_(x, "option"),
		       gets_(x, "function"), gets_(x, "object"),
		       getd(x, "influence_ns") >= 0 ? "+" : "",
		       cli_fmt_ns(getd(x, "influence_ns"), b1, sizeof(b1)),
		       cli_fmt_ns(half_of(geta(x, "ci95_ns")), b2, sizeof(b2)),
		       term_name(geta(x, "term"), name, sizeof(name)));
	}
	print_refined(o);
	printf("\nLOO: leave-one-out error, the sum of |predicted - measured| over the sum of "
	       "measured, each run left out in turn; ! 5%% or more (a hard function: "
	       "model --functions --refine DIR times it exactly)\n");
}

static int usage(int rc)
{
	fprintf(rc ? stderr : stdout,
		"usage: featprof model FILE... [--choices NAME=V1|V2|...]... [--parallel NAME]... "
		"[--predict NAME=VALUE,...] [--json]\n"
		"       featprof model --functions FILE... [--min-share PCT (default 1)] "
		"[--refine DIR | --predict NAME=VALUE,...] [--choices NAME=V1|V2|...]... "
		"[--json]\n"
		"       featprof model --plan FILE... [--choices NAME=V1|V2|...]... "
		"[--constraint NAME=V&...[->NAME=V]]... [--parallel NAME]... [--next N] "
		"[--json]\n");
	return rc;
}

struct model_args {
	char **files;
	int n, json, plan, functions;
	int next;		/* --plan --next N */
	double min_share;	/* --functions: % of a run's CPU time */
	const char *refine;	/* --functions --refine DIR */
	struct fpm_spec *spec;
	struct json_object *given;
};

/* A number over lo and up to hi (whole: an integer) from s into *out: 0, or 2 after
 * the line what. */
static int num_arg(const char *what, const char *s, double lo, double hi, int whole,
		   double *out)
{
	char *end;

	*out = strtod(s, &end);
	if (*s && !*end && *out > lo && *out <= hi && (!whole || *out == floor(*out)))
		return 0;
	fprintf(stderr, "featprof model: %s: '%s'\n", what, s);
	return 2;
}

/* The arguments into a: 0, or the exit status after a line (-1: --help). */
static int parse_args(int argc, char **argv, struct model_args *a)
{
	struct fp_err e = { 0 };
	int i;

	for (i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(argv[i], "--json")) {
			a->json = 1;
		} else if (!strcmp(argv[i], "--plan")) {
			a->plan = 1;
		} else if (!strcmp(argv[i], "--next") && v) {
			double d;

			if (num_arg("--next takes 1 to 100", argv[++i], 0, 100, 1, &d))
				return 2;
			a->next = (int)d;
		} else if (!strcmp(argv[i], "--functions")) {
			a->functions = 1;
		} else if (!strcmp(argv[i], "--refine") && v) {
			a->refine = argv[++i];
		} else if (!strcmp(argv[i], "--min-share") && v) {
			if (num_arg("--min-share takes a percentage over 0 and up to 100",
				    argv[++i], 0, 100, 0, &a->min_share))
				return 2;
		} else if (!strcmp(argv[i], "--choices") && v) {
			if (fpm_spec__add_choices(a->spec, argv[++i], &e))
				break;
		} else if (!strcmp(argv[i], "--parallel") && v) {
			if (fpm_spec__add_parallel(a->spec, argv[++i], &e))
				break;
		} else if (!strcmp(argv[i], "--constraint") && v) {
			if (fpm_spec__add_constraint(a->spec, argv[++i], &e))
				break;
		} else if (!strcmp(argv[i], "--predict") && v) {
			json_object_put(a->given);
			if (!(a->given = parse_predict(argv[++i])))
				return 2;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			cli_help_asked(O_MODEL | O_PLAN | O_MODEL_FUNCTIONS | O_JSON);
			return usage(0), -1;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "featprof model: unknown option or missing value '%s'\n",
				argv[i]);
			return 2;
		} else {
			a->files[a->n++] = argv[i];
		}
	}
	if (e.code) {
		fprintf(stderr, "featprof model: %s\n", e.msg);
		return 2;
	}
	if (a->next && (!a->plan || a->n < 2)) {
		fprintf(stderr, "featprof model: --next goes with --plan and two run files at "
			"least (the model whose uncertainty it reduces)\n");
		return 2;
	}
	if (a->refine && !a->functions) {
		fprintf(stderr, "featprof model: --refine goes with --functions\n");
		return 2;
	}
	if (a->functions && (a->plan || (a->given && a->refine))) {
		fprintf(stderr, "featprof model: --functions goes without --plan (and --refine "
			"without --predict)\n");
		return 2;
	}
	if (!a->n || (a->plan && a->given)) {
		fprintf(stderr, "featprof model: %s\n", a->plan ? "--plan does not predict"
							: "no run files (featprof run -o FILE)");
		return 2;
	}
	if (!a->plan && a->n < 2) {
		fprintf(stderr, "featprof model: one run: a model needs runs of several "
			"configurations (featprof model --plan %s)\n", a->files[0]);
		return 2;
	}
	return 0;
}

int cmd_model(int argc, char **argv)
{
	struct model_args a = { .files = calloc((size_t)argc, sizeof(char *)),
				.spec = fpm_spec__new() };
	struct json_object *o = NULL;
	struct fpm_model *m = NULL;
	struct fp_err e = { 0 };
	int rc;

	rc = a.files && a.spec ? parse_args(argc, argv, &a) : 1;
	if (rc) {
		rc = rc < 0 ? 0 : rc;
	} else if (a.plan && a.next) {
		o = fpm_plan_next(a.files, a.n, a.spec, a.next, &e);
		rc = o ? 0 : e.code == EINVAL ? 2 : 1;
	} else if (a.plan) {
		o = fpm_plan(a.files, a.n, a.spec, &e);
		rc = o ? 0 : e.code == EINVAL ? 2 : 1;
	} else if (a.functions && a.refine) {
		o = cli_cmd_refine(a.files, a.n, a.spec,
				   (a.min_share > 0 ? a.min_share : 1) / 100, a.refine, &e);
		rc = o ? 0 : 1;
	} else if (a.functions) {
		m = fpm_model__new_of(a.files, a.n, a.spec, a.given,
				      (a.min_share > 0 ? a.min_share : 1) / 100, &e);
		o = m ? fpm_functions_report(m) : NULL;
		rc = o ? 0 : 1;
	} else {
		m = fpm_model__new(a.files, a.n, a.spec, a.given, &e);
		o = m ? fpm_model__report(m) : NULL;
		rc = o ? 0 : 1;
	}
	if (rc && e.code)
		fprintf(stderr, "featprof model%s: %s\n", a.plan ? " --plan" : "", e.msg);
	if (o)
		print_remarks(o);
	if (o && a.json)
		cli_cmd_print_json(o);
	else if (o && a.functions)
		print_functions(o);
	else if (o && a.next)
		print_next(o);
	else if (o)
		a.plan ? print_plan(o) : print_model(o);
	json_object_put(o);
	fpm_model__free(m);
	fpm_spec__free(a.spec);
	json_object_put(a.given);
	free(a.files);
	return rc;
}
