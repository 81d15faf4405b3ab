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

#include "bpf/featprof_bpf.h"	/* sample.skel.h's types */
#include "common/elfread.h"
#include "common/err.h"
#include "usdt/featprof_abi.h"
#include "kern/kernel.h"
#include "common/maps.h"
#include "common/notes.h"
#include "common/procfs.h"
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
 * The module id the dynamic linker gave the library obj in process pid: what its GOT
 * holds at the slot of its own R_X86_64_DTPMOD64 (the one a local TLS symbol's access
 * uses: symbol 0, or its featprof_tls defined there), read from the process. 0 and *id,
 * else -errno (an object that reaches its TLS otherwise: initial-exec, TLS descriptors).
 */
static int module_id(pid_t pid, const struct fp_object *obj, Elf *elf, uint64_t *id)
{
	Elf_Scn *scn = NULL;
	uint64_t slot = 0, foff, base;
	struct fp_vma *v = NULL;
	int nv, ret = -ENOENT;
	GElf_Shdr sh;

	while (!slot && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		for (i = 0; i < data->d_size / sh.sh_entsize && !slot; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			Elf_Data *syms;
			Elf_Scn *ss = elf_getscn(elf, sh.sh_link);
			GElf_Shdr ssh;
			const char *name;
			size_t k;

			if (!gelf_getrela(data, (int)i, &r) ||
			    GELF_R_TYPE(r.r_info) != R_X86_64_DTPMOD64)
				continue;
			k = GELF_R_SYM(r.r_info);
			if (!k) {
				slot = r.r_offset;
				break;
			}
			if (!ss || !gelf_getshdr(ss, &ssh) || !(syms = elf_getdata(ss, NULL)) ||
			    !gelf_getsym(syms, (int)k, &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			name = elf_strptr(elf, ssh.sh_link, sym.st_name);
			if (name && !strcmp(name, "featprof_tls"))
				slot = r.r_offset;
		}
	}
	if (!slot || fp_elf_offset(elf, 0, false, &foff))
		return -ENOENT;
	/* the load bias: where the segment of link-time address 0 (file offset foff) is */
	nv = fp_read_maps(pid, &v);
	base = nv > 0 ? fp_vma_addr(v, nv, obj->dev, obj->ino, foff) : 0;
	fp_free_maps(v, nv > 0 ? nv : 0);
	if (base && !fp_procfs_peek(pid, base + slot, id, sizeof(*id)) && *id &&
	    *id < (1u << 20))
		ret = 0;
	return ret;
}

/* Library obj's own stack, into *lib. 0, or -errno (e filled). */
static int own_stack(pid_t pid, const struct fp_object *obj, struct fp_tls_lib *lib,
		     struct fp_err *e)
{
	int fd = open(obj->host_path, O_RDONLY | O_CLOEXEC), ret = 0, i;
	uint64_t id = 0;
	GElf_Sym sym;
	Elf *elf;

	for (i = 0; i < obj->nsites; i++)
		if (!strcmp(obj->sites[i].provider, "featprof") &&
		    !strcmp(obj->sites[i].name, FP_GATE_PROBE)) {
			if (fd >= 0)
				close(fd);
			return fp_fail(e, EOPNOTSUPP, "pid %d: %s keeps a region stack and a "
				       "sampling gate of its own (featprof_tls is not exported "
				       "there): a gated build's stack cannot be sampled there; "
				       "build it with FEATPROF_SAMPLING, or export featprof_tls",
				       (int)pid, obj->path);
		}
	if (fd < 0 || !(elf = fp_elf_begin(fd))) {
		if (fd >= 0)
			close(fd);
		return fp_fail(e, ENOENT, "pid %d: cannot read %s", (int)pid, obj->path);
	}
	if (obj->tls_dtpoff_known)
		lib->off = obj->tls_dtpoff;
	else if (fp_elf_symbol(elf, "featprof_tls", STT_TLS, false, &sym))
		lib->off = sym.st_value;
	else
		ret = fp_fail(e, ENOENT, "pid %d: %s keeps a region stack of its own, built with "
			      "an older featprof.h and without a symbol table: rebuild it",
			      (int)pid, obj->path);
	if (!ret && module_id(pid, obj, elf, &id))
		ret = fp_fail(e, EOPNOTSUPP, "pid %d: %s keeps a region stack of its own, "
			      "reached otherwise than by its module id (initial-exec or TLS "
			      "descriptors): its regions cannot be sampled; measure them with "
			      "featprof enable", (int)pid, obj->path);
	lib->modid = id;
	elf_end(elf);
	close(fd);
	return ret;
}

/*
 * The libraries whose regions are on a stack of their own, into libs (FP_SAMPLE_LIBS at
 * most): how many, or -errno (e filled). A library's regions are on the executable's
 * stack where the dynamic linker binds its featprof_tls to the executable's: both
 * export it (featprof.h gives it default visibility, whatever -fvisibility says). A
 * version script's "local: *" takes that away, and an executable without featprof.h has
 * none to bind to: such a library's stack is read where it is (bpf/featprof_bpf.h
 * struct fp_tls_lib). exe: whether the executable keeps a stack.
 */
int fp_sample_lib_stacks(const struct fp_target *t, bool exe, struct fp_tls_lib *libs,
			 struct fp_err *e)
{
	const struct fp_catalog *cat = fp_target__catalog(t);
	pid_t pid = fp_target__pid(t);
	int o, n = 0, exe_exports = -1, ret;
	struct stat es, os;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (stat(path, &es))
		return 0;	/* gone: the start fails elsewhere */
	for (o = 0; cat && o < cat->nobjs; o++) {
		const struct fp_object *obj = cat->objs[o];

		/* the executable itself: stat(2) of both (maps' device numbers differ from
		 * stat's on some file systems) */
		if (!obj->tls_version || (!stat(obj->host_path, &os) && os.st_dev == es.st_dev &&
					  os.st_ino == es.st_ino))
			continue;
		if (obj->tls_version != FP_TLS_ABI_VERSION || obj->tls_depth != FP_TLS_DEPTH ||
		    obj->tls_magic != FP_TLS_MAGIC)
			return fp_fail(e, EPROTO, "pid %d: sampling ABI version %u (depth %u) in "
				       "%s; this featprofd reads version %d (depth %d)", (int)pid,
				       obj->tls_version, obj->tls_depth, obj->path,
				       FP_TLS_ABI_VERSION, FP_TLS_DEPTH);
		if (exe && exe_exports < 0)
			exe_exports = exports_tls(path);
		if (exe && exe_exports == 1 && exports_tls(obj->host_path) == 1)
			continue;	/* on the executable's stack */
		if (n == FP_SAMPLE_LIBS)
			return fp_fail(e, EOPNOTSUPP, "pid %d: more than %d libraries keep region "
				       "stacks of their own (%s is one more): export featprof_tls "
				       "from them", (int)pid, FP_SAMPLE_LIBS, obj->path);
		ret = own_stack(pid, obj, &libs[n], e);
		if (ret)
			return ret;
		n++;
	}
	return n;
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
