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
 * Report (daemon/sample/sample_report.c): each stack's ids are named by reading the
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

#include "util/clock.h"
#include "util/closer.h"
#include "common/err.h"
#include "featprof.skel.h"
#include "usdt/featprof_abi.h"
#include "kern/kernel.h"
#include "util/log.h"
#include "targets/target.h"
#include "sample.h"
#include "sample_impl.h"
#include "stacks/stacks.h"
#include "sample.skel.h"
#include "kern/uprobe.h"

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

static const struct fp_target_ext sample_ext;

int fp_sample_reset(struct fp_target *t)
{
	struct fp_sampling *sm = fp_sample_state(t);
	int ncpu = libbpf_num_possible_cpus(), mfd, ret;
	struct fp_sample_key k;
	__u32 a;

	if (!sm || !sm->skel)
		return 0;
	mfd = bpf_map__fd(sm->skel->maps.samples);
	while (!bpf_map_get_next_key(mfd, NULL, &k))
		if (bpf_map_delete_elem(mfd, &k))
			return -errno;	/* else the same key would come back forever */
	for (a = 0; a < FP_SA_MAX; a++) {
		uint64_t zero[ncpu > 0 ? ncpu : 1];

		memset(zero, 0, sizeof(zero));
		ret = bpf_map__update_elem(sm->skel->maps.sample_anomalies, &a, sizeof(a), zero,
					   sizeof(zero), BPF_ANY);
		if (ret)
			return ret;
	}
	if (sm->skel_unwind) {	/* the stacks go with the samples that named them */
		__u32 id;

		mfd = bpf_map__fd(sm->skel->maps.ustacks);
		while (!bpf_map_get_next_key(mfd, NULL, &id))
			if (bpf_map_delete_elem(mfd, &id))
				return -errno;
	}
	fp_stacks__free(sm->stacks);
	sm->stacks = NULL;
	if (sm->dwarf)	/* copies of before the reset: not this session's */
		fp_dwarf__drain(sm->dwarf, NULL, NULL);
	if (sm->unwind &&
	    !(sm->stacks = fp_stacks__new(sm->unwind == FP_UNWIND_FP ? FP_STACK_IDS : 0)))
		return -ENOMEM;
	if (sm->stacks)	/* named by them if it exits before a stack is named */
		fp_stacks__read_maps(sm->stacks, fp_target__pid(t));
	sm->skel->bss->sample_session++;	/* threads' unmatched counts start again */
	sm->start_ns = fp_mono_ns();
	return 0;
}

/* --remote: the switch hook and the task iterator over the target's threads, ticked by
 * the sampler thread. */
static int remote_start(struct fp_target *t, int hz, struct fp_err *e)
{
	struct fp_sampling *sm = fp_sample_state(t);
	union bpf_iter_link_info li = { .task.pid = (__u32)fp_target__pid(t) };
	LIBBPF_OPTS(bpf_iter_attach_opts, io, .link_info = &li, .link_info_len = sizeof(li));
	pid_t tid = fp_sampler_tid();
	struct bpf_link *it;
	int ret;

	if (!tid)
		return fp_fail(e, EAGAIN, "pid %d: cannot start the sampler thread",
			       (int)fp_target__pid(t));
	sm->links = calloc(2, sizeof(*sm->links));
	if (!sm->links)
		return -ENOMEM;
	if (!fp_sampler_realtime())
		fp_log(FP_LOG_WARN, "pid %d: the sampler thread is not SCHED_FIFO (no "
		       "CAP_SYS_NICE): samples on a CPU shared with a busy target thread wait "
		       "for it",
		       (int)fp_target__pid(t));
	sm->skel->bss->sampler_tid = (uint32_t)tid;
	sm->links[0] = bpf_program__attach(sm->skel->progs.fp_sample_switch);
	if (!sm->links[0])
		goto fail;
	sm->nlinks = 1;
	it = bpf_program__attach_iter(sm->skel->progs.fp_sample_remote, &io);
	if (!it)
		goto fail;
	sm->links[sm->nlinks++] = it;
	sm->sampler = fp_sampler_add(bpf_link__fd(it),
				    (volatile uint64_t *)sm->skel->bss->sample_cpus, hz);
	if (!sm->sampler)
		goto fail;
	return 0;
fail:
	ret = errno ? errno : EINVAL;
	return fp_fail(e, ret, "pid %d: cannot attach the remote sampler: %s",
		       (int)fp_target__pid(t), strerror(ret));
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
	struct fp_sampling *sm = fp_sample_state(t);
	struct bpf_program *prog = sm->src == FP_SRC_TLS ? sm->skel->progs.fp_sample
				   : sm->src == FP_SRC_INPROC ? sm->skel->progs.fp_sample_ip
				   : fp_target__ts_map(t) ? sm->skel->progs.fp_sample_tm
					       : sm->skel->progs.fp_sample_ts;
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

	snprintf(path, sizeof(path), "/proc/%d/task", (int)fp_target__pid(t));
	dir = opendir(path);
	if (!dir) {
		ret = errno;
		return fp_fail(e, ret, "pid %d: cannot list its threads: %s",
			       (int)fp_target__pid(t), strerror(ret));
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
				"%ld: %s", (int)fp_target__pid(t), tid, strerror(errno));
			break;
		}
		g = realloc(sm->links, (size_t)(sm->nlinks + 1) * sizeof(*g));
		l = g ? bpf_program__attach_perf_event(prog, pfd) : NULL;
		if (g)
			sm->links = g;
		if (!l) {
			ret = g ? -errno : -ENOMEM;
			close(pfd);
			fp_fail(e, -ret, "pid %d: cannot attach the sampler to thread %ld: %s",
				(int)fp_target__pid(t), tid, strerror(-ret));
			break;
		}
		sm->links[sm->nlinks++] = l;	/* owns pfd */
	}
	closedir(dir);
	return ret;
}

/* FEATPROF_SAMPLING_GATED: the kernel raises the semaphore at sem_off in the process
 * while the gate's uprobe is attached. 0 or -errno (e filled). */
static int gate_start(struct fp_target *t, uint64_t gate_off, uint64_t sem_off, struct fp_err *e)
{
	struct fp_sampling *sm = fp_sample_state(t);
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)fp_target__pid(t));
	fd = fp_uprobe_gate(fp_target__multi(t), path, gate_off, sem_off, fp_target__pid(t));
	if (fd > 0) {
		sm->gate = fd;
		return 0;
	}
	return fp_fail(e, fd < 0 ? -fd : EBADF, "pid %d: cannot raise its sampling gate: %s",
		       (int)fp_target__pid(t), strerror(fd < 0 ? -fd : EBADF));
}

/* A fresh session: the figures and ids of an earlier one go, the object reads the
 * program's region stack at off (and its gate). 0 or -errno (e filled). */
static int session_start(struct fp_target *t, int64_t off, bool gated, struct fp_err *e)
{
	struct fp_sampling *sm = fp_sample_state(t);
	int ret = fp_sample_reset(t);

	if (ret)
		return fp_fail(e, -ret, "pid %d: cannot reset its sampled figures: %s",
			       (int)fp_target__pid(t), strerror(-ret));
	json_object_put(sm->last);
	sm->last = NULL;
	free(sm->ids);
	sm->ids = NULL;
	sm->nids = 0;
	sm->skel->bss->sample_tls_off = off;
	sm->skel->bss->sample_exe_none = sm->src == FP_SRC_TLS && !sm->exe_stack;
	sm->skel->bss->sample_nlibs = sm->src == FP_SRC_TLS ? (uint32_t)sm->nlibs : 0;
	memcpy(sm->skel->bss->sample_libs, sm->libs, sizeof(sm->libs));
	sm->skel->bss->sample_gated = gated;
	sm->skel->bss->sample_session++;
	sm->skel->bss->sample_stacks = sm->unwind;
	if (sm->src == FP_SRC_KERNEL) {	/* whose thread states are the target's */
		sm->skel->bss->sample_slot = (uint32_t)fp_target__slot(t);
		sm->skel->bss->sample_owner = fp_target__bpf(t)->bss->owner[fp_target__slot(t)];
		sm->skel->bss->sample_rbase = (uint32_t)fp_target__rbase(t);
	}
	sm->gated = gated;
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
	struct fp_sampling *sm = fp_sample_state(t);
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
			       (int)fp_target__pid(t));
	bpf_program__set_autoload(s->progs.fp_sample_remote, k->copy_from_user_task);
	bpf_program__set_autoload(s->progs.fp_sample_switch, k->copy_from_user_task);
	bpf_program__set_autoload(s->progs.fp_sample, !kern && !ip);
	bpf_program__set_autoload(s->progs.fp_sample_ip, ip);
	bpf_map__set_autocreate(s->maps.region_enabled, kern);
	bpf_program__set_autoload(s->progs.fp_sample_ts, kern && !fp_target__ts_map(t));
	bpf_program__set_autoload(s->progs.fp_sample_tm, kern && fp_target__ts_map(t));
	bpf_map__set_autocreate(s->maps.tstate, kern && !fp_target__ts_map(t));
	bpf_map__set_autocreate(s->maps.tstate_map, kern && fp_target__ts_map(t));
	if (sm->unwind == FP_UNWIND_FP)
		ret = bpf_map__set_max_entries(s->maps.ustacks, FP_STACK_IDS);
	if (sm->unwind == FP_UNWIND_DWARF)
		ret = bpf_map__set_max_entries(s->maps.stack_copies, FP_STACK_RING);
	if (!ret && kern)
		ret = bpf_map__reuse_fd(fp_target__ts_map(t) ? s->maps.tstate_map : s->maps.tstate,
					bpf_map__fd(fp_target__ts_map(t)
							? fp_target__bpf(t)->maps.tstate_map
							: fp_target__bpf(t)->maps.tstate));
	if (!ret && kern)
		ret = bpf_map__reuse_fd(s->maps.region_enabled,
					bpf_map__fd(fp_target__bpf(t)->maps.region_enabled));
	if (!ret && ip)
		ret = bpf_map__reuse_fd(s->maps.ip_threads,
					bpf_map__fd(fp_target__bpf(t)->maps.ip_threads));
	if (!ret)
		ret = sample_bpf__load(s);
	if (ret && ((kern && fp_target__ts_map(t)) || ip)) {
		/* 5.10's verifier: "perf_event programs can only use preallocated hash map" */
		fp_fail(e, EOPNOTSUPP, "pid %d: sampling its %s regions reads %s, a hash map "
			"allocated at run time that no perf_event program may read before Linux "
			"6.1 (%s): sample a FEATPROF_SAMPLING build", (int)fp_target__pid(t),
			ip ? "in-process" : "traced",
			ip ? "featprof's map of its threads' blocks" : "featprof's thread states",
			libbpf_strerror(ret, buf, sizeof(buf)) ? "?" : buf);
		sample_bpf__destroy(s);
		return -EOPNOTSUPP;
	}
	if (ret) {
		libbpf_strerror(ret, buf, sizeof(buf));
		fp_fail(e, -ret, "pid %d: cannot load the sampler's BPF programs: %s",
			(int)fp_target__pid(t), buf);
		sample_bpf__destroy(s);
		return ret;
	}
	sm->skel = s;
	sm->skel_unwind = sm->unwind;
	sm->skel_src = sm->src;
	if (sm->unwind == FP_UNWIND_DWARF &&
	    !(sm->dwarf = fp_dwarf__new(fp_target__pid(t), bpf_map__fd(s->maps.stack_copies), e))) {
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

	for (r = 0; fp_target__enabled(t) && r < fp_target__catalog(t)->nregions; r++)
		n += fp_target__enabled(t)[r] && !(fp_target__ip_on(t) && fp_target__ip_on(t)[r]);
	return n;
}

/*
 * Where the open regions are read: the program's TLS stack where its executable keeps
 * one (FEATPROF_SAMPLING: every region, enabled or not), else the kernel's state of the
 * regions featprofd traces; for call stacks (sm->unwind set) also where none is traced
 * (run --stacks of any program: its samples are then all outside regions). 0 or -errno
 * (e filled).
 */
static int choose_source(struct fp_target *t, int remote, uint64_t *gate_off,
			 uint64_t *sem_off, int64_t *off, struct fp_err *e)
{
	struct fp_sampling *sm = fp_sample_state(t);
	int ret = fp_sample_tls_abi(fp_target__pid(t), gate_off, sem_off, e);

	sm->nlibs = 0;
	sm->exe_stack = !ret;
	if (!ret)
		ret = fp_sample_tls_offset(fp_target__pid(t), off, e);
	if (!ret || ret == -ENOENT) {	/* and the libraries' own stacks */
		struct fp_err le = { 0 };
		int n = fp_sample_lib_stacks(t, sm->exe_stack, sm->libs, &le);

		if (n < 0 || (n && remote)) {
			if (n > 0)
				fp_fail(&le, EOPNOTSUPP,
					"pid %d: sample --remote reads the executable's region "
					"stack only, and a library keeps its own: sample without "
					"--remote", (int)fp_target__pid(t));
			*e = le;
			return n < 0 ? n : -EOPNOTSUPP;
		}
		sm->nlibs = n;
		if (!ret || n) {
			fp_err_clear(e);
			sm->src = FP_SRC_TLS;
			if (!ret)
				return 0;
			*off = 0;	/* only libraries keep stacks */
			return 0;
		}
	}
	if (ret != -ENOENT)
		return ret;
	fp_err_clear(e);	/* no stack of its own: the regions traced, or its runtime's */
	if (!trapped_regions(t) && fp_target__ip_regions(t)) {	/* all timed in the process */
		sm->src = FP_SRC_INPROC;
		*off = 0;
		return 0;
	}
	if (!trapped_regions(t) && !sm->unwind)
		return fp_fail(e, ENODATA, "pid %d: no region is traced and its executable "
			       "keeps no region stack of its own: featprof enable %d FEATURE "
			       "first (or build with FEATPROF_SAMPLING)", (int)fp_target__pid(t),
			       (int)fp_target__pid(t));
	if (remote) {
		return fp_fail(e, EOPNOTSUPP, "pid %d: sample --remote reads a FEATPROF_SAMPLING "
			       "build's region stack only; its regions are traced: sample without "
			       "--remote", (int)fp_target__pid(t));
	}
	sm->src = FP_SRC_KERNEL;
	*off = 0;
	return 0;
}

int fp_sample_start(struct fp_target *t, int hz, int remote, int unwind, struct fp_err *e)
{
	struct fp_sampling *sm = fp_sample_state(t);
	uint64_t gate_off = 0, sem_off = 0;
	int64_t off = 0;
	int ret;

	if (!fp_target__bpf(t))
		return fp_fail(e, ESRCH, "pid %d: exited", (int)fp_target__pid(t));
	if (fp_sample_active(t))
		return fp_fail(e, EBUSY, "pid %d: already sampling", (int)fp_target__pid(t));
	if (remote && !fp_kernel_caps()->copy_from_user_task)
		return fp_fail(e, EOPNOTSUPP,
			       "sample --remote needs bpf_copy_from_user_task (Linux "
			       "5.18), which this kernel lacks: sample without --remote");
	if (remote && unwind)
		return fp_fail(e, EOPNOTSUPP, "sample --stacks interrupts each thread to walk its "
			       "stack: sample without --remote");
	if (!sm) {	/* the target frees it (sample_ext) */
		if (!(sm = calloc(1, sizeof(*sm))))
			return fp_fail(e, ENOMEM, "out of memory");
		fp_target__set_ext(t, FP_EXT_SAMPLE, &sample_ext, sm);
	}
	sm->unwind = unwind;	/* call stacks alone need no region source */
	ret = choose_source(t, remote, &gate_off, &sem_off, &off, e);
	if (!ret)
		ret = sample_object(t, e);
	if (!ret)
		ret = session_start(t, off, gate_off != 0, e);
	if (ret)
		return ret;
	__atomic_store_n(&sm->skel->bss->sample_tgid, (uint32_t)fp_target__pid(t),
			 __ATOMIC_SEQ_CST);
	if (gate_off && (ret = gate_start(t, gate_off, sem_off, e))) {
		__atomic_store_n(&sm->skel->bss->sample_tgid, 0, __ATOMIC_SEQ_CST);
		return ret;
	}
	sm->remote = remote;
	sm->ticks = sm->missed = 0;
	ret = remote ? remote_start(t, hz, e) : clock_start(t, hz, e);
	if (ret) {
		if (!sm->links)	/* nothing to stop */
			return ret;
		sm->hz = hz;
		fp_sample_stop(t);
		json_object_put(sm->last);	/* not a round that ran */
		sm->last = NULL;
		sm->hz = 0;
		return ret;
	}
	sm->hz = hz;
	sm->tls_off = off;
	sm->start_ns = fp_mono_ns();
	sm->stop_ns = 0;
	return 0;
}

void fp_sample_stop(struct fp_target *t)
{
	struct fp_sampling *sm = fp_sample_state(t);
	int i;

	if (!sm || !sm->links)
		return;
	if (sm->sampler) {	/* no tick after this */
		fp_sampler_counts(sm->sampler, &sm->ticks, &sm->missed);
		fp_sampler_remove(sm->sampler);
		sm->sampler = NULL;
	}
	if (sm->skel && !sm->last)
		sm->last = fp_sample_report(t);	/* the figures outlive the object */
	if (sm->gate > 0 && (fp_target__exited(t) || fp_closer_deferring())) /* by the pool */
		fp_close_later(sm->gate);
	else if (sm->gate > 0)
		close(sm->gate);	/* the gate falls: the stack drains */
	sm->gate = 0;
	for (i = 0; i < sm->nlinks; i++)
		bpf_link__destroy(sm->links[i]);
	free(sm->links);
	sm->links = NULL;
	sm->nlinks = 0;
	sm->stop_ns = fp_mono_ns();
	if (sm->skel)
		__atomic_store_n(&sm->skel->bss->sample_tgid, 0, __ATOMIC_SEQ_CST);
	if (sm->last)	/* the report was taken before the stop: fix its span */
		json_object_object_add(sm->last, "active", json_object_new_boolean(0));
}

const char *fp_sample_source(const struct fp_target *t)
{
	struct fp_sampling *sm = fp_sample_state(t);
	int src = sm ? sm->src : FP_SRC_KERNEL;

	return src == FP_SRC_TLS      ? "its TLS region stack"
	       : src == FP_SRC_INPROC ? "its in-process runtime's blocks"
				      : "the regions traced";
}

/* The target leaves its object (exit, detach): the session stopped, its object and
 * unwinder freed; the figures stay. */
static void sample_release(struct fp_target *t, void *data)
{
	struct fp_sampling *sm = data;

	fp_sample_stop(t);
	fp_dwarf__free(sm->dwarf);	/* its ring is the object's */
	sm->dwarf = NULL;
	sample_bpf__destroy(sm->skel);
	sm->skel = NULL;
}

/* The target's end: all of it (the target released it first). */
static void sample_free(struct fp_target *t, void *data)
{
	struct fp_sampling *sm = data;

	json_object_put(sm->last);
	free(sm->ids);
	fp_stacks__free(sm->stacks);
	free(sm);
}

static const struct fp_target_ext sample_ext = {
	.release = sample_release,
	.free = sample_free,
};

void fp_sample_split_clones(struct fp_target *t, bool on)
{
	struct fp_sampling *sm = fp_sample_state(t);

	if (sm && sm->stacks)
		fp_stacks__split_clones(sm->stacks, on);
}
