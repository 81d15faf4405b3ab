// SPDX-License-Identifier: GPL-2.0
/* A reply's keys read with a default where one is absent (core.h geti, getd, gets_, geta). */
#include <json-c/json.h>
#include <stdint.h>

#include "core.h"

int64_t geti(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_int64(v) : 0;
}

double getd(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_double(v) : 0;
}

const char *gets_(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_string(v) : "";
}

struct json_object *geta(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_array)
		       ? v
		       : NULL;
}
