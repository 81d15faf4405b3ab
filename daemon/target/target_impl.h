/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The target's fields: private to daemon/target/. Modules above read a target through
 * the functions of target.h.
 */
#ifndef FP_TARGET_IMPL_H
#define FP_TARGET_IMPL_H

#include "target.h"

/* The uprobes of one enabled region: multi-uprobe link fds, or per-site links. */
struct fp_rlinks {
	int *fds;
	int nfds;
	struct bpf_link **links;
	int nlinks;
};

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
	struct sample_bpf *sskel;	/* sampling's object (bpf/sample.bpf.c), NULL: none */
	uint8_t *enabled;		/* per region */
	uint64_t *region_mask;		/* per region: its features, bit i = feature i */
	struct fp_rlinks *links;	/* per region, per-site mode */
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
	int *tramp_fds;			/* no attach cookie: per (region, point, end) the
					 * trampoline (daemon/kern/uprobe.c), 0: not made yet */
	int *set_fds;			/* multi mode: the current link set, one per object */
	int nset_fds;
	unsigned gen;			/* generation of the current link set */
	int attached_sites;
	bool use_opt;			/* attach at the shielded nop5 */
	int points_kept;		/* fp_target__attach_points() when released */
	uint32_t enable_gen;		/* region_enabled values: generation of each enable */
	uint64_t enabled_at_ns;		/* CLOCK_MONOTONIC of the first enable */
	struct fp_snapshot *last;	/* figures kept after exit or detach */
	/* featprof record: the ring swapped into the object, drained by the daemon */
	struct ring_buffer *rec_rb;
	int rec_fd;			/* the ring map; -1 = not recording */
	uint64_t rec_dropped;		/* events lost to a full ring, read at the halt */
	/* featprof sample (daemon/target/sample.c) */
	struct bpf_link **sample_links;	/* the session's links: one per thread, or --remote's
					 * iterator and switch hook */
	int nsample_links;
	int sample_hz;
	bool sample_remote;		/* --remote: read by the sampler thread */
	struct fp_sampler_entry *sampler;	/* its ticks (--remote, while sampling) */
	uint64_t sample_ticks, sample_missed;	/* --remote: ticks taken, passed over */
	int64_t sample_tls_off;
	int sample_src;			/* where the open regions are read: FP_SRC_* */
	int sample_stacks;		/* --stacks: how each sample's user call stack is
					 * taken (FP_UNWIND_*), FP_UNWIND_NONE: not */
	int sskel_stacks;		/* sskel was made for that */
	int sskel_src;			/* and for that source */
	struct fp_stacks *stacks;	/* --stacks: the session's named stacks */
	struct fp_dwarf *dwarf;		/* FP_UNWIND_DWARF: the session's unwinder */
	int sample_gate;	/* FEATPROF_SAMPLING_GATED: the uprobe raising the gate, 0: none */
	bool sample_gated;
	uint64_t sample_start_ns, sample_stop_ns;
	struct fp_sample_id {
		uint64_t id;
		int region;
	} *sample_ids;			/* ids named so far */
	int nsample_ids;
	struct json_object *sample_last;	/* figures kept once stopped */
};

#endif
