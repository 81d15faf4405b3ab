// SPDX-License-Identifier: GPL-2.0
/*
 * Sampling (featprof sample): per region and per feature time from periodic samples of
 * the target's threads, attributed exactly by the region stack the program itself keeps
 * in thread-local storage (usdt/featprof.h, FEATPROF_SAMPLING).
 *
 * Start: the TLS offset of featprof_tls from the executable's ELF (symbol st_value minus
 * the PT_TLS block rounded up to its alignment: x86-64's variant II, the executable's
 * block ends at the thread pointer), one cpu-clock perf event per thread (inherited by
 * threads created later) with a fixed period (1e9/hz ns of the thread's CPU time, so a
 * sample stands for exactly that much), the BPF program fp_sample attached to each.
 * Samples count per distinct stack in the kernel.
 * Report: each stack's ids are named by reading the string they point to in the target
 * (process_vm_readv, once per id; the daemon names new ids every 200 ms while sampling,
 * so that a target that exits keeps its names), then summed: a region's samples are the
 * stacks that contain it (once, recursion or not), its exclusive samples the stacks it
 * tops; a feature's the stacks with any of its regions; feature sets by the union of
 * features; base the empty stack. Standard error of a count c of n: sqrt(p(1-p)/n) * n
 * with p = c/n (binomial), in ns times the period.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "closer.h"
#include "featprof.skel.h"
#include "featprof.h"
#include "kernel.h"
#include "log.h"
#include "pool.h"
#include "sample.h"
#include "sample_elf.h"
#include "sample_stacks.h"
#include "sample.skel.h"
#include "sampler.h"
#include "uprobe.h"

_Static_assert(sizeof(struct featprof_tls) == sizeof(struct fp_tls_user),
	       "usdt/featprof.h and bpf/featprof_bpf.h disagree on the TLS layout");
/* the stack map's entries (sample --stacks): ~1 KiB each, 4 MiB in all */
#define FP_STACK_IDS 4096

_Static_assert(FP_TLS_MAGIC == FP_TLS_MAGIC_BPF && FP_TLS_DEPTH == FP_TLS_SLOTS,
	       "usdt/featprof.h and bpf/featprof_bpf.h disagree on the TLS ABI");

int fp_target__sample_reset(struct fp_target *t)
{
	int ncpu = libbpf_num_possible_cpus(), mfd, ret;
	struct fp_sample_key k;
	__u32 a;

	if (!t->sskel)
		return 0;
	mfd = bpf_map__fd(t->sskel->maps.samples);
	while (!bpf_map_get_next_key(mfd, NULL, &k))
		if (bpf_map_delete_elem(mfd, &k))
			return -errno;	/* else the same key would come back forever */
	for (a = 0; a < FP_SA_MAX; a++) {
		uint64_t zero[ncpu > 0 ? ncpu : 1];

		memset(zero, 0, sizeof(zero));
		ret = bpf_map__update_elem(t->sskel->maps.sample_anomalies, &a, sizeof(a), zero,
					   sizeof(zero), BPF_ANY);
		if (ret)
			return ret;
	}
	if (t->sskel_stacks) {	/* the stacks go with the samples that named them */
		__u32 id;

		mfd = bpf_map__fd(t->sskel->maps.ustacks);
		while (!bpf_map_get_next_key(mfd, NULL, &id))
			if (bpf_map_delete_elem(mfd, &id))
				return -errno;
	}
	fp_stacks__free(t->stacks);
	t->stacks = NULL;
	if (t->sample_stacks && !(t->stacks = fp_stacks__new(FP_STACK_IDS)))
		return -ENOMEM;
	t->sskel->bss->sample_session++;	/* threads' unmatched counts start again */
	t->sample_start_ns = fp_mono_ns();
	return 0;
}

/* --remote: the switch hook and the task iterator over the target's threads, ticked by
 * the sampler thread. */
static int remote_start(struct fp_target *t, int hz, char *err, size_t errlen)
{
	union bpf_iter_link_info li = { .task.pid = (__u32)t->pid };
	LIBBPF_OPTS(bpf_iter_attach_opts, io, .link_info = &li, .link_info_len = sizeof(li));
	pid_t tid = fp_sampler_tid();
	struct bpf_link *it;
	int ret;

	if (!tid) {
		snprintf(err, errlen, "pid %d: cannot start the sampler thread", (int)t->pid);
		return -EAGAIN;
	}
	t->sample_links = calloc(2, sizeof(*t->sample_links));
	if (!t->sample_links)
		return -ENOMEM;
	if (!fp_sampler_realtime())
		fp_log(FP_LOG_WARN, "pid %d: the sampler thread is not SCHED_FIFO (no "
		       "CAP_SYS_NICE): samples on a CPU shared with a busy target thread wait "
		       "for it",
		       (int)t->pid);
	t->sskel->bss->sampler_tid = (uint32_t)tid;
	t->sample_links[0] = bpf_program__attach(t->sskel->progs.fp_sample_switch);
	if (!t->sample_links[0])
		goto fail;
	t->nsample_links = 1;
	it = bpf_program__attach_iter(t->sskel->progs.fp_sample_remote, &io);
	if (!it)
		goto fail;
	t->sample_links[t->nsample_links++] = it;
	t->sampler = fp_sampler_add(bpf_link__fd(it),
				    (volatile uint64_t *)t->sskel->bss->sample_cpus, hz);
	if (!t->sampler)
		goto fail;
	return 0;
fail:
	ret = -errno;
	snprintf(err, errlen, "pid %d: cannot attach the remote sampler: %s", (int)t->pid,
		 strerror(errno));
	return ret ? ret : -EINVAL;
}

/*
 * One cpu-clock event per thread, inherited by the threads it creates later: it counts
 * the thread's own CPU time, carrying the rest of a period across descheduling. A
 * per-CPU event would count the CPU's time, and a thread that sleeps and wakes on a
 * timer can be woken at the sampler's tick (timer slack coalesces them), every burst
 * then sampled at the same offsets: that biased shares by up to 9 points on the truth
 * target (docs/TRACING.md). 0 or -errno (err filled; the links made so far stay in t).
 */
static int clock_start(struct fp_target *t, int hz, char *err, size_t errlen)
{
	struct bpf_program *prog = t->sample_src == FP_SRC_TLS ? t->sskel->progs.fp_sample
				   : t->ts_map ? t->sskel->progs.fp_sample_tm
					       : t->sskel->progs.fp_sample_ts;
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 1000000000ULL / (unsigned)hz,
		.inherit = 1,
	};
	struct dirent *de;
	char path[64];
	DIR *dir;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)t->pid);
	dir = opendir(path);
	if (!dir) {
		snprintf(err, errlen, "pid %d: cannot list its threads: %s", (int)t->pid,
			 strerror(errno));
		return -errno;
	}
	while (!ret && (de = readdir(dir))) {
		long tid = strtol(de->d_name, NULL, 10);
		struct bpf_link *l, **g;
		int pfd;

		if (tid <= 0)
			continue;
		pfd = (int)syscall(SYS_perf_event_open, &attr, (pid_t)tid, -1, -1,
				   PERF_FLAG_FD_CLOEXEC);
		if (pfd < 0) {
			if (errno == ESRCH)	/* the thread exited meanwhile */
				continue;
			ret = -errno;
			snprintf(err, errlen, "pid %d: cannot open a cpu-clock event on thread "
				 "%ld: %s", (int)t->pid, tid, strerror(errno));
			break;
		}
		g = realloc(t->sample_links, (size_t)(t->nsample_links + 1) * sizeof(*g));
		l = g ? bpf_program__attach_perf_event(prog, pfd) : NULL;
		if (g)
			t->sample_links = g;
		if (!l) {
			ret = g ? -errno : -ENOMEM;
			close(pfd);
			snprintf(err, errlen, "pid %d: cannot attach the sampler to thread %ld: %s",
				 (int)t->pid, tid, strerror(-ret));
			break;
		}
		t->sample_links[t->nsample_links++] = l;	/* owns pfd */
	}
	closedir(dir);
	return ret;
}

/* FEATPROF_SAMPLING_GATED: the kernel raises the semaphore at sem_off in the process
 * while the gate's uprobe is attached. 0 or -errno (err filled). */
static int gate_start(struct fp_target *t, uint64_t gate_off, uint64_t sem_off, char *err,
		      size_t errlen)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)t->pid);
	fd = fp_uprobe_gate(t->multi, path, gate_off, sem_off, t->pid);
	if (fd > 0) {
		t->sample_gate = fd;
		return 0;
	}
	snprintf(err, errlen, "pid %d: cannot raise its sampling gate: %s", (int)t->pid,
		 strerror(fd < 0 ? -fd : EBADF));
	return fd < 0 ? fd : -EBADF;
}

/* A fresh session: the figures and ids of an earlier one go, the object reads the
 * program's region stack at off (and its gate). 0 or -errno (err filled). */
static int session_start(struct fp_target *t, int64_t off, bool gated, char *err,
			 size_t errlen)
{
	int ret = fp_target__sample_reset(t);

	if (ret) {
		snprintf(err, errlen, "pid %d: cannot reset its sampled figures: %s", (int)t->pid,
			 strerror(-ret));
		return ret;
	}
	json_object_put(t->sample_last);
	t->sample_last = NULL;
	free(t->sample_ids);
	t->sample_ids = NULL;
	t->nsample_ids = 0;
	t->sskel->bss->sample_tls_off = off;
	t->sskel->bss->sample_gated = gated;
	t->sskel->bss->sample_session++;
	t->sskel->bss->sample_stacks = t->sample_stacks;
	if (t->sample_src == FP_SRC_KERNEL) {	/* whose thread states are the target's */
		t->sskel->bss->sample_slot = (uint32_t)t->slot;
		t->sskel->bss->sample_owner = t->skel->bss->owner[t->slot];
		t->sskel->bss->sample_rbase = (uint32_t)t->rbase;
	}
	t->sample_gated = gated;
	fp_sample_probe_sites(t);
	return 0;
}

/*
 * Sampling's programs and maps (bpf/sample.bpf.c) in an object of the target's own, made
 * at its first session, again where a session needs another shape: a stack map
 * (--stacks), or the target's thread states and enabled regions (FP_SRC_KERNEL: its
 * object's maps, shared by descriptor). 0 or -errno (err filled).
 */
static int sample_object(struct fp_target *t, char *err, size_t errlen)
{
	const struct fp_kernel_caps *k = fp_kernel_caps();
	bool kern = t->sample_src == FP_SRC_KERNEL;
	struct sample_bpf *s;
	char buf[128];
	int ret = 0;

	if (t->sskel && t->sskel_stacks == t->sample_stacks && t->sskel_src == t->sample_src)
		return 0;
	if (t->sskel) {	/* between sessions: no link holds it; the stop kept the figures */
		sample_bpf__destroy(t->sskel);
		t->sskel = NULL;
	}
	s = sample_bpf__open();
	if (!s) {
		snprintf(err, errlen, "pid %d: cannot open the sampler's BPF object", (int)t->pid);
		return -ENOMEM;
	}
	bpf_program__set_autoload(s->progs.fp_sample_remote, k->copy_from_user_task);
	bpf_program__set_autoload(s->progs.fp_sample_switch, k->copy_from_user_task);
	bpf_program__set_autoload(s->progs.fp_sample, !kern);
	bpf_program__set_autoload(s->progs.fp_sample_ts, kern && !t->ts_map);
	bpf_program__set_autoload(s->progs.fp_sample_tm, kern && t->ts_map);
	bpf_map__set_autocreate(s->maps.tstate, kern && !t->ts_map);
	bpf_map__set_autocreate(s->maps.tstate_map, kern && t->ts_map);
	if (t->sample_stacks)
		ret = bpf_map__set_max_entries(s->maps.ustacks, FP_STACK_IDS);
	if (!ret && kern)
		ret = bpf_map__reuse_fd(t->ts_map ? s->maps.tstate_map : s->maps.tstate,
					bpf_map__fd(t->ts_map ? t->skel->maps.tstate_map
							      : t->skel->maps.tstate));
	if (!ret && kern)
		ret = bpf_map__reuse_fd(s->maps.region_enabled,
					bpf_map__fd(t->skel->maps.region_enabled));
	if (!ret)
		ret = sample_bpf__load(s);
	if (ret) {
		libbpf_strerror(ret, buf, sizeof(buf));
		snprintf(err, errlen, "pid %d: cannot load the sampler's BPF programs: %s",
			 (int)t->pid, buf);
		sample_bpf__destroy(s);
		return ret;
	}
	t->sskel = s;
	t->sskel_stacks = t->sample_stacks;
	t->sskel_src = t->sample_src;
	return 0;
}

/* Regions traced by traps now: the kernel keeps which are open on each thread. */
static int trapped_regions(const struct fp_target *t)
{
	int r, n = 0;

	for (r = 0; t->enabled && r < t->cat->nregions; r++)
		n += t->enabled[r] && !(t->ip_on && t->ip_on[r]);
	return n;
}

/*
 * Where the open regions are read: the program's TLS stack where its executable keeps
 * one (FEATPROF_SAMPLING: every region, enabled or not), else the kernel's state of the
 * regions featprofd traces. 0 or -errno (err filled).
 */
static int choose_source(struct fp_target *t, int remote, uint64_t *gate_off,
			 uint64_t *sem_off, int64_t *off, char *err, size_t errlen)
{
	int ret = fp_sample_tls_abi(t->pid, gate_off, sem_off, err, errlen);

	if (!ret) {
		t->sample_src = FP_SRC_TLS;
		ret = fp_sample_tls_offset(t->pid, off, err, errlen);
		return ret ? ret : fp_sample_one_stack(t, err, errlen);
	}
	if (ret != -ENOENT)
		return ret;
	if (!trapped_regions(t)) {
		snprintf(err, errlen, "pid %d: no region is traced and its executable keeps no "
			 "region stack of its own: featprof enable %d FEATURE first (or build "
			 "with FEATPROF_SAMPLING)", (int)t->pid, (int)t->pid);
		return -ENOENT;
	}
	if (remote) {
		snprintf(err, errlen, "pid %d: sample --remote reads a FEATPROF_SAMPLING "
			 "build's region stack only; its regions are traced: sample without "
			 "--remote", (int)t->pid);
		return -EOPNOTSUPP;
	}
	t->sample_src = FP_SRC_KERNEL;
	*off = 0;
	return 0;
}

int fp_target__sample_start(struct fp_target *t, int hz, int remote, int stacks, char *err,
			    size_t errlen)
{
	uint64_t gate_off = 0, sem_off = 0;
	int64_t off = 0;
	int ret;

	if (!t->skel) {
		snprintf(err, errlen, "pid %d: exited", (int)t->pid);
		return -ESRCH;
	}
	if (t->nsample_links) {
		snprintf(err, errlen, "pid %d: already sampling", (int)t->pid);
		return -EBUSY;
	}
	if (remote && !fp_kernel_caps()->copy_from_user_task) {
		snprintf(err, errlen, "sample --remote needs bpf_copy_from_user_task (Linux "
			 "5.18), which this kernel lacks: sample without --remote");
		return -EOPNOTSUPP;
	}
	if (remote && stacks) {
		snprintf(err, errlen, "sample --stacks interrupts each thread to walk its "
			 "stack: sample without --remote");
		return -EOPNOTSUPP;
	}
	ret = choose_source(t, remote, &gate_off, &sem_off, &off, err, errlen);
	t->sample_stacks = stacks;
	if (!ret)
		ret = sample_object(t, err, errlen);
	if (!ret)
		ret = session_start(t, off, gate_off != 0, err, errlen);
	if (ret)
		return ret;
	__atomic_store_n(&t->sskel->bss->sample_tgid, (uint32_t)t->pid, __ATOMIC_SEQ_CST);
	if (gate_off && (ret = gate_start(t, gate_off, sem_off, err, errlen))) {
		__atomic_store_n(&t->sskel->bss->sample_tgid, 0, __ATOMIC_SEQ_CST);
		return ret;
	}
	t->sample_remote = remote;
	t->sample_ticks = t->sample_missed = 0;
	ret = remote ? remote_start(t, hz, err, errlen) : clock_start(t, hz, err, errlen);
	if (ret) {
		if (!t->sample_links)	/* nothing to stop */
			return ret;
		t->sample_hz = hz;
		fp_target__sample_stop(t);
		json_object_put(t->sample_last);	/* not a round that ran */
		t->sample_last = NULL;
		t->sample_hz = 0;
		return ret;
	}
	t->sample_hz = hz;
	t->sample_tls_off = off;
	t->sample_start_ns = fp_mono_ns();
	t->sample_stop_ns = 0;
	return 0;
}

void fp_target__sample_stop(struct fp_target *t)
{
	int i;

	if (!t->sample_links)
		return;
	if (t->sampler) {	/* no tick after this */
		fp_sampler_counts(t->sampler, &t->sample_ticks, &t->sample_missed);
		fp_sampler_remove(t->sampler);
		t->sampler = NULL;
	}
	if (t->sskel && !t->sample_last)
		t->sample_last = fp_sample_report(t);	/* the figures outlive the object */
	if (t->sample_gate > 0 && (t->exited || fp_closer_deferring()))	/* by the pool */
		fp_close_later(t->sample_gate);
	else if (t->sample_gate > 0)
		close(t->sample_gate);	/* the gate falls: the stack drains */
	t->sample_gate = 0;
	for (i = 0; i < t->nsample_links; i++)
		bpf_link__destroy(t->sample_links[i]);
	free(t->sample_links);
	t->sample_links = NULL;
	t->nsample_links = 0;
	t->sample_stop_ns = fp_mono_ns();
	if (t->sskel)
		__atomic_store_n(&t->sskel->bss->sample_tgid, 0, __ATOMIC_SEQ_CST);
	if (t->sample_last)	/* the report was taken before the stop: fix its span */
		json_object_object_add(t->sample_last, "active", json_object_new_boolean(0));
}

const char *fp_target__sample_source(const struct fp_target *t)
{
	return t->sample_src == FP_SRC_TLS ? "its TLS region stack" : "the regions traced";
}

/* The region an id names (FP_SRC_TLS: the string at that address in the target, cached;
 * FP_SRC_KERNEL: the region's index); -1 when it names none of the catalog's. */
static int region_of(struct fp_target *t, uint64_t id)
{
	char name[128] = "";
	struct iovec local = { name, sizeof(name) - 1 }, remote = { (void *)id, sizeof(name) - 1 };
	int i, r;

	if (t->sample_src == FP_SRC_KERNEL)
		return id < (uint64_t)t->cat->nregions ? (int)id : -1;
	for (i = 0; i < t->nsample_ids; i++)
		if (t->sample_ids[i].id == id)
			return t->sample_ids[i].region;
	/* a read may stop at the end of a mapping: fall back to smaller reads */
	if (process_vm_readv(t->pid, &local, 1, &remote, 1, 0) <= 0) {
		local.iov_len = remote.iov_len = 32;
		if (process_vm_readv(t->pid, &local, 1, &remote, 1, 0) <= 0)
			name[0] = 0;
	}
	name[sizeof(name) - 1] = 0;
	r = name[0] ? fp_catalog__region(t->cat, name) : -1;
	if (t->nsample_ids % 64 == 0) {
		struct fp_sample_id *g = realloc(t->sample_ids, (size_t)(t->nsample_ids + 64) *
							       sizeof(*g));

		if (!g)
			return r;
		t->sample_ids = g;
	}
	t->sample_ids[t->nsample_ids].id = id;
	t->sample_ids[t->nsample_ids++].region = r;
	return r;
}

void fp_target__sample_name(struct fp_target *t)
{
	struct fp_sample_key key, prev;
	int mfd, have, k;

	if (!t->sskel || !t->nsample_links)
		return;
	mfd = bpf_map__fd(t->sskel->maps.samples);
	for (have = !bpf_map_get_next_key(mfd, NULL, &key); have;
	     prev = key, have = !bpf_map_get_next_key(mfd, &prev, &key)) {
		for (k = 0; k < (int)key.depth && k < FP_TLS_SLOTS; k++)
			region_of(t, key.ids[k]);
		if (t->stacks && key.ustack >= 0)
			fp_stacks__get(t->stacks, bpf_map__fd(t->sskel->maps.ustacks), key.ustack,
				       t->pid, t->proc);
	}
}

static struct json_object *figure(uint64_t c, uint64_t n, double period)
{
	struct json_object *o = json_object_new_object();
	double p = n ? (double)c / (double)n : 0;
	double se = sqrt(p * (1 - p) / (n ? (double)n : 1)) * (double)n * period;

	json_object_object_add(o, "samples", json_object_new_int64((int64_t)c));
	json_object_object_add(o, "sampled_ns", json_object_new_double((double)c * period));
	json_object_object_add(o, "sampled_stderr_ns", json_object_new_double(se));
	json_object_object_add(o, "share", json_object_new_double(p));
	return o;
}

/* Ends whose region was not on the thread's stack, this session, summed over the threads
 * sampled: in a gated build, chiefly the regions that were open when the gate rose. */
static uint64_t unmatched(struct fp_target *t)
{
	int mfd = bpf_map__fd(t->sskel->maps.sample_threads), have = 0;
	struct fp_sample_thread v;
	uint32_t k, prev = 0;
	uint64_t n = 0;

	while (!bpf_map_get_next_key(mfd, have ? &prev : NULL, &k)) {
		have = 1;
		prev = k;
		if (!bpf_map_lookup_elem(mfd, &k, &v) &&
		    v.session == t->sskel->bss->sample_session && v.last > v.base)
			n += v.last - v.base;
	}
	return n;
}

/* The samples counted per region, feature, feature set and path. */
struct tally {
	uint64_t *incl, *excl, feat[FP_MAX_FEATURES], n, base, unknown, deeper;
	uint64_t set_mask[256], set_n[256], overflow_sets;
	int nsets;
	double period;
	struct json_object *paths;
};

/* The stack's regions, outermost first, for the exports' paths. */
static void tally_path(struct fp_target *t, struct tally *tl, const struct fp_sample_key *key,
		       uint64_t c)
{
	struct json_object *ph = json_object_new_object(), *names = json_object_new_array();
	int k;

	for (k = 0; k < (int)key->depth && k < FP_TLS_SLOTS; k++)
		json_object_array_add(names, json_object_new_string(
					      t->cat->regions[region_of(t, key->ids[k])].name));
	json_object_object_add(ph, "path", names);
	json_object_object_add(ph, "samples", json_object_new_int64((int64_t)c));
	json_object_object_add(ph, "sampled_ns", json_object_new_double((double)c * tl->period));
	json_object_array_add(tl->paths, ph);
}

/* c samples of one stack (key). */
static void tally_key(struct fp_target *t, struct tally *tl, const struct fp_sample_key *key,
		      uint64_t c)
{
	uint8_t seen[4096 / 8] = { 0 };
	uint64_t mask = 0;
	int k, r, f, bad = 0, top = -1;

	tl->n += c;
	tl->deeper += key->deeper ? c : 0;
	if (!key->depth) {
		tl->base += c;
		return;
	}
	for (k = 0; k < (int)key->depth && k < FP_TLS_SLOTS; k++) {
		r = region_of(t, key->ids[k]);
		if (r < 0 || r >= 4096) {
			bad = 1;
			continue;
		}
		mask |= t->region_mask[r];
		if (!(seen[r / 8] & (1 << (r % 8)))) {
			seen[r / 8] |= (uint8_t)(1 << (r % 8));
			tl->incl[r] += c;
		}
		top = k == (int)key->depth - 1 ? r : top;
	}
	tl->unknown += bad ? c : 0;
	if (top >= 0 && !key->deeper)
		tl->excl[top] += c;
	if (!bad && !key->deeper)
		tally_path(t, tl, key, c);
	for (f = 0; f < t->cat->nfeatures && f < FP_MAX_FEATURES; f++)
		if (mask & (1ULL << f))
			tl->feat[f] += c;
	for (k = 0; k < tl->nsets && tl->set_mask[k] != mask; k++)
		;
	if (k == tl->nsets && tl->nsets < 256) {
		tl->set_mask[tl->nsets] = mask;
		tl->set_n[tl->nsets++] = 0;
	}
	if (k < tl->nsets)
		tl->set_n[k] += c;
	else
		tl->overflow_sets += c;
}

/* The session's rate and clock, its duration and sample count. */
static void report_session(struct fp_target *t, struct json_object *o, const struct tally *tl)
{
	json_object_object_add(o, "active", json_object_new_boolean(t->nsample_links > 0));
	json_object_object_add(o, "hz", json_object_new_int(t->sample_hz));
	json_object_object_add(o, "period_ns", json_object_new_double(tl->period));
	json_object_object_add(o, "clock", json_object_new_string(
				  t->sample_remote ? "remote" : "cpu-clock"));
	if (t->sample_remote) {
		uint64_t ticks = t->sample_ticks, missed = t->sample_missed;

		if (t->sampler)
			fp_sampler_counts(t->sampler, &ticks, &missed);
		json_object_object_add(o, "ticks", json_object_new_int64((int64_t)ticks));
		json_object_object_add(o, "ticks_missed", json_object_new_int64((int64_t)missed));
		json_object_object_add(o, "sampler_realtime", json_object_new_boolean(
						  fp_sampler_realtime()));
	}
	json_object_object_add(o, "duration_ns", json_object_new_int64(
				  (int64_t)((t->sample_stop_ns ? t->sample_stop_ns : fp_mono_ns()) -
					    t->sample_start_ns)));
	json_object_object_add(o, "samples", json_object_new_int64((int64_t)tl->n));
	json_object_object_add(o, "tls_offset", json_object_new_int64(t->sample_tls_off));
	json_object_object_add(o, "regions_from", json_object_new_string(
				       t->sample_src == FP_SRC_TLS ? "tls" : "kernel"));
	json_object_object_add(o, "stack", json_object_new_string(t->sample_gated ? "gated"
										    : "always"));
}

/* Regions, features, feature sets, base and paths. */
static void report_figures(struct fp_target *t, struct json_object *o, struct tally *tl)
{
	int nf = t->cat->nfeatures, r, f, k;
	struct json_object *a, *x;

	a = json_object_new_array();
	for (r = 0; r < t->cat->nregions; r++) {
		x = figure(tl->incl[r], tl->n, tl->period);
		json_object_object_add(x, "name", json_object_new_string(t->cat->regions[r].name));
		json_object_object_add(x, "exclusive_samples", json_object_new_int64(
						  (int64_t)tl->excl[r]));
		json_object_object_add(x, "exclusive_sampled_ns", json_object_new_double(
						  (double)tl->excl[r] * tl->period));
		json_object_array_add(a, x);
	}
	json_object_object_add(o, "regions", a);
	a = json_object_new_array();
	for (f = 0; f < nf && f < FP_MAX_FEATURES; f++) {
		x = figure(tl->feat[f], tl->n, tl->period);
		json_object_object_add(x, "name", json_object_new_string(t->cat->features[f]));
		json_object_array_add(a, x);
	}
	json_object_object_add(o, "features", a);
	a = json_object_new_array();
	for (k = 0; k < tl->nsets; k++) {
		struct json_object *fl = json_object_new_array();

		for (f = 0; f < nf && f < FP_MAX_FEATURES; f++)
			if (tl->set_mask[k] & (1ULL << f))
				json_object_array_add(
					fl, json_object_new_string(t->cat->features[f]));
		x = figure(tl->set_n[k], tl->n, tl->period);
		json_object_object_add(x, "features", fl);
		json_object_array_add(a, x);
	}
	json_object_object_add(o, "feature_sets", a);
	json_object_object_add(o, "base", figure(tl->base, tl->n, tl->period));
	json_object_object_add(o, "paths", tl->paths);
	tl->paths = NULL;
}

static void report_anomalies(struct fp_target *t, struct json_object *o,
			     const struct tally *tl)
{
	int ncpu = libbpf_num_possible_cpus(), k;
	uint64_t an[FP_SA_MAX] = { 0 };
	struct json_object *ano;
	__u32 a;

	for (a = 0; a < FP_SA_MAX; a++) {
		uint64_t v[ncpu > 0 ? ncpu : 1];

		if (!bpf_map__lookup_elem(t->sskel->maps.sample_anomalies, &a, sizeof(a), v,
					  sizeof(v), 0))
			for (k = 0; k < ncpu; k++)
				an[a] += v[k];
	}
	ano = json_object_new_object();
	json_object_object_add(ano, "read_failed", json_object_new_int64((int64_t)an[0]));
	json_object_object_add(ano, "bad_magic", json_object_new_int64((int64_t)an[1]));
	json_object_object_add(ano, "stacks_full", json_object_new_int64((int64_t)an[2]));
	json_object_object_add(ano, "call_stack_lost", json_object_new_int64(
				       (int64_t)an[FP_SA_STACK_LOST]));
	json_object_object_add(ano, "unknown_region", json_object_new_int64(
				       (int64_t)tl->unknown));
	json_object_object_add(ano, "deeper_than_stored", json_object_new_int64(
				       (int64_t)tl->deeper));
	json_object_object_add(ano, "sets_not_kept", json_object_new_int64(
				       (int64_t)tl->overflow_sets));
	json_object_object_add(ano, "unmatched_ends", json_object_new_int64(
				       (int64_t)unmatched(t)));
	json_object_object_add(o, "anomalies", ano);
	/* featprofd's uprobes at work (regions traced meanwhile): not in the figures */
	json_object_object_add(o, "probe_samples", json_object_new_int64(
				       (int64_t)an[FP_SA_IN_PROBE]));
	json_object_object_add(o, "probe_ns", json_object_new_double(
				       (double)an[FP_SA_IN_PROBE] * tl->period));
}

/* FP_SRC_KERNEL: the frames of regions disabled since the thread's last event are not
 * open (bpf/sample.bpf.c marks them FP_SAMPLE_GONE): left out. */
static void drop_gone(struct fp_sample_key *k)
{
	uint32_t i, n = 0;

	for (i = 0; i < k->depth && i < FP_TLS_SLOTS; i++)
		if (k->ids[i] != FP_SAMPLE_GONE)
			k->ids[n++] = k->ids[i];
	k->depth = n;
}

/* Key k with c samples, its regions named, for the stacks' report. */
static void sampled_of(struct fp_target *t, const struct fp_sample_key *k, uint64_t c,
		       struct fp_sampled *v)
{
	int i, r;

	memset(v, 0, sizeof(*v));
	v->c = c;
	v->ustack = k->ustack;
	for (i = 0; i < (int)k->depth && i < FP_TLS_SLOTS; i++) {
		r = region_of(t, k->ids[i]);
		if (r < 0 || r >= t->cat->nregions) {
			v->bad = 1;
			continue;
		}
		v->reg[v->nreg++] = r;
		v->fmask |= t->region_mask[r];
	}
}

struct json_object *fp_sample_report(struct fp_target *t)
{
	struct tally tl = { .period = t->sample_hz ? 1e9 / t->sample_hz : 0 };
	struct fp_sample_key key, prev;
	struct json_object *o = NULL;
	struct fp_sampled *v = NULL;
	int mfd, have, n = 0, cap = 0;
	uint64_t c;

	if (t->sample_last)
		return json_object_get(t->sample_last);
	if (!t->sskel || !t->sample_hz)
		return NULL;
	tl.incl = calloc((size_t)t->cat->nregions + 1, sizeof(*tl.incl));
	tl.excl = calloc((size_t)t->cat->nregions + 1, sizeof(*tl.excl));
	tl.paths = json_object_new_array();
	if (!tl.incl || !tl.excl || !tl.paths)
		goto out;
	mfd = bpf_map__fd(t->sskel->maps.samples);
	for (have = !bpf_map_get_next_key(mfd, NULL, &key); have;
	     prev = key, have = !bpf_map_get_next_key(mfd, &prev, &key)) {
		if (bpf_map_lookup_elem(mfd, &key, &c))
			continue;
		drop_gone(&key);
		tally_key(t, &tl, &key, c);
		if (!t->stacks)
			continue;
		if (n == cap) {
			struct fp_sampled *g = realloc(v, (size_t)(cap + 256) * sizeof(*g));

			if (!g)
				goto out;
			v = g;
			cap += 256;
		}
		sampled_of(t, &key, c, &v[n++]);
	}
	o = json_object_new_object();
	report_session(t, o, &tl);
	report_figures(t, o, &tl);
	report_anomalies(t, o, &tl);
	if (t->stacks)
		fp_stacks__report(t->stacks, bpf_map__fd(t->sskel->maps.ustacks), t->pid, t->proc,
				  t->cat, v, n, o);
out:
	free(v);
	json_object_put(tl.paths);
	free(tl.incl);
	free(tl.excl);
	return o;
}

/* Adds samples, sampled_ns, sampled_stderr_ns and "measured" to the stats reply's
 * regions and features, from the sampling report s. */
static void refigure(struct json_object *o, uint64_t n, double period, int share)
{
	struct json_object *v, *f;
	uint64_t c;

	if (!o || !json_object_object_get_ex(o, "samples", &v))
		return;
	c = (uint64_t)json_object_get_int64(v);
	f = figure(c, n, period);
	json_object_object_add(o, "sampled_ns", json_object_get(json_object_object_get(
					f, "sampled_ns")));
	json_object_object_add(o, "sampled_stderr_ns", json_object_get(json_object_object_get(
					f, "sampled_stderr_ns")));
	if (share)
		json_object_object_add(o, "share", json_object_get(json_object_object_get(f,
										"share")));
	json_object_put(f);
}

void fp_sample_refigure(struct json_object *stats)
{
	static const char *const arrs[] = { "regions", "features" };
	struct json_object *sm, *a;
	double period;
	uint64_t n;
	size_t i, k;

	if (!json_object_object_get_ex(stats, "sampling", &sm))
		return;
	n = (uint64_t)json_object_get_int64(json_object_object_get(sm, "samples"));
	period = json_object_get_double(json_object_object_get(sm, "period_ns"));
	json_object_object_del(sm, "feature_sets");
	json_object_object_del(sm, "paths");
	refigure(json_object_object_get(sm, "base"), n, period, 1);
	for (i = 0; i < 2; i++) {
		if (json_object_object_get_ex(sm, arrs[i], &a))
			for (k = 0; k < json_object_array_length(a); k++)
				refigure(json_object_array_get_idx(a, k), n, period, 1);
		if (json_object_object_get_ex(stats, arrs[i], &a))
			for (k = 0; k < json_object_array_length(a); k++)
				refigure(json_object_array_get_idx(a, k), n, period, 0);
	}
}

void fp_sample_merge(struct json_object *stats, struct json_object *s)
{
	static const char *const arrs[] = { "regions", "features" };
	size_t i, j, k;

	for (i = 0; i < 2; i++) {
		struct json_object *a, *b;

		if (!json_object_object_get_ex(stats, arrs[i], &a) ||
		    !json_object_object_get_ex(s, arrs[i], &b))
			continue;
		for (j = 0; j < json_object_array_length(a); j++) {
			struct json_object *x = json_object_array_get_idx(a, j), *nm, *cnt;
			const char *name = json_object_object_get_ex(x, "name", &nm)
						   ? json_object_get_string(nm) : "";
			int traced = json_object_object_get_ex(x, i ? "ns" : "count", &cnt) &&
				     json_object_get_double(cnt) > 0;

			for (k = 0; k < json_object_array_length(b); k++) {
				struct json_object *y = json_object_array_get_idx(b, k), *v;

				if (!json_object_object_get_ex(y, "name", &nm) ||
				    strcmp(json_object_get_string(nm), name))
					continue;
				json_object_object_get_ex(y, "samples", &v);
				json_object_object_add(x, "samples", json_object_get(v));
				json_object_object_get_ex(y, "sampled_ns", &v);
				json_object_object_add(x, "sampled_ns", json_object_get(v));
				json_object_object_get_ex(y, "sampled_stderr_ns", &v);
				json_object_object_add(x, "sampled_stderr_ns", json_object_get(v));
				json_object_object_add(x, "measured", json_object_new_string(
							  traced ? "traced+sampled" : "sampled"));
			}
		}
	}
	json_object_object_add(stats, "sampling", json_object_get(s));
}
