/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The target's fields: private to daemon/target/. Modules above read a target through
 * the functions of target.h.
 */
#ifndef FP_TARGET_IMPL_H
#define FP_TARGET_IMPL_H

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
	struct fp_linkset *links;	/* its attachments (target_links.c) */
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
	int points_kept;		/* fp_target__attach_points() when released */
	uint32_t enable_gen;		/* region_enabled values: generation of each enable */
	uint64_t enabled_at_ns;		/* CLOCK_MONOTONIC of the first enable */
	struct fp_snapshot *last;	/* figures kept after exit or detach */
	/* featprof record: the ring swapped into the object, drained by the daemon */
	struct fp_rec *rec;		/* its recording (target_read.c), NULL: none */
	struct fp_sampling *smp;	/* featprof sample (sample.c), NULL: never sampled */
};

#endif
