// SPDX-License-Identifier: GPL-2.0
/*
 * Subscriptions (daemon/streams/subs.h). A table of FP_MAX_SUBS, at most a quarter of it per
 * unprivileged uid. A subscription that ends is marked dead and freed by fp_subs_reap()
 * at the end of the loop round, so nothing reorders the table while a handler or a push
 * of that round runs.
 */
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clients/client.h"
#include "util/clock.h"
#include "common/err.h"
#include "groups/groups.h"
#include "registry/registry.h"
#include "report/report.h"
#include "sample/sample.h"
#include "streams_impl.h"
#include "subs.h"

struct sub {
	int id;
	struct fp_client *c;
	pid_t pid;			/* a process's (and a recording's), else 0 */
	unsigned interval_ms;
	uint64_t due_ns;
	struct fp_snapshot *prev;	/* a process's figures at the last push */
	struct fp_recording *rec;	/* a recording */
	struct fp_group_cursor *cursor;	/* an executable's */
	int group;
	bool dead;
};

static struct sub subs[FP_MAX_SUBS];
static int nsubs, next_id;

/*
 * Room for one more subscription of c: FP_MAX_SUBS in all, a quarter of them per
 * unprivileged uid. The new one (zeroed, with its id, client and interval), or NULL with
 * -EBUSY recorded in e.
 */
static struct sub *new_sub(struct fp_client *c, unsigned interval_ms, struct fp_err *e)
{
	struct sub *sb;
	int i, mine = 0;

	if (nsubs >= FP_MAX_SUBS) {
		fp_fail(e, EBUSY, "too many subscriptions");
		return NULL;
	}
	for (i = 0; !fp_peer_privileged(&c->peer) && i < nsubs; i++)
		mine += !subs[i].dead && subs[i].c->peer.cred.uid == c->peer.cred.uid;
	if (mine >= FP_MAX_SUBS / 4) {
		fp_fail(e, EBUSY, "too many subscriptions for uid %u (%d)",
			(unsigned)c->peer.cred.uid, FP_MAX_SUBS / 4);
		return NULL;
	}
	sb = &subs[nsubs];
	memset(sb, 0, sizeof(*sb));
	sb->id = ++next_id;
	sb->c = c;
	sb->interval_ms = interval_ms;
	sb->due_ns = fp_mono_ns() + (uint64_t)interval_ms * 1000000ULL;
	return sb;	/* taken by nsubs++ once it is complete */
}

int fp_subs_pid(struct fp_client *c, struct fp_target *t, unsigned interval_ms,
		int *id, struct fp_err *e)
{
	struct sub *sb = new_sub(c, interval_ms, e);

	if (!sb)
		return -EBUSY;
	sb->pid = fp_target__pid(t);
	sb->prev = fp_target__snapshot(t);
	nsubs++;
	*id = sb->id;
	return 0;
}

int fp_subs_exe(struct fp_client *c, int group, unsigned interval_ms, int *id,
		struct fp_err *e)
{
	struct sub *sb = new_sub(c, interval_ms, e);

	if (!sb)
		return -EBUSY;
	sb->group = group;
	sb->cursor = fp_group_cursor_new(group);
	if (!sb->cursor)
		return fp_fail(e, ENOMEM, "out of memory");
	nsubs++;
	*id = sb->id;
	return 0;
}

int fp_subs_record(struct fp_client *c, struct fp_target *t, unsigned duration_ms,
		   struct json_object **res, struct fp_err *e)
{
	struct sub *sb = new_sub(c, 0, e);
	int ret;

	if (!sb)
		return -EBUSY;
	sb->rec = fp_recording_start(t, duration_ms, res, &ret, e);
	if (!sb->rec)
		return ret;
	sb->pid = fp_target__pid(t);
	sb->due_ns = fp_mono_ns();	/* its first drain sets the pace */
	nsubs++;
	json_object_object_add(*res, "record", json_object_new_int(sb->id));
	return 0;
}

int fp_subs_cancel(struct fp_client *c, int id, struct fp_err *e)
{
	int i;

	for (i = 0; i < nsubs; i++)
		if (subs[i].id == id && subs[i].c == c && !subs[i].dead) {
			subs[i].dead = true;
			return 0;
		}
	return fp_fail(e, EINVAL, "no subscription %d of yours", id);
}

int fp_subs_count(void)
{
	int i, n = 0;

	for (i = 0; i < nsubs; i++)
		n += !subs[i].dead;
	return n;
}

/* --- the registry's hooks ------------------------------------------------------------ */

static void push_event(pid_t pid, const char *event)
{
	int i;

	for (i = 0; i < nsubs; i++)
		if (!subs[i].dead && subs[i].pid == pid)
			fp_client_push(subs[i].c, subs[i].id, pid, NULL, "event",
				       json_object_new_string(event));
}

void fp_subs_target_exit(struct fp_target *t)
{
	int i;

	push_event(fp_target__pid(t), "exit");
	for (i = 0; i < nsubs; i++)	/* a recording ends with an error: the exit */
		if (subs[i].rec && subs[i].pid == fp_target__pid(t)) {
			subs[i].dead = true;
			fp_recording_free(subs[i].rec, t);	/* before the object goes */
			subs[i].rec = NULL;
		}
}

void fp_subs_target_exec(struct fp_target *t)
{
	push_event(fp_target__pid(t), "exec");
}

void fp_subs_target_drop(struct fp_target *t)
{
	int i;

	for (i = 0; i < nsubs; i++)
		if (subs[i].pid == fp_target__pid(t)) {
			subs[i].dead = true;
			fp_recording_free(subs[i].rec, t);	/* t is about to go */
			subs[i].rec = NULL;
		}
}

/* --- pushes -------------------------------------------------------------------------- */

/* A process's figures since the last push. */
static void pid_tick(struct sub *sb)
{
	struct fp_target *t = fp_registry_find(sb->pid);
	struct fp_snapshot *cur;
	struct json_object *st, *sr;

	if (!t || fp_target__exited(t))
		return;
	st = fp_registry_interval(t, sb->prev, &cur);
	if (!cur)
		return;
	fp_snapshot__free(sb->prev);
	sb->prev = cur;
	if (!st)
		return;
	if ((sr = fp_sample_report_brief(t)))	/* cumulative, since sampling began: */
		json_object_object_add(st, "sampling", sr);	/* not merged */
	json_object_object_add(st, "interval_ns",
			       json_object_new_int64((int64_t)sb->interval_ms * 1000000));
	fp_client_push(sb->c, sb->id, sb->pid, NULL, "stats", st);
}

static void exe_tick(struct sub *sb)
{
	struct json_object *st = fp_group_cursor_tick(sb->cursor, sb->interval_ms);

	if (st)
		fp_client_push(sb->c, sb->id, 0, fp_group_path(sb->group), "stats", st);
}

void fp_subs_run(void)
{
	uint64_t now = fp_mono_ns(), next;
	int i;

	for (i = 0; i < nsubs; i++) {
		struct sub *sb = &subs[i];

		if (sb->dead || sb->c->dead || sb->due_ns > now)
			continue;
		sb->due_ns = now + (uint64_t)sb->interval_ms * 1000000ULL;
		if (sb->rec) {
			next = fp_recording_tick(sb->rec, fp_registry_find(sb->pid), sb->c,
						 sb->id);
			sb->dead = !next;
			sb->due_ns = now + next;
		} else if (sb->cursor) {
			exe_tick(sb);
		} else {
			pid_tick(sb);
		}
	}
}

uint64_t fp_subs_next_due(void)
{
	uint64_t due = UINT64_MAX;
	int i;

	for (i = 0; i < nsubs; i++)
		if (!subs[i].dead && subs[i].due_ns < due)
			due = subs[i].due_ns;
	return due;
}

int fp_subs_reap(void)
{
	int i, k = 0, freed;

	for (i = 0; i < nsubs; i++) {
		struct sub *sb = &subs[i];

		if (!sb->dead && !sb->c->dead) {
			subs[k++] = *sb;
			continue;
		}
		fp_recording_free(sb->rec, sb->rec ? fp_registry_find(sb->pid) : NULL);
		fp_snapshot__free(sb->prev);
		fp_group_cursor_free(sb->cursor);
	}
	freed = nsubs - k;
	nsubs = k;
	return freed;
}
