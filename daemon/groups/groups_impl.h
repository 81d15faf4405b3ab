/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The groups module's one private header (daemon/groups/): the executable groups' state
 * and what its files call of each other -- groups.c (membership, the file's target,
 * enable, stats), groups_run.c (runs), groups_cursor.c (the readers per interval),
 * groups_report.c (replies) and merge.c (sums). No other module includes it
 * (scripts/layers.py); tests/unit/test_merge.c does, for merge.c.
 */
#ifndef FP_GROUPS_IMPL_H
#define FP_GROUPS_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"
#include "groups.h"
#include "util/wants.h"

struct fp_client;
struct fp_snapshot;
struct fp_target;
struct json_object;

/* One member's figures at a cursor's last push (pid 0: the file's target). */
struct member_prev {
	pid_t pid;
	struct fp_snapshot *snap;
};

struct fp_group_cursor {
	int gi;
	struct member_prev *mprev;
	int nmprev;
	struct json_object *pending;	/* members gone since the last push, summed */
	uint64_t last_ns;
	struct fp_group_cursor *next;	/* the group's cursors */
};

struct fp_group {
	char *path;
	uint64_t dev, ino;		/* stat(2) of path at enable */
	int fd;				/* the file, open since the enable (-1: none) */
	struct fp_target *file;		/* the file's target: one link per file, measuring
					 * members without a target of their own */
	struct json_object *file_gone;	/* figures of earlier file targets (followed again) */
	struct fp_wants wants;
	pid_t *live;			/* members attached now (their targets) */
	int nlive;
	pid_t *pending;			/* members waiting for a target of their own, one
					 * per loop round; measured by the file's meanwhile */
	int npending;
	uint64_t summed;		/* members beyond FP_GROUP_OWN_MAX or the daemon's
					 * room: measured by the file's target, in the sum only */
	struct json_object *exited;	/* summed figures of members gone */
	struct json_object *exited_procs;	/* the last ones' own figures */
	uint64_t joined, missed, gone;	/* processes attached, gone before, exited */
	bool ended;			/* disabled: not followed, figures kept */
	int sample_hz;			/* sampling every member at this rate, else 0 */
	bool sample_remote;		/* ... by the sampler thread (--remote) */
	int sample_unwind;		/* ... with each sample's call stack: FP_UNWIND_*
					 * (a run's --stacks) */
	struct fp_group_cursor *cursors;
	/* a run's process tree (featprof run), not every process of the file: */
	pid_t run_pid;			/* its first process, else 0 */
	uid_t run_uid;			/* who runs it ((uid_t)-1: the privileged) */
	const struct fp_client *run_client;	/* the client that started it */
	bool run_stops;			/* its first process stops at its exec until its own
					 * target is attached (run_attach) */
	bool run_ip;			/* ... and the file's link leaves the regions that
					 * time themselves in-process to the members */
	uint64_t ip_lost;		/* run_ip: members gone before their arena was read
					 * (their in-process figures, if any, lost) */
};

extern struct fp_group *fp_group_tab[FP_MAX_GROUPS];	/* group number = index + 1 */

/* t (may be NULL) is a live member of group gi with a target of its own. */
bool fp_group__is_member(const struct fp_target *t, int gi);

/* t (a member or the file's target) is gone: its last interval joins each cursor's next
 * push. */
void fp_group__members_gone(struct fp_group *g, struct fp_target *t);
/* The group's process counts, in stats --exe, every push and status. */
void fp_group__keys(struct json_object *o, const struct fp_group *g);

/* groups.c, for groups_run.c: */
struct stat;
void fp_group__free(struct fp_group *g);
int fp_group__watch_map(const char *name);	/* the watcher's map of that name */
int fp_group__own(int gi, pid_t pid);		/* pid a member with a target of its own */
void fp_group__file_start(int gi);		/* the group's file target attached */
/* A new group for path in the table, not yet followed; *gi its index, sb the file's. */
int fp_group__alloc(const char *path, const struct fp_wants *names, int *gi,
		    struct stat *sb, struct fp_err *e);
void fp_group__end(struct fp_group *g);	/* not followed; members detached, summed */
struct json_object *fp_group__stats(struct fp_group *g);	/* the group's figures */

/* groups_report.c: the replies of enable, sample and runs. */
/* A run's replies: its first process attached (own: a target of its own), its end (the
 * group's figures and the run's pid). */
struct json_object *fp_group__run_attach_reply(bool own);
struct json_object *fp_group__run_reply(struct fp_group *g);
struct json_object *fp_group__enable_reply(const struct fp_group *g, const char *path,
					   bool ended);
struct json_object *fp_group__sample_reply(const struct fp_group *g, bool on, int started,
					   int failed);

/* --- merge.c --- */
/* Summing one process's figures (a stats reply) into another's: daemon/groups/merge.c. */
struct json_object;

/*
 * Sums src's figures into dst: numbers add (min_* take the least, max_* the largest,
 * elapsed and the sampling rate's keys the largest), objects recurse, arrays of named
 * objects (regions, features) merge by name. Keys that describe one process (pid, comm)
 * and arrays without names (paths) are not summed.
 */
void fp_merge_figures(struct json_object *dst, struct json_object *src);

#endif
