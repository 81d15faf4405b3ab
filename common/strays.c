// SPDX-License-Identifier: GPL-2.0
/* Breakpoints at featprof sites, compared with the file (common/strays.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "strays.h"

struct vma {
	uint64_t start, end, off, dev, ino;
};

static int read_vmas(pid_t pid, struct vma **out)
{
	char path[64], line[4096];
	struct vma *v = NULL;
	int n = 0, cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off, ino;
		unsigned maj, mnr;
		char perms[8];

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu", &start, &end, perms, &off, &maj,
			   &mnr, &ino) != 7 || !ino)
			continue;
		if (n == cap) {
			struct vma *g = realloc(v, (size_t)(cap = cap ? cap * 2 : 64) * sizeof(*v));

			if (!g) {
				free(v);
				fclose(f);
				return -ENOMEM;
			}
			v = g;
		}
		v[n++] = (struct vma){ start, end, off, makedev(maj, mnr), ino };
	}
	fclose(f);
	*out = v;
	return n;
}

/* The byte at file offset off of obj as the process has it mapped; -1: not mapped. */
static int mem_byte(int memfd, const struct vma *v, int nv, const struct fp_object *obj,
		    uint64_t off)
{
	uint8_t b;
	int i;

	for (i = 0; i < nv; i++)
		if (v[i].dev == obj->dev && v[i].ino == obj->ino && off >= v[i].off &&
		    off < v[i].off + (v[i].end - v[i].start))
			return pread(memfd, &b, 1, (off_t)(v[i].start + off - v[i].off)) == 1 ? b
											  : -1;
	return -1;
}

static int file_byte(const struct fp_object *obj, uint64_t off)
{
	uint8_t b;

	return obj->fd >= 0 && pread(obj->fd, &b, 1, (off_t)off) == 1 ? b : -1;
}

int fp_traps(const struct fp_proc *proc, struct fp_trap *out, int max)
{
	struct vma *v = NULL;
	char path[64];
	int nv, memfd, o, s, k, n = 0;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)proc->pid);
	memfd = open(path, O_RDONLY | O_CLOEXEC);
	if (memfd < 0)
		return -errno;
	nv = read_vmas(proc->pid, &v);
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
	free(v);
	close(memfd);
	return n;
}
