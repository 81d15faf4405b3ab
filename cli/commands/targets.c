// SPDX-License-Identifier: GPL-2.0
/* featprof enable, disable, reset, detach, repair: what is measured of a target. */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/core/core.h"
#include "cli/writers/writers.h"
#include "commands_impl.h"

/* featprof enable|disable --exe PATH NAME...|--all [--by-region] [--json] */
static int exe_toggle(const struct cli_opts *o, int on)
{
	struct json_object *req, *names = json_object_new_array(), *res;
	int i;

	struct json_object *defs = NULL;

	if (!o->all && !o->npos && !o->nfunc) {
		json_object_put(names);
		fprintf(stderr, "usage: featprof %s --exe PATH FEATURE...|--all [--by-region]"
			"%s\n", on ? "enable" : "disable",
			on ? " [--regions FILE] [--function FEATURE=[OBJECT:]PATTERN[,...]]..."
			   : "");
		return 2;
	}
	if (cli_request_defs(o, &defs)) {
		json_object_put(names);
		return 1;
	}
	for (i = 0; i < o->npos; i++)
		json_object_array_add(names, json_object_new_string(o->pos[i]));
	for (i = 0; i < o->nfunc && !o->regions; i++)	/* --function's features, enabled */
		json_object_array_add(names, json_object_new_string(o->func_features[i]));
	req = json_object_new_object();
	json_object_object_add(req, "exe", json_object_new_string(o->exe));
	if (defs)
		json_object_object_add(req, "definitions", defs);
	if (o->all)
		json_object_object_add(req, "all", json_object_new_boolean(1));
	json_object_object_add(req, o->regions ? "regions" : "features", names);
	res = client_request(on ? "enable" : "disable", on ? "exe_enable" : "exe_disable", 0,
			     req);
	if (!res || o->json)
		return cli_cmd_json_done(res);
	printf("%s: %s, %d processes now", o->exe, on ? "enabled" : "disabled",
	       (int)json_object_array_length(geta(res, "processes")));
	if (geti(res, "summed"))	/* beyond the daemon's per-executable targets */
		printf(" with figures of their own, and %lld measured in the sum only",
		       (long long)geti(res, "summed"));
	printf("%s\n", geti(res, "ended") ? "; no longer followed (figures kept)" : "");
	json_object_put(res);
	return 0;
}

/* featprof enable|disable PID NAME...|--all [--by-region] [--regions FILE] [--json] */
static int do_toggle(int argc, char **argv, int on)
{
	struct json_object *req, *names, *res;
	const char *verb = on ? "enable" : "disable";
	struct cli_opts o;
	int opts = O_ALL | O_REGIONS | O_JSON | O_EXE | (on ? O_DEFS | O_TRAP | O_FUNCTION : 0);
	int i, fd, n, rc = cli_parse(argc, argv, opts, &o);
	struct json_object *defs = NULL;
	long pid = 0;

	if (!rc && o.exe) {
		rc = exe_toggle(&o, on);
		cli_opts_free(&o);
		return rc;
	}
	if (rc < 0) {	/* its one line said */
		cli_opts_free(&o);
		return 2;
	}
	if (rc || o.npos < 1 || parse_pid(o.pos[0], &pid) ||
	    (!o.all && o.npos < 2 && !o.nfunc)) {
		if (rc >= 0 && o.npos >= 1 && parse_pid(o.pos[0], &pid))
			fprintf(stderr, "featprof %s: not a pid: '%s'\n", verb, o.pos[0]);
		fprintf(rc == 1 ? stdout : stderr, "usage: featprof %s PID FEATURE...|--all "
			"[--by-region]%s [--json]\n", verb,
			on ? " [--regions FILE] [--function FEATURE=[OBJECT:]PATTERN[,...]]... "
			     "[--trap]" : "");
		cli_opts_free(&o);
		return rc == 1 ? 0 : 2;
	}
	if (cli_request_defs(&o, &defs)) {
		cli_opts_free(&o);
		return 1;
	}
	fd = client_connect();
	if (fd < 0) {
		json_object_put(defs);
		cli_opts_free(&o);
		return 1;
	}
	names = json_object_new_array();
	for (i = 1; i < o.npos; i++)
		json_object_array_add(names, json_object_new_string(o.pos[i]));
	for (i = 0; i < o.nfunc && !o.regions; i++)	/* --function's features, enabled */
		json_object_array_add(names, json_object_new_string(o.func_features[i]));
	cli_opts_free(&o);
	req = json_object_new_object();
	json_object_object_add(req, "verb", json_object_new_string(verb));
	json_object_object_add(req, "pid", json_object_new_int64(pid));
	if (o.all)
		json_object_object_add(req, "all", json_object_new_boolean(1));
	if (o.trap)	/* by uprobes, also where the program times itself */
		json_object_object_add(req, "trap", json_object_new_boolean(1));
	json_object_object_add(req, o.regions ? "regions" : "features", names);
	if (defs)
		json_object_object_add(req, "definitions", defs);
	res = client_call(fd, verb, req);
	close(fd);
	if (!res || o.json)
		return cli_cmd_json_done(res);
	n = (int)json_object_array_length(geta(res, "enabled_regions"));
	printf("pid %ld: %d region%s enabled, %lld probe sites attached", pid, n,
	       n == 1 ? "" : "s", (long long)geti(res, "attached_sites"));
	if (geti(res, "inprocess_regions"))
		printf(", %lld region%s timed in the process", (long long)geti(res,
									"inprocess_regions"),
		       geti(res, "inprocess_regions") == 1 ? "" : "s");
	printf("\n");
	json_object_put(res);
	return 0;
}

int cmd_enable(int argc, char **argv)
{
	return do_toggle(argc, argv, 1);
}

int cmd_disable(int argc, char **argv)
{
	return do_toggle(argc, argv, 0);
}

int cmd_reset(int argc, char **argv)
{
	return cli_cmd_pid_verb(argc, argv, "reset", "reset PID");
}

int cmd_detach(int argc, char **argv)
{
	return cli_cmd_pid_verb(argc, argv, "detach", "detach PID");
}

/*
 * featprof repair PID [--check]: probe sites of PID holding a breakpoint (int3) that no
 * live uprobe wants any more (left by a process killed while it attached or detached)
 * are cleared; sites featprofd or another tool has attached keep theirs (root).
 */
int cmd_repair(int argc, char **argv)
{
	struct json_object *req, *res;
	struct cli_opts o;
	long pid;
	int rc = cli_parse(argc, argv, O_JSON | O_CHECK, &o);

	if (rc || o.npos != 1 || parse_pid(o.pos[0], &pid)) {
		if (!rc && o.npos == 1)
			fprintf(stderr, "featprof repair: not a pid: '%s'\n", o.pos[0]);
		fprintf(rc == 1 ? stdout : stderr,
			"usage: featprof repair PID [--check] [--json]\n");
		return rc == 1 ? 0 : 2;
	}
	req = json_object_new_object();
	if (o.check)
		json_object_object_add(req, "check", json_object_new_boolean(1));
	res = client_request("repair", "repair", pid, req);
	if (!res)
		return 1;
	if (o.json) {
		cli_cmd_print_json(res);
	} else if (!geti(res, "breakpoints")) {
		printf("pid %ld: no probe site holds a breakpoint\n", pid);
	} else if (o.check) {
		printf("pid %ld: %lld probe sites hold a breakpoint (attached now, or left "
		       "behind: featprof repair %ld removes those nothing owns)\n", pid,
		       (long long)geti(res, "breakpoints"), pid);
	} else {
		printf("pid %ld: %lld probe sites held a breakpoint: %lld removed, %lld still "
		       "held by a live uprobe (featprofd's or another tool's)\n", pid,
		       (long long)geti(res, "breakpoints"), (long long)geti(res, "removed"),
		       (long long)geti(res, "held"));
	}
	json_object_put(res);
	return 0;
}
