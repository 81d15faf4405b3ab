// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the request parser (common/request.c): client input, so any
 * bytes must give a request or one error, never a crash or a leak; what it accepts is
 * valid UTF-8 with an id in range and a verb; an accepted request's strings have no NUL;
 * fp_utf8_cut never cuts a character in two.
 */
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void no_nul(struct json_object *o)
{
	size_t i;

	if (json_object_is_type(o, json_type_string) &&
	    strlen(json_object_get_string(o)) != (size_t)json_object_get_string_len(o))
		abort();
	if (json_object_is_type(o, json_type_array))
		for (i = 0; i < json_object_array_length(o); i++)
			no_nul(json_object_array_get_idx(o, i));
	if (json_object_is_type(o, json_type_object)) {
		json_object_object_foreach(o, k, v) {
			(void)k;
			no_nul(v);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size ? size : 1), cut[17];
	struct fp_err e = { 0 };
	struct json_object *o, *v;
	long long id;
	int id_ok;

	memcpy(copy, data, size);	/* exact size: ASan sees a read past it */
	o = fp_request_parse(copy, size, &id, &id_ok, &e);
	if (o) {
		if (!fp_utf8_valid(copy, size) || !id_ok || id > FP_MAX_ID || id < -FP_MAX_ID ||
		    !json_object_object_get_ex(o, "verb", &v) ||
		    !json_object_is_type(v, json_type_string))
			abort();
		no_nul(o);
		fp_utf8_cut(cut, sizeof(cut), json_object_get_string(v));
		if (!fp_utf8_valid(cut, strlen(cut)))
			abort();
		json_object_put(o);
	} else if (!e.code || !e.msg[0] || !fp_utf8_valid(e.msg, strlen(e.msg))) {
		abort();
	}
	free(copy);
	return 0;
}
