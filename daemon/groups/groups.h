/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Executables profiled as a whole (featprof enable --exe PATH; daemon/groups/groups.c): every
 * process running the file, now and later, and their forked children. A room above the
 * registry (it attaches and drops members' targets there) and below subscriptions
 * (which read a group through a cursor). Arguments come parsed (docs/ARCHITECTURE.md).
 */
#ifndef FP_GROUPS_H
#define FP_GROUPS_H

#include <stdbool.h>
#include <sys/types.h>

#include <linux/types.h>

#include "bpf/featprof_bpf.h"	/* FP_MAX_GROUPS */
#include "common/err.h"
#include "common/protocol.h"
#include "util/wants.h"

#define FP_GROUP_KEEP_EXITED 32	/* exited processes whose own figures a group keeps */
/* Members with a target of their own (per-process figures, ~30 descriptors and a BPF
 * load each); the others are measured by the file's one link, in the group's sum. */
#define FP_GROUP_OWN_MAX 64

struct fp_client;
struct json_object;
struct fp_target;
struct fp_group_cursor;

/* enable (on) or disable what names asks for in every process running path; the group
 * is created by its first enable and ends (figures kept) when nothing is wanted. */
int fp_group_enable(const char *path, const struct fp_wants *names, bool on,
		    struct json_object **res, struct fp_err *e);
/* The group's figures: summed over its processes, each one's beside. */
int fp_group_stats(const char *path, struct json_object **res, struct fp_err *e);
/* Sampling on or off in every member, and in those that join. */
int fp_group_sample(const char *path, int hz, bool on, bool remote,
		    struct json_object **res, struct fp_err *e);
/* The group of path (its number, 1..FP_MAX_GROUPS), or -ENOTCONN with e filled. */
int fp_group_find(const char *path, struct fp_err *e);
const char *fp_group_path(int group);
/* The watcher saw pid exec the group's file or fork from a member. */
void fp_group_join(int group, pid_t pid);
/* Gives one waiting member of each group its own target; true while more wait. */
bool fp_groups_run(void);
/* The registry's retired hook: a member's figures join its group's exited sum and its
 * target is dropped; other targets are left alone. */
void fp_group_member_retired(struct fp_target *t);
/* fp_target__strays of t, the breakpoints of its executable group's file link (if it is
 * a member) being featprofd's too. */
int fp_group_strays(const struct fp_target *t);
struct json_object *fp_groups_status(void);
/*
 * featprof run: a group for the process tree of pid (c's child, waiting to exec path):
 * from its exec on, path's regions that names asks for, its forks and whatever they exec
 * (each with a target of its own while c's user could ptrace it). *group: its number.
 * hz: each process sampled at hz from its attach on, each sample's call stack taken by
 * unwind (FP_UNWIND_FP or _DWARF; run --stacks); 0: not sampled.
 */
int fp_group_run_start(const char *path, pid_t pid, bool stops,
		       const struct fp_client *c, const struct fp_wants *names,
		       int hz, int unwind, int *group, struct fp_err *e);
/* The run's first process, stopped at its exec by the client, gets its own target (all
 * its life, its libraries); res says whether it could. */
int fp_group_run_attach(int group, const struct fp_client *c,
			struct json_object **res, struct fp_err *e);
/* The run's figures (as stats --exe's, and "run_pid"); the run ends. */
int fp_group_run_finish(int group, const struct fp_client *c,
			struct json_object **res, struct fp_err *e);
/* Ends the runs of clients that are gone; before the clients are freed. */
void fp_group_runs_reap(void);
void fp_groups_free(void);

/*
 * A reader of a group's figures per interval (top and stream --exe): each push carries
 * the members' figures since the last one, those of members gone meanwhile included.
 * The group keeps its cursors, so a member that goes updates them itself.
 */
struct fp_group_cursor *fp_group_cursor_new(int group);
/* The interval's figures (NULL: the group is gone). */
struct json_object *fp_group_cursor_tick(struct fp_group_cursor *cur, unsigned interval_ms);
void fp_group_cursor_free(struct fp_group_cursor *cur);

#endif
