// SPDX-License-Identifier: GPL-2.0
/* Breakpoints at featprof sites, compared with the file (common/strays.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "maps.h"
#include "strays.h"

/* The byte at file offset off of obj as the process has it mapped; -1: not mapped. */
static int mem_byte(int memfd, const struct fp_vma *v, int nv, const struct fp_object *obj,
		    uint64_t off)
{
	uint64_t a = fp_vma_addr(v, nv, obj->dev, obj->ino, off);
	uint8_t b;

	return a && pread(memfd, &b, 1, (off_t)a) == 1 ? b : -1;
}

static int file_byte(const struct fp_object *obj, uint64_t off)
{
	uint8_t b;

	return obj->fd >= 0 && pread(obj->fd, &b, 1, (off_t)off) == 1 ? b : -1;
}

int fp_traps(const struct fp_proc *proc, struct fp_trap *out, int max)
{
	struct fp_vma *v = NULL;
	char path[64];
	int nv, memfd, o, s, k, n = 0;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)proc->pid);
	memfd = open(path, O_RDONLY | O_CLOEXEC);
	if (memfd < 0)
		return -errno;
	nv = fp_read_maps(proc->pid, &v);
	if (nv < 0) {
		close(memfd);
		return nv;
	}
	for (o = 0; o < proc->nobjs; o++) {
		const struct fp_object *obj = proc->objs[o];

		for (s = 0; s < obj->nsites; s++) {
			const struct fp_site *site = &obj->sites[s];
			uint64_t at[2] = { site->loc_off, site->opt_off };

			for (k = 0; k < 2; k++) {
				if (!at[k] || mem_byte(memfd, v, nv, obj, at[k]) != 0xcc ||
				    file_byte(obj, at[k]) == 0xcc)
					continue;
				if (n < max)
					out[n] = (struct fp_trap){ o, s, at[k] };
				n++;
			}
		}
	}
	fp_free_maps(v, nv);
	close(memfd);
	return n;
}
