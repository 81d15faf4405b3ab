/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's types the BPF programs use, written here so that the build does not
 * depend on the kernel it runs on (a package builder has no BTF of the machine the
 * package will run on; the running kernel's vmlinux.h changed with every update).
 *
 * Two kinds:
 *  - UAPI (map types, flags, helper ids, the perf_event context): <linux/bpf.h> from
 *    linux-libc-dev, a fixed ABI; bpf_perf_event_data is the UAPI layout.
 *  - Kernel-internal structures: only the fields read, under preserve_access_index, so
 *    every access is a CO-RE relocation resolved against the running kernel's BTF when
 *    libbpf loads the object (a field's offset is never taken from this file). A field
 *    that a kernel lacks fails the load by name, unless the code asks first
 *    (bpf_core_field_exists, as task_state.h does for __state).
 * x86-64 only (pt_regs below, and the sampler's register layout in featprof_bpf.h);
 * `make BPF_TYPES=btf` builds from a vmlinux.h dumped from VMLINUX_BTF instead.
 */
#ifndef FP_KERNEL_TYPES_H
#define FP_KERNEL_TYPES_H

#ifdef FP_BTF_VMLINUX
#include "vmlinux.h"
#else

#include <linux/bpf.h>

/* bpf_tracing.h names pt_regs' fields as the kernel does (di, ip, sp) when this is set */
#define __VMLINUX_H__

typedef _Bool bool;
enum { false = 0, true = 1 };
typedef int pid_t;

/* x86-64 user registers as the kernel saves them: the layout is fixed by the entry
 * code (FP_PT_REGS_WORDS words); cs and ss are 64-bit slots whose low 16 bits hold the
 * selector */
struct pt_regs {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	unsigned long ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};
typedef struct pt_regs bpf_user_pt_regs_t;

/* perf_event programs' context (UAPI, linux/bpf_perf_event.h) */
struct bpf_perf_event_data {
	bpf_user_pt_regs_t regs;
	__u64 sample_period;
	__u64 addr;
};

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct sched_entity {
	__u64 sum_exec_runtime;
};

struct thread_struct {
	unsigned long fsbase;
};

struct xol_area {
	unsigned long vaddr;
};

struct uprobes_state {
	struct xol_area *xol_area;
};

struct mm_struct {
	struct uprobes_state uprobes_state;
};

struct thread_info {
	__u32 cpu;	/* x86-64: CONFIG_THREAD_INFO_IN_TASK, task_struct's first member */
};

struct task_struct {
	struct thread_info thread_info;
	unsigned int __state;	/* 5.14 on; task_state.h reads `long state` before */
	void *stack;
	int on_cpu;
	struct sched_entity se;
	struct mm_struct *mm;
	pid_t pid;
	pid_t tgid;
	struct thread_struct thread;
};

struct super_block {
	__u32 s_dev;
};

struct inode {
	struct super_block *i_sb;
	unsigned long i_ino;
};

struct file {
	struct inode *f_inode;
};

struct linux_binprm {
	struct file *file;
};

struct bpf_iter_meta;

struct bpf_iter__task {
	union {
		struct bpf_iter_meta *meta;
	};
	union {
		struct task_struct *task;
	};
};

#pragma clang attribute pop

#endif /* FP_BTF_VMLINUX */
#endif /* FP_KERNEL_TYPES_H */
