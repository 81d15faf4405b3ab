// SPDX-License-Identifier: GPL-2.0
/*
 * In-process timing, reading (daemon/inproc/inproc.c has the rest): a target's arena, opened
 * through its own mapping and read in place as hostile input; its threads' figures and
 * paths into a snapshot, with the runtime's cost (daemon/inproc/ip_calibrate.c) and the off-CPU
 * time the scheduler programs charged to each thread's open path (bpf/featprof.bpf.c
 * ip_switch).
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/procfs.h"
#include "common/catalog.h"
#include "usdt/featprof_abi.h"
#include "inproc.h"
#include "inproc_impl.h"
#include "util/stats.h"
#include "kern/uprobe.h"

_Static_assert((int)FP_IP_AN_END_WITHOUT_BEGIN == (int)FP_AN_END_WITHOUT_BEGIN &&
		       (int)FP_IP_AN_PATHS_FULL == (int)FP_AN_PATHS_FULL &&
		       (int)FP_IP_AN_NO_STATE == (int)FP_AN_NO_STATE &&
		       (int)FP_IP_AN_DISABLED_OPEN == (int)FP_AN_DISABLED_OPEN,
	       "the runtime's anomalies are the kernel's");
_Static_assert(FP_IP_HIST == FP_HIST_BUCKETS, "histograms alike");
_Static_assert(sizeof(struct featprof_ip_thread) == FP_IP_THREAD_SIZE, "the block's size");
_Static_assert(offsetof(struct featprof_ip_thread, depth) == FP_IPT_STATE_OFF &&
		       offsetof(struct featprof_ip_thread, cur) == FP_IPT_STATE_OFF + 12,
	       "what the scheduler programs read");
_Static_assert(offsetof(struct featprof_ip_thread, f) == FP_IPT_FRAMES_OFF &&
		       sizeof(struct featprof_ip_frame) == FP_IPT_FRAME_SIZE &&
		       offsetof(struct featprof_ip_frame, id) == FP_IPT_FRAME_ID &&
		       FP_IP_DEPTH >= FP_TLS_SLOTS,
	       "bpf/featprof_bpf.h's in-process frame layout (the sampler's) is not the runtime's");

/* --- reading ---------------------------------------------------------------------------- */

/* The arena, once the process has made it (its primary control block names it): opened
 * through the process's own mapping, sealed, mapped, kept. 0, -EAGAIN (none yet), or
 * -errno. */
static int open_arena(struct fp_inproc *ip)
{
	struct featprof_ip_arena h;
	struct fp_vma *v = NULL;
	uint64_t a = 0, end = 0;
	char path[96];
	struct stat st;
	int nv, i, fd;

	if (ip->arena)
		return 0;
	if (!ip->pid || !ip->primary)
		return -EAGAIN;
	if (fp_procfs_peek(ip->pid, CTL_FIELD(ip->primary, arena), &a, 8))
		return -ESRCH;
	if (a <= 2)	/* not made yet (1: being made, 2: could not be) */
		return -EAGAIN;
	nv = fp_read_maps(ip->pid, &v);
	for (i = 0; i < nv && !end; i++)
		if (v[i].start == a)
			end = v[i].end;
	fp_free_maps(v, nv);
	if (!end)
		return -ENOENT;
	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)ip->pid,
		 (unsigned long long)a, (unsigned long long)end);
	fd = open(path, O_RDWR | O_CLOEXEC);	/* writable: seals need it */
	if (fd < 0)
		return -errno;
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) && errno != EPERM) {
		close(fd);
		return -EPERM;
	}
	if (!(fcntl(fd, F_GET_SEALS) & F_SEAL_SHRINK) || fstat(fd, &st) ||
	    (uint64_t)st.st_size < sizeof(h) || pread(fd, &h, sizeof(h), 0) != sizeof(h) ||
	    h.magic != FP_IP_MAGIC || h.version != FP_IP_ABI_VERSION) {
		close(fd);	/* not sealed against shrinking, or not an arena: not read */
		return -EPROTO;
	}
	ip->arena_size = (uint64_t)st.st_size < end - a ? (uint64_t)st.st_size : end - a;
	ip->arena = mmap(NULL, ip->arena_size, PROT_READ, MAP_SHARED, fd, 0);
	if (ip->arena == MAP_FAILED) {
		ip->arena = NULL;
		close(fd);
		return -errno;
	}
	ip->arena_fd = fd;
	ip->arena_base = a;
	/* held: a runtime waiting at exit for it may go (usdt/featprof.h FP_IP_HANDOVER_*) */
	fp_procfs_write(ip->pid, CTL_FIELD(ip->primary, handover),
		       &(uint32_t){ FP_IP_HANDOVER_HELD | (ip->run ? FP_IP_HANDOVER_FORKS : 0) },
		       4);
	return 0;
}

int fp_inproc__take_arena(struct fp_inproc *ip)
{
	return open_arena(ip);
}

/* The arena's bytes at process address p, n of them: NULL when they are not inside it. */
static const void *at(const struct fp_inproc *ip, uint64_t p, uint64_t n)
{
	uint64_t off = p - ip->arena_base;

	if (p < ip->arena_base || off > ip->arena_size || n > ip->arena_size - off || off % 8)
		return NULL;
	return ip->arena + off;
}

static uint64_t ld(const volatile unsigned long long *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static uint32_t ld32(const volatile unsigned int *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* A time the runtime kept in its clock's units, in ns (usdt/featprof.h: the arena says
 * which clock, and the multiplier featprofd gave the process, which a later featprofd
 * did not necessarily give). */
static uint64_t ns_of(const struct featprof_ip_arena *a, uint64_t v)
{
	if (a->clock != FP_IP_CLOCK_TSC)
		return v;
	return (uint64_t)(((unsigned __int128)v * a->tsc_mult) >> (a->tsc_shift & 63));
}


/*
 * Off-CPU time needs each thread's block known to the scheduler programs: the runtime's
 * featprof:ip__thread site (a thread taking a block in an object) gets fp_ip_thread in
 * every object not yet hooked, then the blocks threads own already are entered from the
 * arena (a thread that took its block before: another featprofd, an earlier enable).
 * Failures leave off-CPU time uncounted, never the timing.
 */
void fp_inproc_hook_threads(struct fp_inproc *ip)
{
	uint64_t p;
	int i, s, n, fd, *h;

	if (ip->prog_fd < 0)
		return;
	for (i = 0; i < ip->nrts; i++) {
		const struct fp_object *obj = ip->cat->objs[ip->rts[i].obj];
		const struct fp_site *site;

		if (ip->rts[i].hooked || !ip->rts[i].ctl)
			continue;
		ip->rts[i].hooked = true;
		for (s = 0; s < obj->nsites; s++) {
			site = &obj->sites[s];
			if (strcmp(site->provider, "featprof") ||
			    strcmp(site->name, FP_IP_THREAD_PROBE) || !site->loc_off)
				continue;
			h = realloc(ip->hooks, sizeof(*h) * (size_t)(ip->nhooks + 1));
			if (!h)
				return;
			ip->hooks = h;
			fd = fp_uprobe_hook(ip->prog_fd, ip->multi, obj->host_path,
					    site->loc_off, ip->pid);
			if (fd >= 0)
				ip->hooks[ip->nhooks++] = fd;
		}
	}
	*ip->active = 1;
	if (open_arena(ip))
		return;	/* none yet: no thread has a block */
	p = (uint64_t)(uintptr_t)__atomic_load_n(
		&((const struct featprof_ip_arena *)ip->arena)->threads, __ATOMIC_ACQUIRE);
	for (n = 0; p && n < FP_IP_MAX_THREADS; n++) {
		const struct featprof_ip_thread *t = at(ip, p, sizeof(*t));
		struct fp_ip_thread v = { .block = p, .tgid = (uint32_t)ip->pid };
		uint32_t tid;

		if (!t || t->magic != FP_IP_MAGIC)
			break;
		tid = ld32(&t->tid);
		if (ld(&t->owner) && tid)
			bpf_map_update_elem(ip->threads_fd, &tid, &v, BPF_NOEXIST);
		p = (uint64_t)(uintptr_t)__atomic_load_n(&t->next, __ATOMIC_ACQUIRE);
	}
}

static int cmp_off(const void *a, const void *b)
{
	const struct off *x = a, *y = b;

	if (x->block != y->block)
		return x->block < y->block ? -1 : 1;
	return x->path < y->path ? -1 : x->path > y->path;
}

/* The process's off-CPU entries, sorted by block and path entry. 0 or -ENOMEM. */
static int load_offs(struct fp_inproc *ip)
{
	struct fp_ip_off_key k, next, *prev = NULL;
	struct off *o;
	int cap = 0;

	ip->noffs = 0;
	if (ip->off_fd < 0)
		return 0;
	while (!bpf_map_get_next_key(ip->off_fd, prev, &next)) {
		k = next;
		prev = &k;
		if (k.tgid != (uint32_t)ip->pid)
			continue;
		if (ip->noffs == cap) {
			o = realloc(ip->offs, sizeof(*o) * (size_t)(cap = cap ? cap * 2 : 64));
			if (!o)
				return -ENOMEM;
			ip->offs = o;
		}
		o = &ip->offs[ip->noffs];
		o->block = k.block;
		o->path = k.path;
		if (!bpf_map_lookup_elem(ip->off_fd, &k, &o->v))
			ip->noffs++;
	}
	if (ip->noffs)
		qsort(ip->offs, (size_t)ip->noffs, sizeof(*ip->offs), cmp_off);
	return 0;
}

static const struct fp_ip_off *off_of(const struct fp_inproc *ip, uint64_t block,
				      uint32_t path)
{
	struct off key = { .block = block, .path = path };
	const struct off *o = ip->noffs ? bsearch(&key, ip->offs, (size_t)ip->noffs,
						  sizeof(key), cmp_off)
					: NULL;

	return o ? &o->v : NULL;
}

/* The catalog region of each id the process gave (-1: not one of ours), by the names
 * the arena keeps (a name without its NUL names nothing). */
static void map_ids(const struct fp_inproc *ip, const struct featprof_ip_arena *a, int n,
		    int *map)
{
	char name[FP_IP_NAME];
	int id;

	for (id = 1; id <= n; id++) {
		memcpy(name, a->names[id - 1], sizeof(name));	/* one copy, then checked */
		map[id] = memchr(name, 0, sizeof(name)) ? fp_catalog__region(ip->cat, name) : -1;
	}
}

int fp_inproc__region_of_id(struct fp_inproc *ip, uint64_t id)
{
	const struct featprof_ip_arena *a;
	char name[FP_IP_NAME];

	if (!id || id > FP_IP_IDS || open_arena(ip))
		return -1;
	a = (const struct featprof_ip_arena *)ip->arena;
	if (a->magic != FP_IP_MAGIC || a->version != FP_IP_ABI_VERSION || id > ld32(&a->next_id))
		return -1;
	memcpy(name, a->names[id - 1], sizeof(name));	/* one copy, then checked */
	return memchr(name, 0, sizeof(name)) ? fp_catalog__region(ip->cat, name) : -1;
}

/* Region figure f (of an id mapped to region r) into s, with its cost from cal. */
static void add_fig(struct fp_snapshot *s, int r, const struct featprof_ip_arena *a,
		    const struct featprof_ip_fig *f, const struct fp_calibration *cal)
{
	struct fp_region_fig *d = &s->regions[r];
	uint64_t count = ld(&f->count), nchild = ld(&f->nchild), ndesc = ld(&f->ndesc);
	double b = cal->bias_ns, p = cal->pair_ns, bs = cal->bias_sd, ps = cal->pair_sd, c, x;
	int k;

	if (!count) {
		d->recursion += ld(&f->recursion);
		return;
	}
	if (!d->count || ns_of(a, ld(&f->min)) < d->min_ns)
		d->min_ns = ns_of(a, ld(&f->min));
	if (ns_of(a, ld(&f->max)) > d->max_ns)
		d->max_ns = ns_of(a, ld(&f->max));
	d->count += count;
	d->incl_ns += ns_of(a, ld(&f->incl));
	d->excl_ns += ns_of(a, ld(&f->excl));
	d->nchild += nchild;
	d->ndesc += ndesc;
	d->recursion += ld(&f->recursion);
	for (k = 0; k < FP_IP_HIST; k++)
		d->hist[k] += ld(&f->hist[k]);
	/* the runtime's own cost: its bias per instance, a whole pair per nested one, as
	 * the kernel charges a probe's (bpf/featprof.bpf.c "Cost"); uncertain by all of it
	 * (FP_IP_COST_UNC) */
	c = (double)count * b + (double)ndesc * p;
	x = (double)count * b + (double)nchild * (p - b);
	d->cost_ns += (uint64_t)(c > 0 ? c : 0);
	d->xcost_ns += (uint64_t)(x > 0 ? x : 0);
	d->unc_ns += (uint64_t)((double)count * bs + (double)ndesc * ps + FP_IP_COST_UNC * c);
	d->xunc_ns += (uint64_t)((double)count * bs + (double)nchild * ps + FP_IP_COST_UNC * x);
}

/* Off-CPU time o of path entry e (of a thread's table, its parents in par, regions in
 * reg): the path's, the innermost region's exclusive, every region's on it inclusive
 * (once, however often it recurs). */
static void add_off(struct fp_snapshot *s, struct fp_path_fig *f, uint32_t e, const int *par,
		    const int *reg, const struct fp_ip_off *o)
{
	int seen[FP_MAX_DEPTH], nseen = 0, k, r;
	uint32_t x;

	f->off_pre_ns += o->pre_ns;
	f->off_blk_ns += o->blk_ns;
	f->npre += o->n_pre;
	if (!e)
		return;
	s->regions[reg[e]].xoff_pre_ns += o->pre_ns;
	s->regions[reg[e]].xoff_blk_ns += o->blk_ns;
	s->regions[reg[e]].xnpre += o->n_pre;
	for (x = e; x && nseen < FP_MAX_DEPTH; x = (uint32_t)par[x]) {
		r = reg[x];
		for (k = 0; k < nseen && seen[k] != r; k++)
			;
		if (k < nseen)
			continue;
		seen[nseen++] = r;
		s->regions[r].off_pre_ns += o->pre_ns;
		s->regions[r].off_blk_ns += o->blk_ns;
		s->regions[r].npre += o->n_pre;
	}
}

/* One thread's paths (its block at process address block) into s (appended; merged by
 * id afterwards), with their off-CPU time. 0 or -ENOMEM. */
static int add_paths(const struct fp_inproc *ip, struct fp_snapshot *s,
		     const struct featprof_ip_thread *t, uint64_t block, const int *map, int nid,
		     const struct fp_calibration *cal)
{
	uint32_t n = ld32(&t->npaths), e;
	static uint64_t h[FP_IP_PATHS];
	static int ok[FP_IP_PATHS], depth[FP_IP_PATHS], reg[FP_IP_PATHS], par[FP_IP_PATHS];
	struct fp_path_fig *arr;

	if (n > FP_IP_PATHS)
		n = FP_IP_PATHS;
	arr = realloc(s->paths, sizeof(*arr) * (size_t)(s->npaths + (int)n + 1));
	if (!arr)
		return -ENOMEM;
	s->paths = arr;
	for (e = 0; e < n; e++) {
		const struct featprof_ip_path *p = &t->paths[e];
		uint32_t parent = ld32(&p->parent), id = ld32(&p->id);
		uint64_t cnt = ld(&p->count), kids = ld(&p->nchild);
		/* as the kernel counts a path's intervals: an instance's own time is one more
		 * interval than it has children, opened by its begin and the children's ends,
		 * closed by their begins and its end; the base's, by an end and a begin */
		uint64_t ev = e ? cnt + kids : cnt, ob = e ? cnt : 0, cb = e ? kids : cnt;
		const struct fp_ip_off *o = off_of(ip, block, e);
		struct fp_path_fig *f;
		double c;

		ok[e] = !e;	/* entry 0: the base (no region open), id 0 */
		h[e] = 0;
		depth[e] = 0;
		reg[e] = 0;
		par[e] = 0;
		if (e) {	/* parents come before their children */
			if (parent >= e || !ok[parent] || !id || (int)id > nid || map[id] < 0 ||
			    map[id] >= s->nregions || depth[parent] >= FP_MAX_DEPTH)
				continue;
			reg[e] = map[id];
			par[e] = (int)parent;
			h[e] = FP_PATH_HASH(h[parent], (uint64_t)reg[e]);
			depth[e] = depth[parent] + 1;
			ok[e] = 1;
		}
		if (!ev && !o)
			continue;
		f = &s->paths[s->npaths++];
		memset(f, 0, sizeof(*f));
		f->id = h[e];
		f->parent = e ? h[parent] : 0;
		f->region = (uint32_t)reg[e];
		f->depth = (uint32_t)depth[e];
		f->ns = ns_of((const struct featprof_ip_arena *)ip->arena, ld(&p->time));
		f->events = ev;
		f->opened_by_begin = ob;
		f->closed_by_begin = cb;
		f->count = e ? cnt : 0;
		c = (double)ob * cal->part_ns[FP_C_BEGIN_POST] +
		    (double)(ev - ob) * cal->part_ns[FP_C_END_POST] +
		    (double)cb * cal->part_ns[FP_C_BEGIN_PRE] +
		    (double)(ev - cb) * cal->part_ns[FP_C_END_PRE];
		f->cost_ns = (uint64_t)(c > 0 ? c : 0);
		f->unc_ns = (uint64_t)((double)ob * cal->part_sd[FP_C_BEGIN_POST] +
				       (double)(ev - ob) * cal->part_sd[FP_C_END_POST] +
				       (double)cb * cal->part_sd[FP_C_BEGIN_PRE] +
				       (double)(ev - cb) * cal->part_sd[FP_C_END_PRE] +
				       FP_IP_COST_UNC * c);
		if (o)
			add_off(s, f, e, par, reg, o);
	}
	return 0;
}

/* Every thread's figures, as they are now, into s (a fresh snapshot). */
static int read_all(struct fp_inproc *ip, const struct fp_calibration *cal,
		    struct fp_snapshot *s)
{
	const struct featprof_ip_arena *a;
	static int map[FP_IP_IDS + 1];
	uint64_t p;
	int nid, n, i, k, ret;

	ret = open_arena(ip);
	if (ret)
		return ret == -EAGAIN ? 0 : ret;
	a = (const struct featprof_ip_arena *)ip->arena;
	if (a->magic != FP_IP_MAGIC || a->version != FP_IP_ABI_VERSION)
		return -EPROTO;
	nid = (int)ld32(&a->next_id);
	if (nid > FP_IP_IDS)
		nid = FP_IP_IDS;
	map_ids(ip, a, nid, map);
	ret = load_offs(ip);
	if (ret)
		return ret;
	p = (uint64_t)(uintptr_t)__atomic_load_n(&a->threads, __ATOMIC_ACQUIRE);
	for (n = 0; p && n < FP_IP_MAX_THREADS; n++) {
		const struct featprof_ip_thread *t = at(ip, p, sizeof(*t));

		if (!t || t->magic != FP_IP_MAGIC || t->version != FP_IP_ABI_VERSION)
			break;	/* a broken list: what came before is kept */
		for (k = 0; k < FP_IP_IDS / FP_IP_CHUNK; k++) {
			uint64_t cp = (uint64_t)(uintptr_t)__atomic_load_n(&t->chunk[k],
									   __ATOMIC_ACQUIRE);
			const struct featprof_ip_fig *c =
				cp ? at(ip, cp, sizeof(*c) * FP_IP_CHUNK) : NULL;

			for (i = 0; c && i < FP_IP_CHUNK; i++) {
				int id = k * FP_IP_CHUNK + i + 1;

				if (id <= nid && map[id] >= 0 && map[id] < s->nregions)
					add_fig(s, map[id], a, &c[i], cal);
			}
		}
		ret = add_paths(ip, s, t, p, map, nid, cal);
		if (ret)
			return ret;
		for (k = 0; k < FP_IP_AN_N && k < FP_AN_MAX; k++)
			s->anomalies[k] += ld(&t->anomalies[k]);
		p = (uint64_t)(uintptr_t)__atomic_load_n(&t->next, __ATOMIC_ACQUIRE);
	}
	/* adding nothing merges the paths of the same id */
	return fp_snapshot__add(s, &(struct fp_snapshot){ .nregions = 0 });
}

int fp_inproc__read(struct fp_inproc *ip, const struct fp_calibration *cal,
		    struct fp_snapshot *s)
{
	struct fp_snapshot *now = fp_snapshot__new(s->nregions), *d;
	int ret;

	if (!now)
		return -ENOMEM;
	ret = read_all(ip, cal, now);
	if (!ret && ip->base) {	/* since the last reset */
		d = fp_snapshot__delta(now, ip->base);
		fp_snapshot__free(now);
		now = d;
		ret = now ? 0 : -ENOMEM;
	}
	if (!ret)
		ret = fp_snapshot__add(s, now);
	fp_snapshot__free(now);
	return ret;
}

int fp_inproc__reset(struct fp_inproc *ip, const struct fp_calibration *cal, int nregions)
{
	struct fp_snapshot *now = fp_snapshot__new(nregions);
	int ret;

	if (!now)
		return -ENOMEM;
	ret = read_all(ip, cal, now);
	if (ret) {
		fp_snapshot__free(now);
		return ret;
	}
	fp_snapshot__free(ip->base);
	ip->base = now;
	return 0;
}
