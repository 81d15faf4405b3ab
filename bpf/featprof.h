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

/*
 * The attach cookie of a site: which region, begin or end, and the generation of the
 * link set it belongs to (see daemon/target.c). No map lookup needed.
 */
#define FP_COOKIE(region, is_end, gen)                                                     \
	(((__u64)(region) << 2) | ((__u64)((gen) & 1) << 1) | ((is_end) ? 1 : 0))

struct fp_region_info {
	__u64 mask;		/* features of the region, bit i = feature i of the target */
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
	__u64 hist[FP_HIST_BUCKETS];	/* inclusive ns, bucket = floor(log2(ns)) */
};

struct fp_fset_val {		/* per feature set (mask), per CPU */
	__u64 ns;		/* time with exactly this set of features open */
	__u64 events;		/* boundary events that closed an interval of this set */
};

enum fp_anomaly {
	FP_AN_END_WITHOUT_BEGIN,	/* e.g. enabled while the thread was inside */
	FP_AN_ABANDONED,		/* begun, never ended: popped by an outer end */
	FP_AN_OVERFLOW,			/* begin beyond FP_MAX_DEPTH: not measured */
	FP_AN_EXIT_INSIDE,		/* a thread exited with regions open */
	FP_AN_DISABLED_OPEN,		/* region disabled while a thread was inside */
	FP_AN_NO_STATE,			/* per-thread state could not be allocated */
	FP_AN_MAX,
};

#endif
