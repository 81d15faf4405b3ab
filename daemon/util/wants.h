/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a client asked for by name: all regions, or features and regions named. Kept per
 * target and per executable group, so that regions appearing later (a dlopen, a new
 * process of the group, definitions sent afterwards) join what was asked for.
 */
#ifndef FP_WANTS_H
#define FP_WANTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

struct json_object;
struct fp_catalog;

struct fp_wants {
	bool all;
	char **features, **regions;
	int nfeatures, nregions;
	/* the client's region definitions sent with them ("definitions": an array of
	 * {name, text}, held; NULL: none), which an executable group gives each member */
	struct json_object *defs;
};

/*
 * Reads "all" (a boolean), "features" and "regions" (arrays of strings) of a request
 * into w (duplicates once); something must be asked for (all true, or a name). 0, or
 * -errno with e filled (w empty).
 */
int fp_wants_parse(struct fp_wants *w, struct json_object *req, struct fp_err *e);
/* Adds what names asks for to w (on), or removes it (off; "all" off clears w). 0, or
 * -ENOMEM (w keeps what it had, and the names added so far). */
int fp_wants_update(struct fp_wants *w, const struct fp_wants *names, bool on);
/* Replaces dst with a copy of src. 0, or -ENOMEM (dst empty). */
int fp_wants_copy(struct fp_wants *dst, const struct fp_wants *src);
bool fp_wants_empty(const struct fp_wants *w);
/* Whether w asks for region name of features feats (a JSON array of strings, or NULL). */
bool fp_wants_has(const struct fp_wants *w, const char *name, struct json_object *feats);
void fp_wants_clear(struct fp_wants *w);
/*
 * Marks in sel (a byte per region of cat) the regions names selects: every one (all), the
 * regions named and those of the features named. 0, or -ENOENT for a name cat does not
 * have: *unknown is that name, *region whether it was a region's (else a feature's). A
 * feature for which pending(ctx, name) is true is no error: its regions are to come
 * (pending may be NULL).
 */
int fp_wants_select(const struct fp_wants *names, const struct fp_catalog *cat, uint8_t *sel,
		    const char **unknown, bool *region,
		    bool (*pending)(const void *ctx, const char *feature), const void *ctx);

struct fp_regdefs;
/*
 * A request's "definitions" ({name, text} or an array of 1-4 of them) parsed into out
 * (0; absent: nothing added), or -errno with e filled (nothing added); the same definitions kept
 * in w->defs when w is not NULL.
 */
int fp_wants_defs_parse(struct fp_wants *w, struct json_object *req, struct fp_regdefs *out,
			struct fp_err *e);
/* w's kept definitions parsed into out (for a member of a group, lenient: they apply
 * where they match): 0 or -errno with e filled. */
int fp_wants_defs(const struct fp_wants *w, struct fp_regdefs *out, struct fp_err *e);

#endif
