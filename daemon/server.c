// SPDX-License-Identifier: GPL-2.0
/*
 * featprofd's socket server: one epoll loop serves the listening socket, every client,
 * every target's pidfd (readable when the process exits), a signalfd, and the
 * subscription timer. Protocol: daemon/protocol.h.
 *
 * Requests are checked in a fixed order before anything changes: line length, JSON,
 * object with an integer id and a string verb, known verb, argument types, the peer's
 * right to trace the pid, names. A client's bad input gets an error reply and touches
 * nothing else; a client that stops reading is disconnected when its backlog passes
 * FP_MAX_BACKLOG, so it cannot make the daemon grow without bound.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "protocol.h"
#include "report.h"
#include "server.h"
#include "target.h"

#define FP_MAX_BACKLOG (16u << 20)
#define FP_MAX_TARGETS 256
#define FP_MAX_SUBS 1024

struct client {
	int fd;
	struct ucred cred;
	int cap_ptrace;
	char *in;
	size_t inlen;
	int discarding;		/* inside an over-long line, up to its newline */
	char *out;
	size_t outlen, outcap;
	int want_out;
};

struct sub {
	int id;
	struct client *c;
	pid_t pid;
	unsigned interval_ms;
	uint64_t due_ns;
	struct fp_snapshot *prev;
};

struct server {
	int epfd, lfd, sigfd;
	struct client *clients[FP_MAX_CLIENTS];
	struct fp_target *targets[FP_MAX_TARGETS];
	struct sub subs[FP_MAX_SUBS];
	int nsubs, next_sub;
	const struct fp_server_opts *opts;
	int stop;
};

/* epoll data: tag in the low bits of a pointer-sized integer */
enum { EV_LISTEN = 1, EV_SIGNAL, EV_CLIENT, EV_TARGET };
#define EV(tag, idx) (((uint64_t)(idx) << 8) | (tag))

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* --- output ------------------------------------------------------------------------ */

static void client_close(struct server *s, int idx);

static void flush_client(struct server *s, int idx)
{
	struct client *c = s->clients[idx];
	struct epoll_event ev = { .data.u64 = EV(EV_CLIENT, idx) };
	ssize_t n;

	while (c->outlen) {
		n = send(c->fd, c->out, c->outlen, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			client_close(s, idx);
			return;
		}
		memmove(c->out, c->out + n, c->outlen - (size_t)n);
		c->outlen -= (size_t)n;
	}
	if (!!c->outlen != c->want_out) {
		c->want_out = !!c->outlen;
		ev.events = EPOLLIN | (c->want_out ? EPOLLOUT : 0);
		epoll_ctl(s->epfd, EPOLL_CTL_MOD, c->fd, &ev);
	}
}

static int client_index(struct server *s, struct client *c)
{
	int i;

	for (i = 0; i < FP_MAX_CLIENTS; i++)
		if (s->clients[i] == c)
			return i;
	return -1;
}

/* Queues one JSON line (consumes obj). */
static void send_json(struct server *s, struct client *c, struct json_object *obj)
{
	const char *txt = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN);
	size_t len = strlen(txt);
	int idx = client_index(s, c);

	if (idx < 0) {
		json_object_put(obj);
		return;
	}
	if (c->outlen + len + 1 > FP_MAX_BACKLOG) {
		fp_log(FP_LOG_WARN, "client pid %d: not reading, %zu bytes queued: disconnected",
		       (int)c->cred.pid, c->outlen);
		json_object_put(obj);
		client_close(s, idx);
		return;
	}
	if (c->outlen + len + 1 > c->outcap) {
		size_t cap = (c->outlen + len + 1) * 2;
		char *p = realloc(c->out, cap);

		if (!p) {
			json_object_put(obj);
			client_close(s, idx);
			return;
		}
		c->out = p;
		c->outcap = cap;
	}
	memcpy(c->out + c->outlen, txt, len);
	c->out[c->outlen + len] = '\n';
	c->outlen += len + 1;
	json_object_put(obj);
	flush_client(s, idx);
}

static struct json_object *id_of(struct json_object *req)
{
	struct json_object *id;

	if (req && json_object_object_get_ex(req, "id", &id) && json_object_is_type(id, json_type_int))
		return json_object_new_int64(json_object_get_int64(id));
	return NULL;
}

static void reply_error(struct server *s, struct client *c, struct json_object *req,
			const char *code, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void reply_error(struct server *s, struct client *c, struct json_object *req,
			const char *code, const char *fmt, ...)
{
	struct json_object *o = json_object_new_object(), *e = json_object_new_object();
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_object_add(o, "id", id_of(req));
	json_object_object_add(e, "code", json_object_new_string(code));
	json_object_object_add(e, "message", json_object_new_string(msg));
	json_object_object_add(o, "error", e);
	send_json(s, c, o);
}

static void reply_ok(struct server *s, struct client *c, struct json_object *req,
		     struct json_object *result)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "id", id_of(req));
	json_object_object_add(o, "result", result ? result : json_object_new_object());
	send_json(s, c, o);
}

/* --- access ------------------------------------------------------------------------ */

/* Whether the client could ptrace pid: root or CAP_SYS_PTRACE, or same uids and dumpable. */
static int may_trace(const struct client *c, pid_t pid, char *why, size_t whylen)
{
	unsigned ruid, euid, suid;
	char path[64], line[256];
	struct stat st;
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f) {
		snprintf(why, whylen, "pid %d: no such process", (int)pid);
		return -ESRCH;
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %u %u %u", &ruid, &euid, &suid) == 3) {
			found = 1;
			break;
		}
	fclose(f);
	if (!found) {
		snprintf(why, whylen, "pid %d: no such process", (int)pid);
		return -ESRCH;
	}
	if (c->cred.uid == 0 || c->cap_ptrace)
		return 0;
	/* /proc/PID belongs to root while the process is not dumpable */
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (ruid == c->cred.uid && euid == c->cred.uid && suid == c->cred.uid && !stat(path, &st) &&
	    st.st_uid == c->cred.uid)
		return 0;
	snprintf(why, whylen, "pid %d: permission denied: you may profile only processes you "
		 "could ptrace", (int)pid);
	return -EPERM;
}

static int peer_cap_ptrace(pid_t pid)
{
	unsigned long long cap = 0;
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &cap) == 1)
			break;
	fclose(f);
	return !!(cap & (1ULL << 19)); /* CAP_SYS_PTRACE */
}

/* --- targets ----------------------------------------------------------------------- */

/* The calibration of the attach point a target is attached at. */
static const struct fp_calibration *cal_of(struct server *s, const struct fp_target *t)
{
	return &s->opts->cal->at[t->use_opt ? FP_AT_NOP5 : FP_AT_NOP1];
}

static int find_target(struct server *s, pid_t pid)
{
	int i;

	for (i = 0; i < FP_MAX_TARGETS; i++)
		if (s->targets[i] && s->targets[i]->pid == pid)
			return i;
	return -1;
}

static void drop_subs_of(struct server *s, pid_t pid, struct client *c)
{
	int i;

	for (i = 0; i < s->nsubs;) {
		if ((pid && s->subs[i].pid == pid) || (c && s->subs[i].c == c)) {
			fp_snapshot__free(s->subs[i].prev);
			s->subs[i] = s->subs[--s->nsubs];
			continue;
		}
		i++;
	}
}

/* The process is gone: keep its last figures, release the BPF object and links. */
static void target_exited(struct server *s, int ti)
{
	struct fp_target *t = s->targets[ti];
	int i;

	if (t->exited)
		return;
	fp_snapshot__free(t->last);
	t->last = fp_target__snapshot(t);
	t->exited = 1;
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, t->pidfd, NULL);
	fp_target__release(t);
	fp_log(FP_LOG_INFO, "pid %d (%s) exited; detached, last figures kept", (int)t->pid,
	       t->comm);
	for (i = 0; i < s->nsubs; i++) {
		struct json_object *o;

		if (s->subs[i].pid != t->pid)
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "subscription", json_object_new_int(s->subs[i].id));
		json_object_object_add(o, "pid", json_object_new_int(t->pid));
		json_object_object_add(o, "event", json_object_new_string("exit"));
		send_json(s, s->subs[i].c, o);
	}
}

static int get_target(struct server *s, struct client *c, struct json_object *req, pid_t pid,
		      int create)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct fp_target *t;
	char err[1024];
	int i, slot = -1;

	i = find_target(s, pid);
	if (i >= 0 || !create) {
		if (i < 0)
			reply_error(s, c, req, "not_attached", "pid %d: not attached (enable a "
				    "feature first)", (int)pid);
		return i;
	}
	for (i = 0; i < FP_MAX_TARGETS && slot < 0; i++)
		if (!s->targets[i])
			slot = i;
	if (slot < 0) {
		reply_error(s, c, req, "busy", "too many targets (%d)", FP_MAX_TARGETS);
		return -1;
	}
	t = fp_target__new(pid, s->opts->cal->optimized, err, sizeof(err));
	if (!t) {
		reply_error(s, c, req, errno == ENOENT ? "no_probes" :
				       errno == ESRCH ? "no_such_process" : "internal", "%s", err);
		return -1;
	}
	ev.data.u64 = EV(EV_TARGET, slot);
	epoll_ctl(s->epfd, EPOLL_CTL_ADD, t->pidfd, &ev);
	s->targets[slot] = t;
	fp_log(FP_LOG_INFO, "attached pid %d (%s): %d regions, %d features", (int)pid, t->comm,
	       t->cat->nregions, t->cat->nfeatures);
	return slot;
}

/* --- request handling -------------------------------------------------------------- */

static int arg_pid(struct server *s, struct client *c, struct json_object *req, pid_t *pid)
{
	struct json_object *v;
	char why[256];
	int64_t p;
	int ret;

	if (!json_object_object_get_ex(req, "pid", &v) || !json_object_is_type(v, json_type_int)) {
		reply_error(s, c, req, "bad_request", "'pid' must be an integer");
		return -1;
	}
	p = json_object_get_int64(v);
	if (p <= 0 || p > 0x3fffffff) {
		reply_error(s, c, req, "bad_request", "'pid' out of range");
		return -1;
	}
	*pid = (pid_t)p;
	ret = may_trace(c, *pid, why, sizeof(why));
	if (ret == -ESRCH && find_target(s, *pid) >= 0)
		ret = c->cred.uid == 0 || c->cap_ptrace ? 0 : -EPERM; /* exited target */
	if (ret) {
		reply_error(s, c, req, ret == -ESRCH ? "no_such_process" : "permission_denied",
			    "%s", ret == -EPERM && !strstr(why, "permission")
				  ? "permission denied: exited target of another user" : why);
		return -1;
	}
	return 0;
}

/* Resolves features[], regions[] and all into a region selection; nothing on error. */
static int select_regions(struct server *s, struct client *c, struct json_object *req,
			  const struct fp_target *t, uint8_t *sel)
{
	const struct fp_catalog *cat = t->cat;
	struct json_object *v, *arr;
	int any = 0, i, r;
	size_t k;

	memset(sel, 0, (size_t)cat->nregions);
	if (json_object_object_get_ex(req, "all", &v)) {
		if (!json_object_is_type(v, json_type_boolean)) {
			reply_error(s, c, req, "bad_request", "'all' must be a boolean");
			return -1;
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
		if (!json_object_is_type(arr, json_type_array)) {
			reply_error(s, c, req, "bad_request", "'%s' must be an array of strings", key);
			return -1;
		}
		for (k = 0; k < json_object_array_length(arr); k++) {
			struct json_object *n = json_object_array_get_idx(arr, k);
			const char *name;

			if (!json_object_is_type(n, json_type_string)) {
				reply_error(s, c, req, "bad_request", "'%s' must be an array of "
					    "strings", key);
				return -1;
			}
			name = json_object_get_string(n);
			if (i) {
				r = fp_catalog__region(cat, name);
				if (r < 0) {
					reply_error(s, c, req, "unknown_name", "pid %d has no region "
						    "'%.200s' (see featprof list %d)", (int)t->pid,
						    name, (int)t->pid);
					return -1;
				}
				sel[r] = 1;
			} else {
				if (fp_catalog__feature(cat, name) < 0) {
					reply_error(s, c, req, "unknown_name", "pid %d has no feature "
						    "'%.200s' (see featprof list %d)", (int)t->pid,
						    name, (int)t->pid);
					return -1;
				}
				for (r = 0; r < cat->nregions; r++)
					if (fp_region__has_feature(&cat->regions[r], name))
						sel[r] = 1;
			}
			any = 1;
		}
	}
	if (!any) {
		reply_error(s, c, req, "bad_request", "name features, regions, or all");
		return -1;
	}
	return 0;
}

static struct json_object *enabled_json(const struct fp_target *t)
{
	struct json_object *o = json_object_new_object(), *a = json_object_new_array();
	int r;

	for (r = 0; r < t->cat->nregions; r++)
		if (t->enabled && t->enabled[r])
			json_object_array_add(a, json_object_new_string(t->cat->regions[r].name));
	json_object_object_add(o, "pid", json_object_new_int(t->pid));
	json_object_object_add(o, "enabled_regions", a);
	json_object_object_add(o, "attached_sites", json_object_new_int(t->attached_sites));
	return o;
}

static void do_enable(struct server *s, struct client *c, struct json_object *req, int on)
{
	struct fp_target *t;
	char err[1024];
	uint8_t *sel;
	pid_t pid;
	int ti, ret = 0;
	uint64_t t0 = mono_ns();

	if (arg_pid(s, c, req, &pid))
		return;
	ti = get_target(s, c, req, pid, on);
	if (ti < 0)
		return;
	t = s->targets[ti];
	if (t->exited) {
		reply_error(s, c, req, "no_such_process", "pid %d has exited; its last figures "
			    "stay until detach", (int)pid);
		return;
	}
	sel = calloc((size_t)t->cat->nregions, 1);
	if (!sel) {
		reply_error(s, c, req, "internal", "out of memory");
		return;
	}
	if (select_regions(s, c, req, t, sel))
		goto out;
	ret = fp_target__set_regions(t, sel, on, err, sizeof(err));
	if (ret) {
		reply_error(s, c, req, "internal", "%s", err);
		goto out;
	}
	fp_log(FP_LOG_INFO, "pid %d: %s, %d sites attached (%.3f ms)", (int)pid,
	       on ? "enable" : "disable", t->attached_sites, (double)(mono_ns() - t0) / 1e6);
	reply_ok(s, c, req, enabled_json(t));
out:
	free(sel);
}

static void do_stats(struct server *s, struct client *c, struct json_object *req)
{
	struct fp_snapshot *snap;
	struct json_object *o;
	struct fp_target *t;
	pid_t pid;
	int ti;

	if (arg_pid(s, c, req, &pid) || (ti = get_target(s, c, req, pid, 0)) < 0)
		return;
	t = s->targets[ti];
	snap = fp_target__snapshot(t);
	if (!snap) {
		reply_error(s, c, req, "internal", "pid %d: cannot read figures", (int)pid);
		return;
	}
	o = fp_report_stats(t->cat, snap, cal_of(s, t), t->exited ? NULL : t->enabled);
	json_object_object_add(o, "pid", json_object_new_int(pid));
	json_object_object_add(o, "comm", json_object_new_string(t->comm));
	json_object_object_add(o, "exited", json_object_new_boolean(t->exited));
	json_object_object_add(o, "elapsed_ns", json_object_new_int64(
				       t->enabled_at_ns ? (int64_t)(snap->taken_ns - t->enabled_at_ns)
							: 0));
	fp_snapshot__free(snap);
	reply_ok(s, c, req, o);
}

/* Calibration keys of hello, status and calibrate. */
static void add_cal(struct json_object *o, const struct fp_daemon_cal *dc)
{
	const struct fp_calibration *def = &dc->at[dc->optimized ? FP_AT_NOP5 : FP_AT_NOP1];

	json_object_object_add(o, "optimized_uprobes", json_object_new_boolean(dc->optimized));
	json_object_object_add(o, "calibration", fp_report_calibration(def));
	json_object_object_add(o, "kernel_optimizes_nop5",
			       json_object_new_boolean(dc->kernel_optimizes));
	json_object_object_add(o, "pair_ns_nop1", json_object_new_double(dc->at[FP_AT_NOP1].pair_ns));
	json_object_object_add(o, "pair_ns_nop5", json_object_new_double(dc->at[FP_AT_NOP5].pair_ns));
	json_object_object_add(o, "attach", fp_report_daemon_cal(dc));
}

/*
 * Measures the probe cost again (the machine may have changed under the daemon). Root
 * or CAP_SYS_PTRACE only: it changes every target's compensation. Existing targets keep
 * their attach point; new ones get the one now measured cheaper.
 */
static void do_calibrate(struct server *s, struct client *c, struct json_object *req)
{
	struct fp_daemon_cal fresh;
	struct json_object *o;
	char err[512];
	int runs = s->opts->cal->runs;

	if (c->cred.uid != 0 && !c->cap_ptrace) {
		reply_error(s, c, req, "permission_denied", "calibrate: root or CAP_SYS_PTRACE only");
		return;
	}
	if (fp_calibrate(&fresh, s->opts->site, err, sizeof(err))) {
		reply_error(s, c, req, "internal", "calibrate: %s; the previous calibration stays",
			    err);
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "previous", fp_report_daemon_cal(s->opts->cal));
	fresh.runs = runs + 1;
	*s->opts->cal = fresh;
	fp_log(FP_LOG_INFO, "recalibrated: %s", fresh.why);
	add_cal(o, s->opts->cal);
	reply_ok(s, c, req, o);
}

static void do_status(struct server *s, struct client *c, struct json_object *req)
{
	struct json_object *o = json_object_new_object(), *ts = json_object_new_array();
	int i, n = 0, k;

	for (i = 0; i < FP_MAX_TARGETS; i++) {
		struct fp_target *t = s->targets[i];
		struct fp_snapshot *snap;
		struct json_object *to, *an;
		char why[256];

		if (!t || (c->cred.uid != 0 && !c->cap_ptrace &&
			   may_trace(c, t->pid, why, sizeof(why))))
			continue; /* a client sees only targets it could trace */
		to = enabled_json(t);
		json_object_object_add(to, "comm", json_object_new_string(t->comm));
		json_object_object_add(to, "exited", json_object_new_boolean(t->exited));
		json_object_object_add(to, "regions", json_object_new_int(t->cat->nregions));
		json_object_object_add(to, "site_address", json_object_new_string(
					       t->use_opt ? "shielded-nop5" : "nop1"));
		snap = fp_target__snapshot(t);
		an = json_object_new_object();
		for (k = 0; snap && k < FP_AN_MAX; k++)
			json_object_object_add(an, fp_anomaly_names[k],
					       json_object_new_int64((int64_t)snap->anomalies[k]));
		fp_snapshot__free(snap);
		json_object_object_add(to, "anomalies", an);
		json_object_array_add(ts, to);
	}
	for (i = 0; i < FP_MAX_CLIENTS; i++)
		n += s->clients[i] != NULL;
	json_object_object_add(o, "version", json_object_new_int(FP_PROTO_VERSION));
	json_object_object_add(o, "targets", ts);
	json_object_object_add(o, "clients", json_object_new_int(n));
	json_object_object_add(o, "subscriptions", json_object_new_int(s->nsubs));
	add_cal(o, s->opts->cal);
	reply_ok(s, c, req, o);
}

static void do_subscribe(struct server *s, struct client *c, struct json_object *req)
{
	struct json_object *v, *o;
	int64_t ms = 1000;
	struct sub *sb;
	pid_t pid;
	int ti;

	if (arg_pid(s, c, req, &pid) || (ti = get_target(s, c, req, pid, 0)) < 0)
		return;
	if (json_object_object_get_ex(req, "interval_ms", &v)) {
		if (!json_object_is_type(v, json_type_int)) {
			reply_error(s, c, req, "bad_request", "'interval_ms' must be an integer");
			return;
		}
		ms = json_object_get_int64(v);
	}
	if (ms < FP_MIN_INTERVAL_MS || ms > 3600000) {
		reply_error(s, c, req, "bad_request", "'interval_ms' must be %d to 3600000",
			    FP_MIN_INTERVAL_MS);
		return;
	}
	if (s->nsubs >= FP_MAX_SUBS) {
		reply_error(s, c, req, "busy", "too many subscriptions");
		return;
	}
	sb = &s->subs[s->nsubs++];
	memset(sb, 0, sizeof(*sb));
	sb->id = ++s->next_sub;
	sb->c = c;
	sb->pid = pid;
	sb->interval_ms = (unsigned)ms;
	sb->due_ns = mono_ns() + (uint64_t)ms * 1000000ULL;
	sb->prev = fp_target__snapshot(s->targets[ti]);
	o = json_object_new_object();
	json_object_object_add(o, "subscription", json_object_new_int(sb->id));
	reply_ok(s, c, req, o);
}

static void do_unsubscribe(struct server *s, struct client *c, struct json_object *req)
{
	struct json_object *v;
	int i, id;

	if (!json_object_object_get_ex(req, "subscription", &v) ||
	    !json_object_is_type(v, json_type_int)) {
		reply_error(s, c, req, "bad_request", "'subscription' must be an integer");
		return;
	}
	id = json_object_get_int(v);
	for (i = 0; i < s->nsubs; i++)
		if (s->subs[i].id == id && s->subs[i].c == c) {
			fp_snapshot__free(s->subs[i].prev);
			s->subs[i] = s->subs[--s->nsubs];
			reply_ok(s, c, req, NULL);
			return;
		}
	reply_error(s, c, req, "bad_request", "no subscription %d of yours", id);
}

static void handle_request(struct server *s, struct client *c, const char *line, size_t len)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *req, *v;
	const char *verb;
	pid_t pid;
	int ti;

	req = tok ? json_tokener_parse_ex(tok, line, (int)len) : NULL;
	if (!req || json_tokener_get_error(tok) != json_tokener_success ||
	    tok->char_offset != (int)len) {
		json_object_put(req);
		json_tokener_free(tok);
		reply_error(s, c, NULL, "bad_request", "malformed JSON");
		return;
	}
	json_tokener_free(tok);
	if (!json_object_is_type(req, json_type_object)) {
		reply_error(s, c, NULL, "bad_request", "a request is a JSON object");
		goto out;
	}
	if (!json_object_object_get_ex(req, "id", &v) || !json_object_is_type(v, json_type_int)) {
		reply_error(s, c, NULL, "bad_request", "'id' must be an integer");
		goto out;
	}
	if (!json_object_object_get_ex(req, "verb", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		reply_error(s, c, req, "bad_request", "'verb' must be a string");
		goto out;
	}
	verb = json_object_get_string(v);
	if (!strcmp(verb, "hello")) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "version", json_object_new_int(FP_PROTO_VERSION));
		add_cal(o, s->opts->cal);
		reply_ok(s, c, req, o);
	} else if (!strcmp(verb, "enable")) {
		do_enable(s, c, req, 1);
	} else if (!strcmp(verb, "disable")) {
		do_enable(s, c, req, 0);
	} else if (!strcmp(verb, "stats")) {
		do_stats(s, c, req);
	} else if (!strcmp(verb, "status")) {
		do_status(s, c, req);
	} else if (!strcmp(verb, "subscribe")) {
		do_subscribe(s, c, req);
	} else if (!strcmp(verb, "unsubscribe")) {
		do_unsubscribe(s, c, req);
	} else if (!strcmp(verb, "calibrate")) {
		do_calibrate(s, c, req);
	} else if (!strcmp(verb, "attach")) {
		if (arg_pid(s, c, req, &pid) || (ti = get_target(s, c, req, pid, 1)) < 0)
			goto out;
		reply_ok(s, c, req, fp_catalog__to_json(s->targets[ti]->cat));
	} else if (!strcmp(verb, "list")) {
		if (arg_pid(s, c, req, &pid))
			goto out;
		ti = find_target(s, pid);
		if (ti < 0)
			ti = get_target(s, c, req, pid, 1);
		if (ti >= 0)
			reply_ok(s, c, req, fp_catalog__to_json(s->targets[ti]->cat));
	} else if (!strcmp(verb, "detach")) {
		if (arg_pid(s, c, req, &pid) || (ti = get_target(s, c, req, pid, 0)) < 0)
			goto out;
		drop_subs_of(s, pid, NULL);
		if (!s->targets[ti]->exited)
			epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->targets[ti]->pidfd, NULL);
		fp_target__free(s->targets[ti]);
		s->targets[ti] = NULL;
		fp_log(FP_LOG_INFO, "detached pid %d", (int)pid);
		reply_ok(s, c, req, NULL);
	} else if (!strcmp(verb, "reset")) {
		if (arg_pid(s, c, req, &pid) || (ti = get_target(s, c, req, pid, 0)) < 0)
			goto out;
		fp_target__reset(s->targets[ti]);
		reply_ok(s, c, req, NULL);
	} else {
		reply_error(s, c, req, "unknown_verb", "unknown verb '%.100s'", verb);
	}
out:
	json_object_put(req);
}

/* --- connections ------------------------------------------------------------------- */

static void client_close(struct server *s, int idx)
{
	struct client *c = s->clients[idx];

	if (!c)
		return;
	drop_subs_of(s, 0, c);
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c->in);
	free(c->out);
	free(c);
	s->clients[idx] = NULL;
}

static void accept_clients(struct server *s)
{
	for (;;) {
		struct epoll_event ev = { .events = EPOLLIN };
		socklen_t len = sizeof(struct ucred);
		struct client *c;
		int fd, i, slot = -1;

		fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		for (i = 0; i < FP_MAX_CLIENTS && slot < 0; i++)
			if (!s->clients[i])
				slot = i;
		c = slot >= 0 ? calloc(1, sizeof(*c)) : NULL;
		if (c)
			c->in = malloc(FP_MAX_LINE);
		if (!c || !c->in || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c->cred, &len)) {
			static const char busy[] = "{\"id\":null,\"error\":{\"code\":\"busy\","
						   "\"message\":\"too many clients\"}}\n";

			if (send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
				fp_log(FP_LOG_DEBUG, "refused client: %s", strerror(errno));
			close(fd);
			if (c)
				free(c->in);
			free(c);
			continue;
		}
		c->fd = fd;
		c->cap_ptrace = peer_cap_ptrace(c->cred.pid);
		s->clients[slot] = c;
		ev.data.u64 = EV(EV_CLIENT, slot);
		epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev);
	}
}

static void read_client(struct server *s, int idx)
{
	struct client *c = s->clients[idx];
	ssize_t n;

	for (;;) {
		char *nl;

		n = recv(c->fd, c->in + c->inlen, FP_MAX_LINE - c->inlen, MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			client_close(s, idx);
			return;
		}
		if (n < 0)
			return;
		c->inlen += (size_t)n;
		while (s->clients[idx] == c && (nl = memchr(c->in, '\n', c->inlen))) {
			size_t len = (size_t)(nl - c->in);

			if (c->discarding)
				c->discarding = 0;
			else if (len)
				handle_request(s, c, c->in, len);
			if (s->clients[idx] != c)
				return;
			memmove(c->in, nl + 1, c->inlen - len - 1);
			c->inlen -= len + 1;
		}
		if (s->clients[idx] != c)
			return;
		if (c->inlen == FP_MAX_LINE) {	/* no newline in a full buffer */
			if (!c->discarding)
				reply_error(s, c, NULL, "too_long", "request longer than %d bytes",
					    FP_MAX_LINE);
			if (s->clients[idx] != c)
				return;
			c->discarding = 1;
			c->inlen = 0;
		}
	}
}

static void run_subscriptions(struct server *s)
{
	uint64_t now = mono_ns();
	int i;

	for (i = 0; i < s->nsubs; i++) {
		struct sub *sb = &s->subs[i];
		struct fp_snapshot *cur, *d;
		struct json_object *o, *st;
		int ti;

		if (sb->due_ns > now)
			continue;
		sb->due_ns = now + (uint64_t)sb->interval_ms * 1000000ULL;
		ti = find_target(s, sb->pid);
		if (ti < 0 || s->targets[ti]->exited)
			continue;
		cur = fp_target__snapshot(s->targets[ti]);
		if (!cur)
			continue;
		d = fp_snapshot__delta(cur, sb->prev);
		fp_snapshot__free(sb->prev);
		sb->prev = cur;
		if (!d)
			continue;
		st = fp_report_stats(s->targets[ti]->cat, d, cal_of(s, s->targets[ti]),
				     s->targets[ti]->enabled);
		json_object_object_add(st, "comm", json_object_new_string(s->targets[ti]->comm));
		json_object_object_add(st, "interval_ns", json_object_new_int64(
					       (int64_t)sb->interval_ms * 1000000));
		fp_snapshot__free(d);
		o = json_object_new_object();
		json_object_object_add(o, "subscription", json_object_new_int(sb->id));
		json_object_object_add(o, "pid", json_object_new_int(sb->pid));
		json_object_object_add(o, "stats", st);
		send_json(s, sb->c, o); /* may close the client and reorder subs */
	}
}

static int next_timeout_ms(struct server *s)
{
	uint64_t now = mono_ns(), due = UINT64_MAX;
	int i;

	for (i = 0; i < s->nsubs; i++)
		if (s->subs[i].due_ns < due)
			due = s->subs[i].due_ns;
	if (due == UINT64_MAX)
		return -1;
	return due <= now ? 0 : (int)((due - now) / 1000000ULL) + 1;
}

static int listen_socket(const struct fp_server_opts *o)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *e = getenv("LISTEN_FDS"), *p = getenv("LISTEN_PID");
	char dir[sizeof(sa.sun_path)], *slash;
	int fd;

	if (e && p && atoi(p) == getpid() && atoi(e) >= 1) {
		fcntl(3, F_SETFD, FD_CLOEXEC);
		fcntl(3, F_SETFL, fcntl(3, F_GETFL) | O_NONBLOCK);
		fp_log(FP_LOG_INFO, "using the socket passed by systemd");
		return 3;
	}
	if (strlen(o->socket_path) >= sizeof(sa.sun_path)) {
		fp_log(FP_LOG_ERR, "socket path too long: %s", o->socket_path);
		return -ENAMETOOLONG;
	}
	snprintf(dir, sizeof(dir), "%s", o->socket_path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		mkdir(dir, 0755);
	}
	strcpy(sa.sun_path, o->socket_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	unlink(o->socket_path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 128)) {
		int e2 = errno;

		fp_log(FP_LOG_ERR, "cannot listen on %s: %s", o->socket_path, strerror(e2));
		close(fd);
		return -e2;
	}
	/* not world-writable: root, and the group given with --group */
	if (chown(o->socket_path, 0, o->gid) || chmod(o->socket_path, o->gid ? 0660 : 0600)) {
		int e2 = errno;

		fp_log(FP_LOG_ERR, "cannot set owner/mode of %s: %s", o->socket_path, strerror(e2));
		close(fd);
		return -e2;
	}
	fp_log(FP_LOG_INFO, "listening on %s", o->socket_path);
	return fd;
}

int fp_server_run(const struct fp_server_opts *opts)
{
	struct server *s = calloc(1, sizeof(*s));
	struct epoll_event ev;
	sigset_t mask;
	int i, ret = 0;

	if (!s)
		return -ENOMEM;
	s->opts = opts;
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	s->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	s->lfd = listen_socket(opts);
	if (s->lfd < 0 || s->epfd < 0 || s->sigfd < 0) {
		ret = s->lfd < 0 ? s->lfd : -EIO;
		goto out;
	}
	ev.events = EPOLLIN;
	ev.data.u64 = EV(EV_LISTEN, 0);
	epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->lfd, &ev);
	ev.data.u64 = EV(EV_SIGNAL, 0);
	epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->sigfd, &ev);
	if (opts->ready)
		opts->ready();

	while (!s->stop) {
		struct epoll_event evs[64];
		int n = epoll_wait(s->epfd, evs, 64, next_timeout_ms(s));

		if (n < 0 && errno != EINTR) {
			ret = -errno;
			break;
		}
		for (i = 0; i < n; i++) {
			int tag = (int)(evs[i].data.u64 & 0xff), idx = (int)(evs[i].data.u64 >> 8);

			switch (tag) {
			case EV_LISTEN:
				accept_clients(s);
				break;
			case EV_SIGNAL: {
				struct signalfd_siginfo si;

				if (read(s->sigfd, &si, sizeof(si)) == sizeof(si))
					fp_log(FP_LOG_INFO, "signal %u: detaching and stopping",
					       si.ssi_signo);
				s->stop = 1;
				break;
			}
			case EV_CLIENT:
				if (!s->clients[idx])
					break;
				if (evs[i].events & (EPOLLERR | EPOLLHUP) &&
				    !(evs[i].events & EPOLLIN)) {
					client_close(s, idx);
					break;
				}
				if (evs[i].events & EPOLLIN)
					read_client(s, idx);
				if (s->clients[idx] && (evs[i].events & EPOLLOUT))
					flush_client(s, idx);
				break;
			case EV_TARGET:
				if (s->targets[idx])
					target_exited(s, idx);
				break;
			}
		}
		run_subscriptions(s);
	}
out:
	for (i = 0; i < FP_MAX_CLIENTS; i++)
		client_close(s, i);	/* drops their subscriptions */
	for (i = 0; i < FP_MAX_TARGETS; i++)
		fp_target__free(s->targets[i]);
	if (s->lfd > 3 || (s->lfd >= 0 && !getenv("LISTEN_FDS"))) {
		close(s->lfd);
		unlink(opts->socket_path);
	}
	if (s->sigfd >= 0)
		close(s->sigfd);
	if (s->epfd >= 0)
		close(s->epfd);
	free(s);
	return ret;
}
