// SPDX-License-Identifier: GPL-2.0
/* A reply's keys read with a default where one is absent (core.h geti, getd, gets_, geta),
 * and an array's element by its "name" (getn). */
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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

const char *cli_command = "featprof";

void cli_json_stamp(struct json_object *o)
{
	char name[64];

	if (!json_object_is_type(o, json_type_object) ||
	    json_object_object_get_ex(o, "format", NULL))
		return;
	snprintf(name, sizeof(name), "featprof-%s", cli_command);
	json_object_object_add(o, "format", json_object_new_string(name));
	json_object_object_add(o, "format_version", json_object_new_int(FP_CLI_JSON_VERSION));
}

struct json_object *getn(struct json_object *a, const char *name)
{
	size_t k;

	for (k = 0; a && k < json_object_array_length(a); k++)
		if (!strcmp(gets_(json_object_array_get_idx(a, k), "name"), name))
			return json_object_array_get_idx(a, k);
	return NULL;
}
