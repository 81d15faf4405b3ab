// SPDX-License-Identifier: GPL-2.0
/* Folded stacks (flamegraph.pl, speedscope, Pyroscope) of a stats reply's region paths. */
#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli/core/core.h"
#include "writers.h"

/* Region names are C identifiers; nothing in them needs escaping for ';' or ' '. */
int cli_write_folded(FILE *f, struct json_object *st, const char *key)
{
	struct json_object *paths, *p, *names;
	size_t i, k;

	if (!strcmp(key, "sampled_ns")) {	/* the sampler's stacks (featprof sample) */
		struct json_object *sm;

		if (!json_object_object_get_ex(st, "sampling", &sm)) {
			fprintf(stderr, "featprof export: --value sampled: the target was not "
				"sampled (featprof sample PID)\n");
			return -EIO;	/* said */
		}
		st = sm;
	}
	if (!json_object_object_get_ex(st, "paths", &paths))
		return -EINVAL;
	for (i = 0; i < json_object_array_length(paths); i++) {
		int64_t v;

		p = json_object_array_get_idx(paths, i);
		v = geti(p, key);
		if (v <= 0 || !json_object_object_get_ex(p, "path", &names))
			continue;
		for (k = 0; k < json_object_array_length(names); k++)
			fprintf(f, "%s%s", k ? ";" : "",
				json_object_get_string(json_object_array_get_idx(names, k)));
		fprintf(f, " %lld\n", (long long)v);
	}
	return 0;
}
