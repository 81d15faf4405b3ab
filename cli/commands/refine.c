// SPDX-License-Identifier: GPL-2.0
/*
 * featprof model --functions --refine DIR RUN...: the precise step of the white-box
 * approach, after the coarse one (cli/model/functions.c).
 *
 *  1. The coarse model of RUN... (their sampled functions) says which functions are
 *     hard: relevant, with a leave-one-out error of 5% or more.
 *  2. Each run is made again, its command and --config from its file, with the hard
 *     functions timed exactly as function regions of the feature "refine" (featprof run
 *     --stacks --function refine=OBJECT:NAME,...), into DIR/refined-N.json: the same
 *     configurations, as many times each as before.
 *  3. The model of the refined runs takes a refined function at its timed exclusive CPU
 *     time (fpm_read_functions: its own time and its callees' that are not refined; a
 *     leaf's self time exactly), the others at their samples, and is reported with, per
 *     hard function, its leave-one-out error before and after; those now under 5% moved.
 * featprof is run as a child (this program, /proc/self/exe) so that each run's CPU
 * accounting is its own. Exit 0, 1 when a run or a model failed (said), 2 on bad input.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/core/core.h"
#include "cli/model/model.h"
#include "commands_impl.h"

#define REFINE_MAX_ARGS 512

/* run.config as NAME=VALUE,... into buf. */
static void config_text(struct json_object *cfg, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	json_object_object_foreach(cfg, k, v) {
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s=%s", n ? "," : "", k,
				      json_object_get_string(v));
	}
}

/* featprof run of run file doc again with the hard functions timed (fns: the --function
 * value), -o out; its exit status, or -1 (said). */
static int rerun(struct json_object *doc, const char *fns, const char *out, const char *file)
{
	struct json_object *run = json_object_object_get(doc, "run"), *cmd = geta(run, "command");
	struct json_object *sm = json_object_object_get(doc, "sampling");
	char *argv[REFINE_MAX_ARGS], cfg[4096], hz[32];
	int a = 0, st, devnull;
	size_t k;
	pid_t pid;

	if (!cmd || !json_object_array_length(cmd) ||
	    json_object_array_length(cmd) + 20 > REFINE_MAX_ARGS) {
		fprintf(stderr, "featprof model --refine: %s: no command to run again\n", file);
		return -1;
	}
	config_text(json_object_object_get(run, "config"), cfg, sizeof(cfg));
	snprintf(hz, sizeof(hz), "%lld", (long long)(geti(sm, "hz") ? geti(sm, "hz") : 997));
	argv[a++] = "featprof";
	if (socket_path) {
		argv[a++] = "--socket";
		argv[a++] = (char *)socket_path;
	}
	argv[a++] = "run";
	argv[a++] = "--stacks";
	argv[a++] = "--hz";
	argv[a++] = hz;
	if (cfg[0]) {
		argv[a++] = "--config";
		argv[a++] = cfg;
	}
	argv[a++] = "--function";
	argv[a++] = (char *)fns;
	argv[a++] = "-o";
	argv[a++] = (char *)out;
	argv[a++] = "--";
	for (k = 0; k < json_object_array_length(cmd); k++)
		argv[a++] = (char *)json_object_get_string(json_object_array_get_idx(cmd, k));
	argv[a] = NULL;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "featprof model --refine: %s\n", strerror(errno));
		return -1;
	}
	if (!pid) {	/* the program's output and the run's table are not ours */
		devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (devnull >= 0) {
			dup2(devnull, STDOUT_FILENO);
			dup2(devnull, STDERR_FILENO);
		}
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The hard functions of report o as the --function value "refine=OBJ:NAME,...", and how
 * many; 0: none. */
static int hard_functions(struct json_object *o, char *buf, size_t len)
{
	struct json_object *fa = geta(o, "functions");
	size_t i, n = (size_t)snprintf(buf, len, "refine=");
	int m = 0;

	for (i = 0; fa && i < json_object_array_length(fa); i++) {
		struct json_object *f = json_object_array_get_idx(fa, i), *h;

		if (!json_object_object_get_ex(f, "hard", &h) || !json_object_get_boolean(h) ||
		    strstr(gets_(f, "name"), "+0x"))	/* no symbol: no entry to time */
			continue;
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s:%s", m ? "," : "",
				      gets_(f, "object"), *gets_(f, "symbol") ? gets_(f, "symbol")
									: gets_(f, "name"));
		m++;
	}
	return n < len ? m : 0;
}

static struct json_object *fn_of(struct json_object *o, const char *name)
{
	return getn(geta(o, "functions"), name);
}

/* Per hard function of the coarse report c, its error before and after (refined r), into
 * r's "refined" ([{name, object, loo_before_pct, loo_after_pct, moved}]). */
static void before_after(struct json_object *c, struct json_object *r)
{
	struct json_object *fa = geta(c, "functions"), *a = json_object_new_array();
	size_t i;

	for (i = 0; fa && i < json_object_array_length(fa); i++) {
		struct json_object *f = json_object_array_get_idx(fa, i), *h, *x, *g;

		if (!json_object_object_get_ex(f, "hard", &h) || !json_object_get_boolean(h))
			continue;
		g = fn_of(r, gets_(f, "name"));
		x = json_object_new_object();
		json_object_object_add(x, "name", json_object_new_string(gets_(f, "name")));
		json_object_object_add(x, "object", json_object_new_string(gets_(f, "object")));
		json_object_object_add(x, "loo_before_pct", json_object_new_double(
					       getd(f, "loo_error_pct")));
		json_object_object_add(x, "loo_after_pct", json_object_new_double(
					       g ? getd(g, "loo_error_pct") : -1));
		json_object_object_add(x, "moved", json_object_new_boolean(
					       g && getd(g, "loo_error_pct") >= 0 &&
					       getd(g, "loo_error_pct") < 5));
		json_object_array_add(a, x);
	}
	json_object_object_add(r, "refined", a);
}

#define REFINE_MAX_COST 0.05	/* of a run's CPU time: a function's traps over it are not
				 * refined (drill's --max-overhead default) */

/* The region of run file p named name, or NULL. */
static struct json_object *region_of(struct json_object *p, const char *name)
{
	return getn(geta(p, "regions"), name);
}

/*
 * The probe: files[0] run once with the hard functions (fns) timed. A function whose
 * traps cost that run more than REFINE_MAX_COST of the first run's CPU time (what
 * compensation removed from its region, its timed callees' included) is not refined: a
 * function called millions of times (memcpy) would make every run many times longer.
 * Those are marked not hard in c and listed in its "not_refined" with their cost. 0, or
 * -1 with e filled.
 */
static int probe_cost(struct json_object *c, char **files, const char *fns, const char *dir,
		      struct fp_err *e)
{
	struct json_object *doc = json_object_from_file(files[0]), *p;
	struct json_object *fa = geta(c, "functions"), *nr = json_object_new_array();
	char path[PATH_MAX];
	double cpu;
	size_t i;
	int st;

	json_object_object_add(c, "not_refined", nr);
	if (!doc)
		return fp_fail(e, EIO, "%s: cannot read it again", files[0]);
	snprintf(path, sizeof(path), "%s/probe.json", dir);
	cpu = getd(json_object_object_get(doc, "run"), "cpu_ns");
	st = rerun(doc, fns, path, files[0]);
	json_object_put(doc);
	if (st || !(p = json_object_from_file(path)))
		return fp_fail(e, EIO, "%s: its probe run exited %d", files[0], st);
	for (i = 0; fa && i < json_object_array_length(fa); i++) {
		struct json_object *f = json_object_array_get_idx(fa, i), *h, *r, *x;
		double cost;
		int calls_only;

		if (!json_object_object_get_ex(f, "hard", &h) || !json_object_get_boolean(h))
			continue;
		r = region_of(p, *gets_(f, "symbol") ? gets_(f, "symbol") : gets_(f, "name"));
		cost = r ? getd(r, "raw_inclusive_ns") - getd(r, "inclusive_ns") : 0;
		/* C++: counted, not timed (fp_symbols__calls_only) */
		calls_only = !strcmp(gets_(r, "measured"), "calls");
		if (!calls_only && !(cpu > 0 && cost > REFINE_MAX_COST * cpu))
			continue;
		json_object_object_add(f, "hard", json_object_new_boolean(0));
		x = json_object_new_object();
		json_object_object_add(x, "name", json_object_new_string(gets_(f, "name")));
		json_object_object_add(x, "object", json_object_new_string(gets_(f, "object")));
		json_object_object_add(x, "trap_cost_pct",
				       json_object_new_double(100 * cost / cpu));
		json_object_object_add(x, "calls", json_object_new_int64(geti(r, "count")));
		json_object_object_add(x, "why", json_object_new_string(
					       calls_only ? "calls only" : "trap cost"));
		json_object_array_add(nr, x);
	}
	json_object_put(p);
	return 0;
}

struct json_object *cli_cmd_refine(char **files, int n, const struct fpm_spec *spec,
				   double fn_min, const char *dir, struct fp_err *e)
{
	struct fpm_model *m = fpm_model__new_of(files, n, spec, NULL, fn_min, e);
	struct json_object *c = m ? fpm_functions_report(m) : NULL, *r = NULL, *doc;
	char fns[8192], **out = calloc((size_t)n + 1, sizeof(char *));
	int i, st, nh;

	fpm_model__free(m);
	if (!c || !out)
		goto done;
	if (!(nh = hard_functions(c, fns, sizeof(fns)))) {	/* nothing to refine */
		before_after(c, c);
		free(out);
		return c;
	}
	if (mkdir(dir, 0755) && errno != EEXIST) {
		fp_fail(e, errno, "--refine %s: %s", dir, strerror(errno));
		goto done;
	}
	/* the ones whose traps cost too much are left out first (one run) */
	if (probe_cost(c, files, fns, dir, e))
		goto done;
	if (!(nh = hard_functions(c, fns, sizeof(fns)))) {	/* none left to time */
		before_after(c, c);
		free(out);
		return c;
	}
	fprintf(stderr, "featprof model --refine: %d hard functions timed exactly in %d runs "
		"(%s)\n", nh, n, fns + 7);
	for (i = 0; i < n; i++) {
		if (asprintf(&out[i], "%s/refined-%d.json", dir, i) < 0)
			goto done;
		if (!(doc = json_object_from_file(files[i]))) {	/* the model read it */
			fp_fail(e, EIO, "%s: cannot read it again", files[i]);
			goto done;
		}
		st = rerun(doc, fns, out[i], files[i]);
		json_object_put(doc);
		if (st) {
			fp_fail(e, EIO, "%s: its run again exited %d", files[i], st);
			goto done;
		}
	}
	m = fpm_model__new_of(out, n, spec, NULL, fn_min, e);
	r = m ? fpm_functions_report(m) : NULL;
	fpm_model__free(m);
	if (r) {
		before_after(c, r);
		json_object_object_add(r, "not_refined", json_object_get(
					       json_object_object_get(c, "not_refined")));
	}
done:
	for (i = 0; out && i < n; i++)
		free(out[i]);
	free(out);
	json_object_put(c);
	return r;
}
