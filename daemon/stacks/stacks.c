// SPDX-License-Identifier: GPL-2.0
/*
 * sample --stacks: naming the user call stacks the sampler keeps (bpf/sample.bpf.c
 * ustacks: the kernel's frame-pointer walk, innermost first, zero after the last frame).
 *
 * An address is named by the mapping it falls in (/proc/PID/maps, read again when an
 * address falls outside every mapping known) and, where the mapped file is one of the
 * process's objects (common/proc.c: every executable file mapping), by the function of
 * its symbols (common/symbols.c: .symtab, a debug file, MiniDebugInfo, .dynsym) whose
 * code holds the file offset. Every frame but the innermost is a return address: the
 * call is the instruction before it, so offset - 1 is named (a call that is a
 * function's last instruction, to a function that does not return, is then named right).
 * An address no symbol covers is named "OBJECT+0xOFFSET"; one outside every file mapping
 * by the JIT's perf map where there is one (daemon/stacks/jit.c: object "[jit]"), else
 * "[anon]" (code generated at run time) or by the mapping's name ("[vdso]").
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <json-c/json.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "common/catalog.h"
#include "common/demangle.h"
#include "bpf/featprof_bpf.h"
#include "common/maps.h"
#include "common/notes.h"
#include "common/symbols.h"
#include "stacks_impl.h"

struct fp_stacks *fp_stacks__new(int max_id)
{
	struct fp_stacks *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->user = !max_id;	/* the stacks unwound here: ids made here */
	s->cap_id = s->user ? 256 : max_id;
	s->by_id = calloc((size_t)s->cap_id, sizeof(*s->by_id));
	s->nhash = 1024;
	s->hash = calloc((size_t)s->nhash, sizeof(*s->hash));
	if (s->user) {
		s->nstack_hash = s->nagg_hash = 1024;
		s->stack_hash = calloc((size_t)s->nstack_hash, sizeof(int));
		s->agg_hash = calloc((size_t)s->nagg_hash, sizeof(int));
	}
	if (!s->by_id || !s->hash || (s->user && (!s->stack_hash || !s->agg_hash))) {
		fp_stacks__free(s);
		return NULL;
	}
	s->max_id = max_id;
	return s;
}

void fp_stacks__free(struct fp_stacks *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; s->by_id && i < s->max_id; i++)
		if (s->by_id[i]) {
			free(s->by_id[i]->fn);
			free(s->by_id[i]);
		}
	for (i = 0; i < s->nfns; i++) {
		free(s->fns[i].name);
		free(s->fns[i].symbol);
	}
	for (i = 0; i < s->nobjs; i++) {
		free(s->objs[i].path);
		free(s->objs[i].debug_file);
		fp_inlines__free(s->objs[i].inl);
		fp_symbols__free(s->objs[i].syms);
	}
	fp_jitmap__free(s->jit);
	for (i = 0; i < s->nips; i++)
		free(s->ips[i].ips);
	free(s->ips);
	free(s->thr);
	free(s->by_id);
	free(s->stack_hash);
	free(s->aggs);
	free(s->agg_hash);
	free(s->fns);
	free(s->hash);
	free(s->objs);
	fp_free_maps(s->vma, s->nvma);
	free(s);
}

static unsigned hash_fn(const char *name, int obj, int inlined)
{
	unsigned h = 2166136261u ^ (unsigned)obj ^ (unsigned)inlined << 31;

	while (*name)
		h = (h ^ (unsigned char)*name++) * 16777619u;
	return h;
}

/* An open-addressing table of n slots (index + 1) doubled: entries re-placed by hash_of. */
static int grow(int **tab, int *n, int count, unsigned (*hash_of)(struct fp_stacks *, int),
		struct fp_stacks *s)
{
	int m = *n * 2, i, *t = calloc((size_t)m, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		unsigned k = hash_of(s, i) & (unsigned)(m - 1);

		while (t[k])
			k = (k + 1) & (unsigned)(m - 1);
		t[k] = i + 1;
	}
	free(*tab);
	*tab = t;
	*n = m;
	return 0;
}

static unsigned fn_hash_of(struct fp_stacks *s, int i)
{
	return hash_fn(s->fns[i].name, s->fns[i].obj, s->fns[i].inlined);
}

int fp_stacks__intern(struct fp_stacks *s, const char *name, int obj, int inlined)
{
	unsigned k;

	if (2 * (s->nfns + 1) > s->nhash && grow(&s->hash, &s->nhash, s->nfns, fn_hash_of, s))
		return -1;
	k = hash_fn(name, obj, inlined) & (unsigned)(s->nhash - 1);
	for (; s->hash[k]; k = (k + 1) & (unsigned)(s->nhash - 1)) {
		struct fn *f = &s->fns[s->hash[k] - 1];

		if (f->obj == obj && f->inlined == inlined && !strcmp(f->name, name))
			return s->hash[k] - 1;
	}
	if (s->nfns == s->capfns) {
		int cap = s->capfns ? s->capfns * 2 : 256;
		struct fn *g = realloc(s->fns, (size_t)cap * sizeof(*g));

		if (!g)
			return -1;
		s->fns = g;
		s->capfns = cap;
	}
	s->fns[s->nfns].name = strdup(name);
	if (!s->fns[s->nfns].name)
		return -1;
	s->fns[s->nfns].symbol = NULL;
	s->fns[s->nfns].obj = obj;
	s->fns[s->nfns].inlined = inlined;
	s->hash[k] = ++s->nfns;
	return s->nfns - 1;
}

/* Symbol sym of object obj interned by the name people read (a clone folded into its
 * function, C++ and Rust demangled); the first symbol of that name kept. */
static int intern_symbol(struct fp_stacks *s, const char *sym, int obj)
{
	char buf[1024], base[1024], split[1100];
	const char *name = fp_demangle(sym, buf, sizeof(buf));
	size_t bl = fp_clone_base(sym);
	int i;

	if (s->split_clones && sym[bl] && bl < sizeof(base)) {	/* "f [clone .constprop.0]" */
		memcpy(base, sym, bl);
		base[bl] = 0;
		snprintf(split, sizeof(split), "%s [clone %s]", fp_demangle(base, buf, sizeof(buf)),
			 sym + bl);
		name = split;
	}
	i = fp_stacks__intern(s, name, obj, 0);

	if (i >= 0 && name != sym && !s->fns[i].symbol)
		s->fns[i].symbol = strdup(sym);	/* no memory: the JSON lacks it */
	return i;
}

/* Where g's symbols came from, for the JSON (its build id where the maps gave none). */
static void symbols_of(struct obj *g, const struct fp_symbols *syms)
{
	if (!syms)
		return;
	if (!g->build_id[0])
		snprintf(g->build_id, sizeof(g->build_id), "%s", syms->build_id);
	g->source = syms->source;
	free(g->debug_file);
	g->debug_file = syms->debug_file ? strdup(syms->debug_file) : NULL;
}

/* The object of mapping v (its symbols syms, or NULL): its index, added on first use; -1
 * no memory. */
static int object_of(struct fp_stacks *s, const struct fp_vma *v, const struct fp_symbols *syms)
{
	const char *path = v->path[0] ? v->path : "[anon]";	/* every anonymous map one */
	struct obj *g;
	int i;

	for (i = 0; i < s->nobjs; i++)
		if (s->objs[i].dev == v->dev && s->objs[i].ino == v->ino &&
		    !strcmp(s->objs[i].path, path))
			return i;
	g = realloc(s->objs, (size_t)(s->nobjs + 1) * sizeof(*g));
	if (!g)
		return -1;
	s->objs = g;
	g = &s->objs[s->nobjs];
	memset(g, 0, sizeof(*g));
	g->path = strdup(path);
	if (!g->path)
		return -1;
	symbols_of(g, syms);
	g->start = v->start;
	g->end = v->end;
	g->off = v->off;
	g->dev = v->dev;
	g->ino = v->ino;
	return s->nobjs++;
}

void fp_stacks__split_clones(struct fp_stacks *s, bool on)
{
	s->split_clones = on;
}

bool fp_stacks__read_maps(struct fp_stacks *s, pid_t pid)
{
	struct fp_vma *v = NULL;
	int n = fp_read_maps(pid, &v);

	if (n <= 0) {	/* gone (a zombie's maps are empty): the last ones kept */
		fp_free_maps(v, 0);
		return false;
	}
	fp_free_maps(s->vma, s->nvma);
	s->vma = v;
	s->nvma = n;
	return true;
}

/* The mapping that holds addr, reading the maps again once a round on a miss. */
static const struct fp_vma *vma_of(struct fp_stacks *s, pid_t pid, uint64_t addr)
{
	int lo, hi, pass;

	for (pass = 0; pass < 2; pass++) {
		lo = 0;
		hi = s->nvma;
		while (lo < hi) {
			int mid = lo + (hi - lo) / 2;

			if (s->vma[mid].end <= addr)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < s->nvma && s->vma[lo].start <= addr)
			return &s->vma[lo];
		if (pass || s->vma_read)
			break;
		s->vma_read = true;
		if (!fp_stacks__read_maps(s, pid))
			break;
	}
	return NULL;
}

/* The DWARF of object o (its file: the process's object proc_obj), opened once. */
static struct fp_inlines *inlines_of(struct fp_stacks *s, int o, const struct fp_object *proc_obj,
				     const struct fp_symbols *syms)
{
	struct obj *g = &s->objs[o];

	if (!g->inl_tried) {
		g->inl_tried = true;
		g->inl = fp_inlines__open(proc_obj->host_path, syms->debug_file);
	}
	return g->inl;
}

/* Object o's symbols read here from its file as the process sees it (its mount
 * namespace), once; NULL when it cannot be read. */
static struct fp_symbols *own_symbols(struct fp_stacks *s, int o, pid_t pid)
{
	struct obj *g = &s->objs[o];
	char root[64], path[PATH_MAX];
	struct fp_err e = { 0 };
	int fd;

	if (g->syms_tried)
		return g->syms;
	g->syms_tried = true;
	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	if (snprintf(path, sizeof(path), "%s%s", root, g->path) >= (int)sizeof(path) ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	if (fp_symbols__read(fd, g->path, root, &g->syms, &e))
		g->syms = NULL;
	close(fd);
	symbols_of(g, g->syms);
	return g->syms;
}

/* Code at addr (the instruction's own address) named by the process's perf map, as a
 * function of the [jit] object: 1 (out[0] set), 0 where the map does not name it, -1 no
 * memory. */
static int jit_frame(struct fp_stacks *s, pid_t pid, uint64_t addr, int *out)
{
	struct fp_vma jv = { .path = (char *)"[jit]" };
	const char *name;
	int o;

	if (!s->jit && !(s->jit = fp_jitmap__new(pid)))
		return 0;
	if (!(name = fp_jitmap__at(s->jit, addr)))
		return 0;
	if (!s->jit_obj) {
		if ((o = object_of(s, &jv, NULL)) < 0)
			return -1;
		s->objs[o].source = FP_SYM_PERF_MAP;
		s->objs[o].debug_file = strdup(fp_jitmap__path(s->jit));
		s->jit_obj = o + 1;
	}
	out[0] = fp_stacks__intern(s, name, s->jit_obj - 1, 0);
	return out[0] < 0 ? -1 : 1;
}

/*
 * The function at addr (a return address unless leaf) and the calls the compiler inlined
 * there, interned, outermost first, into out (room for 1 + FP_INLINE_MAX): how many, or -1
 * (no memory).
 */
static int name_frame(struct fp_stacks *s, pid_t pid, struct fp_proc *proc, uint64_t addr,
		      bool leaf, int *out)
{
	const struct fp_vma *v = vma_of(s, pid, addr);
	const char *inl[FP_INLINE_MAX];
	struct fp_symbols *syms = NULL;
	const struct fp_func *f = NULL;
	struct fp_object *po = NULL;
	char name[512];
	uint64_t off;
	int o, i, n;

	if ((!v || !v->ino) && (n = jit_frame(s, pid, addr - (leaf ? 0 : 1), out)))
		return n;	/* code a JIT generated, its perf map naming it */
	if (!v)
		return (out[0] = fp_stacks__intern(s, "[unknown]", -1, 0)) < 0 ? -1 : 1;
	off = addr - v->start + v->off - (leaf ? 0 : 1);
	for (i = 0; v->ino && proc && i < proc->nobjs; i++)
		if (proc->objs[i]->dev == v->dev && proc->objs[i]->ino == v->ino) {
			po = proc->objs[i];
			syms = fp_object__symbols(po);
			break;
		}
	o = object_of(s, v, syms);
	if (o < 0)
		return -1;
	if (!syms && v->ino)	/* not among the process's objects when it was read */
		syms = own_symbols(s, o, pid);
	f = syms ? fp_symbols__at(syms, off) : NULL;
	if (f) {
		/* the link-time address: the function's, moved as far as off is into it */
		n = po ? fp_inlines__at(inlines_of(s, o, po, syms), f->addr + (off - f->off),
					inl, FP_INLINE_MAX)
		       : 0;	/* read here (own_symbols): no DWARF opened for it */
		if ((out[0] = intern_symbol(s, f->name, o)) < 0)
			return -1;
		for (i = 0; i < n; i++)	/* innermost first in: outermost first out */
			if ((out[1 + i] = fp_stacks__intern(s, inl[n - 1 - i], o, 1)) < 0)
				return -1;
		return 1 + n;
	}
	if (!v->ino)
		out[0] = fp_stacks__intern(s, v->path[0] ? v->path : "[anon]", o, 0);
	else {
		snprintf(name, sizeof(name), "%s+0x%llx", fp_stacks_base_name(v->path),
			 (unsigned long long)off);
		out[0] = fp_stacks__intern(s, name, o, 0);
	}
	return out[0] < 0 ? -1 : 1;
}

/* ips (innermost first, n of them) named: a new stack, outermost first; NULL no memory. */
static struct fp_stack *name_stack(struct fp_stacks *s, pid_t pid, struct fp_proc *proc,
				   const uint64_t *ips, int n, int truncated)
{
	struct fp_stack *st = calloc(1, sizeof(*st));
	int k, m = 0, frame[1 + FP_INLINE_MAX];

	/* each frame a function and the calls inlined in it: filled from the end */
	if (!st || !(st->fn = calloc((size_t)n * (1 + FP_INLINE_MAX) + 1, sizeof(*st->fn)))) {
		free(st);
		return NULL;
	}
	s->vma_read = false;
	for (k = 0; k < n; k++) {	/* innermost first in: outermost first here */
		int f = name_frame(s, pid, proc, ips[k], k == 0, frame);

		if (f < 0) {
			free(st->fn);
			free(st);
			return NULL;
		}
		while (f--)
			st->fn[n * (1 + FP_INLINE_MAX) - ++m] = frame[f];
	}
	memmove(st->fn, st->fn + n * (1 + FP_INLINE_MAX) - m, (size_t)m * sizeof(*st->fn));
	st->n = m;
	{
		int *fit = realloc(st->fn, ((size_t)m + 1) * sizeof(*st->fn));

		if (fit)
			st->fn = fit;
	}
	st->truncated = truncated;
	return st;
}

const struct fp_stack *fp_stacks__get(struct fp_stacks *s, int map_fd, int32_t id, pid_t pid,
				      struct fp_proc *proc)
{
	uint64_t ips[FP_STACK_FRAMES];
	int n;

	if (id < 0 || id >= s->max_id)
		return NULL;
	if (s->by_id[id] || s->user)
		return s->by_id[id];
	if (bpf_map_lookup_elem(map_fd, &id, ips))
		return NULL;
	for (n = 0; n < FP_STACK_FRAMES && ips[n]; n++)
		;
	s->by_id[id] = name_stack(s, pid, proc, ips, n, n == FP_STACK_FRAMES);
	return s->by_id[id];
}

/* A hash of n bytes at p: 8 at a time (a sample key is 144 bytes; byte by byte it was
 * 6% of featprofd's time unwinding), each word multiplied in and its high bits folded
 * down, so that keys apart only in high bytes spread over the low bits a table uses. */
static unsigned hash_bytes(const void *p, size_t n, unsigned h0)
{
	const unsigned char *b = p;
	uint64_t h = h0, w;

	for (; n >= 8; n -= 8, b += 8) {
		memcpy(&w, b, 8);
		h = (h ^ w) * 0x100000001b3ULL;
		h ^= h >> 29;
	}
	while (n--)
		h = (h ^ *b++) * 0x100000001b3ULL;
	return (unsigned)(h ^ (h >> 32));
}

static unsigned hash_stack(const struct fp_stack *st)
{
	return hash_bytes(st->fn, (size_t)st->n * sizeof(*st->fn),
			  2166136261u ^ (unsigned)st->n ^ ((unsigned)st->truncated << 31));
}

static bool same_stack(const struct fp_stack *a, const struct fp_stack *b)
{
	return a->n == b->n && a->truncated == b->truncated &&
	       !memcmp(a->fn, b->fn, (size_t)a->n * sizeof(*a->fn));
}

static unsigned stack_hash_of(struct fp_stacks *s, int i)
{
	return hash_stack(s->by_id[i]);
}

static unsigned agg_hash_of(struct fp_stacks *s, int i)
{
	return hash_bytes(&s->aggs[i].key, sizeof(s->aggs[i].key), 2166136261u);
}

/* Whether stack st may be found again by its addresses (ips_seen): every frame in a
 * file's code. Not JIT code (its addresses name other code later), [anon] or [unknown]
 * (a mapping read later may name it). (A library unloaded and another mapped at its
 * addresses would keep the first one's names: not handled.) */
static bool cacheable(const struct fp_stacks *s, const struct fp_stack *st)
{
	int k, o;

	for (k = 0; k < st->n; k++) {
		o = s->fns[st->fn[k]].obj;
		if (o < 0 || !s->objs[o].ino)
			return false;
	}
	return true;
}

#define IPS_MAX 65536	/* addresses kept: a copy's frames seen before are not named again */

/* The stack id of addresses ips (n, truncated) seen before, or -1; *h their hash. */
static int32_t ips_seen(const struct fp_stacks *s, const uint64_t *ips, int n, int truncated,
			unsigned *h)
{
	unsigned k;

	*h = hash_bytes(ips, (size_t)n * sizeof(*ips), 2166136261u ^ (unsigned)n ^
			((unsigned)truncated << 31));
	for (k = *h & (unsigned)(s->nips - 1); s->nips && s->ips[k].ips;
	     k = (k + 1) & (unsigned)(s->nips - 1))
		if (s->ips[k].h == *h && s->ips[k].n == n && s->ips[k].truncated == truncated &&
		    !memcmp(s->ips[k].ips, ips, (size_t)n * sizeof(*ips)))
			return s->ips[k].id;
	return -1;
}

/* Addresses ips (n, truncated, hash h) as stack id from now on, where there is room. */
static void ips_keep(struct fp_stacks *s, const uint64_t *ips, int n, int truncated,
		     unsigned h, int32_t id)
{
	unsigned k;
	int i;

	if (s->nipsu >= IPS_MAX)
		return;
	if (2 * (s->nipsu + 1) > s->nips) {	/* twice the room, entries placed again */
		int m = s->nips ? 2 * s->nips : 1024;
		struct ips_entry *t = calloc((size_t)m, sizeof(*t));

		if (!t)
			return;
		for (i = 0; i < s->nips; i++) {
			if (!s->ips[i].ips)
				continue;
			k = s->ips[i].h & (unsigned)(m - 1);
			while (t[k].ips)
				k = (k + 1) & (unsigned)(m - 1);
			t[k] = s->ips[i];
		}
		free(s->ips);
		s->ips = t;
		s->nips = m;
	}
	for (k = h & (unsigned)(s->nips - 1); s->ips[k].ips; k = (k + 1) & (unsigned)(s->nips - 1))
		;
	s->ips[k].ips = malloc((size_t)(n ? n : 1) * sizeof(*ips));
	if (!s->ips[k].ips)
		return;
	memcpy(s->ips[k].ips, ips, (size_t)n * sizeof(*ips));
	s->ips[k].h = h;
	s->ips[k].n = n;
	s->ips[k].truncated = truncated;
	s->ips[k].id = id;
	s->nipsu++;
}

int32_t fp_stacks__add(struct fp_stacks *s, pid_t pid, struct fp_proc *proc,
		       const uint64_t *ips, int n, int truncated)
{
	struct fp_stack *st;
	unsigned k, h;
	int32_t id;

	if (!s->user || (2 * (s->max_id + 1) > s->nstack_hash &&
			 grow(&s->stack_hash, &s->nstack_hash, s->max_id, stack_hash_of, s)))
		return FP_USTACK_LOST;
	if ((id = ips_seen(s, ips, n, truncated, &h)) >= 0)
		return id;	/* named before: the same addresses name the same frames */
	st = name_stack(s, pid, proc, ips, n, truncated);
	if (!st)
		return FP_USTACK_LOST;
	for (k = hash_stack(st) & (unsigned)(s->nstack_hash - 1); s->stack_hash[k];
	     k = (k + 1) & (unsigned)(s->nstack_hash - 1))
		if (same_stack(s->by_id[s->stack_hash[k] - 1], st)) {
			if (cacheable(s, st))
				ips_keep(s, ips, n, truncated, h, s->stack_hash[k] - 1);
			free(st->fn);
			free(st);
			return s->stack_hash[k] - 1;
		}
	if (s->max_id == s->cap_id) {
		struct fp_stack **g = realloc(s->by_id, (size_t)s->cap_id * 2 * sizeof(*g));

		if (!g) {
			free(st->fn);
			free(st);
			return FP_USTACK_LOST;
		}
		s->by_id = g;
		s->cap_id *= 2;
	}
	s->by_id[s->max_id] = st;
	s->stack_hash[k] = ++s->max_id;
	if (cacheable(s, st))
		ips_keep(s, ips, n, truncated, h, s->max_id - 1);
	return s->max_id - 1;
}

const char *fp_stacks__thread(struct fp_stacks *s, pid_t pid, uint32_t tid)
{
	struct thr *g;
	char path[64];
	ssize_t n = 0;
	int i, fd;

	for (i = 0; i < s->nthr; i++)
		if (s->thr[i].tid == tid)
			return s->thr[i].comm;
	if (s->nthr % 32 == 0) {
		g = realloc(s->thr, (size_t)(s->nthr + 32) * sizeof(*g));
		if (!g)
			return NULL;
		s->thr = g;
	}
	g = &s->thr[s->nthr++];
	memset(g, 0, sizeof(*g));
	g->tid = tid;
	snprintf(path, sizeof(path), "/proc/%d/task/%u/comm", (int)pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, g->comm, sizeof(g->comm) - 1);
		close(fd);
	}
	g->comm[n > 0 ? n : 0] = 0;
	g->comm[strcspn(g->comm, "\n")] = 0;
	return g->comm;
}

int fp_stacks__count(struct fp_stacks *s, const struct fp_sample_key *key, int32_t id)
{
	struct fp_sample_key kk = *key;
	unsigned k;

	kk.ustack = id;
	if (2 * (s->naggs + 1) > s->nagg_hash &&
	    grow(&s->agg_hash, &s->nagg_hash, s->naggs, agg_hash_of, s))
		return -ENOMEM;
	for (k = hash_bytes(&kk, sizeof(kk), 2166136261u) & (unsigned)(s->nagg_hash - 1);
	     s->agg_hash[k]; k = (k + 1) & (unsigned)(s->nagg_hash - 1))
		if (!memcmp(&s->aggs[s->agg_hash[k] - 1].key, &kk, sizeof(kk))) {
			s->aggs[s->agg_hash[k] - 1].c++;
			return 0;
		}
	if (s->naggs == s->cap_aggs) {
		int cap = s->cap_aggs ? s->cap_aggs * 2 : 256;
		struct agg *g = realloc(s->aggs, (size_t)cap * sizeof(*g));

		if (!g)
			return -ENOMEM;
		s->aggs = g;
		s->cap_aggs = cap;
	}
	s->aggs[s->naggs].key = kk;
	s->aggs[s->naggs].c = 1;
	s->agg_hash[k] = ++s->naggs;
	return 0;
}

int fp_stacks__naggs(const struct fp_stacks *s)
{
	return s->naggs;
}

const struct fp_sample_key *fp_stacks__agg(const struct fp_stacks *s, int i, uint64_t *c)
{
	*c = s->aggs[i].c;
	return &s->aggs[i].key;
}

/* Function i: {"name", "object"}. */
