/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A target's sampling (featprof sample): its object, its session and the figures it
 * keeps once stopped. Made at the target's first session and freed with the target,
 * both by sample.c; read by sample_report.c and sample_elf.c.
 */
#ifndef FP_SAMPLE_IMPL_H
#define FP_SAMPLE_IMPL_H

#include <stdbool.h>
#include <stdint.h>

struct sample_bpf;
struct bpf_link;
struct fp_sampler_entry;
struct fp_stacks;
struct fp_dwarf;
struct json_object;

struct fp_sampling {
	struct sample_bpf *skel;	/* its object (bpf/sample.bpf.c), NULL: none */
	int skel_unwind;		/* the object was made for that unwind */
	int skel_src;			/* and for that source */
	struct bpf_link **links;	/* the session's links: one per thread, or --remote's
					 * iterator and switch hook */
	int nlinks;
	int hz;
	bool remote;			/* --remote: read by the sampler thread */
	struct fp_sampler_entry *sampler;	/* its ticks (--remote, while sampling) */
	uint64_t ticks, missed;		/* --remote: ticks taken, passed over */
	int64_t tls_off;
	int src;			/* where the open regions are read: FP_SRC_* */
	int unwind;			/* --stacks: how each sample's user call stack is
					 * taken (FP_UNWIND_*), FP_UNWIND_NONE: not */
	struct fp_stacks *stacks;	/* --stacks: the session's named stacks */
	struct fp_dwarf *dwarf;		/* FP_UNWIND_DWARF: the session's unwinder */
	int gate;		/* FEATPROF_SAMPLING_GATED: the uprobe raising the gate, 0: none */
	bool gated;
	uint64_t start_ns, stop_ns;
	struct fp_sample_id {
		uint64_t id;
		int region;
	} *ids;				/* ids named so far */
	int nids;
	struct json_object *last;	/* figures kept once stopped */
};

#endif
