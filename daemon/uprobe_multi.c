// SPDX-License-Identifier: GPL-2.0
/*
 * Linux 6.6 added the multi-uprobe link (commit 89ae89f53d20 "bpf: Add multi uprobe
 * link"); Debian 12's libbpf 1.1 predates it, so the link is created with the raw
 * command. The struct below is the layout of union bpf_attr's link_create.uprobe_multi.
 * No libbpf here: the benchmark's floor (tests/bench/busyloop.c) uses it too.
 */
#include <errno.h>
#include <linux/bpf.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "uprobe_multi.h"

int fp_uprobe_multi_link(int prog_fd, const char *path, const uint64_t *offs,
			 const uint64_t *refs, const uint64_t *cookies, uint32_t cnt, pid_t pid)
{
	struct {
		__u32 prog_fd, target_fd, attach_type, flags;
		__u64 path, offsets, ref_ctr_offsets, cookies;
		__u32 cnt, mflags, pid;
	} lc = {
		.prog_fd = (__u32)prog_fd,
		.attach_type = FP_ATTACH_UPROBE_MULTI,
		.path = (__u64)(uintptr_t)path,
		.offsets = (__u64)(uintptr_t)offs,
		.ref_ctr_offsets = (__u64)(uintptr_t)refs,
		.cookies = (__u64)(uintptr_t)cookies,
		.cnt = cnt,
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
