// SPDX-License-Identifier: GPL-2.0
/* featprof list PID|PATH: read the probe catalog locally, no daemon needed. */
#include <errno.h>
#include <fnmatch.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/catalog.h"
#include "cli/core/core.h"
#include "common/demangle.h"
#include "cli/writers/writers.h"
#include "commands_impl.h"
#include "common/regdefs.h"
#include "common/strays.h"
#include "common/symbols.h"

/*
 * Where an FP_SCOPE's end is: at its scope's exits, not at its note's line (in C that is
 * FP_SCOPE_DEFINE's, the cleanup function's): "exits of f.c:22", the lines of the
 * region's FP_SCOPE begins in the same file, or "scope exits" where there are none.
 */
static bool scope_begin_in(const struct fp_site *b, const char *file)
{
	return b->kind == FP_KIND_BEGIN && b->scope && b->file && !strcmp(b->file, file);
}

static void scope_exits(const struct fp_catalog *cat, const struct fp_region *r,
			const struct fp_site *end, char *loc, size_t len)
{
	const char *base = strrchr(end->file, '/');
	size_t n = (size_t)snprintf(loc, len, "exits of %s:", base ? base + 1 : end->file);
	int j, found = 0;

	for (j = 0; j < r->nsites && n < len; j++) {
		const struct fp_site *b = fp_ref_site(cat->objs, &r->sites[j]);
		int k;

		if (!scope_begin_in(b, end->file))
			continue;
		for (k = 0; k < j; k++)	/* a line once (a template's copies share it) */
			if (scope_begin_in(fp_ref_site(cat->objs, &r->sites[k]), end->file) &&
			    fp_ref_site(cat->objs, &r->sites[k])->line == b->line)
				break;
		if (k == j)
			n += (size_t)snprintf(loc + n, len - n, "%s%u", found++ ? "," : "",
					      b->line);
	}
	if (!found)
		snprintf(loc, len, "scope exits");
}

static void print_human(const struct fp_catalog *cat, const char *what)
{
	int i, j, o;

	int n = 0;

	for (o = 0; o < cat->nobjs; o++)
		n += cat->objs[o]->nsites || cat->objs[o]->nfuncs;
	printf("%s: %d object%s with probes or measured functions\n", what, n,
	       n == 1 ? "" : "s");
	for (o = 0; o < cat->nobjs; o++) {
		const struct fp_object *ob = cat->objs[o];

		if (!ob->nsites && !ob->nfuncs)
			continue;
		printf("  %s (", ob->path);
		if (ob->nsites)
			printf("%d featprof site%s, %d stapsdt notes%s%s", ob->nfeatprof,
			       ob->nfeatprof == 1 ? "" : "s", ob->nsites,
			       ob->ip_version ? "; built to time itself in-process" : "",
			       ob->nfuncs ? "; " : "");
		if (ob->nfuncs)
			printf("%d function%s measured, symbols from %s", ob->nfuncs,
			       ob->nfuncs == 1 ? "" : "s",
			       fp_symbols__source_name(ob->syms ? ob->syms->source : 0));
		printf(")\n");
	}
	printf("\nFeatures (%d):\n", cat->nfeatures);
	for (i = 0; i < cat->nfeatures; i++) {
		const char *sep = "";

		printf("  %-20s regions: ", cat->features[i]);
		for (j = 0; j < cat->nregions; j++)
			if (fp_region__has_feature(&cat->regions[j], cat->features[i])) {
				printf("%s%s", sep, cat->regions[j].name);
				sep = ", ";
			}
		printf("\n");
	}
	printf("\nRegions (%d):\n", cat->nregions);
	for (i = 0; i < cat->nregions; i++) {
		const struct fp_region *r = &cat->regions[i];

		printf("  %s  [", r->name);
		for (j = 0; j < r->nfeatures; j++)
			printf("%s%s", j ? "," : "", r->features[j]);
		printf("]%s", r->nfeatures > 1 ? "  (interaction)" : "");
		if (r->origin)
			printf("  (defined at %s)", r->origin);
		printf("\n");
		for (j = 0; j < r->nsites; j++) {
			const struct fp_object *ob = cat->objs[r->sites[j].obj];
			const struct fp_site *s = fp_ref_site(cat->objs, &r->sites[j]);
			char loc[512];

			if (s->file && s->scope && s->kind == FP_KIND_END) {
				scope_exits(cat, r, s, loc, sizeof(loc));
			} else if (s->file) {
				const char *base = strrchr(s->file, '/');

				snprintf(loc, sizeof(loc), "%s:%u", base ? base + 1 : s->file,
					 s->line);
			} else {
				snprintf(loc, sizeof(loc), "%s:%s", s->provider, s->name);
			}
			printf("    %-6s %-28s %s+0x%llx%s%s\n",
			       r->sites[j].func ? (r->sites[j].kind == FP_KIND_BEGIN ? "entry"
										    : "return")
			       : r->sites[j].kind == FP_KIND_BEGIN ? "begin" : "end", loc, ob->path,
			       (unsigned long long)s->loc_off,
			       s->kind && !s->opt_off ? " (nop1)" : "",
			       s->sem_off ? " (semaphore)" : "");
		}
	}
}

/* An object's line of list --functions: where its symbols came from. */
static void print_object(const struct fp_object *ob, const struct fp_symbols *sy)
{
	printf("%s  symbols: %s%s%s%s\n", ob->path, fp_symbols__source_name(sy ? sy->source : 0),
	       sy && sy->debug_file ? " " : "", sy && sy->debug_file ? sy->debug_file : "",
	       !sy ? " (unreadable)"
	       : sy->source == FP_SYM_DYNSYM
		       ? " (stripped: exported functions only; a debug package or an "
			 "unstripped build shows the others)"
	       : sy->source == FP_SYM_NONE ? " (no symbols: nothing to measure)"
					   : "");
	if (fp_symbols__calls_only(sy))
		printf("  %s\n", fp_symbols__calls_only(sy));
}

/* A function of list --functions --json (why: why it cannot be measured, NULL: it can;
 * calls: why its calls are counted, not timed, NULL: it is timed). */
static struct json_object *func_json(const struct fp_func *f, const char *why,
				     const char *calls)
{
	struct json_object *e = json_object_new_object();
	char buf[1024];
	const char *name = fp_demangle(f->name, buf, sizeof(buf));

	json_object_object_add(e, "name", json_object_new_string(name));
	if (name != f->name)	/* mangled, or a clone's */
		json_object_object_add(e, "symbol", json_object_new_string(f->name));
	json_object_object_add(e, "address", json_object_new_int64((int64_t)f->addr));
	json_object_object_add(e, "size", json_object_new_int64((int64_t)f->size));
	json_object_object_add(e, "offset", json_object_new_int64((int64_t)f->off));
	json_object_object_add(e, "global", json_object_new_boolean(f->global));
	/* the first instruction: a push (the kernel may emulate it) or one it single-steps
	 * (a costlier probe) */
	json_object_object_add(e, "entry", json_object_new_string(f->stepped ? "stepped"
									     : "push"));
	json_object_object_add(e, "measurable", json_object_new_boolean(!why));
	if (why)
		json_object_object_add(e, "why", json_object_new_string(why));
	else
		json_object_object_add(e, "measured", json_object_new_string(calls ? "calls"
										   : "timed"));
	if (!why && calls)
		json_object_object_add(e, "calls_only", json_object_new_string(calls));
	return e;
}

/*
 * featprof list PID|PATH --functions [[OBJECT:]PATTERN]: the functions of each object
 * that function regions can measure, where their symbols came from; with a pattern only
 * those it matches, each unmeasurable one with the reason.
 */
static int list_functions(struct fp_object **objs, int nobjs, const char *pattern,
			  int json, const char *what)
{
	const char *pat = pattern, *colon = pattern ? strchr(pattern, ':') : NULL;
	struct json_object *root = json_object_new_object(), *ja = json_object_new_array();
	char objpat[256] = "";
	int o, k, shown = 0, measurable = 0;

	if (colon && colon[1] != ':') {	/* OBJECT:SYMBOL, as in definitions */
		snprintf(objpat, sizeof(objpat), "%.*s", (int)(colon - pattern), pattern);
		pat = colon + 1;
	}
	for (o = 0; o < nobjs; o++) {
		struct fp_object *ob = objs[o];
		const char *base = strrchr(ob->path, '/') ? strrchr(ob->path, '/') + 1 : ob->path;
		struct json_object *jo, *jf;
		struct fp_symbols *sy;

		sy = fp_object__symbols(ob);
		if (*objpat && fnmatch(objpat, base, 0) &&
		    !(sy && sy->soname && !fnmatch(objpat, sy->soname, 0)))
			continue;
		jo = json_object_new_object();
		jf = json_object_new_array();
		json_object_object_add(jo, "path", json_object_new_string(ob->path));
		json_object_object_add(jo, "symbols", json_object_new_string(
					       fp_symbols__source_name(sy ? sy->source : 0)));
		if (sy && sy->debug_file)
			json_object_object_add(jo, "debug_file",
					       json_object_new_string(sy->debug_file));
		if (!sy)
			json_object_object_add(jo, "error", json_object_new_string(
						       ob->syms_err ? ob->syms_err : "unreadable"));
		if (!json)
			print_object(ob, sy);
		for (k = 0; sy && k < sy->n; k++) {
			const struct fp_func *f = &sy->f[k];
			const char *why = fp_func__unmeasurable(sy, f);
			const char *calls = fp_symbols__calls_only(sy);
			char buf[1024];

			const char *name = fp_demangle(f->name, buf, sizeof(buf));

			/* a pattern matches the symbol or the name people read */
			if (pattern && fnmatch(pat, f->name, 0) && fnmatch(pat, name, 0))
				continue;
			if (!pattern && why)	/* the listing: what can be measured */
				continue;
			shown++;
			measurable += !why;
			if (!json) {
				printf("  %-40s 0x%-10llx %6llu bytes  +0x%llx %-7s%s%s\n",
				       name, (unsigned long long)f->addr,
				       (unsigned long long)f->size, (unsigned long long)f->off,
				       f->stepped ? "stepped" : "push",
				       why ? "  cannot be measured: " : calls ? "  calls only" : "",
				       why ? why : "");
				continue;
			}
			json_object_array_add(jf, func_json(f, why, calls));
		}
		json_object_object_add(jo, "functions", jf);
		json_object_array_add(ja, jo);
	}
	json_object_object_add(root, "objects", ja);
	if (json)
		cli_cmd_print_json(root);
	else if (pattern)
		printf("%s: %d function%s match %s, %d can be measured%s\n", what, shown,
		       shown == 1 ? "" : "s", pattern, measurable,
		       shown ? "" : " (a stripped object keeps exported functions only; "
				    "inlined and removed functions have no symbol)");
	json_object_put(root);
	return pattern && !measurable;
}

/* The objects of target, a pid (*proc) or a file (*single), and how to name it (what).
 * 0, or 1 (said). */
static int read_target(const char *target, long *pid, struct fp_proc **proc,
		       struct fp_object **single, char *what, size_t whatlen)
{
	struct fp_err err = { 0 };
	int i, r;

	if (parse_pid(target, pid)) {
		if (fp_object__read(target, target, single, &err)) {
			fprintf(stderr, "featprof: list: %s\n", err.msg);
			return 1;
		}
		snprintf(what, whatlen, "%s", target);
		return 0;
	}
	r = fp_proc__read((pid_t)*pid, proc, &err);
	if (r == -EACCES || r == -EPERM) {
		fprintf(stderr, "featprof: list: pid %ld: permission denied (you can list only "
			"processes you could ptrace; try sudo)\n", *pid);
		return 1;
	}
	if (r) {
		fprintf(stderr, "featprof: list: %s\n", err.msg);
		return 1;
	}
	for (i = 0; i < (*proc)->nerrors; i++)
		fprintf(stderr, "featprof: list: warning: skipped %s\n", (*proc)->errors[i]);
	snprintf(what, whatlen, "pid %ld", *pid);
	return 0;
}

/* A catalog without regions: said, with the other providers it has. */
static void say_no_probes(const struct fp_catalog *cat, const char *what)
{
	struct json_object *prov = fp_catalog__providers_json(cat);
	size_t n = json_object_array_length(prov), k;

	fprintf(stderr, "featprof: list: %s has no featprof probes and no defined regions", what);
	if (n) {
		fprintf(stderr, " (other stapsdt providers:");
		for (k = 0; k < n; k++)
			fprintf(stderr, " %s",
				json_object_get_string(json_object_array_get_idx(prov, k)));
		fprintf(stderr, ")");
	}
	fprintf(stderr, "\n");
	json_object_put(prov);
}

/* The definitions named on the command line (--regions FILE, --function) must fit the
 * target: a typo shows. 0, or 1 (said). */
static int check_mine(const struct cli_opts *o, const struct fp_regdefs *defs,
		      struct fp_object **objs, int nobjs, const char *what)
{
	int i;

	for (i = 0; (o->defs_file || o->func_text) && i < defs->ndefs; i++) {
		const char *origin = defs->defs[i].origin;
		struct fp_err e = { 0 };
		int mine = !strncmp(origin, "--function:", 11) ||
			   (o->defs_file && !strncmp(origin, o->defs_file, strlen(o->defs_file)) &&
			    origin[strlen(o->defs_file)] == ':');

		if (mine && fp_regdef__check(objs, nobjs, &defs->defs[i], what, &e)) {
			fprintf(stderr, "featprof: list: %s\n", e.msg);
			return 1;
		}
	}
	return 0;
}

/* The catalog, and the sites holding int3 (attached now, or left behind by a killed
 * attacher) of a process. */
static void print_catalog(const struct fp_catalog *cat, struct fp_proc *proc, long pid,
			  int json, const char *what)
{
	int traps = proc ? fp_traps(proc, NULL, 0) : 0;

	if (json) {
		struct json_object *j = fp_catalog__to_json(cat);

		if (proc)
			json_object_object_add(j, "pid", json_object_new_int64(pid));
		if (traps >= 0 && proc)
			json_object_object_add(j, "breakpoints", json_object_new_int(traps));
		cli_cmd_print_json(j);
		json_object_put(j);
		return;
	}
	print_human(cat, what);
	if (traps > 0)
		printf("\n%d probe sites hold a breakpoint (int3): attached now (featprof status), "
		       "or left behind by a process killed while attaching (featprof repair %ld "
		       "removes those nothing owns)\n", traps, pid);
}

int cmd_list(int argc, char **argv)
{
	struct fp_object *single = NULL, **objs = NULL;
	struct fp_proc *proc = NULL;
	struct fp_catalog *cat = NULL;
	struct fp_err err = { 0 };
	char what[300];
	int json = 0, nobjs = 0, ret = 1;
	struct fp_regdefs defs = { 0 };
	const char *target = NULL;
	long pid = 0;

	struct cli_opts o;
	int rc = cli_parse(argc, argv, O_JSON | O_DEFS | O_FUNCTION | O_FUNCTIONS, &o);

	if (rc == 1) {
		printf("usage: featprof list PID|PATH [--regions FILE] [--function "
		       "FEATURE=PATTERN[,...]]... [--json]\n"
		       "       featprof list PID|PATH --functions [[OBJECT:]PATTERN] [--json]\n");
		return 0;
	}
	if (rc)
		return 2;
	if (o.npos != 1 && !(o.functions && o.npos == 2)) {
		cli_opts_free(&o);
		return usage_error(o.npos ? "list: one PID or PATH expected"
					  : "list: missing PID or PATH");
	}
	json = o.json;
	target = o.pos[0];
	if (cli_load_defs(&defs, o.defs_file, "list") ||
	    (o.func_text && fp_regdefs__parse(&defs, o.func_text, strlen(o.func_text),
					      "--function", &err) &&
	     fprintf(stderr, "featprof: list: %s\n", err.msg))) {
		fp_regdefs__clear(&defs);
		cli_opts_free(&o);
		return 1;
	}

	if (read_target(target, &pid, &proc, &single, what, sizeof(what)))
		goto out;
	objs = proc ? proc->objs : &single;
	nobjs = proc ? proc->nobjs : 1;

	if (o.functions) {
		ret = list_functions(objs, nobjs, o.npos == 2 ? o.pos[1] : NULL, json, what);
		goto out;
	}
	cat = fp_catalog__new(objs, nobjs, &defs);
	if (cat && check_mine(&o, &defs, objs, nobjs, what))
		goto out;
	if (!cat) {
		fprintf(stderr, "featprof: list: %s\n", strerror(errno));
		goto out;
	}
	if (!cat->nregions) {
		say_no_probes(cat, what);
		goto out;
	}
	print_catalog(cat, proc, pid, json, what);
	ret = 0;
out:
	cli_opts_free(&o);
	fp_regdefs__clear(&defs);
	fp_catalog__free(cat);
	fp_proc__free(proc);
	fp_object__free(single);
	return ret;
}
