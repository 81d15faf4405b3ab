/* SPDX-License-Identifier: GPL-2.0 */
/* The multi-uprobe BPF link, created with the raw BPF_LINK_CREATE command. */
#ifndef FP_UPROBE_MULTI_H
#define FP_UPROBE_MULTI_H

#include <stdint.h>
#include <sys/types.h>

#define FP_ATTACH_UPROBE_MULTI 48	/* BPF_TRACE_UPROBE_MULTI, not in 6.1 uapi headers */

/*
 * One link attaching prog_fd at cnt offsets of the file at path (refs: semaphore
 * offsets or 0; cookies: bpf_get_attach_cookie values), filtered to pid's thread group
 * (0: every process). Returns the link fd or -errno.
 */
int fp_uprobe_multi_link(int prog_fd, const char *path, const uint64_t *offs,
			 const uint64_t *refs, const uint64_t *cookies, uint32_t cnt, pid_t pid);

#endif
