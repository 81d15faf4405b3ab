// SPDX-License-Identifier: GPL-2.0
/*
 * Runs (featprof run), a part of the groups room (daemon/groups/groups_impl.h).
 *
 * A run is a group whose members are a process tree instead of every process of a file:
 * the client forks a child that waits before its exec, the daemon seeds the watcher's map
 * with the child and marks the group a run there (the kernel then keeps the child and
 * whatever it forks in the run, whatever they exec), attaches the file's target and the
 * client lets the child exec. So the run is measured from its first region event; its
 * members get targets of their own (their libraries) as any group's do.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <poll.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "clients/access.h"
#include "clients/client.h"
#include "common/err.h"
#include "groups_impl.h"
#include "util/log.h"
#include "registry/registry.h"
#include "targets/target.h"

#define FP_MAX_RUNS 8		/* runs at a time, of all users */
#define FP_MAX_RUNS_PER_UID 4	/* ... of one unprivileged user */

static int runs_of(uid_t uid)	/* (uid_t)-2: of anyone */
{
	int i, n = 0;

	for (i = 0; i < FP_MAX_GROUPS; i++)
		n += fp_group_tab[i] && fp_group_tab[i]->run_pid &&
		     (uid == (uid_t)-2 || fp_group_tab[i]->run_uid == uid);
	return n;
}

/* Whether uid may have featprofd measure the file that fd is: its user could exec it, and
 * it gains no privilege at exec (set-user-ID, set-group-ID, file capabilities). 0 or
 * -EPERM. */
static int run_file_ok(int fd, const struct stat *sb, uid_t uid, gid_t gid, struct fp_err *e)
{
	mode_t x = sb->st_uid == uid ? S_IXUSR : sb->st_gid == gid ? S_IXGRP : S_IXOTH;

	if (uid == (uid_t)-1)
		return 0;
	if (sb->st_mode & (S_ISUID | S_ISGID) ||
	    fgetxattr(fd, "security.capability", NULL, 0) > 0)
		return fp_fail(e, EPERM, "it gains privileges at exec (set-user-ID, set-group-ID "
			       "or file capabilities): run it as root to profile it");
	if (!(sb->st_mode & x))
		return fp_fail(e, EPERM, "not executable by uid %u", (unsigned)uid);
	return 0;
}

/* The run's group gi goes: not followed, freed; its number may be used again. */
static void run_free(int gi)
{
	__u32 key = (__u32)gi + 1, off = 0;
	struct fp_group *g = fp_group_tab[gi];

	if (!g->ended)
		fp_group__end(g);
	bpf_map_update_elem(fp_group__watch_map("runs"), &key, &off, BPF_ANY);
	key = (__u32)g->run_pid;
	bpf_map_delete_elem(fp_group__watch_map("watched"), &key);
	fp_group_tab[gi] = NULL;
	fp_group__free(g);
}

int fp_group_run_start(const char *path, pid_t pid, bool stops,
		       const struct fp_client *c, const struct fp_wants *names,
		       int hz, int unwind, int *group, struct fp_err *e)
{
	uid_t uid = fp_peer_privileged(&c->peer) ? (uid_t)-1 : c->peer.cred.uid;
	__u32 key = (__u32)pid, on = 1, val;
	int st;
	struct stat sb;
	int gi;

	if (!fp_registry_watch())
		return fp_fail(e, EIO, "run needs the process watcher, which could not be loaded "
			       "here (see featprofd's log)");
	if (runs_of((uid_t)-2) >= FP_MAX_RUNS ||
	    (uid != (uid_t)-1 && runs_of(uid) >= FP_MAX_RUNS_PER_UID)) {
		return fp_fail(e, EBUSY, "too many runs at a time (%d, %d per user)", FP_MAX_RUNS,
			       FP_MAX_RUNS_PER_UID);
	}
	if (fp_registry_find(pid) ||
	    !bpf_map_lookup_elem(fp_group__watch_map("watched"), &key, &val)) {
		return fp_fail(e, EBUSY, "pid %d is profiled already: a run starts with a new "
			       "process", (int)pid);
	}
	st = fp_group__alloc(path, names, &gi, &sb, e);
	if (st)
		return st;
	if (run_file_ok(fp_group_tab[gi]->fd, &sb, uid, c->peer.cred.gid, e)) {
		fp_group__free(fp_group_tab[gi]);
		fp_group_tab[gi] = NULL;
		return -EPERM;
	}
	fp_group_tab[gi]->run_pid = pid;
	fp_group_tab[gi]->run_uid = uid;
	fp_group_tab[gi]->run_client = c;
	fp_group_tab[gi]->run_stops = stops;
	fp_group_tab[gi]->sample_hz = hz;	/* each member from its start (member_start) */
	fp_group_tab[gi]->sample_unwind = unwind;
	key = (__u32)gi + 1;
	val = (__u32)gi + 1;
	if (bpf_map_update_elem(fp_group__watch_map("runs"), &key, &on, BPF_ANY) ||
	    (key = (__u32)pid,
	     bpf_map_update_elem(fp_group__watch_map("watched"), &key, &val, BPF_ANY))) {
		int no = errno;

		run_free(gi);
		return fp_fail(e, no, "cannot follow pid %d: %s", (int)pid, strerror(no));
	}
	fp_group__file_start(gi);
	*group = gi + 1;
	fp_log(FP_LOG_INFO, "run %d: pid %d, %s", gi + 1, (int)pid, path);
	return 0;
}

/* The run `group` of client c (its index), or -ENOTCONN with e filled. */
static int run_find(int group, const struct fp_client *c, struct fp_err *e)
{
	struct fp_group *g = group >= 1 && group <= FP_MAX_GROUPS ? fp_group_tab[group - 1]
								   : NULL;

	if (!g || !g->run_pid || g->run_client != c)
		return fp_fail(e, ENOTCONN, "no run %d of this connection", group);
	return group - 1;
}

int fp_group_run_attach(int group, const struct fp_client *c,
			struct json_object **res, struct fp_err *e)
{
	int gi = run_find(group, c, e);
	struct fp_target *t;

	if (gi < 0)
		return -ENOTCONN;
	/* at its exec (the watcher's event), or now */
	fp_group__own(gi, fp_group_tab[gi]->run_pid);
	t = fp_registry_find(fp_group_tab[gi]->run_pid);
	/* the client holds it at its entry: the libraries it needs are mapped now, and
	 * their sites attached before it runs on (a target made at the exec has not seen
	 * them yet) */
	if (fp_group__is_member(t, gi))
		fp_registry_refresh(t);
	*res = fp_group__run_attach_reply(fp_group__is_member(t, gi));
	return 0;
}

/* Members that exited and whose exit the loop has not met yet (a child that exited just
 * before the run's first process): retired now, so that the sum has their last figures
 * and says what they lost. */
static void reap_exited(struct fp_group *g)
{
	int i;

	for (i = g->nlive - 1; i >= 0; i--) {
		struct fp_target *t = fp_registry_find(g->live[i]);
		struct pollfd pf = { .fd = t ? fp_target__pidfd(t) : -1, .events = POLLIN };

		if (t && !fp_target__exited(t) && pf.fd >= 0 && poll(&pf, 1, 0) == 1)
			fp_registry_exit(t);	/* its group's hook takes it out of live */
	}
}

int fp_group_run_finish(int group, const struct fp_client *c,
			struct json_object **res, struct fp_err *e)
{
	int gi = run_find(group, c, e);

	if (gi < 0)
		return -ENOTCONN;
	reap_exited(fp_group_tab[gi]);
	/* read while the regions are enabled (a table says "off" after); run_free ends it */
	*res = fp_group__run_reply(fp_group_tab[gi]);
	run_free(gi);
	return 0;
}

void fp_group_runs_reap(void)
{
	int i;

	for (i = 0; i < FP_MAX_GROUPS; i++)
		if (fp_group_tab[i] && fp_group_tab[i]->run_pid &&
		    fp_group_tab[i]->run_client->dead)
			run_free(i);
}
