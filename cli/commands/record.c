// SPDX-License-Identifier: GPL-2.0
/*
 * featprof record PID --duration S -o trace.json
 *
 * Every instance of the enabled regions for S seconds (featprofd's record verb: a BPF
 * ring buffer), written as Chrome Trace Event Format (JSON object form) that
 * ui.perfetto.dev and chrome://tracing open: one complete event ("ph":"X") per
 * instance, one track per thread, the region's features as "cat" and in "args",
 * process and thread names as metadata events. "otherData" holds the event and drop
 * counts, the ring size and the calibration used.
 *
 * Compensation, the same as stats': each event carries the thread's probe cost so far
 * at its start and at its end, as the kernel charged it (bpf/featprof.bpf.c "Cost"), so
 * each thread runs on a clock from which the probes' cost is removed as it accrues: a
 * timestamp T is placed at T - cost(T). An instance's duration is then its raw time
 * less the probe cost inside it (its own probes' parts within it and every nested probe,
 * whether the nested instance is in the recording or not), and the per-region sums of
 * "dur" equal stats' inclusive times over the window; children stay inside their
 * parents and the gaps between regions are the program's own. Where an instance's
 * probes cost less than the calibrated average, a child could end a little after its
 * parent: its shown "dur" is cut at the parent's end, args.compensated_ns keeps the
 * exact value.
 *
 * A target that exits or is detached during the recording voids it: one line, nothing
 * written. Dropped events (a full ring) are counted in "otherData" and on stderr.
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

/* The recording's pushes into tr until its "done" (into *done): 1, or 0 after a line
 * (the target exited or was detached, out of memory). Progress said on a terminal. */
static int read_events(int fd, long pid, long secs, struct cli_trace *tr,
		       struct json_object **done)
{
	struct json_object *push, *v, *evs;
	time_t t0 = time(NULL);
	int ok = 1;

	while (ok && !*done) {
		cli_progress("featprof record: %ld of %ld s", (long)(time(NULL) - t0), secs);
		if (!(push = client_read(fd)))
			break;
		if (json_object_object_get_ex(push, "event", &v)) {
			fprintf(stderr, "featprof record: pid %ld %s during the recording; nothing "
				"written\n", pid, strcmp(json_object_get_string(v), "exit")
							   ? "was detached" : "exited");
			ok = 0;
		} else if (json_object_object_get_ex(push, "done", &v)) {
			*done = json_object_get(push);
		} else if ((evs = geta(push, "events")) && cli_trace__add(tr, evs)) {
			fprintf(stderr, "featprof record: out of memory\n");
			ok = 0;
		}
		json_object_put(push);
	}
	cli_progress_done();
	return ok;
}

int cmd_record(int argc, char **argv)
{
	struct json_object *req, *res, *names = NULL, *done = NULL;
	struct cli_trace *tr = cli_trace__new();
	struct cli_opts o;
	char tmp[4096];
	long pid = 0;
	uint32_t ring;
	int fd, ok = 1, rc = cli_parse(argc, argv, O_DURATION | O_OUTPUT, &o);
	FILE *f;

	if (rc || o.npos != 1 || parse_pid(o.pos[0], &pid) || !o.duration || !o.output) {
		if (!rc && o.npos == 1 && parse_pid(o.pos[0], &pid))
			fprintf(stderr, "featprof record: not a pid: '%s'\n", o.pos[0]);
		else if (!rc && (!o.duration || !o.output))
			fprintf(stderr, "featprof record: --duration and -o are required\n");
		fprintf(rc == 1 ? stdout : stderr, "usage: featprof record PID --duration S -o "
			"trace.json\n");
		return rc == 1 ? 0 : 2;
	}
	f = tr ? cli_open_tmp(o.output, "record", tmp, sizeof(tmp)) : NULL;
	if (!f)
		return cli_trace__free(tr), 1;
	fd = client_connect();
	if (fd < 0)
		return cli_trace__free(tr), cli_close_tmp(f, tmp, o.output, "record", 0), 1;
	req = json_object_new_object();
	json_object_object_add(req, "verb", json_object_new_string("record"));
	json_object_object_add(req, "pid", json_object_new_int64(pid));
	json_object_object_add(req, "duration_ms", json_object_new_int64(o.duration * 1000));
	res = client_call(fd, "record", req);
	if (!res) {
		close(fd);
		return cli_trace__free(tr), cli_close_tmp(f, tmp, o.output, "record", 0), 1;
	}
	ring = (uint32_t)geti(res, "ring_bytes");
	if (json_object_object_get_ex(res, "regions", &names))
		json_object_get(names);
	json_object_put(res);
	ok = read_events(fd, pid, o.duration, tr, &done);
	close(fd);
	if (ok && !done)
		fprintf(stderr, "featprof record: featprofd closed the connection; nothing "
			"written\n");
	if (ok && done) {
		if (cli_trace__write(tr, f, names, done, pid, ring)) {
			fprintf(stderr, "featprof record: out of memory\n");
			ok = 0;
		} else {
			if (geti(done, "dropped"))
				fprintf(stderr, "featprof record: %lld events dropped (the ring "
					"of %u bytes was full); counted in otherData.dropped\n",
					(long long)geti(done, "dropped"), ring);
		}
	}
	ok = ok && done;
	cli_trace__free(tr);
	json_object_put(names);
	json_object_put(done);
	return cli_close_tmp(f, tmp, o.output, "record", ok) ? 1 : 0;
}
