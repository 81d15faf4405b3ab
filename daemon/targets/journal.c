// SPDX-License-Identifier: GPL-2.0
/*
 * The attach journal.
 *
 * A uprobe's breakpoint is written into every process that maps the file when it is
 * registered, and removed when its last consumer unregisters. Both are done by the task
 * that creates or closes the BPF link, page by page through get_user_pages — which gives
 * up with -EINTR once that task has a fatal signal pending. So a featprofd SIGKILLed while
 * the kernel registers or unregisters its sites (inside the bpf() that creates a link, or
 * the close() that ends one) leaves some sites holding int3 with a kernel uprobe that has
 * no consumer: the target traps into the kernel at every hit and nothing measures it
 * (seen on 6.18: 5-12 of the demo's 14 sites, about 1 kill in 8 during an enable).
 *
 * The fix needs no cooperation from the dying process: before changing a target's
 * attachments featprofd writes every site the change may touch to a journal file (on a
 * tmpfs, /run/featprof), and empties it when the change is complete. The next featprofd
 * finds a non-empty journal at start and cycles each site listed: it registers a uprobe
 * there and unregisters it again, from a task that is not dying, and the kernel's
 * unregister removes every breakpoint that no remaining consumer wants. A site that
 * another tool still probes keeps its breakpoint, so the repair is safe whoever else
 * is attached. The same cycle serves `featprof repair PID` (daemon/serve/verbs.c) for
 * breakpoints left by anything else.
 *
 * Format (text, one change at a time):
 *   featprof-journal 1
 *   file DEV INO PATH        the object (PATH: as featprofd can open it after a restart)
 *   site OFFSET REF          file offsets of the attach point and its semaphore (0: none)
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/err.h"
#include "inproc/inproc.h"
#include "target_impl.h"
#include "util/log.h"
#include "common/strays.h"
#include "kern/uprobe.h"

/* The one journal of this featprofd (fp_journal__open). */
static struct fp_journal {
	int fd;
	int depth;		/* begin/end pairs open (a change made of changes) */
	bool held;		/* shutdown: changes accumulate (fp_journal__hold) */
	int repaired;		/* sites repaired at open */
} jr = { .fd = -1, .repaired = -1 };

int fp_journal__repaired(void)
{
	return jr.fd >= 0 ? jr.repaired : -1;
}

/* One multi-uprobe link over all sites (fp_uprobe_empty_prog): a single register and a
 * single unregister (each perf event's close waits for its own grace period: ~10 ms a
 * site on 6.18). */
#define REPAIR_BATCH 256	/* descriptors held at once */

static int repair_perf(const char *path, const uint64_t *offs, const uint64_t *refs, int n);

/*
 * Registers and unregisters a uprobe (a perf uprobe event, no BPF program) at each
 * offset of the file at path (refs: semaphore offsets, or 0): the kernel's unregister
 * then removes the breakpoint from every process where no other consumer wants it.
 * dev/ino (0: not checked) must be the file's. Returns the number of sites cycled or
 * -errno.
 */
static int repair_sites(const char *path, uint64_t dev, uint64_t ino, const uint64_t *offs,
		    const uint64_t *refs, int n)
{
	struct stat st;
	int prog, fd;

	if (stat(path, &st))
		return -errno;
	if ((dev || ino) && ((uint64_t)makedev(major(st.st_dev), minor(st.st_dev)) != dev ||
			     (uint64_t)st.st_ino != ino))
		return -ESTALE;	/* another file there now: its sites are not these */
	prog = fp_uprobe_empty_prog();
	if (prog >= 0 && (fd = fp_uprobe_multi_link(prog, path, offs, refs, NULL, (uint32_t)n,
						     0, 0)) >= 0) {
		close(fd);	/* the unregister that removes the int3s */
		return n;
	}
	return repair_perf(path, offs, refs, n);
}

static int repair_perf(const char *path, const uint64_t *offs, const uint64_t *refs, int n)
{
	int fds[REPAIR_BATCH], i, k, nf, done = 0, type = fp_uprobe_pmu();

	if (type < 0)
		return type;
	for (i = 0; i < n; i += REPAIR_BATCH) {
		for (k = i, nf = 0; k < n && k < i + REPAIR_BATCH; k++) {
			/* every process's: registering is what matters */
			int fd = fp_uprobe_perf_open(path, offs[k], refs ? refs[k] : 0, 0, 0);

			if (fd >= 0)
				fds[nf++] = fd;
			else
				fp_log(FP_LOG_DEBUG, "repair: %s+0x%llx: %s", path,
				       (unsigned long long)offs[k], strerror(-fd));
		}
		for (k = 0; k < nf; k++)	/* the unregister that removes the int3 */
			close(fds[k]);
		done += nf;
	}
	return done;
}

/* One file's sites of a journal repaired: its breakpoints cycled (by the path the
 * process had, where the process is gone), counted into *ctx. */
static int repair_file(void *ctx, const char *path, uint64_t dev, uint64_t ino,
		       const uint64_t *offs, const uint64_t *refs, int n)
{
	int *total = ctx, r = repair_sites(path, dev, ino, offs, refs, n);
	const char *rest = strstr(path, "/root/");

	if (r == -ENOENT && rest && !strncmp(path, "/proc/", 6))
		r = repair_sites(rest + 5, dev, ino, offs, refs, n);
	if (r > 0)
		*total += r;
	else if (r < 0)
		fp_log(FP_LOG_WARN, "journal: cannot repair %d sites of %s: %s", n, path,
		       strerror(-r));
	return 0;
}

/* Repairs a journal's content; the number of sites cycled. */
static int replay(FILE *f)
{
	int total = 0;

	fp_journal_parse(f, repair_file, &total);
	return total;
}

/* dir 0700 (the journal names what featprofd attached where); its missing parents 0755,
 * as mkdir -p would (the default /run/featprof/state before the socket's /run/featprof) */
static int make_dir(const char *dir)
{
	char p[4096];
	size_t i;

	if (snprintf(p, sizeof(p), "%s", dir) >= (int)sizeof(p)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (i = 1; p[i]; i++) {
		if (p[i] != '/')
			continue;
		p[i] = 0;
		if (mkdir(p, 0755) && errno != EEXIST)
			return -1;
		p[i] = '/';
	}
	return mkdir(p, 0700) && errno != EEXIST ? -1 : 0;
}

int fp_journal__open(const char *dir, const char *socket_path, struct fp_err *e)
{
	char path[4096], name[256];
	size_t i;
	int ret = 0;
	FILE *f;

	snprintf(name, sizeof(name), "%s", socket_path);
	for (i = 0; name[i]; i++)
		if (name[i] == '/')
			name[i] = '_';
	if (make_dir(dir) < 0)
		return fp_fail(e, errno, "cannot create %s: %s", dir, strerror(errno));
	snprintf(path, sizeof(path), "%s/journal%s", dir, name);
	jr.fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (jr.fd < 0) {
		return fp_fail(e, errno, "cannot open %s: %s", path, strerror(errno));
	}
	f = fdopen(dup(jr.fd), "r");
	if (f) {
		ret = replay(f);
		fclose(f);
	}
	if (ftruncate(jr.fd, 0))
		fp_log(FP_LOG_WARN, "journal %s: %s", path, strerror(errno));
	jr.repaired = ret;
	return ret;
}

void fp_journal__close(void)
{
	if (jr.fd >= 0)
		close(jr.fd);
	jr.fd = -1;
}

static void gate_line(void *f, unsigned long long off, unsigned long long ref)
{
	fprintf(f, "site %llu %llu\n", off, ref);
}

void fp_journal__begin(const struct fp_target *t)
{
	const struct fp_catalog *cat = t->cat;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int o, r, s;

	off_t at = 0;

	if (jr.fd < 0 || (jr.depth++ && !jr.held) || !cat || !(f = open_memstream(&buf, &len)))
		return;
	if (jr.held && (at = lseek(jr.fd, 0, SEEK_END)) < 0)
		at = 0;
	fprintf(f, "featprof-journal 1\n");
	for (o = 0; o < cat->nobjs; o++) {
		const struct fp_object *obj = cat->objs[o];
		struct stat st;

		if (obj->fd >= 0 ? fstat(obj->fd, &st) : stat(obj->host_path, &st))
			continue;
		/* the path the next featprofd can open: through the target's root */
		if (t->pid)
			fprintf(f, "file %llu %llu /proc/%d/root%s\n",
				(unsigned long long)makedev(major(st.st_dev), minor(st.st_dev)),
				(unsigned long long)st.st_ino, (int)t->pid, obj->path);
		else
			fprintf(f, "file %llu %llu %s\n",
				(unsigned long long)makedev(major(st.st_dev), minor(st.st_dev)),
				(unsigned long long)st.st_ino, obj->path);
		for (r = 0; r < cat->nregions; r++)
			for (s = 0; s < cat->regions[r].nsites; s++) {
				const struct fp_site *site;

				if (cat->regions[r].sites[s].obj != o)
					continue;
				site = fp_ref_site(cat->objs, &cat->regions[r].sites[s]);
				fprintf(f, "site %llu %llu\n",
					(unsigned long long)(t->use_opt && site->opt_off
								     ? site->opt_off
								     : site->loc_off),
					(unsigned long long)site->sem_off);
			}
		fp_inproc__each_gate(t->ip, o, gate_line, f);	/* in-process gates */
	}
	if (fclose(f) || pwrite(jr.fd, buf, len, at) != (ssize_t)len ||
	    (!jr.held && ftruncate(jr.fd, (off_t)len)))
		fp_log(FP_LOG_WARN, "journal: cannot write: %s", strerror(errno));
	free(buf);
}

void fp_journal__end(void)
{
	if (jr.fd >= 0 && jr.depth > 0 && !--jr.depth && !jr.held && ftruncate(jr.fd, 0))
		fp_log(FP_LOG_WARN, "journal: cannot empty: %s", strerror(errno));
}

void fp_journal__hold(void)
{
	jr.held = true;
}

void fp_journal__let_go(void)
{
	jr.held = false;
	jr.depth = 0;
	if (jr.fd >= 0 && ftruncate(jr.fd, 0))
		fp_log(FP_LOG_WARN, "journal: cannot empty: %s", strerror(errno));
}

/* --- featprof repair PID ------------------------------------------------------------- */

#define REPAIR_MAX 4096

static int repair_object(const struct fp_object *obj, const struct fp_trap *tr, int n, int o)
{
	uint64_t *offs = calloc((size_t)n + 1, 8), *refs = calloc((size_t)n + 1, 8);
	int i, k = 0, ret;

	if (!offs || !refs) {
		free(offs);
		free(refs);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		if (tr[i].obj == o) {
			offs[k] = tr[i].off;
			refs[k++] = obj->sites[tr[i].site].sem_off;
		}
	ret = k ? repair_sites(obj->host_path, obj->dev, obj->ino, offs, refs, k) : 0;
	free(offs);
	free(refs);
	return ret;
}

int fp_journal__repair_process(pid_t pid, bool check, int *before, int *after, struct fp_err *e)
{
	struct fp_trap *tr = NULL;
	struct fp_proc *proc = NULL;
	int o, ret = 0;

	ret = fp_proc__read(pid, &proc, e);
	if (ret)
		return ret;
	tr = calloc(REPAIR_MAX, sizeof(*tr));
	*before = tr ? fp_traps(proc, tr, REPAIR_MAX) : -ENOMEM;
	if (*before < 0) {
		ret = fp_fail(e, -*before, "pid %d: cannot read its memory: %s", (int)pid,
			      strerror(-*before));
		goto out;
	}
	*after = *before;
	if (!check && *before) {
		int n = *before < REPAIR_MAX ? *before : REPAIR_MAX, r;

		for (o = 0; o < proc->nobjs; o++)
			if ((r = repair_object(proc->objs[o], tr, n, o)) < 0)
				fp_log(FP_LOG_WARN, "pid %d: repair %s: %s", (int)pid,
				       proc->objs[o]->path, strerror(-r));
		*after = fp_traps(proc, tr, REPAIR_MAX);
		if (*after < 0)
			*after = *before;
		fp_log(FP_LOG_INFO, "pid %d: repair: %d sites held a breakpoint, %d removed",
		       (int)pid, *before, *before - *after);
	}
out:
	free(tr);
	fp_proc__free(proc);
	return ret;
}
