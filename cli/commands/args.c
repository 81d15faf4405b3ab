// SPDX-License-Identifier: GPL-2.0
/* What the commands that talk to featprofd share: their arguments and replies. */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/core/core.h"
#include "cli/writers/writers.h"
#include "commands_impl.h"

void cli_cmd_print_json(struct json_object *o)
{
	cli_json_stamp(o);
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
}

/* A reply asked for with --json: printed as it is. Exit code 1 when there was none. */
int cli_cmd_json_done(struct json_object *res)
{
	if (!res)
		return 1;
	cli_cmd_print_json(res);
	json_object_put(res);
	return 0;
}

struct json_object *cli_cmd_call(const char *verb, long pid)
{
	return client_request(verb, verb, pid, NULL);
}

/* Parses "PID [--json]"; 0, or the exit code to return (usage printed). */
int cli_cmd_pid_args(int argc, char **argv, long *pid, int *json, const char *use)
{
	struct cli_opts o;
	int rc = cli_parse(argc, argv, O_JSON, &o);

	*json = o.json;
	if (!rc && o.npos == 1 && !parse_pid(o.pos[0], pid))
		return 0;
	if (!rc && o.npos == 1)
		fprintf(stderr, "featprof %s: not a pid: '%s'\n", argv[0], o.pos[0]);
	fprintf(rc == 1 ? stdout : stderr, "usage: featprof %s\n", use);
	return rc == 1 ? -1 : 2;
}

/* Commands without arguments but --json; 0, or the exit code (usage printed). */
int cli_cmd_json_only(int argc, char **argv, int *json)
{
	struct cli_opts o;
	int rc = cli_parse(argc, argv, O_JSON, &o);

	*json = o.json;
	if (!rc && !o.npos)
		return 0;
	fprintf(rc == 1 ? stdout : stderr, "usage: featprof %s [--json]\n", argv[0]);
	return rc == 1 ? -1 : 2;
}

/* A verb whose only argument is a pid and whose reply carries nothing to print. */
int cli_cmd_pid_verb(int argc, char **argv, const char *verb, const char *use)
{
	long pid_;
	struct json_object *res;
	int json, rc = cli_cmd_pid_args(argc, argv, &pid_, &json, use);

	if (rc)
		return rc < 0 ? 0 : rc;
	res = cli_cmd_call(verb, pid_);
	json_object_put(res);
	return res ? 0 : 1;
}
