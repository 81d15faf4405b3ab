// SPDX-License-Identifier: GPL-2.0
/*
 * A target is one process: its probe catalog and its place in a BPF object that other
 * process targets share (daemon/targets/pool.c: a slot, and a range of the object's region
 * entries that are its alone, so one target's figures never mix with another's). Or one
 * file: an executable group's target (fp_target__new_file), with an object of its own,
 * attached with no pid filter and measuring the members that the watcher's map says
 * (daemon/groups/groups.c). Enabling a region attaches one uprobe per site, filtered to the
 * process, with FP_COOKIE in the cookie and the note's semaphore as ref_ctr_offset.
 *
 * Where the kernel has it (Linux 6.6, daemon/kern/uprobe.c), all enabled sites of a target in one
 * object are one multi-uprobe link: one syscall attaches them all. Closing a uprobe link waits for
 * an RCU grace period (~50 ms here), so links are never closed one per region: a change attaches
 * the new link set (generation g+1 in every cookie), flips link_gen, then closes the old set - one
 * wait per change, for 1 or 10,000 sites (docs/TRACING.md has the figures). Per-site perf-event
 * links remain the fallback.
 *
 * A region counts only while region_enabled says so: enable attaches, then sets it to a
 * new generation (a thread already inside sees an end without begin, counted); disable
 * clears it, bumps disable_epoch so threads drop frames of the region before their next
 * event, then detaches. A frame remembers its region's generation, so a frame begun
 * before a disable is dropped even when the region is enabled again before the thread's
 * next event. Sites that fire in between are ignored by the BPF program.
 *
 * Links are not pinned: closing the daemon's fds removes every uprobe, so a killed
 * daemon leaves the target with bare nops.
 */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bpf/featprof_bpf.h"	/* sample.skel.h's types */
#include "common/procfs.h"
#include "util/clock.h"
#include "common/err.h"
#include "featprof.skel.h"
#include "util/log.h"
#include "sample.skel.h"
#include "target_impl.h"
#include "common/strays.h"
#include "inproc/inproc.h"
#include "kern/kernel.h"
#include "kern/uprobe.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* Detaches everything and frees the BPF object; the catalog and t->last stay. */
static void target_release(struct fp_target *t)
{
	int r, k;

	fp_target__links_release(t);
	if (t->ip_on && t->cat)	/* its gates down: the arena stays readable */
		for (r = 0; r < t->cat->nregions; r++)
			if (t->ip_on[r]) {
				fp_inproc__set(t->ip, r, false, NULL);
				t->ip_on[r] = 0;
			}
	t->ip_regions = 0;
	if (t->enabled && t->cat) {
		t->points_kept = fp_target__attach_points(t);
		memset(t->enabled, 0, (size_t)t->cat->nregions);
	}
	if (t->skel)
		fp_target__record_stop(t);
	for (k = 0; k < FP_EXT_N; k++)
		if (t->ext_ops[k] && t->ext_ops[k]->release)
			t->ext_ops[k]->release(t, t->ext[k]);
	fp_pool__leave(t);
}

void fp_target__retire(struct fp_target *t)
{
	if (t->exited)
		return;
	t->exited_ns = fp_mono_ns();
	fp_snapshot__free(t->last);
	t->last = fp_target__snapshot(t);
	t->exited = 1;
	fp_inproc__gone(t->ip);
	target_release(t);
}

void fp_target__free(struct fp_target *t)
{
	int k;

	if (!t)
		return;
	target_release(t);
	fp_target__links_free(t);
	fp_inproc__free(t->ip);
	free(t->ip_on);
	fp_catalog__free(t->cat);
	fp_proc__free(t->proc);
	fp_snapshot__free(t->last);
	fp_regdefs__clear(&t->own_defs);
	fp_wants_clear(&t->wants);
	for (k = 0; k < FP_EXT_N; k++)
		if (t->ext_ops[k] && t->ext_ops[k]->free)
			t->ext_ops[k]->free(t, t->ext[k]);
	free(t->enabled);
	free(t->region_mask);
	if (t->pidfd >= 0)
		close(t->pidfd);
	free(t);
}

int fp_no_probes(const struct fp_proc *proc, const char *comm, struct fp_err *e)
{
	char prov[256] = "";
	int o, k, n = 0;

	for (o = 0; o < proc->nobjs; o++)
		for (k = 0; k < proc->objs[o]->nsites && n < 4; k++) {
			const char *p = proc->objs[o]->sites[k].provider;

			if (!strstr(prov, p) && strlen(prov) + strlen(p) + 3 < sizeof(prov)) {
				strcat(prov, n++ ? ", " : " (other stapsdt providers: ");
				strcat(prov, p);
			}
		}
	if (n)
		strcat(prov, ")");
	return fp_fail(e, ENODATA, "pid %d (%s): no featprof probes%s", (int)proc->pid, comm,
		       prov);
}

static void read_comm(struct fp_target *t)
{
	char p[64];
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/comm", (int)t->pid);
	f = fopen(p, "re");
	if (f) {
		if (fgets(t->comm, sizeof(t->comm), f))
			t->comm[strcspn(t->comm, "\n")] = 0;
		fclose(f);
	}
}

static int take_defs(struct fp_target *t, struct fp_regdefs *more, struct fp_err *e);

/* Region r's entry in region_info: its feature mask and flags. */
static int fill_region_info(struct fp_target *t, int r)
{
	struct fp_region_info info = { 0 };
	__u32 key = (__u32)(t->rbase + r);
	int f;

	for (f = 0; f < t->cat->nfeatures; f++)
		if (fp_region__has_feature(&t->cat->regions[r], t->cat->features[f]))
			info.mask |= 1ULL << f;
	if (!t->cat->regions[r].nests)
		info.flags |= FP_RI_NONEST;
	t->region_mask[r] = info.mask;
	return bpf_map__update_elem(t->skel->maps.region_info, &key, sizeof(key), &info,
				    sizeof(info), BPF_ANY);
}

/* Regions beyond those of the first catalog read: room for dlopen and definitions. */
static int region_capacity(int n)
{
	return n * 2 + 64;
}


void fp_target__use_calibration(const struct fp_daemon_cal *dc)
{
	fp_pool__use_calibration(dc);
}

void fp_target__use_members_maps(int members, int held)
{
	fp_pool__use_members_maps(members, held);
}

void fp_target__use_watch_ring(int fd)
{
	fp_pool__use_watch_ring(fd);
}

void fp_target__take_arena(struct fp_target *t)
{
	__u32 pid = (__u32)t->pid, one = 1;

	if (t->ip && t->skel && !fp_inproc__take_arena(t->ip))
		bpf_map__update_elem(t->skel->maps.ip_arena_taken, &pid, sizeof(pid), &one,
				     sizeof(one), BPF_ANY);
}

void fp_target__set_member_group(struct fp_target *t, uint32_t value)
{
	if (t->skel)
		__atomic_store_n(&t->skel->bss->member_group[t->slot], value, __ATOMIC_SEQ_CST);
}

uint32_t fp_target__member_group(const struct fp_target *t)
{
	return t->skel ? t->skel->bss->member_group[t->slot] : 0;
}

void fp_target__trap_from_now(struct fp_target *t, bool trap)
{
	t->trap_only = trap;
}

void fp_target__enabled_now(struct fp_target *t)
{
	if (!t->enabled_at_ns)
		t->enabled_at_ns = fp_mono_ns();
}

void fp_target__join_group(struct fp_target *t, int group)
{
	t->group = group;
}

void fp_target__costs_changed(void)
{
	fp_pool__costs_changed();
}

/* In-process timing's part of the target: the runtime's calibration, the BPF object's
 * thread program and maps (off-CPU time of its threads). */
static void use_inproc(struct fp_target *t)
{
	if (t->ip)
		fp_inproc__use(t->ip, fp_pool__ip_calibration(),
			       bpf_program__fd(t->skel->progs.fp_ip_thread), t->multi,
			       bpf_map__fd(t->skel->maps.ip_threads),
			       bpf_map__fd(t->skel->maps.ip_off), &t->skel->bss->ip_active);
}

int fp_target__thread_state(struct fp_target *t, int pidfd, pid_t tid, struct fp_tstate *st)
{
	__u32 key = (__u32)tid;

	if (!t->skel)
		return -EINVAL;
	if (t->ts_map)
		return bpf_map__lookup_elem(t->skel->maps.tstate_map, &key, sizeof(key), st,
					    sizeof(*st), 0);
	return bpf_map__lookup_elem(t->skel->maps.tstate, &pidfd, sizeof(pidfd), st,
				    sizeof(*st), 0);
}

/*
 * The part of a new target that is the same for a process and a file: the catalog from
 * t->proc's objects, a slot in a BPF object (daemon/targets/pool.c) and its region entries. who
 * names the target in messages. 0 or -errno with e filled.
 */
static int load(struct fp_target *t, const char *who, struct fp_err *e)
{
	int ret, r;

	t->cat = fp_catalog__new(t->proc->objs, t->proc->nobjs, t->defs);
	if (!t->cat || fp_catalog__extend(t->cat, t->proc->objs, t->proc->nobjs,
					  &t->own_defs) < 0)
		return fp_fail(e, ENOMEM, "%s: out of memory", who);
	if (!t->cat->nregions && !t->pid)
		return fp_fail(e, ENODATA, "%s: no featprof probes or defined regions in the "
			       "file itself", who);
	if (!t->cat->nregions && !t->any)
		return fp_no_probes(t->proc, t->comm, e);
	if (t->cat->nfeatures > FP_MAX_FEATURES)
		return fp_fail(e, E2BIG, "%s: %d features, at most %d supported", who,
			       t->cat->nfeatures, FP_MAX_FEATURES);
	t->cap_regions = region_capacity(t->cat->nregions);
	t->enabled = calloc((size_t)t->cap_regions, 1);
	t->region_mask = calloc((size_t)t->cap_regions, sizeof(*t->region_mask));
	t->ip_on = calloc((size_t)t->cap_regions, 1);
	/* no attach cookie: a trampoline per region and point, made at its attach */
	if (!t->enabled || !t->region_mask || !t->ip_on ||
	    fp_target__links_new(t, !fp_kernel_caps()->cookie)) {
		return fp_fail(e, ENOMEM, "%s: out of memory", who);
	}
	ret = fp_pool__join(t, t->cap_regions, who, e);
	if (ret)
		return ret;
	for (r = 0; r < t->cat->nregions; r++) {
		ret = fill_region_info(t, r);
		if (ret)
			return fp_fail(e, -ret, "%s: cannot fill the region map: %s", who,
				       strerror(-ret));
	}
	/* objects built with FEATPROF_INPROCESS: their regions can time themselves */
	t->ip = t->pid ? fp_inproc__new(t->pid, t->cat) : NULL;
	if (!t->ip && errno != ENOENT && t->pid)
		fp_log(FP_LOG_WARN, "%s: in-process timing not available: %s", who,
		       strerror(errno));
	use_inproc(t);
	return 0;
}

struct fp_target *fp_target__new(pid_t pid, int flags, const struct fp_regdefs *defs,
				 struct fp_regdefs *more, struct fp_err *e)
{
	struct fp_target *t = calloc(1, sizeof(*t));
	char who[32];
	int ret = 0;

	if (!t) {
		errno = -fp_fail(e, ENOMEM, "out of memory");
		return NULL;
	}
	t->pid = pid;
	t->made_ns = fp_mono_ns();	/* before anything of the process is read */
	t->use_opt = flags & FP_TARGET_SHIELDED;
	t->any = flags & FP_TARGET_ANY;
	t->defs = defs;
	t->paths_fd = t->nodes_fd = -1;
	t->start_time = fp_procfs_start_time(pid);
	t->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (t->pidfd < 0) {
		ret = fp_fail(e, errno, "pid %d: %s", (int)pid,
			      errno == ESRCH ? "no such process" : strerror(errno));
		goto fail;
	}
	read_comm(t);
	ret = fp_proc__read(pid, &t->proc, e);
	if (ret)
		goto fail;
	ret = more ? take_defs(t, more, e) : 0;
	if (ret < 0)
		goto fail;
	snprintf(who, sizeof(who), "pid %d", (int)pid);
	ret = load(t, who, e);
	if (ret)
		goto fail;
	return t;
fail:
	fp_target__free(t);
	errno = -ret;
	return NULL;
}

struct fp_target *fp_target__new_file(int fd, const char *path, int group, int use_opt,
				      const struct fp_regdefs *defs, struct fp_err *e)
{
	struct fp_target *t = calloc(1, sizeof(*t));
	struct fp_object *obj = NULL;
	const char *base = strrchr(path, '/');
	char host[64];
	int ret = -ENOMEM, own;

	if (!t || !(t->proc = calloc(1, sizeof(*t->proc))) ||
	    !(t->proc->objs = calloc(1, sizeof(*t->proc->objs)))) {
		fp_fail(e, ENOMEM, "%s: out of memory", path);
		goto fail;
	}
	t->pidfd = -1;
	t->paths_fd = t->nodes_fd = -1;
	t->use_opt = use_opt;
	t->defs = defs;
	t->group = group;
	snprintf(t->comm, sizeof(t->comm), "%s", base ? base + 1 : path);
	/* the inode the group was keyed by, not whatever the path names now; the object
	 * holds its own descriptor (closed with it) */
	own = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (own < 0) {
		ret = fp_fail(e, errno, "%s: %s", path, strerror(errno));
		goto fail;
	}
	snprintf(host, sizeof(host), "/proc/self/fd/%d", own);
	ret = fp_object__read(host, path, &obj, e);
	if (ret) {
		close(own);
		goto fail;
	}
	obj->fd = own;
	t->proc->objs[t->proc->nobjs++] = obj;
	ret = load(t, path, e);
	if (ret)
		goto fail;
	fp_target__set_member_group(t, (uint32_t)group);
	return t;
fail:
	fp_target__free(t);
	errno = -ret;
	return NULL;
}

static int wanted(const struct fp_target *t, int r)
{
	const struct fp_region *reg = &t->cat->regions[r];
	int i;

	if (t->wants.all)
		return 1;
	for (i = 0; i < t->wants.nregions; i++)
		if (!strcmp(t->wants.regions[i], reg->name))
			return 1;
	for (i = 0; i < t->wants.nfeatures; i++)
		if (fp_region__has_feature(reg, t->wants.features[i]))
			return 1;
	return 0;
}

int fp_target__apply_wants(struct fp_target *t, int on, struct fp_err *e)
{
	uint8_t *sel = calloc((size_t)t->cat->nregions + 1, 1);
	int r, ret;

	if (!sel)
		return -ENOMEM;
	for (r = 0; r < t->cat->nregions; r++)
		sel[r] = (uint8_t)(on ? wanted(t, r) && !(t->file_skips_ip &&
							 fp_inproc__file_can(t->cat, r))
				      : t->enabled[r] && !wanted(t, r));
	ret = fp_target__set_regions(t, sel, on, e);
	free(sel);
	return ret;
}

int fp_target__set_wants(struct fp_target *t, const struct fp_wants *w)
{
	return fp_wants_copy(&t->wants, w);
}

/* Would the catalog over the process's objects and all definitions fit the object? */
static int check_fits(struct fp_target *t, struct fp_err *e)
{
	struct fp_catalog *c = fp_catalog__new(t->proc->objs, t->proc->nobjs, t->defs);
	int ret = 0;

	if (!c || fp_catalog__extend(c, t->proc->objs, t->proc->nobjs, &t->own_defs) < 0)
		ret = -ENOMEM;
	else if (c->nregions > t->cap_regions || c->nfeatures > FP_MAX_FEATURES)
		ret = -E2BIG;
	if (ret == -E2BIG)
		fp_fail(e, E2BIG, "pid %d: %d regions and %d features would exceed this "
			"target's room (%d, %d): detach and attach again", (int)t->pid,
			c->nregions, c->nfeatures, t->cap_regions, FP_MAX_FEATURES);
	else if (ret)
		fp_fail(e, ENOMEM, "pid %d: out of memory", (int)t->pid);
	fp_catalog__free(c);
	return ret;
}

/*
 * After the catalog grew from n0 regions: every region's map entry filled, the new
 * objects' in-process runtimes and gates taken, and a region measured in-process whose
 * sites grew (nsites0: each old region's sites before) gets its new gates up. 0 or -errno
 * (e filled).
 */
static int join_regions(struct fp_target *t, int n0, const int *nsites0, struct fp_err *e)
{
	int r, ret = 0;

	for (r = 0; r < t->cat->nregions; r++) {
		ret = fill_region_info(t, r);
		if (ret)
			return fp_fail(e, -ret, "pid %d: cannot fill the region map: %s",
				       (int)t->pid, strerror(-ret));
	}
	if (t->ip)	/* the new objects' runtimes and gates */
		ret = fp_inproc__refresh(t->ip, t->cat);
	else if (!(t->ip = fp_inproc__new(t->pid, t->cat)) && errno != ENOENT)
		ret = -errno;
	use_inproc(t);
	if (ret)
		return fp_fail(e, -ret, "pid %d: in-process timing of its new objects: %s",
			       (int)t->pid, strerror(-ret));
	for (r = 0; r < n0; r++)	/* a region measured in-process that gained a gate */
		if (t->ip_on[r] && t->cat->regions[r].nsites != nsites0[r] &&
		    (ret = fp_inproc__set(t->ip, r, true, e)))
			return ret;
	return 0;
}

int fp_target__refresh(struct fp_target *t, struct fp_err *e)
{
	int n0, r, ret, added, *nsites0 = NULL;
	uint8_t *sel = NULL;
	int force = 0, any = 0;

	if (t->exited || !t->skel)
		return -EINVAL;
	ret = fp_proc__refresh(t->proc, e);
	t->cat->objs = t->proc->objs;	/* the array may have moved */
	if (ret < 0)
		return ret;
	if (t->ip && (added = fp_inproc__remap(t->ip, e)))
		return added;	/* (a library loaded again: its runtime is told) */
	if (!ret && !t->defs_added)	/* no object mapped, no definition: as it was */
		return 0;
	t->defs_added = 0;
	n0 = t->cat->nregions;
	ret = check_fits(t, e);
	if (ret)
		return ret;
	nsites0 = calloc((size_t)n0 + 1, sizeof(*nsites0));
	if (!nsites0)
		return fp_fail(e, ENOMEM, "pid %d: out of memory", (int)t->pid);
	for (r = 0; r < n0; r++)
		nsites0[r] = t->cat->regions[r].nsites;
	added = fp_catalog__extend(t->cat, t->proc->objs, t->proc->nobjs, t->defs);
	if (added >= 0) {
		ret = fp_catalog__extend(t->cat, t->proc->objs, t->proc->nobjs, &t->own_defs);
		added = ret < 0 ? ret : added + ret;
	}
	if (added <= 0) {
		free(nsites0);
		if (added < 0)
			fp_fail(e, -added, "pid %d: out of memory", (int)t->pid);
		return added;
	}
	ret = join_regions(t, n0, nsites0, e);
	if (ret)
		goto out;
	sel = calloc((size_t)t->cat->nregions, 1);
	if (!sel) {
		ret = -ENOMEM;
		goto out;
	}
	for (r = 0; r < t->cat->nregions; r++) {
		int grew = r < n0 && t->enabled[r] && !t->ip_on[r] &&
			   t->cat->regions[r].nsites != nsites0[r];

		if (r >= n0 && wanted(t, r))
			sel[r] = 1, any = 1;
		if (grew && !t->multi) {	/* per-site links: attach the region again */
			ret = fp_target__set_region(t, r, 0, e);
			if (!ret)
				ret = fp_target__set_region(t, r, 1, e);
			if (ret)
				goto out;
		}
		force |= grew;
	}
	ret = any || force ? fp_target__links_set(t, sel, 1, force, e) : 0;
out:
	free(sel);
	free(nsites0);
	return ret ? ret : t->cat->nregions - n0;
}

/* Checks more's probes against the process and moves the new ones into own_defs; returns
 * how many were moved, or -errno (nothing moved). */
static int take_defs(struct fp_target *t, struct fp_regdefs *more, struct fp_err *e)
{
	struct fp_regdef *a;
	int i, j, n0 = t->own_defs.ndefs;

	for (i = 0; i < more->ndefs && !more->lenient; i++) {
		char what[32];

		snprintf(what, sizeof(what), "pid %d", (int)t->pid);
		int ret = fp_regdef__check(t->proc->objs, t->proc->nobjs, &more->defs[i], what,
					   e);

		if (ret)
			return ret;
	}
	a = realloc(t->own_defs.defs, sizeof(*a) * (size_t)(n0 + more->ndefs + 1));
	if (!a)
		return -ENOMEM;
	t->own_defs.defs = a;
	for (i = 0; i < more->ndefs; i++) {
		int dup = 0;

		for (j = 0; j < t->own_defs.ndefs && !dup; j++)
			dup = !strcmp(a[j].name, more->defs[i].name) &&
			      (strcmp(a[j].name, "*") || fp_regdef__equal(&a[j], &more->defs[i]));
		if (dup)
			continue;
		a[t->own_defs.ndefs++] = more->defs[i];
		memset(&more->defs[i], 0, sizeof(more->defs[i]));
	}
	fp_regdefs__clear(more);	/* what is left: the duplicates */
	t->defs_added = t->own_defs.ndefs > n0;
	return t->own_defs.ndefs - n0;
}

bool fp_target__pending_feature(const void *target, const char *feature)
{
	const struct fp_target *t = target;
	int i, k;

	for (i = 0; i < t->own_defs.ndefs; i++)
		for (k = 0; t->own_defs.defs[i].nfuncs && k < t->own_defs.defs[i].nfeatures; k++)
			if (!strcmp(t->own_defs.defs[i].features[k], feature))
				return true;
	return false;
}

int fp_target__add_defs(struct fp_target *t, struct fp_regdefs *more, struct fp_err *e)
{
	int n0 = t->own_defs.ndefs, ret;

	if (t->exited || !t->skel)
		return -EINVAL;
	ret = fp_proc__refresh(t->proc, e);
	t->cat->objs = t->proc->objs;
	if (ret < 0)
		return ret;
	ret = take_defs(t, more, e);
	if (ret <= 0)
		return ret;
	ret = fp_target__refresh(t, e);
	if (ret < 0)	/* not applied: not kept */
		fp_regdefs__truncate(&t->own_defs, n0);
	return ret;
}
