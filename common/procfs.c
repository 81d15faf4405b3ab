// SPDX-License-Identifier: GPL-2.0
/* A process's /proc files and memory, read (and written) in one place: common/procfs.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "procfs.h"

int fp_procfs_stat(pid_t pid, struct fp_procfs_stat *st)
{
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = 0;
	p = strrchr(buf, ')');	/* fields 3 on follow the command name, which may hold ')' */
	if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %lu %*u %*u %*u %*u %*u %*u %*d %*d "
			 "%*d %*d %*d %*d %llu", &st->state, &st->flags, &st->start_time) != 3)
		return -EIO;
	return 0;
}

unsigned long long fp_procfs_start_time(pid_t pid)
{
	struct fp_procfs_stat st;

	return fp_procfs_stat(pid, &st) ? 0 : st.start_time;
}

int fp_procfs_status(pid_t pid, struct fp_procfs_status *st)
{
	char path[64], line[256];
	int tgid = 0, threads = 0, have_uid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	memset(st, 0, sizeof(*st));
	st->nspid = pid;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "NSpid:", 6)) {
			char *p = line + 6, *end;
			long v;

			while ((v = strtol(p, &end, 10)) > 0 && end != p) {
				st->nspid = (pid_t)v;
				p = end;
			}
		} else if (sscanf(line, "Tgid: %d", &tgid) == 1)
			st->tgid = (pid_t)tgid;
		else if (sscanf(line, "Threads: %d", &threads) == 1)
			st->threads = threads;
		else if (sscanf(line, "Uid: %u %u %u", &st->ruid, &st->euid, &st->suid) == 3)
			have_uid = 1;
		else if (sscanf(line, "CapEff: %llx", &st->cap_eff) == 1)
			st->have_cap = 1;
	}
	fclose(f);
	return have_uid ? 0 : -ESRCH;
}

ssize_t fp_procfs_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);

	return n < 0 ? -errno : n;
}

int fp_procfs_peek(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	ssize_t n = fp_procfs_read(pid, addr, buf, len);

	return n == (ssize_t)len ? 0 : n < 0 ? (int)n : -EIO;
}

int fp_procfs_write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec l = { (void *)buf, len }, r = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_writev(pid, &l, 1, &r, 1, 0);

	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EIO;
}
