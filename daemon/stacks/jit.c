// SPDX-License-Identifier: GPL-2.0
/*
 * Names of code generated at run time, from the map a JIT writes for perf
 * (tools/perf/Documentation/jit-interface.txt): /tmp/perf-PID.map, one "START SIZE name"
 * line a function (START and SIZE in hex, 0x or not), appended as code is generated; a
 * later line for the same addresses names the code now there. Node's --perf-basic-prof,
 * Python 3.12's -X perf and a JVM's perf map agent write it.
 *
 * The file is the target's: read through /proc/PID/root under the PID the process has in
 * its own namespace (NSpid), opened without following a link, and used only when it is a
 * regular file that the process's owner owns (featprofd runs as root: a link or a file of
 * someone else's would have it read what the target's user cannot). Read up to its last
 * whole line, again from there when an address is missing and the file has grown; at
 * most FP_JIT_MAX entries.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/procfs.h"
#include "stacks_impl.h"

#define FP_JIT_MAX (1 << 22)
#define FP_JIT_NAME 512		/* longer names are cut */

struct jit_sym {
	uint64_t start, end;
	uint32_t seq;		/* its line's order: a later line wins */
	char *name;
};

struct fp_jitmap {
	char path[96];		/* /proc/PID/root/tmp/perf-NSPID.map */
	char shown[48];		/* /tmp/perf-NSPID.map, as the process sees it */
	uid_t uid;		/* the process's owner */
	off_t done;		/* bytes of whole lines read */
	struct jit_sym *e;	/* sorted by start, then seq */
	int n, cap;
	uint32_t seq;
};

struct fp_jitmap *fp_jitmap__new(pid_t pid)
{
	struct fp_jitmap *m = calloc(1, sizeof(*m));
	struct fp_procfs_status st;

	if (!m)
		return NULL;
	if (fp_procfs_status(pid, &st)) {	/* gone: a map no file can be (uid -1) */
		st.euid = (unsigned)-1;
		st.nspid = pid;
	}
	m->uid = (uid_t)st.euid;
	snprintf(m->path, sizeof(m->path), "/proc/%d/root/tmp/perf-%d.map", (int)pid,
		 (int)st.nspid);
	snprintf(m->shown, sizeof(m->shown), "/tmp/perf-%d.map", (int)st.nspid);
	return m;
}

void fp_jitmap__free(struct fp_jitmap *m)
{
	int i;

	if (!m)
		return;
	for (i = 0; i < m->n; i++)
		free(m->e[i].name);
	free(m->e);
	free(m);
}

const char *fp_jitmap__path(const struct fp_jitmap *m)
{
	return m->shown;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct jit_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* One line "START SIZE name" into m; a line that is not one is passed over. */
static void add_line(struct fp_jitmap *m, char *line)
{
	unsigned long long start, size;
	char *p = line, *end;
	size_t len;

	start = strtoull(p, &end, 16);
	if (end == p || *end != ' ')
		return;
	p = end;
	size = strtoull(p, &end, 16);
	if (end == p || *end != ' ' || !size || start + size < start)
		return;
	p = end + 1;
	len = strcspn(p, "\n");
	if (!len || m->n >= FP_JIT_MAX)
		return;
	if (m->n == m->cap) {
		int cap = m->cap ? 2 * m->cap : 256;
		struct jit_sym *e = realloc(m->e, (size_t)cap * sizeof(*e));

		if (!e)
			return;
		m->e = e;
		m->cap = cap;
	}
	m->e[m->n].name = strndup(p, len < FP_JIT_NAME ? len : FP_JIT_NAME - 1);
	if (!m->e[m->n].name)
		return;
	m->e[m->n].start = start;
	m->e[m->n].end = start + size;
	m->e[m->n].seq = m->seq++;
	m->n++;
}

/* The lines added since the last read. */
static void refresh(struct fp_jitmap *m)
{
	int fd = open(m->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	char buf[8192], line[FP_JIT_NAME + 64];
	size_t ll = 0, full = 0;	/* kept of the line, and its whole length */
	int before = m->n;
	struct stat st;
	ssize_t r;

	if (fd < 0)
		return;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != m->uid ||
	    st.st_size <= m->done || lseek(fd, m->done, SEEK_SET) != m->done) {
		close(fd);
		return;
	}
	while ((r = read(fd, buf, sizeof(buf))) > 0) {
		ssize_t i;

		for (i = 0; i < r; i++) {
			if (ll < sizeof(line) - 1)	/* a longer line's tail is dropped */
				line[ll++] = buf[i];
			full++;
			if (buf[i] != '\n')
				continue;
			line[ll] = 0;
			add_line(m, line);
			m->done += (off_t)full;	/* whole lines only: the next read goes on */
			ll = full = 0;
		}
	}
	close(fd);
	if (m->n > before)
		qsort(m->e, (size_t)m->n, sizeof(*m->e), cmp_sym);
}

/* The latest entry that holds addr, among the 32 that start nearest below it. */
static const struct jit_sym *find(const struct fp_jitmap *m, uint64_t addr)
{
	const struct jit_sym *best = NULL;
	int lo = 0, hi = m->n, k;

	while (lo < hi) {	/* the first entry starting above addr */
		int mid = lo + (hi - lo) / 2;

		if (m->e[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (k = lo - 1; k >= 0 && k >= lo - 32; k--)
		if (addr < m->e[k].end && (!best || m->e[k].seq > best->seq))
			best = &m->e[k];
	return best;
}

const char *fp_jitmap__at(struct fp_jitmap *m, uint64_t addr)
{
	const struct jit_sym *j = find(m, addr);

	if (!j) {
		refresh(m);
		j = find(m, addr);
	}
	return j ? j->name : NULL;
}
