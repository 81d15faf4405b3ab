/* SPDX-License-Identifier: GPL-2.0 */
/* Regions and features of a target, grouped from the probe sites of its objects. */
#ifndef FP_CATALOG_H
#define FP_CATALOG_H

#include "notes.h"

struct json_object;

struct fp_site_ref {
	int obj;	/* index into fp_catalog.objs */
	int site;	/* index into that object's sites */
};

struct fp_region {
	char *name;
	char **features;	/* union of the features named at its begin sites, sorted */
	int nfeatures;
	struct fp_site_ref *sites;
	int nsites;
	int nbegin, nend;
};

struct fp_catalog {
	struct fp_object **objs;	/* borrowed */
	int nobjs;
	struct fp_region *regions;	/* sorted by name */
	int nregions;
	char **features;		/* sorted */
	int nfeatures;
};

/* Groups the featprof sites of objs by region name. Returns NULL with errno set. */
struct fp_catalog *fp_catalog__new(struct fp_object **objs, int nobjs);
void fp_catalog__free(struct fp_catalog *cat);
int fp_catalog__region(const struct fp_catalog *cat, const char *name);
int fp_catalog__feature(const struct fp_catalog *cat, const char *name);
int fp_region__has_feature(const struct fp_region *r, const char *feature);
/* Foreign providers (not featprof) present in the objects, as a JSON array. */
struct json_object *fp_catalog__providers_json(const struct fp_catalog *cat);
/* {"objects":[..],"features":[..],"regions":[..]}, the list reply. */
struct json_object *fp_catalog__to_json(const struct fp_catalog *cat);

#endif
