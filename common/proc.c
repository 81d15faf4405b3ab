// SPDX-License-Identifier: GPL-2.0
/*
 * A running process's objects: the files mapped executable (common/maps.c reads
 * /proc/PID/maps), each read once (elf.c) through /proc/PID/map_files where the path
 * is gone or another mount namespace's, and read again only when the mapping changed
 * (fp_proc__refresh: dlopen, dlclose). This module does not log.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "maps.h"
#include "notes.h"
#include "err.h"

#define MAX_PROC_OBJECTS 4096

void fp_proc__free(struct fp_proc *proc)
{
	int i;

	if (!proc)
		return;
	for (i = 0; i < proc->nobjs; i++)
		fp_object__free(proc->objs[i]);
	for (i = 0; i < proc->nerrors; i++)
		free(proc->errors[i]);
	free(proc->objs);
	free(proc->errors);
	free(proc->seen);
	free(proc);
}

int fp_strv_add(char ***arr, int *n, const char *s)
{
	char **a = realloc(*arr, sizeof(*a) * (size_t)(*n + 1));

	if (!a)
		return -ENOMEM;
	*arr = a;
	a[*n] = strdup(s);
	if (!a[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

/*
 * Opens the file of one mapping: map_files first, else the path through the process's
 * root if that is the mapped inode. The fd, or -errno with e filled.
 */
static int open_mapping(pid_t pid, unsigned long long start, unsigned long long end,
			const char *path, int deleted, uint64_t dev, uint64_t ino, struct fp_err *e)
{
	char p[4200];
	struct stat st;
	int fd, no;

	snprintf(p, sizeof(p), "/proc/%d/map_files/%llx-%llx", (int)pid, start, end);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	no = errno;
	if (fd >= 0)	/* the mapped file itself */
		return fd;
	if (no != EPERM && no != EACCES)
		return fp_fail(e, no, "%s: cannot open %s: %s", path, p, strerror(no));
	if (!deleted) {
		snprintf(p, sizeof(p), "/proc/%d/root%s", (int)pid, path);
		fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			no = errno;
			return fp_fail(e, no, "%s: cannot open: %s", path, strerror(no));
		}
	}
	if (fd < 0 || fstat(fd, &st) || (uint64_t)st.st_ino != ino ||
	    (uint64_t)makedev(major(st.st_dev), minor(st.st_dev)) != dev) {
		if (fd >= 0)
			close(fd);
		return fp_fail(e, EPERM, "%s: %s since it was mapped; reading the mapped file "
			       "needs /proc/%d/map_files (CAP_SYS_ADMIN or "
			       "CAP_CHECKPOINT_RESTORE)",
			       path, deleted ? "deleted" : "replaced on disk", (int)pid);
	}
	return fd;
}

/* Whether the file dev/ino was read before (1), else it is recorded as read now (0); -E2BIG
 * past MAX_PROC_OBJECTS, -ENOMEM. */
static int seen_before(struct fp_proc *proc, uint64_t dev, uint64_t ino)
{
	struct fp_file_id *seen;
	int i;

	for (i = 0; i < proc->nseen; i++)
		if (proc->seen[i].dev == dev && proc->seen[i].ino == ino)
			return 1;
	if (proc->nseen >= MAX_PROC_OBJECTS)
		return -E2BIG;
	seen = realloc(proc->seen, sizeof(*seen) * (size_t)(proc->nseen + 1));
	if (!seen)
		return -ENOMEM;
	proc->seen = seen;
	seen[proc->nseen++] = (struct fp_file_id){ dev, ino };
	return 0;
}

int fp_proc__refresh(struct fp_proc *proc, struct fp_err *e)
{
	int ret = 0, added = 0, k, nv;
	struct fp_vma *v = NULL;

	nv = fp_read_maps(proc->pid, &v);
	if (nv == -ENOENT)	/* /proc/PID is gone */
		return fp_fail(e, ESRCH, "pid %d: no such process", (int)proc->pid);
	if (nv < 0)
		return fp_fail(e, -nv, "pid %d: %s", (int)proc->pid, strerror(-nv));
	for (k = 0; k < nv && !ret; k++) {
		struct fp_err oe = { 0 };	/* this object's: a line in errors */
		char host[64], *path = v[k].path;
		struct fp_object *obj, **objs;
		int deleted = 0, fd;
		size_t len = strlen(path);

		if (v[k].perms[2] != 'x' || path[0] != '/' || !v[k].ino)
			continue;
		if (len > 10 && !strcmp(path + len - 10, " (deleted)")) {
			path[len - 10] = 0;
			deleted = 1;
		}
		ret = seen_before(proc, v[k].dev, v[k].ino);
		if (ret < 0)
			break;
		if (ret) {	/* mapped more than once: read once */
			ret = 0;
			continue;
		}
		fd = open_mapping(proc->pid, v[k].start, v[k].end, path, deleted, v[k].dev,
				  v[k].ino, &oe);
		if (fd < 0) {
			ret = fp_strv_add(&proc->errors, &proc->nerrors, oe.msg);
			continue;
		}
		snprintf(host, sizeof(host), "/proc/self/fd/%d", fd);
		ret = fp_object__read_fd(fd, host, path, &obj, &oe);
		if (ret == -ENOEXEC) {
			close(fd);
			ret = 0;
			continue;
		}
		if (ret) {
			close(fd);
			ret = fp_strv_add(&proc->errors, &proc->nerrors, oe.msg);
			continue;
		}
		/* kept with no notes too: its functions may be regions (common/catalog.c) */
		obj->fd = fd;
		if (asprintf(&obj->root, "/proc/%d/root", (int)proc->pid) < 0) {
			obj->root = NULL;
			fp_object__free(obj);
			ret = -ENOMEM;
			break;
		}
		obj->dev = v[k].dev;
		obj->ino = v[k].ino;
		objs = realloc(proc->objs, sizeof(*objs) * (size_t)(proc->nobjs + 1));
		if (!objs) {
			fp_object__free(obj);
			ret = -ENOMEM;
			break;
		}
		proc->objs = objs;
		objs[proc->nobjs++] = obj;
		added++;
	}
	fp_free_maps(v, nv);
	if (ret)
		return fp_fail(e, -ret, "pid %d: %s", (int)proc->pid, strerror(-ret));
	return added;
}

int fp_proc__read(pid_t pid, struct fp_proc **out, struct fp_err *e)
{
	struct fp_proc *proc;
	int ret;

	*out = NULL;
	if (pid <= 0)
		return fp_fail(e, EINVAL, "pid %d: not a process id", (int)pid);
	proc = calloc(1, sizeof(*proc));
	if (!proc)
		return fp_fail(e, ENOMEM, "out of memory");
	proc->pid = pid;
	ret = fp_proc__refresh(proc, e);
	if (ret < 0) {
		fp_proc__free(proc);
		return ret;
	}
	*out = proc;
	return 0;
}
