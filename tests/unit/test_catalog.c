// SPDX-License-Identifier: GPL-2.0
/*
 * The catalog (common/catalog.c) of objects made here, site by site, with no ELF file:
 * sites grouped into regions by name across objects, a region's features the union of
 * those its begin sites name (sorted), an interaction region's features, regions and
 * features sorted by name; other providers' probes paired into regions by definitions
 * (begin and end both present, else no region; several probes a side); extend keeps every
 * index and appends; fp_regdef__missing names the first probe no object has; the list
 * reply's JSON.
 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "common/catalog.h"
#include "test.h"

static struct fp_object *object(const char *path)
{
	struct fp_object *o = calloc(1, sizeof(*o));

	o->path = strdup(path);
	o->host_path = strdup(path);
	o->fd = -1;
	return o;
}

/* A featprof site (kind FP_KIND_*) of region with features f[0..nf), or, kind 0, another
 * provider's probe "provider:name". */
static void site(struct fp_object *o, int kind, const char *region, const char *provider,
		 const char *name, const char *const *f, int nf)
{
	struct fp_site *s;
	int i;

	o->sites = realloc(o->sites, sizeof(*o->sites) * (size_t)(o->nsites + 1));
	s = &o->sites[o->nsites++];
	memset(s, 0, sizeof(*s));
	s->provider = strdup(provider);
	s->name = strdup(name);
	s->args = strdup("");
	s->kind = kind;
	s->pc = s->loc_off = 0x1000 + 0x10 * (uint64_t)o->nsites;
	if (!kind)
		return;
	o->nfeatprof++;
	s->region = strdup(region);
	s->file = strdup("x.c");
	s->line = (uint32_t)o->nsites;
	s->features = calloc((size_t)nf + 1, sizeof(char *));
	for (i = 0; i < nf; i++)
		s->features[i] = strdup(f[i]);
	s->nfeatures = nf;
}

static const char *const comp[] = { "Compression" }, *const enc[] = { "Encryption" };
static const char *const both[] = { "Encryption", "Compression" };

static const struct fp_region *region(const struct fp_catalog *cat, const char *name)
{
	int i = fp_catalog__region(cat, name);

	return i < 0 ? NULL : &cat->regions[i];
}

int main(void)
{
	struct fp_object *objs[3] = { object("/bin/prog"), object("/lib/libz.so"), NULL };
	struct fp_regdefs defs = { 0 };
	struct fp_catalog *cat;
	const struct fp_region *r;
	struct json_object *j;
	struct fp_err e = { 0 };
	const char *text = "region deflate begin zlib:deflate__start end zlib:deflate__done,"
			   "zlib:deflate__error features Zlib\n"
			   "region absent begin zlib:a end zlib:b\n";
	int n;

	site(objs[0], FP_KIND_BEGIN, "zip", "featprof", "zip__begin", comp, 1);
	site(objs[0], FP_KIND_END, "zip", "featprof", "zip__end", NULL, 0);
	site(objs[1], FP_KIND_BEGIN, "zip", "featprof", "zip__begin", enc, 1);	/* union */
	site(objs[1], FP_KIND_END, "zip", "featprof", "zip__end", NULL, 0);
	site(objs[0], FP_KIND_BEGIN, "aes_zip", "featprof", "aes_zip__begin", both, 2);
	site(objs[0], FP_KIND_END, "aes_zip", "featprof", "aes_zip__end", NULL, 0);
	site(objs[1], 0, NULL, "zlib", "deflate__start", NULL, 0);
	site(objs[1], 0, NULL, "zlib", "deflate__done", NULL, 0);
	site(objs[1], 0, NULL, "zlib", "deflate__error", NULL, 0);
	CHECK(!fp_regdefs__parse(&defs, text, strlen(text), "t", &e) && defs.ndefs == 2,
	      "the definitions: %s", e.msg);
	if (defs.ndefs != 2)
		TEST_DONE("test_catalog");
	cat = fp_catalog__new(objs, 2, &defs);
	/* "absent" has neither probe: no region */
	CHECK(cat && cat->nregions == 3, "the catalog's three regions: %d",
	      cat ? cat->nregions : -1);
	if (!cat || cat->nregions != 3)
		TEST_DONE("test_catalog");
	CHECK_STR(cat->regions[0].name, "aes_zip");	/* sorted by name */
	CHECK_STR(cat->regions[1].name, "deflate");
	CHECK_STR(cat->regions[2].name, "zip");
	r = region(cat, "zip");
	CHECK(r && r->nsites == 4 && r->nbegin == 2 && r->nend == 2, "zip's four sites");
	CHECK(r && r->nfeatures == 2 && !strcmp(r->features[0], "Compression") &&
	      !strcmp(r->features[1], "Encryption"), "zip's features: the union, sorted");
	r = region(cat, "aes_zip");
	CHECK(r && fp_region__has_feature(r, "Encryption") &&
	      fp_region__has_feature(r, "Compression") && !fp_region__has_feature(r, "Zlib"),
	      "an interaction region has both features");
	r = region(cat, "deflate");
	CHECK(r && r->nbegin == 1 && r->nend == 2 && r->origin && !strcmp(r->origin, "t:1"),
	      "a definition's region: one begin, two ends, its origin");
	CHECK_INT(cat->nfeatures, 3);
	CHECK_STR(cat->features[0], "Compression");
	CHECK_INT(fp_catalog__feature(cat, "Zlib"), 2);
	CHECK_INT(fp_catalog__region(cat, "nothing"), -1);
	CHECK(fp_regdef__missing(objs, 2, &defs.defs[0]) == NULL, "deflate's probes all there");
	CHECK(fp_regdef__missing(objs, 2, &defs.defs[1]) &&
	      !strcmp(fp_regdef__missing(objs, 2, &defs.defs[1])->probe, "a"),
	      "absent's first missing probe");
	CHECK(fp_regdef__check(objs, 2, &defs.defs[1], "pid 1", &e) == -ENOENT &&
	      strstr(e.msg, "zlib:a"), "check says what is missing: '%s'", e.msg);

	/* a library mapped later: the old indices stay, the new region is appended */
	objs[2] = object("/lib/libnew.so");
	site(objs[2], FP_KIND_BEGIN, "new", "featprof", "new__begin", enc, 1);
	site(objs[2], FP_KIND_END, "new", "featprof", "new__end", NULL, 0);
	site(objs[2], FP_KIND_BEGIN, "zip", "featprof", "zip__begin", comp, 1);
	n = fp_catalog__extend(cat, objs, 3, &defs);
	CHECK_INT(n, 3);	/* three sites added */
	CHECK_INT(cat->nregions, 4);
	CHECK_STR(cat->regions[2].name, "zip");
	CHECK_STR(cat->regions[3].name, "new");
	CHECK_INT(cat->regions[2].nsites, 5);
	CHECK_INT(fp_catalog__extend(cat, objs, 3, &defs), 0);	/* nothing new: nothing */

	j = fp_catalog__to_json(cat);
	CHECK(j && json_object_array_length(json_object_object_get(j, "regions")) == 4 &&
	      json_object_array_length(json_object_object_get(j, "objects")) == 3,
	      "the list reply: %s", j ? json_object_to_json_string(j) : "(none)");
	json_object_put(j);
	fp_catalog__free(cat);
	fp_regdefs__clear(&defs);
	for (n = 0; n < 3; n++)
		fp_object__free(objs[n]);
	TEST_DONE("test_catalog");
}
