// SPDX-License-Identifier: GPL-2.0
/*
 * Readers of an executable group's figures per interval (top and stream --exe), a part
 * of the groups room (daemon/groups/groups_impl.h).
 *
 * A push carries the group's figures of the interval: each live member's since the last
 * push (or since it joined, or since the cursor began), plus the last figures of members
 * that exited meanwhile (taken at their exit), summed as stats --exe sums; the members'
 * own beside them in "processes".
 */
#include <json-c/json.h>
#include <stdlib.h>

#include "util/clock.h"
#include "groups_impl.h"
#include "registry/registry.h"
#include "targets/target.h"

static struct fp_snapshot **prev_of(struct fp_group_cursor *cur, pid_t pid)
{
	int i;

	for (i = 0; i < cur->nmprev; i++)
		if (cur->mprev[i].pid == pid)
			return &cur->mprev[i].snap;
	return NULL;
}

/* t (a member, or the file's target) is gone: its last interval joins cur's next push. */
static void cursor_member_gone(struct fp_group_cursor *cur, struct fp_target *t)
{
	struct fp_snapshot **prev = prev_of(cur, fp_target__pid(t)), *snap = NULL;
	struct json_object *st = fp_registry_interval(t, prev ? *prev : NULL, &snap);
	int i;

	fp_snapshot__free(snap);
	if (st) {
		if (!cur->pending)
			cur->pending = json_object_new_object();
		fp_merge_figures(cur->pending, st);
		json_object_put(st);
	}
	for (i = 0; prev && i < cur->nmprev; i++)
		if (cur->mprev[i].pid == fp_target__pid(t)) {
			fp_snapshot__free(cur->mprev[i].snap);
			cur->mprev[i] = cur->mprev[--cur->nmprev];
		}
}

void fp_group__members_gone(struct fp_group *g, struct fp_target *t)
{
	struct fp_group_cursor *c;

	for (c = g->cursors; c; c = c->next)
		cursor_member_gone(c, t);
}

static void mprev_free(struct fp_group_cursor *cur)
{
	int i;

	for (i = 0; i < cur->nmprev; i++)
		fp_snapshot__free(cur->mprev[i].snap);
	free(cur->mprev);
	cur->mprev = NULL;
	cur->nmprev = 0;
}

/* The group's process counts, in stats --exe, every push and status. */
void fp_group__keys(struct json_object *o, const struct fp_group *g)
{
	json_object_object_add(o, "processes_live", json_object_new_int(g->nlive));
	json_object_object_add(o, "processes_joined", json_object_new_int64((int64_t)g->joined));
	json_object_object_add(o, "processes_exited", json_object_new_int64((int64_t)g->gone));
	json_object_object_add(o, "processes_missed", json_object_new_int64((int64_t)g->missed));
	json_object_object_add(o, "processes_pending", json_object_new_int(g->npending));
	json_object_object_add(o, "processes_summed", json_object_new_int64((int64_t)g->summed));
	json_object_object_add(o, "processes_inprocess_unread",
			       json_object_new_int64((int64_t)g->ip_lost));
}

/* Each member's figures since cur's last look (into sum and procs, when given); the
 * snapshots taken replace cur's (members gone drop out). */
static void members_since(struct fp_group_cursor *cur, struct json_object *sum,
			  struct json_object *procs)
{
	struct fp_group *g = fp_group_tab[cur->gi];
	struct member_prev *next = calloc((size_t)g->nlive + 2, sizeof(*next));
	int i, n = 0;

	/* index nlive: the file's target (pid 0), its figures in the sum only */
	for (i = 0; next && i <= g->nlive; i++) {
		pid_t pid = i < g->nlive ? g->live[i] : 0;
		struct fp_target *t = pid ? fp_registry_find(pid) : g->file;
		struct fp_snapshot **prev = prev_of(cur, pid), *snap = NULL;
		struct json_object *st;

		if (!t)
			continue;
		st = fp_registry_interval(t, prev ? *prev : NULL, &snap);
		if (!snap) {
			json_object_put(st);
			continue;
		}
		next[n].pid = pid;
		next[n++].snap = snap;
		if (st && sum)
			fp_merge_figures(sum, st);
		if (st && procs && pid)
			json_object_array_add(procs, st);
		else
			json_object_put(st);
	}
	if (next) {
		mprev_free(cur);
		cur->mprev = next;
		cur->nmprev = n;
	}
}

struct fp_group_cursor *fp_group_cursor_new(int group)
{
	struct fp_group_cursor *cur;

	if (group < 1 || group > FP_MAX_GROUPS || !fp_group_tab[group - 1])
		return NULL;
	cur = calloc(1, sizeof(*cur));
	if (!cur)
		return NULL;
	cur->gi = group - 1;
	members_since(cur, NULL, NULL);
	cur->last_ns = fp_mono_ns();
	cur->next = fp_group_tab[cur->gi]->cursors;
	fp_group_tab[cur->gi]->cursors = cur;
	return cur;
}

struct json_object *fp_group_cursor_tick(struct fp_group_cursor *cur, unsigned interval_ms)
{
	struct json_object *sum, *procs;
	struct fp_group *g = cur->gi >= 0 ? fp_group_tab[cur->gi] : NULL;
	uint64_t now = fp_mono_ns();

	if (!g)	/* the group is gone */
		return NULL;
	sum = cur->pending ? cur->pending : json_object_new_object();
	cur->pending = NULL;
	procs = json_object_new_array();
	members_since(cur, sum, procs);
	json_object_object_add(sum, "exe", json_object_new_string(g->path));
	json_object_object_add(sum, "processes", procs);
	fp_group__keys(sum, g);
	json_object_object_add(sum, "interval_ns",
			       json_object_new_int64((int64_t)interval_ms * 1000000));
	json_object_object_add(sum, "elapsed_ns",
			       json_object_new_int64((int64_t)(now - cur->last_ns)));
	cur->last_ns = now;
	return sum;
}

void fp_group_cursor_free(struct fp_group_cursor *cur)
{
	struct fp_group_cursor **p;

	if (!cur)
		return;	/* unlinked from its group's list, if the group is still there */
	for (p = cur->gi >= 0 ? &fp_group_tab[cur->gi]->cursors : NULL; p && *p; p = &(*p)->next)
		if (*p == cur) {
			*p = cur->next;
			break;
		}
	mprev_free(cur);
	json_object_put(cur->pending);
	free(cur);
}
