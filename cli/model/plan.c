// SPDX-License-Identifier: GPL-2.0
/*
 * featprof model --plan: the fewest configurations (greedily) that give every region
 * every combination of its options and vary every option for the outside model, within
 * the one-of groups and the constraints given.
 *
 * A configuration is a bit per option (a one-of group: a bit per value, exactly one on),
 * and which bits are fixed. Each region's option set gets every combination of its bits
 * (first fit into a configuration whose fixed bits agree, the largest sets first), less
 * those no configuration can run: two values of one group on, or none of a group whose
 * values the region names all. Then each option (a group's value but its baseline)
 * is made a column of its own for the linear models over every option. Then each
 * configuration is completed (a group with no value on takes its baseline, or the first
 * value free) and held to the constraints: a violated one is repaired by changing an
 * option the plan left free, else the configuration is dropped and said.
 */
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

/* --- the plan ------------------------------------------------------------------------ */

struct fpm_pconf {
	uint64_t val, set;	/* option values; which are fixed */
	char line[512];		/* as printed */
	bool had;		/* one of the runs given (--plan of several) */
};

/* The rank of the design whose columns are the products of the bits of cols[] (0: the
 * intercept) over the configurations. */
static int rank_cols(const struct fpm_pconf *c, int nc, const uint64_t *cols, int ncols)
{
	static double q[MAXP + MAXOPT * MAXOPT][256];
	double v[256];
	int col, r = 0, k, j, n = nc < 256 ? nc : 256;

	for (col = 0; col < ncols; col++) {
		double norm0 = 0, norm = 0, d;

		for (k = 0; k < n; k++) {
			v[k] = (c[k].val & cols[col]) == cols[col];
			norm0 += v[k] * v[k];
		}
		for (j = 0; j < r; j++) {
			for (d = 0, k = 0; k < n; k++)
				d += q[j][k] * v[k];
			for (k = 0; k < n; k++)
				v[k] -= d * q[j][k];
		}
		for (k = 0; k < n; k++)
			norm += v[k] * v[k];
		if (norm0 > 0 && norm > 1e-9 * norm0) {
			for (k = 0; k < n; k++)
				q[r][k] = v[k] / sqrt(norm);
			r++;
		}
	}
	return r;
}

/* A --config name as the plan sees it: one bit, or a group's bits. */
struct fpm_pkey {
	char name[64];
	int bit, group;		/* group >= 0: the group's bits, bit unused */
	char on[48], off[48];
};

struct fpm_pstate {
	struct fpm_model m;
	struct fpm_pkey key[MAXOPT];
	int nkey;
	uint64_t gmask[MAXOPT], base;	/* each group's bits; the baselines' */
	uint64_t pbits;			/* --parallel's */
	uint64_t xbits;			/* options the runs found a region depends on */
	const struct fpm_constraints *cs;
	struct fp_err *e;		/* where planning fails */
};

static const struct fpm_pkey *key_of(const struct fpm_pstate *P, const char *name);
static bool lit_true(const struct fpm_pstate *P, const struct fpm_lit *l,
		     const struct fpm_pconf *c);

/* Whether literal l is decided by c's fixed bits alone. */
static bool lit_fixed(const struct fpm_pstate *P, const struct fpm_lit *l,
		      const struct fpm_pconf *c)
{
	const struct fpm_pkey *K = key_of(P, l->name);
	int k;

	if (K->group < 0)
		return c->set >> K->bit & 1;
	if (c->val & c->set & P->gmask[K->group])	/* a value fixed on */
		return true;
	for (k = 0; k < P->m.group[K->group].n; k++) {	/* l's value fixed off */
		int b = P->m.group[K->group].first + k;

		if (!strcmp(P->m.opt[b].value, l->value))
			return c->set >> b & 1;
	}
	return true;	/* a value the group does not have: false whatever */
}

/* Whether c's fixed bits already break a constraint (nothing free could repair it). */
static bool breaks(const struct fpm_pstate *P, const struct fpm_pconf *c)
{
	int i, j;

	for (i = 0; P->cs && i < P->cs->n; i++) {
		const struct fpm_constraint *k = &P->cs->c[i];
		bool all = true;

		for (j = 0; j < k->n && all; j++)
			all = lit_fixed(P, &k->lit[j], c) && lit_true(P, &k->lit[j], c);
		if (all && (!k->implies ||
			    (lit_fixed(P, &k->then, c) && !lit_true(P, &k->then, c))))
			return true;
	}
	return false;
}

/* Whether subset a of S can run: at most one value of a group on, and one where S
 * names all of the group's values. */
static bool subset_ok(const struct fpm_pstate *P, uint64_t S, uint64_t a)
{
	int g;

	for (g = 0; g < P->m.ngroups; g++) {
		int on = __builtin_popcountll(a & P->gmask[g]);

		if (on > 1 || (!on && (S & P->gmask[g]) == P->gmask[g]))
			return false;
	}
	return true;
}

/* Whether configuration c can take a on S: its fixed bits agree, no other value of a
 * group that a turns on is fixed on, and the fixed bits then break no constraint. */
static bool fits_conf(const struct fpm_pstate *P, const struct fpm_pconf *c, uint64_t S, uint64_t a)
{
	int g;

	struct fpm_pconf t = *c;

	if ((c->val ^ a) & c->set & S)
		return false;
	for (g = 0; g < P->m.ngroups; g++)
		if ((a & P->gmask[g]) && (c->val & c->set & P->gmask[g] & ~S))
			return false;
	t.val = (t.val & ~S) | a;
	t.set |= S;
	return !breaks(P, &t);
}

/* Makes column want (a product of bits) independent of cols[0..ncols) in c[0..*nc): sets
 * its bits on where they are free in a configuration, else in one more configuration;
 * the column joins cols either way. */
static void add_column(const struct fpm_pstate *P, struct fpm_pconf *c, int *nc, int max,
		       uint64_t *cols, int *ncols, uint64_t want)
{
	int goal = rank_cols(c, *nc, cols, *ncols) + 1, k;

	cols[(*ncols)++] = want;
	for (k = 0; k < *nc && rank_cols(c, *nc, cols, *ncols) < goal; k++) {
		uint64_t free = want & ~c[k].set, old = c[k].val;

		if ((c[k].val & c[k].set & want) != (want & c[k].set) || !free ||
		    !fits_conf(P, &c[k], free, free))
			continue;
		c[k].val |= free;
		c[k].set |= free;
		if (rank_cols(c, *nc, cols, *ncols) < goal)
			c[k].val = old;	/* stays fixed: off */
	}
	if (rank_cols(c, *nc, cols, *ncols) < goal && *nc < max &&
	    fits_conf(P, &(struct fpm_pconf){ .val = 0 }, want, want))
		c[(*nc)++] = (struct fpm_pconf){ .val = want, .set = want };
}

/* Configurations giving each option set in sets[] every combination it can run (first
 * fit, the largest sets first), then every option but a baseline made a column of its
 * own for the linear models over every option (a free value set, else one more
 * configuration). */
static int plan(const struct fpm_pstate *P, const uint64_t *sets, int nsets, struct fpm_pconf *c,
		int max)
{
	int nc = 0, s, i, k, nopt = P->m.nopt, ncols = 0;
	uint64_t cols[MAXOPT * MAXOPT + 1];

	for (s = 0; s < nsets; s++) {
		uint64_t S = sets[s], a = 0;

		do {	/* every subset a of S: the options of S on in a, off elsewhere */
			struct fpm_pconf alone = { .val = a, .set = S };

			if (!subset_ok(P, S, a) || breaks(P, &alone)) {
				a = (a - S) & S;
				continue;
			}
			for (k = 0; k < nc && !fits_conf(P, &c[k], S, a); k++)
				;
			if (k == nc && nc < max)
				c[nc++] = (struct fpm_pconf){ .val = 0 };
			if (k < nc) {
				c[k].val = (c[k].val & ~S) | a;
				c[k].set |= S;
			}
			a = (a - S) & S;
		} while (a);
	}
	if (!nc)
		c[nc++] = (struct fpm_pconf){ .val = 0 };
	cols[ncols++] = 0;
	for (i = 0; i < nopt; i++)
		if (!(P->base >> i & 1))
			add_column(P, c, &nc, max, cols, &ncols, 1ull << i);
	/* --parallel: its products with every other option, for the parallelism's model */
	for (i = 0; i < nopt; i++)
		for (k = 0; (P->pbits >> i & 1) && !(P->base >> i & 1) && k < nopt; k++)
			if (k != i && !(P->base >> k & 1) && !(k < i && (P->pbits >> k & 1)) &&
			    !(P->m.opt[i].group >= 0 && P->m.opt[i].group == P->m.opt[k].group))
				add_column(P, c, &nc, max, cols, &ncols, 1ull << i | 1ull << k);
	/* an option found acting on a region its features do not name: its products with
	 * every other option, each a column of its own, so that the next model tells them
	 * apart (paired in the same configurations, lz4's block size, content and block
	 * checksums moved together at the slow levels) */
	for (i = 0; i < nopt; i++)
		for (k = 0; (P->xbits >> i & 1) && !(P->base >> i & 1) && k < nopt; k++)
			if (k != i && !(P->base >> k & 1) && !(k < i && (P->xbits >> k & 1)) &&
			    !(P->m.opt[i].group >= 0 && P->m.opt[i].group == P->m.opt[k].group))
				add_column(P, c, &nc, max, cols, &ncols, 1ull << i | 1ull << k);
	return nc;
}

/* A group with no value on takes its baseline, else its first value not fixed off;
 * false if every value is fixed off. */
static bool complete(const struct fpm_pstate *P, struct fpm_pconf *c)
{
	int g, k;

	for (g = 0; g < P->m.ngroups; g++) {
		const struct fpm_group *gr = &P->m.group[g];

		if (c->val & P->gmask[g])
			continue;
		for (k = gr->first; k < gr->first + gr->n && (c->set >> k & 1); k++)
			;
		if (k == gr->first + gr->n)
			return false;
		c->val |= 1ull << k;
	}
	return true;
}

/* Key K's value in configuration c. */
static const char *key_value(const struct fpm_pstate *P, const struct fpm_pkey *K,
			     const struct fpm_pconf *c)
{
	int k;

	if (K->group < 0)
		return c->val >> K->bit & 1 ? K->on : K->off;
	for (k = 0; k < P->m.group[K->group].n; k++)
		if (c->val >> (P->m.group[K->group].first + k) & 1)
			return P->m.opt[P->m.group[K->group].first + k].value;
	return "";
}

static const struct fpm_pkey *key_of(const struct fpm_pstate *P, const char *name)
{
	int i;

	for (i = 0; i < P->nkey; i++)
		if (!strcmp(P->key[i].name, name))
			return &P->key[i];
	return NULL;
}

static bool lit_true(const struct fpm_pstate *P, const struct fpm_lit *l, const struct fpm_pconf *c)
{
	const struct fpm_pkey *K = key_of(P, l->name);
	const char *v = key_value(P, K, c);
	int b = fpm_binary_value(l->value, NULL);

	if (K->group < 0 && b >= 0 && fpm_binary_value(v, NULL) >= 0)
		return b == fpm_binary_value(v, NULL);
	return !strcasecmp(v, l->value);
}

static bool key_free(const struct fpm_pstate *P, const struct fpm_pkey *K,
		     const struct fpm_pconf *c)
{
	return K->group < 0 ? !(c->set >> K->bit & 1) : !(c->set & P->gmask[K->group]);
}

/* Sets key K to value v (want: true) or away from it (false) in c. */
static void key_set(const struct fpm_pstate *P, const struct fpm_pkey *K, struct fpm_pconf *c,
		    const char *v, bool want)
{
	const struct fpm_group *g;
	int k, pick = -1;

	if (K->group < 0) {
		bool on = !strcasecmp(v, K->on) ||
			  (fpm_binary_value(v, NULL) == 1 && fpm_binary_value(K->on, NULL) == 1);

		c->val = (c->val & ~(1ull << K->bit)) | ((uint64_t)(on == want) << K->bit);
		return;
	}
	g = &P->m.group[K->group];
	for (k = g->first; k < g->first + g->n && pick < 0; k++)
		if (!strcmp(P->m.opt[k].value, v) == want)
			pick = k;
	if (pick >= 0)
		c->val = (c->val & ~P->gmask[K->group]) | 1ull << pick;
}

/* Holds c to the constraints, changing options the plan left free; the constraint it
 * cannot hold, or NULL. */
static const struct fpm_constraint *hold(const struct fpm_pstate *P,
					 const struct fpm_constraints *cs, struct fpm_pconf *c)
{
	int pass, i, j;

	for (pass = 0; pass < 4 * MAXOPT; pass++) {
		const struct fpm_constraint *bad = NULL;
		bool all = true, fixed = false;

		for (i = 0; cs && i < cs->n && !bad; i++) {
			for (all = true, j = 0; j < cs->c[i].n; j++)
				all = all && lit_true(P, &cs->c[i].lit[j], c);
			if (all && (!cs->c[i].implies || !lit_true(P, &cs->c[i].then, c)))
				bad = &cs->c[i];
		}
		if (!bad)
			return NULL;
		if (bad->implies && key_free(P, key_of(P, bad->then.name), c)) {
			key_set(P, key_of(P, bad->then.name), c, bad->then.value, true);
			fixed = true;
		}
		for (j = 0; !fixed && j < bad->n; j++) {
			const struct fpm_lit *l = &bad->lit[j];

			if (key_free(P, key_of(P, l->name), c)) {
				key_set(P, key_of(P, l->name), c, l->value, false);
				fixed = true;
			}
		}
		if (!fixed)
			return bad;
	}
	return &cs->c[0];
}

/* The keys of the run's --config: groups from --choices, numeric levels too. */
static int plan_keys(struct fpm_pstate *P, struct json_object *cfg, const struct fpm_choices *ch)
{
	struct fpm_model *m = &P->m;

	json_object_object_foreach(cfg, key, val) {
		const struct fpm_choice *c = fpm_choice_of(ch, key);
		struct fpm_pkey *K = &P->key[P->nkey];
		const char *v = json_object_get_string(val);
		int pair = 4, k, num = 1;
		double d, lo = 0, hi = 0;

		for (k = 0; c && k < c->n; k++) {
			num = num && fpm_opt_number(c->v[k], &d);
			lo = !k || d < lo ? d : lo;
			hi = !k || d > hi ? d : hi;
		}
		if (P->nkey == MAXOPT || m->nopt + (c ? c->n : 1) > MAXOPT) {
			fp_fail(P->e, EINVAL, "more than %d options and values",
				MAXOPT);
			return -1;
		}
		snprintf(K->name, sizeof(K->name), "%s", key);
		K->group = -1;
		if (c && !num) {	/* one of c's values: a bit each */
			struct fpm_group *g = &m->group[m->ngroups];

			snprintf(g->name, sizeof(g->name), "%s", key);
			g->first = m->nopt;
			g->n = c->n;
			for (k = 0; k < c->n; k++) {
				struct fpm_opt *o = &m->opt[m->nopt++];

				snprintf(o->name, sizeof(o->name), "%s=%s", key, c->v[k]);
				snprintf(o->value, sizeof(o->value), "%s", c->v[k]);
				o->group = m->ngroups;
				P->gmask[m->ngroups] |= 1ull << (g->first + k);
			}
			P->base |= 1ull << g->first;
			K->group = m->ngroups++;
		} else {
			struct fpm_opt *o = &m->opt[m->nopt];

			if (!c && fpm_binary_value(v, &pair) < 0 && !fpm_opt_number(v, &d)) {
				fp_fail(P->e, EINVAL, "option %s is '%s', neither "
					"binary nor a number: declare its values with --choices "
					"%s=%s|...", key, v, key, v);
				return -1;
			}
			snprintf(o->name, sizeof(o->name), "%s", key);
			o->group = -1;
			if (c) {	/* a numeric option's lowest and highest level */
				snprintf(o->on, sizeof(o->on), "%s", c->v[0]);
				snprintf(o->off, sizeof(o->off), "%s", c->v[0]);
				for (k = 0; k < c->n; k++) {
					fpm_opt_number(c->v[k], &d);
					if (d == hi)
						snprintf(o->on, sizeof(o->on), "%s", c->v[k]);
					if (d == lo)
						snprintf(o->off, sizeof(o->off), "%s", c->v[k]);
				}
			} else {
				snprintf(o->on, sizeof(o->on), "%s", fpm_binary_word(pair, true));
				snprintf(o->off, sizeof(o->off), "%s",
					 fpm_binary_word(pair, false));
			}
			snprintf(K->on, sizeof(K->on), "%s", o->on);
			snprintf(K->off, sizeof(K->off), "%s", o->off);
			K->bit = m->nopt++;
		}
		P->nkey++;
	}
	return 0;
}

static uint64_t key_bits(const struct fpm_pstate *P, const struct fpm_pkey *K)
{
	return K->group < 0 ? 1ull << K->bit : P->gmask[K->group];
}

static void add_set(uint64_t *sets, int *nsets, uint64_t s)
{
	int k;

	for (k = 0; k < *nsets && sets[k] != s; k++)
		;
	if (k == *nsets && *nsets < 4096)
		sets[(*nsets)++] = s;
}

/* Whether configuration line (NAME=VALUE,...) is one of the runs'. */
static bool measured(struct json_object *const *docs, int n, const struct fpm_pstate *P,
		     const struct fpm_pconf *c)
{
	int r, i;

	for (r = 0; r < n; r++) {
		struct json_object *cfg = json_object_object_get(
			json_object_object_get(docs[r], "run"), "config");
		bool same = true;

		for (i = 0; i < P->nkey && same; i++) {
			const char *v = json_object_object_get_ex(cfg, P->key[i].name, NULL)
				? gets_(cfg, P->key[i].name) : "";

			same = !strcasecmp(v, key_value(P, &P->key[i], c));
		}
		if (same)
			return true;
	}
	return false;
}

/* The options the constraints and --parallel name are the run's; --parallel's bits in
 * *pbits. 0, or 2 (P->e filled). */
static int plan_names(struct fpm_pstate *P, const struct fpm_constraints *cs,
		      const char (*par)[64], int npar, uint64_t *pbits)
{
	int i, k;

	for (i = 0; cs && i < cs->n; i++)
		for (k = -1; k < cs->c[i].n; k++) {
			const struct fpm_lit *l = k < 0 ? (cs->c[i].implies ? &cs->c[i].then : NULL)
						    : &cs->c[i].lit[k];

			if (l && !key_of(P, l->name)) {
				fp_fail(P->e, EINVAL, "--constraint %s: %s is "
					"not an option of the run", cs->c[i].text, l->name);
				return 2;
			}
		}
	for (i = 0; i < npar; i++) {	/* --parallel: its bits join every region's set */
		const struct fpm_pkey *K = key_of(P, par[i]);

		if (!K) {
			fp_fail(P->e, EINVAL, "--parallel %s: not an option of "
				"the run", par[i]);
			return 2;
		}
		*pbits |= K->group < 0 ? 1ull << K->bit : P->gmask[K->group];
	}
	return 0;
}

/* Each region's set of options (those its features name, those the runs showed it
 * depends on, --parallel's; with no --config its features are the options), and for a
 * region that depends on options it does not name, each such option with each other
 * one: into sets (at most 4096). Their number. */
static int region_sets(struct fpm_pstate *P, struct json_object *regs, struct json_object *cfg,
		       struct json_object *found, uint64_t pbits, uint64_t *sets)
{
	int nsets = 0, j, k;
	uint64_t named;
	size_t r;

	for (r = 0; regs && r < json_object_array_length(regs); r++) {
		struct json_object *fl = geta(json_object_array_get_idx(regs, r), "features");
		uint64_t s = 0;

		for (k = 0; fl && k < (int)json_object_array_length(fl); k++) {
			const char *f = json_object_get_string(json_object_array_get_idx(fl, k));
			int o = fpm_opt_index(&P->m, f);

			if (o < 0 && !json_object_object_length(cfg) && P->m.nopt < MAXOPT) {
				/* no --config: the features are the options */
				o = P->m.nopt++;
				snprintf(P->m.opt[o].name, sizeof(P->m.opt[o].name), "%s", f);
				P->m.opt[o].group = -1;
				snprintf(P->key[P->nkey].name, sizeof(P->key[0].name), "%s", f);
				P->key[P->nkey].group = -1;
				P->key[P->nkey].bit = o;
				snprintf(P->key[P->nkey].on, sizeof(P->key[0].on), "1");
				snprintf(P->key[P->nkey++].off, sizeof(P->key[0].off), "0");
			}
			if (o >= 0)
				s |= 1ull << o;
		}
		fl = json_object_object_get(found, gets_(json_object_array_get_idx(regs, r),
							 "name"));
		named = s | pbits;
		for (k = 0; fl && k < (int)json_object_array_length(fl); k++) {
			int o = fpm_opt_index(&P->m, json_object_get_string(
						       json_object_array_get_idx(fl, k)));

			if (o >= 0 && !(named >> o & 1)) {	/* one the runs showed */
				s |= 1ull << o;
				P->xbits |= 1ull << o;
			}
		}
		s |= pbits;
		add_set(sets, &nsets, s);
		/* a region that depends on options it does not name may depend on others
		 * with them (lz4's block compressor: the level, and the block size at
		 * the slow levels only, too weak at the fast level the first plan ran it
		 * at to be found): each such option with each other one, for the next
		 * model */
		for (k = 0; s != named && k < P->nkey; k++) {
			uint64_t kb = key_bits(P, &P->key[k]);

			for (j = 0; (s & ~named & kb) && j < P->nkey; j++)
				if (!(key_bits(P, &P->key[j]) & (kb | named)))
					add_set(sets, &nsets, named | kb | key_bits(P, &P->key[j]));
		}
	}
	return nsets;
}

/* The planned configurations that are complete and hold the constraints, moved to the
 * front of c (their lines set, those the runs measured marked had) and put in arr; the
 * others in drop, said. Their number; *nhad: how many were measured. */
static int keep_valid(const struct fpm_pstate *P, const struct fpm_constraints *cs,
		      struct fpm_pconf *c, int nc, struct json_object *const *docs, int nfiles,
		      struct json_object *arr, struct json_object *drop, int *nhad)
{
	int i, k, kept = 0;

	for (k = 0; k < nc; k++) {
		bool done = complete(P, &c[k]);
		const struct fpm_constraint *bad = done ? hold(P, cs, &c[k]) : NULL;
		struct json_object *o = json_object_new_object();
		char line[4096] = "";
		bool ok = done && !bad;

		for (i = 0; i < P->nkey; i++) {
			const char *v = key_value(P, &P->key[i], &c[k]);

			json_object_object_add(o, P->key[i].name, json_object_new_string(v));
			snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s%s=%s",
				 i ? "," : "", P->key[i].name, v);
		}
		if (ok) {
			c[kept] = c[k];
			c[kept].had = nfiles > 1 && measured(docs, nfiles, P, &c[k]);
			if (c[kept].had)
				json_object_put(o);
			else
				json_object_array_add(arr, o);
			*nhad += c[kept].had;
			snprintf(c[kept++].line, sizeof(c[0].line), "%s", line);
			continue;
		}
		json_object_object_add(o, "constraint",
				       json_object_new_string(bad ? bad->text : "(no value left)"));
		json_object_array_add(drop, o);
		snprintf(c[k].line, sizeof(c[0].line), "%s", line);
	}
	return kept;
}

/* The run files' documents (the first's catalog and --config plans; all of them say what
 * was measured) and, from several runs, each region's options as they found them. */
static int plan_read(char **files, int nfiles, const struct fpm_choices *ch,
		     struct json_object **docs, struct json_object **found, struct fp_err *e)
{
	int i;

	for (i = 0; i < nfiles; i++)
		if (!(docs[i] = fpm_read_run(files[i], e)))
			return -1;
	if (nfiles > 1 && !(*found = fpm_region_options(files, nfiles, ch, e)))
		return -1;
	return 0;
}

/* The sets to plan, the largest first. */
static void sort_sets(uint64_t *sets, int nsets)
{
	int i, k;

	for (i = 0; i < nsets; i++)
		for (k = i + 1; k < nsets; k++)
			if (__builtin_popcountll(sets[k]) > __builtin_popcountll(sets[i])) {
				uint64_t t = sets[i];

				sets[i] = sets[k];
				sets[k] = t;
			}
}

/* How independently the kept configurations c[0..kept) vary the options: the rank of
 * their linear columns (the intercept and each option but the baselines), into out with
 * the columns' number. */
static void plan_rank(const struct fpm_pstate *P, const struct fpm_pconf *c, int kept,
		      struct json_object *out)
{
	uint64_t cols[MAXOPT + 1] = { 0 };
	int i, ncols = 1, rank;

	for (i = 0; i < P->m.nopt; i++)
		if (!(P->base >> i & 1))
			cols[ncols++] = 1ull << i;
	rank = rank_cols(c, kept, cols, ncols);
	json_object_object_add(out, "independent", json_object_new_boolean(rank >= ncols));
	json_object_object_add(out, "rank", json_object_new_int(rank));
	json_object_object_add(out, "terms", json_object_new_int(ncols));
}

struct json_object *fpm_plan(char **files, int nfiles, const struct fpm_spec *s,
			     struct fp_err *e)
{
	static const struct fpm_spec none;
	struct json_object **docs = calloc((size_t)(nfiles > 0 ? nfiles : 1), sizeof(*docs));
	struct json_object *out = NULL, *arr, *drop, *regs, *cfg, *found = NULL;
	struct fpm_pstate *P = calloc(1, sizeof(*P));
	struct fpm_pconf *c = calloc(256, sizeof(*c));
	uint64_t *sets = calloc(4096, sizeof(*sets));
	int nsets, nc, i, kept, nhad = 0;
	double all = 1;

	s = s ? s : &none;
	if (!docs || !P || !c || !sets) {
		fp_fail(e, ENOMEM, "out of memory");
		goto out;
	}
	if (nfiles < 1 || nfiles > FPM_MAX_RUNS) {
		fp_fail(e, EINVAL, "%d run files: one to %d", nfiles, FPM_MAX_RUNS);
		goto out;
	}
	if (plan_read(files, nfiles, &s->ch, docs, &found, e))
		goto out;
	P->cs = &s->cs;
	P->e = e;
	cfg = json_object_object_get(json_object_object_get(docs[0], "run"), "config");
	if (plan_keys(P, cfg, &s->ch) || plan_names(P, &s->cs, s->par, s->npar, &P->pbits))
		goto out;
	regs = geta(docs[0], "regions");
	nsets = region_sets(P, regs, cfg, found, P->pbits, sets);
	sort_sets(sets, nsets);
	nc = plan(P, sets, nsets, c, 256);
	out = json_object_new_object();
	arr = json_object_new_array();
	drop = json_object_new_array();
	for (i = 0; i < P->nkey; i++)
		all *= P->key[i].group < 0 ? 2 : P->m.group[P->key[i].group].n;
	kept = keep_valid(P, &s->cs, c, nc, docs, nfiles, arr, drop, &nhad);
	json_object_object_add(out, "configurations", arr);
	json_object_object_add(out, "dropped", drop);
	json_object_object_add(out, "all_combinations", json_object_new_double(all));
	plan_rank(P, c, kept, out);
	json_object_object_add(out, "measured", json_object_new_int(nhad));
	json_object_object_add(out, "options", json_object_new_int(P->nkey));
	json_object_object_add(out, "regions",
			       json_object_new_int(regs ? (int)json_object_array_length(regs) : 0));
	if (found)
		json_object_object_add(out, "region_options", json_object_get(found));
out:
	json_object_put(found);
	for (i = 0; docs && i < nfiles; i++)
		json_object_put(docs[i]);
	free(docs);
	free(P);
	free(c);
	free(sets);
	return out;
}
