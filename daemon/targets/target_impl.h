/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The target module's one private header (daemon/targets/): the target's fields, and
 * what its files call of each other -- the sampler thread, the inlined calls, the DWARF
 * unwinder, named call stacks, what sampling reads from the target's files, the link
 * set, and sampling's own struct, each under the file that makes it. Modules above read
 * a target through the functions of target.h; scripts/layers.py refuses another
 * module's include of this file.
 */
#ifndef FP_TARGET_IMPL_H
#define FP_TARGET_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "target.h"

struct fp_target {
	pid_t pid;
	int cap_regions;		/* BPF map capacity: regions may grow to it */
	const struct fp_regdefs *defs;	/* installed definitions (the daemon's) */
	struct fp_regdefs own_defs;	/* definitions clients sent for this target */
	bool defs_added;			/* own_defs grew since the last refresh */
	/* what was asked for by name, so that regions appearing later join (refresh) */
	int group;			/* its executable group (groups/groups.c), 0: none */
	struct fp_wants wants;
	int pidfd;			/* readable when the process exits */
	bool exited;
	uint64_t exited_ns;		/* when it exited (fp_mono_ns) */
	unsigned long long start_time;	/* of the process (/proc/PID/stat, clock ticks since
					 * boot): a pid reused by a new process differs */
	uint64_t made_ns;		/* fp_mono_ns() as it began reading the process */
	uid_t owner;			/* fp_owner() at attach: may see it after exit */
	char comm[32];
	struct fp_proc *proc;
	struct fp_catalog *cat;
	struct featprof_bpf *skel;	/* its object's, shared (pool.c); NULL: none */
	struct fp_pool *pool;
	int slot;			/* its slot in the object */
	int rbase;			/* its regions' first entry in the object's arrays */
	int paths_fd, nodes_fd;		/* its path maps (at its slot), -1: none */
	uint8_t *enabled;		/* per region */
	uint64_t *region_mask;		/* per region: its features, bit i = feature i */
	struct fp_linkset *links;	/* its attachments (targets/links.c) */
	bool multi;			/* multi-uprobe links (else one perf link per site) */
	bool session;			/* function regions by uprobe session links (6.13) */
	struct fp_inproc *ip;		/* in-process timing (inproc/inproc.c), NULL: none */
	uint8_t *ip_on;			/* per region: measured in-process now */
	int ip_regions;			/* how many are */
	bool trap_only;			/* regions enabled from now on are trapped */
	bool file_skips_ip;		/* a file's target: regions every process of the
					 * file times itself are left to their own targets
					 * (a run whose processes are all attached in time) */
	bool ts_map;			/* thread state in a map keyed by tid (old kernels) */
	int attached_sites;
	bool use_opt;			/* attach at the shielded nop5 */
	bool any;			/* a target without regions is allowed (FP_TARGET_ANY) */
	int points_kept;		/* fp_target__attach_points() when released */
	uint32_t enable_gen;		/* region_enabled values: generation of each enable */
	uint64_t enabled_at_ns;		/* CLOCK_MONOTONIC of the first enable */
	/* ends without a begin that enabling explains: at each enable of a live process, its
	 * threads x the regions enabled (a thread inside one when its sites were attached
	 * ends it without having begun it) */
	uint64_t unmatched_allowed;
	struct fp_snapshot *last;	/* figures kept after exit or detach */
	/* featprof record: the ring swapped into the object, drained by the daemon */
	struct fp_rec *rec;		/* its recording (targets/read.c), NULL: none */
	/* what a module above keeps of it (daemon/sample/: a session), and how it lets go of
	 * it (fp_target__set_ext) */
	void *ext[FP_EXT_N];
	const struct fp_target_ext *ext_ops[FP_EXT_N];
};

/* --- links.c: a target's attachments --- */

/* The target's link set, for its capacity of regions (trampolines: one per region,
 * point and end where the kernel has no attach cookie). 0 or -ENOMEM. */
int fp_target__links_new(struct fp_target *t, bool trampolines);
/* Releases and frees it. */
void fp_target__links_free(struct fp_target *t);
/* Attaches (on) or detaches the sites of the regions with sel[r] set, journaled; force:
 * rebuild the link set even when no region changes (a region gained sites). 0 or -errno
 * (e filled); on error nothing changed. */
int fp_target__links_set(struct fp_target *t, const uint8_t *sel, int on, int force,
			  struct fp_err *e);
/* Closes every link and trampoline, journaled; attached_sites 0. */
void fp_target__links_release(struct fp_target *t);

/* --- pool.c --- */
/*
 * The BPF objects targets share (daemon/targets/pool.c): a process's target takes a slot and a
 * range of region indices in an object that up to FP_POOL_SLOTS process targets use; an
 * executable group's file target has an object of its own. Sets t->skel, t->slot,
 * t->rbase, t->paths_fd, t->nodes_fd, t->ts_map, t->multi for a target of cap regions.
 * 0 or -errno (e filled, who names the target).
 */
int fp_pool__join(struct fp_target *t, int cap, const char *who, struct fp_err *e);
/* The target's slot and range emptied and given back; the last target of an object
 * destroys it. t->skel is NULL after. */
void fp_pool__leave(struct fp_target *t);
/* The in-process runtime's cost (the daemon's calibration's), NULL: none measured. */
const struct fp_calibration *fp_pool__ip_calibration(void);

/* The daemon's calibration: what every object charges per event (bpf/featprof.bpf.c
 * "Cost"), now and whenever it changes (fp_pool__costs_changed). */
void fp_pool__use_calibration(const struct fp_daemon_cal *dc);
void fp_pool__costs_changed(void);
/* The watcher's maps of processes and of held threads and its ring, reused by every
 * object made from now on (members, held, watch_events); -1: none. */
void fp_pool__use_members_maps(int members, int held);
void fp_pool__use_watch_ring(int fd);

/* --- journal.c, journal_parse.c --- */
/* A journal's text (journal.c "Format") read from f: fn called once per file with its
 * sites' offsets and semaphore offsets (a file line that does not parse skips its sites;
 * a text that is not a journal calls nothing). 0, fn's nonzero return (it stopped the
 * reading), or -ENOMEM. */
typedef int (*fp_journal_fn)(void *ctx, const char *path, uint64_t dev, uint64_t ino,
			     const uint64_t *offs, const uint64_t *refs, int n);
int fp_journal_parse(FILE *f, fp_journal_fn fn, void *ctx);
/* Every site of t that a change of its attachments may touch, written before it; end
 * empties the journal once the change is complete. No-ops without a journal. */
void fp_journal__begin(const struct fp_target *t);
void fp_journal__end(void);

#endif
