/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The registry of targets (daemon/registry/registry.c): the processes featprofd has attached, by
 * pid; attach, find, drop, a process's exit and exec, refreshes of its catalog, its
 * ld.so hook, and one target's figures. Calls only the objects below it (target, report,
 * sample, watch); what the rooms above must hear of (an exit, an exec, a drop) goes up
 * through the hooks registered at start (docs/ARCHITECTURE.md, "Layers").
 */
#ifndef FP_REGISTRY_H
#define FP_REGISTRY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "clients/access.h"
#include "common/err.h"
#include "common/protocol.h"
#include "opts.h"
#include "targets/target.h"

#define FP_MAX_TARGETS 256

struct fp_watch;
struct json_object;

struct fp_registry_hooks {
	/* t's process exited (or its group ended); its object is still loaded (what
	 * reads it, a recording, ends here). */
	void (*exit)(struct fp_target *t);
	/* ... and now released, its last figures kept in t->last; may drop t. */
	void (*retired)(struct fp_target *t);
	/* t runs another program now: its figures start again. */
	void (*exec)(struct fp_target *t);
	/* t is about to be freed. */
	void (*drop)(struct fp_target *t);
};

/* epfd: the loop's; a target's pidfd has epoll data (slot << 8) | tag. watch may be
 * NULL (then no dlopen, exec or fork is followed). */
void fp_registry_init(int epfd, int tag, const struct fp_server_opts *opts,
		      struct fp_watch *watch, const struct fp_registry_hooks *hooks);
void fp_registry_free(void);
const struct fp_server_opts *fp_registry_opts(void);
struct fp_watch *fp_registry_watch(void);

/* The target of pid (live or exited), or NULL. */
struct fp_target *fp_registry_find(pid_t pid);
/* Whether any target's process is live (not exited). */
bool fp_registry_any_live(void);
/* Iteration: the next target from *i on (start with 0), or NULL. */
struct fp_target *fp_registry_next(int *i);
/*
 * The target of pid, attached now when it is not yet (with more's definitions; may be
 * NULL). A live process comes before the oldest exited target's figures when the table
 * is full. 0 with *out, or -errno with e filled.
 */
int fp_registry_attach(pid_t pid, struct fp_regdefs *more, struct fp_target **out,
		       struct fp_err *e);
/* The same for a process that may have no featprof probes at all (sampled for its call
 * stacks: sample --stacks, run --stacks). */
int fp_registry_attach_any(pid_t pid, struct fp_regdefs *more, struct fp_target **out,
			   struct fp_err *e);
/* Room for one more target of an unprivileged peer: a quarter of the table. */
int fp_registry_room(const struct fp_peer *peer, struct fp_err *e);
/* Frees t and its slot (detach, or an attach undone); the drop hook first. */
void fp_registry_drop(struct fp_target *t);
/* t's process is gone: the exit hook, its object released with its last figures kept,
 * the retired hook. */
void fp_registry_exit(struct fp_target *t);
/* t's process exec'd: a new catalog, what was asked for by name enabled again; the
 * exec hook. Without regions in the new program it is an exit. */
void fp_registry_exec(struct fp_target *t);
/* The loop saw t's pidfd readable (slot from the epoll data). */
void fp_registry_pidfd_ready(int slot);
/* The process mapped an object: its catalog is refreshed once this round. */
void fp_registry_mapped(pid_t pid);
/* The process made its in-process arena: its target takes it now (before the process
 * can exit with its figures). */
void fp_registry_arena(pid_t pid);
void fp_registry_run_refreshes(void);
/* Refreshes t's catalog outside a request: a failure is logged. */
void fp_registry_refresh(struct fp_target *t);
/* Drops exited targets whose figures have been kept long enough. */
void fp_registry_collect_exited(void);
/* t's ld.so hook (dlopen) attached while it has sites attached, else removed. */
void fp_registry_sync_dl_hook(struct fp_target *t);
/* Names the ids sampled since the last call, every 200 ms while a target samples; the
 * next time it is due (UINT64_MAX: none). */
uint64_t fp_registry_name_samples(uint64_t now);
/* A failure (ret, -errno; its record in e) of a process that exited meanwhile is that
 * (-ESRCH, e rewritten), not what the failing step saw, when that step saw no probes or
 * an internal failure; other failures pass. Returns the failure. */
int fp_registry_exited_meanwhile(pid_t pid, int ret, struct fp_err *e);

/* The probe costs compensated for t's attach points. */
const struct fp_calibration *fp_registry_cal(const struct fp_target *t);
/* t's stats reply (NULL: its figures cannot be read). */
struct json_object *fp_registry_stats(struct fp_target *t);
/* t's figures between two snapshots (prev NULL: since its enable), with pid, comm and
 * elapsed_ns (0 without prev). NULL: out of memory. */
struct json_object *fp_registry_delta(struct fp_target *t, const struct fp_snapshot *cur,
				      const struct fp_snapshot *prev);
/* t's figures since prev, taking the snapshot *cur (the caller frees it; NULL: none
 * could be taken, and then NULL). */
struct json_object *fp_registry_interval(struct fp_target *t, const struct fp_snapshot *prev,
					 struct fp_snapshot **cur);

#endif
