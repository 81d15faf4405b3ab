// SPDX-License-Identifier: GPL-2.0
/*
 * featprof sample's BPF programs, an object of their own (daemon/sample/sample.c loads it per
 * target at its first sampling session; the targets' objects, bpf/featprof.bpf.c, never
 * carry them).
 */
#include "kernel_types.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "featprof_bpf.h"
#include "task_state.h"

char LICENSE[] SEC("license") = "GPL";

/*
 * featprof sample: the sampled thread's region stack, read from its TLS at fsbase +
 * sample_tls_off, counted per stack. Only threads of sample_tgid; nothing is written to
 * the target. Two ways in:
 *  - fp_sample, a perf-event program on one cpu-clock event per thread (opened by the
 *    daemon): runs in the interrupted thread, which is stopped meanwhile;
 *  - fp_sample_remote (--remote), a task iterator over the target's threads that the
 *    daemon's sampler thread runs at each tick from its own CPU: a thread counts if it
 *    is on a CPU at that moment, or if the sampler itself just preempted it
 *    (fp_sample_switch keeps, per CPU, the target thread that the sampler thread
 *    displaced); the stack is copied out of the running thread's memory
 *    (bpf_copy_from_user_task). The target's threads are never interrupted.
 */
__u32 sample_tgid = 0;
__s64 sample_tls_off = 0;
__u32 sample_exe_none = 0;	/* 1: the executable keeps no stack (only libraries do) */
/* the libraries that keep stacks of their own (struct fp_tls_lib), sample_nlibs of them */
struct fp_tls_lib sample_libs[FP_SAMPLE_LIBS] = {};
__u32 sample_nlibs = 0;
__u32 sample_session = 0;	/* bumped by the daemon at each start */
__u32 sample_gated = 0;		/* FEATPROF_SAMPLING_GATED: no stack kept before the gate */
__u32 sampler_tid = 0;		/* --remote: the daemon's sampler thread */
/* --remote: the CPUs on which a sampled thread was running at the tick (bit per CPU,
 * 256 at most), zeroed by the sampler thread before each tick: it moves off them. */
__u64 sample_cpus[4] = {};
/* sample --stacks: how each sample's user call stack is taken (FP_UNWIND_*) */
__u32 sample_stacks = 0;
/* FP_UNWIND_DWARF: how many FP_STACK_CHUNKs of the stack a copy takes at most (what the
 * unwinds use, set by featprofd: daemon/stacks/dwarf.c; at first all of them) */
__u32 sample_copy_chunks = FP_STACK_COPY / FP_STACK_CHUNK;
/* FP_SRC_KERNEL: the target's slot, occupant and first region entry in its BPF object */
__u32 sample_slot = 0, sample_owner = 0, sample_rbase = 0;

/* The user call stacks (sample --stacks; sized by the daemon, 1 entry otherwise). */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, FP_STACK_FRAMES * sizeof(__u64));
} ustacks SEC(".maps");

/* FP_UNWIND_DWARF: each sample's registers and stack top (sized by the daemon). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} stack_copies SEC(".maps");

/* FP_SRC_KERNEL: the target's thread states (one of the two state maps exists, as in the
 * target's object) and enabled regions; FP_SRC_INPROC: its threads' blocks in the
 * in-process arena. The target's object's maps, shared by descriptor: none is created
 * here. */
#include "shared_maps.h"

/* --remote, per CPU: the target thread the sampler thread displaced when it last came
 * on this CPU (0: none; the CPU was idle or ran another process). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} sample_displaced SEC(".maps");

/* Per thread: the TLS's unmatched count at the session's first sample and the latest. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct fp_sample_thread);
} sample_threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);	/* (regions, stack, thread): per thread since tid */
	__type(key, struct fp_sample_key);
	__type(value, __u64);
} samples SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FP_SA_MAX);
	__type(key, __u32);
	__type(value, __u64);
} sample_anomalies SEC(".maps");

/*
 * Sampling beside tracing: the addresses of the target's probe sites (each site's
 * address and the next byte, filled by the daemon; sample_sites_on then set). A sample
 * that interrupts the thread in the kernel while its user instruction pointer is at one
 * of them is the kernel handling featprofd's uprobe there (the int3's trap, the handler,
 * the way back; x86 emulates the nop it replaced, so the pointer stays on the site): it
 * is counted apart (FP_SA_IN_PROBE), not charged to the regions open then (the parent,
 * at a child's begin). Needs bpf_task_pt_regs (5.15); older kernels charge it as before.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FP_SAMPLE_SITES);
	__type(key, __u64);
	__type(value, __u8);
} sample_sites SEC(".maps");
__u32 sample_sites_on = 0;

static __always_inline void sample_count(__u32 what)
{
	__u64 *v = bpf_map_lookup_elem(&sample_anomalies, &what);

	if (v)
		*v += 1;
}

/* One sample of key's stack: counted. */
static __always_inline int count_key(struct fp_sample_key *key)
{
	__u64 *v, one = 1;

	v = bpf_map_lookup_elem(&samples, key);
	if (v) {
		__sync_fetch_and_add(v, 1);
		return 0;
	}
	if (bpf_map_update_elem(&samples, key, &one, BPF_NOEXIST)) {
		v = bpf_map_lookup_elem(&samples, key);	/* another CPU made it */
		if (v)
			__sync_fetch_and_add(v, 1);
		else
			sample_count(FP_SA_MAP_FULL);
	}
	return 0;
}

/* The interrupted thread's user registers (x86-64 struct pt_regs) into regs. From 5.15
 * the task's saved user registers; before, the sample's own where it interrupted user
 * mode, else those saved at the top of the task's kernel stack (THREAD_SIZE 16 KiB, no
 * padding: x86-64 without KASAN). 0 or a negative error. */
static __always_inline long user_regs(struct bpf_perf_event_data *ctx, __u64 *regs)
{
	struct task_struct *task;
	__u64 cs, top;
	int k;

	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs))
		return bpf_probe_read_kernel(regs, FP_PT_REGS_WORDS * 8,
					     (void *)bpf_task_pt_regs(bpf_get_current_task_btf()));
	cs = *(__u64 *)((char *)&ctx->regs + __builtin_offsetof(struct pt_regs, cs));
	if (cs & 3) {
		for (k = 0; k < FP_PT_REGS_WORDS; k++)
			regs[k] = *(__u64 *)((char *)&ctx->regs + k * 8);
		return 0;
	}
	task = (struct task_struct *)bpf_get_current_task();
	top = (__u64)BPF_CORE_READ(task, stack) + 16384;
	return bpf_probe_read_kernel(regs, FP_PT_REGS_WORDS * 8,
				     (void *)(top - FP_PT_REGS_WORDS * 8));
}

/* FP_UNWIND_DWARF: the sample's registers and the top of its stack, with its key, out to
 * featprofd, which unwinds them. 0, or -1 when it could not go (the ring full). */
static __always_inline int copy_stack(struct bpf_perf_event_data *ctx,
				      const struct fp_sample_key *key)
{
	struct fp_stack_copy *r = bpf_ringbuf_reserve(&stack_copies, sizeof(*r), 0);
	__u64 sp;
	int i;

	if (!r)
		return -1;
	if (user_regs(ctx, r->regs)) {
		bpf_ringbuf_discard(r, 0);
		return -1;
	}
	r->key = *key;
	r->tid = (__u32)bpf_get_current_pid_tgid();
	sp = r->regs[__builtin_offsetof(struct pt_regs, sp) / 8];
	r->size = 0;
	r->limited = 0;
	for (i = 0; i < FP_STACK_COPY / FP_STACK_CHUNK; i++) {
		if (i >= sample_copy_chunks) {
			r->limited = 1;
			break;
		}
		if (bpf_probe_read_user(r->stack + i * FP_STACK_CHUNK, FP_STACK_CHUNK,
					(void *)(sp + i * FP_STACK_CHUNK)))
			break;
		r->size += FP_STACK_CHUNK;
	}
	bpf_ringbuf_submit(r, 0);
	return 0;
}

/* The interrupted thread's user call stack, as sample_stacks asks: into key (its id in
 * ustacks), or out as a copy once key's regions are filled (ctx kept for count_key). */
static __always_inline void user_stack(struct bpf_perf_event_data *ctx,
				       struct fp_sample_key *key)
{
	long id;

	key->ustack = FP_USTACK_NONE;
	if (sample_stacks == FP_UNWIND_DWARF) {
		key->ustack = FP_USTACK_DWARF;
		return;
	}
	if (sample_stacks != FP_UNWIND_FP)
		return;
	id = bpf_get_stackid(ctx, &ustacks, BPF_F_USER_STACK);
	key->ustack = id < 0 ? FP_USTACK_LOST : (__s32)id;
	if (id < 0)
		sample_count(FP_SA_STACK_LOST);
}

/* One sample of key's stack from a perf event's ctx: its copy out where the stacks are
 * unwound by featprofd, then counted. */
static __always_inline int count_sample(struct bpf_perf_event_data *ctx,
					struct fp_sample_key *key)
{
	key->tid = (__u32)bpf_get_current_pid_tgid();	/* the interrupted thread */
	if (key->ustack == FP_USTACK_DWARF && copy_stack(ctx, key))
		sample_count(FP_SA_STACK_LOST);
	return count_key(key);
}

/* lib_stacks' room: a library's stack read whole, and the sample's being made (a map
 * value takes a variable index, which 5.10 refuses on the BPF stack), with room for one
 * library's 16 entries past the 16 kept. */
struct fp_lib_scratch {
	struct fp_tls_user tls;
	__u64 ids[2 * FP_TLS_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fp_lib_scratch);
} lib_scratch SEC(".maps");

/*
 * The regions open on the libraries' own stacks of the thread whose fsbase is fs,
 * appended to key's (a library's regions nest in the executable's: a program calls its
 * libraries). Skipped where the thread has not allocated the library's TLS block (it
 * opened none of its regions) or the stack's magic is not there. Without a branch per
 * entry: each library's 16 entries are copied whole after those kept so far and the
 * depth moves by its own; what lies past the final depth is zeroed by a mask. (A branch
 * per entry made the verifier walk every combination: 5.10 gave up, E2BIG.)
 */
static __always_inline void lib_stacks(struct fp_sample_key *key, __u64 fs)
{
	__u64 dtv, len, block, modid, at, keep;
	struct fp_lib_scratch *s;
	__u32 i, k, n, d, zero = 0;

	if (!sample_nlibs || bpf_probe_read_user(&dtv, 8, (void *)(fs + 8)) || !dtv ||
	    bpf_probe_read_user(&len, 8, (void *)(dtv - 16)))
		return;
	s = bpf_map_lookup_elem(&lib_scratch, &zero);
	if (!s)
		return;
	for (k = 0; k < FP_TLS_SLOTS; k++)
		s->ids[k] = key->ids[k];
	d = key->depth > FP_TLS_SLOTS ? FP_TLS_SLOTS : key->depth;
	for (i = 0; i < FP_SAMPLE_LIBS; i++) {
		if (i >= sample_nlibs)
			break;
		modid = sample_libs[i].modid;
		if (!modid || modid > len ||
		    bpf_probe_read_user(&block, 8, (void *)(dtv + 16 * modid)) || !block ||
		    block == (__u64)-1 ||
		    bpf_probe_read_user(&s->tls, sizeof(s->tls),
					(void *)(block + sample_libs[i].off)) ||
		    s->tls.magic != FP_TLS_MAGIC_BPF)
			continue;
		n = s->tls.depth > FP_TLS_SLOTS ? FP_TLS_SLOTS : s->tls.depth;
		if (s->tls.depth > FP_TLS_SLOTS || d + n > FP_TLS_SLOTS)
			key->deeper = 1;
		for (k = 0; k < FP_TLS_SLOTS; k++) {
			at = d + k;
			/* a mask the compiler keeps: the verifier then knows the bound */
			asm volatile("%0 &= %1" : "+r"(at) : "i"(2 * FP_TLS_SLOTS - 1));
			s->ids[at] = s->tls.ids[k];
		}
		d = d + n > FP_TLS_SLOTS ? FP_TLS_SLOTS : d + n;
	}
	for (k = 0; k < FP_TLS_SLOTS; k++) {
		/* all ones where k < d, else 0: by arithmetic, not a branch */
		keep = (__u64)(((__s64)k - (__s64)d) >> 63);
		key->ids[k] = s->ids[k] & keep;
	}
	key->depth = d;
}

/* One sample of thread tid whose TLS block was read into *tls (fsbase fs, not --remote):
 * counted per stack. */
static __always_inline int sample_stack(struct bpf_perf_event_data *ctx, __u32 tid,
					struct fp_tls_user *tls, struct fp_sample_key *key,
					__u64 fs)
{
	struct fp_sample_thread *th;
	__u32 i;

	if (tls->magic != FP_TLS_MAGIC_BPF) {
		sample_count(FP_SA_BAD_MAGIC);
		return 0;
	}
	th = bpf_map_lookup_elem(&sample_threads, &tid);
	if (!th) {
		/* a gated build keeps no count before its gate rose: all of it is this
		 * session's; otherwise the count before the first sample is not */
		struct fp_sample_thread nt = { sample_gated ? 0 : tls->unmatched, tls->unmatched,
					       sample_session, 0 };

		bpf_map_update_elem(&sample_threads, &tid, &nt, BPF_ANY);
	} else if (th->session != sample_session) {
		th->base = th->last;
		th->last = tls->unmatched;
		th->session = sample_session;
	} else {
		th->last = tls->unmatched;
	}
	key->depth = tls->depth > FP_TLS_SLOTS ? FP_TLS_SLOTS : tls->depth;
	key->deeper = tls->depth > FP_TLS_SLOTS;
	for (i = 0; i < FP_TLS_SLOTS; i++)
		if (i < key->depth)
			key->ids[i] = tls->ids[i];
	if (ctx)	/* not --remote: the daemon refuses it where libraries keep stacks */
		lib_stacks(key, fs);
	return ctx ? count_sample(ctx, key) : count_key(key);
}

/* Whether the sample in ctx fell in the kernel's handling of a uprobe at a site of the
 * target (sample_sites). */
static __always_inline bool in_probe(struct bpf_perf_event_data *ctx)
{
	struct pt_regs *user;
	__u64 ip, cs;

	if (!sample_sites_on)
		return false;
	/* the context is read in 8-byte words (cs is a 16-bit field in newer headers) */
	cs = *(__u64 *)((char *)&ctx->regs + __builtin_offsetof(struct pt_regs, cs));
	if (cs & 3) {	/* in user mode: on a site only as the trap returns (a nop) */
		ip = *(__u64 *)((char *)&ctx->regs + __builtin_offsetof(struct pt_regs, ip));
	} else {
		if (!bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs))
			return false;
		user = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
		ip = BPF_CORE_READ(user, ip);
	}
	return bpf_map_lookup_elem(&sample_sites, &ip) != NULL;
}

SEC("perf_event")
int fp_sample(struct bpf_perf_event_data *ctx)
{
	__u64 fs, id = bpf_get_current_pid_tgid();
	struct fp_sample_key key = {};
	struct fp_tls_user tls;
	struct task_struct *task;

	if ((__u32)(id >> 32) != sample_tgid || !sample_tgid)
		return 0;
	if (in_probe(ctx)) {
		sample_count(FP_SA_IN_PROBE);
		return 0;
	}
	/* not bpf_get_current_task_btf: that came in 5.11 */
	task = (struct task_struct *)bpf_get_current_task();
	fs = BPF_CORE_READ(task, thread.fsbase);
	if (sample_exe_none) {	/* only libraries keep one: an empty stack first */
		__builtin_memset(&tls, 0, sizeof(tls));
		tls.magic = FP_TLS_MAGIC_BPF;
	} else if (bpf_probe_read_user(&tls, sizeof(tls), (void *)(fs + sample_tls_off))) {
		sample_count(FP_SA_READ_FAILED);
		return 0;
	}
	user_stack(ctx, &key);
	return sample_stack(ctx, (__u32)id, &tls, &key, fs);
}

/*
 * FP_SRC_KERNEL: the regions open on the interrupted thread as its traps keep them (its
 * state in the target's object, st; NULL: it has none, no region was ever open on it).
 * A frame of a region disabled since the thread's last event is not open (the next event
 * drops it: bpf/featprof.bpf.c apply_disables): its enable generation is not the region's
 * now. Each frame goes out as both generations and its region's index in the target
 * (FP_SK_ID), featprofd compares them: no branch per frame on what was found, which a
 * verifier before 6.2 would follow each way (1M instructions on 6.1).
 */
static __always_inline int sample_kernel(struct bpf_perf_event_data *ctx,
					 struct fp_tstate *st)
{
	struct fp_sample_key key = {};
	__u32 i, d, r, g, *en;

	if (in_probe(ctx)) {
		sample_count(FP_SA_IN_PROBE);
		return 0;
	}
	user_stack(ctx, &key);
	if (!st || st->slot != sample_slot || st->owner != sample_owner)
		return count_sample(ctx, &key);	/* another occupant's state: nothing open */
	d = st->depth;
	key.deeper = d > FP_TLS_SLOTS || st->overflow;
	key.depth = d > FP_TLS_SLOTS ? FP_TLS_SLOTS : d;
	for (i = 0; i < FP_TLS_SLOTS; i++) {
		if (i >= d)
			break;
		r = st->f[i].region;
		en = bpf_map_lookup_elem(&region_enabled, &r);
		g = 0;
		if (en)
			g = *en;
		key.ids[i] = FP_SK_ID(st->f[i].gen, g, r - sample_rbase);
	}
	return count_sample(ctx, &key);
}

/*
 * FP_SRC_INPROC: the regions open on the interrupted thread as its in-process runtime
 * keeps them, in its thread block (usdt/featprof.h struct featprof_ip_thread: depth,
 * then each frame's process-wide region id), read from the thread's own memory; the ids
 * are named by the arena's names (daemon/inproc/inproc_read.c). A thread with no block
 * has no region open.
 */
SEC("perf_event")
int fp_sample_ip(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct fp_sample_key key = {};
	struct fp_ip_thread *it;
	__u32 tid = (__u32)id, d = 0, rid, i;

	if ((__u32)(id >> 32) != sample_tgid || !sample_tgid)
		return 0;
	if (in_probe(ctx)) {
		sample_count(FP_SA_IN_PROBE);
		return 0;
	}
	user_stack(ctx, &key);
	it = bpf_map_lookup_elem(&ip_threads, &tid);
	if (!it || bpf_probe_read_user(&d, sizeof(d), (void *)(it->block + FP_IPT_STATE_OFF)))
		return count_sample(ctx, &key);
	key.deeper = d > FP_TLS_SLOTS;
	key.depth = d > FP_TLS_SLOTS ? FP_TLS_SLOTS : d;
	for (i = 0; i < FP_TLS_SLOTS; i++) {
		if (i >= d)
			break;
		rid = 0;
		bpf_probe_read_user(&rid, sizeof(rid), (void *)(it->block + FP_IPT_FRAMES_OFF +
							      i * FP_IPT_FRAME_SIZE +
							      FP_IPT_FRAME_ID));
		key.ids[i] = rid;
	}
	return count_sample(ctx, &key);
}

SEC("perf_event")
int fp_sample_ts(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();

	if ((__u32)(id >> 32) != sample_tgid || !sample_tgid)
		return 0;
	return sample_kernel(ctx, bpf_task_storage_get(&tstate, bpf_get_current_task_btf(), 0,
						       0));
}

SEC("perf_event")
int fp_sample_tm(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;

	if ((__u32)(id >> 32) != sample_tgid || !sample_tgid)
		return 0;
	return sample_kernel(ctx, bpf_map_lookup_elem(&tstate_map, &tid));
}

/* --remote: who the sampler thread displaces each time it comes on a CPU. A thread
 * switched out still runnable (state 0) was running at that moment. */
SEC("tp_btf/sched_switch")
int BPF_PROG(fp_sample_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 zero = 0, *d;

	if (next->pid != sampler_tid || !sampler_tid)
		return 0;
	d = bpf_map_lookup_elem(&sample_displaced, &zero);
	if (d)
		*d = prev->tgid == sample_tgid && !task_run_state(prev) ? prev->pid : 0;
	return 0;
}

SEC("iter.s/task")
int fp_sample_remote(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct fp_sample_key key = { .ustack = FP_USTACK_NONE };
	struct fp_tls_user tls;
	__u32 zero = 0, *d, cpu;

	if (!task || task->tgid != sample_tgid || !sample_tgid)
		return 0;
	cpu = task->thread_info.cpu;
	if (!task->on_cpu) {
		d = bpf_map_lookup_elem(&sample_displaced, &zero);
		if (!d || *d != task->pid)
			return 0;	/* not running now: no sample, as no CPU time */
		cpu = bpf_get_smp_processor_id();
	}
	/* a constant index per word: the verifier takes no atomic at a variable offset */
	if (cpu < 64)
		__sync_fetch_and_or(&sample_cpus[0], 1ULL << cpu);
	else if (cpu < 128)
		__sync_fetch_and_or(&sample_cpus[1], 1ULL << (cpu - 64));
	else if (cpu < 192)
		__sync_fetch_and_or(&sample_cpus[2], 1ULL << (cpu - 128));
	else if (cpu < 256)
		__sync_fetch_and_or(&sample_cpus[3], 1ULL << (cpu - 192));
	if (bpf_copy_from_user_task(&tls, sizeof(tls),
				    (void *)(task->thread.fsbase + sample_tls_off), task, 0)) {
		sample_count(FP_SA_READ_FAILED);
		return 0;
	}
	key.tid = (__u32)task->pid;
	return sample_stack(NULL, (__u32)task->pid, &tls, &key, 0);
}
