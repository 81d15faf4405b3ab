// SPDX-License-Identifier: GPL-2.0
/*
 * featprof model: the options of the runs and how they are coded (cli/model/model.c fits them,
 * cli/model/plan.c plans them).
 *
 * Each name given to featprof run --config is one of three kinds:
 * - binary: every value a binary word (on/off, true/false, yes/no, enabled/disabled,
 *   1/0), coded 0 and 1;
 * - numeric: every value a number, coded as itself (time linear in it);
 * - one of a group (one-of, categorical): a value among several words, exactly one in a
 *   run (check=none|crc32|crc64|sha256). Declared with --choices NAME=V1|V2|... (the
 *   first the baseline), or found in the runs (values in the order they first appear).
 *   Coded by one indicator option per value, named NAME=VALUE: a feature named VALUE
 *   or NAME=VALUE is that indicator. Models that hold every option (outside regions,
 *   black-box, the parallelism) leave the baseline's indicator out (the intercept is it);
 *   no term multiplies two values of one group (never both on).
 * --choices with numbers only declares a numeric option's levels (the plan's lowest and
 * highest).
 *
 * Constraints (--constraint, for the plan): "A=on&B=on" forbids a combination,
 * "A=on->B=on" requires B=on wherever A=on (the left side may hold several literals
 * joined by &). A literal is NAME=VALUE as the runs spell values.
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/core/core.h"
#include "model_impl.h"

static const char *const binwords[][2] = {
	{ "on", "off" }, { "true", "false" }, { "yes", "no" }, { "enabled", "disabled" },
	{ "1", "0" },
};

int fpm_binary_value(const char *v, int *pair)
{
	size_t i;

	for (i = 0; i < sizeof(binwords) / sizeof(binwords[0]); i++) {
		if (!strcasecmp(v, binwords[i][0]) || !strcasecmp(v, binwords[i][1])) {
			if (pair)
				*pair = (int)i;
			return !strcasecmp(v, binwords[i][0]);
		}
	}
	return -1;
}

const char *fpm_binary_word(int pair, bool on)
{
	return binwords[pair][on ? 0 : 1];
}

bool fpm_opt_number(const char *v, double *d)
{
	char *end;

	errno = 0;
	*d = strtod(v, &end);
	return *v && !*end && !errno && isfinite(*d);
}

int fpm_opt_index(const struct fpm_model *m, const char *name)
{
	int i;

	for (i = 0; i < m->nopt; i++)
		if (!strcmp(m->opt[i].name, name))
			return i;
	for (i = 0; i < m->nopt; i++)	/* a choice by its value alone */
		if (m->opt[i].group >= 0 && !strcmp(m->opt[i].value, name))
			return i;
	return -1;
}

/* --- declarations ---------------------------------------------------------------------- */

int fpm_choices_parse(struct fpm_choices *ch, const char *s, struct fp_err *e)
{
	const char *eq = strchr(s, '=');
	struct fpm_choice *c;
	char *dup, *save = NULL, *v;

	if (!eq || eq == s || !eq[1] || (size_t)(eq - s) >= sizeof(c->name) ||
	    ch->n == MAXOPT) {
		fp_fail(e, EINVAL, "--choices takes NAME=VALUE|VALUE|...: '%s'", s);
		return -1;
	}
	c = &ch->c[ch->n];
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%.*s", (int)(eq - s), s);
	dup = strdup(eq + 1);
	for (v = dup ? strtok_r(dup, "|", &save) : NULL; v; v = strtok_r(NULL, "|", &save)) {
		if (c->n == MAXCHOICE || strlen(v) >= sizeof(c->v[0])) {
			fp_fail(e, EINVAL, "--choices %s: at most %d values of under "
				"%zu characters", c->name, MAXCHOICE, sizeof(c->v[0]));
			free(dup);
			return -1;
		}
		snprintf(c->v[c->n++], sizeof(c->v[0]), "%s", v);
	}
	free(dup);
	if (c->n < 2) {
		fp_fail(e, EINVAL, "--choices %s: two values at least", c->name);
		return -1;
	}
	ch->n++;
	return 0;
}

const struct fpm_choice *fpm_choice_of(const struct fpm_choices *ch, const char *name)
{
	int i;

	for (i = 0; ch && i < ch->n; i++)
		if (!strcmp(ch->c[i].name, name))
			return &ch->c[i];
	return NULL;
}

/* "NAME=VALUE" into a literal. */
static int literal(struct fpm_lit *l, char *s)
{
	char *eq;

	while (*s == ' ')
		s++;
	eq = strchr(s, '=');
	if (!eq || eq == s || !eq[1] || (size_t)(eq - s) >= sizeof(l->name) ||
	    strlen(eq + 1) >= sizeof(l->value))
		return -1;
	snprintf(l->name, sizeof(l->name), "%.*s", (int)(eq - s), s);
	snprintf(l->value, sizeof(l->value), "%s", eq + 1);
	for (eq = l->value + strlen(l->value); eq > l->value && eq[-1] == ' '; eq--)
		eq[-1] = 0;
	return 0;
}

int fpm_constraint_parse(struct fpm_constraints *cs, const char *s, struct fp_err *e)
{
	struct fpm_constraint *c = &cs->c[cs->n];
	char *dup = strdup(s), *arrow, *save = NULL, *t;
	int bad = !dup || cs->n == MAXOPT;

	memset(c, 0, sizeof(*c));
	arrow = dup ? strstr(dup, "->") : NULL;
	if (arrow) {
		*arrow = 0;
		c->implies = true;
		bad = bad || literal(&c->then, arrow + 2);
	}
	for (t = dup && !bad ? strtok_r(dup, "&", &save) : NULL; t;
	     t = strtok_r(NULL, "&", &save))
		bad = bad || c->n == MAXLIT || literal(&c->lit[c->n++], t);
	bad = bad || !c->n;
	free(dup);
	if (bad) {
		fp_fail(e, EINVAL, "--constraint takes NAME=VALUE&NAME=VALUE (a "
			"combination never run) or NAME=VALUE&...->NAME=VALUE: '%s'", s);
		return -1;
	}
	snprintf(c->text, sizeof(c->text), "%s", s);
	cs->n++;
	return 0;
}

/* --- coding the runs' options ---------------------------------------------------------- */

/* The value of option key in run r (r == nruns: the prediction's). */
static const char *value_of(struct json_object **docs, int nruns, int r,
			    struct json_object *given, const char *key)
{
	struct json_object *cfg = r < nruns
		? json_object_object_get(json_object_object_get(docs[r], "run"), "config")
		: given;

	return json_object_object_get_ex(cfg, key, NULL) ? gets_(cfg, key) : NULL;
}

/* Adds a one-of group's indicators: the values declared, else as they first appear. */
static int add_group(struct fpm_model *m, struct json_object **docs, int n, const char *key,
		     const struct fpm_choice *c)
{
	char vals[MAXCHOICE][48];
	int nv = 0, r, k;

	if (c)
		for (nv = 0; nv < c->n; nv++)
			snprintf(vals[nv], sizeof(vals[0]), "%s", c->v[nv]);
	for (r = 0; r < n; r++) {
		const char *v = value_of(docs, n, r, NULL, key);

		for (k = 0; k < nv && strcmp(vals[k], v); k++)
			;
		if (k < nv)
			continue;
		if (c || nv == MAXCHOICE || strlen(v) >= sizeof(vals[0])) {
			fp_fail(m->err, EINVAL, "%s: option %s is '%s', %s", m->files[r],
				key, v, c ? "not one of its --choices"
					  : "one value too many for a one-of option");
			return -1;
		}
		snprintf(vals[nv++], sizeof(vals[0]), "%s", v);
	}
	if (m->nopt + nv > MAXOPT || m->ngroups == MAXOPT) {
		fp_fail(m->err, EINVAL, "more than %d options and values", MAXOPT);
		return -1;
	}
	for (k = 0; k < nv; k++)
		if (strlen(key) > 40 || strlen(vals[k]) > 22) {	/* NAME=VALUE: opt.name */
			fp_fail(m->err, EINVAL, "option %s=%s: a one-of option's name "
				"takes at most 40 characters, its values 22", key, vals[k]);
			return -1;
		}
	m->group[m->ngroups].first = m->nopt;
	m->group[m->ngroups].n = nv;
	snprintf(m->group[m->ngroups].name, sizeof(m->group[0].name), "%s", key);
	for (k = 0; k < nv; k++) {
		struct fpm_opt *o = &m->opt[m->nopt++];

		memset(o, 0, sizeof(*o));
		snprintf(o->name, sizeof(o->name), "%.40s=%.22s", key, vals[k]);
		snprintf(o->value, sizeof(o->value), "%.47s", vals[k]);
		snprintf(o->on, sizeof(o->on), "1");
		snprintf(o->off, sizeof(o->off), "0");
		o->group = m->ngroups;
	}
	m->ngroups++;
	return 0;
}

/* Every run names the options of the first (cfg0), and --predict (given) no others. 0, or
 * -1 (said). */
static int same_options(const struct fpm_model *m, struct json_object **docs, int n,
			struct json_object *cfg0, struct json_object *given)
{
	int r;

	for (r = 0; r < n; r++) {
		struct json_object *c = json_object_object_get(
			json_object_object_get(docs[r], "run"), "config");
		bool same = json_object_object_length(c) == json_object_object_length(cfg0);

		json_object_object_foreach(cfg0, k0, v0) {
			(void)v0;
			same = same && json_object_object_get_ex(c, k0, NULL);
		}
		if (!same) {
			fp_fail(m->err, EINVAL, "%s: its options differ from %s's "
				"(each run must give the same options to --config)",
				m->files[r], m->files[0]);
			return -1;
		}
	}
	if (given) {
		json_object_object_foreach(given, gk, gv) {
			(void)gv;
			if (!json_object_object_get_ex(cfg0, gk, NULL)) {
				fp_fail(m->err, EINVAL, "--predict: '%s' is not an option "
					"of the runs", gk);
				return -1;
			}
		}
	}
	return 0;
}

int fpm_code_options(struct fpm_model *m, struct json_object **docs, int n,
		     struct json_object *given, double *px, const struct fpm_choices *ch)
{
	struct json_object *cfg0 = json_object_object_get(json_object_object_get(docs[0], "run"),
							  "config");
	int r, i;

	if (same_options(m, docs, n, cfg0, given))
		return -1;
	json_object_object_foreach(cfg0, key, val) {
		const struct fpm_choice *c = fpm_choice_of(ch, key);
		int pair = 4, bin = 1, num = 1, first = m->nopt;
		double d;

		(void)val;
		if (given && !json_object_object_get_ex(given, key, NULL)) {
			fp_fail(m->err, EINVAL, "--predict: no value for option %s", key);
			return -1;
		}
		for (r = 0; r <= n; r++) {
			const char *v = value_of(docs, n, r, given, key);

			if (!v)
				continue;
			if (fpm_binary_value(v, r < n && bin ? &pair : NULL) < 0)
				bin = 0;
			if (!fpm_opt_number(v, &d))
				num = 0;
		}
		for (i = 0; c && i < c->n; i++)
			num = num && fpm_opt_number(c->v[i], &d);
		if ((c && !num) || (!c && !bin && !num)) {
			if (add_group(m, docs, n, key, c))
				return -1;
		} else {
			struct fpm_opt *o = &m->opt[m->nopt];

			if (m->nopt == MAXOPT) {
				fp_fail(m->err, EINVAL, "more than %d options", MAXOPT);
				return -1;
			}
			memset(o, 0, sizeof(*o));
			snprintf(o->name, sizeof(o->name), "%s", key);
			o->numeric = !bin || c;
			o->group = -1;
			snprintf(o->on, sizeof(o->on), "%s", binwords[pair][0]);
			snprintf(o->off, sizeof(o->off), "%s", binwords[pair][1]);
			m->nopt++;
		}
		for (r = 0; r <= n; r++) {
			const char *v = value_of(docs, n, r, given, key);
			double *x = r < n ? m->x[r] : px;
			bool hit = false;

			if (!v)
				continue;
			for (i = first; i < m->nopt; i++) {
				const struct fpm_opt *o = &m->opt[i];

				if (o->group >= 0) {
					x[i] = !strcmp(o->value, v);
					hit = hit || x[i] > 0;
				} else if (o->numeric) {
					fpm_opt_number(v, &x[i]);
					hit = true;
				} else {
					x[i] = fpm_binary_value(v, NULL);
					hit = true;
				}
			}
			if (!hit) {	/* the prediction's value was never run */
				fp_fail(m->err, EINVAL, "--predict: %s=%s: no run had "
					"that value (declare it with --choices to predict it)",
					key, v);
				return -1;
			}
		}
	}
	return 0;
}

bool fpm_same_group(const struct fpm_model *m, int a, int b)
{
	return a != b && m->opt[a].group >= 0 && m->opt[a].group == m->opt[b].group;
}

bool fpm_is_baseline(const struct fpm_model *m, int o)
{
	return m->opt[o].group >= 0 && m->group[m->opt[o].group].first == o;
}

int fpm_linear_terms(const struct fpm_model *m, int *opts, uint64_t *cand)
{
	int i, n = 0;

	cand[0] = 0;
	for (i = 0; i < m->nopt && n + 1 < MAXP; i++) {
		if (fpm_is_baseline(m, i))
			continue;
		opts[n] = i;
		cand[n + 1] = 1ull << n;
		n++;
	}
	return n + 1;
}

int fpm_prune_terms(const struct fpm_model *m, const int *opts, uint64_t *cand, int nc)
{
	int k, out = 0, a, b;

	for (k = 0; k < nc; k++) {
		bool bad = false;

		for (a = 0; a < 64 && !bad; a++)
			for (b = a + 1; (cand[k] >> a & 1) && b < 64 && !bad; b++)
				bad = (cand[k] >> b & 1) && fpm_same_group(m, opts[a], opts[b]);
		if (!bad)
			cand[out++] = cand[k];
	}
	return out;
}
