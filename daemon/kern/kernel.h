/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the running kernel offers featprofd, found from its BTF (daemon/kern/kernel.c): the
 * mechanism used for each part, or why a part is unavailable.
 */
#ifndef FP_KERNEL_H
#define FP_KERNEL_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"

struct json_object;

/* The mechanisms featprofd chooses between; each true where the kernel has it. */
struct fp_kernel_caps {
	bool btf;		/* /sys/kernel/btf/vmlinux: CO-RE programs load */
	bool ringbuf;		/* BPF ring buffer (5.8): the watcher, record */
	bool tp_btf_sched;	/* BTF-typed sched_switch/wakeup/exit (5.5) */
	bool task_storage;	/* task storage for tracing + bpf_get_current_task_btf (5.11) */
	bool bpf_loop;		/* bpf_loop (5.17) */
	bool switch_state;	/* sched_switch's prev_state argument (5.18) */
	bool cookie;		/* bpf_get_attach_cookie for uprobes (5.15) */
	bool uprobe_multi;	/* the multi-uprobe link (6.6) */
	bool uprobe_session;	/* uprobe sessions (6.13): one program at entry and return */
	bool copy_from_user_task;	/* bpf_copy_from_user_task (5.18): sample --remote */
	bool task_pt_regs;	/* bpf_task_pt_regs (5.15): sampling tells probe time apart */
	bool ringbuf_inner;	/* a ring buffer inside an array of maps: record's ring,
				 * swapped in per recording (5.10 has it) */
	char without[128];	/* FEATPROF_KERNEL_WITHOUT, as given ("" if unset) */
};

/*
 * Read once from the kernel's BTF. FEATPROF_KERNEL_WITHOUT (a comma-separated list of
 * the names above, or "all": every one that Linux 5.10 lacks) makes featprofd act as if
 * the kernel lacked them: the fallbacks of older kernels, tested on this one
 * (tests/kernels/run.sh).
 */
const struct fp_kernel_caps *fp_kernel_caps(void);
/* Thread state by task storage (else a map keyed by thread id): 5.17 and later. */
bool fp_kernel_task_storage(void);
/* The kernel's mechanisms as a JSON object for status ({"release", "mechanisms":
 * {part: "what is used", ...}, "unavailable": {part: "why", ...}}); NULL: out of
 * memory. Read once, then the same object (a new reference each call). */
struct json_object *fp_kernel_mechanisms(int nop5_optimized);
/* What featprofd cannot run without that this kernel lacks, as one line in e (the
 * parts and the kernel each arrived in): -EOPNOTSUPP. 0: nothing missing. */
int fp_kernel_missing(struct fp_err *e);

#endif
