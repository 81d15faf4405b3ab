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
 * when it was enabled ("end without begin"). Neither is attributed to any region.
 *
 * Each frame carries the OR of the feature masks of itself and all frames below it, so
 * the set of features open on the thread is the top frame's mask. Every event first
 * closes the interval since the thread's previous event and adds it to that set.
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
 * Timestamps: a begin takes its time as late and an end as early as it can, so the
 * probes' own cost inside a region is as small as it can be; the rest is calibrated
 * and subtracted in user space.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "featprof.h"

char LICENSE[] SEC("license") = "GPL";

struct frame {
	__u64 start;
	__u64 child_ns;		/* inclusive time of completed direct children */
	__u64 mask;		/* features open at this depth (cumulative) */
	__u32 region;
	__u32 nchild;
	__u32 ndesc;
	__u32 pad;
};

struct tstate {
	__u32 depth;
	__u32 overflow;		/* begins not pushed because the stack was full */
	__u64 epoch;
	__u64 last_ts;
	struct frame f[FP_MAX_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct tstate);
} tstate SEC(".maps");

/* Sized from user space before load (the number of regions of the target). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fp_region_info);
} region_info SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} region_enabled SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fp_region_stats);
} region_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct fp_fset_val);
} fset SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FP_AN_MAX);
	__type(key, __u32);
	__type(value, __u64);
} anomalies SEC(".maps");

__u64 disable_epoch = 0;
__u32 link_gen = 0;	/* sites of the other generation are a link set being replaced */

static __always_inline void count(__u32 what, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&anomalies, &what);

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

static __always_inline void account_fset(struct tstate *st, __u64 now)
{
	struct fp_fset_val *v, zero = {};
	__u32 d = st->depth;
	__u64 mask;

	if (d == 0 || d > FP_MAX_DEPTH)
		return;
	mask = st->f[(d - 1) & (FP_MAX_DEPTH - 1)].mask;
	v = bpf_map_lookup_elem(&fset, &mask);
	if (!v) {
		bpf_map_update_elem(&fset, &mask, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&fset, &mask);
		if (!v)
			return;
	}
	v->ns += now - st->last_ts;
	v->events++;
}

struct compact_ctx {
	struct tstate *st;
	__u64 mask;
	__u32 out, dropped;
};

/* One frame of apply_disables: keep it (moved down, mask rebuilt) or drop it. */
static long compact_one(__u64 i, void *data)
{
	struct compact_ctx *c = data;
	struct tstate *st = c->st;
	struct fp_region_info *info;
	__u32 *en, r, k = (__u32)i & (FP_MAX_DEPTH - 1), o = c->out & (FP_MAX_DEPTH - 1);

	if (i >= st->depth)
		return 1;
	r = st->f[k].region;
	en = bpf_map_lookup_elem(&region_enabled, &r);
	if (!en || !*en) {
		c->dropped++;
		return 0;
	}
	info = bpf_map_lookup_elem(&region_info, &r);
	c->mask |= info ? info->mask : 0;
	st->f[o] = st->f[k];
	st->f[o].mask = c->mask;
	c->out++;
	return 0;
}

/*
 * Drops frames of regions disabled since this thread last looked and rebuilds the
 * cumulative masks. Runs once per thread per disable, in bpf_loop so that the verifier
 * checks one iteration instead of every path through 32.
 */
static __always_inline void apply_disables(struct tstate *st)
{
	struct compact_ctx c = { .st = st };

	bpf_loop(FP_MAX_DEPTH, compact_one, &c, 0);
	st->depth = c.out;
	if (c.dropped)
		count(FP_AN_DISABLED_OPEN, c.dropped);
}

static __always_inline struct tstate *get_state(__u64 now)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct tstate *st;
	__u64 epoch = disable_epoch;

	st = bpf_task_storage_get(&tstate, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st) {
		count(FP_AN_NO_STATE, 1);
		return NULL;
	}
	if (st->epoch != epoch) {
		account_fset(st, now);
		st->last_ts = now;
		apply_disables(st);
		st->epoch = epoch;
	}
	return st;
}

static __always_inline int on_begin(__u32 region)
{
	struct fp_region_info *info = bpf_map_lookup_elem(&region_info, &region);
	__u64 now = bpf_ktime_get_ns(), mask;
	struct tstate *st;
	struct frame *fr;
	__u32 d, i;

	st = get_state(now);
	if (!st || !info)
		return 0;
	account_fset(st, now);
	d = st->depth;
	if (d >= FP_MAX_DEPTH) {
		st->overflow++;
		count(FP_AN_OVERFLOW, 1);
		st->last_ts = now;
		return 0;
	}
	for (i = 0; i < FP_MAX_DEPTH; i++) {
		if (i >= d)
			break;
		if (st->f[i].region == region) {
			struct fp_region_stats *rs = bpf_map_lookup_elem(&region_stats, &region);

			if (rs)
				rs->recursion++;
			break;
		}
	}
	mask = info->mask;
	if (d > 0)
		mask |= st->f[(d - 1) & (FP_MAX_DEPTH - 1)].mask;
	fr = &st->f[d & (FP_MAX_DEPTH - 1)];
	fr->region = region;
	fr->child_ns = 0;
	fr->nchild = 0;
	fr->ndesc = 0;
	fr->mask = mask;
	st->depth = d + 1;
	now = bpf_ktime_get_ns();
	fr->start = now;
	st->last_ts = now;
	return 0;
}

static __always_inline int on_end(__u32 region)
{
	__u64 now = bpf_ktime_get_ns(), incl, excl;
	struct fp_region_stats *rs;
	struct tstate *st;
	struct frame *fr;
	__u32 d, i, found = FP_MAX_DEPTH;

	st = get_state(now);
	if (!st)
		return 0;
	account_fset(st, now);
	st->last_ts = now;
	if (st->overflow) {	/* the innermost begins were not pushed: this ends one */
		st->overflow--;
		return 0;
	}
	d = st->depth;
	for (i = 0; i < FP_MAX_DEPTH; i++) {
		__u32 k = d - 1 - i;

		if (i >= d)
			break;
		if (st->f[k & (FP_MAX_DEPTH - 1)].region == region) {
			found = k;
			break;
		}
	}
	if (found >= FP_MAX_DEPTH) {
		count(FP_AN_END_WITHOUT_BEGIN, 1);
		return 0;
	}
	if (d - 1 - found)
		count(FP_AN_ABANDONED, d - 1 - found);
	barrier_var(found);	/* keep the mask: the verifier needs the bound */
	found &= FP_MAX_DEPTH - 1;
	fr = &st->f[found];
	incl = now - fr->start;
	excl = incl > fr->child_ns ? incl - fr->child_ns : 0;
	st->depth = found;
	if (found > 0) {
		__u32 p = found - 1;

		barrier_var(p);
		struct frame *parent = &st->f[p & (FP_MAX_DEPTH - 1)];

		parent->child_ns += incl;
		parent->nchild++;
		parent->ndesc += 1 + fr->ndesc;
	}
	rs = bpf_map_lookup_elem(&region_stats, &region);
	if (!rs)
		return 0;
	if (!rs->count || incl < rs->min_ns)
		rs->min_ns = incl;
	if (incl > rs->max_ns)
		rs->max_ns = incl;
	rs->count++;
	rs->incl_ns += incl;
	rs->excl_ns += excl;
	rs->nchild += fr->nchild;
	rs->ndesc += fr->ndesc;
	i = log2_u64(incl);
	rs->hist[i < FP_HIST_BUCKETS ? i : FP_HIST_BUCKETS - 1]++;
	return 0;
}

static __always_inline int on_site(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 region = (__u32)(cookie >> 2), *en;

	if (((cookie >> 1) & 1) != link_gen)
		return 0;
	/* a region being disabled: its sites may fire until they are detached */
	en = bpf_map_lookup_elem(&region_enabled, &region);
	if (!en || !*en)
		return 0;
	if (cookie & 1)
		return on_end(region);
	return on_begin(region);
}

/* Attached per site (perf-event uprobe). */
SEC("uprobe")
int fp_site(struct pt_regs *ctx)
{
	return on_site(ctx);
}

/* The same, loaded for the multi-uprobe link (expected attach type set by the daemon). */
SEC("uprobe")
int fp_site_multi(struct pt_regs *ctx)
{
	return on_site(ctx);
}

/* A thread that exits with regions open: counted, never attributed. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(fp_exit, struct task_struct *p)
{
	struct tstate *st = bpf_task_storage_get(&tstate, bpf_get_current_task_btf(), 0, 0);

	if (!st)
		return 0;
	if (st->epoch != disable_epoch) {	/* frames of disabled regions are not "inside" */
		apply_disables(st);
		st->epoch = disable_epoch;
	}
	if (st->depth)
		count(FP_AN_EXIT_INSIDE, st->depth);
	return 0;
}
