// SPDX-License-Identifier: GPL-2.0
/*
 * featprof record: every completed instance of the enabled regions for duration_ms,
 * through a ring buffer swapped into the target's object. The ring holds the events of
 * RECORD_DRAIN_MS x 4 at the target's rate so far (instances per second since enable),
 * at least 64 KiB, at most 64 MiB, and never more than the whole recording needs; it is
 * drained every RECORD_DRAIN_MS and each batch pushed as
 *   {"record":ID,"events":[[tid,region,start_ns,end_ns,depth,ndesc],...]}
 * (region: index into the reply's "regions"; raw CLOCK_MONOTONIC timestamps). The end:
 *   {"record":ID,"done":true,"events":N,"dropped":N,"stats":{the window's delta}}
 * or, when the target exits first, {"event":"exit"} (the recording is void). The
 * aggregation keeps running alongside.
 *
 * Backpressure: the client's socket sets the pace, never the target. A drain takes at
 * most what fits under RECORD_QUEUE_HIGH of queued output to that client (and at most
 * RECORD_BATCH events, so one round serves the other clients too); what it leaves stays
 * in the kernel ring, and when the ring is full the BPF program counts drops instead of
 * writing. So a target faster than its reader loses events, counted in "dropped", and
 * the daemon holds at most about RECORD_QUEUE_HIGH for the recording. At the end the
 * ring is halted (no more writes) and drained at the same pace before the summary.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "clients/client.h"
#include "util/clock.h"
#include "common/err.h"
#include "util/log.h"
#include "registry/registry.h"
#include "streams_impl.h"

#define RECORD_DRAIN_MS 100
#define RECORD_BEHIND_MS 5	/* next drain when the last one left events behind */
#define RECORD_QUEUE_HIGH (4u << 20)
#define RECORD_BATCH 32768
#define RECORD_EVENT_JSON 56	/* bytes of one event's JSON, a generous estimate */
#define RECORD_RING_MIN (64u << 10)
#define RECORD_RING_MAX (64u << 20)

struct fp_recording {
	struct json_object *batch;
	uint64_t events, end_ns;
	size_t room;			/* events the current drain may still take */
	bool halted;			/* the end: no more writes, draining what is left */
	struct fp_snapshot *start;	/* figures at the start */
	struct fp_snapshot *end_snap;	/* figures at the halt */
};

static int rec_event(void *ctx, void *data, size_t size)
{
	struct fp_recording *rc = ctx;
	const struct fp_event *e = data;
	struct json_object *a;

	if (size < sizeof(*e))
		return 0;
	a = json_object_new_array_ext(8);
	json_object_array_add(a, json_object_new_int64(e->tid));
	json_object_array_add(a, json_object_new_int64(e->region));
	json_object_array_add(a, json_object_new_int64((int64_t)e->start));
	json_object_array_add(a, json_object_new_int64((int64_t)e->end));
	json_object_array_add(a, json_object_new_int64(e->depth));
	json_object_array_add(a, json_object_new_int64(e->ndesc));
	json_object_array_add(a, json_object_new_int64((int64_t)e->cstart));
	json_object_array_add(a, json_object_new_int64((int64_t)e->cend));
	json_object_array_add(rc->batch, a);
	rc->events++;
	/* this event is taken; a negative return stops the drain before the next one */
	return --rc->room ? 0 : -ENOSPC;
}

static uint32_t ring_bytes(const struct fp_snapshot *snap, uint64_t since_ns, unsigned ms)
{
	double n = 0, rate, want, whole;
	uint32_t bytes = RECORD_RING_MIN;
	int r;

	for (r = 0; snap && r < snap->nregions; r++)
		n += (double)snap->regions[r].count;
	rate = snap && snap->taken_ns > since_ns ? n * 1e9 / (double)(snap->taken_ns - since_ns)
						 : 0;
	want = rate * RECORD_DRAIN_MS / 1000.0 * 4 * (sizeof(struct fp_event) + 8);
	whole = rate * (double)ms / 1000.0 * (sizeof(struct fp_event) + 8);
	if (want > whole)
		want = whole;
	while (bytes < want && bytes < RECORD_RING_MAX)
		bytes <<= 1;
	return bytes;
}

void fp_recording_free(struct fp_recording *rc, struct fp_target *t)
{
	if (!rc)
		return;
	if (t && fp_target__recording(t))
		fp_target__record_stop(t);
	fp_snapshot__free(rc->start);
	fp_snapshot__free(rc->end_snap);
	json_object_put(rc->batch);
	free(rc);
}

static struct json_object *start_reply(const struct fp_target *t, uint32_t bytes)
{
	struct json_object *res = json_object_new_object(), *names = json_object_new_array();
	const struct fp_catalog *cat = fp_target__catalog(t);
	int i;

	json_object_object_add(res, "ring_bytes", json_object_new_int64(bytes));
	for (i = 0; i < cat->nregions; i++)
		json_object_array_add(names, json_object_new_string(cat->regions[i].name));
	json_object_object_add(res, "regions", names);
	return res;
}

struct fp_recording *fp_recording_start(struct fp_target *t, unsigned duration_ms,
					struct json_object **res, int *ret, struct fp_err *e)
{
	int pid = (int)fp_target__pid(t);
	struct fp_recording *rc;
	uint32_t bytes;

	if (fp_target__exited(t) || !fp_target__attached_sites(t)) {
		*ret = fp_fail(e, EINVAL, "pid %d: %s", pid,
			       fp_target__exited(t) ? "exited"
			       : fp_target__ip_regions(t)
			       ? "its enabled regions time themselves in the process, "
			       "which records no timeline (enable them with --trap to "
			       "record)"
			       : "no region enabled (enable a feature first)");
		return NULL;
	}
	rc = calloc(1, sizeof(*rc));
	if (!rc || !(rc->batch = json_object_new_array())) {
		free(rc);
		*ret = fp_fail(e, ENOMEM, "out of memory");
		return NULL;
	}
	rc->start = fp_target__snapshot(t);
	bytes = ring_bytes(rc->start, fp_target__enabled_at_ns(t), duration_ms);
	if (!rc->start) {
		*ret = fp_fail(e, EIO, "pid %d: cannot read figures", pid);
		fp_recording_free(rc, NULL);
		return NULL;
	}
	*ret = fp_target__record_start(t, bytes, rec_event, rc, e);
	if (*ret) {	/* EBUSY: another recording has the ring */
		fp_recording_free(rc, NULL);
		return NULL;
	}
	rc->end_ns = fp_mono_ns() + (uint64_t)duration_ms * 1000000ULL;
	*res = start_reply(t, bytes);
	fp_log(FP_LOG_INFO, "pid %d: recording %u ms, ring %u bytes", pid, duration_ms, bytes);
	return rc;
}

/* Pushes the batch drained so far (none when empty). */
static void record_push(struct fp_recording *rc, struct fp_client *c, int id)
{
	struct json_object *o;

	if (!json_object_array_length(rc->batch))
		return;
	o = json_object_new_object();
	json_object_object_add(o, "record", json_object_new_int(id));
	json_object_object_add(o, "events", rc->batch);
	fp_client_send(c, o);
	rc->batch = json_object_new_array();
}

/* Drains what the client has room for; true when the ring may hold more, false when it
 * is empty (or the client has no room now: the next tick tries again). */
static bool record_drain(struct fp_recording *rc, struct fp_target *t, struct fp_client *c,
			 int id)
{
	size_t queued = fp_client_queued(c);
	int n;

	if (queued >= RECORD_QUEUE_HIGH)
		return false;
	rc->room = (RECORD_QUEUE_HIGH - queued) / RECORD_EVENT_JSON;
	if (rc->room > RECORD_BATCH)
		rc->room = RECORD_BATCH;
	if (!rc->room)
		return false;
	n = fp_target__record_drain(t);
	record_push(rc, c, id);
	return n == -ENOSPC;
}

/* The summary, once the halted ring is empty. */
static void record_done(struct fp_recording *rc, struct fp_target *t, struct fp_client *c,
			int id)
{
	struct json_object *o = json_object_new_object(), *st;
	uint64_t dropped = fp_target__record_stop(t);
	const struct fp_calibration *cal = fp_registry_cal(t);

	json_object_object_add(o, "record", json_object_new_int(id));
	json_object_object_add(o, "done", json_object_new_boolean(1));
	json_object_object_add(o, "events", json_object_new_int64((int64_t)rc->events));
	json_object_object_add(o, "dropped", json_object_new_int64((int64_t)dropped));
	st = rc->end_snap ? fp_registry_delta(t, rc->end_snap, rc->start) : NULL;
	if (st) {
		struct json_object *parts = json_object_new_array();
		int k;

		for (k = 0; k < FP_C_N; k++)
			json_object_array_add(parts, json_object_new_double(
						     cal && cal->valid ? cal->part_ns[k] : 0));
		json_object_object_add(o, "probe_parts_ns", parts);
		json_object_object_add(o, "stats", st);
	}
	fp_client_send(c, o);
	fp_log(FP_LOG_INFO, "pid %d: recorded %llu events, %llu dropped", (int)fp_target__pid(t),
	       (unsigned long long)rc->events, (unsigned long long)dropped);
}

uint64_t fp_recording_tick(struct fp_recording *rc, struct fp_target *t, struct fp_client *c,
			   int id)
{
	/* exit was pushed; a detach is not */
	if (!t || fp_target__exited(t) || !fp_target__recording(t)) {
		if (!t || !fp_target__exited(t)) {
			struct json_object *o = json_object_new_object();

			json_object_object_add(o, "record", json_object_new_int(id));
			json_object_object_add(o, "event", json_object_new_string("detached"));
			fp_client_send(c, o);
		}
		return 0;
	}
	if (!rc->halted && fp_mono_ns() >= rc->end_ns) {
		fp_target__record_halt(t);
		rc->halted = true;
		rc->end_snap = fp_target__snapshot(t);
	}
	if (record_drain(rc, t, c, id) || fp_client_queued(c) >= RECORD_QUEUE_HIGH)
		return RECORD_BEHIND_MS * 1000000ULL;	/* soon again */
	if (!rc->halted)
		return RECORD_DRAIN_MS * 1000000ULL;
	record_done(rc, t, c, id);
	return 0;
}
