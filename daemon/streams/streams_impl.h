/* SPDX-License-Identifier: GPL-2.0 */
/* Subscriptions and recordings (daemon/streams/): pid and exe streams, recordings'
 * rings, batches and summaries. Its one private header: what subs.c calls of record.c. */
#ifndef FP_STREAMS_IMPL_H
#define FP_STREAMS_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/protocol.h"

/* --- record.c --- */
/*
 * featprof record (daemon/streams/record.c): every completed instance of a target's enabled
 * regions for a while, pushed to one client at its own pace. Part of the subscriptions
 * room: a recording is a subscription's (daemon/streams/subs.c).
 */
struct fp_client;
struct fp_target;
struct fp_recording;
struct json_object;

/* Starts recording t for duration_ms; the reply (ring size, region names) in *res. NULL
 * with *ret (-errno) and e filled. */
struct fp_recording *fp_recording_start(struct fp_target *t, unsigned duration_ms,
					struct json_object **res, int *ret, struct fp_err *e);
/* Drains what client c has room for; at the end halts the ring, drains the rest and
 * pushes the summary. t may be NULL (detached). Returns the ns until the next tick, or
 * 0 when the recording is over (the subscription ends). */
uint64_t fp_recording_tick(struct fp_recording *rc, struct fp_target *t, struct fp_client *c,
			   int id);
/* Frees rc, stopping its ring on t (NULL: gone). */
void fp_recording_free(struct fp_recording *rc, struct fp_target *t);

#endif
