// SPDX-License-Identifier: GPL-2.0
/*
 * The requests' plain arguments (daemon/serve/serve_impl.h, "args.c"): each checked, a
 * bad one one line in e.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "common/err.h"
#include "common/protocol.h"
#include "sample/sample.h"
#include "serve_impl.h"

/* An integer argument in [lo, hi], def when absent. */
int fp_verbs_arg_int(struct json_object *req, const char *key, int64_t lo, int64_t hi, int64_t def,
		     int64_t *out, struct fp_err *e)
{
	struct json_object *v;

	*out = def;
	if (!json_object_object_get_ex(req, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_int) || (*out = json_object_get_int64(v)) < lo ||
	    *out > hi) {
		return fp_fail(e, EINVAL, "'%s' must be an integer, %lld to %lld", key,
			       (long long)lo, (long long)hi);
	}
	return 0;
}

/* A boolean argument, def when absent. */
int fp_verbs_arg_bool(struct json_object *req, const char *key, bool def, bool *out,
		      struct fp_err *e)
{
	struct json_object *v;

	*out = def;
	if (!json_object_object_get_ex(req, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_boolean))
		return fp_fail(e, EINVAL, "'%s' must be true or false", key);
	*out = json_object_get_boolean(v);
	return 0;
}

/* "exe": an absolute path. */
int fp_verbs_arg_exe(struct json_object *req, const char **path, struct fp_err *e)
{
	struct json_object *v;

	if (!json_object_object_get_ex(req, "exe", &v) ||
	    !json_object_is_type(v, json_type_string) || json_object_get_string(v)[0] != '/' ||
	    json_object_get_string_len(v) > 4000) {
		return fp_fail(e, EINVAL, "'exe' must be an absolute path");
	}
	*path = json_object_get_string(v);
	return 0;
}

/* The sample verbs' hz, on and remote. */
int fp_verbs_arg_sample(struct json_object *req, int *hz, bool *on, bool *remote, struct fp_err *e)
{
	int64_t v = FP_DEFAULT_HZ;
	int st;

	st = fp_verbs_arg_bool(req, "remote", false, remote, e);
	if (!st)
		st = fp_verbs_arg_int(req, "hz", FP_MIN_HZ, FP_MAX_HZ, FP_DEFAULT_HZ, &v, e);
	if (!st)
		st = fp_verbs_arg_bool(req, "on", true, on, e);
	*hz = (int)v;
	return st;
}

/* sample's stacks (default false) and unwind ("fp" or "dwarf", default "dwarf"): how each
 * sample's call stack is taken, FP_UNWIND_*. */
int fp_verbs_arg_unwind(struct json_object *req, int *unwind, struct fp_err *e)
{
	struct json_object *v;
	int st;
	const char *u;
	bool stacks;

	st = fp_verbs_arg_bool(req, "stacks", false, &stacks, e);
	*unwind = FP_UNWIND_NONE;
	if (st || !stacks)
		return st;
	if (!json_object_object_get_ex(req, "unwind", &v)) {
		*unwind = FP_UNWIND_DWARF;
		return 0;
	}
	u = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
	if (strcmp(u, "fp") && strcmp(u, "dwarf"))
		return fp_fail(e, EINVAL, "'unwind' must be \"fp\" or \"dwarf\"");
	*unwind = !strcmp(u, "fp") ? FP_UNWIND_FP : FP_UNWIND_DWARF;
	return 0;
}
