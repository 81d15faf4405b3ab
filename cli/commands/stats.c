// SPDX-License-Identifier: GPL-2.0
/* featprof stats, top and stream: a target's figures, once or every interval. */
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/core/core.h"
#include "cli/writers/writers.h"
#include "commands_impl.h"

int cmd_stats(int argc, char **argv)
{
	struct json_object *res, *req;
	struct cli_opts o;
	long pid = 0;
	int rc = cli_parse(argc, argv, O_JSON | O_EXE, &o);	/* says what is wrong once */

	if (rc || o.npos != !o.exe || (!o.exe && parse_pid(o.pos[0], &pid))) {
		if (!rc && o.npos == 1 && !o.exe)
			fprintf(stderr, "featprof stats: not a pid: '%s'\n", o.pos[0]);
		fprintf(rc == 1 ? stdout : stderr,
			"usage: featprof stats PID|--exe PATH [--json]\n");
		return rc == 1 ? 0 : 2;
	}
	if (o.exe) {
		req = json_object_new_object();
		json_object_object_add(req, "exe", json_object_new_string(o.exe));
		res = client_request("stats", "exe_stats", 0, req);
	} else {
		res = cli_cmd_call("stats", pid);
	}
	if (!res || o.json)
		return cli_cmd_json_done(res);
	cli_write_table(res, pid, "featprof stats:");
	json_object_put(res);
	return 0;
}

/* stream and top: subscribe, then one push per interval. */
static int subscribe_loop(int argc, char **argv, int table)
{
	struct json_object *req, *res, *push, *v;
	long pid = 0, interval, count, seen = 0;
	struct cli_opts o;
	int fd, rc = cli_parse(argc, argv, O_INTERVAL | O_COUNT | O_EXE, &o);

	if (rc || o.npos != !o.exe || (!o.exe && parse_pid(o.pos[0], &pid))) {
		if (!rc && o.npos == 1 && !o.exe)
			fprintf(stderr, "featprof %s: not a pid: '%s'\n", argv[0], o.pos[0]);
		fprintf(rc == 1 ? stdout : stderr, "usage: featprof %s PID|--exe PATH "
			"[--interval MS] [--count N]\n", table ? "top" : "stream");
		return rc == 1 ? 0 : 2;
	}
	interval = o.interval;
	count = o.count;
	fd = client_connect();
	if (fd < 0)
		return 1;
	req = json_object_new_object();
	if (o.exe) {	/* the executable's processes, summed (root) */
		json_object_object_add(req, "verb", json_object_new_string("exe_subscribe"));
		json_object_object_add(req, "exe", json_object_new_string(o.exe));
	} else {
		json_object_object_add(req, "verb", json_object_new_string("subscribe"));
		json_object_object_add(req, "pid", json_object_new_int64(pid));
	}
	json_object_object_add(req, "interval_ms", json_object_new_int64(interval));
	res = client_call(fd, table ? "top" : "stream", req);
	if (!res) {
		close(fd);
		return 1;
	}
	json_object_put(res);
	cli_catch_interrupts();
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	while (!cli_interrupted && (!count || seen < count)) {
		push = client_read(fd);
		if (!push)
			break;
		if (json_object_object_get_ex(push, "event", &v)) {
			if (!table)
				cli_cmd_print_json(push);
			else
				printf("\npid %ld exited\n", pid);
			fflush(stdout);
			json_object_put(push);
			break;
		}
		if (!json_object_object_get_ex(push, "stats", &v)) {
			json_object_put(push);
			continue;
		}
		seen++;
		if (table) {
			if (isatty(1))
				printf("\033[H\033[2J");
			cli_write_table(v, pid, "featprof top:");
			printf("(every %ld ms, figures of the last interval; Ctrl-C quits)\n",
			       interval);
		} else {
			cli_cmd_print_json(push);
		}
		fflush(stdout);
		json_object_put(push);
	}
	close(fd);
	return 0;
}

int cmd_top(int argc, char **argv)
{
	return subscribe_loop(argc, argv, 1);
}

int cmd_stream(int argc, char **argv)
{
	return subscribe_loop(argc, argv, 0);
}
