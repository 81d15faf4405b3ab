/* SPDX-License-Identifier: GPL-2.0 */
/* The stacks module's private header (daemon/stacks/): what its files call of each other. */
#ifndef FP_STACKS_IMPL_H
#define FP_STACKS_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include <bpf/bpf.h>

#include "bpf/featprof_bpf.h"
#include "stacks.h"

/*
 * sample --stacks: the functions inlined at an address of an object, from its DWARF
 * (daemon/stacks/inline.c), so that a frame shows the calls the compiler folded
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

/*
 * Names of code a JIT generated, from its perf map (/tmp/perf-PID.map in the process's
 * mount namespace; daemon/stacks/jit.c).
 */
struct fp_jitmap;

/* pid's map, read on first need; NULL: no memory. */
struct fp_jitmap *fp_jitmap__new(pid_t pid);
void fp_jitmap__free(struct fp_jitmap *m);
/* The name of the code at addr (valid while m lives), reading what the file gained since
 * the last read when it has none; NULL: the map does not name it. */
const char *fp_jitmap__at(struct fp_jitmap *m, uint64_t addr);
/* The map's path as the process sees it. */
const char *fp_jitmap__path(const struct fp_jitmap *m);

/* --- the session's tables (stacks.c names into them, stacks_report.c reports them) --- */
struct fp_inlines;

struct fn {
	char *name;		/* as people read it (common/demangle.c) */
	char *symbol;		/* the symbol, where that differs (mangled, a clone's) */
	int obj;		/* index in objs */
	int inlined;		/* a call the compiler inlined (its DWARF says so) */
};

struct obj {
	char *path;
	char build_id[41];
	int source;		/* where its symbols came from (enum fp_sym_source) */
	char *debug_file;	/* the separate debug file they came from, else NULL */
	uint64_t start, end, off;	/* its first executable mapping */
	uint64_t dev, ino;
	struct fp_inlines *inl;	/* its DWARF, opened on first use; NULL: none */
	bool inl_tried;
	/* its symbols read here, where the process's objects (read at the attach) lack
	 * it: a library mapped after (a process sampled at its very start) */
	struct fp_symbols *syms;
	bool syms_tried;
};

/* One (open regions, stack) seen, with its samples: the stacks unwound in featprofd
 * (FP_UNWIND_DWARF) are counted here, not in the kernel. */
struct agg {
	struct fp_sample_key key;	/* ustack: the stack's id here */
	uint64_t c;
};

struct fp_stacks {
	struct fp_stack **by_id;	/* per stack id: named, or NULL */
	int max_id;			/* ids the stack map gives, or (user) those so far */
	bool user;			/* the ids are this table's (unwound here) */
	int cap_id;
	int *stack_hash;		/* user: ids by their frames, id + 1, 0 empty */
	int nstack_hash;
	struct agg *aggs;
	int naggs, cap_aggs;
	int *agg_hash;			/* aggs by key, index + 1 */
	int nagg_hash;
	struct fn *fns;
	int nfns, capfns;
	int *hash;			/* open addressing over fns: index + 1, 0 empty */
	int nhash;			/* a power of two, at least twice nfns */
	struct obj *objs;
	int nobjs;
	struct fp_vma *vma;
	int nvma;
	bool vma_read;			/* this round read the maps already */
	struct fp_jitmap *jit;		/* the process's perf map (made on first need) */
	bool split_clones;		/* a compiler's clones named apart from their function */
	int jit_obj;			/* the [jit] object's index + 1, 0 none yet */
	struct thr { uint32_t tid; char comm[16]; } *thr;	/* the threads sampled, named */
	int nthr;
	/* user: the addresses of copies unwound before, by hash, and their stack ids */
	struct ips_entry {
		uint64_t *ips;		/* NULL: an empty slot */
		unsigned h;
		int n, truncated;
		int32_t id;
	} *ips;
	int nips, nipsu;		/* slots (a power of two), used */
};

/* The function (name, obj, inlined or not), interned: its index, or -1 (no memory). */
int fp_stacks__intern(struct fp_stacks *s, const char *name, int obj, int inlined);

/* A path's file name. */
static inline const char *fp_stacks_base_name(const char *p)
{
	const char *b = strrchr(p, '/');

	return b ? b + 1 : p;
}

#endif
