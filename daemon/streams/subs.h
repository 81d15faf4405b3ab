/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Subscriptions (daemon/streams/subs.c): a process's figures per interval (top, stream, save),
 * an executable's (--exe, through a group cursor), and recordings (daemon/streams/record.c).
 * The room owns each subscription and frees what it holds. It calls the groups, the
 * registry and the client connection below it; the registry's hooks tell it of a
 * target's exit, exec and drop.
 */
#ifndef FP_SUBS_H
#define FP_SUBS_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/protocol.h"

#define FP_MAX_SUBS 1024

struct fp_client;
struct fp_target;
struct json_object;

/* c gets t's figures every interval_ms: *id. */
int fp_subs_pid(struct fp_client *c, struct fp_target *t, unsigned interval_ms,
		int *id, struct fp_err *e);
/* c gets group's figures every interval_ms: *id. */
int fp_subs_exe(struct fp_client *c, int group, unsigned interval_ms, int *id,
		struct fp_err *e);
/* c records t for duration_ms; the reply in *res. */
int fp_subs_record(struct fp_client *c, struct fp_target *t, unsigned duration_ms,
		   struct json_object **res, struct fp_err *e);
/* Ends c's subscription id. */
int fp_subs_cancel(struct fp_client *c, int id, struct fp_err *e);
int fp_subs_count(void);
/* Pushes what is due; the time the next one is (UINT64_MAX: none). */
void fp_subs_run(void);
uint64_t fp_subs_next_due(void);
/* Frees ended subscriptions and those of dead clients; the number freed. */
int fp_subs_reap(void);

/* The registry's hooks: t's process exited (its subscribers get {"event":"exit"}, its
 * recording ends), exec'd ({"event":"exec"}), or t is dropped (its subscriptions end). */
void fp_subs_target_exit(struct fp_target *t);
void fp_subs_target_exec(struct fp_target *t);
void fp_subs_target_drop(struct fp_target *t);

#endif
