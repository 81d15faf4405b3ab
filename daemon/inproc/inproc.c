// SPDX-License-Identifier: GPL-2.0
/*
 * In-process timing (usdt/featprof_inprocess.h, docs/PROBE-ABI.md): a target whose
 * objects were built with FEATPROF_INPROCESS times its regions itself while featprofd
 * holds their gates up.
 *
 * Gates: a region's gate in each object is a USDT semaphore named by the stapsdt note
 * featprof:<region>__ipgate; featprofd raises it with a perf-event uprobe (no program) at
 * that note's nop with the semaphore as ref_ctr_offset (daemon/kern/uprobe.c), filtered to the
 * process. The kernel keeps the count, so closing the uprobe, or featprofd's death,
 * lowers it. Before the first gate of a process rises featprofd writes, into every
 * object's control block (process_vm_writev), which block is the primary and, once per
 * process, the clock (daemon/inproc/ip_calibrate.c); before each gate rises, the region's
 * generation into its descriptor (one per region while any of its gates is up, so that a
 * frame begun in one object and ended in another is one region's); after gates are
 * lowered, a new epoch, so threads drop frames of regions no longer measured. When the
 * process maps or unmaps objects (a library unloaded and loaded again) the blocks and
 * descriptors that moved or came back fresh are told again (fp_inproc__remap).
 *
 * Figures: the runtime keeps them in an arena, a memfd file it maps shared at the
 * process's first event. featprofd opens that file through /proc/PID/map_files (the
 * mapping itself: nothing another process made can stand in for it), seals it against
 * shrinking (so that no read of featprofd's own read-only mapping of it can fault: the
 * runtime allows sealing, an arena that does not is refused) and keeps it, so the figures
 * stay readable after the process execs, exits or dies. Figures are read in place, each
 * 64-bit value with one load (the thread may be changing it: a figure is at most one
 * event behind another, as the kernel's per-CPU maps are read). Every read is of hostile
 * input: addresses are checked against the file, counts against the layout's bounds, the
 * thread list is followed at most FP_IP_MAX_THREADS steps. A target that scribbles over
 * its arena falsifies its own figures and nothing else.
 *
 * Region ids are the process's own (given at first use); the arena keeps each id's name,
 * which featprofd looks up in the target's catalog. Paths get featprofd's ids
 * (FP_PATH_HASH over catalog indices), so they merge with the kernel's; in-process and
 * trapped regions do not see each other's nesting. The runtime's own cost (daemon/
 * ip_calibrate.c) is charged per event from the counts, as a probe's was before gap
 * steps: it does not trap. Off-CPU time: daemon/inproc/inproc_read.c.
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
#include <sys/uio.h>
#include <unistd.h>

#include "common/procfs.h"
#include "common/catalog.h"
#include "util/closer.h"
#include "common/err.h"
#include "usdt/featprof_abi.h"
#include "inproc.h"
#include "inproc_impl.h"
#include "ip_calibrate.h"
#include "util/stats.h"
#include "kern/uprobe.h"

/* --- the process's mappings ----------------------------------------------------------- */

/* The address at which the process maps offset off of obj's file, 0: not mapped. */
static uint64_t addr_of(const struct fp_vma *v, int nv, const struct fp_object *obj,
			uint64_t off)
{
	return fp_vma_addr(v, nv, obj->dev, obj->ino, off);
}

/* --- discovery ------------------------------------------------------------------------ */

/* Adds the runtimes and gates of cat's objects from index o0 on. 0 or -errno. */
static int scan(struct fp_inproc *ip, const struct fp_catalog *cat, int o0)
{
	struct fp_vma *v = NULL;
	int nv = 0, o, s, ret = 0;

	if (ip->pid && (nv = fp_read_maps(ip->pid, &v)) < 0)
		return nv;
	for (o = o0; o < cat->nobjs && !ret; o++) {
		const struct fp_object *obj = cat->objs[o];

		if (obj->ip_version != FP_IP_ABI_VERSION ||
		    obj->ip_thread_size != FP_IP_THREAD_SIZE)
			continue;	/* none, or another layout: its sites are trapped */
		for (s = 0; s < obj->nsites; s++) {
			const struct fp_site *site = &obj->sites[s];
			struct gate *g;
			size_t rl = 0;
			char name[256];
			int r;

			if (!fp_site_is_gate(site, &rl) || !rl || rl >= sizeof(name) ||
			    !site->sem_off)
				continue;
			memcpy(name, site->name, rl);
			name[rl] = 0;
			r = fp_catalog__region(cat, name);
			if (r < 0)
				continue;
			g = realloc(ip->gates, sizeof(*g) * (size_t)(ip->ngates + 1));
			if (!g) {
				ret = -ENOMEM;
				break;
			}
			ip->gates = g;
			ip->gates[ip->ngates++] = (struct gate){
				o, s, r, site->loc_off, site->sem_off,
				ip->pid ? addr_of(v, nv, obj, site->sem_off) : 0, -1, 0
			};
		}
		if (!ret) {
			struct rt *n = realloc(ip->rts, sizeof(*n) * (size_t)(ip->nrts + 1));

			if (!n) {
				ret = -ENOMEM;
				break;
			}
			ip->rts = n;
			ip->rts[ip->nrts++] = (struct rt){
				o, ip->pid ? addr_of(v, nv, obj, obj->ip_ctl_off) : 0, false, false
			};
		}
	}
	fp_free_maps(v, nv);
	return ret;
}

struct fp_inproc *fp_inproc__new(pid_t pid, const struct fp_catalog *cat)
{
	struct fp_inproc *ip = calloc(1, sizeof(*ip));
	int ret;

	if (!ip)
		return NULL;
	ip->pid = pid;
	ip->cat = cat;
	ip->arena_fd = -1;
	ip->prog_fd = ip->threads_fd = ip->off_fd = -1;
	ret = scan(ip, cat, 0);
	if (!ret && !ip->nrts)
		ret = -ENOENT;
	if (ret) {
		fp_inproc__free(ip);
		errno = -ret;
		return NULL;
	}
	return ip;
}

int fp_inproc__refresh(struct fp_inproc *ip, const struct fp_catalog *cat)
{
	int o0 = 0, i;

	ip->cat = cat;
	for (i = 0; i < ip->nrts; i++)
		if (ip->rts[i].obj + 1 > o0)
			o0 = ip->rts[i].obj + 1;
	for (i = 0; i < ip->ngates; i++)
		if (ip->gates[i].obj + 1 > o0)
			o0 = ip->gates[i].obj + 1;
	return scan(ip, cat, o0);
}

void fp_inproc__free(struct fp_inproc *ip)
{
	int i;

	if (!ip)
		return;
	for (i = 0; i < ip->ngates; i++)	/* uprobes: closed by the pool (closer.h) */
		fp_close_later(ip->gates[i].fd);
	for (i = 0; i < ip->nhooks; i++)
		fp_close_later(ip->hooks[i]);
	free(ip->hooks);
	free(ip->offs);
	if (ip->arena)
		munmap((void *)ip->arena, ip->arena_size);
	if (ip->arena_fd >= 0)
		close(ip->arena_fd);
	fp_snapshot__free(ip->base);
	free(ip->gates);
	free(ip->rts);
	free(ip);
}

/* Whether every object holding one of region r's sites has r's gate (placed: mapped in
 * the process too). */
static bool gated(const struct fp_inproc *ip, int r, bool placed)
{
	const struct fp_region *reg;
	int i, k, found;

	if (r < 0 || r >= ip->cat->nregions)
		return false;
	reg = &ip->cat->regions[r];
	if (strlen(reg->name) >= FP_IP_NAME)	/* the arena could not name it */
		return false;
	for (k = 0; k < reg->nsites; k++) {
		for (i = 0, found = 0; i < ip->ngates && !found; i++)
			found = ip->gates[i].region == r && ip->gates[i].obj == reg->sites[k].obj &&
				(ip->gates[i].desc || !placed);
		if (!found)
			return false;
	}
	return reg->nsites > 0;
}

bool fp_inproc__can(const struct fp_inproc *ip, int r)
{
	return ip && ip->pid && gated(ip, r, true);
}

bool fp_inproc__file_can(const struct fp_catalog *cat, int r)
{
	struct fp_inproc *ip = fp_inproc__new(0, cat);	/* the file's gates, none placed */
	bool can = ip && gated(ip, r, false);

	fp_inproc__free(ip);
	return can;
}

bool fp_inproc__had_arena(const struct fp_inproc *ip)
{
	return ip && ip->arena;
}

void fp_inproc__run_member(struct fp_inproc *ip)
{
	if (!ip)
		return;
	ip->zeroed = true;
	ip->run = true;
}

bool fp_inproc__owns(const struct fp_inproc *ip, int obj, int site)
{
	const struct fp_site *st;
	int i;

	for (i = 0; ip && i < ip->ngates; i++)
		if (ip->gates[i].obj == obj && ip->gates[i].site == site && ip->gates[i].fd >= 0)
			return true;
	if (!ip || obj < 0 || obj >= ip->cat->nobjs || site < 0 ||
	    site >= ip->cat->objs[obj]->nsites)
		return false;
	st = &ip->cat->objs[obj]->sites[site];	/* the runtime's thread site, hooked */
	for (i = 0; i < ip->nrts; i++)
		if (ip->rts[i].obj == obj && ip->rts[i].hooked && ip->nhooks &&
		    !strcmp(st->provider, "featprof") && !strcmp(st->name, FP_IP_THREAD_PROBE))
			return true;
	return false;
}

void fp_inproc__each_gate(const struct fp_inproc *ip, int obj,
			  void (*fn)(void *ctx, unsigned long long off, unsigned long long ref),
			  void *ctx)
{
	int i;

	for (i = 0; ip && i < ip->ngates; i++)
		if (ip->gates[i].obj == obj)
			fn(ctx, ip->gates[i].off, ip->gates[i].ref);
}

/* --- the process's control blocks ------------------------------------------------------ */

/* Before a gate rises: each object's control block names the primary (the one a block
 * names already, from an earlier featprofd, or the first object's), whose clock is set
 * once; objects mapped later (dlopen) are told before their first gate. 0 or -errno. */
static int configure(struct fp_inproc *ip, struct fp_err *e)
{
	const struct fp_ip_clock *clk = fp_ip_clock();
	struct featprof_ip_ctl c;
	uint32_t one = 1;
	int i, ret;

	for (i = 0; i < ip->nrts; i++) {
		if (ip->rts[i].told || !ip->rts[i].ctl)	/* told, or not mapped now */
			continue;
		ret = fp_procfs_peek(ip->pid, ip->rts[i].ctl, &c, sizeof(c));
		if (ret || c.magic != FP_IP_MAGIC || c.version != FP_IP_ABI_VERSION) {
			return fp_fail(e, ret ? -ret : EPROTO, "pid %d: in-process control "
				       "block of object %d unreadable or of another version",
				       (int)ip->pid, ip->rts[i].obj);
		}
		if (!ip->primary)
			ip->primary = c.primary ? (uint64_t)(uintptr_t)c.primary : ip->rts[i].ctl;
	}
	if (!ip->primary)
		return -ENOENT;	/* no object with a runtime is mapped */
	ret = fp_procfs_peek(ip->pid, ip->primary, &c, sizeof(c));
	if (!ret && !c.configured) {	/* the clock: once per process, never changed */
		uint64_t p = ip->primary;

		ret = fp_procfs_write(ip->pid, CTL_FIELD(p, clock), &clk->clock, 4);
		ret = ret ? ret : fp_procfs_write(ip->pid, CTL_FIELD(p, tsc_mult), &clk->mult, 8);
		ret = ret ? ret : fp_procfs_write(ip->pid, CTL_FIELD(p, tsc_shift), &clk->shift, 4);
		ret = ret ? ret : fp_procfs_write(ip->pid, CTL_FIELD(p, configured), &one, 4);
	}
	if (!ret) {	/* the runtime waits for the arena at exit until it is held */
		uint32_t h = (ip->arena ? FP_IP_HANDOVER_HELD : FP_IP_HANDOVER_WANTED) |
			     (ip->run ? FP_IP_HANDOVER_FORKS : 0);

		ret = fp_procfs_write(ip->pid, CTL_FIELD(ip->primary, handover), &h, 4);
	}
	for (i = 0; i < ip->nrts && !ret; i++)
		if (!ip->rts[i].told && ip->rts[i].ctl) {
			ret = fp_procfs_write(ip->pid, CTL_FIELD(ip->rts[i].ctl, primary),
					     &ip->primary, 8);
			ip->rts[i].told = !ret;
		}
	if (ret)
		return fp_fail(e, -ret, "pid %d: cannot write its in-process control blocks: %s",
			       (int)ip->pid, strerror(-ret));
	return 0;
}

int fp_inproc__remap(struct fp_inproc *ip, struct fp_err *e)
{
	struct fp_vma *v = NULL;
	int nv, i, up = 0, ret = 0;

	if (!ip->pid || (nv = fp_read_maps(ip->pid, &v)) < 0)
		return 0;	/* gone: its exit is seen elsewhere */
	for (i = 0; i < ip->nrts; i++) {	/* unloaded, or loaded again (here or elsewhere) */
		struct rt *rt = &ip->rts[i];
		const struct fp_object *obj = ip->cat->objs[rt->obj];
		uint64_t a = addr_of(v, nv, obj, obj->ip_ctl_off), p = 0;

		if (a != rt->ctl ||
		    (rt->told && (fp_procfs_peek(ip->pid, CTL_FIELD(a, primary), &p, 8) ||
				  p != ip->primary))) {
			rt->ctl = a;
			rt->told = false;
		}
	}
	for (i = 0; i < ip->ngates && !ret; i++) {
		struct gate *g = &ip->gates[i];
		uint64_t at_gen;
		uint32_t gen = 0;

		g->desc = addr_of(v, nv, ip->cat->objs[g->obj], g->ref);
		at_gen = g->desc + offsetof(struct featprof_ipr, gen);
		up |= g->fd >= 0;
		if (g->desc && g->fd >= 0 &&	/* the kernel raised it in a new mapping */
		    (fp_procfs_peek(ip->pid, at_gen, &gen, 4) || gen != g->gen))
			ret = fp_procfs_write(ip->pid, at_gen, &g->gen, 4);
	}
	fp_free_maps(v, nv);
	if (!ret && up && !(ret = configure(ip, e)))
		fp_inproc_hook_threads(ip);
	if (ret == -ENOENT)	/* gone: nothing to write */
		return 0;
	if (ret)
		fp_fail(e, -ret, "pid %d: cannot write a region's generation: %s", (int)ip->pid,
			strerror(-ret));
	return ret;
}

/* Gates were lowered: threads drop frames of regions no longer measured. */
static void new_epoch(struct fp_inproc *ip)
{
	uint64_t e;

	if (ip->primary && !fp_procfs_peek(ip->pid, CTL_FIELD(ip->primary, epoch), &e, 8)) {
		e++;
		fp_procfs_write(ip->pid, CTL_FIELD(ip->primary, epoch), &e, 8);
	}
}

int fp_inproc__set(struct fp_inproc *ip, int r, bool on, struct fp_err *e)
{
	int i, ret = 0, raised = 0;
	uint32_t gen;

	if (!on) {
		for (i = 0; i < ip->ngates; i++)
			if (ip->gates[i].region == r && ip->gates[i].fd >= 0) {
				/* the kernel lowers the count; for a live process before the
				 * new epoch below, so here; else in the pool (closer.h) */
				if (ip->gone || fp_closer_deferring())
					fp_close_later(ip->gates[i].fd);
				else
					close(ip->gates[i].fd);
				ip->gates[i].fd = -1;
				raised++;
			}
		if (raised)
			new_epoch(ip);
		return 0;
	}
	ret = configure(ip, e);
	if (ret)
		return ret;
	if (!ip->zeroed && ip->cal) {	/* what an earlier featprofd counted stays its */
		ip->zeroed = true;
		fp_inproc__reset(ip, ip->cal, ip->cat->nregions);
	}
	for (i = 0, gen = 0; i < ip->ngates && !gen; i++)	/* a gate already up: its gen */
		if (ip->gates[i].region == r && ip->gates[i].fd >= 0)
			gen = ip->gates[i].gen;
	gen = gen ? gen : ++ip->gen;
	for (i = 0; i < ip->ngates && !ret; i++) {
		struct gate *g = &ip->gates[i];

		if (g->region != r || g->fd >= 0 || !g->desc)
			continue;
		g->gen = gen;
		ret = fp_procfs_write(ip->pid, g->desc + offsetof(struct featprof_ipr, gen), &gen,
				     4);
		if (ret) {
			fp_fail(e, -ret, "pid %d: cannot write a region's generation: %s",
				(int)ip->pid, strerror(-ret));
			break;
		}
		g->fd = fp_uprobe_gate(ip->multi, ip->cat->objs[g->obj]->host_path, g->off, g->ref,
				       ip->pid);
		if (g->fd < 0) {
			ret = g->fd;
			g->fd = -1;
			fp_fail(e, -ret, "pid %d: cannot raise a region's gate: %s",
				(int)ip->pid, strerror(-ret));
		}
	}
	if (ret)	/* as it was: the ones raised here go down again */
		fp_inproc__set(ip, r, false, NULL);
	else
		fp_inproc_hook_threads(ip);
	return ret;
}

void fp_inproc__gone(struct fp_inproc *ip)
{
	int i;

	if (!ip)
		return;
	ip->gone = true;
	for (i = 0; i < ip->nhooks; i++)	/* its threads' uprobes: nothing runs there */
		fp_close_later(ip->hooks[i]);
	ip->nhooks = 0;
}

void fp_inproc__use(struct fp_inproc *ip, const struct fp_calibration *cal, int prog_fd,
		    bool multi, int threads_fd, int off_fd, volatile uint32_t *active)
{
	ip->cal = cal;
	ip->prog_fd = prog_fd;
	ip->multi = multi;
	ip->threads_fd = threads_fd;
	ip->off_fd = off_fd;
	ip->active = active;
}
