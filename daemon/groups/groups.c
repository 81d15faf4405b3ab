// SPDX-License-Identifier: GPL-2.0
/*
 * Executables profiled as a whole (featprof enable --exe PATH): every process running
 * the file, now and later, and the children they fork.
 *
 * Membership comes from the kernel (bpf/watch.bpf.c): exec of the file (matched by
 * device and inode, so a copy elsewhere or a new file at the same path is another
 * program), fork of a member (in the kernel, so a grandchild follows before the daemon
 * has seen its parent), exit. The processes already running at the enable are found
 * once by a scan of /proc.
 *
 * Two kinds of link measure them (docs/SERVICES.md): the file's target, one per group,
 * attached once with no pid filter, measures every member from its first region event
 * until the member has a target of its own; each member then gets an ordinary pid
 * target (daemon/registry/registry.c) with the group's wanted features (per-process figures, its
 * libraries), handed over by one write to the watcher's map (FP_MEMBER_OWN). A member
 * that exits has its figures summed into the group's and frees its slot, so a thousand
 * short-lived processes need no thousand targets; one gone before its own target was
 * attached is counted as missed, and its figures are the file's target's.
 */
#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "util/clock.h"
#include "common/err.h"
#include "bpf/featprof_bpf.h"
#include "groups_impl.h"
#include "clients/access.h"
#include "clients/client.h"
#include "inproc/inproc.h"
#include "util/log.h"
#include "registry/registry.h"
#include "sample/sample.h"
#include "kern/watch.h"

struct fp_group *fp_group_tab[FP_MAX_GROUPS];	/* group number = index + 1 */

void fp_group__free(struct fp_group *g)
{
	struct fp_group_cursor *c;

	if (!g)
		return;
	free(g->path);
	fp_wants_clear(&g->wants);
	free(g->live);
	free(g->pending);
	json_object_put(g->exited);
	json_object_put(g->exited_procs);
	json_object_put(g->file_gone);
	fp_target__free(g->file);
	if (g->fd >= 0)
		close(g->fd);
	for (c = g->cursors; c; c = c->next)	/* their subscriptions read no more */
		c->gi = -1;
	free(g);
}

void fp_groups_free(void)
{
	int i;

	for (i = 0; i < FP_MAX_GROUPS; i++) {
		fp_group__free(fp_group_tab[i]);
		fp_group_tab[i] = NULL;
	}
}

static int find_group(const char *path)
{
	int i;

	for (i = 0; i < FP_MAX_GROUPS; i++)
		if (fp_group_tab[i] && !fp_group_tab[i]->run_pid &&
		    !strcmp(fp_group_tab[i]->path, path))
			return i;	/* runs are found by their number only */
	return -1;
}

int fp_group_find(const char *path, struct fp_err *e)
{
	int gi = find_group(path);

	if (gi < 0)
		return fp_fail(e, ENOTCONN, "%s is not profiled as an executable", path);
	return gi + 1;
}

const char *fp_group_path(int group)
{
	return group >= 1 && group <= FP_MAX_GROUPS && fp_group_tab[group - 1]
		       ? fp_group_tab[group - 1]->path : "";
}

bool fp_group__is_member(const struct fp_target *t, int gi)
{
	return t && !fp_target__exited(t) && fp_target__group(t) == gi + 1;
}

/* The group of a target (a member or the file's), NULL: none. */
static struct fp_group *group_of(const struct fp_target *t)
{
	int group = fp_target__group(t);

	return group >= 1 && group <= FP_MAX_GROUPS ? fp_group_tab[group - 1] : NULL;
}

int fp_group_strays(const struct fp_target *t)
{
	const struct fp_group *g = group_of(t);

	return g ? fp_target__strays(t, g->file, g->dev, g->ino)
		 : fp_target__strays(t, NULL, 0, 0);
}

static struct fp_file_key file_key(const struct fp_group *g)
{
	/* the kernel's dev_t: major << 20 | minor (stat(2) encodes it otherwise) */
	struct fp_file_key k = { ((uint64_t)major(g->dev) << 20) | minor(g->dev), g->ino };

	return k;
}

int fp_group__watch_map(const char *name)	/* the watcher's "watched" or "exes" */
{
	return fp_watch__map_fd(fp_registry_watch(), name);
}

/* --- members ------------------------------------------------------------------------- */

static void remove_pid(pid_t *v, int *n, pid_t pid)
{
	int i;

	for (i = 0; i < *n; i++)
		if (v[i] == pid)
			v[i] = v[--*n];
}

static int add_pid(pid_t **v, int *n, pid_t pid)
{
	pid_t *a = realloc(*v, sizeof(*a) * (size_t)(*n + 1));

	if (!a)
		return -ENOMEM;
	*v = a;
	(*v)[(*n)++] = pid;
	return 0;
}

/* The group's wants into t (a member or the file's target), enabled (on) or the regions
 * no longer wanted disabled. 0 or -errno (e filled). */
static int take_wants(const struct fp_group *g, struct fp_target *t, bool on, struct fp_err *e)
{
	if (fp_target__set_wants(t, &g->wants))
		return fp_fail(e, ENOMEM, "out of memory");
	return fp_target__apply_wants(t, on, e);
}

/* The group's wants into t, its regions enabled, its sampling started. */
static void member_start(struct fp_group *g, int gi, struct fp_target *t)
{
	int pid = (int)fp_target__pid(t);
	__u32 key = (__u32)pid, own = ((__u32)gi + 1) | FP_MEMBER_OWN;
	struct fp_err e = { 0 };
	int ret;

	fp_target__join_group(t, gi + 1);
	if (g->run_pid)	/* a run's process: its arena began in the run */
		fp_inproc__run_member(fp_target__inproc(t));
	/* measured by the file's link until the map says this object's turn (below) */
	if (g->file && !fp_target__exited(g->file))
		fp_target__set_member_group(t, own);
	ret = take_wants(g, t, true, &e);
	if (ret < 0)	/* the file's link, if any, keeps measuring it */
		fp_log(FP_LOG_WARN, "%s: pid %d: %s", g->path, pid, e.msg);
	else if (fp_target__member_group(t) &&
		 bpf_map_update_elem(fp_group__watch_map("watched"), &key, &own, BPF_EXIST))
		fp_log(FP_LOG_DEBUG, "%s: pid %d left before its handover", g->path, pid);
	fp_registry_sync_dl_hook(t);
	fp_err_clear(&e);
	if (g->sample_hz &&
	    fp_sample_start(t, g->sample_hz, g->sample_remote, g->sample_unwind, &e) < 0)
		fp_log(FP_LOG_INFO, "%s: pid %d not sampled: %s", g->path, pid, e.msg);
}

/* Attaches pid as a member of group gi with the group's wanted regions. */
int fp_group__own(int gi, pid_t pid)
{
	struct fp_group *g = fp_group_tab[gi];
	struct fp_target *t = fp_registry_find(pid);
	struct fp_err e = { 0 };
	int ret;

	if (fp_group__is_member(t, gi))
		return 0;	/* already a member (the scan met a forked child, say) */
	if (t && fp_target__exited(t))
		fp_registry_drop(t);	/* a pid reused: the old figures are its own */
	else if (t) {
		fp_log(FP_LOG_INFO, "%s: pid %d is already a target of its own", g->path,
		       (int)pid);
		return -EEXIST;
	}
	struct fp_regdefs more = { 0 };

	/* the group's client definitions (function regions, say), for this member */
	ret = fp_wants_defs(&g->wants, &more, &e);
	if (!ret && g->sample_unwind)	/* its call stacks whether it has regions or not */
		ret = fp_registry_attach_any(pid, &more, &t, &e);
	else if (!ret)
		ret = fp_registry_attach(pid, &more, &t, &e);
	fp_regdefs__clear(&more);
	if (ret == -ESRCH) {
		g->missed++;
		g->ip_lost += g->run_ip;	/* the file's link has not its in-process regions */
		fp_log(FP_LOG_DEBUG, "%s: pid %d not joined: %s", g->path, (int)pid, e.msg);
		return -ESRCH;
	}
	if (ret) {	/* no room (targets, descriptors): the file's link has it */
		g->summed++;
		fp_log(FP_LOG_INFO, "%s: pid %d measured in the sum only: %s", g->path,
		       (int)pid, e.msg);
		return -ENOSPC;
	}
	member_start(g, gi, t);
	if (add_pid(&g->live, &g->nlive, pid))
		fp_log(FP_LOG_WARN, "%s: pid %d: out of memory: not in the group's sum",
		       g->path, (int)pid);
	g->joined++;
	fp_log(FP_LOG_DEBUG, "%s: pid %d joined (%d sites)", g->path, (int)pid,
	       fp_target__attached_sites(t));
	return 0;
}

/*
 * A new member: measured by the file's link from now on (the watcher's map says so).
 * The first FP_GROUP_OWN_NOW get a target of their own at once (exact per-process
 * figures from the start); later ones queue for one while the group has fewer than
 * FP_GROUP_OWN_MAX, and fp_groups_run() attaches one per loop round, so that a scan of
 * a thousand processes does not keep the daemon from its clients for minutes (each
 * attach is a BPF load, ~0.1 s). Until then a member's figures are in the group's sum
 * ("shared"), not in its own.
 */
#define FP_GROUP_OWN_NOW 8
/*
 * A run's new member: one its user may not trace leaves the run; one running the run's
 * file other than the first (a forked child) stays with the file's link all its life,
 * in the run's sum: a handover to a target of its own would lose a region open at the
 * switch. True when it gets no target of its own.
 */
static bool run_member_shared(struct fp_group *g, pid_t pid)
{
	struct stat st;
	char p[64];

	if (!g->run_pid)
		return false;
	if (g->run_uid != (uid_t)-1 && fp_owner(pid) != g->run_uid) {
		__u32 key = (__u32)pid;	/* ran a set-user-ID program, say: not the user's */

		bpf_map_delete_elem(fp_group__watch_map("watched"), &key);
		g->missed++;
		fp_log(FP_LOG_INFO, "run of pid %d: pid %d left it (its user may not trace it)",
		       (int)g->run_pid, (int)pid);
		return true;
	}
	snprintf(p, sizeof(p), "/proc/%d/exe", (int)pid);
	if (pid == g->run_pid || g->run_ip || stat(p, &st) || st.st_dev != g->dev ||
	    st.st_ino != g->ino)
		return false;	/* run_ip: the file's link has not its in-process regions */
	g->summed++;
	return true;
}

static int join(int gi, pid_t pid)
{
	struct fp_group *g = fp_group_tab[gi];
	struct fp_target *t = fp_registry_find(pid);
	int i;

	if (fp_group__is_member(t, gi) || run_member_shared(g, pid))
		return 0;
	for (i = 0; i < g->npending; i++)
		if (g->pending[i] == pid)
			return 0;
	if (g->nlive + g->npending < FP_GROUP_OWN_NOW)
		return fp_group__own(gi, pid);
	if (g->nlive + g->npending >= FP_GROUP_OWN_MAX ||
	    add_pid(&g->pending, &g->npending, pid))
		g->summed++;	/* measured by the file's link, in the sum only */
	return 0;
}

bool fp_groups_run(void)
{
	bool more = false;
	int gi;

	for (gi = 0; gi < FP_MAX_GROUPS; gi++) {
		struct fp_group *g = fp_group_tab[gi];
		pid_t pid;

		if (!g || !g->npending)
			continue;
		pid = g->pending[0];
		memmove(g->pending, g->pending + 1, sizeof(pid_t) * (size_t)--g->npending);
		if (!g->ended)
			fp_group__own(gi, pid);
		else
			g->npending = 0;
		more |= g->npending > 0;
	}
	return more;
}

void fp_group_join(int group, pid_t pid)
{
	if (group < 1 || group > FP_MAX_GROUPS || !fp_group_tab[group - 1] ||
	    fp_group_tab[group - 1]->ended)
		return;
	join(group - 1, pid);
}

/* The processes running the file now: one scan of /proc at the enable. */
static void scan(int gi)
{
	struct fp_group *g = fp_group_tab[gi];
	DIR *d = opendir("/proc");
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char p[300];
		struct stat st;
		long pid = strtol(e->d_name, NULL, 10);
		__u32 key, val = (__u32)gi + 1;

		if (pid <= 0)
			continue;
		snprintf(p, sizeof(p), "/proc/%ld/exe", pid);
		if (stat(p, &st) || st.st_dev != g->dev || st.st_ino != g->ino)
			continue;
		key = (__u32)pid;	/* forks from now on follow it in the kernel */
		if (bpf_map_update_elem(fp_group__watch_map("watched"), &key, &val, BPF_ANY))
			fp_log(FP_LOG_WARN, "%s: pid %d: its forks will not be followed: %s",
			       g->path, (int)pid, strerror(errno));
		join(gi, (pid_t)pid);
	}
	if (d)
		closedir(d);
}

/* Whether t's program has regions that time themselves in-process (its runtime read or
 * not: a process gone before that). */
static bool timed_itself(const struct fp_target *t)
{
	const struct fp_catalog *cat = fp_target__catalog(t);
	int r;

	for (r = 0; cat && r < cat->nregions; r++)
		if (fp_inproc__file_can(cat, r))
			return true;
	return false;
}

void fp_group_member_retired(struct fp_target *t)
{
	struct fp_group *g = group_of(t);
	struct json_object *st;

	if (!g || !fp_target__pid(t))
		return;
	st = fp_registry_stats(t);
	if (g->run_ip && !fp_inproc__had_arena(fp_target__inproc(t)) && timed_itself(t))
		g->ip_lost++;	/* exited before its arena was read (a fork's quick _exit) */
	if (st) {
		fp_merge_figures(g->exited, st);
		if (json_object_array_length(g->exited_procs) >= FP_GROUP_KEEP_EXITED)
			json_object_array_del_idx(g->exited_procs, 0, 1);
		json_object_array_add(g->exited_procs, st);
	}
	fp_group__members_gone(g, t);	/* its last figures go into the next push */
	remove_pid(g->live, &g->nlive, fp_target__pid(t));
	g->gone++;
	fp_registry_drop(t);
}

/* --- the file's target ---------------------------------------------------------------
 *
 * One target per group for the file itself: its sites attached once with no pid filter,
 * so the kernel puts the breakpoints into every process that maps the inode, from its
 * exec or fork on. Its BPF program measures the group's members (the watcher's map,
 * written in the kernel at exec and fork) until a member has a target of its own, which
 * fp_group__own() hands it to; a process that is gone before that (a short-lived one) is measured
 * there all its life. Its figures are summed into the group's and shown as "shared".
 */
static void file_wants(struct fp_group *g, bool on)
{
	struct fp_err e = { 0 };

	if (g->file && !fp_target__exited(g->file) && take_wants(g, g->file, on, &e) < 0)
		fp_log(FP_LOG_WARN, "%s: %s", g->path, e.msg);
}

void fp_group__file_start(int gi)
{
	struct fp_group *g = fp_group_tab[gi];
	const struct fp_server_opts *o = fp_registry_opts();
	struct fp_err e = { 0 };
	int r;

	g->file = fp_target__new_file(g->fd, g->path, gi + 1, o->cal->optimized, &o->defs, &e);
	if (!g->file) {	/* its regions are all in libraries, say: per process only */
		fp_log(FP_LOG_INFO, "%s: no link for the file (%s): processes are measured "
		       "from their own attach on", g->path, e.msg);
		return;
	}
	/* a run whose processes are attached before they run: in-process regions are
	 * theirs alone (the file's traps would time them twice, and cost a trap each) */
	fp_target__set_file_skips_ip(g->file, g->run_stops);
	for (r = 0; g->run_stops && r < fp_target__catalog(g->file)->nregions && !g->run_ip; r++)
		g->run_ip = fp_inproc__file_can(fp_target__catalog(g->file), r);
	file_wants(g, true);
}

/* Detaches the file's target; its figures stay (t->last). */
static void file_end(struct fp_group *g)
{
	if (!g->file || fp_target__exited(g->file))
		return;
	fp_group__members_gone(g, g->file);	/* its last interval goes into the next push */
	fp_target__retire(g->file);
}

/* Followed again after a disable: a new file target, the old one's figures kept. */
static void file_restart(int gi)
{
	struct fp_group *g = fp_group_tab[gi];
	struct json_object *st = g->file ? fp_registry_stats(g->file) : NULL;

	if (st) {
		if (!g->file_gone)
			g->file_gone = json_object_new_object();
		fp_merge_figures(g->file_gone, st);
		json_object_put(st);
	}
	fp_target__free(g->file);
	g->file = NULL;
	fp_group__file_start(gi);
}

/* --- enable, disable, stats, sample -------------------------------------------------- */

/* The kernel reports the file's exec as the group's (gi + 1). 0 or -errno. */
static int watch_file(int gi)
{
	struct fp_file_key key = file_key(fp_group_tab[gi]);
	__u32 val = (__u32)gi + 1;

	return bpf_map_update_elem(fp_group__watch_map("exes"), &key, &val, BPF_ANY) ? -errno : 0;
}

/* A disabled group followed again. */
static int group_again(int gi, const struct fp_wants *names, struct fp_err *e)
{
	struct fp_group *g = fp_group_tab[gi];
	int ret;

	if (fp_wants_update(&g->wants, names, true))
		return fp_fail(e, ENOMEM, "out of memory");
	ret = watch_file(gi);
	if (ret)
		return fp_fail(e, -ret, "%s: cannot watch its exec: %s", g->path, strerror(-ret));
	g->ended = false;
	file_restart(gi);
	scan(gi);
	return 0;
}

/* The file at path, opened for a new group: fd, or -ESRCH with e filled. */
static int open_file(const char *path, struct stat *sb, struct fp_err *e)
{
	/* non-blocking: a FIFO named here would block every client until a writer came;
	 * it is refused below as not a regular file */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	errno = fd < 0 ? errno : 0;
	if (fd < 0 || fstat(fd, sb) || !S_ISREG(sb->st_mode)) {
		fp_fail(e, ESRCH, "%s: %s", path, errno ? strerror(errno) : "not a regular file");
		if (fd >= 0)
			close(fd);
		return -ESRCH;
	}
	return fd;
}

/* A new group for path in the table, not yet followed; *gi its index, sb the file's. */
int fp_group__alloc(const char *path, const struct fp_wants *names, int *gi,
		    struct stat *sb, struct fp_err *e)
{
	struct fp_group *g;
	int fd = open_file(path, sb, e);

	if (fd < 0)
		return fd;
	for (*gi = 0; *gi < FP_MAX_GROUPS && fp_group_tab[*gi]; (*gi)++)
		;
	if (*gi == FP_MAX_GROUPS) {
		close(fd);
		return fp_fail(e, EBUSY, "too many executables (%d)", FP_MAX_GROUPS);
	}
	g = calloc(1, sizeof(*g));
	if (!g || !(g->path = strdup(path)) || fp_wants_copy(&g->wants, names)) {
		if (g)
			free(g->path);
		free(g);
		close(fd);
		return fp_fail(e, ENOMEM, "out of memory");
	}
	g->fd = fd;
	g->dev = sb->st_dev;
	g->ino = sb->st_ino;
	g->exited = json_object_new_object();
	g->exited_procs = json_object_new_array();
	fp_group_tab[*gi] = g;
	return 0;
}

/* A new group for path, followed; *gi its index. */
static int group_new(const char *path, const struct fp_wants *names, int *gi,
		     struct fp_err *e)
{
	struct stat sb;
	int st = fp_group__alloc(path, names, gi, &sb, e);
	struct fp_group *g;
	int ret;

	if (st)
		return st;
	g = fp_group_tab[*gi];
	ret = watch_file(*gi);
	if (ret) {
		fp_group_tab[*gi] = NULL;
		fp_group__free(g);
		return fp_fail(e, -ret, "%s: cannot watch its exec: %s", path, strerror(-ret));
	}
	fp_group__file_start(*gi);	/* before the scan: no member's start is missed */
	scan(*gi);
	fp_log(FP_LOG_INFO, "%s: profiled as an executable, %d processes now (%llu in the sum "
	       "only)", path, g->nlive + g->npending, (unsigned long long)g->summed);
	return 0;
}

/* What names asks for, on or off, in the file's target and every member. */
static int group_update(struct fp_group *g, const struct fp_wants *names,
			bool on, struct fp_err *e)
{
	int i;

	if (fp_wants_update(&g->wants, names, on))
		return fp_fail(e, ENOMEM, "out of memory");
	file_wants(g, on);
	for (i = 0; i < g->nlive; i++) {
		struct fp_target *t = fp_registry_find(g->live[i]);
		struct fp_err te = { 0 };	/* one member's: logged, the others go on */

		if (!t || fp_target__exited(t))
			continue;
		if (take_wants(g, t, on, &te) < 0)
			fp_log(FP_LOG_WARN, "%s: pid %d: %s", g->path, (int)fp_target__pid(t),
			       te.msg);
		fp_registry_sync_dl_hook(t);
	}
	return 0;
}

/* Threads the file's object held for group number gn (bpf/featprof.bpf.c "Handover")
 * that were inside a region when the group ended: let go, so that a group given the same
 * number later does not find them held. A deleted key's successor is the first key
 * again (the kernel's hash): the walk restarts after each deletion. */
static void forget_held(__u32 gn)
{
	int fd = fp_group__watch_map("held");
	__u32 k, next, v, *prev = NULL;

	while (fd >= 0 && !bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		if (!bpf_map_lookup_elem(fd, &k, &v) && (v & ~FP_HELD_RELEASED) == gn)
			bpf_map_delete_elem(fd, &k);
	}
}

/* Nothing wanted any more: not followed; members detached, their figures summed. */
void fp_group__end(struct fp_group *g)
{
	struct fp_file_key key = file_key(g);
	int i;

	bpf_map_delete_elem(fp_group__watch_map("exes"), &key);
	for (i = g->nlive - 1; i >= 0; i--) {
		struct fp_target *t = fp_registry_find(g->live[i]);
		__u32 k = (__u32)g->live[i];

		bpf_map_delete_elem(fp_group__watch_map("watched"), &k);
		if (t)
			fp_registry_exit(t);	/* detached; summed */
	}
	for (i = 0; i < g->npending; i++) {
		__u32 k = (__u32)g->pending[i];

		bpf_map_delete_elem(fp_group__watch_map("watched"), &k);
	}
	g->npending = 0;
	file_end(g);
	for (i = 0; i < FP_MAX_GROUPS; i++)	/* the file's link is gone: no more writes */
		if (fp_group_tab[i] == g)
			forget_held((__u32)i + 1);
	g->ended = true;
	fp_log(FP_LOG_INFO, "%s: no longer followed", g->path);
}

int fp_group_enable(const char *path, const struct fp_wants *names, bool on,
		    struct json_object **res, struct fp_err *e)
{
	int gi = find_group(path);
	int st;
	struct fp_group *g;
	bool ended;

	if (!fp_registry_watch())
		return fp_fail(e, EIO, "--exe needs the process watcher, which could not be "
			       "loaded here (see featprofd's log)");
	if (!on && (gi < 0 || fp_group_tab[gi]->ended))
		return fp_fail(e, ENOTCONN, "%s is not profiled as an executable", path);
	if (on && gi >= 0 && fp_group_tab[gi]->ended)
		st = group_again(gi, names, e);
	else if (on && gi < 0)
		st = group_new(path, names, &gi, e);
	else
		st = group_update(fp_group_tab[gi], names, on, e);
	if (st)
		return st;
	g = fp_group_tab[gi];
	ended = !on && fp_wants_empty(&g->wants);
	*res = fp_group__enable_reply(g, path, ended);
	if (ended)	/* stop following; the figures stay */
		fp_group__end(g);
	return 0;
}

int fp_group_stats(const char *path, struct json_object **res, struct fp_err *e)
{
	int gi = fp_group_find(path, e) - 1;

	if (gi < 0)
		return -ENOTCONN;
	*res = fp_group__stats(fp_group_tab[gi]);
	return 0;
}

int fp_group_sample(const char *path, int hz, bool on, bool remote,
		    struct json_object **res, struct fp_err *e)
{
	int gi = fp_group_find(path, e) - 1, i, started = 0, failed = 0, first = 0;
	struct fp_err fe = { 0 };	/* the first member's failure */
	struct fp_group *g;

	if (gi < 0)
		return -ENOTCONN;
	g = fp_group_tab[gi];
	if (on && g->ended)
		return fp_fail(e, EINVAL, "%s is no longer followed (disabled): enable --exe "
			       "again", g->path);
	for (i = 0; i < g->nlive; i++) {
		struct fp_target *t = fp_registry_find(g->live[i]);
		int ret;

		if (!t)
			continue;
		fp_sample_stop(t);	/* a restart takes the new rate */
		if (!on)
			continue;
		ret = fp_sample_start(t, hz, remote, 0, &fe);	/* the first stays */
		started += !ret;
		first = first ? first : ret;
		failed += ret != 0;
	}
	g->sample_hz = on ? hz : 0;
	g->sample_remote = remote;
	g->sample_unwind = 0;	/* exe_sample takes no stacks */
	if (on && failed && !started) { /* none could: the first one's failure, nothing changed */
		g->sample_hz = 0;
		return fp_fail(e, fe.code ? fe.code : -first, "%s: %s", g->path, fe.msg);
	}
	if (on)
		fp_log(FP_LOG_INFO, "%s: sampling at %d Hz, %d processes (%d could not)", g->path,
		       hz, started, failed);
	*res = fp_group__sample_reply(g, on, started, failed);
	return 0;
}
