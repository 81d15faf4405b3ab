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

int cmd_report(int argc, char **argv)
{
	struct json_object *st = NULL, *whole = NULL;
	struct cli_opts o;
	char tmp[4096];
	long pid;
	int rc = cli_parse(argc, argv, O_OUTPUT, &o);
	FILE *f;

	if (rc || o.npos != 1 || !o.output) {
		if (!rc && !o.output)
			fprintf(stderr, "featprof report: -o FILE is required\n");
		fprintf(rc == 1 ? stdout : stderr, "usage: featprof report PID|FILE -o "
			"report.html\n");
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
