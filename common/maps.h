/* SPDX-License-Identifier: GPL-2.0 */
/* A process's mappings (/proc/PID/maps), and where an offset of a mapped file lies. */
#ifndef FP_MAPS_H
#define FP_MAPS_H

#include <stdint.h>
#include <sys/types.h>

struct fp_vma {
	uint64_t start, end, off;
	uint64_t dev, ino;	/* dev as stat(2) encodes it (makedev); ino 0: anonymous */
};

/* Every mapping of pid, in the file's order (*out: malloc'ed, the caller frees it):
 * their count, or -errno. */
int fp_read_maps(pid_t pid, struct fp_vma **out);
/* The address at which offset off of the file (dev, ino) is mapped; 0: it is not. */
uint64_t fp_vma_addr(const struct fp_vma *v, int n, uint64_t dev, uint64_t ino, uint64_t off);

#endif
