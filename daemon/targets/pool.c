// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF objects targets share. Loading bpf/featprof.bpf.c costs a verification (~0.1 s
 * here) and ~30 descriptors (maps, programs, the scheduler's links); an object per
 * process made 250 targets 250 verifications during which no client was answered, 8,000
 * descriptors and 250 sched_switch programs run at every context switch of the machine.
 * So process targets share objects: each takes a slot (FP_POOL_SLOTS per object) and a
 * range of the object's region arrays, where its regions' entries lie (region_info,
 * region_enabled, region_stats at rbase + the catalog's index); the slot keys what is per
 * target in the object (its link generation, disable epoch, anomalies, record ring,
 * member group: bpf/featprof.bpf.c) and holds path maps of the slot's own, so a target's
 * paths are read and emptied without walking another's (made at the slot's first use and
 * emptied for each later occupant). A site's cookie carries both (FP_COOKIE). A target
 * then costs its links, its pidfd and its slot's two maps.
 *
 * Thread state (task storage, or the map by thread id) is the object's: a thread belongs
 * to one process, and a state made for a slot's former occupant (an exec, a slot given
 * again) is recognised by its occupant number and started afresh.
 *
 * An executable group's file target keeps an object of its own (attached with no pid
 * filter, its thread state must not be a member's own target's: daemon/groups/groups.c hands a
 * process from one to the other by one map write). Objects are made as targets need
 * room, and a target goes to the oldest object with room (holes fill before a new
 * object): the first shared one holds 256 region entries, each further one twice the last's
 * up to 4,096 (the per-CPU region figures are allocated whole: 4,096 entries are ~2 MB a
 * CPU); a target bigger than that gets an object its size. The last target to leave an
 * object destroys it.
 *
 * Sampling (daemon/sample/sample.c) loads its programs in an object of their own when a session
 * starts, so that targets never sampled never verify them.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "featprof.skel.h"
#include "kern/kernel.h"
#include "target_impl.h"
#include "util/stats.h"
#include "kern/uprobe.h"

#define POOL_FIRST 256
#define POOL_MAX 4096

struct fp_pool {
	struct featprof_bpf *skel;
	bool own;		/* a file's target: nobody else's */
	bool ts_map, multi, session;
	int cap;		/* region entries */
	uint8_t *rused;		/* per entry: a target's */
	uint64_t slots;		/* bit per slot in use */
	int ntargets;
	uint32_t occupants;	/* the last occupant number given (never 0) */
	__u32 inner_btf[2][2];	/* paths', path_nodes' inner map: BTF key, value type ids */
	/* the path maps at each slot (paths, path_nodes), made at its first use and kept for
	 * its later occupants (emptied): installing a map in an array of maps, or taking it
	 * out, waits for an RCU grace period (~10 ms here), twice a target otherwise */
	int slot_fd[FP_POOL_SLOTS][2];
	struct fp_pool *next;
};

static struct fp_pool *pools;
static const struct fp_daemon_cal *costs_from;
static int members_fd = -1, held_fd = -1;
static int watch_ring_fd = -1;

void fp_pool__use_calibration(const struct fp_daemon_cal *dc)
{
	costs_from = dc;
}

const struct fp_calibration *fp_pool__ip_calibration(void)
{
	return costs_from && costs_from->ip.valid ? &costs_from->ip : NULL;
}

void fp_pool__use_members_maps(int members, int held)
{
	members_fd = members;
	held_fd = held;
}

void fp_pool__use_watch_ring(int fd)
{
	watch_ring_fd = fd;
}

void fp_pool__counts(int *objects, int *targets)
{
	struct fp_pool *p;

	*objects = *targets = 0;
	for (p = pools; p; p = p->next) {
		(*objects)++;
		*targets += p->ntargets;
	}
}

/* Rounded to whole ns; a point not measured charges nothing (its figures stay raw). */
static void set_costs(struct fp_pool *p)
{
	struct featprof_bpf__bss *v = p->skel->bss;
	int a, b, k;

	/* the object's cost tables by the cookie's attach point: nop1, nop5, a function's
	 * entry and return (its first instruction emulated, single-stepped) */
	static const int point[4] = { FP_AT_NOP1, FP_AT_NOP5, FP_AT_FUNC, FP_AT_FUNC_STEP };

	for (a = 0; a < 4; a++) {
		int at = point[a];
		const struct fp_calibration *c = costs_from ? &costs_from->at[at] : NULL;

		for (b = 0; b < FP_GAP_SLOTS; b++) {
			double ns[FP_C_N] = { 0 }, sd[FP_C_N] = { 0 };

			if (c && c->valid)
				fp_cal_step(c, b, ns, sd);
			for (k = 0; k < FP_C_N; k++) {
				v->gap_cost[a][b][k] = ns[k] > 0 ? (__u32)(ns[k] + 0.5) : 0;
				v->gap_sd[a][b][k] = sd[k] > 0 ? (__u32)(sd[k] + 0.5) : 0;
				v->shared_sd[a][b][k] =
					ns[k] > 0 ? (__u32)(FP_GAP_SHARED_UNC * ns[k] + 0.5) : 0;
			}
		}
	}
}

void fp_pool__costs_changed(void)
{
	struct fp_pool *p;

	for (p = pools; p; p = p->next)
		set_costs(p);
}

/*
 * Which of the object's programs and maps this kernel gets (daemon/kern/kernel.c, bpf/
 * featprof.bpf.c "Kernels"): thread state in task storage or a map keyed by thread id,
 * the attach cookie or trampolines, the multi-uprobe link or one link per site (whose
 * program fp_site the multi link does not need). The sampler's are an object of their
 * own (bpf/sample.bpf.c).
 */
static void choose_programs(struct fp_pool *p)
{
	const struct fp_kernel_caps *k = fp_kernel_caps();
	struct featprof_bpf *s = p->skel;
	bool map = !fp_kernel_task_storage();

	p->ts_map = map;
	p->multi = k->uprobe_multi && !map;	/* 6.6: task storage is there too */
	if (p->multi) {	/* fp_ip_thread: closed with the others (daemon/kern/uprobe.h) */
		bpf_program__set_expected_attach_type(s->progs.fp_site_multi,
						      FP_ATTACH_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(s->progs.fp_ip_thread,
						      FP_ATTACH_UPROBE_MULTI);
	}
	/* function regions: one session program at entry and return where there is one */
	p->session = p->multi && k->uprobe_session;
	if (p->session)
		bpf_program__set_expected_attach_type(s->progs.fp_site_session,
						      FP_ATTACH_UPROBE_SESSION);
	bpf_program__set_autoload(s->progs.fp_site_session, p->session);
	bpf_program__set_autoload(s->progs.fp_site_multi, p->multi);
	bpf_program__set_autoload(s->progs.fp_site, !map && !p->multi);
	bpf_program__set_autoload(s->progs.fp_switch, !map);
	bpf_program__set_autoload(s->progs.fp_wakeup, !map);
	bpf_program__set_autoload(s->progs.fp_exit, !map);
	bpf_program__set_autoload(s->progs.fp_site_map, map);
	bpf_program__set_autoload(s->progs.fp_switch_map, map);
	bpf_program__set_autoload(s->progs.fp_wakeup_map, map);
	bpf_program__set_autoload(s->progs.fp_exit_map, map);
	bpf_map__set_autocreate(s->maps.tstate, !map);
	bpf_map__set_autocreate(s->maps.tstate_map, map);
	bpf_map__set_autocreate(s->maps.tstate_zero, map);
	bpf_map__set_max_entries(s->maps.tstate_map, 65536);	/* many processes' threads */
	bpf_map__set_autocreate(s->maps.site_cookie, !k->cookie);
	bpf_map__set_autocreate(s->maps.site_prog, !k->cookie);
	s->rodata->k_cookie = k->cookie;
	s->rodata->k_switch_state = k->switch_state;
}

/* The always-on programs: thread exit, context switch, wakeup. 0 or -errno. */
static int attach_scheduler(struct fp_pool *p, const char *who, struct fp_err *e)
{
	struct featprof_bpf *s = p->skel;
	bool ok_exit, ok_switch;
	int ret;

	if (p->ts_map) {
		s->links.fp_exit_map = bpf_program__attach(s->progs.fp_exit_map);
		s->links.fp_switch_map = bpf_program__attach(s->progs.fp_switch_map);
		s->links.fp_wakeup_map = bpf_program__attach(s->progs.fp_wakeup_map);
		ok_exit = s->links.fp_exit_map != NULL;
		ok_switch = s->links.fp_switch_map && s->links.fp_wakeup_map;
	} else {
		s->links.fp_exit = bpf_program__attach(s->progs.fp_exit);
		s->links.fp_switch = bpf_program__attach(s->progs.fp_switch);
		s->links.fp_wakeup = bpf_program__attach(s->progs.fp_wakeup);
		ok_exit = s->links.fp_exit != NULL;
		ok_switch = s->links.fp_switch && s->links.fp_wakeup;
	}
	if (!ok_exit || !ok_switch) {
		ret = errno ? errno : EINVAL;
		return fp_fail(e, ret, "%s: cannot attach the %s program: %s", who,
			       ok_exit ? "context-switch" : "thread-exit", strerror(ret));
	}
	return 0;
}

static void destroy(struct fp_pool *p)
{
	int s, k;

	if (!p)
		return;
	for (s = 0; s < FP_POOL_SLOTS; s++)
		for (k = 0; k < 2; k++)
			if (p->slot_fd[s][k] >= 0)
				close(p->slot_fd[s][k]);
	featprof_bpf__destroy(p->skel);
	free(p->rused);
	free(p);
}

/* A new object of cap region entries, loaded and its scheduler programs attached. */
static struct fp_pool *make(int cap, bool own, const char *who, struct fp_err *e)
{
	struct fp_pool *p = calloc(1, sizeof(*p)), **pp;
	char buf[128];
	int ret, i;

	if (p)
		memset(p->slot_fd, -1, sizeof(p->slot_fd));
	if (!p || !(p->rused = calloc((size_t)cap, 1)) || !(p->skel = featprof_bpf__open())) {
		fp_fail(e, ENOMEM, "%s: cannot open BPF object", who);
		destroy(p);
		errno = ENOMEM;
		return NULL;
	}
	p->cap = cap;
	p->own = own;
	choose_programs(p);
	bpf_map__set_max_entries(p->skel->maps.region_info, (__u32)cap);
	bpf_map__set_max_entries(p->skel->maps.region_enabled, (__u32)cap);
	bpf_map__set_max_entries(p->skel->maps.region_stats, (__u32)cap);
	if (members_fd < 0 || bpf_map__reuse_fd(p->skel->maps.members, members_fd))
		bpf_map__set_max_entries(p->skel->maps.members, 1);	/* never looked at */
	if (held_fd < 0 || bpf_map__reuse_fd(p->skel->maps.held, held_fd))
		bpf_map__set_max_entries(p->skel->maps.held, 1);
	if (watch_ring_fd >= 0)	/* else its own, unread: arenas are taken at reads only */
		bpf_map__reuse_fd(p->skel->maps.watch_events, watch_ring_fd);
	for (i = 0; i < 2; i++) {	/* libbpf lets the templates go at load */
		struct bpf_map *in = bpf_map__inner_map(i ? p->skel->maps.path_nodes
							  : p->skel->maps.paths);

		p->inner_btf[i][0] = in ? bpf_map__btf_key_type_id(in) : 0;
		p->inner_btf[i][1] = in ? bpf_map__btf_value_type_id(in) : 0;
	}
	ret = featprof_bpf__load(p->skel);
	if (ret) {
		libbpf_strerror(ret, buf, sizeof(buf));
		fp_fail(e, -ret, "%s: cannot load BPF programs: %s", who, buf);
		goto fail;
	}
	set_costs(p);
	if (!fp_kernel_caps()->cookie) {	/* the trampolines' tail-call target */
		int key = 0, fd = bpf_program__fd(p->ts_map ? p->skel->progs.fp_site_map
							     : p->skel->progs.fp_site);

		ret = bpf_map__update_elem(p->skel->maps.site_prog, &key, sizeof(key), &fd,
					   sizeof(fd), BPF_ANY);
		if (ret) {
			fp_fail(e, -ret, "%s: cannot set up the site trampolines: %s", who,
				strerror(-ret));
			goto fail;
		}
	}
	ret = attach_scheduler(p, who, e);
	if (ret)
		goto fail;
	for (pp = &pools; *pp; pp = &(*pp)->next)	/* oldest first: their holes fill first */
		;
	*pp = p;
	return p;
fail:
	destroy(p);
	errno = -ret;
	return NULL;
}

/* p off the list of objects, and destroyed: it holds no target. */
static void forget(struct fp_pool *p)
{
	struct fp_pool **pp;

	for (pp = &pools; *pp != p; pp = &(*pp)->next)
		;
	*pp = p->next;
	destroy(p);
}

/* A number no occupant of p's slots had (never 0, which a new thread state holds). */
static uint32_t next_occupant(struct fp_pool *p)
{
	if (!++p->occupants)
		p->occupants = 1;
	return p->occupants;
}

/* The first free range of n entries in p, or -1. */
static int find_range(const struct fp_pool *p, int n)
{
	int i, run = 0;

	for (i = 0; i < p->cap; i++) {
		run = p->rused[i] ? 0 : run + 1;
		if (run == n)
			return i - n + 1;
	}
	return -1;
}

/* An object with a free slot and n free entries: one there is, or a new one. */
static struct fp_pool *find_room(int n, bool own, int *base, const char *who, struct fp_err *e)
{
	struct fp_pool *p;
	int shared = 0, cap;

	for (p = pools; p && !own; p = p->next) {
		if (p->own)
			continue;
		shared++;
		if (p->slots != ~0ULL && (*base = find_range(p, n)) >= 0)
			return p;
	}
	cap = shared < 5 ? POOL_FIRST << shared : POOL_MAX;
	p = make(own || n > cap ? n : cap, own, who, e);
	*base = 0;
	return p;
}

/* Zeroes entries [from, from + n) of the per-CPU array fd (zero: a value per CPU). */
static int zero_percpu(int fd, int from, int n, void *zero)
{
	int i, ret = 0;

	for (i = 0; i < n && !ret; i++) {
		__u32 k = (__u32)(from + i);

		if (bpf_map_update_elem(fd, &k, zero, BPF_ANY))
			ret = -errno;
	}
	return ret;
}

/* The slot's and range's entries as new: nothing a former occupant left counts. */
static int clean(struct fp_pool *p, int slot, int base, int n)
{
	int ncpu = libbpf_num_possible_cpus(), i, ret;
	struct fp_region_info info = { 0 };
	__u32 zero32 = 0;
	void *zero;

	if (ncpu <= 0)
		return -EINVAL;
	zero = calloc((size_t)ncpu, sizeof(struct fp_region_stats));
	if (!zero)
		return -ENOMEM;
	ret = zero_percpu(bpf_map__fd(p->skel->maps.region_stats), base, n, zero);
	if (!ret)
		ret = zero_percpu(bpf_map__fd(p->skel->maps.anomalies), slot * FP_AN_MAX,
				  FP_AN_MAX, zero);
	if (!ret)
		ret = zero_percpu(bpf_map__fd(p->skel->maps.record_dropped), slot, 1, zero);
	for (i = 0; i < n && !ret; i++) {
		__u32 k = (__u32)(base + i);

		if (bpf_map_update_elem(bpf_map__fd(p->skel->maps.region_enabled), &k, &zero32,
					BPF_ANY) ||
		    bpf_map_update_elem(bpf_map__fd(p->skel->maps.region_info), &k, &info,
					BPF_ANY))
			ret = -errno;
	}
	free(zero);
	return ret;
}

/*
 * A map like the object's inner map of outer: its flags and BTF too (Linux 6.1 refuses an
 * inner map whose value has no BTF where the object's has: their timer offsets differ).
 */
static int inner_like(struct fp_pool *p, int which, enum bpf_map_type type, const char *name,
		      __u32 vsize)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_NO_PREALLOC);

	if (p->inner_btf[which][1]) {
		o.btf_fd = (__u32)bpf_object__btf_fd(p->skel->obj);
		o.btf_key_type_id = p->inner_btf[which][0];
		o.btf_value_type_id = p->inner_btf[which][1];
	}
	return bpf_map_create(type, name, sizeof(__u64), vsize, FP_MAX_PATHS, &o);
}

/* Every key of the hash map fd deleted. */
static int empty(int fd)
{
	__u64 k;

	while (!bpf_map_get_next_key(fd, NULL, &k))
		if (bpf_map_delete_elem(fd, &k))
			return -errno;	/* else the same key would come back forever */
	return 0;
}

/* The path maps at slot: made and installed at its first use, emptied after. */
static int slot_maps(struct fp_pool *p, int slot)
{
	int *fd = p->slot_fd[slot], k, ret;
	__u32 key = (__u32)slot;

	if (fd[0] >= 0 && fd[1] >= 0) {	/* a former occupant's paths go */
		ret = empty(fd[0]);
		return ret ? ret : empty(fd[1]);
	}
	for (k = 0; k < 2; k++) {
		if (fd[k] < 0)
			fd[k] = k ? inner_like(p, 1, BPF_MAP_TYPE_HASH, "fp_path_nodes",
					       sizeof(struct fp_path_node))
				  : inner_like(p, 0, BPF_MAP_TYPE_PERCPU_HASH, "fp_paths",
					       sizeof(struct fp_path_val));
		if (fd[k] < 0)
			return -errno;
		if (bpf_map_update_elem(bpf_map__fd(k ? p->skel->maps.path_nodes
						      : p->skel->maps.paths),
					&key, &fd[k], BPF_ANY)) {
			ret = -errno;
			close(fd[k]);
			fd[k] = -1;
			return ret;
		}
	}
	return 0;
}

int fp_pool__join(struct fp_target *t, int cap, const char *who, struct fp_err *e)
{
	struct fp_pool *p;
	int base = 0, slot, ret;

	p = find_room(cap, t->pid == 0, &base, who, e);
	if (!p)
		return -errno;
	for (slot = 0; p->slots & (1ULL << slot); slot++)
		;
	t->slot = slot;
	t->rbase = base;
	ret = clean(p, slot, base, cap);
	if (!ret && (ret = slot_maps(p, slot)))
		fp_fail(e, -ret, "%s: cannot install its path maps in the BPF object: %s", who,
			strerror(-ret));
	else if (ret)
		fp_fail(e, -ret, "%s: cannot clean its entries in the BPF object: %s", who,
			strerror(-ret));
	if (ret) {
		if (!p->ntargets)	/* made for this target */
			forget(p);
		return ret;
	}
	p->slots |= 1ULL << slot;
	memset(p->rused + base, 1, (size_t)cap);
	p->ntargets++;
	p->skel->bss->owner[slot] = next_occupant(p);
	p->skel->bss->region_base[slot] = (__u32)base;
	p->skel->bss->member_group[slot] = 0;
	p->skel->bss->link_gen[slot] = 0;
	p->skel->bss->record_on[slot] = 0;
	t->paths_fd = p->slot_fd[slot][0];
	t->nodes_fd = p->slot_fd[slot][1];
	t->pool = p;
	t->skel = p->skel;
	t->ts_map = p->ts_map;
	t->multi = p->multi;
	t->session = p->session;
	return 0;
}

void fp_pool__leave(struct fp_target *t)
{
	struct fp_pool *p = t->pool;
	__u32 zero = 0, pid = (__u32)t->pid;
	int i;

	if (!p)
		return;
	/* stop counting first; the entries are cleaned again when the range is given */
	for (i = 0; i < t->cap_regions; i++) {
		__u32 r = (__u32)(t->rbase + i);

		bpf_map_update_elem(bpf_map__fd(p->skel->maps.region_enabled), &r, &zero,
				    BPF_ANY);
	}
	__atomic_store_n(&p->skel->bss->member_group[t->slot], 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&p->skel->bss->record_on[t->slot], 0, __ATOMIC_SEQ_CST);
	/* states of its threads are nobody's from here */
	__atomic_store_n(&p->skel->bss->owner[t->slot], next_occupant(p), __ATOMIC_SEQ_CST);
	/* its record ring went at the recording's halt; its path maps stay at the slot */
	if (pid)
		bpf_map_delete_elem(bpf_map__fd(p->skel->maps.ip_arena_taken), &pid);
	t->paths_fd = t->nodes_fd = -1;
	p->slots &= ~(1ULL << t->slot);
	memset(p->rused + t->rbase, 0, (size_t)t->cap_regions);
	t->pool = NULL;
	t->skel = NULL;
	if (!--p->ntargets)
		forget(p);
}
