/* SPDX-License-Identifier: GPL-2.0 */
/* Regions and features of a target, grouped from the probe sites of its objects. */
#ifndef FP_CATALOG_H
#define FP_CATALOG_H

#include "notes.h"
#include "regdefs.h"

struct json_object;

struct fp_site_ref {
	int obj;	/* index into fp_catalog.objs */
	int site;	/* index into that object's sites */
	int kind;	/* FP_KIND_BEGIN or FP_KIND_END: in this region (a definition's role) */
	int func;	/* site indexes the object's funcs: a function's entry (BEGIN) or
			 * its return (END, a return probe at the entry) */
};

/* The site a reference names. */
static inline const struct fp_site *fp_ref_site(struct fp_object *const *objs,
						const struct fp_site_ref *ref)
{
	const struct fp_object *o = objs[ref->obj];

	return ref->func ? &o->funcs[ref->site] : &o->sites[ref->site];
}

struct fp_region {
	char *name;
	char **features;	/* union of the features named at its begin sites, sorted */
	int nfeatures;
	struct fp_site_ref *sites;
	int nsites;
	int nbegin, nend;
	int nests;		/* may be open twice on a thread (featprof regions: yes) */
	char *origin;		/* "FILE:LINE" of its definition; NULL: featprof notes */
	int function;		/* from a function's entry to its return */
	/* a function region whose calls are counted at their entries, not timed
	 * (fp_symbols__calls_only: no return probes) */
	int calls_only;
};

struct fp_catalog {
	struct fp_object **objs;	/* borrowed */
	int nobjs;
	struct fp_region *regions;	/* sorted by name */
	int nregions;
	char **features;
	int nfeatures;
};

/*
 * Groups the featprof sites of objs by region name, and the sites of defs' probes
 * (defs may be NULL) into their regions: a definition becomes a region where at least
 * one begin and one end probe are present. Regions and features sorted by name.
 * Returns NULL with errno set.
 */
struct fp_catalog *fp_catalog__new(struct fp_object **objs, int nobjs,
				   const struct fp_regdefs *defs);
/*
 * The same over objs (the catalog's objects first, at the same indices, then new ones)
 * and defs: existing regions
 * and features keep their indices, new ones are appended. Returns the number of sites
 * added, or -ENOMEM (the catalog stays usable: it may hold part of the additions).
 */
int fp_catalog__extend(struct fp_catalog *cat, struct fp_object **objs, int nobjs,
		       const struct fp_regdefs *defs);
void fp_catalog__free(struct fp_catalog *cat);
/* The first probe of d that none of objs has, or NULL when all are there; for a
 * function definition the first pattern that matches no measurable function. */
const struct fp_probe_name *fp_regdef__missing(struct fp_object *const *objs, int nobjs,
					       const struct fp_regdef *d);
/* Whether d fits what ("pid 12", a path): 0, or -ENOENT with one line in e on what it
 * lacks (or its functions too many). */
int fp_regdef__check(struct fp_object *const *objs, int nobjs, const struct fp_regdef *d,
		     const char *what, struct fp_err *e);
/* The object's functions (read on first use), or NULL with o->syms_err set. */
struct fp_symbols *fp_object__symbols(struct fp_object *o);
/* At most this many functions become regions by one definition. */
#define FP_FUNC_REGIONS_MAX 1024
int fp_catalog__region(const struct fp_catalog *cat, const char *name);
int fp_catalog__feature(const struct fp_catalog *cat, const char *name);
int fp_region__has_feature(const struct fp_region *r, const char *feature);
/* Foreign providers (not featprof) present in the objects, as a JSON array. */
struct json_object *fp_catalog__providers_json(const struct fp_catalog *cat);
/* {"objects":[..],"features":[..],"regions":[..]}, the list reply. */
struct json_object *fp_catalog__to_json(const struct fp_catalog *cat);

#endif
