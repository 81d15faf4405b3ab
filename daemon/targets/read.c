// SPDX-License-Identifier: GPL-2.0
/*
 * Reading a target's BPF object (daemon/targets/target.h): its figures summed over CPUs (a
 * snapshot), their reset, and the ring of a recording. The object, its catalog and its
 * links: daemon/targets/target.c.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/clock.h"
#include "common/err.h"
#include "featprof.skel.h"
#include "inproc/inproc.h"
#include "kern/kernel.h"
#include "common/strays.h"
#include "target_impl.h"

/* The per-CPU region figures, summed into s. */
static void read_regions(struct fp_target *t, struct fp_snapshot *s,
			 struct fp_region_stats *rs, int ncpu)
{
	int r, c, k;

	for (r = 0; r < t->cat->nregions; r++) {
		struct fp_region_fig *d = &s->regions[r];
		__u32 rk = (__u32)(t->rbase + r);

		if (bpf_map__lookup_elem(t->skel->maps.region_stats, &rk, sizeof(rk), rs,
					 sizeof(*rs) * (size_t)ncpu, 0))
			continue;
		for (c = 0; c < ncpu; c++) {
			const struct fp_region_stats *v = &rs[c];

			if (!v->count)
				continue;
			if (!d->count || v->min_ns < d->min_ns)
				d->min_ns = v->min_ns;
			if (v->max_ns > d->max_ns)
				d->max_ns = v->max_ns;
			d->count += v->count;
			d->incl_ns += v->incl_ns;
			d->excl_ns += v->excl_ns;
			d->nchild += v->nchild;
			d->ndesc += v->ndesc;
			d->recursion += v->recursion;
			d->off_pre_ns += v->off_pre_ns;
			d->off_blk_ns += v->off_blk_ns;
			d->xoff_pre_ns += v->xoff_pre_ns;
			d->xoff_blk_ns += v->xoff_blk_ns;
			d->cost_ns += v->cost_ns;
			d->unc_ns += v->unc_ns;
			d->xcost_ns += v->xcost_ns;
			d->xunc_ns += v->xunc_ns;
			d->npre += v->npre;
			d->xnpre += v->xnpre;
			for (k = 0; k < FP_HIST_BUCKETS; k++)
				d->hist[k] += v->hist[k];
		}
		/* recursion is counted at begin, also when no instance completed yet */
		for (c = 0; c < ncpu && !d->count; c++)
			d->recursion += rs[c].recursion;
	}
}

/* The region paths (feature-set intervals), summed over CPUs into s. 0 or -ENOMEM. */
static int read_paths(struct fp_target *t, struct fp_snapshot *s, struct fp_path_val *pv,
		      int ncpu)
{
	int map_fd = t->paths_fd, node_fd = t->nodes_fd, c;
	__u64 key, next, *prev = NULL;

	while (bpf_map_get_next_key(map_fd, prev, &next) == 0) {
		struct fp_path_node node = { 0 };
		struct fp_path_fig *arr, *e;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(map_fd, &key, pv))
			continue;
		if (key && bpf_map_lookup_elem(node_fd, &key, &node))
			continue;	/* described before its value is created: not yet */
		arr = realloc(s->paths, sizeof(*arr) * (size_t)(s->npaths + 1));
		if (!arr)
			return -ENOMEM;
		s->paths = arr;
		e = &arr[s->npaths++];
		memset(e, 0, sizeof(*e));
		e->id = key;
		e->parent = node.parent;
		e->region = node.region;
		e->depth = node.depth;
		for (c = 0; c < ncpu; c++) {
			e->ns += pv[c].ns;
			e->events += pv[c].events;
			e->opened_by_begin += pv[c].opened_by_begin;
			e->closed_by_begin += pv[c].closed_by_begin;
			e->off_pre_ns += pv[c].off_pre_ns;
			e->off_blk_ns += pv[c].off_blk_ns;
			e->count += pv[c].count;
			e->cost_ns += pv[c].cost_ns;
			e->unc_ns += pv[c].unc_ns;
			e->npre += pv[c].npre;
		}
	}
	return 0;
}

struct fp_snapshot *fp_target__snapshot(struct fp_target *t)
{
	int ncpu = libbpf_num_possible_cpus(), c, k;
	struct fp_region_stats *rs = NULL;
	struct fp_path_val *pv = NULL;
	struct fp_snapshot *s;
	__u64 *an = NULL;

	if (t->exited || !t->skel)
		return t->last ? fp_snapshot__dup(t->last) : NULL;
	s = fp_snapshot__new(t->cat->nregions);
	rs = calloc((size_t)ncpu, sizeof(*rs));
	pv = calloc((size_t)ncpu, sizeof(*pv));
	an = calloc((size_t)ncpu, sizeof(*an));
	if (!s || !rs || !pv || !an || ncpu <= 0)
		goto nomem;
	s->taken_ns = fp_mono_ns();
	read_regions(t, s, rs, ncpu);
	if (read_paths(t, s, pv, ncpu))
		goto nomem;
	if (t->ip && fp_pool__ip_calibration()) {	/* the regions timed in the process */
		int r, e = fp_inproc__read(t->ip, fp_pool__ip_calibration(), s);

		if (e == -ENOMEM)
			goto nomem;
		s->inproc = calloc((size_t)t->cat->nregions + 1, 1);
		if (!s->inproc)
			goto nomem;
		for (r = 0; r < t->cat->nregions; r++)
			s->inproc[r] = t->ip_on[r] != 0;
	}
	if (fp_snapshot__derive_fsets(s, t->region_mask, t->cat->nregions))
		goto nomem;
	for (k = 0; k < FP_AN_MAX; k++) {
		__u32 ak = (__u32)(t->slot * FP_AN_MAX + k);

		if (bpf_map__lookup_elem(t->skel->maps.anomalies, &ak, sizeof(ak), an,
					 sizeof(*an) * (size_t)ncpu, 0))
			continue;
		for (c = 0; c < ncpu; c++)
			s->anomalies[k] += an[c];
	}
	free(rs);
	free(pv);
	free(an);
	return s;
nomem:
	free(rs);
	free(pv);
	free(an);
	fp_snapshot__free(s);
	errno = ENOMEM;
	return NULL;
}

int fp_target__reset(struct fp_target *t)
{
	int ncpu = libbpf_num_possible_cpus(), r, k, fd, ret = 0;
	void *zero;
	__u64 key;

	if (t->exited || !t->skel) {
		fp_snapshot__free(t->last);
		t->last = NULL;
		return 0;
	}
	zero = calloc((size_t)ncpu, sizeof(struct fp_region_stats));
	if (!zero)
		return -ENOMEM;
	for (r = 0; r < t->cat->nregions && !ret; r++) {
		__u32 rk = (__u32)(t->rbase + r);

		ret = bpf_map__update_elem(t->skel->maps.region_stats, &rk, sizeof(rk), zero,
					   sizeof(struct fp_region_stats) * (size_t)ncpu, BPF_ANY);
	}
	for (k = 0; k < FP_AN_MAX && !ret; k++) {
		__u32 ak = (__u32)(t->slot * FP_AN_MAX + k);

		ret = bpf_map__update_elem(t->skel->maps.anomalies, &ak, sizeof(ak), zero,
					   sizeof(__u64) * (size_t)ncpu, BPF_ANY);
	}
	fd = t->paths_fd;	/* path_nodes stay: they describe */
	while (!ret && bpf_map_get_next_key(fd, NULL, &key) == 0)
		if (bpf_map_delete_elem(fd, &key))
			ret = -errno;
	free(zero);
	if (!ret && t->ip && fp_pool__ip_calibration())	/* its figures are the process's:
							 * what they are now becomes zero */
		ret = fp_inproc__reset(t->ip, fp_pool__ip_calibration(), t->cat->nregions);
	return ret;
}

/* --- recording --------------------------------------------------------------------- */

/* A recording: the ring swapped into the object, drained by the daemon. */
struct fp_rec {
	struct ring_buffer *rb;
	int fd;			/* the ring map */
	uint64_t dropped;	/* events lost to a full ring, read at the halt */
};

static void rec_free(struct fp_rec *rec)
{
	if (!rec)
		return;
	ring_buffer__free(rec->rb);
	if (rec->fd >= 0)
		close(rec->fd);
	free(rec);
}

bool fp_target__recording(const struct fp_target *t)
{
	return t->rec != NULL;
}

int fp_target__record_start(struct fp_target *t, uint32_t bytes,
			    int (*cb)(void *ctx, void *data, size_t size), void *ctx,
			    struct fp_err *e)
{
	__u32 key = (__u32)t->slot;
	int ret, ncpu = libbpf_num_possible_cpus();
	struct fp_rec *rec;
	uint64_t *zero;

	if (!t->skel || t->rec)
		return fp_fail(e, t->skel ? EBUSY : ESRCH, "pid %d: %s", (int)t->pid,
			       t->skel ? "already recording" : "exited");
	if (!fp_kernel_caps()->ringbuf_inner)
		return fp_fail(e, EOPNOTSUPP,
			       "record needs a BPF ring buffer inside an array of maps, "
			       "which this kernel refuses");
	rec = calloc(1, sizeof(*rec));
	if (!rec)
		return fp_fail(e, ENOMEM, "out of memory");
	rec->fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "fp_record", 0, 0, bytes, NULL);
	if (rec->fd < 0) {
		ret = errno;
		free(rec);
		return fp_fail(e, ret, "pid %d: cannot create a %u-byte ring: %s", (int)t->pid,
			       bytes, strerror(ret));
	}
	rec->rb = ring_buffer__new(rec->fd, cb, ctx, NULL);
	ret = rec->rb ? bpf_map__update_elem(t->skel->maps.record_rb, &key, sizeof(key), &rec->fd,
					     sizeof(rec->fd), BPF_ANY)
		      : -errno;
	if (ret) {
		rec_free(rec);
		return fp_fail(e, -ret, "pid %d: cannot install the ring: %s", (int)t->pid,
			       strerror(-ret));
	}
	t->rec = rec;
	zero = calloc(ncpu > 0 ? (size_t)ncpu : 1, sizeof(*zero));
	if (zero)
		bpf_map__update_elem(t->skel->maps.record_dropped, &key, sizeof(key), zero,
				     sizeof(*zero) * (size_t)ncpu, BPF_ANY);
	free(zero);
	__atomic_store_n(&t->skel->bss->record_on[t->slot], 1, __ATOMIC_SEQ_CST);
	return 0;
}

int fp_target__record_drain(struct fp_target *t)
{
	return t->rec ? ring_buffer__consume(t->rec->rb) : 0;
}

/* Events the ring had no room for, summed over CPUs. */
static uint64_t record_dropped(struct fp_target *t)
{
	int ncpu = libbpf_num_possible_cpus(), c;
	__u32 key = (__u32)t->slot;
	uint64_t *v, n = 0;

	v = calloc(ncpu > 0 ? (size_t)ncpu : 1, sizeof(*v));
	if (v && !bpf_map__lookup_elem(t->skel->maps.record_dropped, &key, sizeof(key), v,
				       sizeof(*v) * (size_t)ncpu, 0))
		for (c = 0; c < ncpu; c++)
			n += v[c];
	free(v);
	return n;
}

uint64_t fp_target__record_halt(struct fp_target *t)
{
	__u32 key = (__u32)t->slot;

	if (!t->rec)
		return 0;
	if (t->skel && __atomic_load_n(&t->skel->bss->record_on[t->slot], __ATOMIC_SEQ_CST)) {
		__atomic_store_n(&t->skel->bss->record_on[t->slot], 0, __ATOMIC_SEQ_CST);
		/* a program that saw record_on may still be writing to the ring it looked
		 * up: it stays mapped here, and later drains take those events too */
		bpf_map__delete_elem(t->skel->maps.record_rb, &key, sizeof(key), 0);
		t->rec->dropped = record_dropped(t);
	}
	return t->rec->dropped;
}

uint64_t fp_target__record_stop(struct fp_target *t)
{
	uint64_t dropped;

	if (!t->rec)
		return 0;
	dropped = fp_target__record_halt(t);
	rec_free(t->rec);
	t->rec = NULL;
	return dropped;
}

/* --- what is attached where ---------------------------------------------------------- */

/* Whether the file's target has the region named name of t enabled at a site of t's
 * object obj: that object is the file (its device and inode). */
static bool file_link_has(const struct fp_target *t, const struct fp_target *file, int obj,
			  const char *name, uint64_t dev, uint64_t ino)
{
	int fr = file ? fp_catalog__region(file->cat, name) : -1;

	return fr >= 0 && !file->exited && file->enabled[fr] && ino &&
	       t->cat->objs[obj]->dev == dev && t->cat->objs[obj]->ino == ino;
}

int fp_target__strays(const struct fp_target *t, const struct fp_target *file, uint64_t dev,
		      uint64_t ino)
{
	struct fp_trap tr[256];
	int n, i, r, k, stray = 0;

	if (!t->pid || t->exited || !t->proc)
		return 0;
	n = fp_traps(t->proc, tr, 256);
	for (i = 0; i < n && i < 256; i++) {
		int owned = 0;

		owned = fp_inproc__owns(t->ip, tr[i].obj, tr[i].site);	/* a gate, a hook */
		for (r = 0; r < t->cat->nregions && !owned; r++)
			for (k = 0; k < t->cat->regions[r].nsites && !owned; k++)
				if (t->cat->regions[r].sites[k].obj == tr[i].obj &&
				    t->cat->regions[r].sites[k].site == tr[i].site)
					owned = (t->enabled[r] && !t->ip_on[r]) ||
						file_link_has(t, file, tr[i].obj,
							      t->cat->regions[r].name, dev, ino);
		stray += !owned;
	}
	return n < 0 ? n : stray + (n > 256 ? n - 256 : 0);
}

int fp_target__attach_points(const struct fp_target *t)
{
	int r, k, m = 0;

	if (!t->skel)	/* exited or released: as it was */
		return t->points_kept;
	for (r = 0; t->enabled && r < t->cat->nregions; r++) {
		const struct fp_region *reg = &t->cat->regions[r];

		for (k = 0; t->enabled[r] && !t->ip_on[r] && k < reg->nsites; k++) {
			const struct fp_site *site = fp_ref_site(t->cat->objs, &reg->sites[k]);

			m |= t->use_opt && site->opt_off ? 2 : 1;
		}
	}
	return m;
}
