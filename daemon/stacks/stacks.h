/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Call stacks (daemon/stacks/): a sampling session's user stacks named by their functions
 * and objects (stacks.c) and tallied per region and feature (stacks_report.c), the DWARF
 * unwinder of stack copies (dwarf.c, elfutils' libdwfl), the functions inlined at an
 * address (inline.c), and code a JIT generated named from its perf map (jit.c). Knows no
 * target: it is handed a
 * process's pid, its objects (common/notes.h) and the sampler's maps.
 */
#ifndef FP_STACKS_H
#define FP_STACKS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"

/*
 * sample --stacks --unwind dwarf: the copies of each sample's user registers and stack
 * top (bpf/sample.bpf.c stack_copies) unwound by the objects' call frame information
 * (daemon/stacks/dwarf.c, elfutils' libdwfl).
 */
struct fp_dwarf;
struct fp_sample_key;

/* One unwound sample: its key (the open regions) and return addresses, innermost
 * first (ips[0] the interrupted instruction); truncated: the unwinding stopped before
 * the thread's first frame (the copy ended, no CFI for an address). */
typedef void (*fp_dwarf_fn)(void *arg, const struct fp_sample_key *key, const uint64_t *ips,
			    int n, int truncated);

/* An unwinder of process pid's copies from the ring buffer map at ring_fd. NULL (e
 * filled) when libdwfl cannot report the process. */
struct fp_dwarf *fp_dwarf__new(pid_t pid, int ring_fd, struct fp_err *e);
/* Unwinds the copies waiting, calling fn for each (NULL: drops them). Their count, or
 * -errno. */
int fp_dwarf__drain(struct fp_dwarf *d, fp_dwarf_fn fn, void *arg);
/* Its work so far: copies unwound, those whose unwinding stopped early, the CPU time
 * spent (ns), the frames found, and the copies cut short by the sampler's limit. */
void fp_dwarf__counts(const struct fp_dwarf *d, uint64_t *copies, uint64_t *truncated,
		      uint64_t *cpu_ns, uint64_t *frames, uint64_t *cut);
/* How many FP_STACK_CHUNKs of stack the sampler should copy from now on (what the
 * unwinds have used, doubled; all of them after a copy was cut short). */
unsigned fp_dwarf__chunks(const struct fp_dwarf *d);
/* The copies unwound by the CFI's rules kept by address (the rest by libdwfl); with
 * FEATPROF_DWARF_VERIFY=1 in featprofd's environment (verified), those whose frames
 * libdwfl found otherwise. */
void fp_dwarf__rules(const struct fp_dwarf *d, uint64_t *fast, uint64_t *mismatches,
		     bool *verified);
void fp_dwarf__free(struct fp_dwarf *d);

/*
 * sample --stacks: the user call stacks of a sampling session, named (daemon/stacks/
 * stacks.c). A stack is read from the sampler's stack map once, the first time
 * its id is seen, while the process can still be read; its frames are interned
 * functions, each of an object (the file mapped there).
 */
struct fp_proc;
struct fp_stacks;
struct json_object;

struct fp_stack {
	int n;			/* frames, outermost first */
	int truncated;		/* as deep as the stack map keeps: the walk may go on */
	int *fn;		/* function indices (func_json) */
};

/* One distinct sample key of a session, its regions named (daemon/sample/sample_report.c). */
struct fp_sampled {
	uint64_t c;		/* samples */
	int nreg;		/* regions open, outermost first (no more than stored) */
	int reg[16];
	int bad;		/* an id named no region of the catalog */
	uint64_t fmask;		/* the features of its regions */
	int32_t ustack;		/* its stack id, or FP_USTACK_* */
	uint32_t tid;		/* the thread sampled */
};

/* A session's stacks: of a stack map with max_id entries (the kernel's frame-pointer
 * walk), or, max_id 0, those unwound in featprofd (fp_stacks__add). */
struct fp_stacks *fp_stacks__new(int max_id);
void fp_stacks__free(struct fp_stacks *s);
/*
 * Stack id of the stack map open at map_fd, named with the process's mappings and the
 * objects proc holds (their symbols): read on first use, then kept. NULL when the map has
 * no such stack or memory ran out.
 */
const struct fp_stack *fp_stacks__get(struct fp_stacks *s, int map_fd, int32_t id, pid_t pid,
				      struct fp_proc *proc);
/* A compiler's clones of a function (.constprop.N, .isra.N, .part.N, .cold) named apart
 * from it ("f [clone .constprop.0]", as c++filt writes them) instead of folded into it
 * (the default), from now on. */
void fp_stacks__split_clones(struct fp_stacks *s, bool on);
/* Reads pid's mappings now (a session's start): a process that exits before its first
 * stack is named (featprof run of a short program) is named by them. A mapping seen
 * later is read when an address falls outside these, while the process lives. False
 * when none could be read (the last ones kept). */
bool fp_stacks__read_maps(struct fp_stacks *s, pid_t pid);
struct fp_sample_key;
/* Unwound here: ips (innermost first, n) named and interned by their functions: the
 * stack's id, or FP_USTACK_LOST (no memory). */
int32_t fp_stacks__add(struct fp_stacks *s, pid_t pid, struct fp_proc *proc,
		       const uint64_t *ips, int n, int truncated);
/* Thread tid of process pid by its name (its comm, read once, while it lives: "" when
 * it was gone before its first sample was named); NULL: no memory. */
const char *fp_stacks__thread(struct fp_stacks *s, pid_t pid, uint32_t tid);
/* One sample of key's regions with stack id, counted here. 0 or -ENOMEM. */
int fp_stacks__count(struct fp_stacks *s, const struct fp_sample_key *key, int32_t id);
/* The pairs counted: how many, and pair i (its key, ustack the stack's id; *c its
 * samples). */
int fp_stacks__naggs(const struct fp_stacks *s);
const struct fp_sample_key *fp_stacks__agg(const struct fp_stacks *s, int i, uint64_t *c);
struct fp_catalog;
/*
 * The stacks of a session's n keys v into its report o (fp_sample_report's: "regions" in
 * the catalog's order, "features", "base"): each gets "functions", its top functions by
 * total samples ({name, object, self_samples, total_samples, self_share, total_share,
 * self_stderr, total_stderr}, shares of its own samples); o gets "functions" of every
 * sample, in regions or not, and "stacks": the functions named, the objects, and every
 * distinct (regions, stack) with its samples.
 */
void fp_stacks__report(struct fp_stacks *s, int map_fd, pid_t pid, struct fp_proc *proc,
		       const struct fp_catalog *cat, const struct fp_sampled *v, int n,
		       struct json_object *o);

#endif
