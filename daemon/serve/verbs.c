// SPDX-License-Identifier: GPL-2.0
/*
 * featprofd's requests: the verb table, the arguments, admission. Protocol:
 * common/protocol.h.
 *
 * Every request line is checked in a fixed order before anything changes: JSON, an
 * object, an integer id, a string verb, a known verb; then what the verb's flags ask
 * for: the caller's privilege, a pid argument the caller could ptrace, an attached
 * target. Handlers have one signature: they parse their arguments into typed values,
 * call the rooms below (daemon/registry/registry.h, groups.h, subs.h) and fill a result or a
 * status and a one-line message; they send nothing. fp_verbs_handle_line sends exactly
 * one reply. A client's bad input gets an error and touches nothing else.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/procfs.h"
#include "calibrate/calibrate.h"
#include "clients/client.h"
#include "util/clock.h"
#include "common/err.h"
#include "groups/groups.h"
#include "targets/target.h"
#include "kern/kernel.h"
#include "util/log.h"
#include "registry/registry.h"
#include "report/report.h"
#include "common/request.h"
#include "sample/sample.h"
#include "serve_impl.h"
#include "streams/subs.h"
#include "kern/watch.h"

static const struct fp_server_opts *opts;

struct request {
	struct json_object *obj;
	struct json_object *id;	/* the id as read (owned); NULL before it is known */
	pid_t pid;		/* V_PID */
	struct fp_target *t;	/* V_TARGET */
};

enum {
	V_PID = 1,		/* takes "pid", which the caller could ptrace */
	V_TARGET = 2,		/* the pid is attached */
	V_PRIV = 4,		/* root or CAP_SYS_PTRACE only */
};

/* 0, or -errno with e filled where the failure was known (common/err.h). */
typedef int (*verb_fn)(struct fp_client *c, struct request *r, struct json_object **res,
		       struct fp_err *e);

struct verb {
	const char *name;
	verb_fn fn;
	unsigned flags;
};

void fp_verbs_init(const struct fp_server_opts *o)
{
	opts = o;
}

/* --- arguments: pid, selection, definitions ----------------------------------------- */

/* A pid argument: a process (not a thread) the caller could trace, or an exited target
 * it owned. A pid now another process's than its target's drops that target. */
static int arg_pid(struct fp_client *c, struct request *r, struct fp_err *e)
{
	struct fp_procfs_status st;
	struct fp_target *t;
	int64_t p;
	int ret;
	pid_t tgid;

	if (!json_object_object_get_ex(r->obj, "pid", NULL) ||
	    fp_verbs_arg_int(r->obj, "pid", 1, FP_MAX_PID, 0, &p, NULL)) {
		return fp_fail(e, EINVAL, "'pid' must be an integer, 1 to %d", FP_MAX_PID);
	}
	r->pid = (pid_t)p;
	tgid = fp_procfs_status(r->pid, &st) ? 0 : st.tgid;
	if (tgid > 0 && tgid != r->pid) {	/* /proc/TID exists, unlisted */
		return fp_fail(e, EINVAL, "pid %d is a thread of process %d: name the process",
			       (int)r->pid, (int)tgid);
	}
	ret = fp_may_trace(&c->peer, r->pid, e);
	t = fp_registry_find(r->pid);
	if (!ret && t && fp_target__pid(t) &&
	    fp_procfs_start_time(r->pid) != fp_target__start_time(t)) {
		/* the pid belongs to a new process now: the target was another one's */
		fp_log(FP_LOG_INFO, "pid %d: reused by a new process; the earlier process's "
		       "figures are dropped", (int)r->pid);
		fp_registry_drop(t);
		t = NULL;
	}
	if (ret == -ESRCH && t) {	/* an exited target: its owner's */
		fp_err_clear(e);
		if (fp_peer_privileged(&c->peer) || fp_target__owner(t) == c->peer.cred.uid)
			return 0;
		return fp_fail(e, EPERM, "permission denied: exited target of another user");
	}
	return ret;	/* -ESRCH or -EPERM */
}

/* The regions of t that names selects (sel[r] set), or -ENOENT for a name t does not
 * have. */
static int select_regions(const struct fp_target *t, const struct fp_wants *names,
			  uint8_t *sel, struct fp_err *e)
{
	int pid = (int)fp_target__pid(t);
	const char *unknown;
	char cut[201];
	bool region;

	if (!fp_wants_select(names, fp_target__catalog(t), sel, &unknown, &region,
			     fp_target__pending_feature, t))
		return 0;
	fp_utf8_cut(cut, sizeof(cut), unknown);
	return fp_fail(e, ENOENT, "pid %d has no %s '%s' (see featprof list %d)", pid,
		       region ? "region" : "feature", cut, pid);
}

/* --- verbs: targets ------------------------------------------------------------------ */

static int do_hello(struct fp_client *c, struct request *r,
		    struct json_object **res, struct fp_err *e)
{
	*res = fp_report_hello(opts->cal);
	return 0;
}

/* The catalog; read without loading anything when the pid is not attached. */
static int do_list(struct fp_client *c, struct request *r,
		   struct json_object **res, struct fp_err *e)
{
	struct fp_target *t = fp_registry_find(r->pid);
	struct fp_catalog *cat;
	struct fp_proc *proc;
	int ret;

	if (t) {
		if (!fp_target__exited(t))	/* objects mapped since (dlopen) */
			fp_registry_refresh(t);
		*res = fp_catalog__to_json(fp_target__catalog(t));
		return 0;
	}
	ret = fp_proc__read(r->pid, &proc, e);
	if (ret)
		return ret;
	cat = fp_catalog__new(proc->objs, proc->nobjs, &opts->defs);
	if (!cat)
		ret = fp_fail(e, errno, "pid %d: %s", (int)r->pid, strerror(errno));
	else if (!cat->nregions)
		ret = fp_no_probes(proc, "", e);
	else if (!(*res = fp_catalog__to_json(cat)))
		ret = fp_fail(e, ENOMEM, "out of memory");
	fp_catalog__free(cat);
	fp_proc__free(proc);
	return ret;
}

/* featprof repair PID (daemon/targets/journal.c fp_journal__repair_process); "check": true only
 * counts. */
static int do_repair(struct fp_client *c, struct request *r, struct json_object **res,
		     struct fp_err *e)
{
	int before = 0, after = 0, ret;
	bool check;

	ret = fp_verbs_arg_bool(r->obj, "check", false, &check, e);
	if (!ret)
		ret = fp_journal__repair_process(r->pid, check, &before, &after, e);
	if (ret)
		return ret;
	*res = fp_report_repair(r->pid, before, after);
	return 0;
}


static int do_attach(struct fp_client *c, struct request *r,
		     struct json_object **res, struct fp_err *e)
{
	int ret = fp_registry_attach(r->pid, NULL, &r->t, e);

	if (!ret)
		*res = fp_catalog__to_json(fp_target__catalog(r->t));
	return ret;
}

/* The target of r->pid, attached now by an enable (with the client's definitions) when
 * it is not yet (*created); else its definitions and catalog brought up to date. */
static int toggle_target(struct fp_client *c, struct request *r, bool on,
			 struct fp_regdefs *more, bool given, bool *created,
			 struct fp_err *e)
{
	int ret;

	*created = false;
	r->t = fp_registry_find(r->pid);
	if (!r->t && on) {
		ret = fp_registry_room(&c->peer, e);
		if (!ret)
			ret = fp_registry_attach(r->pid, more, &r->t, e);
		*created = !ret;
		return ret;
	}
	if (fp_target__exited(r->t)) {
		return fp_fail(e, ESRCH, "pid %d has exited; its last figures stay until detach",
			       (int)r->pid);
	}
	/* definitions sent now, objects mapped since */
	ret = given ? fp_target__add_defs(r->t, more, e)
		    : fp_target__refresh(r->t, e);
	return ret < 0 ? fp_registry_exited_meanwhile(r->pid, ret, e) : 0;
}

/* The regions names selects (into *selp, the caller's to free, where given), attached
 * (on) or detached, and remembered by name. */
static int set_regions(struct fp_target *t, const struct fp_wants *names, bool on,
		       uint8_t **selp, struct fp_err *e)
{
	uint8_t *sel = calloc((size_t)fp_target__catalog(t)->nregions + 1, 1);
	int ret;

	if (!sel)
		return fp_fail(e, ENOMEM, "out of memory");
	ret = select_regions(t, names, sel, e);
	if (!ret && (ret = fp_target__set_regions(t, sel, on, e)))
		ret = fp_registry_exited_meanwhile(fp_target__pid(t), ret, e);
	if (selp && !ret)
		*selp = sel;
	else
		free(sel);
	if (!ret && fp_target__update_wants(t, names, on))
		fp_log(FP_LOG_WARN, "pid %d: out of memory: regions that appear later do not "
		       "join what was enabled by name", (int)fp_target__pid(t));
	return ret;
}

static int toggle(struct fp_client *c, struct request *r, struct json_object **res,
		  struct fp_err *e, bool on)
{
	struct fp_wants names;
	struct fp_regdefs more = { 0 };
	uint64_t t0 = fp_mono_ns();
	bool created = false, trap = false, temp = false;
	uint8_t *before = NULL, *sel = NULL;
	int st, given = 0;

	st = fp_wants_parse(&names, r->obj, e);
	if (st)
		return st;
	given = json_object_object_get_ex(r->obj, "definitions", NULL);
	st = fp_wants_defs_parse(NULL, r->obj, &more, e);
	if (!st && given && !on)
		st = fp_fail(e, EINVAL, "'definitions' go with enable");
	if (!st && on)
		st = fp_verbs_arg_bool(r->obj, "trap", false, &trap, e);
	if (!st && on)	/* undone when this connection closes (daemon/serve/leases.c) */
		st = fp_verbs_arg_bool(r->obj, "temporary", false, &temp, e);
	if (!st)
		st = toggle_target(c, r, on, &more, given, &created, e);
	if (!st && on)	/* regions enabled by this request: by uprobes even where the
			 * program could time them itself */
		fp_target__trap_from_now(r->t, trap);
	fp_regdefs__clear(&more);
	if (!st && on && !(before = fp_leases_before(r->t)))
		st = fp_fail(e, ENOMEM, "out of memory");
	if (!st)
		st = set_regions(r->t, &names, on, on ? &sel : NULL, e);
	if (!st && on && fp_leases_enabled(c, r->t, before, sel, r->obj, temp))
		fp_log(FP_LOG_WARN, "pid %d: out of memory: a temporary enable stays after its "
		       "client", (int)r->pid);
	free(before);
	free(sel);
	fp_wants_clear(&names);
	if (st) {
		if (created)	/* nothing else changes: the attach is undone */
			fp_registry_drop(r->t);
		return st;
	}
	fp_registry_sync_dl_hook(r->t);
	fp_log(FP_LOG_INFO, "pid %d: %s, %d sites attached (%.3f ms)", (int)r->pid,
	       on ? "enable" : "disable", fp_target__attached_sites(r->t),
	       (double)(fp_mono_ns() - t0) / 1e6);
	*res = fp_report_enabled(r->t);
	return 0;
}

static int do_enable(struct fp_client *c, struct request *r,
		     struct json_object **res, struct fp_err *e)
{
	return toggle(c, r, res, e, true);
}

static int do_disable(struct fp_client *c, struct request *r,
		      struct json_object **res, struct fp_err *e)
{
	return toggle(c, r, res, e, false);
}

static int do_detach(struct fp_client *c, struct request *r,
		     struct json_object **res, struct fp_err *e)
{
	fp_registry_drop(r->t);
	fp_log(FP_LOG_INFO, "detached pid %d", (int)r->pid);
	return 0;
}

static int do_reset(struct fp_client *c, struct request *r,
		    struct json_object **res, struct fp_err *e)
{
	int ret = fp_target__reset(r->t);

	if (!ret && fp_sample_active(r->t))
		ret = fp_sample_reset(r->t);
	if (ret)
		return fp_fail(e, EIO, "pid %d: cannot reset the figures: %s", (int)r->pid,
			       strerror(-ret));
	return 0;
}

static int do_stats(struct fp_client *c, struct request *r,
		    struct json_object **res, struct fp_err *e)
{
	*res = fp_registry_stats(r->t);
	if (!*res)
		return fp_fail(e, EIO, "pid %d: cannot read figures", (int)r->pid);
	return 0;
}

/* status: the targets c may see (those it could trace, or could when they ran), the
 * executables and BPF objects where c is privileged, the daemon's counts. */
static int do_status(struct fp_client *c, struct request *r,
		     struct json_object **res, struct fp_err *e)
{
	struct fp_watch *w = fp_registry_watch();
	struct fp_status_counts n = { fp_clients_count(), fp_subs_count(),
				      fp_journal__repaired(), w ? (long long)fp_watch__lost(w)
								 : -1 };
	struct fp_target *t, **ts = NULL, **more;
	struct fp_snapshot **snaps = NULL, **smore;
	int i = 0, k, nt = 0, *strays = NULL, *imore;

	while ((t = fp_registry_next(&i))) {
		if (!fp_peer_privileged(&c->peer) &&
		    (fp_target__exited(t) ? fp_target__owner(t) != c->peer.cred.uid
					  : fp_may_trace(&c->peer, fp_target__pid(t), NULL)))
			continue;
		more = realloc(ts, sizeof(*ts) * (size_t)(nt + 1));
		ts = more ? more : ts;
		smore = realloc(snaps, sizeof(*snaps) * (size_t)(nt + 1));
		snaps = smore ? smore : snaps;
		imore = realloc(strays, sizeof(*strays) * (size_t)(nt + 1));
		strays = imore ? imore : strays;
		if (!more || !smore || !imore)
			break;
		ts[nt] = t;
		snaps[nt] = fp_target__snapshot(t);
		strays[nt++] = fp_target__exited(t) ? -1 : fp_group_strays(t);
	}
	*res = fp_report_status(ts, snaps, strays, nt,
				fp_peer_privileged(&c->peer) ? fp_groups_status() : NULL, &n,
				opts->cal, fp_kernel_mechanisms(opts->cal->optimized));
	for (k = 0; k < nt; k++)
		fp_snapshot__free(snaps[k]);
	free(ts);
	free(snaps);
	free(strays);
	return 0;
}

/* --- verbs: subscriptions, recording, sampling --------------------------------------- */

static int arg_interval(struct json_object *req, unsigned *ms, struct fp_err *e)
{
	int64_t v;
	int st = fp_verbs_arg_int(req, "interval_ms", FP_MIN_INTERVAL_MS, FP_MAX_INTERVAL_MS,
				    FP_DEFAULT_INTERVAL_MS, &v, e);

	*ms = (unsigned)v;
	return st;
}

static int subscribed(int st, int id, struct json_object **res)
{
	if (st)
		return st;
	*res = fp_report_number("subscription", id);
	return 0;
}

static int do_subscribe(struct fp_client *c, struct request *r,
			struct json_object **res, struct fp_err *e)
{
	int st;
	unsigned ms;
	int id = 0;

	st = arg_interval(r->obj, &ms, e);
	if (!st)
		st = fp_subs_pid(c, r->t, ms, &id, e);
	return subscribed(st, id, res);
}

/* top and stream --exe: the executable's figures per interval, summed over its processes. */
static int do_exe_subscribe(struct fp_client *c, struct request *r,
			    struct json_object **res, struct fp_err *e)
{
	const char *path;
	int st;
	unsigned ms;
	int group, id = 0;

	st = fp_verbs_arg_exe(r->obj, &path, e);
	if (st)
		return st;
	group = fp_group_find(path, e);
	if (group < 0)
		return group;
	st = arg_interval(r->obj, &ms, e);
	if (!st)
		st = fp_subs_exe(c, group, ms, &id, e);
	return subscribed(st, id, res);
}

static int do_record(struct fp_client *c, struct request *r,
		     struct json_object **res, struct fp_err *e)
{
	int64_t ms;

	if (!json_object_object_get_ex(r->obj, "duration_ms", NULL) ||
	    fp_verbs_arg_int(r->obj, "duration_ms", FP_MIN_RECORD_MS, FP_MAX_RECORD_MS, 0, &ms,
			     NULL))
		return fp_fail(e, EINVAL, "'duration_ms' must be an integer, %d to %d",
			       FP_MIN_RECORD_MS, FP_MAX_RECORD_MS);
	return fp_subs_record(c, r->t, (unsigned)ms, res, e);
}

/*
 * sample: {pid, hz (FP_MIN_HZ..FP_MAX_HZ, default FP_DEFAULT_HZ), on (default true),
 * remote (default false), stacks (default false), unwind ("fp" or "dwarf", default
 * "dwarf")}. On: attaches the target if it is not
 * yet (a FEATPROF_SAMPLING build needs no region enabled: sampling reads the program's
 * own region stack; another reads the regions traced), starts or restarts sampling;
 * remote: by the daemon's sampler thread from its own CPU instead of a cpu-clock event in
 * each thread; stacks: each sample's user call stack, named in stats' "sampling".
 * Off: stops it, the figures stay in stats.
 */
static int do_sample(struct fp_client *c, struct request *r,
		     struct json_object **res, struct fp_err *e)
{
	int hz, ret, unwind;
	bool on, remote, temp = false, split = false;

	ret = fp_verbs_arg_sample(r->obj, &hz, &on, &remote, e);
	if (!ret)
		ret = fp_verbs_arg_unwind(r->obj, &unwind, e);
	if (!ret && on && unwind)	/* call stacks: of any process, probes or not */
		ret = fp_registry_attach_any(r->pid, NULL, &r->t, e);
	else if (!ret)
		ret = fp_registry_attach(r->pid, NULL, &r->t, e);
	if (ret)
		return ret;
	if (fp_target__exited(r->t))
		return fp_fail(e, ESRCH, "pid %d: exited", (int)r->pid);
	if (!ret)	/* undone when this connection closes (daemon/serve/leases.c) */
		ret = fp_verbs_arg_bool(r->obj, "temporary", false, &temp, e);
	if (!ret)	/* call stacks: a compiler's clones named apart */
		ret = fp_verbs_arg_bool(r->obj, "split_clones", false, &split, e);
	if (ret)
		return ret;
	fp_sample_stop(r->t);	/* off, or a restart that takes the new rate */
	if (fp_leases_sampling(c, r->t, on && temp))
		fp_log(FP_LOG_WARN, "pid %d: out of memory: temporary sampling stays after its "
		       "client", (int)r->pid);
	if (on) {
		ret = fp_sample_start(r->t, hz, remote, unwind, e);
		if (ret)
			return ret;
		fp_sample_split_clones(r->t, split);
		fp_target__enabled_now(r->t);
		fp_log(FP_LOG_INFO, "pid %d: sampling at %d Hz%s%s (%s)", (int)r->pid, hz,
		       remote ? ", remote" : "",
		       unwind == FP_UNWIND_FP ? ", call stacks by frame pointers"
		       : unwind ? ", call stacks by DWARF CFI" : "",
		       fp_sample_source(r->t));
	}
	*res = fp_report_sampling(r->pid, on, hz, remote);
	return 0;
}

static int do_unsubscribe(struct fp_client *c, struct request *r,
			  struct json_object **res, struct fp_err *e)
{
	struct json_object *v;

	if (!json_object_object_get_ex(r->obj, "subscription", &v) ||
	    !json_object_is_type(v, json_type_int)) {
		return fp_fail(e, EINVAL, "'subscription' must be an integer");
	}
	return fp_subs_cancel(c, json_object_get_int(v), e);
}

/*
 * Measures the probe cost again (the machine may have changed under the daemon). It
 * changes every target's compensation, hence V_PRIV. Existing targets keep their
 * attach point; new ones get the one now measured cheaper.
 */
static int do_calibrate(struct fp_client *c, struct request *r,
			struct json_object **res, struct fp_err *e)
{
	struct fp_daemon_cal fresh;
	struct fp_err ce = { 0 };

	if (fp_calibrate(&fresh, opts->site, &ce))
		return fp_fail(e, ce.code ? ce.code : EIO, "calibrate: %s; the previous "
			       "calibration stays", ce.msg);
	fresh.runs = opts->cal->runs + 1;
	*res = fp_report_recalibrated(opts->cal, &fresh);
	*opts->cal = fresh;
	fp_target__costs_changed();
	fp_log(FP_LOG_INFO, "recalibrated: %s", fresh.why);
	return 0;
}

/* --- verbs: executables -------------------------------------------------------------- */

static int exe_toggle(struct request *r, bool on, struct json_object **res,
		      struct fp_err *e)
{
	struct fp_regdefs check = { 0 };
	struct fp_wants names;
	const char *path;
	int ret = fp_verbs_arg_exe(r->obj, &path, e);

	if (!ret)
		ret = fp_wants_parse(&names, r->obj, e);
	if (ret)
		return ret;
	/* definitions (function regions, say): checked here, kept for every member */
	ret = fp_wants_defs_parse(&names, r->obj, &check, e);
	if (!ret && !on && names.defs)
		ret = fp_fail(e, EINVAL, "'definitions' go with enable");
	fp_regdefs__clear(&check);
	if (!ret)
		ret = fp_group_enable(path, &names, on, res, e);
	fp_wants_clear(&names);
	return ret;
}

static int do_exe_enable(struct fp_client *c, struct request *r,
			 struct json_object **res, struct fp_err *e)
{
	return exe_toggle(r, true, res, e);
}

static int do_exe_disable(struct fp_client *c, struct request *r,
			  struct json_object **res, struct fp_err *e)
{
	return exe_toggle(r, false, res, e);
}

static int do_exe_sample(struct fp_client *c, struct request *r,
			 struct json_object **res, struct fp_err *e)
{
	const char *path;
	int st = fp_verbs_arg_exe(r->obj, &path, e);
	bool on, remote;
	int hz;

	if (!st)
		st = fp_verbs_arg_sample(r->obj, &hz, &on, &remote, e);
	return st ? st : fp_group_sample(path, hz, on, remote, res, e);
}

static int do_exe_stats(struct fp_client *c, struct request *r,
			struct json_object **res, struct fp_err *e)
{
	const char *path;
	int st = fp_verbs_arg_exe(r->obj, &path, e);

	return st ? st : fp_group_stats(path, res, e);
}

/* featprof run: the client's child pid, waiting to exec "exe", measured from its exec on;
 * stacks, unwind, hz (as sample's): each of its processes sampled with its call stacks. */
static int do_run_start(struct fp_client *c, struct request *r,
			struct json_object **res, struct fp_err *e)
{
	struct fp_regdefs check = { 0 };
	struct fp_wants names;
	const char *path;
	int ret = fp_verbs_arg_exe(r->obj, &path, e), group = 0, unwind = 0;
	bool stops;	/* the child stops at its exec (ptrace) for run_attach */
	int64_t hz = FP_DEFAULT_HZ;

	if (!ret)
		ret = fp_verbs_arg_bool(r->obj, "stops_at_exec", false, &stops, e);
	if (!ret)	/* run --stacks: every process sampled with its call stacks */
		ret = fp_verbs_arg_unwind(r->obj, &unwind, e);
	if (!ret)
		ret = fp_verbs_arg_int(r->obj, "hz", FP_MIN_HZ, FP_MAX_HZ, FP_DEFAULT_HZ, &hz, e);
	if (!ret)
		ret = fp_wants_parse(&names, r->obj, e);
	if (ret)
		return ret;
	ret = fp_wants_defs_parse(&names, r->obj, &check, e);	/* kept, as exe's */
	fp_regdefs__clear(&check);
	if (!ret)
		ret = fp_group_run_start(path, r->pid, stops, c, &names, unwind ? (int)hz : 0,
					 unwind, &group, e);
	fp_wants_clear(&names);
	if (!ret)
		*res = fp_report_number("run", group);
	return ret;
}

/* run_attach: the run's first process stopped at its exec gets its own target. */
static int do_run_attach(struct fp_client *c, struct request *r,
			 struct json_object **res, struct fp_err *e)
{
	int64_t g;
	int st = fp_verbs_arg_int(r->obj, "run", 1, FP_MAX_GROUPS, 0, &g, e);

	return st ? st : fp_group_run_attach((int)g, c, res, e);
}

/* run_finish: the run's figures once that process has exited, and the run ends. */
static int do_run_finish(struct fp_client *c, struct request *r,
			 struct json_object **res, struct fp_err *e)
{
	int64_t g;
	int st = fp_verbs_arg_int(r->obj, "run", 1, FP_MAX_GROUPS, 0, &g, e);

	return st ? st : fp_group_run_finish((int)g, c, res, e);
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
	{ "run_start", do_run_start, V_PID },
	{ "run_attach", do_run_attach, 0 },
	{ "run_finish", do_run_finish, 0 },
};

/* The checks a verb's flags ask for, in order. */
static int admit(struct fp_client *c, const struct verb *v, struct request *r,
		 struct fp_err *e)
{
	int st;

	if ((v->flags & V_PRIV) && !fp_peer_privileged(&c->peer))
		return fp_fail(e, EPERM, "%s: root or CAP_SYS_PTRACE only", v->name);
	if ((v->flags & V_PID) && (st = arg_pid(c, r, e)))
		return st;
	if (v->flags & V_TARGET) {
		r->t = fp_registry_find(r->pid);
		if (!r->t)
			return fp_fail(e, ENOTCONN, "pid %d: not attached (enable a feature first)",
				       (int)r->pid);
	}
	return 0;
}

void fp_verbs_handle_line(struct fp_client *c, const char *line, size_t len)
{
	struct request r = { 0 };
	struct json_object *res = NULL, *v;
	const struct verb *vb = NULL;
	struct fp_err e = { 0 };
	long long id = 0;
	char cut[101];
	int id_ok, ret;
	size_t i;

	/* strict JSON, UTF-8, no NUL, an id and a verb (common/request.c) */
	r.obj = fp_request_parse(line, len, &id, &id_ok, &e);
	if (id_ok)
		r.id = fp_report_id(id);	/* echoed exactly as it was read */
	if (!r.obj) {
		ret = -(e.code ? e.code : EINVAL);
		goto out;
	}
	json_object_object_get_ex(r.obj, "verb", &v);
	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]) && !vb; i++)
		if (!strcmp(verbs[i].name, json_object_get_string(v)))
			vb = &verbs[i];
	if (!vb) {
		fp_utf8_cut(cut, sizeof(cut), json_object_get_string(v));
		ret = fp_fail(&e, EBADRQC, "unknown verb '%s'", cut);
		goto out;
	}
	ret = admit(c, vb, &r, &e);
	if (!ret)
		ret = vb->fn(c, &r, &res, &e);
	if (ret && !e.code)	/* a failure nobody described */
		fp_fail(&e, -ret, "%s failed: %s", vb->name, strerror(-ret));
	else if (ret && e.code != -ret)
		fp_log(FP_LOG_DEBUG, "%s: returned %s, recorded %s (%s)", vb->name,
		       strerror(-ret), strerror(e.code), e.msg);
	else if (!ret)
		fp_err_clear(&e);	/* a failure handled on the way: the verb succeeded */
out:
	/* the status is the recorded failure's: the first, where it was known */
	fp_client_reply(c, r.id, &e, res);
	json_object_put(r.id);
	json_object_put(r.obj);
}
