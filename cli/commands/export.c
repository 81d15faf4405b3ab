// SPDX-License-Identifier: GPL-2.0
/*
 * featprof export PID --format pprof|folded|json [-o FILE] [--duration S] [--value V]
 *
 * Formats other tools read, made from the daemon's stats reply (the daemon knows no
 * formats):
 *  - folded: one line per region path, "outer;inner;leaf VALUE" (flamegraph.pl,
 *    speedscope, inferno). VALUE is the path's exclusive time in ns (--value wall,
 *    the default; cpu, offcpu), its instance count (--value count), or the sampled
 *    CPU time of that stack (--value sampled, after featprof sample). Paths of zero
 *    value are left out, as flame graph tools expect.
 *  - pprof: a gzip-compressed profile.proto (cli/writers/pprof.c) for go tool pprof, Pyroscope,
 *    Parca: one sample per region path, values wall/cpu/offcpu ns and count.
 *  - json: the stats reply wrapped in a versioned envelope (FP_EXPORT_VERSION below):
 *    {"format":"featprof-export","version":1,"pid","comm","taken":UNIX_S,
 *     "duration_ns"|null,"stats":{...}}. Keys inside "stats" are docs/TRACING.md's.
 *
 * Figures since enable/reset, or over the next S seconds with --duration (a
 * subscription's first delta). The file is written to FILE.tmp and renamed, so a
 * failure leaves nothing half-written.
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

#define FP_EXPORT_VERSION 1


/* The stats of pid: now, or the delta over the next secs seconds. NULL after an error
 * line. */
static struct json_object *fetch(long pid, long secs, const char *what)
{
	struct json_object *req = json_object_new_object(), *res, *push, *v;
	int fd = client_connect();

	if (fd < 0) {
		json_object_put(req);
		return NULL;
	}
	json_object_object_add(req, "pid", json_object_new_int64(pid));
	if (!secs) {
		json_object_object_add(req, "verb", json_object_new_string("stats"));
		res = client_call(fd, what, req);
		close(fd);
		return res;
	}
	json_object_object_add(req, "verb", json_object_new_string("subscribe"));
	json_object_object_add(req, "interval_ms", json_object_new_int64(secs * 1000));
	res = client_call(fd, what, req);
	if (!res) {
		close(fd);
		return NULL;
	}
	json_object_put(res);
	while ((push = client_read(fd))) {
		if (json_object_object_get_ex(push, "event", &v)) {
			fprintf(stderr, "featprof %s: pid %ld exited during the %ld s; nothing "
				"written\n", what, pid, secs);
			json_object_put(push);
			break;
		}
		if (json_object_object_get_ex(push, "stats", &v)) {
			json_object_get(v);
			json_object_put(push);
			close(fd);
			return v;
		}
		json_object_put(push);
	}
	close(fd);
	return NULL;
}

/* The catalog of pid (the daemon's list reply): region sites' files and lines. */
static struct json_object *catalog(long pid)
{
	return client_request("export", "list", pid, NULL);
}

static const char *value_key(const char *value)
{
	if (!strcmp(value, "wall"))
		return "ns";
	if (!strcmp(value, "cpu"))
		return "cpu_ns";
	if (!strcmp(value, "offcpu"))
		return "offcpu_ns";
	if (!strcmp(value, "count"))
		return "count";
	if (!strcmp(value, "sampled"))
		return "sampled_ns";
	return NULL;
}

static int write_json(FILE *f, struct json_object *st, long pid, long secs)
{
	struct json_object *o = json_object_new_object(), *comm;

	json_object_object_add(o, "format", json_object_new_string("featprof-export"));
	json_object_object_add(o, "version", json_object_new_int(FP_EXPORT_VERSION));
	json_object_object_add(o, "pid", json_object_new_int64(pid));
	if (json_object_object_get_ex(st, "comm", &comm))
		json_object_object_add(o, "comm", json_object_get(comm));
	json_object_object_add(o, "taken", json_object_new_int64((int64_t)time(NULL)));
	json_object_object_add(o, "duration_ns",
			       secs ? json_object_new_int64((int64_t)secs * 1000000000) : NULL);
	json_object_object_add(o, "stats", json_object_get(st));
	fprintf(f, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return 0;
}

int cmd_export(int argc, char **argv)
{
	const char *format = NULL, *out = NULL, *value = "wall", *key;
	struct json_object *st;
	struct cli_opts o;
	char tmp[4096];
	long pid, secs = 0;
	int rc = cli_parse(argc, argv, O_FORMAT | O_OUTPUT | O_DURATION | O_VALUE, &o), err;
	FILE *f = stdout;

	if (!rc) {
		format = o.format;
		out = o.output;
		secs = o.duration;
		value = o.value ? o.value : value;
	}
	if (rc || o.npos != 1 || parse_pid(o.pos[0], &pid) || !format) {
		if (!rc && o.npos == 1 && parse_pid(o.pos[0], &pid))
			fprintf(stderr, "featprof export: not a pid: '%s'\n", o.pos[0]);
		else if (!rc && !format)
			fprintf(stderr, "featprof export: --format is required\n");
		fprintf(rc == 1 ? stdout : stderr, "usage: featprof export PID --format "
			"pprof|folded|json [-o FILE] [--duration S]\n"
			"       [--value wall|cpu|offcpu|count] (folded)\n");
		return rc == 1 ? 0 : 2;
	}
	if (strcmp(format, "folded") && strcmp(format, "json") && strcmp(format, "pprof")) {
		fprintf(stderr, "featprof export: unknown format '%s' (pprof, folded, json)\n",
			format);
		return 2;
	}
	key = value_key(value);
	if (!key) {
		fprintf(stderr, "featprof export: --value takes wall, cpu, offcpu, count or "
			"sampled\n");
		return 2;
	}
	if (out && !(f = cli_open_tmp(out, "export", tmp, sizeof(tmp))))	/* before waiting */
		return 1;
	if (secs)
		cli_progress("featprof export: %ld s ...", secs);
	st = fetch(pid, secs, "export");
	cli_progress_done();
	if (st && !strcmp(format, "pprof")) {
		struct json_object *cat = catalog(pid);
		int64_t dur = secs ? (int64_t)secs * 1000000000 : geti(st, "elapsed_ns");

		err = cat ? cli_write_pprof(f, st, cat, pid, dur) : -EIO;
		if (err == -ENOMEM)
			fprintf(stderr, "featprof export: out of memory\n");
		json_object_put(cat);
	} else {
		err = !st ? -EIO : !strcmp(format, "json") ? write_json(f, st, pid, secs)
							    : cli_write_folded(f, st, key);
	}
	json_object_put(st);
	if (!out)
		return err ? 1 : 0;
	if (err && err != -EIO && err != -ENOMEM)
		fprintf(stderr, "featprof export: cannot write %s: %s\n", out, strerror(-err));
	return cli_close_tmp(f, tmp, out, "export", !err) ? 1 : 0;
}
