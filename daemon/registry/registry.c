// SPDX-License-Identifier: GPL-2.0
/*
 * The registry of targets (daemon/registry/registry.h): a table of FP_MAX_TARGETS slots, each
 * with its target, its ld.so hook and whether its catalog is due for a refresh.
 *
 * A target lives from its attach to its drop. When its process exits (its pidfd turns
 * readable) the target is retired: BPF object and links released, the last figures
 * kept, for FP_EXITED_KEEP_S, until its pid is reused by a process a client names, or
 * until a live process needs the slot. Every way out of the table goes through
 * drop_slot(), so a slot is torn down one way.
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

#include "common/procfs.h"
#include "util/clock.h"
#include "util/closer.h"
#include "common/err.h"
#include "util/log.h"
#include "registry.h"
#include "report/report.h"
#include "sample/sample.h"
#include "kern/watch.h"

static struct {
	int epfd, tag;
	const struct fp_server_opts *opts;
	struct fp_watch *watch;
	struct fp_registry_hooks hooks;
	struct fp_target *targets[FP_MAX_TARGETS];
	int dl_links[FP_MAX_TARGETS];	/* per target: its ld.so hook's uprobe, 0: none */
	bool refresh_due[FP_MAX_TARGETS];		/* ld.so changed its object list */
	uint64_t sample_due_ns;				/* next naming of sampled ids */
} reg = { .epfd = -1 };

void fp_registry_init(int epfd, int tag, const struct fp_server_opts *opts,
		      struct fp_watch *watch, const struct fp_registry_hooks *hooks)
{
	reg.epfd = epfd;
	reg.tag = tag;
	reg.opts = opts;
	reg.watch = watch;
	reg.hooks = *hooks;
}

const struct fp_server_opts *fp_registry_opts(void)
{
	return reg.opts;
}

struct fp_watch *fp_registry_watch(void)
{
	return reg.watch;
}

static int slot_of(const struct fp_target *t)
{
	int i;

	for (i = 0; t && i < FP_MAX_TARGETS; i++)
		if (reg.targets[i] == t)
			return i;
	return -1;
}

struct fp_target *fp_registry_find(pid_t pid)
{
	int i;

	for (i = 0; i < FP_MAX_TARGETS; i++)
		if (reg.targets[i] && fp_target__pid(reg.targets[i]) == pid)
			return reg.targets[i];
	return NULL;
}

bool fp_registry_any_live(void)
{
	int i;

	for (i = 0; i < FP_MAX_TARGETS; i++)
		if (reg.targets[i] && !fp_target__exited(reg.targets[i]))
			return true;
	return false;
}

struct fp_target *fp_registry_next(int *i)
{
	for (; *i < FP_MAX_TARGETS; (*i)++)
		if (reg.targets[*i])
			return reg.targets[(*i)++];
	return NULL;
}

static void unhook_dl(int slot)
{
	const struct fp_target *t = reg.targets[slot];

	if (reg.dl_links[slot] <= 0)
		return;
	/* a uprobe: closed by the pool */
	if ((t && fp_target__exited(t)) || fp_closer_deferring())
		fp_close_later(reg.dl_links[slot]);
	else
		close(reg.dl_links[slot]);
	reg.dl_links[slot] = 0;
}

/* The one teardown of a slot: its pidfd out of the loop, its hook, its target. */
static void drop_slot(int slot)
{
	struct fp_target *t = reg.targets[slot];

	if (!fp_target__exited(t))	/* an exited target's pidfd left the loop at its exit */
		epoll_ctl(reg.epfd, EPOLL_CTL_DEL, fp_target__pidfd(t), NULL);
	unhook_dl(slot);
	fp_target__free(t);
	reg.targets[slot] = NULL;
	reg.refresh_due[slot] = false;
}

void fp_registry_drop(struct fp_target *t)
{
	int slot = slot_of(t);

	if (slot < 0)
		return;
	if (reg.hooks.drop)
		reg.hooks.drop(t);
	drop_slot(slot);
}

void fp_registry_free(void)
{
	int i;

	for (i = 0; i < FP_MAX_TARGETS; i++)
		if (reg.targets[i])
			drop_slot(i);
}

/* --- exit and exec ------------------------------------------------------------------- */

void fp_registry_exit(struct fp_target *t)
{
	int slot = slot_of(t);

	if (slot < 0 || fp_target__exited(t))
		return;
	/* closed with the target */
	epoll_ctl(reg.epfd, EPOLL_CTL_DEL, fp_target__pidfd(t), NULL);
	if (reg.hooks.exit)
		reg.hooks.exit(t);
	fp_target__retire(t);
	unhook_dl(slot);
	fp_log(FP_LOG_DEBUG, "pid %d (%s) exited; detached, last figures kept",
	       (int)fp_target__pid(t), fp_target__comm(t));
	if (reg.hooks.retired)	/* a group's member: figures summed there, slot freed */
		reg.hooks.retired(t);
}

void fp_registry_pidfd_ready(int slot)
{
	if (slot >= 0 && slot < FP_MAX_TARGETS && reg.targets[slot])
		fp_registry_exit(reg.targets[slot]);
}

/* Watches t's pidfd in slot: 0 or -errno. */
static int watch_exit(struct fp_target *t, int slot)
{
	struct epoll_event ev = { .events = EPOLLIN,
				  .data.u64 = ((uint64_t)slot << 8) | (uint64_t)reg.tag };

	return epoll_ctl(reg.epfd, EPOLL_CTL_ADD, fp_target__pidfd(t), &ev) ? -errno : 0;
}

void fp_registry_exec(struct fp_target *old)
{
	int slot = slot_of(old), ret;
	pid_t pid = fp_target__pid(old);
	struct fp_err e = { 0 };
	struct fp_target *t;

	if (slot < 0 || fp_target__exited(old))
		return;
	t = fp_target__new(pid, reg.opts->cal->optimized, &reg.opts->defs, NULL, &e);
	if (!t) {
		fp_log(FP_LOG_INFO, "pid %d exec'd a program without regions (%s): the "
		       "figures of %s are kept as exited", (int)pid, e.msg, fp_target__comm(old));
		fp_registry_exit(old);
		return;
	}
	fp_target__set_owner(t, fp_target__owner(old));
	if (fp_target__set_wants(t, fp_target__wants(old)))
		fp_log(FP_LOG_WARN, "pid %d: out of memory: what was enabled by name is not "
		       "enabled again", (int)pid);
	/* the new program's regions asked for by name: as a refresh enables them */
	else if (fp_target__apply_wants(t, 1, &e) < 0)
		fp_log(FP_LOG_WARN, "%s", e.msg);
	epoll_ctl(reg.epfd, EPOLL_CTL_DEL, fp_target__pidfd(old), NULL);
	unhook_dl(slot);	/* the old program's ld.so */
	fp_target__free(old);
	reg.targets[slot] = t;
	ret = watch_exit(t, slot);
	if (reg.hooks.exec)
		reg.hooks.exec(t);
	if (ret) {	/* its exit would be missed: measured no further */
		fp_log(FP_LOG_WARN, "pid %d: cannot watch for its exit: %s", (int)pid,
		       strerror(-ret));
		fp_registry_exit(t);
		return;
	}
	fp_registry_sync_dl_hook(t);
	fp_log(FP_LOG_INFO, "pid %d exec'd %s: %d regions, %d enabled again", (int)pid,
	       fp_target__comm(t), fp_target__catalog(t)->nregions, fp_target__attached_sites(t));
}

/* --- attach -------------------------------------------------------------------------- */

/* Gone: no /proc/PID, a zombie (exited, not yet reaped), or exiting now (PF_EXITING in
 * the flags, the 9th field of /proc/PID/stat: set as do_exit begins, while its
 * mappings are being torn down and a catalog read finds nothing). */
#define PF_EXITING_FLAG 0x4

static bool process_gone(pid_t pid)
{
	struct fp_procfs_stat st;
	int ret = fp_procfs_stat(pid, &st);

	if (ret)
		return ret == -ENOENT || ret == -ESRCH;
	return st.state == 'Z' || st.state == 'X' || (st.flags & PF_EXITING_FLAG);
}

int fp_registry_exited_meanwhile(pid_t pid, int ret, struct fp_err *e)
{
	enum fp_status st = fp_status_of(e && e->code ? e->code : ret);

	if ((st != FP_E_NO_PROBES && st != FP_E_INTERNAL) || !process_gone(pid))
		return ret;
	fp_err_clear(e);	/* the step failed because the process had gone */
	return fp_fail(e, ESRCH, "pid %d exited while it was being attached", (int)pid);
}

int fp_registry_room(const struct fp_peer *peer, struct fp_err *e)
{
	int i, mine = 0;

	if (fp_peer_privileged(peer))
		return 0;
	for (i = 0; i < FP_MAX_TARGETS; i++)
		mine += reg.targets[i] && !fp_target__exited(reg.targets[i]) &&
			fp_target__owner(reg.targets[i]) == peer->cred.uid;
	if (mine >= FP_MAX_TARGETS / 4)
		return fp_fail(e, EBUSY, "too many targets for uid %u (%d)",
			       (unsigned)peer->cred.uid, FP_MAX_TARGETS / 4);
	return 0;
}

/* t (may be NULL) exited and keeps its figures here: a process's target of no group
 * (a group's members and file target are its own). */
static bool kept_exited(const struct fp_target *t)
{
	return t && fp_target__exited(t) && fp_target__pid(t) && !fp_target__group(t);
}

/* The target that exited longest ago (not a file's target: its group owns it), or -1. */
static int oldest_exited(void)
{
	int i, best = -1;

	for (i = 0; i < FP_MAX_TARGETS; i++)
		if (kept_exited(reg.targets[i]) &&
		    (best < 0 || fp_target__exited_ns(reg.targets[i]) <
					 fp_target__exited_ns(reg.targets[best])))
			best = i;
	return best;
}

/*
 * Exited targets keep their last figures for FP_EXITED_KEEP_S, or until their pid is
 * reused by a new process that a client names, or until a live process needs the slot.
 */
#define FP_EXITED_KEEP_S 600

void fp_registry_collect_exited(void)
{
	uint64_t now = fp_mono_ns();
	int i;

	for (i = 0; i < FP_MAX_TARGETS; i++) {
		struct fp_target *t = reg.targets[i];

		if (kept_exited(t) &&
		    now - fp_target__exited_ns(t) > FP_EXITED_KEEP_S * 1000000000ULL) {
			fp_log(FP_LOG_INFO, "pid %d: exited %d s ago, its figures dropped",
			       (int)fp_target__pid(t), FP_EXITED_KEEP_S);
			fp_registry_drop(t);
		}
	}
}

static int free_slot(struct fp_err *e)
{
	int i;

	for (i = 0; i < FP_MAX_TARGETS; i++)
		if (!reg.targets[i])
			return i;
	i = oldest_exited();	/* a live process comes first */
	if (i >= 0) {
		fp_registry_drop(reg.targets[i]);
		return i;
	}
	return fp_fail(e, EBUSY, "too many targets (%d)", FP_MAX_TARGETS);
}

static int attach(pid_t pid, struct fp_regdefs *more, int flags, struct fp_target **out,
		  struct fp_err *e)
{
	struct fp_target *t = fp_registry_find(pid);
	int slot, ret;

	*out = t;
	if (t)
		return 0;
	slot = free_slot(e);
	if (slot < 0)
		return slot;
	t = fp_target__new(pid, (reg.opts->cal->optimized ? FP_TARGET_SHIELDED : 0) | flags,
			   &reg.opts->defs, more, e);
	if (!t)
		return fp_registry_exited_meanwhile(pid, -errno, e);
	ret = watch_exit(t, slot);
	if (ret) {	/* its exit would be missed */
		fp_target__free(t);
		return fp_fail(e, -ret, "pid %d: cannot watch for its exit: %s", (int)pid,
			       strerror(-ret));
	}
	fp_target__set_owner(t, fp_owner(pid));
	reg.targets[slot] = t;
	reg.refresh_due[slot] = false;
	if (reg.watch && fp_watch__process(reg.watch, pid, 0))
		fp_log(FP_LOG_WARN, "pid %d: its exec will not be seen", (int)pid);
	fp_log(FP_LOG_INFO, "attached pid %d (%s): %d regions, %d features", (int)pid,
	       fp_target__comm(t), fp_target__catalog(t)->nregions,
	       fp_target__catalog(t)->nfeatures);
	*out = t;
	return 0;
}

int fp_registry_attach(pid_t pid, struct fp_regdefs *more, struct fp_target **out,
		       struct fp_err *e)
{
	return attach(pid, more, 0, out, e);
}

int fp_registry_attach_any(pid_t pid, struct fp_regdefs *more, struct fp_target **out,
			   struct fp_err *e)
{
	return attach(pid, more, FP_TARGET_ANY, out, e);
}

void fp_registry_sync_dl_hook(struct fp_target *t)
{
	struct fp_err e = { 0 };
	int slot = slot_of(t);

	if (!reg.watch || slot < 0)
		return;
	/* nothing enabled, and nothing asked for by name that a library may bring */
	if (fp_target__exited(t) || (!fp_target__attached_sites(t) && !fp_target__ip_regions(t) &&
				     fp_wants_empty(fp_target__wants(t)))) {
		unhook_dl(slot);
	} else if (reg.dl_links[slot] <= 0) {
		int fd = fp_watch__dlopen(reg.watch, fp_target__pid(t), &e);

		reg.dl_links[slot] = fd > 0 ? fd : 0;
		if (fd < 0)	/* static executables have no dlopen */
			fp_log(FP_LOG_DEBUG, "%s: dlopen not followed", e.msg);
		/* what ld.so mapped between the catalog's read and this hook (a process
		 * enabled as it starts: its libraries) is read once more, next round */
		reg.refresh_due[slot] = fd > 0;
	}
}

/* --- refreshes ----------------------------------------------------------------------- */

void fp_registry_refresh(struct fp_target *t)
{
	struct fp_err e = { 0 };
	int n = fp_target__refresh(t, &e);

	if (n < 0)
		fp_log(FP_LOG_WARN, "%s", e.msg);
	else if (n)
		fp_log(FP_LOG_INFO, "pid %d: %d regions joined (now %d)", (int)fp_target__pid(t), n,
		       fp_target__catalog(t)->nregions);
}

void fp_registry_mapped(pid_t pid)
{
	struct fp_target *t = fp_registry_find(pid);
	int slot = slot_of(t);

	if (slot >= 0 && !fp_target__exited(t))
		reg.refresh_due[slot] = true;	/* once per round, however many segments */
}

void fp_registry_arena(pid_t pid)
{
	struct fp_target *t = fp_registry_find(pid);

	if (t && !fp_target__exited(t))
		fp_target__take_arena(t);
}

void fp_registry_run_refreshes(void)
{
	int i;

	for (i = 0; i < FP_MAX_TARGETS; i++)
		if (reg.refresh_due[i]) {
			reg.refresh_due[i] = false;
			if (reg.targets[i] && !fp_target__exited(reg.targets[i]))
				fp_registry_refresh(reg.targets[i]);
		}
}

uint64_t fp_registry_name_samples(uint64_t now)
{
	bool any = false;
	int i;

	for (i = 0; i < FP_MAX_TARGETS; i++)
		any |= reg.targets[i] && fp_sample_active(reg.targets[i]);
	if (!any)
		return UINT64_MAX;
	if (reg.sample_due_ns <= now) {	/* name sampled ids while targets are readable */
		for (i = 0; i < FP_MAX_TARGETS; i++)
			if (reg.targets[i])
				fp_sample_name(reg.targets[i]);
		reg.sample_due_ns = now + 200000000ULL;
	}
	return reg.sample_due_ns;
}

/* --- figures ------------------------------------------------------------------------- */

/*
 * The probe cost to subtract: that of the attach point the enabled sites use. Sites of
 * other providers are plain nops (nop1, the trap); a target whose enabled regions use
 * both points is compensated as nop5 and says so (mixed_attach_points).
 */
const struct fp_calibration *fp_registry_cal(const struct fp_target *t)
{
	int m = fp_target__attach_points(t);

	if (!fp_target__shielded(t) || (m == 1 && reg.opts->cal->at[FP_AT_NOP1].valid))
		return &reg.opts->cal->at[FP_AT_NOP1];
	return &reg.opts->cal->at[FP_AT_NOP5];
}

/* Which regions are enabled now: none once exited. */
static const uint8_t *enabled_now(const struct fp_target *t)
{
	return fp_target__exited(t) ? NULL : fp_target__enabled(t);
}

struct json_object *fp_registry_stats(struct fp_target *t)
{
	struct fp_snapshot *snap = fp_target__snapshot(t);
	struct json_object *res, *sr;

	if (!snap)
		return NULL;
	res = fp_report_stats(fp_target__catalog(t), snap, fp_registry_cal(t), enabled_now(t));
	fp_report_target_keys(res, t, snap);
	fp_snapshot__free(snap);
	sr = fp_sample_report(t);
	if (sr) {
		fp_sample_merge(res, sr);
		json_object_put(sr);
	}
	return res;
}

struct json_object *fp_registry_delta(struct fp_target *t, const struct fp_snapshot *cur,
				      const struct fp_snapshot *prev)
{
	struct fp_snapshot *d = fp_snapshot__delta(cur, prev);
	struct json_object *st;

	if (!d)
		return NULL;
	st = fp_report_stats(fp_target__catalog(t), d, fp_registry_cal(t), enabled_now(t));
	fp_snapshot__free(d);
	json_object_object_add(st, "pid", json_object_new_int(fp_target__pid(t)));
	json_object_object_add(st, "comm", json_object_new_string(fp_target__comm(t)));
	/* the delta's real span: between the two snapshots */
	json_object_object_add(st, "elapsed_ns", json_object_new_int64(
				       prev ? (int64_t)(cur->taken_ns - prev->taken_ns) : 0));
	return st;
}

struct json_object *fp_registry_interval(struct fp_target *t, const struct fp_snapshot *prev,
					 struct fp_snapshot **cur)
{
	*cur = fp_target__snapshot(t);
	return *cur ? fp_registry_delta(t, *cur, prev) : NULL;
}
