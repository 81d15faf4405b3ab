/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sampling module's private header (daemon/sample/): its state per target, the
 * sampler thread of --remote (sampler.c) and what it reads from a target's files
 * (sample_elf.c). Other modules see sample.h.
 */
#ifndef FP_SAMPLE_IMPL_H
#define FP_SAMPLE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/featprof_bpf.h"
#include "sample.h"

/* t's sampling state (its extension, made by sample.c), NULL: never sampled. */
static inline struct fp_sampling *fp_sample_state(const struct fp_target *t)
{
	return fp_target__ext(t, FP_EXT_SAMPLE);
}

/* The sampler thread of featprof sample --remote: daemon/sample/sampler.c. */
struct fp_sampler_entry;

/* The sampler thread's tid (started on first use), 0 when it cannot be started. */
pid_t fp_sampler_tid(void);
/* Whether the sampler thread runs SCHED_FIFO (needs CAP_SYS_NICE). */
int fp_sampler_realtime(void);
/* Runs the task iterator of link_fd (dup'ed) at hz on average; its program marks in
 * cpus[4] the CPUs where it found a sampled thread running. NULL and errno on failure. */
struct fp_sampler_entry *fp_sampler_add(int link_fd, volatile uint64_t *cpus, int hz);
/* Ticks taken so far, and ticks passed over because the sampler fell behind. */
void fp_sampler_counts(struct fp_sampler_entry *e, uint64_t *ticks, uint64_t *missed);
/* No tick of e runs after this returns; e is freed. NULL: nothing. */
void fp_sampler_remove(struct fp_sampler_entry *e);

/* What sampling reads from the target's files (daemon/sample/sample_elf.c). */
struct fp_target;

/* The executable of pid keeps the sampler's stack (its TLS note, this ABI); its gate's
 * site and semaphore offsets (0: not gated). 0 or -errno (e filled; -ENOENT: it keeps
 * none, no TLS note). */
int fp_sample_tls_abi(pid_t pid, uint64_t *gate_off, uint64_t *sem_off, struct fp_err *e);
/* featprof_tls's offset from the thread pointer in the executable of pid. 0 or -errno. */
int fp_sample_tls_offset(pid_t pid, int64_t *off, struct fp_err *e);
/* The libraries of t that keep region stacks of their own (not bound to the executable's,
 * which it keeps where exe), into libs (FP_SAMPLE_LIBS at most): how many, or -errno. */
struct fp_tls_lib;
int fp_sample_lib_stacks(const struct fp_target *t, bool exe, struct fp_tls_lib *libs,
			 struct fp_err *e);
/* t's site addresses into its sampling object's sample_sites. */
void fp_sample_probe_sites(struct fp_target *t);

/*
 * A target's sampling (featprof sample): its object, its session and the figures it
 * keeps once stopped. Made at the target's first session and freed with the target,
 * both by sample.c; read by sample_report.c and sample_elf.c.
 */
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
	bool exe_stack;			/* FP_SRC_TLS: the executable keeps a stack */
	struct fp_tls_lib libs[FP_SAMPLE_LIBS];	/* and the libraries that keep their own */
	int nlibs;
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
