/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What featprofd reads of a process from /proc and from its memory (common/procfs.c): the
 * one place that parses /proc/PID/stat and /proc/PID/status and calls process_vm_readv
 * and process_vm_writev.
 */
#ifndef FP_PROCFS_H
#define FP_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Of /proc/PID/stat: the state (field 3: 'R', 'S', 'Z', ...), the flags (field 9:
 * PF_EXITING is 0x4) and the start time (field 22, clock ticks since boot: a pid reused
 * by a new process differs). */
struct fp_procfs_stat {
	char state;
	unsigned long flags;
	unsigned long long start_time;
};

/* 0, -ENOENT (no such process) or -errno; -EIO where the line does not parse. */
int fp_procfs_stat(pid_t pid, struct fp_procfs_stat *st);
/* The start time of pid (field 22), 0 when it cannot be read. */
unsigned long long fp_procfs_start_time(pid_t pid);

/* Of /proc/PID/status: the thread group, the real, effective and saved uids, the
 * effective capabilities (have_cap: the line was there) and the process's pid in its own
 * pid namespace (the last NSpid field; pid where the kernel shows none), its threads. */
struct fp_procfs_status {
	pid_t tgid, nspid;
	int threads;		/* its Threads line: how many the process has now */
	unsigned ruid, euid, suid;
	unsigned long long cap_eff;
	int have_cap;
};

/* 0 or -ESRCH (no such process, or no Uid line). */
int fp_procfs_status(pid_t pid, struct fp_procfs_status *st);

/* Up to len bytes at addr of process pid's memory into buf (a read may stop short at the
 * end of a mapping): the count read, or -errno. */
ssize_t fp_procfs_read(pid_t pid, uint64_t addr, void *buf, size_t len);
/* Exactly len bytes at addr of process pid's memory into buf: 0, or -errno (-EIO: short). */
int fp_procfs_peek(pid_t pid, uint64_t addr, void *buf, size_t len);
/* len bytes from buf to addr of process pid's memory: 0, or -errno (-EIO: short). */
int fp_procfs_write(pid_t pid, uint64_t addr, const void *buf, size_t len);

#endif
