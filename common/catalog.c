// SPDX-License-Identifier: GPL-2.0
/*
 * A region is identified by its name across all objects of a process: a region begun in
 * the executable and ended in a shared library is one region. Its features are the
 * union of those named at its begin sites.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "demangle.h"
#include "symbols.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_region(const void *a, const void *b)
{
	return strcmp(((const struct fp_region *)a)->name, ((const struct fp_region *)b)->name);
}

/* Adds s to a sorted-later set; 0 or -ENOMEM. */
static int set_add(char ***set, int *n, const char *s)
{
	int i;

	for (i = 0; i < *n; i++)
		if (!strcmp((*set)[i], s))
			return 0;
	return fp_strv_add(set, n, s);
}

void fp_catalog__free(struct fp_catalog *cat)
{
	int i, j;

	if (!cat)
		return;
	for (i = 0; i < cat->nregions; i++) {
		struct fp_region *r = &cat->regions[i];

		free(r->name);
		for (j = 0; j < r->nfeatures; j++)
			free(r->features[j]);
		free(r->features);
		free(r->sites);
		free(r->origin);
	}
	for (i = 0; i < cat->nfeatures; i++)
		free(cat->features[i]);
	free(cat->features);
	free(cat->regions);
	free(cat);
}

int fp_catalog__region(const struct fp_catalog *cat, const char *name)
{
	int i;

	for (i = 0; i < cat->nregions; i++)
		if (!strcmp(cat->regions[i].name, name))
			return i;
	return -1;
}

int fp_catalog__feature(const struct fp_catalog *cat, const char *name)
{
	int i;

	for (i = 0; i < cat->nfeatures; i++)
		if (!strcmp(cat->features[i], name))
			return i;
	return -1;
}

int fp_region__has_feature(const struct fp_region *r, const char *feature)
{
	int i;

	for (i = 0; i < r->nfeatures; i++)
		if (!strcmp(r->features[i], feature))
			return 1;
	return 0;
}

static struct fp_region *find_or_add(struct fp_catalog *cat, const char *name, int nests,
				     const char *origin)
{
	struct fp_region *a;
	int i = fp_catalog__region(cat, name);

	if (i >= 0)
		return &cat->regions[i];
	a = realloc(cat->regions, sizeof(*a) * (size_t)(cat->nregions + 1));
	if (!a)
		return NULL;
	cat->regions = a;
	memset(&a[cat->nregions], 0, sizeof(*a));
	a[cat->nregions].name = strdup(name);
	a[cat->nregions].nests = nests;
	a[cat->nregions].origin = origin ? strdup(origin) : NULL;
	if (!a[cat->nregions].name || (origin && !a[cat->nregions].origin)) {
		free(a[cat->nregions].name);
		free(a[cat->nregions].origin);
		return NULL;
	}
	return &a[cat->nregions++];
}

/* Adds the site (o, s; func: of o's functions) to r as kind, once. 1 added, 0 already
 * there, -ENOMEM. */
static int add_ref(struct fp_region *r, int o, int s, int kind, int func)
{
	struct fp_site_ref *refs;
	int i;

	for (i = 0; i < r->nsites; i++)
		if (r->sites[i].obj == o && r->sites[i].site == s && r->sites[i].kind == kind &&
		    r->sites[i].func == func)
			return 0;
	refs = realloc(r->sites, sizeof(*refs) * (size_t)(r->nsites + 1));
	if (!refs)
		return -ENOMEM;
	r->sites = refs;
	refs[r->nsites++] = (struct fp_site_ref){ o, s, kind, func };
	if (kind == FP_KIND_BEGIN)
		r->nbegin++;
	else
		r->nend++;
	return 1;
}

static int add_features(struct fp_catalog *cat, struct fp_region *r, char *const *f, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (set_add(&r->features, &r->nfeatures, f[i]) ||
		    set_add(&cat->features, &cat->nfeatures, f[i]))
			return -ENOMEM;
	return 0;
}

static int probe_in(const struct fp_site *site, const struct fp_probe_name *p, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(site->provider, p[i].provider) && !strcmp(site->name, p[i].probe))
			return 1;
	return 0;
}

struct fp_symbols *fp_object__symbols(struct fp_object *o)
{
	struct fp_err e = { 0 };
	int fd = o->fd, own = -1;

	if (o->syms_read)
		return o->syms;
	o->syms_read = 1;
	if (fd < 0 && (fd = own = open(o->host_path, O_RDONLY | O_CLOEXEC)) < 0) {
		fp_fail(&e, errno, "%s: %s", o->path, strerror(errno));
		o->syms_err = strdup(e.msg);
		return NULL;
	}
	if (fp_symbols__read(fd, o->path, o->root ? o->root : "", &o->syms, &e))
		o->syms_err = strdup(e.msg);
	if (own >= 0)
		close(own);
	return o->syms;
}

static const char *base_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Does an object glob take o: its file's basename (liblzma.so.5.4.1) or its soname
 * (liblzma.so.5, what users know a library by)? The soname needs the symbols read. */
static int object_match(struct fp_object *o, const char *glob)
{
	struct fp_symbols *sy;

	if (!glob || !fnmatch(glob, base_of(o->path), 0))
		return 1;
	sy = fp_object__symbols(o);
	return sy && sy->soname && !fnmatch(glob, sy->soname, 0);
}

static int func_match(struct fp_object *o, const struct fp_probe_name *p,
		      const struct fp_func *f)
{
	char buf[1024];

	/* the symbol, or the name people read (demangled, a clone as its function) */
	return object_match(o, p->provider) &&
	       (!fnmatch(p->probe, f->name, 0) ||
		!fnmatch(p->probe, fp_demangle(f->name, buf, sizeof(buf)), 0));
}

struct func_hit {
	int obj;
	const struct fp_func *f;
};

/* The measurable functions of objs that d's patterns match (only pattern i when i >= 0),
 * at most max of them into hits (may be NULL); how many there are in all. */
static int func_hits(struct fp_object *const *objs, int nobjs, const struct fp_regdef *d,
		     int i, struct func_hit *hits, int max)
{
	int o, k, p, n = 0;

	for (o = 0; o < nobjs; o++) {
		struct fp_symbols *sy;

		for (p = 0; p < d->nfuncs; p++)	/* read the symbols only where needed */
			if ((i < 0 || p == i) && object_match(objs[o], d->funcs[p].provider))
				break;
		if (p == d->nfuncs || !(sy = fp_object__symbols(objs[o])))
			continue;
		for (k = 0; k < sy->n; k++) {
			if (fp_func__unmeasurable(sy, &sy->f[k]))
				continue;
			for (p = 0; p < d->nfuncs; p++)
				if ((i < 0 || p == i) &&
				    func_match(objs[o], &d->funcs[p], &sy->f[k]))
					break;
			if (p == d->nfuncs)
				continue;
			if (hits && n < max)
				hits[n] = (struct func_hit){ o, &sy->f[k] };
			n++;
		}
	}
	return n;
}

/* The index of f's entry among o's function sites (added once), or -ENOMEM. */
static int func_site(struct fp_object *o, const struct fp_func *f)
{
	struct fp_site *a;
	int i;

	for (i = 0; i < o->nfuncs; i++)
		if (o->funcs[i].loc_off == f->off && !strcmp(o->funcs[i].name, f->name))
			return i;
	a = realloc(o->funcs, sizeof(*a) * (size_t)(o->nfuncs + 1));
	if (!a)
		return -ENOMEM;
	o->funcs = a;
	memset(&a[o->nfuncs], 0, sizeof(*a));
	a[o->nfuncs].provider = strdup("function");
	a[o->nfuncs].name = strdup(f->name);
	a[o->nfuncs].pc = f->addr;
	a[o->nfuncs].loc_off = f->off;
	a[o->nfuncs].stepped = f->stepped;
	if (!a[o->nfuncs].provider || !a[o->nfuncs].name) {
		free(a[o->nfuncs].provider);
		free(a[o->nfuncs].name);
		return -ENOMEM;
	}
	return o->nfuncs++;
}

/* r counts its functions' calls from now on: its return probes, if any, dropped (a
 * region of functions from C and C++ objects is counted in all of them). */
static void calls_only(struct fp_region *r)
{
	int i, k = 0;

	r->calls_only = 1;
	for (i = 0; i < r->nsites; i++)
		if (r->sites[i].kind == FP_KIND_BEGIN)
			r->sites[k++] = r->sites[i];
	r->nsites = k;
	r->nend = 0;
}

/*
 * A function definition: its region (d->name), or one region per function matched
 * ("*": named after the function, "OBJECT:function" where another object's function of
 * that name is matched too, or a marked region has that name), each from the functions'
 * entries to their returns. A region named d->name that is not a function region keeps
 * its sites alone.
 */
static int add_func_def(struct fp_catalog *cat, const struct fp_regdef *d, int *added)
{
	struct func_hit *hits = calloc(FP_FUNC_REGIONS_MAX, sizeof(*hits));
	int n, i, j, ret = 0;

	if (!hits)
		return -ENOMEM;
	n = func_hits(cat->objs, cat->nobjs, d, -1, hits, FP_FUNC_REGIONS_MAX);
	n = n < FP_FUNC_REGIONS_MAX ? n : FP_FUNC_REGIONS_MAX;
	for (i = 0; i < n && !ret; i++) {
		char name[320];
		struct fp_region *r;
		int other = 0, s, b;

		for (j = 0; j < n && !other && !strcmp(d->name, "*"); j++)
			other = hits[j].obj != hits[i].obj &&
				!strcmp(hits[j].f->name, hits[i].f->name);
		/* a marked region of the function's name keeps it: OBJECT:function then */
		if (!other && !strcmp(d->name, "*") &&
		    (j = fp_catalog__region(cat, hits[i].f->name)) >= 0)
			other = !cat->regions[j].function;
		if (other)
			snprintf(name, sizeof(name), "%s:%s", base_of(cat->objs[hits[i].obj]->path),
				 hits[i].f->name);
		else
			snprintf(name, sizeof(name), "%s",
				 strcmp(d->name, "*") ? d->name : hits[i].f->name);
		r = find_or_add(cat, name, 1, d->origin);
		if (!r) {
			ret = -ENOMEM;
			break;
		}
		if (!r->function && r->nsites)
			continue;	/* a marked region's name */
		r->function = 1;
		s = func_site(cat->objs[hits[i].obj], hits[i].f);
		if (s < 0) {
			ret = s;
			break;
		}
		if (fp_symbols__calls_only(fp_object__symbols(cat->objs[hits[i].obj])))
			calls_only(r);
		b = add_ref(r, hits[i].obj, s, FP_KIND_BEGIN, 1);
		ret = b < 0 || r->calls_only ? b : add_ref(r, hits[i].obj, s, FP_KIND_END, 1);
		if (ret >= 0) {
			*added += b + ret;
			ret = add_features(cat, r, d->features, d->nfeatures);
		}
	}
	free(hits);
	return ret;
}

/* Sites of a definition: with begin and end both present, its region and refs. */
static int add_def(struct fp_catalog *cat, const struct fp_regdef *d, int *added)
{
	int o, s, nb = 0, ne = 0, ret;
	struct fp_region *r;

	if (d->nfuncs)
		return add_func_def(cat, d, added);

	for (o = 0; o < cat->nobjs; o++)
		for (s = 0; s < cat->objs[o]->nsites; s++) {
			nb += probe_in(&cat->objs[o]->sites[s], d->begin, d->nbegin);
			ne += probe_in(&cat->objs[o]->sites[s], d->end, d->nend);
		}
	if (!nb || !ne)
		return 0;
	r = find_or_add(cat, d->name, d->nests, d->origin);
	if (!r)
		return -ENOMEM;
	for (o = 0; o < cat->nobjs; o++)
		for (s = 0; s < cat->objs[o]->nsites; s++) {
			const struct fp_site *site = &cat->objs[o]->sites[s];

			ret = 0;
			if (probe_in(site, d->begin, d->nbegin))
				ret = add_ref(r, o, s, FP_KIND_BEGIN, 0);
			if (ret >= 0 && probe_in(site, d->end, d->nend)) {
				int e = add_ref(r, o, s, FP_KIND_END, 0);

				ret = e < 0 ? e : ret + e;
			}
			if (ret < 0)
				return ret;
			*added += ret;
		}
	return add_features(cat, r, d->features, d->nfeatures);
}

const struct fp_probe_name *fp_regdef__missing(struct fp_object *const *objs, int nobjs,
					       const struct fp_regdef *d)
{
	int side, i, o, s, found;

	for (i = 0; i < d->nfuncs; i++) {
		int k, mapped = !d->funcs[i].provider;

		/* an object not mapped yet (a library dlopen'ed later) is waited for */
		for (k = 0; k < nobjs && !mapped; k++)
			mapped = object_match(objs[k], d->funcs[i].provider);
		if (mapped && !func_hits(objs, nobjs, d, i, NULL, 0))
			return &d->funcs[i];
	}

	for (side = 0; side < 2; side++) {
		const struct fp_probe_name *p = side ? d->end : d->begin;
		int n = side ? d->nend : d->nbegin;

		for (i = 0; i < n; i++) {
			found = 0;
			for (o = 0; o < nobjs && !found; o++)
				for (s = 0; s < objs[o]->nsites && !found; s++)
					found = probe_in(&objs[o]->sites[s], &p[i], 1);
			if (!found)
				return &p[i];
		}
	}
	return NULL;
}

int fp_regdef__check(struct fp_object *const *objs, int nobjs, const struct fp_regdef *d,
		     const char *what, struct fp_err *e)
{
	const struct fp_probe_name *p = fp_regdef__missing(objs, nobjs, d);
	int n;

	if (p && d->nfuncs)
		return fp_fail(e, ENOENT, "%s: %s has no function matching %s%s%s that can be "
			       "measured (featprof list --functions shows which can)", d->origin,
			       what, p->provider ? p->provider : "", p->provider ? ":" : "",
			       p->probe);
	if (p)
		return fp_fail(e, ENOENT, "%s: %s has no probe %s:%s", d->origin, what,
			       p->provider, p->probe);
	if (d->nfuncs && (n = func_hits(objs, nobjs, d, -1, NULL, 0)) > FP_FUNC_REGIONS_MAX)
		return fp_fail(e, ENOENT, "%s: %d functions of %s match; at most %d regions from "
			       "one definition", d->origin, n, what, FP_FUNC_REGIONS_MAX);
	return 0;
}

int fp_catalog__extend(struct fp_catalog *cat, struct fp_object **objs, int nobjs,
		       const struct fp_regdefs *defs)
{
	int o, s, i, ret, added = 0;

	cat->objs = objs;
	cat->nobjs = nobjs;
	for (o = 0; o < nobjs; o++) {
		for (s = 0; s < objs[o]->nsites; s++) {
			const struct fp_site *site = &objs[o]->sites[s];
			struct fp_region *r;

			if (!site->kind)
				continue;
			r = find_or_add(cat, site->region, 1, NULL);
			if (!r)
				return -ENOMEM;
			ret = add_ref(r, o, s, site->kind, 0);
			if (ret < 0)
				return ret;
			added += ret;
			if (ret && site->kind == FP_KIND_BEGIN &&
			    add_features(cat, r, site->features, site->nfeatures))
				return -ENOMEM;
		}
	}
	for (i = 0; defs && i < defs->ndefs; i++) {
		ret = add_def(cat, &defs->defs[i], &added);
		if (ret)
			return ret;
	}
	for (i = 0; i < cat->nregions; i++)
		if (cat->regions[i].nfeatures)
			qsort(cat->regions[i].features, (size_t)cat->regions[i].nfeatures,
			      sizeof(char *), cmp_str);
	return added;
}

struct fp_catalog *fp_catalog__new(struct fp_object **objs, int nobjs,
				   const struct fp_regdefs *defs)
{
	struct fp_catalog *cat = calloc(1, sizeof(*cat));

	if (!cat)
		return NULL;
	if (fp_catalog__extend(cat, objs, nobjs, defs) < 0) {
		fp_catalog__free(cat);
		errno = ENOMEM;
		return NULL;
	}
	/* a new catalog has no indices in use yet: names in order */
	if (cat->nregions)
		qsort(cat->regions, (size_t)cat->nregions, sizeof(*cat->regions), cmp_region);
	if (cat->nfeatures)
		qsort(cat->features, (size_t)cat->nfeatures, sizeof(char *), cmp_str);
	return cat;
}

struct json_object *fp_catalog__providers_json(const struct fp_catalog *cat)
{
	struct json_object *arr = json_object_new_array();
	char **prov = NULL;
	int n = 0, o, s, i;

	for (o = 0; o < cat->nobjs; o++)
		for (s = 0; s < cat->objs[o]->nsites; s++)
			if (strcmp(cat->objs[o]->sites[s].provider, "featprof"))
				set_add(&prov, &n, cat->objs[o]->sites[s].provider);
	if (n)
		qsort(prov, (size_t)n, sizeof(char *), cmp_str);
	for (i = 0; i < n; i++) {
		json_object_array_add(arr, json_object_new_string(prov[i]));
		free(prov[i]);
	}
	free(prov);
	return arr;
}

static struct json_object *strings_json(char **s, int n)
{
	struct json_object *arr = json_object_new_array();
	int i;

	for (i = 0; i < n; i++)
		json_object_array_add(arr, json_object_new_string(s[i]));
	return arr;
}

/* One object of the catalog: its path, counts and, built with FEATPROF_INPROCESS, its
 * regions' gates. */
static struct json_object *object_json(const struct fp_object *ob)
{
	struct json_object *jo = json_object_new_object();
	int i;

	json_object_object_add(jo, "path", json_object_new_string(ob->path));
	if (ob->nfuncs)
		json_object_object_add(jo, "symbols",
				       json_object_new_string(fp_symbols__source_name(
					       ob->syms ? ob->syms->source : 0)));
	json_object_object_add(jo, "stapsdt_sites", json_object_new_int(ob->nsites));
	json_object_object_add(jo, "featprof_sites", json_object_new_int(ob->nfeatprof));
	if (ob->ip_version) {
		struct json_object *g = json_object_new_array();

		for (i = 0; i < ob->nsites; i++) {
			struct json_object *e;
			size_t rl = 0;

			if (!fp_site_is_gate(&ob->sites[i], &rl) || !rl)
				continue;
			e = json_object_new_object();
			json_object_object_add(e, "region", json_object_new_string_len(
							  ob->sites[i].name, (int)rl));
			json_object_object_add(e, "offset", json_object_new_int64(
							  (int64_t)ob->sites[i].loc_off));
			json_object_object_add(e, "semaphore_offset", json_object_new_int64(
							  (int64_t)ob->sites[i].sem_off));
			json_object_array_add(g, e);
		}
		json_object_object_add(jo, "inprocess_abi", json_object_new_int(
							   (int32_t)ob->ip_version));
		json_object_object_add(jo, "gates", g);
	}
	return jo;
}

struct json_object *fp_catalog__to_json(const struct fp_catalog *cat)
{
	struct json_object *root = json_object_new_object(), *objs = json_object_new_array();
	struct json_object *feats = json_object_new_array(), *regs = json_object_new_array();
	int o, i, j;

	for (o = 0; o < cat->nobjs; o++)	/* a file of the process with nothing used: not */
		if (cat->objs[o]->nsites || cat->objs[o]->nfuncs)
			json_object_array_add(objs, object_json(cat->objs[o]));
	for (i = 0; i < cat->nfeatures; i++) {
		struct json_object *jf = json_object_new_object(), *rl = json_object_new_array();

		for (j = 0; j < cat->nregions; j++)
			if (fp_region__has_feature(&cat->regions[j], cat->features[i]))
				json_object_array_add(rl,
						      json_object_new_string(cat->regions[j].name));
		json_object_object_add(jf, "name", json_object_new_string(cat->features[i]));
		json_object_object_add(jf, "regions", rl);
		json_object_array_add(feats, jf);
	}
	for (i = 0; i < cat->nregions; i++) {
		const struct fp_region *r = &cat->regions[i];
		struct json_object *jr = json_object_new_object(), *sites = json_object_new_array();

		json_object_object_add(jr, "name", json_object_new_string(r->name));
		json_object_object_add(jr, "features", strings_json(r->features, r->nfeatures));
		if (r->origin)
			json_object_object_add(jr, "definition", json_object_new_string(r->origin));
		json_object_object_add(jr, "nests", json_object_new_boolean(r->nests));
		if (r->function)
			json_object_object_add(jr, "measured", json_object_new_string(
						       r->calls_only ? "calls" : "function"));
		for (j = 0; j < r->nsites; j++) {
			const struct fp_object *ob = cat->objs[r->sites[j].obj];
			const struct fp_site *s = fp_ref_site(cat->objs, &r->sites[j]);
			struct json_object *js = json_object_new_object();

			int begin = r->sites[j].kind == FP_KIND_BEGIN;

			json_object_object_add(js, "kind",
					       json_object_new_string(begin ? "begin" : "end"));
			json_object_object_add(js, "provider", json_object_new_string(s->provider));
			json_object_object_add(js, "probe", json_object_new_string(s->name));
			if (s->file) {
				json_object_object_add(js, "file", json_object_new_string(s->file));
				json_object_object_add(js, "line", json_object_new_int64(s->line));
			}
			if (s->scope)	/* an FP_SCOPE's: its end at the scope's exits */
				json_object_object_add(js, "scope", json_object_new_boolean(1));
			json_object_object_add(js, "object", json_object_new_string(ob->path));
			json_object_object_add(js, "offset", json_object_new_int64(
						   (int64_t)s->loc_off));
			if (s->kind)
				json_object_object_add(js, "shape", json_object_new_string(
							   s->opt_off ? "shielded-nop5" : "nop1"));
			if (s->sem_off)
				json_object_object_add(js, "semaphore_offset",
						       json_object_new_int64((int64_t)s->sem_off));
			if (s->opt_off)
				json_object_object_add(js, "optimizable_offset",
						       json_object_new_int64((int64_t)s->opt_off));
			json_object_array_add(sites, js);
		}
		json_object_object_add(jr, "sites", sites);
		json_object_array_add(regs, jr);
	}
	json_object_object_add(root, "objects", objs);
	json_object_object_add(root, "features", feats);
	json_object_object_add(root, "regions", regs);
	json_object_object_add(root, "other_providers", fp_catalog__providers_json(cat));
	return root;
}
