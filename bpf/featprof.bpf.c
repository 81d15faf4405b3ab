// SPDX-License-Identifier: GPL-2.0
/*
 * Per-thread region stacks and per-region / per-feature-set time.
 *
 * One uprobe program serves every site: the attach cookie says which region and
 * whether the site begins or ends it (FP_COOKIE). No probe argument is read.
 *
 * Per thread (task storage, freed with the task) a stack of open regions. A begin
 * pushes a frame; an end searches the stack from the top for its region: frames above
 * it were begun and never ended (longjmp, a region left by a path without its end) and
 * are dropped as "abandoned"; no frame at all means the thread was inside the region
 * when it was enabled ("end without begin"). Neither is attributed to any region. A
 * region that may not nest (FP_RI_NONEST: third-party begin/end pairs) begun while open
 * lost its end: the open instance and the frames above it are dropped, counted.
 *
 * Each frame carries the hash of the region path up to it, so the path open on the
 * thread is the top frame's. Every event first closes the interval since the thread's
 * previous event and adds it to that path (its exclusive time); feature sets are sums of
 * paths, computed in user space. A path is described once (path_nodes: parent hash and
 * region) when a CPU first sees it; the hash is not collapsed for recursion, so a
 * region inside itself is a longer path (rec;rec;rec).
 *
 * Link sets: the daemon replaces a target's uprobes by attaching the new set, then
 * flipping link_gen, then closing the old set; each site's cookie carries its set's
 * generation and events of the other generation are ignored, so the overlap never
 * counts a site twice.
 *
 * Disable: the daemon bumps disable_epoch after clearing the region's entry in
 * region_enabled; a thread that sees a new epoch drops frames of disabled regions
 * before anything else, so a region disabled while open is never ended late.
 *
 * Timestamps: one per event. A begin takes its time as late and an end as early as it
 * can, so the probes' own cost inside a region is as small as it can be; the same
 * timestamp closes the feature-set interval, so a feature's span starts and ends
 * exactly where its outermost region does. The rest is calibrated and subtracted in
 * user space (daemon/calibrate/calibrate.c, daemon/util/stats.c).
 *
 * Cost: each event adds the probe's calibrated cost to a per-thread running total, the
 * part before its timestamp first (gap_cost: by how long the thread ran since its
 * previous event, in log2 steps, or cold after a switch-out; per attach point: nop1, nop5,
 * a function's entry and return probe, the entry emulated or single-stepped). A frame
 * keeps the total at
 * its begin's timestamp, so an instance's probe cost (its own begin's post part,
 * everything nested, its end's pre part) is one subtraction at its end, as its off-CPU
 * time is; an interval of a path holds the post part of the event that opened it and the
 * pre part of the one that closed it. User space subtracts these sums (daemon/util/stats.c),
 * and their uncertainty (gap_sd, the calibration's spread; shared_sd after another CPU's
 * probe) is summed alike.
 *
 * Off-CPU: sched_switch charges the time a thread spends switched out while it has a
 * region open to its cumulative counters, split into preempted (switched out while
 * still runnable, or woken and waiting for a CPU: sched_wakeup) and blocked (sleeping).
 * A frame keeps the counters' values at its
 * begin, so an end knows the off-CPU time of its instance without walking the stack.
 * A thread with no region open costs a switch one task-storage lookup, nothing else.
 * Threads of in-process targets (daemon/inproc/inproc.c) keep their stack in their own memory:
 * while the daemon measures one (ip_active), a switch also looks the thread up in
 * ip_threads and, with a region open, charges the time to the open path of its block
 * (ip_switch).
 *
 * Kernels (daemon/kern/kernel.c probes them; docs/TRACING.md "The kernel's mechanisms"): the
 * per-thread state lives in task storage (Linux 5.11) where the kernel has it and
 * bpf_loop (5.17) too, else in a hash map keyed by thread id that the thread's exit
 * empties: every program that touches the state exists in both
 * kinds (TS_STORAGE, TS_MAP: the same code, a constant argument), and the daemon loads one
 * kind. The site's identity is the attach cookie (5.15); without it the daemon attaches
 * one small program per (region, begin or end) that stores the cookie it was built with
 * in site_cookie and tail-calls the site program (daemon/kern/uprobe.c). Other differences are
 * read-only flags set before load (k_*): the verifier never walks a branch a flag
 * rules out, so a helper or context field the kernel lacks is never seen.
 */
#include "kernel_types.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "featprof_bpf.h"
#include "task_state.h"

char LICENSE[] SEC("license") = "GPL";

/* tstate, tstate_map (TS_MAP: deleted at the thread's exit, fp_exit_map; created from
 * tstate_zero, a value too big for the BPF stack), region_enabled, ip_threads: the maps
 * the sampler's object shares */
#include "shared_maps.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fp_tstate);
} tstate_zero SEC(".maps");

/* Without attach cookies: the cookie a site's trampoline stored on this CPU right before
 * its tail call into site_prog[0] (the site program). Read once, then spoiled. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} site_cookie SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} site_prog SEC(".maps");

/* What the kernel has (daemon/kern/kernel.c), set before load. */
const volatile __u32 k_cookie = 1;		/* bpf_get_attach_cookie for uprobes */
const volatile __u32 k_switch_state = 1;	/* sched_switch's prev_state argument */

#define TS_STORAGE 0
#define TS_MAP 1

/* Sized from user space before load (the number of regions of the target). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fp_region_info);
} region_info SEC(".maps");


struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fp_region_stats);
} region_stats SEC(".maps");

/* Each target's paths and their descriptions are maps of its own (made by the daemon),
 * at its slot: a target's are read and emptied without walking another's. The two
 * variables put the values' types in the object's BTF in full (an inner map's value
 * alone leaves only a forward declaration, which libbpf cannot size). */
static struct fp_path_val path_val_type __attribute__((used));
static struct fp_path_node path_node_type __attribute__((used));
struct path_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);	/* as used: 8,192 a target x CPUs is a lot */
	__uint(max_entries, FP_MAX_PATHS);
	__type(key, __u64);
	__type(value, struct fp_path_val);
};
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, FP_POOL_SLOTS);
	__type(key, __u32);
	__array(values, struct path_map);
} paths SEC(".maps");

struct node_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, FP_MAX_PATHS);
	__type(key, __u64);
	__type(value, struct fp_path_node);
};
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, FP_POOL_SLOTS);
	__type(key, __u32);
	__array(values, struct node_map);
} path_nodes SEC(".maps");

/* Per slot, FP_AN_MAX counters each. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FP_AN_MAX * FP_POOL_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} anomalies SEC(".maps");

/*
 * featprof record: the daemon puts a ring buffer of the size it wants into record_rb at
 * the target's slot and sets its record_on; each completed instance is then one fp_event,
 * or one record_dropped when the ring is full. No wakeups: the daemon drains it on a
 * timer.
 */
struct record_ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
};
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, FP_POOL_SLOTS);
	__type(key, __u32);
	__array(values, struct record_ring);
} record_rb SEC(".maps");

__u32 record_on[FP_POOL_SLOTS] = {};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FP_POOL_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} record_dropped SEC(".maps");

/*
 * Executables profiled as a whole (featprof enable --exe): the group's object is attached
 * once per file with no pid filter, so the kernel puts its breakpoints in every process
 * that maps the file from its first instruction (later execs, forked children); which
 * processes it measures is decided here, from the watcher's map of processes (bpf/
 * watch.bpf.c writes it at exec and fork, the daemon reuses its fd for this map). The
 * group's object (member_group = the group) measures a member until the daemon has
 * attached the member's own target, whose object (member_group = the group |
 * FP_MEMBER_OWN) measures it from the moment the daemon sets that bit in the map: one
 * map write hands a process over, so no event is counted twice or by neither. 0: a
 * pid target, no check. Per slot: a file's target has an object of its own, a member's
 * own target shares one with other processes' (daemon/targets/pool.c).
 */
__u32 member_group[FP_POOL_SLOTS] = {};
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);	/* as watch.bpf.c's watched, whose fd it reuses */
	__type(key, __u32);
	__type(value, __u32);
} members SEC(".maps");

/*
 * Handover, per thread: the map write above hands a process over at one instant, but
 * its threads may be inside regions that the file's object began; their ends must not
 * reach an object that never saw the begins (one instance lost on each side). So the
 * file's object keeps held[tid] = group while a member's thread has a region open under
 * it (written when its stack goes from empty to one frame, removed when it empties),
 * and a thread so held stays the file's object's after the handover until its outermost
 * region ends; the file's object then marks it released, and the member's own object
 * measures it from its next event. Which object's program runs first at one probe is
 * not fixed, so the member's object may meet the releasing event itself after the
 * mark: an end it has no frame for, then, is the file's, not an anomaly. One map write
 * at each outermost begin and end of threads measured by a file's link; nothing for
 * pid targets. The watcher's map (watch.bpf.c), its entries removed at thread exit.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);	/* as watch.bpf.c's held, whose fd it reuses */
	__type(key, __u32);
	__type(value, __u32);
} held SEC(".maps");

enum {
	HAND_NONE,	/* a pid target, or a member's own object measuring its own */
	HAND_FILE,	/* the file's object, a member without a target of its own */
	HAND_FILE_HELD,	/* the file's object, a held thread of a member with its own */
	HAND_RELEASED,	/* the member's object at its first event after the release */
};

/* The event's HAND_* (a group's object), from on_site to the begin or end it calls. Kept
 * in a map, not passed: a constant argument would have the verifier walk those bodies
 * once per value, past its limit of a million instructions. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} hand_now SEC(".maps");

/*
 * In-process timing: the threads whose runtime registered its block (fp_ip_thread, at
 * the runtime's featprof:ip__thread site, or the daemon from the arena), and off-CPU
 * time by (block, path entry) (ip_switch). ip_active: set by the daemon while it
 * measures regions in one of the object's processes; until then a switch costs nothing
 * more.
 */
__u32 ip_active = 0;
/* The processes whose arena the daemon has: no more events for their threads. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FP_POOL_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} ip_arena_taken SEC(".maps");

/* The watcher's ring (bpf/watch.bpf.c events; the daemon reuses its fd here): a process
 * that lives a few milliseconds after its first event must not exit before the daemon
 * has its arena. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} watch_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct fp_ip_off_key);
	__type(value, struct fp_ip_off);
} ip_off SEC(".maps");

/*
 * Per slot (the object's targets, daemon/targets/pool.c): disables so far, the current link set's
 * generation (sites of the other one are a link set being replaced), and the slot's
 * occupant, a number the object never gives twice: a thread whose state was another
 * occupant's (a process that exec'd, a slot given to another process) starts afresh.
 */
__u64 disable_epoch[FP_POOL_SLOTS] = {};
__u32 link_gen[FP_POOL_SLOTS] = {};
__u32 owner[FP_POOL_SLOTS] = {};
/* The slot's first region entry: a region's index in its target's catalog is its index
 * here less this, and that is the index of paths (FP_PATH_HASH, path_nodes) and recorded
 * events, so that they are the same in every object and in the process (in-process
 * timing hashes catalog indices too). */
__u32 region_base[FP_POOL_SLOTS] = {};
#define SLOT(s) ((__u64)(s) & (FP_POOL_SLOTS - 1))	/* 64-bit: kept bounded if spilled */

/* HAND_NONE unless slot is a group's object (global, as fp_group_turn below). */
__attribute__((noinline)) __u32 fp_hand_of(__u32 slot)
{
	__u32 zero = 0, *h;

	if (!member_group[SLOT(slot)])
		return HAND_NONE;
	h = bpf_map_lookup_elem(&hand_now, &zero);
	return h ? *h : HAND_NONE;
}

/*
 * The thread's stack went from empty to one frame (kind FP_EV_BEGIN) or back to empty
 * (FP_EV_END) in slot: the file's object holds the thread, lets it go, or marks it
 * released (Handover above). Global: in the begin's and end's own code the map update's
 * stack variables cost the verifier ~6x the instructions.
 */
__attribute__((noinline)) int fp_held_mark(__u32 slot, __u32 kind)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), hand = fp_hand_of(slot), v;

	v = member_group[SLOT(slot)];
	if (kind == FP_EV_BEGIN && hand == HAND_FILE)	/* the file's until it ends */
		return bpf_map_update_elem(&held, &tid, &v, BPF_ANY);
	if (kind != FP_EV_END)
		return 0;
	if (hand == HAND_FILE)		/* no region open: the thread's next event decides */
		return bpf_map_delete_elem(&held, &tid);
	if (hand != HAND_FILE_HELD)
		return 0;
	v |= FP_HELD_RELEASED;		/* the member's own object from its next event */
	return bpf_map_update_elem(&held, &tid, &v, BPF_ANY);
}

/* The probe cost per attach point (0 the nop1, 1 the nop5: FP_COOKIE_OPT), gap bucket and
 * part (ns), and its spread, set by the daemon from its calibration (and again as the
 * calibration drifts). */
__u32 gap_cost[4][FP_GAP_SLOTS][FP_PARTS] = {};
__u32 gap_sd[4][FP_GAP_SLOTS][FP_PARTS] = {};
/* The extra spread of an event after another CPU hit this object's probes since the
 * thread's previous event: it may cost more than its gap says (daemon/util/stats.h
 * FP_GAP_SHARED_UNC), per point, step and part. */
__u32 shared_sd[4][FP_GAP_SLOTS][FP_PARTS] = {};
__u32 last_probe_cpu[FP_POOL_SLOTS] = {};	/* the CPU of the target's latest event */

static __always_inline void count(__u32 slot, __u32 what, __u64 n)
{
	__u32 k = SLOT(slot) * FP_AN_MAX + what;
	__u64 *v = bpf_map_lookup_elem(&anomalies, &k);

	if (v)
		*v += n;
}

static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r = 0, s;

	s = (v > 0xffffffffULL) << 5; v >>= s; r |= s;
	s = (v > 0xffff) << 4; v >>= s; r |= s;
	s = (v > 0xff) << 3; v >>= s; r |= s;
	s = (v > 0xf) << 2; v >>= s; r |= s;
	s = (v > 0x3) << 1; v >>= s; r |= s;
	r |= (v >> 1);
	return r;
}

/*
 * The path open on the thread now (the top frame's, 0 = base) and its per-CPU value,
 * created on first use, when the path is also described in path_nodes. Looked up
 * before an event's timestamp, so that the hash lookup (cold after a sleep or a
 * migration) stays out of the measured time. Creating a path allocates two map
 * elements (per-CPU values, no preallocation): ~15 us the first time here, inside the
 * enclosing instance, so that time is measured and added to the thread's cost total
 * (the event's pre part), which compensation subtracts like the calibrated rest; a
 * lookup that finds the path costs no clock read. NULL: the thread's first event (no
 * interval to close), or the map is full (counted).
 */
static __always_inline struct fp_path_val *open_set(struct fp_tstate *st, __u32 slot)
{
	struct fp_path_val *v, zero = {};
	__u32 d = st->depth, s = SLOT(slot);
	__u64 path = 0, t0;
	void *pm, *nm;

	if (!st->last_kind || d > FP_MAX_DEPTH)
		return NULL;
	pm = bpf_map_lookup_elem(&paths, &s);
	if (!pm)
		return NULL;
	if (d > 0)
		path = st->f[(d - 1) & (FP_MAX_DEPTH - 1)].path;
	v = bpf_map_lookup_elem(pm, &path);
	if (v)
		return v;
	t0 = bpf_ktime_get_ns();
	nm = bpf_map_lookup_elem(&path_nodes, &s);
	if (d > 0 && nm) {
		__u32 r = st->f[(d - 1) & (FP_MAX_DEPTH - 1)].region;
		struct fp_path_node node = { .region = r - region_base[SLOT(slot)], .depth = d };

		if (d > 1)
			node.parent = st->f[(d - 2) & (FP_MAX_DEPTH - 1)].path;
		bpf_map_update_elem(nm, &path, &node, BPF_NOEXIST);
	}
	bpf_map_update_elem(pm, &path, &zero, BPF_NOEXIST);
	v = bpf_map_lookup_elem(pm, &path);
	if (!v)
		count(slot, FP_AN_PATHS_FULL, 1);
	st->ctot += bpf_ktime_get_ns() - t0;	/* the creation, inside the enclosing */
	return v;
}

/* The event's gap: how long the thread ran since its previous event (log2 ns, 0-63), or
 * 64 for cold. */
static __always_inline __u64 gap_log2(struct fp_tstate *st, __u64 now)
{
	if (!st->last_kind || st->switches != st->last_switches)
		return 64;
	return log2_u64(now - st->last_ts);
}

/*
 * Closes the thread's interval since its previous event at now (an event of kind
 * FP_EV_*), adding it to v, the set open during it; the same timestamp opens the next.
 * The event's probe cost goes into the thread's totals: its pre part before now (so in
 * last_ctot, the total at now), its post part after.
 */
static __always_inline void close_set(struct fp_tstate *st, struct fp_path_val *v, __u64 now,
				      __u32 kind, __u32 opt, __u32 slot)
{
	__u32 pre = kind == FP_EV_BEGIN ? FP_PART_BEGIN_PRE : FP_PART_END_PRE;
	__u32 cpu = bpf_get_smp_processor_id();
	__u64 b = gap_log2(st, now), o = opt;

	/* the step, clamped by branches on the 64-bit value right before its use: 6.1's
	 * verifier loses the bound of a clamp done in a helper ("unbounded memory access");
	 * the attach point's costs (nop1, nop5, a function's entry and return: 2 its first
	 * instruction a push, 3 single-stepped) masked there too (a mask done earlier was
	 * spilled and came back unbounded on 5.10 and 6.1) */
	barrier_var(b);
	if (b == 64)
		b = FP_GAP_COLD;
	else if (b > FP_GAP_STEPS - 1)
		b = FP_GAP_STEPS - 1;
	barrier_var(o);
	o &= 3;
	__u64 c = st->ctot + gap_cost[o][b][pre], u = st->utot + gap_sd[o][b][pre];
	__u32 xu = 0;

	/* another CPU's probe since (after a switch the event is cold: its own spread); the
	 * variable is written only when it changes, so one CPU's probes leave it clean */
	if (last_probe_cpu[SLOT(slot)] != cpu) {
		if (b != FP_GAP_COLD) {
			xu = shared_sd[o][b][pre + 1];
			u += shared_sd[o][b][pre];
		}
		last_probe_cpu[SLOT(slot)] = cpu;
	}

	if (v) {
		v->ns += now - st->last_ts;
		v->events++;
		v->opened_by_begin += st->last_kind == FP_EV_BEGIN;
		v->closed_by_begin += kind == FP_EV_BEGIN;
		v->off_pre_ns += st->off_pre - st->last_pre;
		v->off_blk_ns += st->off_blk - st->last_blk;
		v->cost_ns += c - st->last_ctot;
		v->unc_ns += u - st->last_utot;
		v->npre += st->n_pre - st->last_npre;
	}
	st->last_npre = st->n_pre;
	st->ev_ts[st->nev & (FP_EV_LOG - 1)] = now;
	st->nev++;
	st->last_ts = now;
	st->last_kind = kind;
	st->last_pre = st->off_pre;
	st->last_blk = st->off_blk;
	st->last_switches = st->switches;
	st->last_ctot = c;
	st->last_utot = u;
	st->ctot = c + gap_cost[o][b][pre + 1];	/* the post part follows the pre */
	st->utot = u + gap_sd[o][b][pre + 1] + xu;
}

struct compact_ctx {
	struct fp_tstate *st;
	__u64 path;
	__u32 out, dropped;
};

/*
 * One frame of apply_disables: keep it (moved down, path rebuilt) or drop it; 1: done.
 * out, dropped and path are where the caller keeps its counters.
 */
static __always_inline long compact_step(struct fp_tstate *st, __u64 i, __u32 *out,
					 __u32 *dropped, __u64 *path)
{
	__u32 *en, r, k = (__u32)i & (FP_MAX_DEPTH - 1), o = *out & (FP_MAX_DEPTH - 1);

	if (i >= st->depth)
		return 1;
	r = st->f[k].region;
	en = bpf_map_lookup_elem(&region_enabled, &r);
	if (!en || !*en || *en != st->f[k].gen) {	/* disabled since (and maybe again on) */
		*dropped += 1;
		return 0;
	}
	*path = FP_PATH_HASH(*path, r - region_base[SLOT(st->slot)]);
	st->f[o] = st->f[k];
	st->f[o].path = *path;
	*out += 1;
	return 0;
}

static long compact_one(__u64 i, void *data)
{
	struct compact_ctx *c = data;

	return compact_step(c->st, i, &c->out, &c->dropped, &c->path);
}

/*
 * Drops frames of regions disabled since this thread last looked and rebuilds the
 * paths of the frames kept. Runs once per thread per disable, in bpf_loop so that the
 * verifier checks one iteration instead of every path through 32. TS_MAP (kernels
 * before bpf_loop, whose loader also refuses a callback's address): a bounded loop whose
 * counters live in the thread's state, not on the stack: the verifier does not follow
 * values in map memory, so the paths through the loop do not multiply.
 */
static __always_inline void apply_disables(struct fp_tstate *st, int ts)
{
	struct compact_ctx c = { .st = st };
	__u32 i, out, dropped;

	if (ts == TS_STORAGE) {
		bpf_loop(FP_MAX_DEPTH, compact_one, &c, 0);
		out = c.out;
		dropped = c.dropped;
	} else {
		st->c_out = 0;
		st->c_dropped = 0;
		st->c_path = 0;
		for (i = 0; i < FP_MAX_DEPTH; i++)
			if (compact_step(st, i, &st->c_out, &st->c_dropped, &st->c_path))
				break;
		out = st->c_out;
		dropped = st->c_dropped;
	}
	st->depth = out;
	if (dropped)
		count(st->slot, FP_AN_DISABLED_OPEN, dropped);
}

/* The current thread's state, created on first use. */
static __always_inline struct fp_tstate *new_state(int ts)
{
	__u32 tid, zero = 0;
	struct fp_tstate *st;
	void *init;

	if (ts == TS_STORAGE)
		return bpf_task_storage_get(&tstate, bpf_get_current_task_btf(), 0,
					    BPF_LOCAL_STORAGE_GET_F_CREATE);
	tid = (__u32)bpf_get_current_pid_tgid();
	st = bpf_map_lookup_elem(&tstate_map, &tid);
	if (st)
		return st;
	init = bpf_map_lookup_elem(&tstate_zero, &zero);
	if (!init)
		return NULL;
	bpf_map_update_elem(&tstate_map, &tid, init, BPF_NOEXIST);
	return bpf_map_lookup_elem(&tstate_map, &tid);
}

/* A task's state if it has one (the scheduler programs). */
static __always_inline struct fp_tstate *task_state_of(int ts, struct task_struct *task)
{
	__u32 tid;

	if (ts == TS_STORAGE)
		return bpf_task_storage_get(&tstate, task, 0, 0);
	tid = (__u32)BPF_CORE_READ(task, pid);
	return bpf_map_lookup_elem(&tstate_map, &tid);
}

/*
 * A thread back on a CPU without a switch event naming it (seen on a 6.18 guest kernel,
 * about once in 50 runs of a 2-thread program: preempted, then running again, its next
 * sched_switch a switch-out): its record of the switch-out is still there while it runs.
 * Left there, the next switch-in charged the whole time since, run and sleep alike (a
 * 20 ms region with 33 ms off CPU). The interval it was off CPU is the time since the
 * switch-out less the CPU time it has run since (the kernel's sum_exec_runtime, brought
 * up to date at every switch and read where it runs): charged as that switch-out said,
 * when the thread's next probe or switch-out finds the record.
 */
static __always_inline __u64 off_since(__u64 at, __u64 ran_at, __u64 now, __u64 ran_now)
{
	__u64 wall = now - at, ran = ran_now - ran_at;

	return ran < wall ? wall - ran : 0;
}

/* The scheduler programs' task (a BTF pointer): a plain load. */
static __always_inline __u64 task_ran(struct task_struct *task)
{
	return task->se.sum_exec_runtime;
}

/* The probes' current task (an untyped pointer before bpf_get_current_task_btf, 5.11):
 * read through the helper, on this rare path only. */
static __always_inline __u64 current_ran(void)
{
	return BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), se.sum_exec_runtime);
}

static __always_inline void switch_in_unseen(struct fp_tstate *st, __u64 ran_now)
{
	__u64 off = off_since(st->switched_at, st->switched_ran, bpf_ktime_get_ns(), ran_now);

	if (st->switched_preempted) {
		st->off_pre += off;
		st->n_pre++;
	} else {
		st->off_blk += off;
	}
	st->switched_at = 0;
}

static __always_inline struct fp_tstate *get_state(int ts, __u32 slot)
{
	struct fp_tstate *st;
	__u64 epoch = disable_epoch[SLOT(slot)];
	__u32 own = owner[SLOT(slot)];

	st = new_state(ts);
	if (!st) {
		count(slot, FP_AN_NO_STATE, 1);
		return NULL;
	}
	if (st->switched_at)	/* running, so its switch-in was not seen */
		switch_in_unseen(st, current_ran());
	if (st->slot != slot || st->owner != own) {	/* new, or another occupant's */
		st->depth = 0;
		st->overflow = 0;
		st->slot = slot;
		st->owner = own;
		st->epoch = epoch;
		st->last_kind = 0;
	} else if (st->epoch != epoch) {
		apply_disables(st, ts);
		st->epoch = epoch;
		/* the interval since the thread's last event may span a time when its regions
		 * were not traced (disabled, enabled again): not attributed to any path */
		st->last_kind = 0;
	}
	return st;
}

/*
 * Function regions (a uprobe at the entry, a return probe there): a frame keeps the
 * stack pointer at its entry (pointing at its return address). A frame is dead when a
 * new entry finds the stack at or above it: deeper (a lower sp) the new call could not
 * be made while the frame lived; at the same sp the frame lives only if the slot holds
 * the kernel's return trampoline (the first slot of the process's xol area, which the
 * kernel put there at the frame's entry): a tail call from the frame's function, whose
 * instance then includes the callee. Any other address there is a new call at the same
 * depth after the frame was left by longjmp. Dead frames, and all above them, were left
 * without their return (longjmp, an exception unwinding through them): dropped, counted
 * as FP_AN_NO_RETURN. The kernel decides the same for its own return instances
 * (arch_uretprobe_is_alive).
 */
static __always_inline void unwind_dead(struct fp_tstate *st, __u64 sp, __u32 slot)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 tramp = BPF_CORE_READ(task, mm, uprobes_state.xol_area, vaddr), ra = 0;
	__u32 i, d = st->depth;

	if (st->overflow || bpf_probe_read_user(&ra, sizeof(ra), (void *)sp))
		return;
	for (i = 0; i < FP_MAX_DEPTH; i++) {
		struct fp_frame *f;

		if (i >= d)
			break;
		f = &st->f[i];
		if (f->sp && (f->sp < sp || (f->sp == sp && ra != tramp))) {
			count(slot, FP_AN_NO_RETURN, d - i);
			st->depth = i;
			return;
		}
	}
}

/* The thread's dead function frames dropped (above) before a function's entry: global
 * functions, which the verifier checks once, not in every path of on_begin that reaches
 * them (inlined, the loop made the site program's verification 16x longer). One per
 * kind of thread state: each program links only the one it calls. */
__attribute__((noinline)) int fp_unwind_ts(__u32 slot, __u64 sp)
{
	struct fp_tstate *st = task_state_of(TS_STORAGE, bpf_get_current_task_btf());

	if (st)
		unwind_dead(st, sp, slot);
	return 0;
}

__attribute__((noinline)) int fp_unwind_map(__u32 slot, __u64 sp)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct fp_tstate *st = bpf_map_lookup_elem(&tstate_map, &tid);

	if (st)
		unwind_dead(st, sp, slot);
	return 0;
}

static __always_inline int on_begin(__u32 slot, __u32 region, __u32 gen, __u32 opt, int ts,
				    __u64 sp)
{
	struct fp_region_info *info = bpf_map_lookup_elem(&region_info, &region);
	struct fp_path_val *set;
	struct fp_tstate *st;
	struct fp_frame *fr;
	__u64 now, path = 0;
	__u32 d, i;

	st = get_state(ts, slot);
	if (!st || !info)
		return 0;
	if (sp && st->depth)
		ts == TS_STORAGE ? fp_unwind_ts(slot, sp) : fp_unwind_map(slot, sp);
	set = open_set(st, slot);
	d = st->depth;
	if (d >= FP_MAX_DEPTH) {
		st->overflow++;
		count(slot, FP_AN_OVERFLOW, 1);
		close_set(st, set, bpf_ktime_get_ns(), FP_EV_BEGIN, opt, slot);
		return 0;
	}
	for (i = 0; i < FP_MAX_DEPTH; i++) {
		if (i >= d)
			break;
		if (st->f[i].region == region) {
			struct fp_region_stats *rs;

			if (info->flags & FP_RI_NONEST) {	/* its end was missed */
				count(slot, FP_AN_BEGIN_TWICE, d - i);
				d = i;
				break;
			}
			rs = bpf_map_lookup_elem(&region_stats, &region);
			if (rs)
				rs->recursion++;
			break;
		}
	}
	if (d > 0)
		path = st->f[(d - 1) & (FP_MAX_DEPTH - 1)].path;
	fr = &st->f[d & (FP_MAX_DEPTH - 1)];
	fr->region = region;
	fr->gen = gen;
	fr->child_ns = 0;
	fr->nchild = 0;
	fr->ndesc = 0;
	fr->path = FP_PATH_HASH(path, region - region_base[SLOT(slot)]);
	fr->off_pre0 = st->off_pre;
	fr->off_blk0 = st->off_blk;
	fr->child_pre = 0;
	fr->child_blk = 0;
	now = bpf_ktime_get_ns();	/* late: the rest of this program is outside */
	close_set(st, set, now, FP_EV_BEGIN, opt, slot);	/* the enclosing path's interval */
	fr->start = now;
	fr->cost0 = st->last_ctot;
	fr->unc0 = st->last_utot;
	fr->child_cost = 0;
	fr->child_unc = 0;
	fr->npre0 = st->n_pre;
	fr->child_npre = 0;
	fr->sp = sp;
	st->depth = d + 1;
	if (d == 0 && member_group[SLOT(slot)])	/* the outermost */
		fp_held_mark(slot, FP_EV_BEGIN);
	return 0;
}

static __always_inline void record(struct fp_frame *fr, __u32 slot, __u32 region, __u32 depth,
				   __u64 now, __u64 st_ctot)
{
	__u32 s = SLOT(slot);
	void *rb = bpf_map_lookup_elem(&record_rb, &s);
	struct fp_event *e;
	__u64 *dropped;

	if (!rb)
		return;
	e = bpf_ringbuf_reserve(rb, sizeof(*e), 0);
	if (!e) {
		dropped = bpf_map_lookup_elem(&record_dropped, &s);
		if (dropped)
			*dropped += 1;	/* per CPU */
		return;
	}
	e->start = fr->start;
	e->end = now;
	e->cstart = fr->cost0;
	e->cend = st_ctot;
	e->tid = (__u32)bpf_get_current_pid_tgid();
	e->region = region - region_base[SLOT(slot)];
	e->depth = depth;
	e->ndesc = fr->ndesc;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
}

/* An end at now on st: its frame (and those above it) off the stack, its instance
 * added to the region's figures. */
/* sp: a function's return, the stack pointer after it (its frame's entry sp + 8), which
 * picks its frame among the region's; 0 for other ends. */
static __always_inline void end_frame(struct fp_tstate *st, __u64 now, __u32 slot,
				      __u32 region, __u32 opt, __u64 sp)
{
	__u64 incl, excl, pre, blk, b, cost, unc, npre;
	struct fp_region_stats *rs;
	struct fp_path_val *set;
	struct fp_frame *fr;
	__u32 d, i, found = FP_MAX_DEPTH;

	set = open_set(st, slot);
	close_set(st, set, now, FP_EV_END, opt, slot);
	if (st->overflow) {	/* the innermost begins were not pushed: this ends one */
		st->overflow--;
		return;
	}
	d = st->depth;
	for (i = 0; i < FP_MAX_DEPTH; i++) {
		__u32 k = d - 1 - i;

		if (i >= d)
			break;
		if (st->f[k & (FP_MAX_DEPTH - 1)].region == region &&
		    (!sp || st->f[k & (FP_MAX_DEPTH - 1)].sp + 8 == sp)) {
			found = k;
			break;
		}
	}
	if (found >= FP_MAX_DEPTH) {
		if (fp_hand_of(slot) != HAND_RELEASED)	/* else the file's object ended it */
			count(slot, FP_AN_END_WITHOUT_BEGIN, 1);
		return;
	}
	if (d - 1 - found)
		count(slot, FP_AN_ABANDONED, d - 1 - found);
	else if (set)	/* the ending region is the path's innermost */
		set->count++;
	barrier_var(found);	/* keep the mask: the verifier needs the bound */
	found &= FP_MAX_DEPTH - 1;
	fr = &st->f[found];
	incl = now - fr->start;
	excl = incl > fr->child_ns ? incl - fr->child_ns : 0;
	pre = st->off_pre - fr->off_pre0;
	blk = st->off_blk - fr->off_blk0;
	cost = st->last_ctot - fr->cost0;
	unc = st->last_utot - fr->unc0;
	npre = st->n_pre - fr->npre0;
	st->depth = found;
	if (found > 0) {
		__u32 p = found - 1;

		barrier_var(p);
		struct fp_frame *parent = &st->f[p & (FP_MAX_DEPTH - 1)];

		parent->child_ns += incl;
		parent->nchild++;
		parent->ndesc += 1 + fr->ndesc;
		parent->child_pre += pre;
		parent->child_blk += blk;
		parent->child_cost += cost;
		parent->child_unc += unc;
		parent->child_npre += npre;
	}
	rs = bpf_map_lookup_elem(&region_stats, &region);
	if (!rs)
		return;
	if (!rs->count || incl < rs->min_ns)
		rs->min_ns = incl;
	if (incl > rs->max_ns)
		rs->max_ns = incl;
	rs->count++;
	rs->incl_ns += incl;
	rs->excl_ns += excl;
	rs->nchild += fr->nchild;
	rs->ndesc += fr->ndesc;
	rs->off_pre_ns += pre;
	rs->off_blk_ns += blk;
	rs->xoff_pre_ns += pre - fr->child_pre;
	rs->xoff_blk_ns += blk - fr->child_blk;
	rs->cost_ns += cost;
	rs->unc_ns += unc;
	rs->xcost_ns += cost - fr->child_cost;
	rs->xunc_ns += unc - fr->child_unc;
	rs->npre += npre;
	rs->xnpre += npre - fr->child_npre;
	/* the bucket as a 64-bit value clamped by a branch: 6.1's verifier loses the bound
	 * of a 32-bit index clamped by a ternary ("R0 unbounded memory access") */
	b = log2_u64(incl);
	if (b > FP_HIST_BUCKETS - 1)
		b = FP_HIST_BUCKETS - 1;
	rs->hist[b]++;
	if (record_on[SLOT(slot)])
		record(fr, slot, region, found, now, st->last_ctot);
}

static __always_inline int on_end(__u32 slot, __u32 region, __u32 opt, int ts, __u64 sp)
{
	__u64 now = bpf_ktime_get_ns();	/* early */
	struct fp_tstate *st;

	st = get_state(ts, slot);
	if (!st)
		return 0;
	end_frame(st, now, slot, region, opt, sp);
	if (!st->depth && member_group[SLOT(slot)])	/* the outermost ended */
		fp_held_mark(slot, FP_EV_END);
	return 0;
}

/* The site's cookie: the attach cookie, or what its trampoline stored (spoiled after the
 * read, so that a stale value can never be taken for a site: no region has its index). */
static __always_inline __u64 site_cookie_of(struct pt_regs *ctx)
{
	__u32 zero = 0;
	__u64 *c, v;

	if (k_cookie)
		return bpf_get_attach_cookie(ctx);
	c = bpf_map_lookup_elem(&site_cookie, &zero);
	if (!c)
		return FP_COOKIE_NONE;
	v = *c;
	*c = FP_COOKIE_NONE;
	return v;
}

/* A group's object at a member's probe (member_group, Handover above): whether it
 * measures the event, and how. A function of its own (global: the verifier checks it
 * once, and its caller sees one unknown value, not each of its paths). */
#define HAND_SKIP 255
__attribute__((noinline)) __u32 fp_group_turn(__u32 group)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = (__u32)(id >> 32), tid = (__u32)id, *m, *h;

	m = bpf_map_lookup_elem(&members, &tgid);
	if (!m || (*m & ~FP_MEMBER_OWN) != (group & ~FP_MEMBER_OWN))
		return HAND_SKIP;	/* not the group's */
	if (!(group & FP_MEMBER_OWN)) {	/* the file's object */
		if (*m == group)
			return HAND_FILE;
		h = bpf_map_lookup_elem(&held, &tid);
		return h && *h == group ? HAND_FILE_HELD : HAND_SKIP;
	}
	if (*m != group)
		return HAND_SKIP;	/* the file's turn */
	h = bpf_map_lookup_elem(&held, &tid);
	if (!h)
		return HAND_NONE;
	if (!(*h & FP_HELD_RELEASED))
		return HAND_SKIP;	/* held by the file's object */
	bpf_map_delete_elem(&held, &tid);
	return HAND_RELEASED;
}

/* Is a group's probe (group: member_group of the site's slot, 0 for none) not this
 * object's to measure? hand_now set for the event's own use. */
static __always_inline bool not_our_turn(__u32 group)
{
	__u32 zero = 0, *hand;

	if (!group)
		return false;
	hand = bpf_map_lookup_elem(&hand_now, &zero);
	if (!hand)
		return true;
	*hand = fp_group_turn(group);
	return *hand == HAND_SKIP;	/* not the group's, or the other object's turn */
}

/*
 * A calls-only function's entry (FP_COOKIE_CALLS): the call counted. Where regions are
 * open on the thread, its probe's cost (by the gap since the thread's last event) goes
 * into the thread's totals, so that they subtract it as they do their own probes'; no
 * interval ends here (the thread's paths and events are as they were).
 */
static __always_inline int on_call(__u32 slot, __u32 region, __u32 opt, int ts)
{
	struct fp_region_stats *rs = bpf_map_lookup_elem(&region_stats, &region);
	struct fp_tstate *st;
	__u64 b, o = opt;

	if (rs)
		rs->count++;
	st = get_state(ts, slot);
	if (!st || !st->depth)
		return 0;
	b = gap_log2(st, bpf_ktime_get_ns());
	barrier_var(b);	/* clamped and masked right before use, as in close_set */
	if (b == 64)
		b = FP_GAP_COLD;
	else if (b > FP_GAP_STEPS - 1)
		b = FP_GAP_STEPS - 1;
	barrier_var(o);
	o &= 3;
	st->ctot += gap_cost[o][b][FP_PART_BEGIN_PRE] + gap_cost[o][b][FP_PART_BEGIN_PRE + 1];
	st->utot += gap_sd[o][b][FP_PART_BEGIN_PRE] + gap_sd[o][b][FP_PART_BEGIN_PRE + 1];
	return 0;
}

static __always_inline int on_site(struct pt_regs *ctx, int ts)
{
	__u64 cookie = site_cookie_of(ctx);
	__u32 region = FP_COOKIE_REGION(cookie), slot = FP_COOKIE_SLOT(cookie), *en;
	__u64 sp;
	__u32 opt;

	if (FP_COOKIE_GEN(cookie) != link_gen[slot] || not_our_turn(member_group[slot]))
		return 0;
	/* a region being disabled: its sites may fire until they are detached */
	en = bpf_map_lookup_elem(&region_enabled, &region);
	if (!en || !*en)
		return 0;
	/* a function's site: the stack pointer (0 for others), without a branch; the cost
	 * tables of close_set: 2 or 3 for a function's (by its entry's first instruction) */
	sp = PT_REGS_SP(ctx) & -(__u64)FP_COOKIE_IS_FUNC(cookie);
	opt = FP_COOKIE_OPT(cookie) | (__u32)FP_COOKIE_IS_FUNC(cookie) << 1;
	if (FP_COOKIE_IS_CALLS(cookie))
		return on_call(slot, region, opt, ts);
	if (FP_COOKIE_IS_END(cookie))
		return on_end(slot, region, opt, ts, sp);
	return on_begin(slot, region, *en, opt, ts, sp);
}

/* Attached per site (perf-event uprobe), or reached from a site's trampoline. */
SEC("uprobe")
int fp_site(struct pt_regs *ctx)
{
	return on_site(ctx, TS_STORAGE);
}

/* The same, loaded for the multi-uprobe link (expected attach type set by the daemon). */
SEC("uprobe")
int fp_site_multi(struct pt_regs *ctx)
{
	return on_site(ctx, TS_STORAGE);
}

/*
 * Function regions through a uprobe session (Linux 6.13; BPF_TRACE_UPROBE_SESSION, set by
 * the daemon): one program at a function's entry and at its return, one link of the
 * entries per object. The entry's invocation begins the region and returns 0, which asks
 * the kernel for the return's invocation of the same call; an entry that measures
 * nothing (disabled, another object's turn, an old link set) returns 1: no return probe
 * for that call at all. The attach cookie is the entry's; bpf_session_is_return makes it
 * the end.
 */
extern bool bpf_session_is_return(void) __ksym __weak;

SEC("uprobe")
int fp_site_session(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 region = FP_COOKIE_REGION(cookie), slot = FP_COOKIE_SLOT(cookie), *en;
	__u32 opt = FP_COOKIE_OPT(cookie) | 2;
	__u64 sp = PT_REGS_SP(ctx);
	bool ret = bpf_session_is_return();

	/* a return comes only for a call whose entry was measured, even if the link set
	 * changed since (the frame is found by its stack pointer) */
	if ((!ret && FP_COOKIE_GEN(cookie) != link_gen[slot]) || not_our_turn(member_group[slot]))
		return 1;
	if (ret)
		return on_end(slot, region, opt, TS_STORAGE, sp);
	en = bpf_map_lookup_elem(&region_enabled, &region);
	if (!en || !*en)
		return 1;
	if (FP_COOKIE_IS_CALLS(cookie)) {	/* counted: no return probe wanted */
		on_call(slot, region, opt, TS_STORAGE);
		return 1;
	}
	on_begin(slot, region, *en, opt, TS_STORAGE, sp);
	return 0;
}

SEC("uprobe")
int fp_site_map(struct pt_regs *ctx)
{
	return on_site(ctx, TS_MAP);
}

/*
 * Off-CPU time of threads inside regions. Switched out with a region open: note when,
 * and whether still runnable (preempted, or yielded) or sleeping. Switched in: charge
 * the time to the thread's counters. Threads without state, or with no region open,
 * are left as they are. prev's state: the tracepoint's argument where it has one (5.18:
 * read before a concurrent wakeup could change it), else the task's field.
 */
/* The fourth argument is read only where the kernel has it: the barrier keeps the
 * compiler from loading it ahead of the test, so the verifier never sees the read. */
static __always_inline long prev_state(unsigned long long *ctx, struct task_struct *prev)
{
	if (k_switch_state) {
		asm volatile("" ::: "memory");
		return (long)(unsigned int)ctx[3];
	}
	return task_run_state(prev);
}

static __always_inline void on_switch(int ts, bool preempt, struct task_struct *prev,
				      struct task_struct *next, long prev_state)
{
	__u64 now = bpf_ktime_get_ns();
	struct fp_tstate *st;

	st = task_state_of(ts, prev);
	if (st) {
		st->switches++;	/* the thread's next probe finds caches cold */
		if (st->switched_at)
			switch_in_unseen(st, task_ran(prev));
	}
	if (st && st->depth) {
		st->switched_at = now;
		st->switched_ran = task_ran(prev);
		st->switched_preempted = preempt || prev_state == 0; /* TASK_RUNNING */
	}
	st = task_state_of(ts, next);
	if (st && st->switched_at) {
		if (st->switched_preempted) {
			st->off_pre += now - st->switched_at;
			st->n_pre++;
		} else {
			st->off_blk += now - st->switched_at;
		}
		st->switched_at = 0;
	}
}

/* In-process threads: the interval off CPU, to the path entry open at the switch-out. */
static __always_inline void ip_charge(struct fp_ip_thread *it, __u64 d)
{
	struct fp_ip_off_key k = { it->block, it->path, it->tgid };
	struct fp_ip_off zero = {}, *o = bpf_map_lookup_elem(&ip_off, &k);

	if (!o) {
		bpf_map_update_elem(&ip_off, &k, &zero, BPF_NOEXIST);
		o = bpf_map_lookup_elem(&ip_off, &k);
		if (!o)
			return;	/* full: not charged */
	}
	if (it->preempted) {
		__sync_fetch_and_add(&o->pre_ns, d);
		__sync_fetch_and_add(&o->n_pre, 1);
	} else {
		__sync_fetch_and_add(&o->blk_ns, d);
	}
}

/* prev is the current task: its block is read in its own memory (resident: the thread
 * wrote it last; a read that would fault fails and the interval is not charged). */
static __always_inline void ip_switch(bool preempt, struct task_struct *prev,
				      struct task_struct *next, long prev_state)
{
	struct {
		__u32 depth, overflow, last_kind, cur;
	} s;
	__u64 now = bpf_ktime_get_ns();
	struct fp_ip_thread *it;
	__u32 tid = prev->pid;

	it = bpf_map_lookup_elem(&ip_threads, &tid);
	if (it && it->switched_at) {	/* running, so its switch-in was not seen */
		ip_charge(it, off_since(it->switched_at, it->ran, now, task_ran(prev)));
		it->switched_at = 0;
	}
	if (it && !bpf_probe_read_user(&s, sizeof(s), (void *)(it->block + FP_IPT_STATE_OFF)) &&
	    (s.depth || s.overflow)) {
		it->switched_at = now;
		it->ran = task_ran(prev);
		it->path = s.cur;
		it->preempted = preempt || prev_state == 0;	/* TASK_RUNNING */
	}
	tid = next->pid;
	it = bpf_map_lookup_elem(&ip_threads, &tid);
	if (it && it->switched_at) {
		ip_charge(it, now - it->switched_at);
		it->switched_at = 0;
	}
}

SEC("tp_btf/sched_switch")
int BPF_PROG(fp_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	long state = prev_state(ctx, prev);

	on_switch(TS_STORAGE, preempt, prev, next, state);
	if (ip_active)
		ip_switch(preempt, prev, next, state);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(fp_switch_map, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	long state = prev_state(ctx, prev);

	on_switch(TS_MAP, preempt, prev, next, state);
	if (ip_active)
		ip_switch(preempt, prev, next, state);
	return 0;
}

/* A sleeping thread inside a region is woken: from here on it waits runnable. */
static __always_inline void on_wakeup(int ts, struct task_struct *p)
{
	struct fp_tstate *st = task_state_of(ts, p);
	__u64 now;

	if (!st || !st->switched_at || st->switched_preempted)
		return;
	now = bpf_ktime_get_ns();
	st->off_blk += now - st->switched_at;
	st->switched_at = now;
	st->switched_preempted = 1;
}

static __always_inline void ip_wakeup(struct task_struct *p)
{
	__u32 tid = p->pid;
	struct fp_ip_thread *it = bpf_map_lookup_elem(&ip_threads, &tid);
	__u64 now;

	if (!it || !it->switched_at || it->preempted)
		return;
	now = bpf_ktime_get_ns();
	ip_charge(it, now - it->switched_at);	/* the sleep, blocked */
	it->switched_at = now;
	it->preempted = 1;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(fp_wakeup, struct task_struct *p)
{
	on_wakeup(TS_STORAGE, p);
	if (ip_active)
		ip_wakeup(p);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(fp_wakeup_map, struct task_struct *p)
{
	on_wakeup(TS_MAP, p);
	if (ip_active)
		ip_wakeup(p);
	return 0;
}

/* A thread that exits with regions open: counted, never attributed. TS_MAP: its entry
 * goes (task storage goes with the task). */
static __always_inline void on_exit(int ts)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct fp_tstate *st;

	if (ts == TS_STORAGE)
		st = bpf_task_storage_get(&tstate, bpf_get_current_task_btf(), 0, 0);
	else
		st = bpf_map_lookup_elem(&tstate_map, &tid);
	if (!st)
		return;
	/* frames of disabled regions are not "inside"; a former occupant's are nobody's */
	if (st->owner != owner[SLOT(st->slot)])
		st->depth = 0;
	else if (st->epoch != disable_epoch[SLOT(st->slot)]) {
		apply_disables(st, ts);
		st->epoch = disable_epoch[SLOT(st->slot)];
	}
	if (st->depth)
		count(st->slot, FP_AN_EXIT_INSIDE, st->depth);
	if (member_group[SLOT(st->slot)])	/* a tid is used again */
		bpf_map_delete_elem(&held, &tid);
	if (ts == TS_MAP)
		bpf_map_delete_elem(&tstate_map, &tid);
}

static __always_inline void ip_exit(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	bpf_map_delete_elem(&ip_threads, &tid);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(fp_exit, struct task_struct *p)
{
	on_exit(TS_STORAGE);
	if (ip_active)
		ip_exit();
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(fp_exit_map, struct task_struct *p)
{
	on_exit(TS_MAP);
	if (ip_active)
		ip_exit();
	return 0;
}

/* featprof:ip__thread in the in-process runtime: the calling thread took the block in
 * its first argument (%rdi). */
SEC("uprobe")
int fp_ip_thread(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct fp_ip_thread v = { .block = PT_REGS_PARM1(ctx), .tgid = (__u32)(id >> 32) };

	bpf_map_update_elem(&ip_threads, &tid, &v, BPF_ANY);
	if (!bpf_map_lookup_elem(&ip_arena_taken, &v.tgid)) {
		struct fp_watch_event *e = bpf_ringbuf_reserve(&watch_events, sizeof(*e), 0);

		if (e) {
			e->kind = FP_WATCH_ARENA;
			e->tgid = v.tgid;
			e->other = 0;
			e->pad = 0;
			e->ts = bpf_ktime_get_ns();
			bpf_ringbuf_submit(e, 0);
		}
	}
	return 0;
}
