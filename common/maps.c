// SPDX-License-Identifier: GPL-2.0
/* A process's mappings (/proc/PID/maps): common/maps.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "maps.h"

int fp_read_maps(pid_t pid, struct fp_vma **out)
{
	char path[64], line[4200];	/* a path may be up to 4096 bytes */
	struct fp_vma *v = NULL;
	int n = 0, cap = 0;
	FILE *f;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/maps");
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off, ino;
		unsigned maj, mnr;
		char perms[8];
		int at = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off,
			   &maj, &mnr, &ino, &at) < 7)
			continue;
		if (n == cap) {
			struct fp_vma *g = realloc(v, (size_t)(cap = cap ? cap * 2 : 64) *
							  sizeof(*v));

			if (!g)
				goto nomem;
			v = g;
		}
		line[strcspn(line, "\n")] = 0;
		v[n] = (struct fp_vma){ start, end, off, makedev(maj, mnr), ino, "",
					strdup(at ? line + at : "") };
		snprintf(v[n].perms, sizeof(v[n].perms), "%.4s", perms);
		if (!v[n++].path)
			goto nomem;
	}
	fclose(f);
	*out = v;
	return n;
nomem:
	fclose(f);
	fp_free_maps(v, n);
	return -ENOMEM;
}

void fp_free_maps(struct fp_vma *v, int n)
{
	int i;

	for (i = 0; v && i < n; i++)
		free(v[i].path);
	free(v);
}

uint64_t fp_vma_addr(const struct fp_vma *v, int n, uint64_t dev, uint64_t ino, uint64_t off)
{
	int i;

	for (i = 0; i < n; i++)
		if (ino && v[i].dev == dev && v[i].ino == ino && off >= v[i].off &&
		    off < v[i].off + (v[i].end - v[i].start))
			return v[i].start + off - v[i].off;
	return 0;
}
