// SPDX-License-Identifier: GPL-2.0
/*
 * What a client asks for by name (daemon/util/wants.c): a request's "all", "features" and
 * "regions" read (duplicates once; nothing asked, or the wrong types: one line, nothing
 * kept); updates on and off; the regions selected in a catalog made here (a region by
 * name, every region of a feature, all); an unknown name reported as a region's or a
 * feature's, or let pass where its regions are still to come; a request's definitions.
 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "common/catalog.h"
#include "common/regdefs.h"
#include "test.h"
#include "util/wants.h"

static struct json_object *req(const char *text)
{
	return json_tokener_parse(text);
}

static int parse(struct fp_wants *w, const char *text, struct fp_err *e)
{
	struct json_object *r = req(text);
	int ret;

	memset(e, 0, sizeof(*e));
	ret = fp_wants_parse(w, r, e);
	json_object_put(r);
	return ret;
}

static struct fp_region reg(const char *name, const char *f0, const char *f1)
{
	struct fp_region r = { .name = (char *)name, .nfeatures = f1 ? 2 : 1 };

	r.features = calloc(2, sizeof(char *));
	r.features[0] = (char *)f0;
	r.features[1] = (char *)f1;
	return r;
}

static bool later(const void *ctx, const char *feature)
{
	return !strcmp(feature, ctx);
}

int main(void)
{
	struct fp_region regs[3] = { reg("aes", "Encryption", NULL),
				     reg("aes_zip", "Compression", "Encryption"),
				     reg("zip", "Compression", NULL) };
	char *features[2] = { "Compression", "Encryption" };
	struct fp_catalog cat = { .regions = regs, .nregions = 3, .features = features,
				  .nfeatures = 2 };
	struct fp_wants w = { 0 }, more = { 0 };
	struct fp_regdefs defs = { 0 };
	struct json_object *r;
	const char *unknown = NULL;
	struct fp_err e;
	uint8_t sel[3];
	bool isreg = false;
	int i;

	CHECK_INT(parse(&w, "{\"features\": [\"Encryption\", \"Encryption\"], \"regions\": "
			    "[\"zip\"]}", &e), 0);
	CHECK(w.nfeatures == 1 && w.nregions == 1 && !w.all, "duplicates once: %d %d",
	      w.nfeatures, w.nregions);
	memset(sel, 0, sizeof(sel));
	CHECK_INT(fp_wants_select(&w, &cat, sel, &unknown, &isreg, NULL, NULL), 0);
	CHECK(sel[0] && sel[1] && sel[2], "Encryption's two regions and zip: %d %d %d", sel[0],
	      sel[1], sel[2]);
	CHECK(fp_wants_has(&w, "zip", NULL), "zip by name");
	r = req("[\"Encryption\"]");
	CHECK(fp_wants_has(&w, "other", r), "a region of a feature asked for");
	json_object_put(r);

	/* off: Encryption no more; zip stays */
	CHECK_INT(parse(&more, "{\"features\": [\"Encryption\"]}", &e), 0);
	CHECK_INT(fp_wants_update(&w, &more, false), 0);
	memset(sel, 0, sizeof(sel));
	CHECK_INT(fp_wants_select(&w, &cat, sel, &unknown, &isreg, NULL, NULL), 0);
	CHECK(!sel[0] && !sel[1] && sel[2], "zip alone: %d %d %d", sel[0], sel[1], sel[2]);
	fp_wants_clear(&more);

	/* unknown names: a region's, a feature's, a feature still to come */
	CHECK_INT(parse(&more, "{\"regions\": [\"nope\"]}", &e), 0);
	CHECK(fp_wants_select(&more, &cat, sel, &unknown, &isreg, NULL, NULL) == -ENOENT &&
	      !strcmp(unknown, "nope") && isreg, "an unknown region");
	fp_wants_clear(&more);
	CHECK_INT(parse(&more, "{\"features\": [\"Later\"]}", &e), 0);
	CHECK(fp_wants_select(&more, &cat, sel, &unknown, &isreg, NULL, NULL) == -ENOENT &&
	      !strcmp(unknown, "Later") && !isreg, "an unknown feature");
	CHECK_INT(fp_wants_select(&more, &cat, sel, &unknown, &isreg, later, "Later"), 0);
	fp_wants_clear(&more);

	/* all, then all off: nothing */
	CHECK_INT(parse(&more, "{\"all\": true}", &e), 0);
	CHECK_INT(fp_wants_update(&w, &more, true), 0);
	memset(sel, 0, sizeof(sel));
	CHECK_INT(fp_wants_select(&w, &cat, sel, &unknown, &isreg, NULL, NULL), 0);
	CHECK(sel[0] && sel[1] && sel[2], "all");
	CHECK_INT(fp_wants_update(&w, &more, false), 0);
	CHECK(fp_wants_empty(&w), "all off: nothing asked");
	fp_wants_clear(&more);

	/* bad requests: one line, nothing kept */
	CHECK(parse(&more, "{}", &e) == -EINVAL && strstr(e.msg, "name features, regions"),
	      "nothing asked: '%s'", e.msg);
	CHECK(parse(&more, "{\"all\": 1}", &e) == -EINVAL && strstr(e.msg, "boolean"),
	      "all not a boolean: '%s'", e.msg);
	CHECK(parse(&more, "{\"regions\": [1]}", &e) == -EINVAL &&
	      strstr(e.msg, "array of strings"), "a region not a string: '%s'", e.msg);
	CHECK(fp_wants_empty(&more), "nothing kept");

	/* definitions sent with a request, kept for a group's members */
	r = req("{\"regions\": [\"q\"], \"definitions\": {\"name\": \"d\", \"text\": "
		"\"region q begin p:a end p:b\\n\"}}");
	CHECK_INT(fp_wants_parse(&more, r, &e), 0);
	CHECK_INT(fp_wants_defs_parse(&more, r, &defs, &e), 0);
	CHECK(defs.ndefs == 1 && !strcmp(defs.defs[0].name, "q") && more.defs,
	      "the request's definition, kept");
	fp_regdefs__clear(&defs);
	CHECK(!fp_wants_defs(&more, &defs, &e) && defs.ndefs == 1 && defs.lenient,
	      "given again to a member, lenient");
	fp_regdefs__clear(&defs);
	json_object_put(r);
	r = req("{\"definitions\": 5}");
	CHECK(fp_wants_defs_parse(NULL, r, &defs, &e) < 0 && !defs.ndefs, "bad definitions");
	json_object_put(r);

	fp_wants_clear(&more);
	fp_wants_clear(&w);
	for (i = 0; i < 3; i++)
		free(regs[i].features);
	TEST_DONE("test_wants");
}
