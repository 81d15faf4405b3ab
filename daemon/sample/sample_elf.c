// SPDX-License-Identifier: GPL-2.0
/*
 * What sampling (daemon/sample/sample.c) reads from the target's files before it starts: the
 * sampler's TLS ABI note and featprof_tls's offset in the executable, whether every
 * library with regions pushes onto that one stack, and the addresses of the probe sites
 * (samples there are featprofd's uprobe handling).
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/elfread.h"
#include "common/err.h"
#include "usdt/featprof_abi.h"
#include "kern/kernel.h"
#include "common/maps.h"
#include "common/notes.h"
#include "sample.skel.h"
#include "sample_impl.h"

/* The executable's TLS ABI note must say what this daemon reads: checked before any
 * read of the target's memory. A gated build's gate site and semaphore: *gate_off and
 * *sem_off (file offsets), else 0. */
int fp_sample_tls_abi(pid_t pid, uint64_t *gate_off, uint64_t *sem_off, struct fp_err *e)
{
	char path[64];
	struct fp_object *obj = NULL;
	int ret, i;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	ret = fp_object__read(path, path, &obj, e);
	if (ret)
		return ret;
	*gate_off = *sem_off = 0;
	if (!obj->tls_version) {
		ret = fp_fail(e, ENOENT,
			      "pid %d: its executable has no featprof TLS note: sampling "
			      "needs a build with FEATPROF_SAMPLING (usdt/featprof.h)",
			      (int)pid);
	} else if (obj->tls_version != FP_TLS_ABI_VERSION || obj->tls_depth != FP_TLS_DEPTH ||
		   obj->tls_magic != FP_TLS_MAGIC) {
		ret = fp_fail(e, EPROTO, "pid %d: sampling ABI version %u (depth %u) in its "
			      "executable; this featprofd reads version %d (depth %d)", (int)pid,
			      obj->tls_version, obj->tls_depth, FP_TLS_ABI_VERSION, FP_TLS_DEPTH);
	}
	for (i = 0; !ret && i < obj->nsites; i++)
		if (!strcmp(obj->sites[i].provider, "featprof") &&
		    !strcmp(obj->sites[i].name, FP_GATE_PROBE)) {
			if (!obj->sites[i].sem_off) {
				ret =
				    fp_fail(e, EPROTO, "pid %d: its sampling gate has no semaphore",
					    (int)pid);
			}
			*gate_off = obj->sites[i].loc_off;
			*sem_off = obj->sites[i].sem_off;
		}
	fp_object__free(obj);
	return ret;
}

/* Whether the ELF file at path exports featprof_tls: 1, else 0. */
static int exports_tls(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = 0;
	GElf_Sym sym;
	Elf *elf;

	if (fd < 0)
		return 0;
	elf = fp_elf_begin(fd);
	if (elf)
		ret = fp_elf_symbol(elf, "featprof_tls", STT_TLS, true, &sym);
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

/*
 * The sampler reads one region stack per thread, the executable's featprof_tls. A
 * library's regions are on it when the dynamic linker binds the library's featprof_tls
 * to the executable's: both export it (featprof.h gives it default visibility, whatever
 * -fvisibility says; a version script's "local: *" takes that away). A library that keeps
 * its own stack is refused, naming it: its regions would read 0% with no word. 0 or
 * -EOPNOTSUPP (e filled).
 */
int fp_sample_one_stack(const struct fp_target *t, struct fp_err *e)
{
	const struct fp_catalog *cat = fp_target__catalog(t);
	int o, exe = -1, lib;
	struct stat es, os;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)fp_target__pid(t));
	if (stat(path, &es))
		return 0;	/* gone: the start fails elsewhere */
	for (o = 0; cat && o < cat->nobjs; o++) {
		const struct fp_object *obj = cat->objs[o];

		/* the executable itself: stat(2) of both (maps' device numbers differ from
		 * stat's on some file systems) */
		if (!obj->tls_version || (!stat(obj->host_path, &os) && os.st_dev == es.st_dev &&
					  os.st_ino == es.st_ino))
			continue;
		if (exe < 0)
			exe = exports_tls(path);
		lib = exports_tls(obj->host_path);
		if (exe == 1 && lib == 1)
			continue;
		return fp_fail(e, EOPNOTSUPP,
			       "pid %d: %s keeps a region stack of its own (featprof_tls "
			       "is not exported %s): its regions cannot be sampled; export it, or "
			       "measure them with featprof enable",
			       (int)fp_target__pid(t), obj->path,
			       lib != 1 ? "there: a version script's local list, or an older "
					  "featprof.h with -fvisibility=hidden"
					: "by the executable");
	}
	return 0;
}

/* featprof_tls's offset from the thread pointer in the executable of pid. */
int fp_sample_tls_offset(pid_t pid, int64_t *off, struct fp_err *e)
{
	char path[64];
	int fd, ret = -ENOENT, found = 0;
	uint64_t memsz = 0, align = 1, value = 0;
	size_t i, nph;
	GElf_Sym sym;
	Elf *elf;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int no = errno;

		return fp_fail(e, no, "pid %d: cannot open its executable: %s", (int)pid,
			       strerror(no));
	}
	elf = fp_elf_begin(fd);
	if (!elf || elf_getphdrnum(elf, &nph)) {
		ret = fp_fail(e, ENOEXEC, "pid %d: its executable is not ELF", (int)pid);
		goto out;
	}
	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_TLS) {
			memsz = ph.p_memsz;
			align = ph.p_align ? ph.p_align : 1;
		}
	}
	found = fp_elf_symbol(elf, "featprof_tls", STT_TLS, false, &sym);
	value = sym.st_value;
	if (!found || !memsz) {
		ret = fp_fail(e, ENODATA,
			      "pid %d: no featprof_tls in its executable: sampling needs "
			      "a build with FEATPROF_SAMPLING (usdt/featprof.h)",
			      (int)pid);
		goto out;
	}
	*off = (int64_t)value - (int64_t)((memsz + align - 1) / align * align);
	ret = 0;
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

/* The addresses of t's probe sites, and the byte after each (where a trapped thread's
 * instruction pointer is while the kernel handles the uprobe), into sample_sites: a
 * sample there is probe time (bpf/featprof.bpf.c in_probe). Where the kernel cannot tell
 * (no bpf_task_pt_regs) or the map is full, the rest are not told apart: "probe samples"
 * then counts what it can. */
void fp_sample_probe_sites(struct fp_target *t)
{
	struct fp_sampling *sm = fp_sample_state(t);
	const struct fp_catalog *cat = fp_target__catalog(t);
	int fd = bpf_map__fd(sm->skel->maps.sample_sites), nv, o, k;
	struct fp_vma *v = NULL;
	uint8_t one = 1;

	if (!fp_kernel_caps()->task_pt_regs || (nv = fp_read_maps(fp_target__pid(t), &v)) < 0)
		return;
	for (o = 0; o < cat->nobjs; o++) {
		const struct fp_object *obj = cat->objs[o];

		for (k = 0; k < 2 * obj->nsites; k++) {
			const struct fp_site *st = &obj->sites[k / 2];
			uint64_t off = k % 2 ? st->opt_off : st->loc_off, a, b;

			a = off ? fp_vma_addr(v, nv, obj->dev, obj->ino, off) : 0;
			b = a + 1;
			if (a && (bpf_map_update_elem(fd, &a, &one, BPF_ANY) ||
				  bpf_map_update_elem(fd, &b, &one, BPF_ANY)))
				goto out;	/* full */
		}
	}
out:
	fp_free_maps(v, nv);
	sm->skel->bss->sample_sites_on = 1;
}
