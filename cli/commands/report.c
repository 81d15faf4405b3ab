// SPDX-License-Identifier: GPL-2.0
/*
 * featprof report PID|FILE -o report.html: a target's stats from featprofd (figures since
 * enable or reset) or from a file of `featprof save` or `featprof export --format json`
 * (its "stats"), written as one self-contained HTML page (cli/writers/html.c).
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/core/core.h"
#include "cli/writers/writers.h"
#include "commands_impl.h"

static struct json_object *from_file(const char *path, struct json_object **whole)
{
	struct json_object *o, *st;
	const char *fmt;

	errno = 0;
	o = json_object_from_file(path);
	if (!o) {
		fprintf(stderr, "featprof report: cannot read %s: %s\n", path,
			errno ? strerror(errno) : "not JSON");
		return NULL;
	}
	fmt = gets_(o, "format");
	if ((strcmp(fmt, "featprof-save") && strcmp(fmt, "featprof-export")) ||
	    geti(o, "version") != 1 || !json_object_object_get_ex(o, "stats", &st) ||
	    !json_object_is_type(st, json_type_object) || !geta(st, "regions")) {
		fprintf(stderr, "featprof report: %s is not a file of featprof save or export "
			"--format json (version 1)\n", path);
		json_object_put(o);
		return NULL;
	}
	*whole = o;
	return st;
}

#define DIFF_MAX 64	/* run files a side */

/* A run file of featprof run --stacks -o, or NULL after a line. */
static struct json_object *run_file(const char *path)
{
	struct json_object *o = json_object_from_file(path), *sm;

	if (!o || !json_object_object_get_ex(o, "run", NULL) ||
	    !json_object_object_get_ex(o, "sampling", &sm) ||
	    !json_object_object_get(sm, "stacks")) {
		fprintf(stderr, "featprof report: %s: not a file of featprof run --stacks -o%s\n",
			path, o ? "" : " (not JSON)");
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* featprof report A.json... --to B.json... -o diff.html: the differential flame graph. */
static int report_diff(int argc, char **argv)
{
	struct json_object *side[2][DIFF_MAX];
	const char *out = NULL;
	int n[2] = { 0, 0 }, s = 0, i, rc = 2;
	char tmp[4096];
	FILE *f;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--to")) {
			s = 1;
		} else if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) &&
			   i + 1 < argc) {
			out = argv[++i];
		} else if (argv[i][0] == '-' || n[s] == DIFF_MAX) {
			fprintf(stderr, "featprof report: %s '%s'\n",
				argv[i][0] == '-' ? "unknown option or missing value"
						  : "at most 64 run files a side:", argv[i]);
			goto out;
		} else if (!(side[s][n[s]] = run_file(argv[i]))) {
			goto out;
		} else {
			n[s]++;
		}
	}
	if (!n[0] || !n[1] || !out) {
		fprintf(stderr, "usage: featprof report A.json... --to B.json... -o diff.html   "
			"(files of featprof run --stacks -o)\n");
		goto out;
	}
	f = cli_open_tmp(out, "report", tmp, sizeof(tmp));
	if (!f) {
		rc = 1;
		goto out;
	}
	rc = cli_write_html_diff(f, side[0], n[0], side[1], n[1]);
	if (rc == -EINVAL)
		fprintf(stderr, "featprof report: a side has no sampled stacks\n");
	rc = cli_close_tmp(f, tmp, out, "report", !rc) ? 1 : 0;
out:
	for (s = 0; s < 2; s++)
		for (i = 0; i < n[s]; i++)
			json_object_put(side[s][i]);
	return rc;
}

int cmd_report(int argc, char **argv)
{
	struct json_object *st = NULL, *whole = NULL;
	struct cli_opts o;
	char tmp[4096];
	long pid;
	int rc, i;
	FILE *f;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--to"))
			return report_diff(argc, argv);
	rc = cli_parse(argc, argv, O_OUTPUT, &o);
	if (rc || o.npos != 1 || !o.output) {
		if (!rc && !o.output)
			fprintf(stderr, "featprof report: -o FILE is required\n");
		fprintf(rc == 1 ? stdout : stderr, "usage: featprof report PID|FILE -o "
			"report.html\n       featprof report A.json... --to B.json... -o "
			"diff.html   (files of featprof run --stacks)\n");
		return rc == 1 ? 0 : 2;
	}
	if (!parse_pid(o.pos[0], &pid) && access(o.pos[0], F_OK)) {
		st = client_request("report", "stats", pid, NULL);
		if (!st)
			return 1;
		whole = st;
	} else if (!(st = from_file(o.pos[0], &whole))) {
		return 2;
	}
	f = cli_open_tmp(o.output, "report", tmp, sizeof(tmp));
	if (!f) {
		json_object_put(whole);
		return 1;
	}
	rc =
	    cli_write_html(f, st, whole == st ? "featprofd, figures since enable/reset" : o.pos[0]);
	json_object_put(whole);
	return cli_close_tmp(f, tmp, o.output, "report", !rc) ? 1 : 0;
}
