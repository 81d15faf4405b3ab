/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Structs shared by bpf/featprof.bpf.c and the daemon. Fixed-width fields, explicit
 * padding, no pointers: both sides must agree byte for byte.
 */
#ifndef FEATPROF_BPF_SHARED_H
#define FEATPROF_BPF_SHARED_H

#define FP_MAX_DEPTH 32		/* open regions per thread; a power of two */
#define FP_HIST_BUCKETS 40	/* log2(ns) buckets: 1 ns .. ~18 minutes */
#define FP_MAX_FEATURES 64	/* one bit each in a feature mask */
/* targets in one BPF object (daemon/targets/pool.c); a power of two */
#define FP_POOL_SLOTS 64
#define FP_MAX_PATHS 8192	/* region paths per target (its own map in the object) */

/*
 * The attach cookie of a site: its target's slot in the object (daemon/targets/pool.c), which
 * region (the object's index: the target's first region plus the catalog's), begin or
 * end, the generation of the link set it belongs to (see daemon/targets/target.c) and whether it
 * is attached at the optimized nop5 (its cost is that point's). No map lookup needed.
 */
#define FP_COOKIE(slot, region, is_end, gen, opt)                                          \
	(((__u64)(slot) << 40) | ((__u64)((region) & 0xffffffffULL) << 3) |               \
	 ((__u64)((opt) ? 1 : 0) << 2) | ((__u64)((gen) & 1) << 1) | ((is_end) ? 1 : 0))
#define FP_COOKIE_REGION(c) ((__u32)((c) >> 3))
#define FP_COOKIE_SLOT(c) ((__u32)((c) >> 40) & (FP_POOL_SLOTS - 1))
#define FP_COOKIE_OPT(c) ((__u32)(((c) >> 2) & 1))
#define FP_COOKIE_GEN(c) ((__u32)(((c) >> 1) & 1))
#define FP_COOKIE_IS_END(c) ((c) & 1)
#define FP_COOKIE_NONE (~0ULL)	/* no site: its region index is no region's */
/* A function region's site (entry or return probe): its frames carry the stack pointer;
 * its opt bit says the entry's first instruction is single-stepped (the costlier
 * calibration of the two for functions) */
#define FP_COOKIE_FUNC (1ULL << 35)
#define FP_COOKIE_IS_FUNC(c) (((c) >> 35) & 1)
/* A function region that counts calls at the entry, without a return probe (C++: an
 * exception must not meet the return trampoline; common/symbols.h) */
#define FP_COOKIE_CALLS (1ULL << 36)
#define FP_COOKIE_IS_CALLS(c) (((c) >> 36) & 1)

#define FP_RI_NONEST 1	/* may not be open twice on a thread (a definition's pair) */

/*
 * A probe's cost to the thread, by the time since the thread's previous event (the gap):
 * the longer the thread ran its own code since, the more the probe costs (measured in
 * daemon/calibrate/calibrate.c). The kernel looks an event up by step: floor(log2(gap in ns)),
 * longer gaps taking the last step, or FP_GAP_COLD: the thread's first event, or it
 * was switched out since its previous one. Per step four parts around the event's
 * timestamp (FP_PART_*), which the daemon interpolates from its calibration and sets in
 * every object (gap_cost, gap_sd); the kernel adds them up per event (see
 * bpf/featprof.bpf.c, "Cost").
 */
#define FP_GAP_STEPS 32		/* step 31: 2.1 s and longer */
#define FP_GAP_COLD FP_GAP_STEPS
#define FP_GAP_SLOTS (FP_GAP_STEPS + 1)
enum { FP_PART_BEGIN_PRE, FP_PART_BEGIN_POST, FP_PART_END_PRE, FP_PART_END_POST, FP_PARTS };

struct fp_region_info {
	__u64 mask;		/* features of the region, bit i = feature i of the target */
	__u32 flags;		/* FP_RI_* */
	__u32 pad;
};

/* Per region, per CPU. Times are raw: compensation is done in user space. */
struct fp_region_stats {
	__u64 count;		/* completed instances */
	__u64 incl_ns;		/* sum of begin->end */
	__u64 excl_ns;		/* sum of begin->end minus completed nested children */
	__u64 min_ns;		/* of one instance, inclusive; valid when count > 0 */
	__u64 max_ns;
	__u64 nchild;		/* sum over instances of direct children */
	__u64 ndesc;		/* sum over instances of all nested regions */
	__u64 recursion;	/* begins while the same region was already open */
	/* off-CPU time inside the instances (sched_switch): runnable / sleeping */
	__u64 off_pre_ns, off_blk_ns;		/* inclusive */
	__u64 xoff_pre_ns, xoff_blk_ns;		/* exclusive of completed children */
	/* the probes' cost inside the instances (gap_cost) and its uncertainty (gap_sd):
	 * inclusive, and exclusive of completed children */
	__u64 cost_ns, unc_ns, xcost_ns, xunc_ns;
	__u64 npre, xnpre;	/* preemptions inside (of which off_pre_ns, xoff_pre_ns) */
	__u64 hist[FP_HIST_BUCKETS];	/* inclusive ns, bucket = floor(log2(ns)) */
};

/*
 * Per region path (the thread's stack of open regions, outermost first, as a 64-bit
 * hash; 0 = no region open, "base"), per CPU. Every boundary event closes the interval
 * since the thread's previous event and opens the next one; an interval belongs to the
 * path open during it, so a path's time is its exclusive time. Which kind of event
 * opened and closed each interval is counted because the probes' cost splits unevenly
 * around the timestamp (see daemon/util/stats.c). Feature-set figures are sums of paths:
 * a path's features are the union of its regions'.
 */
struct fp_path_val {
	__u64 ns;		/* time with exactly this path open */
	__u64 events;		/* intervals of this path (= boundary events closing one) */
	__u64 opened_by_begin;	/* of those, opened by a begin (else by an end) */
	__u64 closed_by_begin;	/* closed by a begin (else by an end) */
	__u64 off_pre_ns, off_blk_ns;	/* off-CPU inside them */
	__u64 count;		/* instances of the path's innermost region ended here */
	__u64 cost_ns, unc_ns;	/* the probes' cost inside them, its uncertainty */
	__u64 npre;		/* preemptions inside them */
};

/* A path's last element: what the hash stands for (written once, first sight). */
struct fp_path_node {
	__u64 parent;		/* the path without its innermost region; 0 = none */
	__u32 region;
	__u32 depth;		/* 1 = outermost */
};

/* path = FP_PATH_HASH(parent, region): a 64-bit mix, never 0 (0 is base) */
#define FP_PATH_MIX(x) (((x) ^ ((x) >> 31)) * 0x7fb5d329728ea185ULL)
#define FP_PATH_HASH(parent, region)                                                       \
	(FP_PATH_MIX(FP_PATH_MIX((parent) ^ (((__u64)(region) + 1) * 0x9e3779b97f4a7c15ULL))) | 1)

enum fp_anomaly {
	FP_AN_END_WITHOUT_BEGIN,	/* e.g. enabled while the thread was inside */
	FP_AN_ABANDONED,		/* begun, never ended: popped by an outer end */
	FP_AN_OVERFLOW,			/* begin beyond FP_MAX_DEPTH: not measured */
	FP_AN_EXIT_INSIDE,		/* a thread exited with regions open */
	FP_AN_DISABLED_OPEN,		/* region disabled while a thread was inside */
	FP_AN_NO_STATE,			/* per-thread state could not be allocated */
	FP_AN_PATHS_FULL,		/* the path map was full: an interval not kept */
	FP_AN_BEGIN_TWICE,		/* a FP_RI_NONEST region begun while open: the
					 * older instance (and frames above it) dropped */
	FP_AN_NO_RETURN,		/* a function region's frame found left without
					 * its return (longjmp, an exception unwound through
					 * it): dropped with the frames above it */
	FP_AN_MAX,
};

/*
 * One completed region instance, for `featprof record` (a ring buffer the daemon swaps
 * in while recording). Raw timestamps; user space compensates.
 */
struct fp_event {
	__u64 start, end;	/* bpf_ktime_get_ns of the begin and the end */
	__u64 cstart, cend;	/* the thread's cumulative probe cost at each (ctot) */
	__u32 tid;
	__u32 region;
	__u32 depth;		/* 0 = outermost */
	__u32 ndesc;		/* nested instances completed inside it */
};

/*
 * Sampling (featprof sample): the target's thread-local region stack, as usdt/featprof.h
 * lays it out (struct featprof_tls, FP_TLS_MAGIC), read whole at each sample.
 */
#define FP_TLS_MAGIC_BPF 0x32545046u
#define FP_TLS_SLOTS 16
struct fp_tls_user {
	__u32 magic;
	__u32 depth;
	__u64 ids[FP_TLS_SLOTS];
	__u64 unmatched;	/* the thread's ends whose region was not on its stack */
};

/*
 * A shared library whose featprof_tls is its own (a version script made it local, or the
 * executable has none): its stack found through the thread's dynamic thread vector, as
 * glibc lays it out on x86-64 (tcbhead_t.dtv at fsbase + 8, pointing at dtv[0]: dtv[-1]
 * its length, dtv[modid] 16 bytes whose first word is the module's TLS block, -1 while
 * the thread has not allocated it) at offset off in the block. Read after the
 * executable's, in this order, at most FP_SAMPLE_LIBS of them.
 */
#define FP_SAMPLE_LIBS 4
struct fp_tls_lib {
	__u64 modid;
	__u64 off;
};

/* Per sampled thread: its unmatched count at the first sample of this sampling session
 * (or where an earlier session left it), and at the latest. */
struct fp_sample_thread {
	__u64 base, last;
	__u32 session;
	__u32 pad;
};

#define FP_SAMPLE_SITES 16384	/* site addresses the sampler knows (two per site) */

/*
 * A sample's key: the stack of region ids (outermost first), how deep it was, and the
 * thread's user call stack (sample --stacks). ids are what the region stack's keeper
 * holds: name addresses in the target (a FEATPROF_SAMPLING build's TLS) or the target's
 * region indices with their frames' and their regions' enable generations at the sample
 * (FP_SRC_KERNEL: the regions its traps keep open, bpf/featprof.bpf.c; FP_SK_ID).
 */
struct fp_sample_key {
	__u32 depth;		/* entries in ids: min(depth, FP_TLS_SLOTS) */
	__u32 deeper;		/* the thread had more regions open than stored */
	__u64 ids[FP_TLS_SLOTS];
	__s32 ustack;		/* its id in ustacks (frame pointers), or FP_USTACK_* */
	__u32 tid;		/* the sampled thread (its figures apart: per thread) */
};

/* FP_SRC_KERNEL's id of a frame: its enable generation, its region's at the sample (open
 * when they are equal and not 0), 24 bits each, and the region's index in the target. */
#define FP_SK_ID(frame_gen, now_gen, index) \
	(((__u64)((frame_gen) & 0xffffff) << 40) | ((__u64)((now_gen) & 0xffffff) << 16) | \
	 ((__u64)(index) & 0xffff))

/* Where the sampler reads a thread's open regions. */
#define FP_SRC_TLS 0		/* the program's own TLS stack (FEATPROF_SAMPLING) */
#define FP_SRC_KERNEL 1		/* the thread's state in the target's BPF object */
#define FP_SRC_INPROC 2		/* the thread's block in the in-process arena (its
				 * runtime's process-wide region ids) */

/* sample_stacks: how each sample's user call stack is taken */
#define FP_UNWIND_NONE 0
#define FP_UNWIND_FP 1		/* the kernel's frame-pointer walk, into ustacks */
#define FP_UNWIND_DWARF 2	/* registers and the stack's top copied out (stack_copies):
				 * featprofd unwinds them by the objects' CFI */
#define FP_USTACK_DWARF (-3)	/* its stack went out as a copy */

/* FP_UNWIND_DWARF: one sample's copy, through a ring buffer */
#define FP_STACK_COPY 8192	/* bytes of the stack above sp (perf's default dump size) */
#define FP_STACK_CHUNK 1024	/* copied a chunk at a time: the last fails at the
				 * mapping's end, the copy is what came before it */
#define FP_PT_REGS_WORDS 21	/* x86-64 struct pt_regs: r15 ... ss */
struct fp_stack_copy {
	struct fp_sample_key key;	/* the open regions, as counted in samples */
	__u32 tid;
	__u32 size;			/* bytes of stack copied */
	__u32 limited;			/* the copy ended at sample_copy_chunks, not at the
					 * stack's end (daemon/stacks/dwarf.c adapts it) */
	__u32 pad;
	__u64 regs[FP_PT_REGS_WORDS];	/* the thread's user registers */
	__u8 stack[FP_STACK_COPY];
};

#define FP_USTACK_NONE (-1)	/* no call stack asked for */
#define FP_USTACK_LOST (-2)	/* the walk failed or the stack map had no room */
#define FP_STACK_FRAMES 127	/* a stack map entry's frames (perf_event_max_stack's
				 * default) */

enum fp_sample_anomaly {
	FP_SA_READ_FAILED,	/* the TLS block could not be read (not resident) */
	FP_SA_BAD_MAGIC,	/* no featprof_tls there (another FS base, other layout) */
	FP_SA_MAP_FULL,		/* too many distinct stacks */
	FP_SA_IN_PROBE,		/* in the kernel's handling of a uprobe at a site: probe
				 * time, counted apart (not an anomaly) */
	FP_SA_STACK_LOST,	/* --stacks: no user stack (walk failed, map full, a hash
				 * bucket held another stack) */
	FP_SA_MAX,
};

/* bpf/watch.bpf.c: what happened to a watched process. */
enum fp_watch_kind {
	FP_WATCH_MMAP = 1,	/* ld.so's object list changed (dlopen, dlclose) */
	FP_WATCH_EXEC,		/* exec; other = the group whose executable it runs, or 0 */
	FP_WATCH_FORK,		/* a group's process forked tgid; other = the group */
	FP_WATCH_ARENA,		/* an in-process thread took its block (bpf/featprof.bpf.c
				 * fp_ip_thread): the arena exists, featprofd takes it now */
};

/*
 * The watcher's map of processes (tgid -> value), shared with every target's object
 * (bpf/featprof.bpf.c `members`): 0 = a pid target; else the process belongs to an
 * executable group (its number), measured by the group's one inode-wide link until the
 * daemon has attached a target of its own to it, which it marks with FP_MEMBER_OWN.
 */
#define FP_MEMBER_OWN 0x80000000u
/*
 * The watcher's map of threads that the file's object holds (tid -> value): a member's
 * thread with a region open under the file's link stays the file's until its outermost
 * region ends, whenever the member got a target of its own meanwhile (bpf/featprof.bpf.c
 * "Handover"). The group's number while held; with FP_HELD_RELEASED once released.
 */
#define FP_HELD_RELEASED 0x40000000u
#define FP_MAX_GROUPS 16	/* groups: executables (--exe) and runs (featprof run) */

/* An executable profiled as a whole: the kernel's dev_t (major << 20 | minor) and inode. */
struct fp_file_key {
	__u64 dev;
	__u64 ino;
};

struct fp_watch_event {
	__u32 kind;		/* FP_WATCH_* */
	__u32 tgid;
	__u32 other;
	__u32 pad;
	__u64 ts;		/* bpf_ktime_get_ns */
};

#define FP_EV_BEGIN 1
#define FP_EV_END 2

/* One open region on a thread's stack. */
struct fp_frame {
	__u64 start;		/* timestamp of the begin */
	__u64 child_ns;		/* inclusive time of completed direct children */
	__u64 path;		/* the region path up to this frame (FP_PATH_HASH) */
	__u64 off_pre0, off_blk0;	/* the thread's off-CPU counters at the begin */
	__u64 child_pre, child_blk;	/* off-CPU inside completed direct children */
	__u64 cost0, unc0;	/* the thread's ctot, utot at the begin's timestamp */
	__u64 child_cost, child_unc;	/* probe cost inside completed direct children */
	__u64 npre0, child_npre;	/* the thread's preemptions at the begin; in children */
	__u32 region;
	__u32 nchild;
	__u32 ndesc;
	__u32 gen;		/* region_enabled[region] at the begin: its enable generation */
	/* a function region's frame: the stack pointer at its entry (pointing at the return
	 * address); 0 for other regions */
	__u64 sp;
};

/*
 * Per thread (task storage). User space reads it only for the daemon's own thread
 * during calibration (lookup by pidfd): last_ts is then the timestamp of the thread's
 * latest event, which is how the probes' cost is split around it.
 */
#define FP_EV_LOG 16
struct fp_tstate {
	__u32 depth;
	__u32 overflow;		/* begins not pushed because the stack was full */
	__u64 epoch;
	__u64 last_ts;		/* timestamp of the latest event */
	__u32 last_kind;	/* FP_EV_* of the latest event, 0 before the first */
	__u32 switched_preempted;	/* switched out while runnable */
	__u64 switched_at;	/* when switched out inside a region, else 0 */
	__u64 switched_ran;	/* the task's CPU time (se.sum_exec_runtime) then */
	__u64 off_pre, off_blk;	/* cumulative off-CPU inside regions */
	__u64 last_pre, last_blk;	/* the counters at the latest event */
	/* the probes' cost so far on the thread (gap_cost, ns) and its uncertainty; their
	 * values at the latest event's timestamp; switch-outs (any, inside a region or not)
	 * and their count at the latest event */
	__u64 ctot, utot, last_ctot, last_utot;
	__u32 switches, last_switches;
	__u64 n_pre, last_npre;	/* preemptions inside regions (of off_pre), at the latest */
	__u64 c_path;			/* the compaction's counters, thread state in a map */
	__u32 c_out, c_dropped;		/* (bpf/featprof.bpf.c apply_disables) */
	__u32 slot, owner;		/* whose state it is: its target's slot and occupant */
	/* the timestamps of the thread's latest FP_EV_LOG events, the latest at
	 * (nev - 1) % FP_EV_LOG: the calibration reads a sequence of probes with no system
	 * call between them (daemon/calibrate/calibrate.c) */
	__u32 nev, pad_ev;
	__u64 ev_ts[FP_EV_LOG];
	struct fp_frame f[FP_MAX_DEPTH];
};

/*
 * In-process timing (daemon/inproc/inproc.c): a thread of a target whose runtime keeps its
 * region stack in a thread block (usdt/featprof.h struct featprof_ip_thread). The
 * scheduler programs read the block's depth and open path entry at a switch-out
 * (FP_IPT_STATE_OFF: u32 depth, overflow, last_kind, cur) and charge the time off CPU to
 * that entry of that block.
 */
#define FP_IPT_STATE_OFF 48
/* ... and its frames (struct featprof_ip_frame), each's region id: the sampler's
 * in-process source reads them (FP_SRC_INPROC) */
#define FP_IPT_FRAMES_OFF 128
#define FP_IPT_FRAME_SIZE 40
#define FP_IPT_FRAME_ID 16
struct fp_ip_thread {
	__u64 block;		/* the thread block's address in the process */
	__u64 switched_at;	/* switched out with a region open, else 0 */
	__u32 path;		/* the block's path entry open then */
	__u32 preempted;	/* switched out runnable, or woken since */
	__u32 tgid, pad;
	__u64 ran;		/* the task's CPU time (se.sum_exec_runtime) at the switch-out */
};

struct fp_ip_off_key {
	__u64 block;
	__u32 path;
	__u32 tgid;
};

struct fp_ip_off {
	__u64 pre_ns, blk_ns, n_pre;	/* preempted, blocked; switch-outs preempted */
};

#endif
