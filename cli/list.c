// SPDX-License-Identifier: GPL-2.0
/* featprof list PID|PATH: read the probe catalog locally, no daemon needed. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "cli.h"
#include "regdefs.h"
#include "strays.h"

int cli_load_defs(struct fp_regdefs *defs, const char *file, const char *cmd)
{
	char err[1024];

	if (fp_regdefs__load_dir(defs, fp_regdefs__default_dir(), err, sizeof(err)) ||
	    (file && fp_regdefs__load_file(defs, file, err, sizeof(err)))) {
		fprintf(stderr, "featprof %s: %s\n", cmd, err);
		fp_regdefs__clear(defs);
		return 1;
	}
	return 0;
}

struct json_object *cli_definitions(const char *path)
{
	struct fp_regdefs check = { 0 };
	struct json_object *o;
	char err[1024], *text;
	size_t len = 0;
	FILE *f;

	/* checked here for a message that names the file; the daemon checks again */
	if (fp_regdefs__load_file(&check, path, err, sizeof(err))) {
		fprintf(stderr, "featprof: %s\n", err);
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

static void print_human(const struct fp_catalog *cat, const char *what)
{
	int i, j, o;

	printf("%s: %d object%s with probes\n", what, cat->nobjs, cat->nobjs == 1 ? "" : "s");
	for (o = 0; o < cat->nobjs; o++)
		printf("  %s (%d featprof site%s, %d stapsdt notes%s)\n", cat->objs[o]->path,
		       cat->objs[o]->nfeatprof, cat->objs[o]->nfeatprof == 1 ? "" : "s",
		       cat->objs[o]->nsites,
		       cat->objs[o]->ip_version ? "; built to time itself in-process" : "");
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
			const struct fp_site *s = &ob->sites[r->sites[j].site];
			char loc[512];

			if (s->file) {
				const char *base = strrchr(s->file, '/');

				snprintf(loc, sizeof(loc), "%s:%u", base ? base + 1 : s->file,
					 s->line);
			} else {
				snprintf(loc, sizeof(loc), "%s:%s", s->provider, s->name);
			}
			printf("    %-5s  %-28s %s+0x%llx%s%s\n",
			       r->sites[j].kind == FP_KIND_BEGIN ? "begin" : "end", loc, ob->path,
			       (unsigned long long)s->loc_off,
			       s->kind && !s->opt_off ? " (nop1)" : "",
			       s->sem_off ? " (semaphore)" : "");
		}
	}
}

int cmd_list(int argc, char **argv)
{
	struct fp_object *single = NULL, **objs = NULL;
	struct fp_proc *proc = NULL;
	struct fp_catalog *cat = NULL;
	char err[1024], what[300];
	int json = 0, nobjs = 0, ret = 1, i, traps;
	struct fp_regdefs defs = { 0 };
	const char *target = NULL;
	long pid;

	struct cli_opts o;
	int rc = cli_parse(argc, argv, O_JSON | O_DEFS, &o);

	if (rc == 1) {
		printf("usage: featprof list PID|PATH [--regions FILE] [--json]\n");
		return 0;
	}
	if (rc)
		return 2;
	if (o.npos != 1)
		return usage_error(o.npos ? "list: one PID or PATH expected"
					  : "list: missing PID or PATH");
	json = o.json;
	target = o.pos[0];
	if (cli_load_defs(&defs, o.defs_file, "list"))
		return 1;

	if (parse_pid(target, &pid) == 0) {
		int r = fp_proc__read((pid_t)pid, &proc, err, sizeof(err));

		if (r == -EACCES || r == -EPERM) {
			fprintf(stderr, "featprof: list: pid %ld: permission denied (you can list "
				"only processes you could ptrace; try sudo)\n", pid);
			return 1;
		}
		if (r) {
			fprintf(stderr, "featprof: list: %s\n", err);
			return 1;
		}
		for (i = 0; i < proc->nerrors; i++)
			fprintf(stderr, "featprof: list: warning: skipped %s\n", proc->errors[i]);
		objs = proc->objs;
		nobjs = proc->nobjs;
		snprintf(what, sizeof(what), "pid %ld", pid);
	} else {
		if (fp_object__read(target, target, &single, err, sizeof(err))) {
			fprintf(stderr, "featprof: list: %s\n", err);
			return 1;
		}
		objs = &single;
		nobjs = 1;
		snprintf(what, sizeof(what), "%s", target);
	}

	cat = fp_catalog__new(objs, nobjs, &defs);
	for (i = 0; cat && o.defs_file && i < defs.ndefs; i++) {
		const struct fp_probe_name *p = fp_regdef__missing(objs, nobjs, &defs.defs[i]);

		/* the file named on the command line must fit the target: its typo shows */
		if (p && !strncmp(defs.defs[i].origin, o.defs_file, strlen(o.defs_file)) &&
		    defs.defs[i].origin[strlen(o.defs_file)] == ':') {
			fprintf(stderr, "featprof: list: %s: %s has no probe %s:%s\n",
				defs.defs[i].origin, what, p->provider, p->probe);
			goto out;
		}
	}
	if (!cat) {
		fprintf(stderr, "featprof: list: %s\n", strerror(errno));
		goto out;
	}
	if (!cat->nregions) {
		struct json_object *prov = fp_catalog__providers_json(cat);
		size_t n = json_object_array_length(prov);

		fprintf(stderr, "featprof: list: %s has no featprof probes and no defined regions",
			what);
		if (n) {
			fprintf(stderr, " (other stapsdt providers:");
			for (size_t k = 0; k < n; k++)
				fprintf(stderr, " %s", json_object_get_string(
							       json_object_array_get_idx(prov, k)));
			fprintf(stderr, ")");
		}
		fprintf(stderr, "\n");
		json_object_put(prov);
		goto out;
	}
	/* sites holding int3: attached now, or left behind by a killed attacher */
	traps = proc ? fp_traps(proc, NULL, 0) : 0;
	if (json) {
		struct json_object *j = fp_catalog__to_json(cat);

		if (proc)
			json_object_object_add(j, "pid", json_object_new_int64(pid));
		if (traps >= 0 && proc)
			json_object_object_add(j, "breakpoints", json_object_new_int(traps));
		printf("%s\n", json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
		json_object_put(j);
	} else {
		print_human(cat, what);
		if (traps > 0)
			printf("\n%d probe sites hold a breakpoint (int3): attached now (featprof "
			       "status), or left behind by a process killed while attaching "
			       "(featprof repair %ld removes those nothing owns)\n", traps, pid);
	}
	ret = 0;
out:
	fp_regdefs__clear(&defs);
	fp_catalog__free(cat);
	fp_proc__free(proc);
	fp_object__free(single);
	return ret;
}
