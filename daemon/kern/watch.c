// SPDX-License-Identifier: GPL-2.0
/*
 * featprofd's one process watcher: bpf/watch.bpf.c's object, loaded once at start,
 * its ring buffer polled by the server loop (daemon/serve/server.c). A target asks to be
 * watched while it lives (registry.c); an event names the process and the server decides
 * what to re-read.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/elfread.h"
#include "common/err.h"
#include "bpf/featprof_bpf.h"
#include "kernel.h"
#include "common/maps.h"
#include "uprobe.h"
#include "watch.h"
#include "watch.skel.h"

struct fp_watch {
	struct watch_bpf *skel;
	struct ring_buffer *rb;
	fp_watch_fn cb;
	void *ctx;
	bool multi;		/* fp_watch_dl is a uprobe.multi program */
};

static int on_event(void *ctx, void *data, size_t size)
{
	struct fp_watch *w = ctx;
	const struct fp_watch_event *e = data;

	if (size >= sizeof(*e))
		w->cb(w->ctx, e->kind, e->tgid, e->other, e->ts);
	return 0;
}

struct fp_watch *fp_watch__open(fp_watch_fn cb, void *ctx, struct fp_err *e)
{
	struct fp_watch *w = calloc(1, sizeof(*w));
	int ret = 0;

	if (!w) {
		fp_fail(e, ENOMEM, "out of memory");
		return NULL;
	}
	w->cb = cb;
	w->ctx = ctx;
	w->skel = watch_bpf__open();
	/* the dlopen hook: a link where the kernel has them (daemon/kern/uprobe.h) */
	w->multi = fp_kernel_caps()->uprobe_multi;
	if (w->skel && w->multi)
		bpf_program__set_expected_attach_type(w->skel->progs.fp_watch_dl,
						      FP_ATTACH_UPROBE_MULTI);
	if (!w->skel || (ret = watch_bpf__load(w->skel))) {
		fp_fail(e, w->skel ? -ret : errno, "cannot load the watcher: %s",
			strerror(w->skel ? -ret : errno));
		goto fail;
	}
	ret = watch_bpf__attach(w->skel);
	if (ret) {
		fp_fail(e, -ret, "cannot attach the watcher (kprobes on vm_mmap_pgoff): %s",
			strerror(-ret));
		goto fail;
	}
	w->rb = ring_buffer__new(bpf_map__fd(w->skel->maps.events), on_event, w, NULL);
	if (!w->rb) {
		fp_fail(e, errno, "cannot open the watcher's ring: %s", strerror(errno));
		goto fail;
	}
	return w;
fail:
	fp_watch__free(w);
	return NULL;
}

void fp_watch__free(struct fp_watch *w)
{
	if (!w)
		return;
	ring_buffer__free(w->rb);
	watch_bpf__destroy(w->skel);
	free(w);
}

int fp_watch__fd(const struct fp_watch *w)
{
	return ring_buffer__epoll_fd(w->rb);
}

int fp_watch__consume(struct fp_watch *w)
{
	return ring_buffer__consume(w->rb);
}

int fp_watch__process(struct fp_watch *w, pid_t tgid, int group)
{
	__u32 key = (__u32)tgid, val = (__u32)group;
	int ret;

	if (group < 0) {
		ret = bpf_map__delete_elem(w->skel->maps.watched, &key, sizeof(key), 0);
		return ret == -ENOENT ? 0 : ret;
	}
	ret = bpf_map__update_elem(w->skel->maps.watched, &key, sizeof(key), &val, sizeof(val),
				   group ? BPF_ANY : BPF_NOEXIST);
	return ret == -EEXIST && !group ? 0 : ret;	/* a group's member stays the group's */
}

/* The exec mapping of the process's dynamic linker: an fd open on it, or -errno. */
static int open_ldso(pid_t pid)
{
	struct fp_vma *v = NULL;
	int fd = -ENOENT, nv = fp_read_maps(pid, &v), i;

	if (nv < 0)
		return nv;
	for (i = 0; i < nv && fd == -ENOENT; i++) {
		const char *base = strrchr(v[i].path, '/');
		char q[4200];

		base = base ? base + 1 : v[i].path;
		if (v[i].perms[2] != 'x' ||
		    (strncmp(base, "ld-linux", 8) && strncmp(base, "ld-musl", 7) &&
		     strncmp(base, "ld.so", 5) && strncmp(base, "ld64.so", 7)))
			continue;
		snprintf(q, sizeof(q), "/proc/%d/map_files/%llx-%llx", (int)pid,
			 (unsigned long long)v[i].start, (unsigned long long)v[i].end);
		fd = open(q, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			snprintf(q, sizeof(q), "/proc/%d/root%s", (int)pid, v[i].path);
			fd = open(q, O_RDONLY | O_CLOEXEC);
		}
		if (fd < 0)
			fd = -errno;
	}
	fp_free_maps(v, nv);
	return fd;
}

/* The file offset of the function name in the ELF file fd (its symbol tables, then the
 * loadable segment holding it): > 0, or 0 if it has none. */
static uint64_t func_offset(int fd, const char *name)
{
	Elf *e = fp_elf_begin(fd);
	uint64_t off = 0;
	GElf_Sym sym;

	if (e && (!fp_elf_symbol(e, name, STT_FUNC, false, &sym) ||
		  fp_elf_offset(e, sym.st_value, false, &off)))
		off = 0;
	if (e)
		elf_end(e);
	return off;
}

int fp_watch__dlopen(struct fp_watch *w, pid_t pid, struct fp_err *e)
{
	int fd = open_ldso(pid), ret;
	char path[64];
	uint64_t off;

	if (fd < 0) {
		fp_fail(e, -fd, "pid %d: no dynamic linker mapped (%s)", (int)pid,
			strerror(-fd));
		return fd;
	}
	off = func_offset(fd, "_dl_debug_state");
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ret = off ? fp_uprobe_hook(bpf_program__fd(w->skel->progs.fp_watch_dl), w->multi, path,
				   off, pid)
		  : -ENOENT;
	if (ret < 0)
		fp_fail(e, -ret, "pid %d: cannot attach to _dl_debug_state: %s", (int)pid,
			strerror(-ret));
	close(fd);	/* the uprobe holds the inode */
	return ret;
}

int fp_watch__map_fd(struct fp_watch *w, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(w->skel->obj, name);

	return m ? bpf_map__fd(m) : -1;
}

uint64_t fp_watch__lost(const struct fp_watch *w)
{
	return __atomic_load_n(&w->skel->bss->lost, __ATOMIC_RELAXED);
}
