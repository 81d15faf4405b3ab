// SPDX-License-Identifier: GPL-2.0
/*
 * featprofd's requests: the verb table, targets and subscriptions. Protocol:
 * common/protocol.h.
 *
 * Every request line is checked in a fixed order before anything changes: JSON, an
 * object, an integer id, a string verb, a known verb; then what the verb's flags ask
 * for: the caller's privilege, a pid argument the caller could ptrace, an attached
 * target, a live one. Handlers have one signature: they fill a result or a status and
 * a one-line message, and send nothing; fp_handle_line sends exactly one reply. A
 * client's bad input gets an error and touches nothing else.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "journal.h"
#include "kernel.h"
#include "log.h"
#include "report.h"
#include "request.h"
#include "sample.h"
#include "strays.h"
#include "server_priv.h"
#include "watch.h"

struct request {
	struct json_object *obj;
	struct json_object *id;	/* the id as read (owned); NULL before it is known */
	pid_t pid;		/* V_PID */
	int ti;			/* V_TARGET: index into s->targets */
};

enum {
	V_PID = 1,		/* takes "pid", which the caller could ptrace */
	V_TARGET = 2,		/* the pid is attached */
	V_LIVE = 4,		/* ... and has not exited */
	V_PRIV = 8,		/* root or CAP_SYS_PTRACE only */
};

typedef enum fp_status (*verb_fn)(struct server *s, struct client *c, struct request *r,
				  struct json_object **res, char *msg, size_t msglen);

struct verb {
	const char *name;
	verb_fn fn;
	unsigned flags;
};

/* --- replies ----------------------------------------------------------------------- */

static void reply(struct server *s, struct client *c, struct json_object *id, enum fp_status st,
		  const char *msg, struct json_object *result)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "id", id ? json_object_get(id) : NULL);
	if (st == FP_OK) {
		json_object_object_add(o, "result", result ? result : json_object_new_object());
	} else {
		struct json_object *e = json_object_new_object();

		json_object_put(result);
		json_object_object_add(e, "code", json_object_new_string(fp_status_name(st)));
		json_object_object_add(e, "message", json_object_new_string(msg));
		json_object_object_add(o, "error", e);
	}
	fp_send(s, c, o);
}

void fp_reply_error(struct server *s, struct client *c, enum fp_status st, const char *msg)
{
	reply(s, c, NULL, st, msg, NULL);
}

/* --- targets ----------------------------------------------------------------------- */

/*
 * The probe cost to subtract: that of the attach point the enabled sites use. Sites of
 * other providers are plain nops (nop1, the trap); a target whose enabled regions use
 * both points is compensated as nop5 and says so (mixed_attach_points).
 */
static const struct fp_calibration *cal_of(struct server *s, const struct fp_target *t)
{
	int m = fp_target__attach_points(t);

	if (!t->use_opt || (m == 1 && s->opts->cal->at[FP_AT_NOP1].valid))
		return &s->opts->cal->at[FP_AT_NOP1];
	return &s->opts->cal->at[FP_AT_NOP5];
}

static int find_target(struct server *s, pid_t pid)
{
	int i;

	for (i = 0; i < FP_MAX_TARGETS; i++)
		if (s->targets[i] && s->targets[i]->pid == pid)
			return i;
	return -1;
}

/* Subscriptions to pid end (removed at the end of the round). */
static void end_subs_of(struct server *s, pid_t pid)
{
	int i;

	for (i = 0; i < s->nsubs; i++)
		if (s->subs[i].pid == pid)
			s->subs[i].dead = 1;
}

static void push_to_subs(struct server *s, pid_t pid, const char *event)
{
	int i;

	for (i = 0; i < s->nsubs; i++) {
		struct json_object *o;

		if (s->subs[i].dead || s->subs[i].pid != pid)
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "subscription", json_object_new_int(s->subs[i].id));
		json_object_object_add(o, "pid", json_object_new_int(pid));
		json_object_object_add(o, "event", json_object_new_string(event));
		fp_send(s, s->subs[i].c, o);
	}
}

/* The process is gone: keep its last figures, release the BPF object and links. */
void fp_target_exited(struct server *s, int ti)
{
	struct fp_target *t = s->targets[ti];
	int i;

	if (t->exited)
		return;
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, t->pidfd, NULL);	/* closed with the target */
	push_to_subs(s, t->pid, "exit");
	for (i = 0; i < s->nsubs; i++)	/* a recording ends with an error: the exit */
		if (s->subs[i].rec && s->subs[i].pid == t->pid)
			s->subs[i].dead = 1;	/* fp_record_end before the object goes */
	for (i = 0; i < s->nsubs; i++)
		if (s->subs[i].dead)
			fp_record_end(s, &s->subs[i]);
	fp_target__retire(t);
	bpf_link__destroy(s->dl_links[ti]);
	s->dl_links[ti] = NULL;
	fp_log(FP_LOG_DEBUG, "pid %d (%s) exited; detached, last figures kept", (int)t->pid,
	       t->comm);
	fp_group_member_exited(s, ti);	/* a group's: figures summed there, slot freed */
}

/*
 * exec: the process runs another program. A group's member leaves as at an exit (and
 * joins again when it runs the group's file); a pid target gets the new program's
 * catalog, with what was asked for by name enabled again; its earlier figures end.
 */
static void exec_replace(struct server *s, int ti, int group)
{
	struct fp_target *old = s->targets[ti], *t;
	pid_t pid = old->pid;
	char err[512];
	int r;

	if (group || old->group) {
		fp_target_exited(s, ti);
		if (group)
			fp_group_join(s, group, pid);
		return;
	}
	t = fp_target__new(pid, s->opts->cal->optimized, &s->opts->defs, NULL, err,
			   sizeof(err));
	if (!t) {
		fp_log(FP_LOG_INFO, "pid %d exec'd a program without regions (%s): the "
		       "figures of %s are kept as exited", (int)pid, err, old->comm);
		fp_target_exited(s, ti);
		return;
	}
	fp_target__set_wants(t, old->want_all, old->want_features, old->nwant_features,
			     old->want_regions, old->nwant_regions);
	t->owner = old->owner;
	for (r = 0; r < t->cat->nregions; r++)
		t->enabled[r] = 0;
	/* the new program's regions asked for by name: as a refresh enables them */
	if (fp_target__apply_wants(t, 1, err, sizeof(err)) < 0)
		fp_log(FP_LOG_WARN, "%s", err);
	push_to_subs(s, pid, "exec");
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, old->pidfd, NULL);
	{
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = EV(EV_TARGET, ti) };

		epoll_ctl(s->epfd, EPOLL_CTL_ADD, t->pidfd, &ev);
	}
	fp_target__free(old);
	s->targets[ti] = t;
	bpf_link__destroy(s->dl_links[ti]);	/* the old program's ld.so */
	s->dl_links[ti] = NULL;
	fp_sync_dl_hook(s, ti);
	fp_log(FP_LOG_INFO, "pid %d exec'd %s: %d regions, %d enabled again", (int)pid,
	       t->comm, t->cat->nregions, t->attached_sites);
}

void fp_watch_event(void *ctx, uint32_t kind, uint32_t tgid, uint32_t other)
{
	struct server *s = ctx;
	int ti = find_target(s, (pid_t)tgid);

	if (kind == FP_WATCH_MMAP && ti >= 0 && !s->targets[ti]->exited)
		s->refresh_due[ti] = 1;	/* once per round, however many segments */
	if ((kind == FP_WATCH_FORK || kind == FP_WATCH_EXEC) && other && ti < 0)
		fp_group_join(s, (int)other, (pid_t)tgid);
	else if (kind == FP_WATCH_EXEC && ti >= 0 && !s->targets[ti]->exited)
		exec_replace(s, ti, (int)other);
}

void fp_free_targets(struct server *s)
{
	int i;

	fp_free_groups(s);
	for (i = 0; i < FP_MAX_TARGETS; i++) {
		bpf_link__destroy(s->dl_links[i]);
		s->dl_links[i] = NULL;
		fp_target__free(s->targets[i]);
		s->targets[i] = NULL;
	}
}

/* The target of pid, attached now if it is not yet (with more's definitions). */
/* Gone: no /proc/PID, a zombie (exited, not yet reaped), or exiting now (PF_EXITING in
 * the flags, the 9th field of /proc/PID/stat: set as do_exit begins, while its
 * mappings are being torn down and a catalog read finds nothing). */
#define PF_EXITING_FLAG 0x4

static int process_gone(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long flags = 0;
	char state = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 1;
	buf[n] = 0;
	p = strrchr(buf, ')');	/* state and the rest follow the command name */
	if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %lu", &state, &flags) != 2)
		return 0;
	return state == 'Z' || state == 'X' || (flags & PF_EXITING_FLAG);
}

/* A failure of a process that exited meanwhile is that, not what the failing step saw
 * (its files gone: "no probes"; its memory gone: "internal"). */
static enum fp_status exited_meanwhile(pid_t pid, enum fp_status st, char *msg, size_t msglen)
{
	if (st != FP_E_NO_PROBES && st != FP_E_INTERNAL)
		return st;
	if (!process_gone(pid))
		return st;
	snprintf(msg, msglen, "pid %d exited while it was being attached", (int)pid);
	return FP_E_NO_SUCH_PROCESS;
}

/*
 * Room for one more subscription of c: FP_MAX_SUBS in all, a quarter of them per
 * unprivileged uid. FP_OK or FP_E_BUSY with msg.
 */
static enum fp_status sub_room(struct server *s, const struct client *c, char *msg,
			       size_t msglen)
{
	int i, mine = 0;

	if (s->nsubs >= FP_MAX_SUBS) {
		snprintf(msg, msglen, "too many subscriptions");
		return FP_E_BUSY;
	}
	if (fp_peer_privileged(&c->peer))
		return FP_OK;
	for (i = 0; i < s->nsubs; i++)
		mine += !s->subs[i].dead && s->subs[i].c->peer.cred.uid == c->peer.cred.uid;
	if (mine >= FP_MAX_SUBS / 4) {
		snprintf(msg, msglen, "too many subscriptions for uid %u (%d)",
			 (unsigned)c->peer.cred.uid, FP_MAX_SUBS / 4);
		return FP_E_BUSY;
	}
	return FP_OK;
}

/* Room for one more target owned by an unprivileged uid: a quarter of the table. */
static enum fp_status target_room(struct server *s, const struct client *c, char *msg,
				  size_t msglen)
{
	int i, mine = 0;

	if (fp_peer_privileged(&c->peer))
		return FP_OK;
	for (i = 0; i < FP_MAX_TARGETS; i++)
		mine += s->targets[i] && !s->targets[i]->exited &&
			s->targets[i]->owner == c->peer.cred.uid;
	if (mine >= FP_MAX_TARGETS / 4) {
		snprintf(msg, msglen, "too many targets for uid %u (%d)",
			 (unsigned)c->peer.cred.uid, FP_MAX_TARGETS / 4);
		return FP_E_BUSY;
	}
	return FP_OK;
}

/* The target that exited longest ago (not a file's target: its group owns it), or -1. */
static int oldest_exited(struct server *s)
{
	int i, best = -1;

	for (i = 0; i < FP_MAX_TARGETS; i++)
		if (s->targets[i] && s->targets[i]->exited && s->targets[i]->pid &&
		    !s->targets[i]->group &&
		    (best < 0 || s->targets[i]->exited_ns < s->targets[best]->exited_ns))
			best = i;
	return best;
}

/*
 * Exited targets keep their last figures for FP_EXITED_KEEP_S, or until their pid is
 * reused by a new process that a client names, or until a live process needs the slot.
 */
#define FP_EXITED_KEEP_S 600

void fp_collect_exited(struct server *s)
{
	uint64_t now = fp_mono_ns();
	int i;

	for (i = 0; i < FP_MAX_TARGETS; i++) {
		struct fp_target *t = s->targets[i];

		if (t && t->exited && t->pid && !t->group &&
		    now - t->exited_ns > FP_EXITED_KEEP_S * 1000000000ULL) {
			fp_log(FP_LOG_INFO, "pid %d: exited %d s ago, its figures dropped",
			       (int)t->pid, FP_EXITED_KEEP_S);
			fp_drop_target(s, i);
		}
	}
}

static enum fp_status new_target(struct server *s, pid_t pid, int *ti, struct fp_regdefs *more,
				 char *msg, size_t msglen)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct fp_target *t;
	int i, slot = -1;

	if ((*ti = find_target(s, pid)) >= 0)
		return FP_OK;
	for (i = 0; i < FP_MAX_TARGETS && slot < 0; i++)
		if (!s->targets[i])
			slot = i;
	if (slot < 0 && (slot = oldest_exited(s)) >= 0)	/* a live process comes first */
		fp_drop_target(s, slot);
	if (slot < 0) {
		snprintf(msg, msglen, "too many targets (%d)", FP_MAX_TARGETS);
		return FP_E_BUSY;
	}
	t = fp_target__new(pid, s->opts->cal->optimized, &s->opts->defs, more, msg, msglen);
	if (!t)
		return exited_meanwhile(pid, errno == ENOENT ? FP_E_NO_PROBES :
					     errno == ESRCH ? FP_E_NO_SUCH_PROCESS : FP_E_INTERNAL,
					msg, msglen);
	ev.data.u64 = EV(EV_TARGET, slot);
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, t->pidfd, &ev)) { /* its exit would be missed */
		snprintf(msg, msglen, "pid %d: cannot watch for its exit: %s", (int)pid,
			 strerror(errno));
		fp_target__free(t);
		return FP_E_INTERNAL;
	}
	t->owner = fp_owner(pid);
	s->targets[slot] = t;
	s->refresh_due[slot] = 0;
	*ti = slot;
	if (s->watch) {
		if (fp_watch__process(s->watch, pid, 0))
			fp_log(FP_LOG_WARN, "pid %d: its exec will not be seen", (int)pid);
	}
	fp_log(FP_LOG_INFO, "attached pid %d (%s): %d regions, %d features", (int)pid, t->comm,
	       t->cat->nregions, t->cat->nfeatures);
	return FP_OK;
}

void fp_sync_dl_hook(struct server *s, int ti)
{
	struct fp_target *t = s->targets[ti];
	char err[256];

	if (!s->watch || !t)
		return;
	if (t->exited || !t->attached_sites) {	/* nothing enabled: no uprobe at all */
		bpf_link__destroy(s->dl_links[ti]);
		s->dl_links[ti] = NULL;
	} else if (!s->dl_links[ti]) {
		s->dl_links[ti] = fp_watch__dlopen(s->watch, t->pid, err, sizeof(err));
		if (!s->dl_links[ti])	/* static executables have no dlopen */
			fp_log(FP_LOG_DEBUG, "%s: dlopen not followed", err);
	}
}

int fp_find_target(struct server *s, pid_t pid)
{
	return find_target(s, pid);
}

enum fp_status fp_new_target(struct server *s, pid_t pid, int *ti, struct fp_regdefs *more,
			     char *msg, size_t msglen)
{
	return new_target(s, pid, ti, more, msg, msglen);
}

void fp_drop_target(struct server *s, int ti)
{
	struct fp_target *t = s->targets[ti];

	end_subs_of(s, t->pid);
	if (!t->exited)
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, t->pidfd, NULL);
	bpf_link__destroy(s->dl_links[ti]);
	s->dl_links[ti] = NULL;
	fp_target__free(t);
	s->targets[ti] = NULL;
}

/* --- arguments --------------------------------------------------------------------- */

/* The thread group (process) a task id belongs to; 0 when it cannot be read. */
static pid_t thread_group(pid_t tid)
{
	char path[64], line[128];
	int tgid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	if (f)
		fclose(f);
	return (pid_t)tgid;
}

static enum fp_status arg_pid(struct server *s, struct client *c, struct request *r, char *msg,
			      size_t msglen)
{
	struct json_object *v;
	int64_t p;
	int ret, ti;
	pid_t tgid;

	if (!json_object_object_get_ex(r->obj, "pid", &v) ||
	    !json_object_is_type(v, json_type_int)) {
		snprintf(msg, msglen, "'pid' must be an integer");
		return FP_E_BAD_REQUEST;
	}
	p = json_object_get_int64(v);
	if (p <= 0 || p > 0x3fffffff) {
		snprintf(msg, msglen, "'pid' out of range");
		return FP_E_BAD_REQUEST;
	}
	r->pid = (pid_t)p;
	tgid = thread_group(r->pid);
	if (tgid > 0 && tgid != r->pid) {	/* /proc/TID exists, unlisted */
		snprintf(msg, msglen, "pid %d is a thread of process %d: name the process",
			 (int)r->pid, (int)tgid);
		return FP_E_BAD_REQUEST;
	}
	ret = fp_may_trace(&c->peer, r->pid, msg, msglen);
	ti = find_target(s, r->pid);
	if (!ret && ti >= 0 && s->targets[ti]->pid &&
	    fp_start_time(r->pid) != s->targets[ti]->start_time) {
		/* the pid belongs to a new process now: the target was another one's */
		fp_log(FP_LOG_INFO, "pid %d: reused by a new process; the earlier process's "
		       "figures are dropped", (int)r->pid);
		fp_drop_target(s, ti);
	}
	if (ret == -ESRCH && find_target(s, r->pid) >= 0) {	/* an exited target */
		if (fp_peer_privileged(&c->peer) ||
		    s->targets[find_target(s, r->pid)]->owner == c->peer.cred.uid)
			return FP_OK;
		snprintf(msg, msglen, "permission denied: exited target of another user");
		return FP_E_PERMISSION_DENIED;
	}
	return !ret ? FP_OK : ret == -ESRCH ? FP_E_NO_SUCH_PROCESS : FP_E_PERMISSION_DENIED;
}

/* Resolves features[], regions[] and all into a region selection. */
/* The shape of what select_regions() takes, checked before anything costly (a new
 * target's BPF load): "all" a boolean, "features"/"regions" arrays of strings, one of
 * them given. */
static enum fp_status selection_shape(struct json_object *req, char *msg, size_t msglen)
{
	struct json_object *v;
	int i, any = 0;
	size_t k;

	if (json_object_object_get_ex(req, "all", &v)) {
		if (!json_object_is_type(v, json_type_boolean)) {
			snprintf(msg, msglen, "'all' must be a boolean");
			return FP_E_BAD_REQUEST;
		}
		any = 1;
	}
	for (i = 0; i < 2; i++) {
		const char *key = i ? "regions" : "features";

		if (!json_object_object_get_ex(req, key, &v))
			continue;
		any = 1;
		for (k = 0; json_object_is_type(v, json_type_array) &&
			    k < json_object_array_length(v); k++)
			if (!json_object_is_type(json_object_array_get_idx(v, k), json_type_string))
				break;
		if (!json_object_is_type(v, json_type_array) || k < json_object_array_length(v)) {
			snprintf(msg, msglen, "'%s' must be an array of strings", key);
			return FP_E_BAD_REQUEST;
		}
	}
	if (!any) {
		snprintf(msg, msglen, "name features, regions, or all");
		return FP_E_BAD_REQUEST;
	}
	return FP_OK;
}

static enum fp_status select_regions(struct json_object *req, const struct fp_target *t,
				     uint8_t *sel, char *msg, size_t msglen)
{
	const struct fp_catalog *cat = t->cat;
	struct json_object *v, *arr;
	int any = 0, i, r;
	size_t k;

	memset(sel, 0, (size_t)cat->nregions);
	if (json_object_object_get_ex(req, "all", &v)) {
		if (!json_object_is_type(v, json_type_boolean)) {
			snprintf(msg, msglen, "'all' must be a boolean");
			return FP_E_BAD_REQUEST;
		}
		if (json_object_get_boolean(v)) {
			memset(sel, 1, (size_t)cat->nregions);
			any = 1;
		}
	}
	for (i = 0; i < 2; i++) {
		const char *key = i ? "regions" : "features";

		if (!json_object_object_get_ex(req, key, &arr))
			continue;
		if (!json_object_is_type(arr, json_type_array))
			goto not_strings;
		for (k = 0; k < json_object_array_length(arr); k++) {
			struct json_object *n = json_object_array_get_idx(arr, k);
			const char *name;

			if (!json_object_is_type(n, json_type_string))
				goto not_strings;
			name = json_object_get_string(n);
			if (i ? (r = fp_catalog__region(cat, name)) < 0
			      : fp_catalog__feature(cat, name) < 0) {
				char cut[201];

				fp_utf8_cut(cut, sizeof(cut), name);
				snprintf(msg, msglen, "pid %d has no %s '%s' (see featprof "
					 "list %d)", (int)t->pid, i ? "region" : "feature", cut,
					 (int)t->pid);
				return FP_E_UNKNOWN_NAME;
			}
			if (i)
				sel[r] = 1;
			for (r = 0; !i && r < cat->nregions; r++)
				if (fp_region__has_feature(&cat->regions[r], name))
					sel[r] = 1;
			any = 1;
		}
	}
	if (!any) {
		snprintf(msg, msglen, "name features, regions, or all");
		return FP_E_BAD_REQUEST;
	}
	return FP_OK;
not_strings:
	snprintf(msg, msglen, "'%s' must be an array of strings", i ? "regions" : "features");
	return FP_E_BAD_REQUEST;
}

/* --- verbs ------------------------------------------------------------------------- */

static enum fp_status do_hello(struct server *s, struct client *c, struct request *r,
			       struct json_object **res, char *msg, size_t msglen)
{
	*res = json_object_new_object();
	json_object_object_add(*res, "version", json_object_new_int(FP_PROTO_VERSION));
	fp_report_daemon_keys(*res, s->opts->cal);
	return FP_OK;
}

/* A catalog refresh outside a request's own work: a failure is logged, not replied. */
static void refresh(struct fp_target *t)
{
	char err[512];
	int n = fp_target__refresh(t, err, sizeof(err));

	if (n < 0)
		fp_log(FP_LOG_WARN, "%s", err);
	else if (n)
		fp_log(FP_LOG_INFO, "pid %d: %d regions joined (now %d)", (int)t->pid, n,
		       t->cat->nregions);
}

void fp_run_refreshes(struct server *s)
{
	int i;

	for (i = 0; i < FP_MAX_TARGETS; i++)
		if (s->refresh_due[i]) {
			s->refresh_due[i] = 0;
			if (s->targets[i] && !s->targets[i]->exited)
				refresh(s->targets[i]);
		}
}

/* The catalog; read without loading anything when the pid is not attached. */
static enum fp_status do_list(struct server *s, struct client *c, struct request *r,
			      struct json_object **res, char *msg, size_t msglen)
{
	struct fp_catalog *cat;
	struct fp_proc *proc;
	int ti = find_target(s, r->pid);

	if (ti >= 0) {
		if (!s->targets[ti]->exited)	/* objects mapped since (dlopen) */
			refresh(s->targets[ti]);
		*res = fp_catalog__to_json(s->targets[ti]->cat);
		return FP_OK;
	}
	if (fp_proc__read(r->pid, &proc, msg, msglen))
		return FP_E_NO_SUCH_PROCESS;
	cat = fp_catalog__new(proc->objs, proc->nobjs, &s->opts->defs);
	if (!cat) {
		snprintf(msg, msglen, "pid %d: %s", (int)r->pid, strerror(errno));
		fp_proc__free(proc);
		return FP_E_INTERNAL;
	}
	if (cat->nregions)
		*res = fp_catalog__to_json(cat);
	else
		fp_no_probes_msg(proc, "", msg, msglen);
	fp_catalog__free(cat);
	fp_proc__free(proc);
	return *res ? FP_OK : FP_E_NO_PROBES;
}

/*
 * featprof repair PID: probe sites of the process that hold a breakpoint (int3 where the
 * file has none) get a uprobe registered and unregistered again (daemon/journal.c): the
 * kernel then removes each one no live consumer wants. Sites featprofd or another tool
 * has attached keep theirs ("held"). With "check": true only counts.
 */
#define REPAIR_MAX 4096

static int repair_object(const struct fp_object *obj, const struct fp_trap *tr, int n, int o)
{
	uint64_t *offs = calloc((size_t)n + 1, 8), *refs = calloc((size_t)n + 1, 8);
	int i, k = 0, ret;

	if (!offs || !refs) {
		free(offs);
		free(refs);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		if (tr[i].obj == o) {
			offs[k] = tr[i].off;
			refs[k++] = obj->sites[tr[i].site].sem_off;
		}
	ret = k ? fp_repair_sites(obj->host_path, obj->dev, obj->ino, offs, refs, k) : 0;
	free(offs);
	free(refs);
	return ret;
}

static enum fp_status do_repair(struct server *s, struct client *c, struct request *r,
				struct json_object **res, char *msg, size_t msglen)
{
	struct json_object *v;
	struct fp_trap *tr = NULL;
	struct fp_proc *proc = NULL;
	int check = 0, before, after = 0, o, ret;
	enum fp_status st = FP_OK;

	if (json_object_object_get_ex(r->obj, "check", &v)) {
		if (!json_object_is_type(v, json_type_boolean)) {
			snprintf(msg, msglen, "'check' must be true or false");
			return FP_E_BAD_REQUEST;
		}
		check = json_object_get_boolean(v);
	}
	if (fp_proc__read(r->pid, &proc, msg, msglen))
		return FP_E_NO_SUCH_PROCESS;
	tr = calloc(REPAIR_MAX, sizeof(*tr));
	before = tr ? fp_traps(proc, tr, REPAIR_MAX) : -ENOMEM;
	if (before < 0) {
		snprintf(msg, msglen, "pid %d: cannot read its memory: %s", (int)r->pid,
			 strerror(-before));
		st = FP_E_INTERNAL;
		goto out;
	}
	after = before;
	if (!check && before) {
		int n = before < REPAIR_MAX ? before : REPAIR_MAX;

		for (o = 0; o < proc->nobjs; o++)
			if ((ret = repair_object(proc->objs[o], tr, n, o)) < 0)
				fp_log(FP_LOG_WARN, "pid %d: repair %s: %s", (int)r->pid,
				       proc->objs[o]->path, strerror(-ret));
		after = fp_traps(proc, tr, REPAIR_MAX);
		if (after < 0)
			after = before;
		fp_log(FP_LOG_INFO, "pid %d: repair: %d sites held a breakpoint, %d removed",
		       (int)r->pid, before, before - after);
	}
	*res = json_object_new_object();
	json_object_object_add(*res, "pid", json_object_new_int(r->pid));
	json_object_object_add(*res, "breakpoints", json_object_new_int(before));
	json_object_object_add(*res, "removed", json_object_new_int(before - after));
	json_object_object_add(*res, "held", json_object_new_int(after));
out:
	free(tr);
	fp_proc__free(proc);
	return st;
}

static enum fp_status do_attach(struct server *s, struct client *c, struct request *r,
				struct json_object **res, char *msg, size_t msglen)
{
	enum fp_status st = new_target(s, r->pid, &r->ti, NULL, msg, msglen);

	if (st == FP_OK)
		*res = fp_catalog__to_json(s->targets[r->ti]->cat);
	return st;
}

/* "definitions": {"name": FILE, "text": TEXT}, a client's region definitions. */
static enum fp_status arg_definitions(struct json_object *req, struct fp_regdefs *out,
				      int *given, char *msg, size_t msglen)
{
	struct json_object *d, *name, *text;

	*given = json_object_object_get_ex(req, "definitions", &d);
	if (!*given)
		return FP_OK;
	if (!json_object_is_type(d, json_type_object) ||
	    !json_object_object_get_ex(d, "name", &name) ||
	    !json_object_object_get_ex(d, "text", &text) ||
	    !json_object_is_type(name, json_type_string) ||
	    !json_object_is_type(text, json_type_string)) {
		snprintf(msg, msglen, "'definitions' must be {\"name\": string, \"text\": string}");
		return FP_E_BAD_REQUEST;
	}
	if (fp_regdefs__parse(out, json_object_get_string(text),
			      (size_t)json_object_get_string_len(text),
			      json_object_get_string(name), msg, msglen))
		return FP_E_BAD_REQUEST;
	return FP_OK;
}

/* Remembers (on) or forgets (off) what was named, so that later regions join. */
static void remember(struct fp_target *t, struct json_object *req, int on)
{
	struct json_object *v, *arr;
	size_t k;
	int i, j;

	if (json_object_object_get_ex(req, "all", &v) && json_object_get_boolean(v)) {
		t->want_all = on;
		if (!on) {
			for (j = 0; j < t->nwant_features; j++)
				free(t->want_features[j]);
			for (j = 0; j < t->nwant_regions; j++)
				free(t->want_regions[j]);
			t->nwant_features = t->nwant_regions = 0;
		}
	}
	for (i = 0; i < 2; i++) {
		char ***list = i ? &t->want_regions : &t->want_features;
		int *n = i ? &t->nwant_regions : &t->nwant_features;

		if (!json_object_object_get_ex(req, i ? "regions" : "features", &arr))
			continue;
		for (k = 0; k < json_object_array_length(arr); k++) {
			const char *name =
				json_object_get_string(json_object_array_get_idx(arr, k));
			int found = -1;

			for (j = 0; j < *n && found < 0; j++)
				if (!strcmp((*list)[j], name))
					found = j;
			if (on && found < 0)
				fp_strv_add(list, n, name);	/* on failure: not followed */
			if (!on && found >= 0) {
				free((*list)[found]);
				(*list)[found] = (*list)[--*n];
			}
		}
	}
}

static enum fp_status toggle(struct server *s, struct client *c, struct request *r,
			     struct json_object **res, char *msg, size_t msglen, int on)
{
	struct fp_regdefs more = { 0 };
	enum fp_status st = FP_OK;
	struct fp_target *t;
	uint64_t t0 = fp_mono_ns();
	int created = 0, given, ret;
	uint8_t *sel;

	st = selection_shape(r->obj, msg, msglen);
	if (st)
		return st;
	st = arg_definitions(r->obj, &more, &given, msg, msglen);
	if (st)
		return st;
	if (given && !on) {
		fp_regdefs__clear(&more);
		snprintf(msg, msglen, "'definitions' go with enable");
		return FP_E_BAD_REQUEST;
	}
	if (on && (r->ti = find_target(s, r->pid)) < 0) {
		st = target_room(s, c, msg, msglen);
		if (!st)
			st = new_target(s, r->pid, &r->ti, &more, msg, msglen);
		fp_regdefs__clear(&more);
		if (st)
			return st;
		created = 1;
	}
	t = s->targets[r->ti];
	if (t->exited) {
		fp_regdefs__clear(&more);
		snprintf(msg, msglen, "pid %d has exited; its last figures stay until detach",
			 (int)r->pid);
		return FP_E_NO_SUCH_PROCESS;
	}
	if (!created) {	/* definitions sent now, objects mapped since */
		ret = given ? fp_target__add_defs(t, &more, msg, msglen)
			    : fp_target__refresh(t, msg, msglen);
		fp_regdefs__clear(&more);
		if (ret < 0)
			return ret == -ENOENT ? FP_E_UNKNOWN_NAME :
			       exited_meanwhile(r->pid, FP_E_INTERNAL, msg, msglen);
	}
	sel = calloc((size_t)t->cat->nregions, 1);
	if (!sel) {
		snprintf(msg, msglen, "out of memory");
		st = FP_E_INTERNAL;
		goto out;
	}
	st = select_regions(r->obj, t, sel, msg, msglen);
	if (st == FP_OK && fp_target__set_regions(t, sel, on, msg, msglen))
		st = exited_meanwhile(r->pid, FP_E_INTERNAL, msg, msglen);
	free(sel);
	if (st == FP_OK)
		remember(t, r->obj, on);
out:
	if (st && created) {	/* nothing else changes: the attach is undone */
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, t->pidfd, NULL);
		bpf_link__destroy(s->dl_links[r->ti]);
		s->dl_links[r->ti] = NULL;
		fp_target__free(t);
		s->targets[r->ti] = NULL;
	}
	if (st)
		return st;
	fp_sync_dl_hook(s, r->ti);
	fp_log(FP_LOG_INFO, "pid %d: %s, %d sites attached (%.3f ms)", (int)r->pid,
	       on ? "enable" : "disable", t->attached_sites, (double)(fp_mono_ns() - t0) / 1e6);
	*res = fp_report_enabled(t);
	return FP_OK;
}

static enum fp_status do_enable(struct server *s, struct client *c, struct request *r,
				struct json_object **res, char *msg, size_t msglen)
{
	return toggle(s, c, r, res, msg, msglen, 1);
}

static enum fp_status do_disable(struct server *s, struct client *c, struct request *r,
				 struct json_object **res, char *msg, size_t msglen)
{
	return toggle(s, c, r, res, msg, msglen, 0);
}

static enum fp_status do_detach(struct server *s, struct client *c, struct request *r,
				struct json_object **res, char *msg, size_t msglen)
{
	struct fp_target *t = s->targets[r->ti];

	bpf_link__destroy(s->dl_links[r->ti]);
	s->dl_links[r->ti] = NULL;
	end_subs_of(s, r->pid);
	if (!t->exited)
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, t->pidfd, NULL);	/* closed just below */
	fp_target__free(t);
	s->targets[r->ti] = NULL;
	fp_log(FP_LOG_INFO, "detached pid %d", (int)r->pid);
	return FP_OK;
}

static enum fp_status do_reset(struct server *s, struct client *c, struct request *r,
			       struct json_object **res, char *msg, size_t msglen)
{
	int ret = fp_target__reset(s->targets[r->ti]);

	if (!ret && s->targets[r->ti]->nsample_links)
		fp_target__sample_reset(s->targets[r->ti]);
	if (ret)
		snprintf(msg, msglen, "pid %d: cannot reset the figures: %s", (int)r->pid,
			 strerror(-ret));
	return ret ? FP_E_INTERNAL : FP_OK;
}

struct json_object *fp_target_stats(struct server *s, struct fp_target *t)
{
	struct fp_snapshot *snap = fp_target__snapshot(t);
	struct json_object *res, *sr;

	if (!snap)
		return NULL;
	res = fp_report_stats(t->cat, snap, cal_of(s, t), t->exited ? NULL : t->enabled);
	fp_report_target_keys(res, t, snap);
	fp_snapshot__free(snap);
	sr = fp_sample_report(t);
	if (sr) {
		fp_sample_merge(res, sr);
		json_object_put(sr);
	}
	return res;
}

struct json_object *fp_target_interval(struct server *s, struct fp_target *t,
				       const struct fp_snapshot *prev, struct fp_snapshot **cur)
{
	struct fp_snapshot *d;
	struct json_object *st;

	*cur = fp_target__snapshot(t);
	d = *cur ? fp_snapshot__delta(*cur, prev) : NULL;
	if (!d)
		return NULL;
	st = fp_report_stats(t->cat, d, cal_of(s, t), t->exited ? NULL : t->enabled);
	fp_snapshot__free(d);
	json_object_object_add(st, "pid", json_object_new_int(t->pid));
	json_object_object_add(st, "comm", json_object_new_string(t->comm));
	return st;
}

static enum fp_status do_stats(struct server *s, struct client *c, struct request *r,
			       struct json_object **res, char *msg, size_t msglen)
{
	*res = fp_target_stats(s, s->targets[r->ti]);
	if (!*res) {
		snprintf(msg, msglen, "pid %d: cannot read figures", (int)r->pid);
		return FP_E_INTERNAL;
	}
	return FP_OK;
}

static enum fp_status do_status(struct server *s, struct client *c, struct request *r,
				struct json_object **res, char *msg, size_t msglen)
{
	struct json_object *ts = json_object_new_array(), *o;
	char why[256];
	int i, n = 0;

	for (i = 0; i < FP_MAX_TARGETS; i++) {
		struct fp_target *t = s->targets[i];
		struct fp_snapshot *snap;

		if (!t || (!fp_peer_privileged(&c->peer) &&
			   (t->exited ? t->owner != c->peer.cred.uid
				      : fp_may_trace(&c->peer, t->pid, why, sizeof(why)))))
			continue;	/* a client sees only targets it could trace (or could,
					 * when they ran) */
		snap = fp_target__snapshot(t);
		o = fp_report_target_status(t, snap);
		if (!t->exited)	/* int3s at its sites that featprofd did not put there */
			json_object_object_add(o, "stray_breakpoints",
					       json_object_new_int(fp_target__strays(t)));
		json_object_array_add(ts, o);
		fp_snapshot__free(snap);
	}
	for (i = 0; i < FP_MAX_CLIENTS; i++)
		n += s->clients[i] && !s->clients[i]->dead;
	*res = json_object_new_object();
	json_object_object_add(*res, "version", json_object_new_int(FP_PROTO_VERSION));
	json_object_object_add(*res, "targets", ts);
	if (fp_peer_privileged(&c->peer))
		json_object_object_add(*res, "executables", fp_groups_status(s));
	if (s->watch)	/* dlopen, exec, fork events lost to a full ring */
		json_object_object_add(*res, "watch_events_lost",
				       json_object_new_int64((int64_t)fp_watch__lost(s->watch)));
	json_object_object_add(*res, "clients", json_object_new_int(n));
	for (i = n = 0; i < s->nsubs; i++)
		n += !s->subs[i].dead;
	json_object_object_add(*res, "subscriptions", json_object_new_int(n));
	if (fp_journal__repaired() >= 0)	/* left by a featprofd killed mid-attach */
		json_object_object_add(*res, "breakpoints_repaired_at_start",
				       json_object_new_int(fp_journal__repaired()));
	fp_report_daemon_keys(*res, s->opts->cal);
	json_object_object_add(*res, "kernel", fp_kernel_mechanisms(s->opts->cal->optimized));
	return FP_OK;
}

/* A subscription's interval and slot, from the request. */
static enum fp_status new_sub(struct server *s, struct client *c, struct json_object *req,
			      struct sub **out, char *msg, size_t msglen)
{
	struct json_object *v;
	int64_t ms = 1000;
	struct sub *sb;

	if (json_object_object_get_ex(req, "interval_ms", &v)) {
		if (!json_object_is_type(v, json_type_int)) {
			snprintf(msg, msglen, "'interval_ms' must be an integer");
			return FP_E_BAD_REQUEST;
		}
		ms = json_object_get_int64(v);
	}
	if (ms < FP_MIN_INTERVAL_MS || ms > 3600000) {
		snprintf(msg, msglen, "'interval_ms' must be %d to 3600000", FP_MIN_INTERVAL_MS);
		return FP_E_BAD_REQUEST;
	}
	if (sub_room(s, c, msg, msglen))
		return FP_E_BUSY;
	sb = &s->subs[s->nsubs++];
	memset(sb, 0, sizeof(*sb));
	sb->id = ++s->next_sub;
	sb->c = c;
	sb->interval_ms = (unsigned)ms;
	sb->due_ns = fp_mono_ns() + (uint64_t)ms * 1000000ULL;
	*out = sb;
	return FP_OK;
}

static enum fp_status do_subscribe(struct server *s, struct client *c, struct request *r,
				   struct json_object **res, char *msg, size_t msglen)
{
	enum fp_status st;
	struct sub *sb;

	st = new_sub(s, c, r->obj, &sb, msg, msglen);
	if (st)
		return st;
	sb->pid = r->pid;
	sb->prev = fp_target__snapshot(s->targets[r->ti]);
	*res = json_object_new_object();
	json_object_object_add(*res, "subscription", json_object_new_int(sb->id));
	return FP_OK;
}

/* top and stream --exe: the executable's figures per interval, summed over its processes. */
static enum fp_status do_exe_subscribe(struct server *s, struct client *c, struct request *r,
				       struct json_object **res, char *msg, size_t msglen)
{
	int gi = fp_group_find(s, r->obj, msg, msglen);
	enum fp_status st;
	struct sub *sb;

	if (gi < 0)
		return gi == -2 ? FP_E_BAD_REQUEST : FP_E_NOT_ATTACHED;
	st = new_sub(s, c, r->obj, &sb, msg, msglen);
	if (st)
		return st;
	sb->group = gi + 1;
	fp_group_sub_start(s, sb);
	*res = json_object_new_object();
	json_object_object_add(*res, "subscription", json_object_new_int(sb->id));
	return FP_OK;
}

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
#define RECORD_DRAIN_MS 100
#define RECORD_BEHIND_MS 5	/* next drain when the last one left events behind */
#define RECORD_QUEUE_HIGH (4u << 20)
#define RECORD_BATCH 32768
#define RECORD_EVENT_JSON 56	/* bytes of one event's JSON, a generous estimate */

struct recording {
	struct json_object *batch;
	uint64_t events, end_ns;
	size_t room;			/* events the current drain may still take */
	int halted;			/* the end: no more writes, draining what is left */
	struct fp_snapshot *end_snap;	/* figures at the halt */
};

static int rec_event(void *ctx, void *data, size_t size)
{
	struct recording *rc = ctx;
	const struct fp_event *e = data;
	struct json_object *a;

	if (size < sizeof(*e))
		return 0;
	a = json_object_new_array_ext(6);
	json_object_array_add(a, json_object_new_int64(e->tid));
	json_object_array_add(a, json_object_new_int64(e->region));
	json_object_array_add(a, json_object_new_int64((int64_t)e->start));
	json_object_array_add(a, json_object_new_int64((int64_t)e->end));
	json_object_array_add(a, json_object_new_int64(e->depth));
	json_object_array_add(a, json_object_new_int64(e->ndesc));
	json_object_array_add(rc->batch, a);
	rc->events++;
	/* this event is taken; a negative return stops the drain before the next one */
	return --rc->room ? 0 : -ENOSPC;
}

static uint32_t ring_bytes(const struct fp_snapshot *snap, uint64_t since_ns, int64_t ms)
{
	double n = 0, rate, want, whole;
	uint32_t bytes = 64u << 10;
	int r;

	for (r = 0; snap && r < snap->nregions; r++)
		n += (double)snap->regions[r].count;
	rate = snap && snap->taken_ns > since_ns ? n * 1e9 / (double)(snap->taken_ns - since_ns)
						 : 0;
	want = rate * RECORD_DRAIN_MS / 1000.0 * 4 * (sizeof(struct fp_event) + 8);
	whole = rate * (double)ms / 1000.0 * (sizeof(struct fp_event) + 8);
	if (want > whole)
		want = whole;
	while (bytes < want && bytes < (64u << 20))
		bytes <<= 1;
	return bytes;
}

static enum fp_status do_record(struct server *s, struct client *c, struct request *r,
				struct json_object **res, char *msg, size_t msglen)
{
	struct fp_target *t = s->targets[r->ti];
	struct json_object *v, *names;
	struct recording *rc;
	struct sub *sb;
	int64_t ms;
	uint32_t bytes;
	int i;

	if (!json_object_object_get_ex(r->obj, "duration_ms", &v) ||
	    !json_object_is_type(v, json_type_int) || (ms = json_object_get_int64(v)) < 100 ||
	    ms > 3600000) {
		snprintf(msg, msglen, "'duration_ms' must be an integer, 100 to 3600000");
		return FP_E_BAD_REQUEST;
	}
	if (t->exited || !t->attached_sites) {
		snprintf(msg, msglen, "pid %d: %s", (int)t->pid,
			 t->exited ? "exited" : "no region enabled (enable a feature first)");
		return FP_E_BAD_REQUEST;
	}
	if (sub_room(s, c, msg, msglen))
		return FP_E_BUSY;
	rc = calloc(1, sizeof(*rc));
	if (!rc || !(rc->batch = json_object_new_array())) {
		free(rc);
		snprintf(msg, msglen, "out of memory");
		return FP_E_INTERNAL;
	}
	sb = &s->subs[s->nsubs];
	memset(sb, 0, sizeof(*sb));
	sb->prev = fp_target__snapshot(t);
	bytes = ring_bytes(sb->prev, t->enabled_at_ns, ms);
	if (!sb->prev || fp_target__record_start(t, bytes, rec_event, rc, msg, msglen)) {
		if (!sb->prev)
			snprintf(msg, msglen, "pid %d: cannot read figures", (int)r->pid);
		fp_snapshot__free(sb->prev);
		json_object_put(rc->batch);
		free(rc);
		return t->rec_fd >= 0 ? FP_E_BUSY : FP_E_INTERNAL;
	}
	s->nsubs++;
	sb->id = ++s->next_sub;
	sb->c = c;
	sb->pid = r->pid;
	sb->rec = rc;
	sb->interval_ms = RECORD_DRAIN_MS;
	sb->due_ns = fp_mono_ns() + RECORD_DRAIN_MS * 1000000ULL;
	rc->end_ns = fp_mono_ns() + (uint64_t)ms * 1000000ULL;
	*res = json_object_new_object();
	json_object_object_add(*res, "record", json_object_new_int(sb->id));
	json_object_object_add(*res, "ring_bytes", json_object_new_int64(bytes));
	names = json_object_new_array();
	for (i = 0; i < t->cat->nregions; i++)
		json_object_array_add(names, json_object_new_string(t->cat->regions[i].name));
	json_object_object_add(*res, "regions", names);
	fp_log(FP_LOG_INFO, "pid %d: recording %lld ms, ring %u bytes", (int)t->pid,
	       (long long)ms, bytes);
	return FP_OK;
}

/* Pushes the batch drained so far (none when empty). */
static void record_push(struct server *s, struct sub *sb)
{
	struct json_object *o;

	if (!json_object_array_length(sb->rec->batch))
		return;
	o = json_object_new_object();
	json_object_object_add(o, "record", json_object_new_int(sb->id));
	json_object_object_add(o, "events", sb->rec->batch);
	fp_send(s, sb->c, o);
	sb->rec->batch = json_object_new_array();
}

/* Drains what the client has room for; 1 when the ring may hold more, 0 when it is empty
 * (or the client has no room now: the next tick tries again). */
static int record_drain(struct server *s, struct sub *sb, struct fp_target *t)
{
	struct recording *rc = sb->rec;
	size_t queued = fp_client_queued(sb->c);
	int n;

	if (queued >= RECORD_QUEUE_HIGH)
		return 0;
	rc->room = (RECORD_QUEUE_HIGH - queued) / RECORD_EVENT_JSON;
	if (rc->room > RECORD_BATCH)
		rc->room = RECORD_BATCH;
	if (!rc->room)
		return 0;
	n = fp_target__record_drain(t);
	record_push(s, sb);
	return n == -ENOSPC;
}

/* The summary, once the halted ring is empty. */
static void record_done(struct server *s, struct sub *sb, struct fp_target *t)
{
	struct fp_snapshot *cur = sb->rec->end_snap, *d;
	struct json_object *o, *st;
	uint64_t dropped = fp_target__record_stop(t);

	d = cur ? fp_snapshot__delta(cur, sb->prev) : NULL;
	o = json_object_new_object();
	json_object_object_add(o, "record", json_object_new_int(sb->id));
	json_object_object_add(o, "done", json_object_new_boolean(1));
	json_object_object_add(o, "events", json_object_new_int64((int64_t)sb->rec->events));
	json_object_object_add(o, "dropped", json_object_new_int64((int64_t)dropped));
	if (d) {
		const struct fp_calibration *cal = cal_of(s, t);
		struct json_object *parts = json_object_new_array();
		int k;

		st = fp_report_stats(t->cat, d, cal, t->enabled);
		json_object_object_add(st, "comm", json_object_new_string(t->comm));
		json_object_object_add(st, "elapsed_ns", json_object_new_int64(
						  (int64_t)(cur->taken_ns - sb->prev->taken_ns)));
		for (k = 0; k < FP_C_N; k++)
			json_object_array_add(parts, json_object_new_double(
						     cal && cal->valid ? cal->part_ns[k] : 0));
		json_object_object_add(o, "probe_parts_ns", parts);
		json_object_object_add(o, "stats", st);
	}
	fp_snapshot__free(d);
	fp_send(s, sb->c, o);
	fp_log(FP_LOG_INFO, "pid %d: recorded %llu events, %llu dropped", (int)t->pid,
	       (unsigned long long)sb->rec->events, (unsigned long long)dropped);
	sb->dead = 1;
}

/* Drains at the client's pace; at the end halts the ring, drains the rest, summarizes. */
static void record_tick(struct server *s, struct sub *sb)
{
	int ti = find_target(s, sb->pid);
	struct fp_target *t = ti >= 0 ? s->targets[ti] : NULL;
	struct recording *rc = sb->rec;
	struct json_object *o;
	int more;

	if (!t || t->exited || t->rec_fd < 0) {	/* exit was pushed; a detach is not */
		if (!t || !t->exited) {
			o = json_object_new_object();
			json_object_object_add(o, "record", json_object_new_int(sb->id));
			json_object_object_add(o, "event", json_object_new_string("detached"));
			fp_send(s, sb->c, o);
		}
		sb->dead = 1;
		return;
	}
	if (!rc->halted && fp_mono_ns() >= rc->end_ns) {
		fp_target__record_halt(t);
		rc->halted = 1;
		rc->end_snap = fp_target__snapshot(t);
	}
	more = record_drain(s, sb, t);
	if (more || fp_client_queued(sb->c) >= RECORD_QUEUE_HIGH) {	/* soon again */
		sb->due_ns = fp_mono_ns() + RECORD_BEHIND_MS * 1000000ULL;
		return;
	}
	if (rc->halted)
		record_done(s, sb, t);
}

void fp_record_end(struct server *s, struct sub *sb)
{
	int ti;

	if (!sb->rec)
		return;
	ti = find_target(s, sb->pid);
	if (ti >= 0 && s->targets[ti]->rec_fd >= 0)
		fp_target__record_stop(s->targets[ti]);
	fp_snapshot__free(sb->rec->end_snap);
	json_object_put(sb->rec->batch);
	free(sb->rec);
	sb->rec = NULL;
}

/*
 * sample: {pid, hz (1..10000, default 997), on (default true), remote (default
 * false)}. On: attaches the target if it is not yet (no region needs to be enabled:
 * sampling reads the program's own region stack), starts or restarts sampling; remote:
 * by the daemon's sampler thread from its own CPU instead of a cpu-clock event in each
 * thread. Off: stops it, the figures stay in stats.
 */
enum fp_status fp_sample_args(struct json_object *req, int64_t *hz, int *on, int *remote,
			      char *msg, size_t msglen)
{
	struct json_object *v;

	*hz = 997;
	*on = 1;
	*remote = 0;
	if (json_object_object_get_ex(req, "remote", &v)) {
		if (!json_object_is_type(v, json_type_boolean)) {
			snprintf(msg, msglen, "'remote' must be true or false");
			return FP_E_BAD_REQUEST;
		}
		*remote = json_object_get_boolean(v);
	}
	if (json_object_object_get_ex(req, "hz", &v) &&
	    (!json_object_is_type(v, json_type_int) || (*hz = json_object_get_int64(v)) < 1 ||
	     *hz > 10000)) {
		snprintf(msg, msglen, "'hz' must be an integer, 1 to 10000");
		return FP_E_BAD_REQUEST;
	}
	if (json_object_object_get_ex(req, "on", &v)) {
		if (!json_object_is_type(v, json_type_boolean)) {
			snprintf(msg, msglen, "'on' must be true or false");
			return FP_E_BAD_REQUEST;
		}
		*on = json_object_get_boolean(v);
	}
	return FP_OK;
}

static enum fp_status do_sample(struct server *s, struct client *c, struct request *r,
				struct json_object **res, char *msg, size_t msglen)
{
	enum fp_status st;
	int64_t hz;
	int on, remote;
	struct fp_target *t;

	st = fp_sample_args(r->obj, &hz, &on, &remote, msg, msglen);
	if (st)
		return st;
	st = new_target(s, r->pid, &r->ti, NULL, msg, msglen);
	if (st)
		return st;
	t = s->targets[r->ti];
	if (t->exited) {
		snprintf(msg, msglen, "pid %d: exited", (int)r->pid);
		return FP_E_NO_SUCH_PROCESS;
	}
	if (!on) {
		fp_target__sample_stop(t);
	} else {
		fp_target__sample_stop(t);	/* a restart takes the new rate */
		int ret = fp_target__sample_start(t, (int)hz, remote, msg, msglen);

		if (ret)
			return ret == -ENOENT ? FP_E_NO_PROBES : FP_E_INTERNAL;
		if (!t->enabled_at_ns)
			t->enabled_at_ns = fp_mono_ns();
		fp_log(FP_LOG_INFO, "pid %d: sampling at %d Hz%s (TLS at fs%+lld)", (int)t->pid,
		       (int)hz, remote ? ", remote" : "", (long long)t->sample_tls_off);
	}
	*res = json_object_new_object();
	json_object_object_add(*res, "pid", json_object_new_int(t->pid));
	json_object_object_add(*res, "sampling", json_object_new_boolean(on));
	json_object_object_add(*res, "hz", json_object_new_int((int)hz));
	json_object_object_add(*res, "clock", json_object_new_string(remote ? "remote"
										: "cpu-clock"));
	return FP_OK;
}

static enum fp_status do_unsubscribe(struct server *s, struct client *c, struct request *r,
				     struct json_object **res, char *msg, size_t msglen)
{
	struct json_object *v;
	int i, id;

	if (!json_object_object_get_ex(r->obj, "subscription", &v) ||
	    !json_object_is_type(v, json_type_int)) {
		snprintf(msg, msglen, "'subscription' must be an integer");
		return FP_E_BAD_REQUEST;
	}
	id = json_object_get_int(v);
	for (i = 0; i < s->nsubs; i++)
		if (s->subs[i].id == id && s->subs[i].c == c && !s->subs[i].dead) {
			s->subs[i].dead = 1;
			return FP_OK;
		}
	snprintf(msg, msglen, "no subscription %d of yours", id);
	return FP_E_BAD_REQUEST;
}

/*
 * Measures the probe cost again (the machine may have changed under the daemon). It
 * changes every target's compensation, hence V_PRIV. Existing targets keep their
 * attach point; new ones get the one now measured cheaper.
 */
static enum fp_status do_calibrate(struct server *s, struct client *c, struct request *r,
				   struct json_object **res, char *msg, size_t msglen)
{
	struct fp_daemon_cal fresh;
	char err[512];

	if (fp_calibrate(&fresh, s->opts->site, err, sizeof(err))) {
		snprintf(msg, msglen, "calibrate: %s; the previous calibration stays", err);
		return FP_E_INTERNAL;
	}
	*res = json_object_new_object();
	json_object_object_add(*res, "previous", fp_report_daemon_cal(s->opts->cal));
	fresh.runs = s->opts->cal->runs + 1;
	*s->opts->cal = fresh;
	fp_log(FP_LOG_INFO, "recalibrated: %s", fresh.why);
	fp_report_daemon_keys(*res, s->opts->cal);
	return FP_OK;
}

static enum fp_status do_exe_enable(struct server *s, struct client *c, struct request *r,
				    struct json_object **res, char *msg, size_t msglen)
{
	return fp_group_enable(s, r->obj, 1, res, msg, msglen);
}

static enum fp_status do_exe_disable(struct server *s, struct client *c, struct request *r,
				     struct json_object **res, char *msg, size_t msglen)
{
	return fp_group_enable(s, r->obj, 0, res, msg, msglen);
}

static enum fp_status do_exe_sample(struct server *s, struct client *c, struct request *r,
				    struct json_object **res, char *msg, size_t msglen)
{
	(void)c;
	return fp_group_sample(s, r->obj, res, msg, msglen);
}

static enum fp_status do_exe_stats(struct server *s, struct client *c, struct request *r,
				   struct json_object **res, char *msg, size_t msglen)
{
	return fp_group_stats(s, r->obj, res, msg, msglen);
}

static const struct verb verbs[] = {
	{ "hello", do_hello, 0 },
	{ "list", do_list, V_PID },
	{ "attach", do_attach, V_PID },
	{ "enable", do_enable, V_PID },
	{ "disable", do_disable, V_PID | V_TARGET },
	{ "detach", do_detach, V_PID | V_TARGET },
	{ "reset", do_reset, V_PID | V_TARGET },
	{ "stats", do_stats, V_PID | V_TARGET },
	{ "status", do_status, 0 },
	{ "subscribe", do_subscribe, V_PID | V_TARGET },
	{ "record", do_record, V_PID | V_TARGET },
	{ "sample", do_sample, V_PID },
	{ "unsubscribe", do_unsubscribe, 0 },
	{ "calibrate", do_calibrate, V_PRIV },
	{ "exe_enable", do_exe_enable, V_PRIV },
	{ "exe_disable", do_exe_disable, V_PRIV },
	{ "exe_stats", do_exe_stats, V_PRIV },
	{ "exe_subscribe", do_exe_subscribe, V_PRIV },
	{ "exe_sample", do_exe_sample, V_PRIV },
	{ "repair", do_repair, V_PID | V_PRIV },
};

/* The checks a verb's flags ask for, in order. */
static enum fp_status admit(struct server *s, struct client *c, const struct verb *v,
			    struct request *r, char *msg, size_t msglen)
{
	enum fp_status st;

	if ((v->flags & V_PRIV) && !fp_peer_privileged(&c->peer)) {
		snprintf(msg, msglen, "%s: root or CAP_SYS_PTRACE only", v->name);
		return FP_E_PERMISSION_DENIED;
	}
	if ((v->flags & V_PID) && (st = arg_pid(s, c, r, msg, msglen)))
		return st;
	if (v->flags & V_TARGET) {
		r->ti = find_target(s, r->pid);
		if (r->ti < 0) {
			snprintf(msg, msglen, "pid %d: not attached (enable a feature first)",
				 (int)r->pid);
			return FP_E_NOT_ATTACHED;
		}
	}
	return FP_OK;
}

void fp_handle_line(struct server *s, struct client *c, const char *line, size_t len)
{
	struct request r = { .ti = -1 };
	struct json_object *res = NULL, *v;
	const struct verb *vb = NULL;
	enum fp_status st = FP_E_BAD_REQUEST;
	char msg[1024] = "", cut[101];
	long long id = 0;
	int id_ok;
	size_t i;

	/* strict JSON, UTF-8, no NUL, an id and a verb (common/request.c) */
	r.obj = fp_request_parse(line, len, &id, &id_ok, msg, sizeof(msg));
	if (id_ok)
		r.id = json_object_new_int64(id);	/* echoed exactly as it was read */
	if (!r.obj)
		goto out;
	json_object_object_get_ex(r.obj, "verb", &v);
	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]) && !vb; i++)
		if (!strcmp(verbs[i].name, json_object_get_string(v)))
			vb = &verbs[i];
	if (!vb) {
		st = FP_E_UNKNOWN_VERB;
		fp_utf8_cut(cut, sizeof(cut), json_object_get_string(v));
		snprintf(msg, sizeof(msg), "unknown verb '%s'", cut);
		goto out;
	}
	st = admit(s, c, vb, &r, msg, sizeof(msg));
	if (st == FP_OK)
		st = vb->fn(s, c, &r, &res, msg, sizeof(msg));
	if (st != FP_OK && !msg[0])
		snprintf(msg, sizeof(msg), "%s failed", vb->name);
out:
	reply(s, c, r.id, st, msg, res);
	json_object_put(r.id);
	json_object_put(r.obj);
}

/* --- subscriptions ------------------------------------------------------------------ */

void fp_run_subscriptions(struct server *s)
{
	uint64_t now = fp_mono_ns();
	int i;

	if (s->sample_due_ns <= now) {	/* name sampled ids while targets are readable */
		for (i = 0; i < FP_MAX_TARGETS; i++)
			if (s->targets[i])
				fp_target__sample_name(s->targets[i]);
		s->sample_due_ns = now + 200000000ULL;
	}

	for (i = 0; i < s->nsubs; i++) {
		struct sub *sb = &s->subs[i];
		struct fp_snapshot *cur, *d;
		struct json_object *sr;
		uint64_t elapsed;
		struct json_object *o, *st;
		struct fp_target *t;
		int ti;

		if (sb->dead || sb->c->dead || sb->due_ns > now)
			continue;
		sb->due_ns = now + (uint64_t)sb->interval_ms * 1000000ULL;
		if (sb->rec) {
			record_tick(s, sb);
			continue;
		}
		if (sb->group) {
			if ((o = fp_group_sub_tick(s, sb)))
				fp_send(s, sb->c, o);
			continue;
		}
		ti = find_target(s, sb->pid);
		if (ti < 0 || s->targets[ti]->exited)
			continue;
		t = s->targets[ti];
		cur = fp_target__snapshot(t);
		if (!cur)
			continue;
		d = fp_snapshot__delta(cur, sb->prev);
		elapsed = sb->prev ? cur->taken_ns - sb->prev->taken_ns : 0;
		fp_snapshot__free(sb->prev);
		sb->prev = cur;
		if (!d)
			continue;
		st = fp_report_stats(t->cat, d, cal_of(s, t), t->enabled);
		json_object_object_add(st, "comm", json_object_new_string(t->comm));
		if ((sr = fp_sample_report(t)))	/* cumulative, since sampling began: */
			json_object_object_add(st, "sampling", sr);	/* not merged */
		json_object_object_add(st, "interval_ns", json_object_new_int64(
					       (int64_t)sb->interval_ms * 1000000));
		/* the delta's real span: between the two snapshots */
		json_object_object_add(st, "elapsed_ns", json_object_new_int64((int64_t)elapsed));
		fp_snapshot__free(d);
		o = json_object_new_object();
		json_object_object_add(o, "subscription", json_object_new_int(sb->id));
		json_object_object_add(o, "pid", json_object_new_int(sb->pid));
		json_object_object_add(o, "stats", st);
		fp_send(s, sb->c, o);	/* never frees the client nor reorders subs[] */
	}
}

int fp_next_timeout_ms(struct server *s)
{
	uint64_t now = fp_mono_ns(), due = UINT64_MAX;
	int i;

	for (i = 0; i < FP_MAX_TARGETS; i++)
		if (s->targets[i] && s->targets[i]->nsample_links && s->sample_due_ns < due)
			due = s->sample_due_ns;

	for (i = 0; i < s->nsubs; i++)
		if (!s->subs[i].dead && s->subs[i].due_ns < due)
			due = s->subs[i].due_ns;
	if (due == UINT64_MAX)
		return -1;
	return due <= now ? 0 : (int)((due - now) / 1000000ULL) + 1;
}
