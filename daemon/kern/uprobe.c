// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's uprobe interfaces, where libbpf does not offer what featprofd needs.
 *
 * The multi-uprobe link (Linux 6.6, commit 89ae89f53d20 "bpf: Add multi uprobe link").
 * libbpf has it from 1.3 (bpf_link_create_opts.uprobe_multi); Debian 12's libbpf 1.1
 * predates it, so with an older libbpf the link is created with the raw command: the
 * struct below is the layout of union bpf_attr's link_create.uprobe_multi.
 *
 * A perf-event uprobe (the uprobe PMU, Linux 4.17; its ref_ctr_offset, the USDT
 * semaphore, 4.20): what libbpf's attach does underneath, for programs that are not in a
 * skeleton and for registering sites with no program at all (daemon/targets/journal.c).
 *
 * The cookie trampoline. A uprobe program learns which site fired from the attach cookie
 * (bpf_get_attach_cookie for uprobes: Linux 5.15, commit 7adfc6c9b315). On an older
 * kernel each distinct cookie gets a program of its own, built here from 18 instructions:
 * it stores the cookie in a per-CPU slot and tail-calls the site program, which reads the
 * slot (bpf/featprof.bpf.c site_cookie_of). Uprobe programs run with preemption disabled
 * and a tail call does not return, so nothing runs on the CPU between the store and the
 * read. The site program's verification is done once, at load; a trampoline's takes
 * microseconds.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf_version.h>
#include <errno.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "uprobe.h"

#if LIBBPF_MAJOR_VERSION > 1 || (LIBBPF_MAJOR_VERSION == 1 && LIBBPF_MINOR_VERSION >= 3)

int fp_uprobe_multi_link(int prog_fd, const char *path, const uint64_t *offs,
			 const uint64_t *refs, const uint64_t *cookies, uint32_t cnt, pid_t pid,
			 unsigned flags)
{
	_Static_assert(sizeof(unsigned long) == sizeof(uint64_t), "64-bit offsets");
	LIBBPF_OPTS(bpf_link_create_opts, opts, .uprobe_multi.path = path,
		    .uprobe_multi.offsets = (const unsigned long *)offs,
		    .uprobe_multi.ref_ctr_offsets = (const unsigned long *)refs,
		    .uprobe_multi.cookies = cookies, .uprobe_multi.cnt = cnt,
		    .uprobe_multi.pid = (__u32)pid,
		    .uprobe_multi.flags = flags & ~FP_UPROBE_SESSION);
	int fd = bpf_link_create(prog_fd, 0,
				 (enum bpf_attach_type)(flags & FP_UPROBE_SESSION
								? FP_ATTACH_UPROBE_SESSION
								: FP_ATTACH_UPROBE_MULTI),
				 &opts);

	return fd < 0 ? -errno : fd;
}

#else

int fp_uprobe_multi_link(int prog_fd, const char *path, const uint64_t *offs,
			 const uint64_t *refs, const uint64_t *cookies, uint32_t cnt, pid_t pid,
			 unsigned flags)
{
	struct {
		__u32 prog_fd, target_fd, attach_type, flags;
		__u64 path, offsets, ref_ctr_offsets, cookies;
		__u32 cnt, mflags, pid;
	} lc = {
		.prog_fd = (__u32)prog_fd,
		.attach_type = flags & FP_UPROBE_SESSION ? FP_ATTACH_UPROBE_SESSION
							 : FP_ATTACH_UPROBE_MULTI,
		.path = (__u64)(uintptr_t)path,
		.offsets = (__u64)(uintptr_t)offs,
		.ref_ctr_offsets = (__u64)(uintptr_t)refs,
		.cookies = (__u64)(uintptr_t)cookies,
		.cnt = cnt,
		.mflags = flags & ~FP_UPROBE_SESSION,
		.pid = (__u32)pid,
	};
	union bpf_attr attr;
	int fd;

	_Static_assert(sizeof(lc) <= sizeof(attr), "uprobe_multi attr");
	memset(&attr, 0, sizeof(attr));
	memcpy(&attr, &lc, sizeof(lc));
	fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

#endif

int fp_uprobe_pmu(void)
{
	static int type = -1;
	FILE *f;

	if (type >= 0)
		return type;
	f = fopen("/sys/bus/event_source/devices/uprobe/type", "re");
	if (!f)
		return -errno;
	if (fscanf(f, "%d", &type) != 1)
		type = -1;
	fclose(f);
	return type >= 0 ? type : -ENOENT;
}

/* The config bit that makes a uprobe PMU event a return probe (format/retprobe says
 * "config:N"; 0 on every kernel so far). */
static int retprobe_bit(void)
{
	static int bit = -1;
	FILE *f;

	if (bit >= 0)
		return bit;
	bit = 0;
	f = fopen("/sys/bus/event_source/devices/uprobe/format/retprobe", "re");
	if (f) {
		if (fscanf(f, "config:%d", &bit) != 1 || bit < 0 || bit > 31)
			bit = 0;
		fclose(f);
	}
	return bit;
}

int fp_uprobe_perf_open(const char *path, uint64_t off, uint64_t ref, pid_t pid, int ret)
{
	struct perf_event_attr a = { .size = sizeof(a) };
	int type = fp_uprobe_pmu(), fd;

	if (type < 0)
		return type;
	a.type = (uint32_t)type;
	a.config1 = (uint64_t)(uintptr_t)path;
	a.config2 = off;
	/* the semaphore: the PMU's format/ref_ctr_offset says config:32-63 */
	a.config = ref << 32 | (ret ? 1ULL << retprobe_bit() : 0);
	/* every process: pid -1 on one CPU (a uprobe's program runs wherever it is hit) */
	fd = (int)syscall(SYS_perf_event_open, &a, pid > 0 ? pid : -1, pid > 0 ? -1 : 0, -1,
			  PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int fp_uprobe_empty_prog(void)
{
	static int fd = -ENOENT;
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o,
		    .expected_attach_type = (enum bpf_attach_type)FP_ATTACH_UPROBE_MULTI);

	if (fd == -ENOENT) {
		fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "fp_empty", "GPL", insns, 2, &o);
		fd = fd < 0 ? -errno : fd;
		if (fd == -ENOENT)
			fd = -EINVAL;
	}
	return fd;
}

int fp_uprobe_gate(int multi, const char *path, uint64_t off, uint64_t ref, pid_t pid)
{
	int prog = multi ? fp_uprobe_empty_prog() : -1;

	if (prog < 0)
		return fp_uprobe_perf_open(path, off, ref, pid, 0);
	return fp_uprobe_multi_link(prog, path, &off, &ref, NULL, 1, pid, 0);
}

int fp_uprobe_hook(int prog_fd, int multi, const char *path, uint64_t off, pid_t pid)
{
	if (!multi)
		return fp_uprobe_perf_attach(prog_fd, path, off, 0, pid, 0);
	return fp_uprobe_multi_link(prog_fd, path, &off, NULL, NULL, 1, pid, 0);
}

int fp_uprobe_perf_attach(int prog_fd, const char *path, uint64_t off, uint64_t ref,
			  pid_t pid, int retprobe)
{
	int fd = fp_uprobe_perf_open(path, off, ref, pid, retprobe), ret;

	if (fd < 0)
		return fd;
	if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog_fd) || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

/* Instructions, spelled out: the kernel's filter.h macros are not in its uapi headers. */
#define INSN(c, d, s, o, i)                                                                \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define LD_IMM64(d, s, v)                                                                  \
	INSN(BPF_LD | BPF_DW | BPF_IMM, d, s, 0, (int32_t)(uint32_t)(v)),                 \
		INSN(0, 0, 0, 0, (int32_t)(uint32_t)((uint64_t)(v) >> 32))

int fp_cookie_trampoline(uint64_t cookie, int slot_map_fd, int prog_array_fd)
{
	const struct bpf_insn insns[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0),	/* r6 = ctx */
		INSN(BPF_ST | BPF_W | BPF_MEM, BPF_REG_10, 0, -4, 0),	/* key 0, stack */
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4),	/* r2 = &key */
		LD_IMM64(BPF_REG_1, BPF_PSEUDO_MAP_FD, slot_map_fd),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
		INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 8, 0),	/* NULL: to exit */
		LD_IMM64(BPF_REG_1, 0, cookie),
		INSN(BPF_STX | BPF_DW | BPF_MEM, BPF_REG_0, BPF_REG_1, 0, 0), /* *slot */
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_6, 0, 0),
		LD_IMM64(BPF_REG_2, BPF_PSEUDO_MAP_FD, prog_array_fd),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, 0),	/* index 0 */
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_tail_call),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "fp_tramp", "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), NULL);

	return fd < 0 ? -errno : fd;
}
