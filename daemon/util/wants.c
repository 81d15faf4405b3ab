// SPDX-License-Identifier: GPL-2.0
/* What was asked for by name (daemon/util/wants.h): one copy of the lists for targets and
 * executable groups. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/catalog.h"
#include "common/err.h"
#include "common/notes.h"
#include "wants.h"

#define DEFS_KEPT_MAX 64	/* definition texts a group keeps */

static void strv_clear(char ***v, int *n)
{
	int i;

	for (i = 0; i < *n; i++)
		free((*v)[i]);
	free(*v);
	*v = NULL;
	*n = 0;
}

void fp_wants_clear(struct fp_wants *w)
{
	strv_clear(&w->features, &w->nfeatures);
	strv_clear(&w->regions, &w->nregions);
	w->all = false;
	json_object_put(w->defs);
	w->defs = NULL;
}

bool fp_wants_empty(const struct fp_wants *w)
{
	return !w->all && !w->nfeatures && !w->nregions;
}

static int find(char *const *v, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(v[i], name))
			return i;
	return -1;
}

int fp_wants_parse(struct fp_wants *w, struct json_object *req, struct fp_err *e)
{
	struct json_object *v, *x;
	size_t k;
	int i;

	memset(w, 0, sizeof(*w));
	if (json_object_object_get_ex(req, "all", &v)) {
		if (!json_object_is_type(v, json_type_boolean))
			return fp_fail(e, EINVAL, "'all' must be a boolean");
		w->all = json_object_get_boolean(v);
	}
	for (i = 0; i < 2; i++) {
		const char *key = i ? "regions" : "features";
		char ***list = i ? &w->regions : &w->features;
		int *n = i ? &w->nregions : &w->nfeatures;

		if (!json_object_object_get_ex(req, key, &v))
			continue;
		for (k = 0; json_object_is_type(v, json_type_array) &&
			    k < json_object_array_length(v); k++) {
			x = json_object_array_get_idx(v, k);
			if (!json_object_is_type(x, json_type_string))
				break;
			if (find(*list, *n, json_object_get_string(x)) < 0 &&
			    fp_strv_add(list, n, json_object_get_string(x))) {
				fp_wants_clear(w);
				return fp_fail(e, ENOMEM, "out of memory");
			}
		}
		if (!json_object_is_type(v, json_type_array) || k < json_object_array_length(v)) {
			fp_wants_clear(w);
			return fp_fail(e, EINVAL, "'%s' must be an array of strings", key);
		}
	}
	if (fp_wants_empty(w)) {	/* "all": false or empty lists alone */
		return fp_fail(e, EINVAL, "name features, regions, or all");
	}
	return 0;
}

int fp_wants_update(struct fp_wants *w, const struct fp_wants *names, bool on)
{
	int i, j;

	if (names->all && !on) {	/* nothing is asked for any more */
		fp_wants_clear(w);
		return 0;
	}
	if (names->all)
		w->all = true;
	for (i = 0; on && names->defs && i < (int)json_object_array_length(names->defs) &&
		    (!w->defs || json_object_array_length(w->defs) < DEFS_KEPT_MAX); i++) {
		if (!w->defs)
			w->defs = json_object_new_array();
		json_object_array_add(w->defs,
				      json_object_get(json_object_array_get_idx(names->defs, i)));
	}
	for (i = 0; i < 2; i++) {
		char ***list = i ? &w->regions : &w->features;
		int *n = i ? &w->nregions : &w->nfeatures;
		char *const *src = i ? names->regions : names->features;
		int nsrc = i ? names->nregions : names->nfeatures;

		for (j = 0; j < nsrc; j++) {
			int found = find(*list, *n, src[j]);

			if (on && found < 0 && fp_strv_add(list, n, src[j]))
				return -ENOMEM;
			if (!on && found >= 0) {
				free((*list)[found]);
				(*list)[found] = (*list)[--*n];
			}
		}
	}
	return 0;
}

int fp_wants_copy(struct fp_wants *dst, const struct fp_wants *src)
{
	fp_wants_clear(dst);
	dst->all = src->all;
	return fp_wants_update(dst, src, true) ? (fp_wants_clear(dst), -ENOMEM) : 0;
}

/* Parses the definitions d ({name, text} or an array of at most max) into out, all or
 * none. */
static int defs_parse(struct json_object *d, size_t max, struct fp_regdefs *out, struct fp_err *e)
{
	bool arr = json_object_is_type(d, json_type_array);
	size_t i, n = arr ? json_object_array_length(d) : 1;
	int n0 = out->ndefs, ret;

	for (i = 0; i < n; i++) {
		struct json_object *de = arr ? json_object_array_get_idx(d, i) : d, *name, *text;

		if (n > max || !json_object_is_type(de, json_type_object) ||
		    !json_object_object_get_ex(de, "name", &name) ||
		    !json_object_object_get_ex(de, "text", &text) ||
		    !json_object_is_type(name, json_type_string) ||
		    !json_object_is_type(text, json_type_string)) {
			fp_regdefs__truncate(out, n0);
			return fp_fail(e, EINVAL, "'definitions' must be {\"name\": string, "
				       "\"text\": string} or an array of 1-4 of them");
		}
		ret = fp_regdefs__parse(out, json_object_get_string(text),
					(size_t)json_object_get_string_len(text),
					json_object_get_string(name), e);
		if (ret) {
			fp_regdefs__truncate(out, n0);
			return ret;
		}
	}
	return 0;
}

int fp_wants_defs_parse(struct fp_wants *w, struct json_object *req, struct fp_regdefs *out,
			struct fp_err *e)
{
	struct json_object *d, *all;
	size_t i;
	int ret;

	if (!json_object_object_get_ex(req, "definitions", &d))
		return 0;
	ret = defs_parse(d, 4, out, e);
	if (ret)
		return ret;
	if (!w)
		return 0;
	if (!w->defs)
		w->defs = json_object_new_array();
	all = json_object_is_type(d, json_type_array) ? d : NULL;
	for (i = 0; i < (all ? json_object_array_length(all) : 1); i++) {
		struct json_object *de = all ? json_object_array_get_idx(all, i) : d;

		json_object_array_add(w->defs, json_object_get(de));
	}
	return 0;
}

int fp_wants_defs(const struct fp_wants *w, struct fp_regdefs *out, struct fp_err *e)
{
	out->lenient = 1;	/* a member's libraries may not be mapped yet */
	return w->defs ? defs_parse(w->defs, DEFS_KEPT_MAX, out, e) : 0;
}

bool fp_wants_has(const struct fp_wants *w, const char *name, struct json_object *feats)
{
	size_t k, n = json_object_is_type(feats, json_type_array) ? json_object_array_length(feats)
								    : 0;
	int i;

	if (w->all)
		return true;
	for (i = 0; name && i < w->nregions; i++)
		if (!strcmp(w->regions[i], name))
			return true;
	for (k = 0; k < n; k++)
		for (i = 0; i < w->nfeatures; i++)
			if (!strcmp(w->features[i], json_object_get_string(
							    json_object_array_get_idx(feats, k))))
				return true;
	return false;
}

int fp_wants_select(const struct fp_wants *names, const struct fp_catalog *cat, uint8_t *sel,
		    const char **unknown, bool *region,
		    bool (*pending)(const void *ctx, const char *feature), const void *ctx)
{
	int i, r, k;

	memset(sel, names->all, (size_t)cat->nregions);
	for (i = 0; i < 2; i++)
		for (k = 0; k < (i ? names->nregions : names->nfeatures); k++) {
			const char *name = i ? names->regions[k] : names->features[k];

			if (i ? (r = fp_catalog__region(cat, name)) >= 0
			      : fp_catalog__feature(cat, name) >= 0) {
				if (i)
					sel[r] = 1;
				for (r = 0; !i && r < cat->nregions; r++)
					if (fp_region__has_feature(&cat->regions[r], name))
						sel[r] = 1;
				continue;
			}
			if (!i && pending && pending(ctx, name))
				continue;
			*unknown = name;
			*region = i;
			return -ENOENT;
		}
	return 0;
}
