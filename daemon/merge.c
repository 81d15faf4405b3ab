// SPDX-License-Identifier: GPL-2.0
/* Summing figures of several processes (daemon/merge.h), for executable groups. */
#include <json-c/json.h>
#include <string.h>

#include "merge.h"

static int is_number(struct json_object *o)
{
	return json_object_is_type(o, json_type_int) || json_object_is_type(o, json_type_double);
}

/* Keys of the sampling report that describe the rate, not a count: one value, not summed
 * (shares and standard errors are figured again from the sums: fp_sample_refigure). */
static int same_in_all(const char *k)
{
	return !strcmp(k, "hz") || !strcmp(k, "period_ns") || !strcmp(k, "tls_offset") ||
	       !strcmp(k, "duration_ns");
}

/* The sampling report (it has a clock): its feature sets are not summed (the union of
 * names would be needed; per process in "processes"). */
static int in_sampling(struct json_object *o)
{
	return json_object_object_get_ex(o, "clock", NULL);
}

/* Arrays of objects with "name" (regions, features) merge by name; others are kept. */
static void merge_named(struct json_object *dst, struct json_object *src)
{
	size_t i, j, n = json_object_array_length(src);

	for (i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(src, i), *nm, *d = NULL;

		if (!json_object_is_type(e, json_type_object) ||
		    !json_object_object_get_ex(e, "name", &nm))
			return;
		for (j = 0; j < json_object_array_length(dst) && !d; j++) {
			struct json_object *x = json_object_array_get_idx(dst, j), *xn;

			if (json_object_object_get_ex(x, "name", &xn) &&
			    !strcmp(json_object_get_string(xn), json_object_get_string(nm)))
				d = x;
		}
		if (d) {
			fp_merge_figures(d, e);
		} else {
			struct json_object *copy = NULL;

			json_object_deep_copy(e, &copy, NULL);
			json_object_array_add(dst, copy);
		}
	}
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

void fp_merge_figures(struct json_object *dst, struct json_object *src)
{
	json_object_object_foreach(src, k, v) {
		struct json_object *d;

		if (!strcmp(k, "pid") || !strcmp(k, "comm") || !strcmp(k, "paths") ||
		    !strcmp(k, "processes") || (!strcmp(k, "feature_sets") && in_sampling(dst)))
			continue;
		if (!json_object_object_get_ex(dst, k, &d)) {
			struct json_object *copy = NULL;

			json_object_deep_copy(v, &copy, NULL);
			json_object_object_add(dst, k, copy);
		} else if (is_number(d) && is_number(v)) {
			merge_number(dst, k, d, v);
		} else if (json_object_is_type(d, json_type_object) &&
			   json_object_is_type(v, json_type_object)) {
			fp_merge_figures(d, v);
		} else if (json_object_is_type(d, json_type_array) &&
			   json_object_is_type(v, json_type_array)) {
			merge_named(d, v);
		}
	}
}
