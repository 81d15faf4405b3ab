/* SPDX-License-Identifier: GPL-2.0 */
/* The kernel's uprobe interfaces by hand (daemon/kern/uprobe.c). */
#ifndef FP_UPROBE_H
#define FP_UPROBE_H

#include <stdint.h>
#include <sys/types.h>

#define FP_ATTACH_UPROBE_MULTI 48	/* BPF_TRACE_UPROBE_MULTI, not in 6.1 uapi headers */
#define FP_UPROBE_MULTI_RETURN 1	/* BPF_F_UPROBE_MULTI_RETURN: return probes */
#define FP_ATTACH_UPROBE_SESSION 57	/* BPF_TRACE_UPROBE_SESSION (6.13) */
#define FP_UPROBE_SESSION (1u << 31)	/* fp_uprobe_multi_link: a session link */

/*
 * One link attaching prog_fd at cnt offsets of the file at path (refs: semaphore
 * offsets or 0; cookies: bpf_get_attach_cookie values), filtered to pid's thread group
 * (0: every process); flags FP_UPROBE_MULTI_RETURN: return probes of the functions at
 * those offsets; FP_UPROBE_SESSION: a session link (prog_fd a session program: its entry
 * and return). Returns the link fd or -errno.
 */
int fp_uprobe_multi_link(int prog_fd, const char *path, const uint64_t *offs,
			 const uint64_t *refs, const uint64_t *cookies, uint32_t cnt, pid_t pid,
			 unsigned flags);

/* The uprobe PMU's type (/sys/bus/event_source/devices/uprobe/type), -errno if none. */
int fp_uprobe_pmu(void);
/* A perf-event uprobe at offset off of the file at path, ref the semaphore's offset or 0,
 * for pid (0: every process), with no program; ret: the return probe of the function
 * there. The fd (closing it unregisters) or -errno. */
int fp_uprobe_perf_open(const char *path, uint64_t off, uint64_t ref, pid_t pid, int ret);
/* The same with prog_fd attached and enabled: the fd, or -errno. */
int fp_uprobe_perf_attach(int prog_fd, const char *path, uint64_t off, uint64_t ref,
			  pid_t pid, int ret);
/*
 * Where the kernel has the multi-uprobe link (multi: fp_kernel_caps(), as allowed),
 * featprofd's single uprobes are such links too, filtered to pid: a perf
 * event's last close unregisters under the tracing core's event_mutex and waits for a
 * grace period there (~0.1 s here), one close after another, where links close side by
 * side and share their grace periods (daemon/util/closer.c). Returns an fd or -errno.
 *
 * fp_uprobe_gate: a semaphore raised (ref the semaphore's offset) with no program, at a
 * site nothing executes. fp_uprobe_hook: prog_fd attached, which is a uprobe.multi
 * program where multi, else a plain uprobe one.
 */
int fp_uprobe_gate(int multi, const char *path, uint64_t off, uint64_t ref, pid_t pid);
int fp_uprobe_hook(int prog_fd, int multi, const char *path, uint64_t off, pid_t pid);
/* A uprobe.multi program that does nothing (loaded once): its fd or -errno. */
int fp_uprobe_empty_prog(void);

/* A uprobe program that stores cookie in slot 0 of the per-CPU array slot_map_fd and
 * tail-calls entry 0 of prog_array_fd. Its fd, or -errno. */
int fp_cookie_trampoline(uint64_t cookie, int slot_map_fd, int prog_array_fd);

#endif
