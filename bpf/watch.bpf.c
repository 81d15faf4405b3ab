// SPDX-License-Identifier: GPL-2.0
/*
 * featprofd's process watcher, one object for the daemon (not per target): kernel
 * events about the processes it profiles, passed to user space through a ring buffer.
 *
 * - The dynamic linker changed the list of loaded objects (dlopen, dlclose) in a
 *   profiled process: its new libraries' regions then join the target.
 * - exec: a profiled process runs another program (its catalog is read again), or any
 *   process starts an executable profiled as a whole (it joins the group); a process of
 *   a run (featprof run: a process tree, not a file) stays in it whatever it runs.
 * - fork: a child of a group's process joins the group (forked servers, no exec).
 * - exit of a process: it leaves the maps.
 *
 * The daemon coalesces a burst of events into one catalog read per loop round.
 */
#include "kernel_types.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "featprof_bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Processes profiled: tgid -> executable group (featprof enable --exe), 0 = a pid target;
 * FP_MEMBER_OWN set when a member has a target of its own (featprof_bpf.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u32);
} watched SEC(".maps");

/* Threads of members held by their group's file object (featprof_bpf.h FP_HELD_RELEASED):
 * written and read by the targets' objects only (the daemon reuses its fd there). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u32);
} held SEC(".maps");

/* Executables profiled as a whole: the file (kernel dev_t, inode) -> its group. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, struct fp_file_key);
	__type(value, __u32);
} exes SEC(".maps");

/* Groups that are runs (featprof run): group -> 1. Their members are a process tree,
 * seeded by the daemon with the run's first process before its exec. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FP_MAX_GROUPS + 1);
	__type(key, __u32);
	__type(value, __u32);
} runs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} events SEC(".maps");

__u64 lost = 0;

static __always_inline void emit(__u32 kind, __u32 tgid, __u32 other)
{
	struct fp_watch_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		__sync_fetch_and_add(&lost, 1);
		return;
	}
	e->kind = kind;
	e->tgid = tgid;
	e->other = other;
	e->pad = 0;
	e->ts = bpf_ktime_get_ns();
	bpf_ringbuf_submit(e, 0);
}

/*
 * The dynamic linker's debugger hook: ld.so calls _dl_debug_state() whenever its list
 * of loaded objects changes (r_debug's r_brk: before and after dlopen maps objects,
 * and at dlclose), which is what gdb watches. Attached per process (pid filter) by
 * the daemon; the second call of a dlopen comes after the new objects are mapped.
 * Kernel functions (vm_mmap_pgoff) are no choice here: fexit programs are refused
 * (EPERM) and there is no kprobe PMU on this project's machines.
 */
SEC("uprobe")
int fp_watch_dl(struct pt_regs *ctx)
{
	emit(FP_WATCH_MMAP, (__u32)(bpf_get_current_pid_tgid() >> 32), 0);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(fp_watch_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct inode *ino = BPF_CORE_READ(bprm, file, f_inode);
	struct fp_file_key key = {
		.dev = BPF_CORE_READ(ino, i_sb, s_dev),
		.ino = BPF_CORE_READ(ino, i_ino),
	};
	__u32 tgid = BPF_CORE_READ(p, tgid), *g = bpf_map_lookup_elem(&exes, &key), *run;
	__u32 *w = bpf_map_lookup_elem(&watched, &tgid);

	if (w && *w) {	/* a run's process keeps its run, whatever it runs now */
		__u32 group = *w & ~FP_MEMBER_OWN;

		run = bpf_map_lookup_elem(&runs, &group);
		if (run && *run) {	/* the new program: the file's link until its own */
			bpf_map_update_elem(&watched, &tgid, &group, BPF_ANY);
			emit(FP_WATCH_EXEC, tgid, group);
			return 0;
		}
	}
	if (g) {	/* measured by the group's inode-wide link from here on */
		__u32 group = *g;

		bpf_map_update_elem(&watched, &tgid, &group, BPF_ANY);
		emit(FP_WATCH_EXEC, tgid, group);
	} else if (w) {
		if (*w)	/* a group's member runs another program: it leaves the group */
			bpf_map_delete_elem(&watched, &tgid);
		emit(FP_WATCH_EXEC, tgid, 0);
	}
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(fp_watch_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid), group;
	__u32 *g;

	if (BPF_CORE_READ(child, pid) != ctgid)	/* a thread, not a process */
		return 0;
	g = bpf_map_lookup_elem(&watched, &ptgid);
	if (!g || !*g)	/* only a group follows children */
		return 0;
	group = *g & ~FP_MEMBER_OWN;	/* the child: the group's link until it has its own */
	bpf_map_update_elem(&watched, &ctgid, &group, BPF_ANY);
	emit(FP_WATCH_FORK, ctgid, group);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(fp_watch_exit, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);

	if (BPF_CORE_READ(p, pid) == tgid)
		bpf_map_delete_elem(&watched, &tgid);
	return 0;
}
