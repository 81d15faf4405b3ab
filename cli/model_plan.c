// SPDX-License-Identifier: GPL-2.0
/* featprof model --plan: the fewest configurations (greedily) that give every region
 * every combination of its options and vary every option for the outside model. */
#include <json-c/json.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "model.h"

/* --- the plan ------------------------------------------------------------------------ */

struct pconf {
	uint64_t val, set;	/* option values; which are fixed */
};

/* The rank of the design [1, options 0..upto] over the configurations. */
static int design_rank(const struct pconf *c, int nc, int upto)
{
	double q[MAXOPT + 1][256], v[256];
	int col, r = 0, k, j, n = nc < 256 ? nc : 256;

	for (col = -1; col <= upto; col++) {
		double norm0 = 0, norm = 0, d;

		for (k = 0; k < n; k++) {
			v[k] = col < 0 ? 1 : (double)(c[k].val >> col & 1);
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

/* Configurations giving each option set in sets[] every combination (first fit, the
 * largest sets first), then every option made a column of its own for the linear model
 * outside regions (a free value set, else one more configuration). */
static int plan(const uint64_t *sets, int nsets, int nopt, struct pconf *c, int max)
{
	int nc = 0, s, i, k;

	for (s = 0; s < nsets; s++) {
		uint64_t S = sets[s], a = 0;

		do {	/* every subset a of S: the options of S on in a, off elsewhere */
			for (k = 0; k < nc; k++)
				if (!((c[k].val ^ a) & c[k].set & S))
					break;
			if (k == nc && nc < max)
				c[nc++] = (struct pconf){ 0, 0 };
			if (k < nc) {
				c[k].val = (c[k].val & ~S) | a;
				c[k].set |= S;
			}
			a = (a - S) & S;
		} while (a);
	}
	if (!nc)
		c[nc++] = (struct pconf){ 0, 0 };
	for (i = 0; i < nopt; i++) {
		int want = design_rank(c, nc, i - 1) + 1;

		for (k = 0; k < nc && design_rank(c, nc, i) < want; k++) {
			if (c[k].set >> i & 1)
				continue;
			c[k].val |= 1ull << i;
			c[k].set |= 1ull << i;
			if (design_rank(c, nc, i) < want)
				c[k].val &= ~(1ull << i);	/* stays fixed: off */
		}
		if (design_rank(c, nc, i) < want && nc < max)
			c[nc++] = (struct pconf){ 1ull << i, 1ull << i };
	}
	return nc;
}

int cmd_plan(const char *file, int json)
{
	struct json_object *d = read_run(file), *cfg, *out, *arr, *regs;
	struct model m = { 0 };
	uint64_t sets[4096];
	struct pconf c[256];
	int nsets = 0, nc, i, k, pair;
	size_t r;

	if (!d)
		return 1;
	cfg = json_object_object_get(json_object_object_get(d, "run"), "config");
	json_object_object_foreach(cfg, key, val) {
		if (m.nopt < MAXOPT) {
			struct opt *o = &m.opt[m.nopt++];

			pair = 4;
			binary_value(json_object_get_string(val), &pair);
			snprintf(o->name, sizeof(o->name), "%s", key);
			snprintf(o->on, sizeof(o->on), "%s", binary_word(pair, true));
			snprintf(o->off, sizeof(o->off), "%s", binary_word(pair, false));
		}
	}
	regs = geta(d, "regions");
	for (r = 0; regs && r < json_object_array_length(regs); r++) {
		struct json_object *fl = geta(json_object_array_get_idx(regs, r), "features");
		uint64_t s = 0;

		for (k = 0; fl && k < (int)json_object_array_length(fl); k++) {
			const char *f = json_object_get_string(json_object_array_get_idx(fl, k));
			int o = opt_index(&m, f);

			if (o < 0 && !json_object_object_length(cfg) && m.nopt < MAXOPT) {
				o = m.nopt++;	/* no --config: the features are the options */
				snprintf(m.opt[o].name, sizeof(m.opt[o].name), "%s", f);
				snprintf(m.opt[o].on, sizeof(m.opt[o].on), "1");
				snprintf(m.opt[o].off, sizeof(m.opt[o].off), "0");
			}
			if (o >= 0)
				s |= 1ull << o;
		}
		for (k = 0; k < nsets && sets[k] != s; k++)
			;
		if (k == nsets && nsets < 4096)
			sets[nsets++] = s;
	}
	for (i = 0; i < nsets; i++)	/* the largest first */
		for (k = i + 1; k < nsets; k++)
			if (__builtin_popcountll(sets[k]) > __builtin_popcountll(sets[i])) {
				uint64_t t = sets[i];

				sets[i] = sets[k];
				sets[k] = t;
			}
	nc = plan(sets, nsets, m.nopt, c, 256);
	out = json_object_new_object();
	arr = json_object_new_array();
	if (!json)
		printf("featprof model --plan: %d configurations give each of %zu regions every "
		       "combination of its options and vary each of %d options (all "
		       "combinations: %.0f)\n", nc, regs ? json_object_array_length(regs) : 0,
		       m.nopt, pow(2, m.nopt));
	for (k = 0; k < nc; k++) {
		struct json_object *o = json_object_new_object();
		char line[4096] = "";

		for (i = 0; i < m.nopt; i++) {
			const char *v = c[k].val >> i & 1 ? m.opt[i].on : m.opt[i].off;

			json_object_object_add(o, m.opt[i].name, json_object_new_string(v));
			snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s%s=%s",
				 i ? "," : "", m.opt[i].name, v);
		}
		json_object_array_add(arr, o);
		if (!json)
			printf("  %s\n", line);
	}
	json_object_object_add(out, "configurations", arr);
	json_object_object_add(out, "all_combinations", json_object_new_double(pow(2, m.nopt)));
	if (json)
		printf("%s\n", json_object_to_json_string_ext(out, JSON_C_TO_STRING_PLAIN));
	json_object_put(out);
	json_object_put(d);
	return 0;
}

