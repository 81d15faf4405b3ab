// SPDX-License-Identifier: GPL-2.0
/*
 * The multi-uprobe link (Linux 6.6, commit 89ae89f53d20 "bpf: Add multi uprobe link").
 * libbpf has it from 1.3 (bpf_link_create_opts.uprobe_multi); Debian 12's libbpf 1.1
 * predates it, so with an older libbpf the link is created with the raw command: the
 * struct below is the layout of union bpf_attr's link_create.uprobe_multi.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf_version.h>
#include <errno.h>
#include <linux/bpf.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "uprobe_multi.h"

#if LIBBPF_MAJOR_VERSION > 1 || (LIBBPF_MAJOR_VERSION == 1 && LIBBPF_MINOR_VERSION >= 3)

int fp_uprobe_multi_link(int prog_fd, const char *path, const uint64_t *offs,
			 const uint64_t *refs, const uint64_t *cookies, uint32_t cnt, pid_t pid)
{
	_Static_assert(sizeof(unsigned long) == sizeof(uint64_t), "64-bit offsets");
	LIBBPF_OPTS(bpf_link_create_opts, opts, .uprobe_multi.path = path,
		    .uprobe_multi.offsets = (const unsigned long *)offs,
		    .uprobe_multi.ref_ctr_offsets = (const unsigned long *)refs,
		    .uprobe_multi.cookies = cookies, .uprobe_multi.cnt = cnt,
		    .uprobe_multi.pid = (__u32)pid);
	int fd = bpf_link_create(prog_fd, 0, (enum bpf_attach_type)FP_ATTACH_UPROBE_MULTI, &opts);

	return fd < 0 ? -errno : fd;
}

#else

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

#endif
