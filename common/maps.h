/* SPDX-License-Identifier: GPL-2.0 */
/* A process's mappings (/proc/PID/maps), and where an offset of a mapped file lies: the
 * one reader of that file (catalogs, strays, in-process timing, sampling, ld.so's hook,
 * the calibration's trampoline check). */
#ifndef FP_MAPS_H
#define FP_MAPS_H

#include <stdint.h>
#include <sys/types.h>

struct fp_vma {
	uint64_t start, end, off;
	uint64_t dev, ino;	/* dev as stat(2) encodes it (makedev); ino 0: anonymous */
	char perms[5];		/* "r-xp" */
	char *path;		/* as the kernel shows it: "" anonymous, "[vdso]", a path with
				 * " (deleted)" after it */
};

/* Every mapping of pid (0: this process), in the file's order (*out: fp_free_maps):
 * their count, or -errno. */
int fp_read_maps(pid_t pid, struct fp_vma **out);
void fp_free_maps(struct fp_vma *v, int n);
/* The address at which offset off of the file (dev, ino) is mapped; 0: it is not. */
uint64_t fp_vma_addr(const struct fp_vma *v, int n, uint64_t dev, uint64_t ino, uint64_t off);

#endif
