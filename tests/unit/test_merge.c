// SPDX-License-Identifier: GPL-2.0
/* Summing processes' figures (daemon/groups/merge.c): the sums, and every figure derived from
 * them figured again (mean, min and max, histogram, whether the probe cost dominates). */
#include <json-c/json.h>
#include <stdlib.h>

#include "groups/groups_impl.h"
#include "test.h"

static struct json_object *parse(const char *s)
{
	struct json_object *o = json_tokener_parse(s);

	if (!o) {
		fprintf(stderr, "bad JSON in the test: %s\n", s);
		exit(2);
	}
	return o;
}

static struct json_object *region(struct json_object *st, const char *name)
{
	struct json_object *regs, *r, *n;
	size_t i;

	json_object_object_get_ex(st, "regions", &regs);
	for (i = 0; regs && i < json_object_array_length(regs); i++) {
		r = json_object_array_get_idx(regs, i);
		if (json_object_object_get_ex(r, "name", &n) &&
		    !strcmp(json_object_get_string(n), name))
			return r;
	}
	return NULL;
}

static int64_t geti(struct json_object *o, const char *k)
{
	struct json_object *v;

	return o && json_object_object_get_ex(o, k, &v) ? json_object_get_int64(v) : -1;
}

static int getb(struct json_object *o, const char *k)
{
	struct json_object *v;

	return o && json_object_object_get_ex(o, k, &v) ? json_object_get_boolean(v) : -1;
}

/* A process's stats: region a (count, inclusive ns, min, max, two histogram buckets),
 * region b that never ran, the daemon's calibration. */
#define PROC(pid, cnt, incl, unc, mn, mx, b1, n1, b2, n2)                                  \
	"{\"pid\": " #pid ", \"comm\": \"p\", \"base_ns\": 100,"                            \
	"\"compensation\": {\"valid\": true, \"bias_ns\": 800.5, \"pair_ns\": 1900},"       \
	"\"regions\": [{\"name\": \"a\", \"enabled\": true, \"count\": " #cnt ","             \
	"\"inclusive_ns\": " #incl ", \"exclusive_ns\": " #incl ","                          \
	"\"inclusive_uncertainty_ns\": " #unc ", \"uncertainty_ns\": " #unc ","              \
	"\"exclusive_uncertainty_ns\": " #unc ", \"probe_cost_dominates\": false,"           \
	"\"exclusive_probe_cost_dominates\": false,"                                         \
	"\"min_ns\": " #mn ", \"max_ns\": " #mx ", \"mean_ns\": 0, \"histogram\": ["          \
	"{\"ge_ns\": " #b1 ", \"count\": " #n1 "}, {\"ge_ns\": " #b2 ", \"count\": " #n2 "}]}," \
	"{\"name\": \"b\", \"enabled\": false, \"count\": 0, \"inclusive_ns\": 0,"            \
	"\"min_ns\": 0, \"max_ns\": 0, \"mean_ns\": 0, \"histogram\": []}],"                   \
	"\"features\": [{\"name\": \"F\", \"ns\": " #incl ", \"uncertainty_ns\": " #unc ","   \
	"\"probe_cost_dominates\": false}],"                                                 \
	"\"feature_sets\": [{\"features\": [\"F\"], \"ns\": " #incl ", \"events\": " #cnt "}]}"

int main(void)
{
	/* process 1: 10 instances of 1 ms; process 2: 30 of 3 ms; process 3: a never ran
	 * (its min and max 0 must not count) */
	struct json_object *sum = json_object_new_object();
	struct json_object *p1 = parse(PROC(1, 10, 10000000, 50, 900000, 1100000, 524288, 6,
					    1048576, 4));
	struct json_object *p2 = parse(PROC(2, 30, 90000000, 150, 2900000, 3100000, 2097152,
					    30, 1048576, 0));
	struct json_object *p3 = parse(PROC(3, 0, 0, 0, 0, 0, 1, 0, 2, 0));
	struct json_object *a, *b, *h, *comp, *f, *tiny, *v;

	fp_merge_figures(sum, p3);
	fp_merge_figures(sum, p1);
	fp_merge_figures(sum, p2);
	a = region(sum, "a");
	b = region(sum, "b");
	CHECK_INT(geti(a, "count"), 40);
	CHECK_INT(geti(a, "inclusive_ns"), 100000000);
	CHECK_INT(geti(a, "mean_ns"), 2500000);	/* 100 ms / 40, not 1 ms + 3 ms */
	CHECK_INT(geti(a, "min_ns"), 900000);	/* not process 3's 0 */
	CHECK_INT(geti(a, "max_ns"), 3100000);
	CHECK_INT(geti(a, "inclusive_uncertainty_ns"), 200);
	CHECK_INT(getb(a, "enabled"), 1);
	CHECK_INT(geti(b, "count"), 0);
	CHECK_INT(geti(b, "min_ns"), 0);
	CHECK_INT(geti(b, "mean_ns"), 0);
	CHECK_INT(geti(sum, "base_ns"), 300);
	CHECK(!json_object_object_get_ex(sum, "pid", NULL), "a sum has no pid");

	/* buckets by bound, in order: 1, 2 (process 3), 524288, 1048576, 2097152 */
	json_object_object_get_ex(a, "histogram", &h);
	CHECK_INT(json_object_array_length(h), 5);
	CHECK_INT(geti(json_object_array_get_idx(h, 2), "ge_ns"), 524288);
	CHECK_INT(geti(json_object_array_get_idx(h, 2), "count"), 6);
	CHECK_INT(geti(json_object_array_get_idx(h, 3), "ge_ns"), 1048576);
	CHECK_INT(geti(json_object_array_get_idx(h, 3), "count"), 4);
	CHECK_INT(geti(json_object_array_get_idx(h, 4), "count"), 30);

	/* the calibration: the daemon's, not a sum of three */
	json_object_object_get_ex(sum, "compensation", &comp);
	CHECK(json_object_object_get_ex(comp, "bias_ns", &v) &&
		      json_object_get_double(v) == 800.5,
	      "calibration kept as it is: %s", json_object_to_json_string(comp));
	CHECK_INT(geti(comp, "pair_ns"), 1900);

	/* feature time summed; the probe cost dominates where the sum is not above its
	 * summed uncertainty */
	json_object_object_get_ex(sum, "features", &f);
	CHECK_INT(geti(json_object_array_get_idx(f, 0), "ns"), 100000000);
	CHECK_INT(getb(json_object_array_get_idx(f, 0), "probe_cost_dominates"), 0);
	/* feature sets summed by their features, whichever process listed them first */
	json_object_object_get_ex(sum, "feature_sets", &f);
	CHECK_INT(json_object_array_length(f), 1);
	CHECK_INT(geti(json_object_array_get_idx(f, 0), "ns"), 100000000);
	CHECK_INT(geti(json_object_array_get_idx(f, 0), "events"), 40);
	tiny = parse(PROC(4, 1, 100, 300, 100, 100, 64, 1, 128, 0));
	json_object_put(sum);
	sum = json_object_new_object();
	fp_merge_figures(sum, tiny);
	fp_merge_figures(sum, tiny);
	a = region(sum, "a");
	CHECK_INT(geti(a, "mean_ns"), 100);
	CHECK_INT(getb(a, "probe_cost_dominates"), 1);	/* 200 ns against 600 */
	CHECK_INT(getb(a, "exclusive_probe_cost_dominates"), 1);
	json_object_object_get_ex(sum, "features", &f);
	CHECK_INT(getb(json_object_array_get_idx(f, 0), "probe_cost_dominates"), 1);

	json_object_put(sum);
	json_object_put(tiny);
	json_object_put(p1);
	json_object_put(p2);
	json_object_put(p3);
	TEST_DONE("test_merge");
}
