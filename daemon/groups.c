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
 * target with the group's wanted features (per-process figures, its libraries), handed
 * over by one write to the watcher's map (FP_MEMBER_OWN). A member that exits has its
 * figures summed into the group's and frees its slot, so a thousand short-lived
 * processes need no thousand targets; one gone before its own target was attached is
 * counted as missed, and its figures are the file's target's.
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
#include <unistd.h>

#include "featprof_bpf.h"
#include "log.h"
#include "sample.h"
#include "server_priv.h"
#include "watch.h"

static void strv_free(char **v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void group_free(struct group *g)
{
	if (!g)
		return;
	free(g->path);
	strv_free(g->features, g->nfeatures);
	strv_free(g->regions, g->nregions);
	free(g->live);
	free(g->pending);
	json_object_put(g->exited);
	json_object_put(g->exited_procs);
	json_object_put(g->file_gone);
	fp_target__free(g->file);
	if (g->fd >= 0)
		close(g->fd);
	free(g);
}

void fp_free_groups(struct server *s)
{
	int i;

	for (i = 0; i < FP_MAX_GROUPS; i++) {
		group_free(s->groups[i]);
		s->groups[i] = NULL;
	}
}

static int find_group(struct server *s, const char *path)
{
	int i;

	for (i = 0; i < FP_MAX_GROUPS; i++)
		if (s->groups[i] && !strcmp(s->groups[i]->path, path))
			return i;
	return -1;
}

static struct fp_file_key file_key(const struct group *g)
{
	/* the kernel's dev_t: major << 20 | minor (stat(2) encodes it otherwise) */
	struct fp_file_key k = { ((uint64_t)major(g->dev) << 20) | minor(g->dev), g->ino };

	return k;
}

/* --- summing figures ----------------------------------------------------------------- */

static int is_number(struct json_object *o)
{
	return json_object_is_type(o, json_type_int) || json_object_is_type(o, json_type_double);
}

static void merge(struct json_object *dst, struct json_object *src);

/* Keys of the sampling report that describe the rate, not a count: one value, not summed
 * (shares and standard errors are figured again from the sums: fp_sample_refigure). */
static int same_in_all(const char *k)
{
	return !strcmp(k, "hz") || !strcmp(k, "period_ns") || !strcmp(k, "tls_offset") ||
	       !strcmp(k, "duration_ns");
}

/* The sampling report (it has a clock): its feature sets are not summed (the union of
 * names would be needed; per process in "processes"). */
static int in_sampling(struct json_object *o)
{
	return json_object_object_get_ex(o, "clock", NULL);
}

static void sub_member_gone(struct server *s, struct sub *sb, struct fp_target *t);
static enum fp_status get_exe(struct json_object *req, const char **path, char *msg,
			      size_t msglen);

/* Arrays of objects with "name" (regions, features) merge by name; others are kept. */
static void merge_named(struct json_object *dst, struct json_object *src)
{
	size_t i, j, n = json_object_array_length(src);

	for (i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(src, i), *nm, *d = NULL;

		if (!json_object_is_type(e, json_type_object) ||
		    !json_object_object_get_ex(e, "name", &nm))
			return;
		for (j = 0; j < json_object_array_length(dst) && !d; j++) {
			struct json_object *x = json_object_array_get_idx(dst, j), *xn;

			if (json_object_object_get_ex(x, "name", &xn) &&
			    !strcmp(json_object_get_string(xn), json_object_get_string(nm)))
				d = x;
		}
		if (d) {
			merge(d, e);
		} else {
			struct json_object *copy = NULL;

			json_object_deep_copy(e, &copy, NULL);
			json_object_array_add(dst, copy);
		}
	}
}

/*
 * Sums src's figures into dst: numbers add (min_* take the least, max_* the largest,
 * elapsed the longest), objects recurse, named arrays merge by name. Keys that
 * describe one process (pid, comm) and arrays without names (paths) are not summed.
 */
static void merge(struct json_object *dst, struct json_object *src)
{
	json_object_object_foreach(src, k, v) {
		struct json_object *d;

		if (!strcmp(k, "pid") || !strcmp(k, "comm") || !strcmp(k, "paths") ||
		    !strcmp(k, "processes") || (!strcmp(k, "feature_sets") && in_sampling(dst)))
			continue;
		if (!json_object_object_get_ex(dst, k, &d)) {
			struct json_object *copy = NULL;

			json_object_deep_copy(v, &copy, NULL);
			json_object_object_add(dst, k, copy);
		} else if (is_number(d) && is_number(v)) {
			double a = json_object_get_double(d), b = json_object_get_double(v), r;

			r = !strncmp(k, "min", 3) ? (a < b ? a : b)
			    : !strncmp(k, "max", 3) || !strcmp(k, "elapsed_ns") || same_in_all(k)
				      ? (a > b ? a : b)
				      : a + b;
			if (json_object_is_type(d, json_type_int) &&
			    json_object_is_type(v, json_type_int))
				json_object_object_add(dst, k, json_object_new_int64((int64_t)r));
			else
				json_object_object_add(dst, k, json_object_new_double(r));
		} else if (json_object_is_type(d, json_type_object) &&
			   json_object_is_type(v, json_type_object)) {
			merge(d, v);
		} else if (json_object_is_type(d, json_type_array) &&
			   json_object_is_type(v, json_type_array)) {
			merge_named(d, v);
		}
	}
}

/* --- members ------------------------------------------------------------------------- */

static int group_of_target(struct server *s, const struct fp_target *t)
{
	return t->group > 0 && t->group <= FP_MAX_GROUPS && s->groups[t->group - 1]
		       ? t->group - 1 : -1;
}

/* Attaches pid as a member of group gi with the group's wanted regions. */
static int own(struct server *s, int gi, pid_t pid)
{
	struct group *g = s->groups[gi];
	__u32 key = (__u32)pid, own = ((__u32)gi + 1) | FP_MEMBER_OWN;
	struct fp_target *t;
	enum fp_status st;
	char msg[512];
	pid_t *a;
	int ti, ret;

	ti = fp_find_target(s, pid);
	if (ti >= 0 && !s->targets[ti]->exited && s->targets[ti]->group == gi + 1)
		return 0;	/* already a member (the scan met a forked child, say) */
	if (ti >= 0 && s->targets[ti]->exited)
		fp_drop_target(s, ti);	/* a pid reused: the old figures are its own */
	if (ti >= 0 && fp_find_target(s, pid) >= 0) {
		fp_log(FP_LOG_INFO, "%s: pid %d is already a target of its own", g->path,
		       (int)pid);
		return -EEXIST;
	}
	st = fp_new_target(s, pid, &ti, NULL, msg, sizeof(msg));
	if (st == FP_E_NO_SUCH_PROCESS) {
		g->missed++;
		fp_log(FP_LOG_DEBUG, "%s: pid %d not joined: %s", g->path, (int)pid, msg);
		return -ESRCH;
	}
	if (st != FP_OK) {	/* no room (targets, descriptors): the file's link has it */
		g->summed++;
		fp_log(FP_LOG_INFO, "%s: pid %d measured in the sum only: %s", g->path,
		       (int)pid, msg);
		return -ENOSPC;
	}
	t = s->targets[ti];
	t->group = gi + 1;
	/* measured by the file's link until the map says this object's turn (below) */
	if (g->file && !g->file->exited)
		fp_target__set_member_group(t, own);
	fp_target__set_wants(t, g->want_all, g->features, g->nfeatures, g->regions, g->nregions);
	ret = fp_target__apply_wants(t, 1, msg, sizeof(msg));
	if (ret < 0)	/* the file's link, if any, keeps measuring it */
		fp_log(FP_LOG_WARN, "%s: pid %d: %s", g->path, (int)pid, msg);
	else if (fp_target__member_group(t) &&
		 bpf_map_update_elem(fp_watch__map_fd(s->watch, "watched"), &key, &own, BPF_EXIST))
		fp_log(FP_LOG_DEBUG, "%s: pid %d left before its handover", g->path, (int)pid);
	fp_sync_dl_hook(s, ti);
	if (g->sample_hz && fp_target__sample_start(t, g->sample_hz, g->sample_remote, msg,
						    sizeof(msg)) < 0)
		fp_log(FP_LOG_INFO, "%s: pid %d not sampled: %s", g->path, (int)pid, msg);
	a = realloc(g->live, sizeof(*a) * (size_t)(g->nlive + 1));
	if (a) {
		g->live = a;
		g->live[g->nlive++] = pid;
	}
	g->joined++;
	fp_log(FP_LOG_DEBUG, "%s: pid %d joined (%d sites)", g->path, (int)pid,
	       t->attached_sites);
	return 0;
}

/*
 * A new member: measured by the file's link from now on (the watcher's map says so).
 * The first FP_GROUP_OWN_NOW get a target of their own at once (exact per-process
 * figures from the start); later ones queue for one while the group has fewer than
 * FP_GROUP_OWN_MAX, and fp_run_groups() attaches one per loop round, so that a scan of
 * a thousand processes does not keep the daemon from its clients for minutes (each
 * attach is a BPF load, ~0.1 s). Until then a member's figures are in the group's sum
 * ("shared"), not in its own.
 */
#define FP_GROUP_OWN_NOW 8
static int join(struct server *s, int gi, pid_t pid)
{
	struct group *g = s->groups[gi];
	int ti = fp_find_target(s, pid), i;
	pid_t *a;

	if (ti >= 0 && !s->targets[ti]->exited && s->targets[ti]->group == gi + 1)
		return 0;
	for (i = 0; i < g->npending; i++)
		if (g->pending[i] == pid)
			return 0;
	if (g->nlive + g->npending < FP_GROUP_OWN_NOW)
		return own(s, gi, pid);
	if (g->nlive + g->npending >= FP_GROUP_OWN_MAX) {
		g->summed++;
		return 0;
	}
	a = realloc(g->pending, sizeof(*a) * (size_t)(g->npending + 1));
	if (!a) {
		g->summed++;
		return -ENOMEM;
	}
	g->pending = a;
	g->pending[g->npending++] = pid;
	return 0;
}

int fp_run_groups(struct server *s)
{
	int gi, more = 0;

	for (gi = 0; gi < FP_MAX_GROUPS; gi++) {
		struct group *g = s->groups[gi];
		pid_t pid;

		if (!g || !g->npending)
			continue;
		pid = g->pending[0];
		memmove(g->pending, g->pending + 1, sizeof(pid_t) * (size_t)--g->npending);
		if (!g->ended)
			own(s, gi, pid);
		else
			g->npending = 0;
		more |= g->npending > 0;
	}
	return more;
}

void fp_group_join(struct server *s, int group, pid_t pid)
{
	if (group < 1 || group > FP_MAX_GROUPS || !s->groups[group - 1] ||
	    s->groups[group - 1]->ended)
		return;
	join(s, group - 1, pid);
}
/* --- subscriptions (top, stream --exe) --------------------------------------------------
 *
 * A push carries the group's figures of the interval: each live member's since the last
 * push (or since it joined, or since the subscription began), plus the last figures of
 * members that exited meanwhile (taken at their exit), summed as stats --exe sums; the
 * members' own beside them in "processes".
 */
static struct fp_snapshot **prev_of(struct sub *sb, pid_t pid)
{
	int i;

	for (i = 0; i < sb->nmprev; i++)
		if (sb->mprev[i].pid == pid)
			return &sb->mprev[i].snap;
	return NULL;
}

static void sub_member_gone(struct server *s, struct sub *sb, struct fp_target *t)
{
	struct fp_snapshot **prev = prev_of(sb, t->pid), *cur = NULL;
	struct json_object *st = fp_target_interval(s, t, prev ? *prev : NULL, &cur);
	int i;

	fp_snapshot__free(cur);
	if (st) {
		if (!sb->pending)
			sb->pending = json_object_new_object();
		merge(sb->pending, st);
		json_object_put(st);
	}
	for (i = 0; prev && i < sb->nmprev; i++)
		if (sb->mprev[i].pid == t->pid) {
			fp_snapshot__free(sb->mprev[i].snap);
			sb->mprev[i] = sb->mprev[--sb->nmprev];
		}
}

int fp_group_find(struct server *s, struct json_object *req, char *msg, size_t msglen)
{
	const char *path;
	int gi;

	if (get_exe(req, &path, msg, msglen))
		return -2;
	gi = find_group(s, path);
	if (gi < 0)
		snprintf(msg, msglen, "%s is not profiled as an executable", path);
	return gi;
}

static void mprev_free(struct sub *sb)
{
	int i;

	for (i = 0; i < sb->nmprev; i++)
		fp_snapshot__free(sb->mprev[i].snap);
	free(sb->mprev);
	sb->mprev = NULL;
	sb->nmprev = 0;
}

void fp_group_sub_free(struct sub *sb)
{
	mprev_free(sb);
	json_object_put(sb->pending);
	sb->pending = NULL;
}

/* The group's process counts, in stats --exe and in every push. */
static void group_keys(struct json_object *o, const struct group *g)
{
	json_object_object_add(o, "processes_live", json_object_new_int(g->nlive));
	json_object_object_add(o, "processes_joined", json_object_new_int64((int64_t)g->joined));
	json_object_object_add(o, "processes_exited", json_object_new_int64((int64_t)g->gone));
	json_object_object_add(o, "processes_missed", json_object_new_int64((int64_t)g->missed));
	json_object_object_add(o, "processes_pending", json_object_new_int(g->npending));
	json_object_object_add(o, "processes_summed", json_object_new_int64((int64_t)g->summed));
}

/* Each member's figures now; the table replaces sb's (members gone drop out). */
static struct json_object *members_since(struct server *s, struct sub *sb,
					 struct json_object *sum, struct json_object *procs)
{
	struct group *g = s->groups[sb->group - 1];
	struct member_prev *next = calloc((size_t)g->nlive + 2, sizeof(*next));
	int i, n = 0;

	/* index nlive: the file's target (pid 0), its figures in the sum only */
	for (i = 0; next && i <= g->nlive; i++) {
		pid_t pid = i < g->nlive ? g->live[i] : 0;
		int ti = pid ? fp_find_target(s, pid) : -1;
		struct fp_target *t = pid ? (ti >= 0 ? s->targets[ti] : NULL) : g->file;
		struct fp_snapshot **prev = prev_of(sb, pid), *cur = NULL;
		struct json_object *st;

		if (!t)
			continue;
		st = fp_target_interval(s, t, prev ? *prev : NULL, &cur);
		if (!cur) {
			json_object_put(st);
			continue;
		}
		next[n].pid = pid;
		next[n++].snap = cur;
		if (st && sum)
			merge(sum, st);
		if (st && procs && pid)
			json_object_array_add(procs, st);
		else
			json_object_put(st);
	}
	if (next) {
		mprev_free(sb);
		sb->mprev = next;
		sb->nmprev = n;
	}
	return sum;
}

void fp_group_sub_start(struct server *s, struct sub *sb)
{
	members_since(s, sb, NULL, NULL);
	sb->last_ns = fp_mono_ns();
}

struct json_object *fp_group_sub_tick(struct server *s, struct sub *sb)
{
	struct json_object *sum, *procs, *o;
	struct group *g;
	uint64_t now = fp_mono_ns();

	if (sb->group < 1 || sb->group > FP_MAX_GROUPS || !(g = s->groups[sb->group - 1]))
		return NULL;
	sum = sb->pending ? sb->pending : json_object_new_object();
	sb->pending = NULL;
	procs = json_object_new_array();
	members_since(s, sb, sum, procs);
	json_object_object_add(sum, "exe", json_object_new_string(g->path));
	json_object_object_add(sum, "processes", procs);
	group_keys(sum, g);
	json_object_object_add(sum, "interval_ns", json_object_new_int64(
				       (int64_t)sb->interval_ms * 1000000));
	json_object_object_add(sum, "elapsed_ns", json_object_new_int64((int64_t)(now -
										 sb->last_ns)));
	sb->last_ns = now;
	o = json_object_new_object();
	json_object_object_add(o, "subscription", json_object_new_int(sb->id));
	json_object_object_add(o, "exe", json_object_new_string(g->path));
	json_object_object_add(o, "stats", sum);
	return o;
}

enum fp_status fp_group_sample(struct server *s, struct json_object *req,
			       struct json_object **res, char *msg, size_t msglen)
{
	int gi = fp_group_find(s, req, msg, msglen), on, remote, i, started = 0, failed = 0;
	char first[512] = "";
	enum fp_status st;
	struct group *g;
	int64_t hz;

	if (gi < 0)
		return gi == -2 ? FP_E_BAD_REQUEST : FP_E_NOT_ATTACHED;
	st = fp_sample_args(req, &hz, &on, &remote, msg, msglen);
	if (st)
		return st;
	g = s->groups[gi];
	if (on && g->ended) {
		snprintf(msg, msglen, "%s is no longer followed (disabled): enable --exe again",
			 g->path);
		return FP_E_BAD_REQUEST;
	}
	for (i = 0; i < g->nlive; i++) {
		int ti = fp_find_target(s, g->live[i]);
		char m[512];

		if (ti < 0)
			continue;
		fp_target__sample_stop(s->targets[ti]);	/* a restart takes the new rate */
		if (!on)
			continue;
		if (!fp_target__sample_start(s->targets[ti], (int)hz, remote, m, sizeof(m))) {
			started++;
		} else {
			failed++;
			if (!first[0])
				snprintf(first, sizeof(first), "%s", m);
		}
	}
	g->sample_hz = on ? (int)hz : 0;
	g->sample_remote = remote;
	if (on && failed && !started) {	/* none could: say why, change nothing */
		g->sample_hz = 0;
		snprintf(msg, msglen, "%s: %s", g->path, first);
		return FP_E_NO_PROBES;
	}
	if (on)
		fp_log(FP_LOG_INFO, "%s: sampling at %d Hz, %d processes (%d could not)", g->path,
		       (int)hz, started, failed);
	*res = json_object_new_object();
	json_object_object_add(*res, "exe", json_object_new_string(g->path));
	json_object_object_add(*res, "sampling", json_object_new_boolean(on));
	json_object_object_add(*res, "processes_sampled", json_object_new_int(started));
	json_object_object_add(*res, "processes_not_sampled", json_object_new_int(failed));
	return FP_OK;
}

int fp_group_member_exited(struct server *s, int ti)
{
	struct fp_target *t = s->targets[ti];
	int gi = group_of_target(s, t), i;
	struct group *g;
	struct json_object *st;

	if (gi < 0)
		return 0;
	g = s->groups[gi];
	st = fp_target_stats(s, t);
	if (st) {
		merge(g->exited, st);
		if (json_object_array_length(g->exited_procs) >= FP_GROUP_KEEP_EXITED)
			json_object_array_del_idx(g->exited_procs, 0, 1);
		json_object_array_add(g->exited_procs, st);
	}
	for (i = 0; i < s->nsubs; i++)	/* its last figures go into the next push */
		if (s->subs[i].group == gi + 1 && !s->subs[i].dead)
			sub_member_gone(s, &s->subs[i], t);
	for (i = 0; i < g->nlive; i++)
		if (g->live[i] == t->pid)
			g->live[i] = g->live[--g->nlive];
	g->gone++;
	fp_drop_target(s, ti);
	return 1;
}

/* The processes running the file now: one scan of /proc at the enable. */
static void scan(struct server *s, int gi)
{
	struct group *g = s->groups[gi];
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
		bpf_map_update_elem(fp_watch__map_fd(s->watch, "watched"), &key, &val, BPF_ANY);
		join(s, gi, (pid_t)pid);
	}
	if (d)
		closedir(d);
}

/* --- the file's target ---------------------------------------------------------------
 *
 * One target per group for the file itself: its sites attached once with no pid filter,
 * so the kernel puts the breakpoints into every process that maps the inode, from its
 * exec or fork on. Its BPF program measures the group's members (the watcher's map,
 * written in the kernel at exec and fork) until a member has a target of its own, which
 * join() hands it to; a process that is gone before that (a short-lived one) is measured
 * there all its life. Its figures are summed into the group's and shown as "shared".
 */
static void file_wants(struct group *g, int on)
{
	char err[512];

	if (!g->file || g->file->exited)
		return;
	fp_target__set_wants(g->file, g->want_all, g->features, g->nfeatures, g->regions,
			     g->nregions);
	if (fp_target__apply_wants(g->file, on, err, sizeof(err)) < 0)
		fp_log(FP_LOG_WARN, "%s: %s", g->path, err);
}

static void file_start(struct server *s, int gi)
{
	struct group *g = s->groups[gi];
	char err[512];

	g->file = fp_target__new_file(g->fd, g->path, gi + 1, s->opts->cal->optimized,
				      &s->opts->defs, err, sizeof(err));
	if (!g->file) {	/* its regions are all in libraries, say: per process only */
		fp_log(FP_LOG_INFO, "%s: no link for the file (%s): processes are measured "
		       "from their own attach on", g->path, err);
		return;
	}
	file_wants(g, 1);
}

/* Detaches the file's target; its figures stay (t->last). */
static void file_end(struct server *s, int gi)
{
	struct group *g = s->groups[gi];
	struct fp_target *t = g->file;
	int i;

	if (!t || t->exited)
		return;
	for (i = 0; i < s->nsubs; i++)	/* its last interval goes into the next push */
		if (s->subs[i].group == gi + 1 && !s->subs[i].dead)
			sub_member_gone(s, &s->subs[i], t);
	fp_target__retire(t);
}

/* The figures of the file's targets, this one and earlier ones; NULL: none. */
static struct json_object *file_stats(struct server *s, struct group *g)
{
	struct json_object *st = g->file ? fp_target_stats(s, g->file) : NULL, *sum = NULL;

	if (!g->file_gone)
		return st;
	json_object_deep_copy(g->file_gone, &sum, NULL);
	if (st) {
		merge(sum, st);
		json_object_put(st);
	}
	return sum;
}

/* Followed again after a disable: a new file target, the old one's figures kept. */
static void file_restart(struct server *s, int gi)
{
	struct group *g = s->groups[gi];
	struct json_object *st = g->file ? fp_target_stats(s, g->file) : NULL;

	if (st) {
		if (!g->file_gone)
			g->file_gone = json_object_new_object();
		merge(g->file_gone, st);
		json_object_put(st);
	}
	fp_target__free(g->file);
	g->file = NULL;
	file_start(s, gi);
}

/* --- verbs --------------------------------------------------------------------------- */

static enum fp_status get_exe(struct json_object *req, const char **path, char *msg,
			      size_t msglen)
{
	struct json_object *v;

	if (!json_object_object_get_ex(req, "exe", &v) ||
	    !json_object_is_type(v, json_type_string) || json_object_get_string(v)[0] != '/' ||
	    json_object_get_string_len(v) > 4000) {
		snprintf(msg, msglen, "'exe' must be an absolute path");
		return FP_E_BAD_REQUEST;
	}
	*path = json_object_get_string(v);
	return FP_OK;
}

/* Names in req (features, regions, all) into the group's wants (on) or out of them. */
static enum fp_status wants(struct group *g, struct json_object *req, int on, char *msg,
			    size_t msglen)
{
	struct json_object *v, *arr;
	int i, any = 0;
	size_t k;

	if (json_object_object_get_ex(req, "all", &v) && json_object_get_boolean(v)) {
		g->want_all = on;
		any = 1;
	}
	for (i = 0; i < 2; i++) {
		char ***list = i ? &g->regions : &g->features;
		int *n = i ? &g->nregions : &g->nfeatures;

		if (!json_object_object_get_ex(req, i ? "regions" : "features", &arr))
			continue;
		if (!json_object_is_type(arr, json_type_array)) {
			snprintf(msg, msglen, "'%s' must be an array of strings",
				 i ? "regions" : "features");
			return FP_E_BAD_REQUEST;
		}
		for (k = 0; k < json_object_array_length(arr); k++) {
			struct json_object *x = json_object_array_get_idx(arr, k);
			int j, found = -1;

			if (!json_object_is_type(x, json_type_string)) {
				snprintf(msg, msglen, "'%s' must be an array of strings",
					 i ? "regions" : "features");
				return FP_E_BAD_REQUEST;
			}
			for (j = 0; j < *n && found < 0; j++)
				if (!strcmp((*list)[j], json_object_get_string(x)))
					found = j;
			if (on && found < 0 && fp_strv_add(list, n, json_object_get_string(x)))
				return FP_E_INTERNAL;
			if (!on && found >= 0) {
				free((*list)[found]);
				(*list)[found] = (*list)[--*n];
			}
			any = 1;
		}
	}
	if (!any) {
		snprintf(msg, msglen, "name features, regions, or all");
		return FP_E_BAD_REQUEST;
	}
	return FP_OK;
}

static struct json_object *pids_json(const struct group *g)
{
	struct json_object *a = json_object_new_array();
	int i;

	for (i = 0; i < g->nlive; i++)
		json_object_array_add(a, json_object_new_int(g->live[i]));
	for (i = 0; i < g->npending; i++)	/* measured already, by the file's link */
		json_object_array_add(a, json_object_new_int(g->pending[i]));
	return a;
}

enum fp_status fp_group_enable(struct server *s, struct json_object *req, int on,
			       struct json_object **res, char *msg, size_t msglen)
{
	const char *path;
	enum fp_status st = get_exe(req, &path, msg, msglen);
	int gi, i, ended;
	struct fp_file_key key;
	struct group *g;
	struct stat sb;
	__u32 val;

	if (st)
		return st;
	if (!s->watch) {
		snprintf(msg, msglen, "--exe needs the process watcher, which could not be "
			 "loaded here (see featprofd's log)");
		return FP_E_INTERNAL;
	}
	gi = find_group(s, path);
	if (!on && (gi < 0 || s->groups[gi]->ended)) {
		snprintf(msg, msglen, "%s is not profiled as an executable", path);
		return FP_E_NOT_ATTACHED;
	}
	if (on && gi >= 0 && s->groups[gi]->ended) {	/* followed again */
		g = s->groups[gi];
		st = wants(g, req, 1, msg, msglen);
		if (st)
			return st;
		g->ended = 0;
		file_restart(s, gi);
		key = file_key(g);
		val = (__u32)gi + 1;
		bpf_map_update_elem(fp_watch__map_fd(s->watch, "exes"), &key, &val, BPF_ANY);
		scan(s, gi);
	} else if (on && gi < 0) {
		/* non-blocking: a FIFO named here would block every client until a writer
		 * came; it is refused below as not a regular file */
		int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

		errno = fd < 0 ? errno : 0;
		if (fd < 0 || fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
			snprintf(msg, msglen, "%s: %s", path,
				 errno ? strerror(errno) : "not a regular file");
			if (fd >= 0)
				close(fd);
			return FP_E_NO_SUCH_PROCESS;
		}
		for (gi = 0; gi < FP_MAX_GROUPS && s->groups[gi]; gi++)
			;
		if (gi == FP_MAX_GROUPS) {
			close(fd);
			snprintf(msg, msglen, "too many executables (%d)", FP_MAX_GROUPS);
			return FP_E_BUSY;
		}
		g = calloc(1, sizeof(*g));
		if (!g || !(g->path = strdup(path))) {
			free(g);
			close(fd);
			snprintf(msg, msglen, "out of memory");
			return FP_E_INTERNAL;
		}
		g->fd = fd;
		g->dev = sb.st_dev;
		g->ino = sb.st_ino;
		g->exited = json_object_new_object();
		g->exited_procs = json_object_new_array();
		st = wants(g, req, 1, msg, msglen);
		if (st) {
			group_free(g);
			return st;
		}
		s->groups[gi] = g;
		key = file_key(g);
		val = (__u32)gi + 1;
		if (bpf_map_update_elem(fp_watch__map_fd(s->watch, "exes"), &key, &val,
					BPF_ANY)) {
			snprintf(msg, msglen, "%s: cannot watch its exec: %s", path,
				 strerror(errno));
			s->groups[gi] = NULL;
			group_free(g);
			return FP_E_INTERNAL;
		}
		file_start(s, gi);	/* before the scan: no member's start is missed */
		scan(s, gi);
		fp_log(FP_LOG_INFO, "%s: profiled as an executable, %d processes now (%llu in "
		       "the sum only)", path, g->nlive + g->npending,
		       (unsigned long long)g->summed);
	} else {
		g = s->groups[gi];
		st = wants(g, req, on, msg, msglen);
		if (st)
			return st;
		file_wants(g, on);
		for (i = 0; i < g->nlive; i++) {
			int ti = fp_find_target(s, g->live[i]);
			struct fp_target *t = ti >= 0 ? s->targets[ti] : NULL;

			if (!t || t->exited)
				continue;
			fp_target__set_wants(t, g->want_all, g->features, g->nfeatures,
					     g->regions, g->nregions);
			fp_target__apply_wants(t, on, msg, msglen);
			fp_sync_dl_hook(s, ti);
		}
	}
	ended = !on && !g->want_all && !g->nfeatures && !g->nregions;
	*res = json_object_new_object();
	json_object_object_add(*res, "exe", json_object_new_string(path));
	json_object_object_add(*res, "processes", pids_json(g));
	json_object_object_add(*res, "summed", json_object_new_int64((int64_t)g->summed));
	if (ended) {	/* nothing wanted any more: stop following; the figures stay */
		key = file_key(g);
		bpf_map_delete_elem(fp_watch__map_fd(s->watch, "exes"), &key);
		for (i = g->nlive - 1; i >= 0; i--) {
			int ti = fp_find_target(s, g->live[i]);
			__u32 k = (__u32)g->live[i];

			bpf_map_delete_elem(fp_watch__map_fd(s->watch, "watched"), &k);
			if (ti >= 0)
				fp_target_exited(s, ti);	/* detached; summed */
		}
		for (i = 0; i < g->npending; i++) {
			__u32 k = (__u32)g->pending[i];

			bpf_map_delete_elem(fp_watch__map_fd(s->watch, "watched"), &k);
		}
		g->npending = 0;
		file_end(s, gi);
		g->ended = 1;
		json_object_object_add(*res, "ended", json_object_new_boolean(1));
		fp_log(FP_LOG_INFO, "%s: no longer followed", path);
	}
	msg[0] = 0;
	return FP_OK;
}

enum fp_status fp_group_stats(struct server *s, struct json_object *req,
			      struct json_object **res, char *msg, size_t msglen)
{
	struct json_object *sum = NULL, *procs = json_object_new_array(), *shared;
	const char *path;
	enum fp_status st = get_exe(req, &path, msg, msglen);
	struct group *g;
	int gi, i;
	size_t k;

	if (st) {
		json_object_put(procs);
		return st;
	}
	gi = find_group(s, path);
	if (gi < 0) {
		json_object_put(procs);
		snprintf(msg, msglen, "%s is not profiled as an executable", path);
		return FP_E_NOT_ATTACHED;
	}
	g = s->groups[gi];
	json_object_deep_copy(g->exited, &sum, NULL);
	shared = file_stats(s, g);
	if (shared) {
		merge(sum, shared);
		json_object_object_add(sum, "shared", shared);
	}
	for (i = 0; i < g->nlive; i++) {
		int ti = fp_find_target(s, g->live[i]);
		struct json_object *one = ti >= 0 ? fp_target_stats(s, s->targets[ti]) : NULL;

		if (!one)
			continue;
		merge(sum, one);
		json_object_array_add(procs, one);
	}
	for (k = 0; k < json_object_array_length(g->exited_procs); k++) {
		struct json_object *one = json_object_array_get_idx(g->exited_procs, k);

		json_object_array_add(procs, json_object_get(one));
	}
	fp_sample_refigure(sum);
	json_object_object_add(sum, "exe", json_object_new_string(path));
	json_object_object_add(sum, "processes", procs);
	group_keys(sum, g);
	json_object_object_add(sum, "exited", json_object_new_boolean(g->nlive == 0));
	*res = sum;
	return FP_OK;
}

struct json_object *fp_groups_status(struct server *s)
{
	struct json_object *a = json_object_new_array();
	int i;

	for (i = 0; i < FP_MAX_GROUPS; i++) {
		struct group *g = s->groups[i];
		struct json_object *o;

		if (!g)
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "exe", json_object_new_string(g->path));
		json_object_object_add(o, "processes", pids_json(g));
		json_object_object_add(o, "joined", json_object_new_int64((int64_t)g->joined));
		json_object_object_add(o, "exited", json_object_new_int64((int64_t)g->gone));
		json_object_object_add(o, "missed", json_object_new_int64((int64_t)g->missed));
		json_object_object_add(o, "summed", json_object_new_int64((int64_t)g->summed));
		json_object_object_add(o, "shared_sites", json_object_new_int(
					       g->file && !g->file->exited ? g->file->attached_sites
									   : 0));
		json_object_array_add(a, o);
	}
	return a;
}
