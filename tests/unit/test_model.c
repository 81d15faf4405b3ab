// SPDX-License-Identifier: GPL-2.0
/*
 * The model library (cli/model/model.h) without the CLI: run files made here whose
 * figures follow known formulas, read, fitted and planned through the fpm_ API alone.
 *   region enc (feature Enc): 5 ms + 3 ms Enc, and 2 ms more where option D is on, which
 *   enc's features do not name (an influence through data); region chk (feature Chk):
 *   1 ms + 4 ms Chk; outside regions 10 ms + 1 ms D. Options Enc, Chk, D binary, every
 *   combination run twice (the second run 50 us slower outside: a replicate's spread).
 * Then bad input: a file that is no run file, one run, a spec that does not parse, a
 * prediction of a value no run had: each NULL with the error record filled, once.
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/model/model.h"
#include "test.h"

#define MS 1e6

static char dir[] = "/tmp/featprof-test-model-XXXXXX";
static char *files[16];
static int nfiles;

static void region(struct json_object *regs, struct json_object *sets, const char *name,
		   const char *feature, double ns)
{
	struct json_object *r = json_object_new_object(), *f = json_object_new_array();

	json_object_array_add(f, json_object_new_string(feature));
	json_object_object_add(r, "name", json_object_new_string(name));
	json_object_object_add(r, "features", json_object_get(f));
	json_object_object_add(r, "count", json_object_new_int(1));
	json_object_object_add(r, "exclusive_ns", json_object_new_double(ns));
	json_object_object_add(r, "exclusive_uncertainty_ns", json_object_new_double(0));
	json_object_array_add(regs, r);
	r = json_object_new_object();
	json_object_object_add(r, "features", f);
	json_object_object_add(r, "ns", json_object_new_double(ns));
	json_object_object_add(r, "uncertainty_ns", json_object_new_double(0));
	json_object_array_add(sets, r);
}

/* A run file of configuration (enc, chk, d), replicate rep. */
static void run_file(int enc, int chk, int d, int rep)
{
	struct json_object *o = json_object_new_object(), *run = json_object_new_object();
	struct json_object *cfg = json_object_new_object(), *regs = json_object_new_array();
	struct json_object *sets = json_object_new_array();
	double e = 5 * MS + 3 * MS * enc + 2 * MS * d, c = 1 * MS + 4 * MS * chk;
	double out = 10 * MS + 1 * MS * d + 50e3 * rep;
	char path[128];

	region(regs, sets, "enc", "Enc", e);
	region(regs, sets, "chk", "Chk", c);
	json_object_object_add(cfg, "Enc", json_object_new_string(enc ? "on" : "off"));
	json_object_object_add(cfg, "Chk", json_object_new_string(chk ? "on" : "off"));
	json_object_object_add(cfg, "D", json_object_new_string(d ? "on" : "off"));
	json_object_object_add(run, "config", cfg);
	json_object_object_add(run, "wall_ns", json_object_new_double(e + c + out));
	json_object_object_add(run, "exit_status", json_object_new_int(0));
	json_object_object_add(o, "exe", json_object_new_string("/made/up"));
	json_object_object_add(o, "regions", regs);
	json_object_object_add(o, "feature_sets", sets);
	json_object_object_add(o, "run", run);
	snprintf(path, sizeof(path), "%s/r%d%d%d_%d.json", dir, enc, chk, d, rep);
	json_object_to_file(path, o);
	json_object_put(o);
	files[nfiles++] = strdup(path);
}

/* The term of options names[0..n) (sorted as the report lists them) in terms. */
static struct json_object *term(struct json_object *terms, const char *a, const char *b)
{
	size_t i;

	for (i = 0; i < json_object_array_length(terms); i++) {
		struct json_object *t = json_object_array_get_idx(terms, i), *o;

		json_object_object_get_ex(t, "options", &o);
		if ((int)json_object_array_length(o) != (a ? 1 : 0) + (b ? 1 : 0))
			continue;
		if ((!a || !strcmp(json_object_get_string(json_object_array_get_idx(o, 0)), a)) &&
		    (!b || !strcmp(json_object_get_string(json_object_array_get_idx(o, 1)), b)))
			return t;
	}
	return NULL;
}

static double num(struct json_object *o, const char *k)
{
	struct json_object *v;

	return o && json_object_object_get_ex(o, k, &v) ? json_object_get_double(v) : NAN;
}

static void t_fit(void)
{
	struct json_object *given = json_object_new_object(), *rep, *terms, *un, *p;
	struct fp_err e = { 0 };
	struct fpm_model *m;
	size_t i;
	int found = 0;

	json_object_object_add(given, "Enc", json_object_new_string("on"));
	json_object_object_add(given, "Chk", json_object_new_string("off"));
	json_object_object_add(given, "D", json_object_new_string("on"));
	m = fpm_model__new(files, nfiles, NULL, given, &e);
	CHECK(m != NULL, "the model: %s", e.msg);
	rep = m ? fpm_model__report(m) : NULL;
	CHECK(rep != NULL, "its report");
	json_object_object_get_ex(rep, "terms", &terms);
	CHECK(fabs(num(term(terms, NULL, NULL), "influence_ns") - 16.025 * MS) < 1e3,
	      "base %.0f ns", num(term(terms, NULL, NULL), "influence_ns"));
	CHECK(fabs(num(term(terms, "Enc", NULL), "influence_ns") - 3 * MS) < 1e3, "Enc %.0f",
	      num(term(terms, "Enc", NULL), "influence_ns"));
	CHECK(fabs(num(term(terms, "Chk", NULL), "influence_ns") - 4 * MS) < 1e3, "Chk %.0f",
	      num(term(terms, "Chk", NULL), "influence_ns"));
	/* D acts on enc (2 ms) and outside (1 ms) */
	CHECK(fabs(num(term(terms, "D", NULL), "influence_ns") - 3 * MS) < 1e3, "D %.0f",
	      num(term(terms, "D", NULL), "influence_ns"));
	json_object_object_get_ex(rep, "unnamed_influences", &un);
	for (i = 0; un && i < json_object_array_length(un); i++) {
		struct json_object *u = json_object_array_get_idx(un, i), *v;

		json_object_object_get_ex(u, "unit", &v);
		if (strcmp(json_object_get_string(v), "enc"))
			continue;
		json_object_object_get_ex(u, "option", &v);
		found += !strcmp(json_object_get_string(v), "D") &&
			 fabs(num(u, "influence_ns") - 2 * MS) < 1e3;
	}
	CHECK(found == 1, "enc depends on D, which its features do not name: %s",
	      json_object_to_json_string(un));
	json_object_object_get_ex(rep, "prediction", &p);
	CHECK(fabs(num(p, "wall_ns") - (10 + 1 + 0.025 + 5 + 3 + 2 + 1) * MS) < 1e3,
	      "predicted wall %.0f ns", num(p, "wall_ns"));
	CHECK(num(json_object_object_get(rep, "loo_mape_pct"), "white_box") < 1,
	      "white-box leave-one-out error %.3f%%",
	      num(json_object_object_get(rep, "loo_mape_pct"), "white_box"));
	json_object_put(rep);
	fpm_model__free(m);
	json_object_put(given);
}

static void t_plan(void)
{
	struct fpm_spec *s = fpm_spec__new();
	struct json_object *plan, *confs = NULL;
	struct fp_err e = { 0 };
	size_t i;
	int ok = 1;

	CHECK(!fpm_spec__add_constraint(s, "Enc=on&Chk=on", &e), "constraint: %s", e.msg);
	plan = fpm_plan(files, 1, s, &e);
	CHECK(plan != NULL, "a plan from one run: %s", e.msg);
	json_object_object_get_ex(plan, "configurations", &confs);
	for (i = 0; confs && i < json_object_array_length(confs); i++) {
		struct json_object *c = json_object_array_get_idx(confs, i), *a, *b;

		json_object_object_get_ex(c, "Enc", &a);
		json_object_object_get_ex(c, "Chk", &b);
		ok = ok && !(!strcmp(json_object_get_string(a), "on") &&
			     !strcmp(json_object_get_string(b), "on"));
	}
	CHECK(confs && json_object_array_length(confs) >= 2 && ok,
	      "the plan varies the options and keeps the constraint: %s",
	      json_object_to_json_string(confs));
	json_object_put(plan);
	fpm_spec__free(s);
}

static void t_bad(void)
{
	struct json_object *given = json_object_new_object();
	char bad[160], *two[2] = { bad, files[0] };
	struct fpm_spec *s = fpm_spec__new();
	struct fp_err e = { 0 };
	FILE *f;

	snprintf(bad, sizeof(bad), "%s/bad.json", dir);
	f = fopen(bad, "w");
	fputs("{not json", f);
	fclose(f);
	CHECK(!fpm_model__new(two, 2, NULL, NULL, &e) && strstr(e.msg, "not a file of"),
	      "not a run file: '%s'", e.msg);
	memset(&e, 0, sizeof(e));
	CHECK(!fpm_model__new(files, 1, NULL, NULL, &e) && e.code == EINVAL &&
	      strstr(e.msg, "one run"), "one run: '%s'", e.msg);
	memset(&e, 0, sizeof(e));
	CHECK(fpm_spec__add_choices(s, "nothing", &e) == -EINVAL && strstr(e.msg, "--choices"),
	      "a bad --choices: '%s'", e.msg);
	memset(&e, 0, sizeof(e));
	json_object_object_add(given, "Enc", json_object_new_string("maybe"));
	json_object_object_add(given, "Chk", json_object_new_string("on"));
	json_object_object_add(given, "D", json_object_new_string("on"));
	CHECK(!fpm_model__new(files, nfiles, NULL, given, &e) && e.code,
	      "a value no run had: '%s'", e.msg);
	unlink(bad);
	json_object_put(given);
	fpm_spec__free(s);
}

int main(void)
{
	int enc, chk, d, rep, i;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	for (enc = 0; enc < 2; enc++)
		for (chk = 0; chk < 2; chk++)
			for (d = 0; d < 2; d++)
				for (rep = 0; rep < 2; rep++)
					run_file(enc, chk, d, rep);
	t_fit();
	t_plan();
	t_bad();
	for (i = 0; i < nfiles; i++) {
		unlink(files[i]);
		free(files[i]);
	}
	rmdir(dir);
	TEST_DONE("test_model");
}
