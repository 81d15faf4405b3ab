// SPDX-License-Identifier: GPL-2.0
/* The region definitions a request carries: --regions FILE's and --function's. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/regdefs.h"
#include "core.h"

int cli_load_defs(struct fp_regdefs *defs, const char *file, const char *cmd)
{
	struct fp_err err = { 0 };

	if (fp_regdefs__load_dir(defs, fp_regdefs__default_dir(), &err) ||
	    (file && fp_regdefs__load_file(defs, file, &err))) {
		fprintf(stderr, "featprof %s: %s\n", cmd, err.msg);
		fp_regdefs__clear(defs);
		return 1;
	}
	return 0;
}

/* cli/core/defs.c: reads --regions FILE (checked here) into {"name", "text"} for a
 * request; NULL after a one-line error. */
static struct json_object *definitions(const char *path)
{
	struct fp_regdefs check = { 0 };
	struct json_object *o;
	struct fp_err err = { 0 };
	char *text;
	size_t len = 0;
	FILE *f;

	/* checked here for a message that names the file; the daemon checks again */
	if (fp_regdefs__load_file(&check, path, &err)) {
		fprintf(stderr, "featprof: %s\n", err.msg);
		return NULL;
	}
	fp_regdefs__clear(&check);
	f = fopen(path, "re");
	text = malloc(FP_REGDEF_MAX_FILE + 1);
	if (!f || !text) {
		fprintf(stderr, "featprof: %s: %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		free(text);
		return NULL;
	}
	len = fread(text, 1, FP_REGDEF_MAX_FILE, f);
	fclose(f);
	o = json_object_new_object();
	json_object_object_add(o, "name", json_object_new_string(path));
	json_object_object_add(o, "text", json_object_new_string_len(text, (int)len));
	free(text);
	return o;
}

int cli_request_defs(const struct cli_opts *o, struct json_object **out)
{
	struct json_object *arr, *file = NULL, *fn;
	struct fp_regdefs check = { 0 };
	struct fp_err err = { 0 };

	*out = NULL;
	if (!o->defs_file && !o->func_text)
		return 0;
	if (o->defs_file && !(file = definitions(o->defs_file)))
		return 1;
	if (o->func_text &&
	    fp_regdefs__parse(&check, o->func_text, strlen(o->func_text), "--function", &err)) {
		fprintf(stderr, "featprof: %s\n", err.msg);
		json_object_put(file);
		return 1;
	}
	fp_regdefs__clear(&check);
	arr = json_object_new_array();
	if (file)
		json_object_array_add(arr, file);
	if (o->func_text) {
		fn = json_object_new_object();
		json_object_object_add(fn, "name", json_object_new_string("--function"));
		json_object_object_add(fn, "text", json_object_new_string(o->func_text));
		json_object_array_add(arr, fn);
	}
	*out = arr;
	return 0;
}
