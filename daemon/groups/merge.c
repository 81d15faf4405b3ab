// SPDX-License-Identifier: GPL-2.0
/*
 * Summing figures of several processes (groups_impl.h fp_merge_figures), for executable
 * groups.
 *
 * A sum is built one process at a time (the group's exited members, its file's target,
 * its live members), so after each step every figure that is not a sum of its parts is
 * figured again from the sums so far: a region's mean from its summed time and count,
 * whether the probe cost dominates from the summed time and uncertainty. Min and max
 * come only from processes that counted an instance (a region that never ran in one
 * has 0 for both), histograms add bucket by bucket, and the calibration the figures were
 * compensated with is the daemon's, one for all (not summed).
 */
#include <json-c/json.h>
#include <string.h>

#include "groups_impl.h"


static int is_number(struct json_object *o)
{
	return json_object_is_type(o, json_type_int) || json_object_is_type(o, json_type_double);
}

/* Keys of the sampling report that describe the rate, not a count, and a histogram
 * bucket's bound: one value, not summed (sampling's shares and standard errors are
 * figured again from the sums: fp_sample_refigure). */
static int same_in_all(const char *k)
{
	return !strcmp(k, "hz") || !strcmp(k, "period_ns") || !strcmp(k, "tls_offset") ||
	       !strcmp(k, "duration_ns") || !strcmp(k, "ge_ns");
}

/* The sampling report (it has a clock): its feature sets are not summed (the union of
 * names would be needed; per process in "processes"). */
static int in_sampling(struct json_object *o)
{
	return json_object_object_get_ex(o, "clock", NULL);
}

/* Keys that describe one process (pid, comm) and its arrays without names (paths,
 * processes): not in a sum. */
static int one_process(struct json_object *dst, const char *k)
{
	return !strcmp(k, "pid") || !strcmp(k, "comm") || !strcmp(k, "paths") ||
	       !strcmp(k, "processes") || (!strcmp(k, "feature_sets") && in_sampling(dst));
}

/* The element of arr whose key k has the value of e's (NULL: none). */
static struct json_object *find_by(struct json_object *arr, const char *k, struct json_object *e)
{
	struct json_object *v, *x, *xv;
	size_t j;

	if (!json_object_object_get_ex(e, k, &v))
		return NULL;
	for (j = 0; j < json_object_array_length(arr); j++) {
		x = json_object_array_get_idx(arr, j);
		if (json_object_object_get_ex(x, k, &xv) &&
		    json_object_equal(xv, v))
			return x;
	}
	return NULL;
}

/*
 * Arrays of objects with "name" (regions, features) merge by name, histogram buckets by
 * their bound ("ge_ns"), feature sets by their features (the same list: each process
 * lists a set's features in its catalog's order, the same for one program); an element
 * without a match is added. Others are kept.
 */
static int by_bound(const void *a, const void *b)
{
	struct json_object *const *x = a, *const *y = b, *xv = NULL, *yv = NULL;
	int64_t p, q;

	json_object_object_get_ex(*x, "ge_ns", &xv);
	json_object_object_get_ex(*y, "ge_ns", &yv);
	p = json_object_get_int64(xv);
	q = json_object_get_int64(yv);
	return p < q ? -1 : p > q;
}

static void merge_array(struct json_object *dst, struct json_object *src)
{
	size_t i, n = json_object_array_length(src);
	int buckets = 0;

	for (i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(src, i), *d, *copy = NULL;
		const char *k = "name";

		if (!json_object_is_type(e, json_type_object))
			return;
		if (!json_object_object_get_ex(e, k, NULL))
			k = json_object_object_get_ex(e, "ge_ns", NULL) ? "ge_ns" : "features";
		if (!json_object_object_get_ex(e, k, NULL))
			return;
		buckets |= !strcmp(k, "ge_ns");
		d = find_by(dst, k, e);
		if (d) {
			fp_merge_figures(d, e);
			continue;
		}
		json_object_deep_copy(e, &copy, NULL);
		json_object_array_add(dst, copy);
	}
	if (buckets)	/* in the order of their bounds, as each process lists them */
		json_object_array_sort(dst, by_bound);
}

static void merge_number(struct json_object *dst, const char *k, struct json_object *d,
			 struct json_object *v)
{
	double a = json_object_get_double(d), b = json_object_get_double(v), r;

	r = !strncmp(k, "min", 3) ? (a < b ? a : b)
	    : !strncmp(k, "max", 3) || !strcmp(k, "elapsed_ns") || same_in_all(k)
		      ? (a > b ? a : b)
		      : a + b;
	if (json_object_is_type(d, json_type_int) && json_object_is_type(v, json_type_int))
		json_object_object_add(dst, k, json_object_new_int64((int64_t)r));
	else
		json_object_object_add(dst, k, json_object_new_double(r));
}

static double num(struct json_object *o, const char *k, int *has)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, k, &v) || !is_number(v)) {
		*has = 0;
		return 0;
	}
	return json_object_get_double(v);
}

/* As daemon/report/report.c states it: the time is not above its uncertainty. */
static void refigure_dominates(struct json_object *o, const char *flag, const char *time,
			       const char *unc)
{
	int has = json_object_object_get_ex(o, flag, NULL);
	double t = num(o, time, &has), u = num(o, unc, &has);

	if (has)
		json_object_object_add(o, flag, json_object_new_boolean(u > 0 && t <= u));
}

/* The figures of o that are not sums, figured again from its sums. */
static void refigure(struct json_object *o)
{
	int has = json_object_object_get_ex(o, "mean_ns", NULL);
	double count = num(o, "count", &has), incl = num(o, "inclusive_ns", &has);

	if (has)
		json_object_object_add(o, "mean_ns", json_object_new_int64(
						 count > 0 ? (int64_t)(incl / count + 0.5) : 0));
	refigure_dominates(o, "probe_cost_dominates", json_object_object_get_ex(o, "ns", NULL)
						      ? "ns" : "inclusive_ns", "uncertainty_ns");
	refigure_dominates(o, "exclusive_probe_cost_dominates", "exclusive_ns",
			   "exclusive_uncertainty_ns");
}

void fp_merge_figures(struct json_object *dst, struct json_object *src)
{
	int hd = 1, hs = 1;
	double dcount = num(dst, "count", &hd), scount = num(src, "count", &hs);
	/* min and max of instances: only where src counted one; all of src's where dst
	 * had none */
	int skip_extremes = hd && hs && scount == 0, take_extremes = hd && hs && dcount == 0;

	json_object_object_foreach(src, k, v) {
		struct json_object *d, *copy = NULL;
		int extreme = !strcmp(k, "min_ns") || !strcmp(k, "max_ns");

		if (one_process(dst, k) || (extreme && skip_extremes))
			continue;
		/* the daemon's calibration, the same in every process: the first one's */
		if (!strcmp(k, "compensation") && json_object_object_get_ex(dst, k, NULL))
			continue;
		if (!json_object_object_get_ex(dst, k, &d) || (extreme && take_extremes)) {
			json_object_deep_copy(v, &copy, NULL);
			json_object_object_add(dst, k, copy);
		} else if (is_number(d) && is_number(v)) {
			merge_number(dst, k, d, v);
		} else if (json_object_is_type(d, json_type_object) &&
			   json_object_is_type(v, json_type_object)) {
			fp_merge_figures(d, v);
		} else if (json_object_is_type(d, json_type_array) &&
			   json_object_is_type(v, json_type_array)) {
			merge_array(d, v);
		} else if (!strcmp(k, "enabled") && json_object_get_boolean(v)) {
			json_object_object_add(dst, k, json_object_new_boolean(1));
		}
	}
	refigure(dst);
}
