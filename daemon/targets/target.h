/* SPDX-License-Identifier: GPL-2.0 */
/* One profiled process: its catalog, its BPF object, the links of enabled regions. */
#ifndef FP_TARGET_H
#define FP_TARGET_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/catalog.h"
#include "common/err.h"
#include "util/stats.h"
#include "util/wants.h"

struct featprof_bpf;
struct bpf_link;

struct fp_target;

/*
 * What modules above read of a target (its fields are private to daemon/targets/,
 * target_impl.h). The catalog is the target's: read it, never keep it past the target.
 */
pid_t fp_target__pid(const struct fp_target *t);	/* 0: a file's target */
const char *fp_target__comm(const struct fp_target *t);
const struct fp_catalog *fp_target__catalog(const struct fp_target *t);
bool fp_target__exited(const struct fp_target *t);
uint64_t fp_target__exited_ns(const struct fp_target *t);	/* fp_mono_ns() at exit */
unsigned long long fp_target__start_time(const struct fp_target *t);
/* When the target began reading the process (fp_mono_ns()): its catalog is of the
 * program the process ran then. */
uint64_t fp_target__made_ns(const struct fp_target *t);
int fp_target__pidfd(const struct fp_target *t);	/* readable at exit; -1: none */
int fp_target__group(const struct fp_target *t);	/* its executable group, 0: none */
/* Who attached it (fp_owner()): may see it after exit. Set by whoever attaches it. */
uid_t fp_target__owner(const struct fp_target *t);
void fp_target__set_owner(struct fp_target *t, uid_t owner);
int fp_target__attached_sites(const struct fp_target *t);
int fp_target__ip_regions(const struct fp_target *t);	/* timed in the process now */
const uint8_t *fp_target__enabled(const struct fp_target *t);	/* per region, or NULL */
uint64_t fp_target__enabled_at_ns(const struct fp_target *t);	/* 0: never enabled */
/* How many ends without a begin enabling explains (threads x regions enabled at each
 * enable of the live process) */
uint64_t fp_target__unmatched_allowed(const struct fp_target *t);
bool fp_target__shielded(const struct fp_target *t);	/* attached at the shielded nop5 */
bool fp_target__recording(const struct fp_target *t);
/* Its in-process timing (daemon/inproc/inproc.h), NULL: none. */
struct fp_inproc *fp_target__inproc(const struct fp_target *t);
/* Its objects and their mappings (common/notes.h). */
struct fp_proc *fp_target__proc(const struct fp_target *t);
/* Its place in the BPF object it shares (pool.c), for sampling, whose own object reuses
 * that object's maps: the object (NULL once released), its slot, its regions' first entry
 * in the object's arrays; whether thread states are a tid-keyed map (old kernels); whether
 * its links are multi-uprobe links. */
struct featprof_bpf *fp_target__bpf(const struct fp_target *t);
int fp_target__slot(const struct fp_target *t);
int fp_target__rbase(const struct fp_target *t);
bool fp_target__ts_map(const struct fp_target *t);
bool fp_target__multi(const struct fp_target *t);
/* Per region: timed in the process now (NULL: none); its features, bit i = feature i. */
const uint8_t *fp_target__ip_on(const struct fp_target *t);
const uint64_t *fp_target__region_mask(const struct fp_target *t);
/* Regions enabled from now on attach at the shielded nop5 (shielded), else at the nop1. */
void fp_target__set_shielded(struct fp_target *t, bool shielded);
/*
 * What a module above keeps per target (sampling's session, daemon/sample/), with the
 * hooks the target calls when it releases its object (the process exited or was
 * detached) and at its end, so that the target never calls up into that module. One slot
 * per kind; a module reads its own back by its kind alone.
 */
enum fp_target_ext_kind { FP_EXT_SAMPLE, FP_EXT_N };
struct fp_target_ext {
	void (*release)(struct fp_target *t, void *data);	/* NULL: nothing */
	void (*free)(struct fp_target *t, void *data);
};
void fp_target__set_ext(struct fp_target *t, enum fp_target_ext_kind kind,
			const struct fp_target_ext *ops, void *data);
/* The data of that kind, NULL: none. */
void *fp_target__ext(const struct fp_target *t, enum fp_target_ext_kind kind);
/* What was asked for by name (regions that appear later join it), and its update by a
 * request that named names (on: enabled, else disabled): fp_wants_update's return. */
const struct fp_wants *fp_target__wants(const struct fp_target *t);
int fp_target__update_wants(struct fp_target *t, const struct fp_wants *names, bool on);
/* A file's target of a run whose processes are all attached in time: regions each
 * process times itself are left to its own target. */
void fp_target__set_file_skips_ip(struct fp_target *t, bool skip);

/* The one-line error for a process without featprof probes (names other providers):
 * -ENODATA. */
int fp_no_probes(const struct fp_proc *proc, const char *comm, struct fp_err *e);
/* fp_target__new's flags */
#define FP_TARGET_SHIELDED 1	/* attach at the shielded nop5 */
#define FP_TARGET_ANY 2		/* a process without regions is a target too (its call
				 * stacks sampled, nothing to enable) */
/* Reads the target's catalog (featprof notes, defs' regions and more's, as
 * fp_target__add_defs; more may be NULL) and loads its BPF object; flags FP_TARGET_*.
 * NULL with errno; e filled. */
struct fp_target *fp_target__new(pid_t pid, int flags, const struct fp_regdefs *defs,
				 struct fp_regdefs *more, struct fp_err *e);
/*
 * The target of an executable profiled as a whole (daemon/groups/groups.c): the notes of the
 * file open at fd (read through it, so the inode the group was keyed by), its sites
 * attached for every process that maps it (no pid filter) and measured only for the
 * group's members that have no target of their own (bpf/featprof.bpf.c member_group).
 * pid is 0; nothing of it reads /proc. NULL with errno; e filled.
 */
struct fp_target *fp_target__new_file(int fd, const char *path, int group, int use_opt,
				      const struct fp_regdefs *defs, struct fp_err *e);
/* The daemon's calibration (daemon/calibrate/calibrate.h): every object loaded from now on charges
 * each event its per-gap probe costs (bpf/featprof.bpf.c "Cost"); NULL: nothing. */
struct fp_daemon_cal;
void fp_target__use_calibration(const struct fp_daemon_cal *dc);
/* Writes the calibration's costs into every loaded object again (it changed). */
void fp_target__costs_changed(void);
/* The watcher's maps of processes and of held threads, which every object loaded from
 * now on reuses for its membership check (a group's file target and members, and a
 * member's handover thread by thread); -1: none. */
void fp_target__use_members_maps(int members, int held);
/* The watcher's ring, into which every object loaded from now on reports a process's new
 * in-process arena (FP_WATCH_ARENA); -1: none. */
void fp_target__use_watch_ring(int fd);
/* Takes the process's in-process arena if it made one (daemon/inproc/inproc.c); once taken, the
 * object reports it no more. */
void fp_target__take_arena(struct fp_target *t);
/* Which members the object measures (bpf/featprof.bpf.c member_group): 0 = every event
 * of its sites; a group's number (| FP_MEMBER_OWN) = the processes the map says. */
void fp_target__set_member_group(struct fp_target *t, uint32_t value);
uint32_t fp_target__member_group(const struct fp_target *t);
/* Regions enabled from now on are trapped (trap), or timed in the process where they
 * can be (the enable verb's "trap"). */
void fp_target__trap_from_now(struct fp_target *t, bool trap);
/* Something of t is measured from now on: its figures' elapsed time starts (once). */
void fp_target__enabled_now(struct fp_target *t);
/* t is a member of executable group group (its number; 0: none). */
void fp_target__join_group(struct fp_target *t, int group);
/*
 * Adds a client's definitions (moved out of *more on success; a name the target has
 * already is skipped): every probe they name must be in the process, else -ENOENT
 * and nothing changes. Then refreshes (below). Returns as fp_target__refresh.
 */
int fp_target__add_defs(struct fp_target *t, struct fp_regdefs *more, struct fp_err *e);
/* Does one of t's own definitions (a client's) give feature its regions when the object
 * it names is mapped (a function definition whose library is dlopen'ed later)? */
bool fp_target__pending_feature(const void *t, const char *feature);
/*
 * Re-reads the process's mappings: objects mapped since (dlopen) and definitions added
 * to own_defs join the catalog with new region indices; regions asked for by name
 * (t->wants) that appear are enabled. Returns regions added (0: nothing new) or -errno
 * with e filled (nothing measured changed).
 */
int fp_target__refresh(struct fp_target *t, struct fp_err *e);
/* Enables the regions asked for by name (t->wants; on), or disables the enabled ones no
 * longer asked for (off). 0 or -errno (e filled). */
int fp_target__apply_wants(struct fp_target *t, int on, struct fp_err *e);
/* Replaces what is asked for by name with a copy of w. 0 or -ENOMEM (nothing wanted). */
int fp_target__set_wants(struct fp_target *t, const struct fp_wants *w);
void fp_target__free(struct fp_target *t);
/* Its process is gone (or its group ended): its figures now kept in t->last, exited set,
 * released (below). */
void fp_target__retire(struct fp_target *t);
/* Attaches (on) or detaches (off) the sites of the regions with sel[r] set. 0 or
 * -errno; on error nothing changed. */
int fp_target__set_regions(struct fp_target *t, const uint8_t *sel, int on, struct fp_err *e);
int fp_target__set_region(struct fp_target *t, int region, int on, struct fp_err *e);
/* Where the enabled regions' sites are attached: bit 0 a nop1 (trap), bit 1 the
 * shielded nop5 (optimized); third-party sites are always nop1. */
int fp_target__attach_points(const struct fp_target *t);
/* Probe sites of a live pid target that hold an int3 the file does not have, outside the
 * regions featprofd has enabled, its in-process gates and hooks, and the regions that
 * file, the link of the target's executable group (NULL: none; dev and ino its file's),
 * has enabled: left by someone (common/strays.h), or another tool's uprobes. -errno when
 * its memory cannot be read. */
int fp_target__strays(const struct fp_target *t, const struct fp_target *file, uint64_t dev,
		      uint64_t ino);
/* The state of one thread (tid; pidfd: a pidfd of it, for task storage) as the object
 * keeps it: the daemon's own calibration reads its thread's. 0 or -errno. */
struct fp_tstate;
int fp_target__thread_state(struct fp_target *t, int pidfd, pid_t tid, struct fp_tstate *st);
/* Reads and sums the per-CPU maps. NULL with errno. */
struct fp_snapshot *fp_target__snapshot(struct fp_target *t);
int fp_target__reset(struct fp_target *t);
/*
 * Recording (featprof record): a ring of bytes (a power of two) swapped into the
 * object, every completed instance an fp_event passed to cb when drained. start: 0 or
 * -errno (e filled). drain: events consumed, or cb's negative return when cb asked
 * to stop (what it has not taken stays in the ring, for the next drain). halt: no more
 * events are written (the ring leaves the object but stays drainable); the events lost
 * to a full ring. stop: halts and frees the ring, discarding what it still holds.
 */
int fp_target__record_start(struct fp_target *t, uint32_t bytes,
			    int (*cb)(void *ctx, void *data, size_t size), void *ctx,
			    struct fp_err *e);
int fp_target__record_drain(struct fp_target *t);
uint64_t fp_target__record_halt(struct fp_target *t);
uint64_t fp_target__record_stop(struct fp_target *t);

/* How many BPF objects are loaded now, and how many targets they hold (status;
 * daemon/targets/pool.c). */
void fp_pool__counts(int *objects, int *targets);

/*
 * The attach journal: what featprofd is about to attach or detach, kept in a file until
 * it is done, so that a featprofd killed in the middle leaves no breakpoint behind for
 * longer than its next start (daemon/targets/journal.c).
 */

/*
 * Opens the journal file in dir (named after the socket, so that daemons on different
 * sockets keep their own), creating dir if needed; a journal left by a previous run is
 * repaired first. Returns the number of sites repaired, or -errno (e filled: the
 * daemon then runs without a journal).
 */
int fp_journal__open(const char *dir, const char *socket_path, struct fp_err *e);
void fp_journal__close(void);
/* Sites repaired at open (a previous run's journal); -1 when there is no journal. */
int fp_journal__repaired(void);
/* Shutdown: the changes from here on accumulate in the journal (their closes finish in
 * the pool, daemon/util/closer.h, after their ends) until fp_journal__let_go() empties it. */
void fp_journal__hold(void);
void fp_journal__let_go(void);

/*
 * featprof repair PID: probe sites of the process that hold a breakpoint (int3 where the
 * file has none) get a uprobe registered and unregistered again (repair_sites): the
 * kernel then removes each one no live consumer wants; sites featprofd or another tool
 * has attached keep theirs. check: only count. *before: the sites with a breakpoint,
 * *after: those left. 0, -ESRCH (no such process), or -errno (e filled).
 */
int fp_journal__repair_process(pid_t pid, bool check, int *before, int *after, struct fp_err *e);

#endif
