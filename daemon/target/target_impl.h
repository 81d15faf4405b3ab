/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The target module's one private header (daemon/target/): the target's fields, and
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

/* --- sampler.c --- */
/* The sampler thread of featprof sample --remote: daemon/target/sampler.c. */
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

/* --- sample_inline.c --- */
/*
 * sample --stacks: the functions inlined at an address of an object, from its DWARF
 * (daemon/target/sample_inline.c), so that a frame shows the calls the compiler folded
 * into it, as perf report and gdb do.
 */
/* the deepest chain of inlined calls kept at one address */
#define FP_INLINE_MAX 8

struct fp_inlines;

/* The DWARF of the ELF file at path, else of debug_file (a separate debug file; may be
 * NULL): NULL when neither has .debug_info (or memory ran out). */
struct fp_inlines *fp_inlines__open(const char *path, const char *debug_file);
void fp_inlines__free(struct fp_inlines *in);
/*
 * The functions inlined at link-time address addr, innermost first, at most max of them:
 * their names (valid while in lives), how many. 0 where the compiler inlined nothing
 * there or the DWARF does not say.
 */
int fp_inlines__at(struct fp_inlines *in, uint64_t addr, const char **names, int max);

/* --- sample_dwarf.c --- */
/*
 * sample --stacks --unwind dwarf: the copies of each sample's user registers and stack
 * top (bpf/sample.bpf.c stack_copies) unwound by the objects' call frame information
 * (daemon/target/sample_dwarf.c, elfutils' libdwfl).
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
 * spent (ns), and the frames found. */
void fp_dwarf__counts(const struct fp_dwarf *d, uint64_t *copies, uint64_t *truncated,
		      uint64_t *cpu_ns, uint64_t *frames);
void fp_dwarf__free(struct fp_dwarf *d);

/* --- sample_stacks.c --- */
/*
 * sample --stacks: the user call stacks of a sampling session, named (daemon/target/
 * sample_stacks.c). A stack is read from the sampler's stack map once, the first time
 * its id is seen, while the process can still be read; its frames are interned
 * functions, each of an object (the file mapped there).
 */
struct fp_proc;
struct fp_stacks;
struct json_object;

struct fp_stack {
	int n;			/* frames, outermost first */
	int truncated;		/* as deep as the stack map keeps: the walk may go on */
	int *fn;		/* function indices (fp_stacks__func_json) */
};

/* One distinct sample key of a session, its regions named (daemon/target/sample.c). */
struct fp_sampled {
	uint64_t c;		/* samples */
	int nreg;		/* regions open, outermost first (no more than stored) */
	int reg[16];
	int bad;		/* an id named no region of the catalog */
	uint64_t fmask;		/* the features of its regions */
	int32_t ustack;		/* its stack id, or FP_USTACK_* */
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
struct fp_sample_key;
/* Unwound here: ips (innermost first, n) named and interned by their functions: the
 * stack's id, or FP_USTACK_LOST (no memory). */
int32_t fp_stacks__add(struct fp_stacks *s, pid_t pid, struct fp_proc *proc,
		       const uint64_t *ips, int n, int truncated);
/* One sample of key's regions with stack id, counted here. 0 or -ENOMEM. */
int fp_stacks__count(struct fp_stacks *s, const struct fp_sample_key *key, int32_t id);
/* The pairs counted: how many, and pair i (its key, ustack the stack's id; *c its
 * samples). */
int fp_stacks__naggs(const struct fp_stacks *s);
const struct fp_sample_key *fp_stacks__agg(const struct fp_stacks *s, int i, uint64_t *c);
int fp_stacks__nfuncs(const struct fp_stacks *s);
/* Function i: {"name", "object"}. */
struct json_object *fp_stacks__func_json(const struct fp_stacks *s, int i);
/* The objects frames fell in: [{"name", "path", "build_id", "start", "end", "offset"}],
 * in the order functions' "object_index" refers to them. */
struct json_object *fp_stacks__objects_json(const struct fp_stacks *s);
int fp_stacks__func_object(const struct fp_stacks *s, int i);
struct fp_catalog;
/*
 * The stacks of a session's n keys v into its report o (fp_sample_report's: "regions" in
 * the catalog's order, "features", "base"): each gets "functions", its top functions by
 * total samples ({name, object, self_samples, total_samples, self_share, total_share,
 * self_stderr, total_stderr}, shares of its own samples); o gets "stacks": the functions
 * named, the objects, and every distinct (regions, stack) with its samples.
 */
void fp_stacks__report(struct fp_stacks *s, int map_fd, pid_t pid, struct fp_proc *proc,
		       const struct fp_catalog *cat, const struct fp_sampled *v, int n,
		       struct json_object *o);

/* --- sample_elf.c --- */
/* What sampling reads from the target's files (daemon/target/sample_elf.c). */
struct fp_target;

/* The executable of pid keeps the sampler's stack (its TLS note, this ABI); its gate's
 * site and semaphore offsets (0: not gated). 0 or -errno (e filled; -ENOENT: it keeps
 * none, no TLS note). */
int fp_sample_tls_abi(pid_t pid, uint64_t *gate_off, uint64_t *sem_off, struct fp_err *e);
/* featprof_tls's offset from the thread pointer in the executable of pid. 0 or -errno. */
int fp_sample_tls_offset(pid_t pid, int64_t *off, struct fp_err *e);
/* Every library of t with a stack binds it to the executable's. 0 or -EOPNOTSUPP. */
int fp_sample_one_stack(const struct fp_target *t, struct fp_err *e);
/* t's site addresses into its sampling object's sample_sites. */
void fp_sample_probe_sites(struct fp_target *t);

/* --- target_links.c --- */
/* Between daemon/target/target.c and daemon/target/target_links.c only: a target's attachments. */
struct fp_target;

/* The target's link set, for its capacity of regions (trampolines: one per region,
 * point and end where the kernel has no attach cookie). 0 or -ENOMEM. */
int fp_links__new(struct fp_target *t, bool trampolines);
/* Releases and frees it. */
void fp_links__free(struct fp_target *t);
/* Attaches (on) or detaches the sites of the regions with sel[r] set, journaled; force:
 * rebuild the link set even when no region changes (a region gained sites). 0 or -errno
 * (e filled); on error nothing changed. */
int fp_links__set(struct fp_target *t, const uint8_t *sel, int on, int force, struct fp_err *e);
/* Closes every link and trampoline, journaled; attached_sites 0. */
void fp_links__release(struct fp_target *t);

/* --- sample.c: a target's sampling --- */
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
