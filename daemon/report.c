// SPDX-License-Identifier: GPL-2.0
#include <json-c/json.h>
#include <stdlib.h>

#include "report.h"

static struct json_object *u64(uint64_t v)
{
	return json_object_new_int64(v > INT64_MAX ? INT64_MAX : (int64_t)v);
}

static struct json_object *feature_list(const struct fp_catalog *cat, uint64_t mask)
{
	struct json_object *a = json_object_new_array();
	int f;

	for (f = 0; f < cat->nfeatures && f < FP_MAX_FEATURES; f++)
		if (mask & (1ULL << f))
			json_object_array_add(a, json_object_new_string(cat->features[f]));
	return a;
}

struct json_object *fp_report_calibration(const struct fp_calibration *cal)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "valid", json_object_new_boolean(cal && cal->valid));
	json_object_object_add(o, "bias_ns", json_object_new_double(cal ? cal->bias_ns : 0));
	json_object_object_add(o, "pair_ns", json_object_new_double(cal ? cal->pair_ns : 0));
	return o;
}

struct json_object *fp_report_stats(const struct fp_catalog *cat, const struct fp_snapshot *s,
				    const struct fp_calibration *cal, const uint8_t *enabled)
{
	struct json_object *root = json_object_new_object(), *regs = json_object_new_array();
	struct json_object *feats = json_object_new_array(), *sets = json_object_new_array();
	struct json_object *an = json_object_new_object();
	uint64_t *fns = calloc((size_t)cat->nfeatures + 1, sizeof(*fns));
	int r, f, i, k;

	for (r = 0; r < cat->nregions && r < s->nregions; r++) {
		const struct fp_region_fig *g = &s->regions[r];
		struct json_object *o = json_object_new_object(), *h = json_object_new_array();
		struct json_object *fl = json_object_new_array();

		for (f = 0; f < cat->regions[r].nfeatures; f++)
			json_object_array_add(fl, json_object_new_string(cat->regions[r].features[f]));
		json_object_object_add(o, "name", json_object_new_string(cat->regions[r].name));
		json_object_object_add(o, "features", fl);
		json_object_object_add(o, "enabled",
				       json_object_new_boolean(enabled && enabled[r]));
		json_object_object_add(o, "count", u64(g->count));
		json_object_object_add(o, "inclusive_ns", u64((uint64_t)fp_comp_incl(g, cal)));
		json_object_object_add(o, "exclusive_ns", u64((uint64_t)fp_comp_excl(g, cal)));
		json_object_object_add(o, "raw_inclusive_ns", u64(g->incl_ns));
		json_object_object_add(o, "raw_exclusive_ns", u64(g->excl_ns));
		json_object_object_add(o, "min_ns", u64(g->min_ns));
		json_object_object_add(o, "max_ns", u64(g->max_ns));
		json_object_object_add(o, "mean_ns",
				       u64(g->count ? (uint64_t)(fp_comp_incl(g, cal) /
								 (double)g->count)
						    : 0));
		json_object_object_add(o, "nested", u64(g->ndesc));
		json_object_object_add(o, "recursion", u64(g->recursion));
		for (k = 0; k < FP_HIST_BUCKETS; k++) {
			struct json_object *b;

			if (!g->hist[k])
				continue;
			b = json_object_new_object();
			json_object_object_add(b, "ge_ns", u64(1ULL << k));
			json_object_object_add(b, "count", u64(g->hist[k]));
			json_object_array_add(h, b);
		}
		json_object_object_add(o, "histogram", h);
		json_object_array_add(regs, o);
	}
	if (fns)
		fp_feature_times(s, cat->nfeatures, fns);
	for (f = 0; f < cat->nfeatures; f++) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "name", json_object_new_string(cat->features[f]));
		json_object_object_add(o, "ns", u64(fns ? fns[f] : 0));
		json_object_array_add(feats, o);
	}
	for (i = 0; i < s->nfsets; i++) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "features", feature_list(cat, s->fsets[i].mask));
		json_object_object_add(o, "ns", u64(s->fsets[i].ns));
		json_object_object_add(o, "events", u64(s->fsets[i].events));
		json_object_array_add(sets, o);
	}
	for (k = 0; k < FP_AN_MAX; k++)
		json_object_object_add(an, fp_anomaly_names[k], u64(s->anomalies[k]));
	json_object_object_add(root, "regions", regs);
	json_object_object_add(root, "features", feats);
	json_object_object_add(root, "feature_sets", sets);
	json_object_object_add(root, "anomalies", an);
	json_object_object_add(root, "compensation", fp_report_calibration(cal));
	free(fns);
	return root;
}
