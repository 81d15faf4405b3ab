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
 * Report (daemon/target/sample_report.c): each stack's ids are named by reading the
 * string they point to in the target (process_vm_readv, once per id; the daemon names new
 * ids every 200 ms while sampling, so that a target that exits keeps its names), summed:
 * a region's samples are the stacks that contain it (once, recursion or not), its
 * exclusive samples the stacks it tops; a feature's the stacks with any of its regions;
 * feature sets by the union of features; base the empty stack. Standard error of a count
 * c of n: sqrt(p(1-p)/n) * n with p = c/n (binomial), in ns times the period.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "closer.h"
#include "err.h"
#include "featprof.skel.h"
#include "featprof.h"
#include "kernel.h"
#include "log.h"
#include "pool.h"
#include "sample.h"
#include "target_impl.h"
#include "sample.skel.h"
#include "uprobe.h"

_Static_assert(sizeof(struct featprof_tls) == sizeof(struct fp_tls_user),
	       "usdt/featprof.h and bpf/featprof_bpf.h disagree on the TLS layout");
/* the stack map's entries (sample --stacks): ~1 KiB each, 4 MiB in all */
#define FP_STACK_IDS 4096
/* --unwind dwarf: the ring of stack copies (~8.4 KiB each), drained every 200 ms: room
 * for ~1,900 samples, 1 s of two threads at 997 Hz; a copy that finds it full is lost
 * (its sample still counts for its regions), counted */
#define FP_STACK_RING (16u << 20)

_Static_assert(FP_TLS_MAGIC == FP_TLS_MAGIC_BPF && FP_TLS_DEPTH == FP_TLS_SLOTS,
	       "usdt/featprof.h and bpf/featprof_bpf.h disagree on the TLS ABI");

int fp_target__sample_reset(struct fp_target *t)
{
	int ncpu = libbpf_num_possible_cpus(), mfd, ret;
	struct fp_sample_key k;
	__u32 a;

	if (!t->smp || !t->smp->skel)
		return 0;
	mfd = bpf_map__fd(t->smp->skel->maps.samples);
	while (!bpf_map_get_next_key(mfd, NULL, &k))
		if (bpf_map_delete_elem(mfd, &k))
			return -errno;	/* else the same key would come back forever */
	for (a = 0; a < FP_SA_MAX; a++) {
		uint64_t zero[ncpu > 0 ? ncpu : 1];

		memset(zero, 0, sizeof(zero));
		ret = bpf_map__update_elem(t->smp->skel->maps.sample_anomalies, &a, sizeof(a), zero,
					   sizeof(zero), BPF_ANY);
		if (ret)
			return ret;
	}
	if (t->smp->skel_unwind) {	/* the stacks go with the samples that named them */
		__u32 id;

		mfd = bpf_map__fd(t->smp->skel->maps.ustacks);
		while (!bpf_map_get_next_key(mfd, NULL, &id))
			if (bpf_map_delete_elem(mfd, &id))
				return -errno;
	}
	fp_stacks__free(t->smp->stacks);
	t->smp->stacks = NULL;
	if (t->smp->dwarf)	/* copies of before the reset: not this session's */
		fp_dwarf__drain(t->smp->dwarf, NULL, NULL);
	if (t->smp->unwind &&
	    !(t->smp->stacks = fp_stacks__new(t->smp->unwind == FP_UNWIND_FP ? FP_STACK_IDS : 0)))
		return -ENOMEM;
	t->smp->skel->bss->sample_session++;	/* threads' unmatched counts start again */
	t->smp->start_ns = fp_mono_ns();
	return 0;
}

/* --remote: the switch hook and the task iterator over the target's threads, ticked by
 * the sampler thread. */
static int remote_start(struct fp_target *t, int hz, struct fp_err *e)
{
	union bpf_iter_link_info li = { .task.pid = (__u32)t->pid };
	LIBBPF_OPTS(bpf_iter_attach_opts, io, .link_info = &li, .link_info_len = sizeof(li));
	pid_t tid = fp_sampler_tid();
	struct bpf_link *it;
	int ret;

	if (!tid)
		return fp_fail(e, EAGAIN, "pid %d: cannot start the sampler thread", (int)t->pid);
	t->smp->links = calloc(2, sizeof(*t->smp->links));
	if (!t->smp->links)
		return -ENOMEM;
	if (!fp_sampler_realtime())
		fp_log(FP_LOG_WARN, "pid %d: the sampler thread is not SCHED_FIFO (no "
		       "CAP_SYS_NICE): samples on a CPU shared with a busy target thread wait "
		       "for it",
		       (int)t->pid);
	t->smp->skel->bss->sampler_tid = (uint32_t)tid;
	t->smp->links[0] = bpf_program__attach(t->smp->skel->progs.fp_sample_switch);
	if (!t->smp->links[0])
		goto fail;
	t->smp->nlinks = 1;
	it = bpf_program__attach_iter(t->smp->skel->progs.fp_sample_remote, &io);
	if (!it)
		goto fail;
	t->smp->links[t->smp->nlinks++] = it;
	t->smp->sampler = fp_sampler_add(bpf_link__fd(it),
				    (volatile uint64_t *)t->smp->skel->bss->sample_cpus, hz);
	if (!t->smp->sampler)
		goto fail;
	return 0;
fail:
	ret = errno ? errno : EINVAL;
	return fp_fail(e, ret, "pid %d: cannot attach the remote sampler: %s", (int)t->pid,
		       strerror(ret));
}

/*
 * One cpu-clock event per thread, inherited by the threads it creates later: it counts
 * the thread's own CPU time, carrying the rest of a period across descheduling. A
 * per-CPU event would count the CPU's time, and a thread that sleeps and wakes on a
 * timer can be woken at the sampler's tick (timer slack coalesces them), every burst
 * then sampled at the same offsets: that biased shares by up to 9 points on the truth
 * target (docs/TRACING.md). 0 or -errno (e filled; the links made so far stay in t).
 */
static int clock_start(struct fp_target *t, int hz, struct fp_err *e)
{
	struct bpf_program *prog = t->smp->src == FP_SRC_TLS ? t->smp->skel->progs.fp_sample
				   : t->smp->src == FP_SRC_INPROC ? t->smp->skel->progs.fp_sample_ip
				   : t->ts_map ? t->smp->skel->progs.fp_sample_tm
					       : t->smp->skel->progs.fp_sample_ts;
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
		ret = errno;
		return fp_fail(e, ret, "pid %d: cannot list its threads: %s", (int)t->pid,
			       strerror(ret));
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
			fp_fail(e, -ret, "pid %d: cannot open a cpu-clock event on thread "
				"%ld: %s", (int)t->pid, tid, strerror(errno));
			break;
		}
		g = realloc(t->smp->links, (size_t)(t->smp->nlinks + 1) * sizeof(*g));
		l = g ? bpf_program__attach_perf_event(prog, pfd) : NULL;
		if (g)
			t->smp->links = g;
		if (!l) {
			ret = g ? -errno : -ENOMEM;
			close(pfd);
			fp_fail(e, -ret, "pid %d: cannot attach the sampler to thread %ld: %s",
				(int)t->pid, tid, strerror(-ret));
			break;
		}
		t->smp->links[t->smp->nlinks++] = l;	/* owns pfd */
	}
	closedir(dir);
	return ret;
}

/* FEATPROF_SAMPLING_GATED: the kernel raises the semaphore at sem_off in the process
 * while the gate's uprobe is attached. 0 or -errno (e filled). */
static int gate_start(struct fp_target *t, uint64_t gate_off, uint64_t sem_off, struct fp_err *e)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)t->pid);
	fd = fp_uprobe_gate(t->multi, path, gate_off, sem_off, t->pid);
	if (fd > 0) {
		t->smp->gate = fd;
		return 0;
	}
	return fp_fail(e, fd < 0 ? -fd : EBADF, "pid %d: cannot raise its sampling gate: %s",
		       (int)t->pid, strerror(fd < 0 ? -fd : EBADF));
}

/* A fresh session: the figures and ids of an earlier one go, the object reads the
 * program's region stack at off (and its gate). 0 or -errno (e filled). */
static int session_start(struct fp_target *t, int64_t off, bool gated, struct fp_err *e)
{
	int ret = fp_target__sample_reset(t);

	if (ret)
		return fp_fail(e, -ret, "pid %d: cannot reset its sampled figures: %s", (int)t->pid,
			       strerror(-ret));
	json_object_put(t->smp->last);
	t->smp->last = NULL;
	free(t->smp->ids);
	t->smp->ids = NULL;
	t->smp->nids = 0;
	t->smp->skel->bss->sample_tls_off = off;
	t->smp->skel->bss->sample_gated = gated;
	t->smp->skel->bss->sample_session++;
	t->smp->skel->bss->sample_stacks = t->smp->unwind;
	if (t->smp->src == FP_SRC_KERNEL) {	/* whose thread states are the target's */
		t->smp->skel->bss->sample_slot = (uint32_t)t->slot;
		t->smp->skel->bss->sample_owner = t->skel->bss->owner[t->slot];
		t->smp->skel->bss->sample_rbase = (uint32_t)t->rbase;
	}
	t->smp->gated = gated;
	fp_sample_probe_sites(t);
	return 0;
}

/*
 * Sampling's programs and maps (bpf/sample.bpf.c) in an object of the target's own, made
 * at its first session, again where a session needs another shape: a stack map
 * (--stacks), or the target's thread states and enabled regions (FP_SRC_KERNEL: its
 * object's maps, shared by descriptor). 0 or -errno (e filled).
 */
static int sample_object(struct fp_target *t, struct fp_err *e)
{
	const struct fp_kernel_caps *k = fp_kernel_caps();
	struct fp_sampling *sm = t->smp;
	bool kern = sm->src == FP_SRC_KERNEL, ip = sm->src == FP_SRC_INPROC;
	struct sample_bpf *s;
	char buf[128];
	int ret = 0;

	if (sm->skel && sm->skel_unwind == sm->unwind && sm->skel_src == sm->src)
		return 0;
	if (sm->skel) {	/* between sessions: no link holds it; the stop kept the figures */
		fp_dwarf__free(sm->dwarf);
		sm->dwarf = NULL;
		sample_bpf__destroy(sm->skel);
		sm->skel = NULL;
	}
	s = sample_bpf__open();
	if (!s)
		return fp_fail(e, ENOMEM, "pid %d: cannot open the sampler's BPF object",
			       (int)t->pid);
	bpf_program__set_autoload(s->progs.fp_sample_remote, k->copy_from_user_task);
	bpf_program__set_autoload(s->progs.fp_sample_switch, k->copy_from_user_task);
	bpf_program__set_autoload(s->progs.fp_sample, !kern && !ip);
	bpf_program__set_autoload(s->progs.fp_sample_ip, ip);
	bpf_map__set_autocreate(s->maps.region_enabled, kern);
	bpf_program__set_autoload(s->progs.fp_sample_ts, kern && !t->ts_map);
	bpf_program__set_autoload(s->progs.fp_sample_tm, kern && t->ts_map);
	bpf_map__set_autocreate(s->maps.tstate, kern && !t->ts_map);
	bpf_map__set_autocreate(s->maps.tstate_map, kern && t->ts_map);
	if (sm->unwind == FP_UNWIND_FP)
		ret = bpf_map__set_max_entries(s->maps.ustacks, FP_STACK_IDS);
	if (sm->unwind == FP_UNWIND_DWARF)
		ret = bpf_map__set_max_entries(s->maps.stack_copies, FP_STACK_RING);
	if (!ret && kern)
		ret = bpf_map__reuse_fd(t->ts_map ? s->maps.tstate_map : s->maps.tstate,
					bpf_map__fd(t->ts_map ? t->skel->maps.tstate_map
							      : t->skel->maps.tstate));
	if (!ret && kern)
		ret = bpf_map__reuse_fd(s->maps.region_enabled,
					bpf_map__fd(t->skel->maps.region_enabled));
	if (!ret && ip)
		ret = bpf_map__reuse_fd(s->maps.ip_threads, bpf_map__fd(t->skel->maps.ip_threads));
	if (!ret)
		ret = sample_bpf__load(s);
	if (ret && ((kern && t->ts_map) || ip)) {
		/* 5.10's verifier: "perf_event programs can only use preallocated hash map" */
		fp_fail(e, EOPNOTSUPP, "pid %d: sampling its %s regions reads %s, a hash map "
			"allocated at run time that no perf_event program may read before Linux "
			"6.1 (%s): sample a FEATPROF_SAMPLING build", (int)t->pid,
			ip ? "in-process" : "traced",
			ip ? "featprof's map of its threads' blocks" : "featprof's thread states",
			libbpf_strerror(ret, buf, sizeof(buf)) ? "?" : buf);
		sample_bpf__destroy(s);
		return -EOPNOTSUPP;
	}
	if (ret) {
		libbpf_strerror(ret, buf, sizeof(buf));
		fp_fail(e, -ret, "pid %d: cannot load the sampler's BPF programs: %s",
			(int)t->pid, buf);
		sample_bpf__destroy(s);
		return ret;
	}
	sm->skel = s;
	sm->skel_unwind = sm->unwind;
	sm->skel_src = sm->src;
	if (sm->unwind == FP_UNWIND_DWARF &&
	    !(sm->dwarf = fp_dwarf__new(t->pid, bpf_map__fd(s->maps.stack_copies), e))) {
		sample_bpf__destroy(s);
		sm->skel = NULL;
		return -EIO;
	}
	return 0;
}

/* Regions traced by traps now: the kernel keeps which are open on each thread (those
 * timed in the process, ip_regions, their runtime keeps: FP_SRC_INPROC when they are
 * all there is; mixed, the traced ones are sampled). */
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
 * regions featprofd traces. 0 or -errno (e filled).
 */
static int choose_source(struct fp_target *t, int remote, uint64_t *gate_off,
			 uint64_t *sem_off, int64_t *off, struct fp_err *e)
{
	int ret = fp_sample_tls_abi(t->pid, gate_off, sem_off, e);

	if (!ret) {
		t->smp->src = FP_SRC_TLS;
		ret = fp_sample_tls_offset(t->pid, off, e);
		return ret ? ret : fp_sample_one_stack(t, e);
	}
	if (ret != -ENOENT)
		return ret;
	fp_err_clear(e);	/* no stack of its own: the regions traced, or its runtime's */
	if (!trapped_regions(t) && t->ip_regions) {	/* all timed in the process */
		t->smp->src = FP_SRC_INPROC;
		*off = 0;
		return 0;
	}
	if (!trapped_regions(t))
		return fp_fail(e, ENODATA, "pid %d: no region is traced and its executable "
			       "keeps no region stack of its own: featprof enable %d FEATURE "
			       "first (or build with FEATPROF_SAMPLING)", (int)t->pid,
			       (int)t->pid);
	if (remote) {
		return fp_fail(e, EOPNOTSUPP, "pid %d: sample --remote reads a FEATPROF_SAMPLING "
			       "build's region stack only; its regions are traced: sample without "
			       "--remote", (int)t->pid);
	}
	t->smp->src = FP_SRC_KERNEL;
	*off = 0;
	return 0;
}

int fp_target__sample_start(struct fp_target *t, int hz, int remote, int unwind, struct fp_err *e)
{
	uint64_t gate_off = 0, sem_off = 0;
	int64_t off = 0;
	int ret;

	if (!t->skel)
		return fp_fail(e, ESRCH, "pid %d: exited", (int)t->pid);
	if (fp_target__sampling(t))
		return fp_fail(e, EBUSY, "pid %d: already sampling", (int)t->pid);
	if (remote && !fp_kernel_caps()->copy_from_user_task)
		return fp_fail(e, EOPNOTSUPP,
			       "sample --remote needs bpf_copy_from_user_task (Linux "
			       "5.18), which this kernel lacks: sample without --remote");
	if (remote && unwind)
		return fp_fail(e, EOPNOTSUPP, "sample --stacks interrupts each thread to walk its "
			       "stack: sample without --remote");
	if (!t->smp && !(t->smp = calloc(1, sizeof(*t->smp))))
		return fp_fail(e, ENOMEM, "out of memory");
	ret = choose_source(t, remote, &gate_off, &sem_off, &off, e);
	t->smp->unwind = unwind;
	if (!ret)
		ret = sample_object(t, e);
	if (!ret)
		ret = session_start(t, off, gate_off != 0, e);
	if (ret)
		return ret;
	__atomic_store_n(&t->smp->skel->bss->sample_tgid, (uint32_t)t->pid, __ATOMIC_SEQ_CST);
	if (gate_off && (ret = gate_start(t, gate_off, sem_off, e))) {
		__atomic_store_n(&t->smp->skel->bss->sample_tgid, 0, __ATOMIC_SEQ_CST);
		return ret;
	}
	t->smp->remote = remote;
	t->smp->ticks = t->smp->missed = 0;
	ret = remote ? remote_start(t, hz, e) : clock_start(t, hz, e);
	if (ret) {
		if (!t->smp->links)	/* nothing to stop */
			return ret;
		t->smp->hz = hz;
		fp_target__sample_stop(t);
		json_object_put(t->smp->last);	/* not a round that ran */
		t->smp->last = NULL;
		t->smp->hz = 0;
		return ret;
	}
	t->smp->hz = hz;
	t->smp->tls_off = off;
	t->smp->start_ns = fp_mono_ns();
	t->smp->stop_ns = 0;
	return 0;
}

void fp_target__sample_stop(struct fp_target *t)
{
	int i;

	if (!t->smp || !t->smp->links)
		return;
	if (t->smp->sampler) {	/* no tick after this */
		fp_sampler_counts(t->smp->sampler, &t->smp->ticks, &t->smp->missed);
		fp_sampler_remove(t->smp->sampler);
		t->smp->sampler = NULL;
	}
	if (t->smp->skel && !t->smp->last)
		t->smp->last = fp_sample_report(t);	/* the figures outlive the object */
	if (t->smp->gate > 0 && (t->exited || fp_closer_deferring()))	/* by the pool */
		fp_close_later(t->smp->gate);
	else if (t->smp->gate > 0)
		close(t->smp->gate);	/* the gate falls: the stack drains */
	t->smp->gate = 0;
	for (i = 0; i < t->smp->nlinks; i++)
		bpf_link__destroy(t->smp->links[i]);
	free(t->smp->links);
	t->smp->links = NULL;
	t->smp->nlinks = 0;
	t->smp->stop_ns = fp_mono_ns();
	if (t->smp->skel)
		__atomic_store_n(&t->smp->skel->bss->sample_tgid, 0, __ATOMIC_SEQ_CST);
	if (t->smp->last)	/* the report was taken before the stop: fix its span */
		json_object_object_add(t->smp->last, "active", json_object_new_boolean(0));
}

const char *fp_target__sample_source(const struct fp_target *t)
{
	int src = t->smp ? t->smp->src : FP_SRC_KERNEL;

	return src == FP_SRC_TLS      ? "its TLS region stack"
	       : src == FP_SRC_INPROC ? "its in-process runtime's blocks"
				      : "the regions traced";
}

bool fp_target__sampling(const struct fp_target *t)
{
	return t->smp && t->smp->nlinks > 0;
}

void fp_target__sample_release(struct fp_target *t)
{
	if (!t->smp)
		return;
	fp_target__sample_stop(t);
	fp_dwarf__free(t->smp->dwarf);	/* its ring is the object's */
	t->smp->dwarf = NULL;
	sample_bpf__destroy(t->smp->skel);
	t->smp->skel = NULL;
}

void fp_target__sample_free(struct fp_target *t)
{
	if (!t->smp)
		return;
	fp_target__sample_release(t);
	json_object_put(t->smp->last);
	free(t->smp->ids);
	fp_stacks__free(t->smp->stacks);
	free(t->smp);
	t->smp = NULL;
}
