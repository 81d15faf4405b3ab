// SPDX-License-Identifier: GPL-2.0
/*
 * An object's catalog from its ELF file (libelf): the note sections, parsed by notes.c,
 * each site's link-time address turned into the file offset a uprobe takes (the PT_LOAD
 * segment holding it: off = addr - p_vaddr + p_offset, for PIE, non-PIE and shared
 * objects alike), a shielded site's bytes checked against its shape before the nop5 is
 * offered as an attach point. From a file, a descriptor or an image in memory. This
 * module does not log.
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

#include "elfread.h"
#include "maps.h"
#include "notes.h"
#include "err.h"

static const uint8_t shield_bytes[FP_SHIELD_LEN] = {
	0x90,				    /* nop */
	0x48, 0x8d, 0x64, 0x24, 0x80,	    /* lea -0x80(%rsp),%rsp */
	0x0f, 0x1f, 0x44, 0x00, 0x00,	    /* nopl 0x0(%rax,%rax,1) */
	0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00, /* lea 0x80(%rsp),%rsp */
};

struct segs {
	GElf_Phdr *ph;
	size_t n;
};

/* File offset of a link-time address inside a loaded segment; need_x: code only. */
static int vaddr_to_off(const struct segs *sg, uint64_t addr, int need_x, uint64_t *off)
{
	size_t i;

	for (i = 0; i < sg->n; i++) {
		const GElf_Phdr *p = &sg->ph[i];

		if (p->p_type != PT_LOAD || (need_x && !(p->p_flags & PF_X)))
			continue;
		if (addr >= p->p_vaddr && addr - p->p_vaddr < p->p_filesz) {
			*off = addr - p->p_vaddr + p->p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

static int cmp_pc(const void *a, const void *b)
{
	const struct fp_site *x = a, *y = b;

	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

/* Moves catalog entries onto their stapsdt sites (same pc), checks name and kind agree. */
static int merge_catalog(struct fp_object *obj, struct fp_err *e)
{
	int i;

	if (obj->ncat)	/* qsort and bsearch take no NULL array, even empty */
		qsort(obj->cat, (size_t)obj->ncat, sizeof(obj->cat[0]), cmp_pc);
	for (i = 0; i < obj->nsites; i++) {
		struct fp_site *s = &obj->sites[i], key = { .pc = s->pc }, *c;
		size_t rl;

		if (strcmp(s->provider, "featprof") || fp_site_is_gate(s, NULL))
			continue;	/* a gate is no site of a region */
		c = obj->ncat ? bsearch(&key, obj->cat, (size_t)obj->ncat, sizeof(key), cmp_pc)
			      : NULL;
		if (!c || !c->region)
			return fp_fail(e, EINVAL,
				       "%s: featprof note at offset 0x%llx has no catalog "
				       "entry",
				       obj->path, (unsigned long long)s->note_off);
		rl = strlen(c->region);
		if (strncmp(s->name, c->region, rl) ||
		    strcmp(s->name + rl, c->kind == FP_KIND_BEGIN ? "__begin" : "__end")) {
			return fp_fail(e, EINVAL,
				       "%s: featprof note at offset 0x%llx: name '%s' does "
				       "not match catalog entry at 0x%llx",
				       obj->path, (unsigned long long)s->note_off, s->name,
				       (unsigned long long)c->note_off);
		}
		s->kind = c->kind;
		s->shape = c->shape;
		s->scope = c->scope;
		s->line = c->line;
		s->region = c->region;
		s->file = c->file;
		s->features = c->features;
		s->nfeatures = c->nfeatures;
		c->region = NULL; /* moved: a second stapsdt note at this pc is an orphan */
		c->file = NULL;
		c->features = NULL;
		c->nfeatures = 0;
	}
	for (i = 0; i < obj->ncat; i++)
		if (obj->cat[i].region)
			obj->orphans++;
	return 0;
}

/* Each site's file offsets (location, semaphore) from its addresses (moved by the
 * .stapsdt.base section where the file has one), and the shielded ones' nop5. */
static int place_sites(struct fp_object *obj, const struct segs *sg, uint64_t base_addr,
		       int have_base, const uint8_t *image, size_t image_sz, struct fp_err *e)
{
	size_t i;

	for (i = 0; i < (size_t)obj->nsites; i++) {
		struct fp_site *s = &obj->sites[i];
		uint64_t pc = s->pc, sem = s->sem;

		if (s->base && have_base) {
			pc += base_addr - s->base;
			if (sem)
				sem += base_addr - s->base;
		}
		if (vaddr_to_off(sg, pc, 1, &s->loc_off))
			return fp_fail(e, EINVAL, "%s: stapsdt note at offset 0x%llx: location "
				       "0x%llx is not in an executable segment", obj->path,
				       (unsigned long long)s->note_off, (unsigned long long)pc);
		if (sem && vaddr_to_off(sg, sem, 0, &s->sem_off))
			return fp_fail(e, EINVAL, "%s: stapsdt note at offset 0x%llx: semaphore "
				       "0x%llx is not in a loaded segment", obj->path,
				       (unsigned long long)s->note_off, (unsigned long long)sem);
		if (s->kind && s->shape == FP_SHAPE_SHIELDED && image &&
		    s->loc_off <= image_sz && image_sz - s->loc_off >= FP_SHIELD_LEN &&
		    !memcmp(image + s->loc_off, shield_bytes, FP_SHIELD_LEN))
			s->opt_off = s->loc_off + FP_SHIELD_NOP5;
	}
	return 0;
}

static int read_elf(Elf *elf, struct fp_object *obj, struct fp_err *e)
{
	const uint8_t *image;
	size_t shstrndx, image_sz, nph, i;
	Elf_Scn *scn = NULL;
	uint64_t base_addr = 0;
	int have_base = 0, ret;
	struct segs sg = { 0 };

	ret = fp_elf_check(elf, obj->path, e);
	if (ret)
		return ret;
	image = (const uint8_t *)elf_rawfile(elf, &image_sz);
	if (elf_getshdrstrndx(elf, &shstrndx) || elf_getphdrnum(elf, &nph))
		return fp_fail(e, EINVAL, "%s: bad ELF headers: %s", obj->path, elf_errmsg(-1));
	if (nph > 65535)
		nph = 0;
	sg.ph = calloc(nph ? nph : 1, sizeof(*sg.ph));
	if (!sg.ph)
		return -ENOMEM;
	for (i = 0; i < nph; i++)
		if (gelf_getphdr(elf, (int)i, &sg.ph[sg.n]))
			sg.n++;

	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		GElf_Shdr sh;
		Elf_Data *data;
		int fps;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (!strcmp(name, ".stapsdt.base")) {
			base_addr = sh.sh_addr;
			have_base = 1;
			continue;
		}
		if (sh.sh_type != SHT_NOTE)
			continue;
		fps = !strcmp(name, ".note.featprof");
		if (!fps && strcmp(name, ".note.stapsdt"))
			continue;
		data = elf_rawdata(scn, NULL);
		if (!data || !data->d_buf) {
			ret = fp_fail(e, EINVAL, "%s: section %s at offset 0x%llx cannot be "
				      "read: %s", obj->path, name, (unsigned long long)sh.sh_offset,
				      elf_errmsg(-1));
			goto out;
		}
		ret = fp_notes_parse(obj, data->d_buf, data->d_size, sh.sh_offset, fps, e);
		if (ret)
			goto out;
	}

	ret = merge_catalog(obj, e);
	if (ret)
		goto out;
	if (obj->ip_version) {
		uint64_t ctl = obj->ip_ctl;

		if (obj->ip_base && have_base)
			ctl += base_addr - obj->ip_base;
		if (vaddr_to_off(&sg, ctl, 0, &obj->ip_ctl_off)) {
			ret = fp_fail(e, EINVAL,
				      "%s: in-process note: control block 0x%llx is not in "
				      "the file's loaded data",
				      obj->path, (unsigned long long)ctl);
			goto out;
		}
	}

	ret = place_sites(obj, &sg, base_addr, have_base, image, image_sz, e);
out:
	free(sg.ph);
	return ret;
}

static struct fp_object *object_new(const char *host_path, const char *path)
{
	struct fp_object *obj = calloc(1, sizeof(*obj));

	if (!obj)
		return NULL;
	obj->fd = -1;
	obj->path = strdup(path);
	obj->host_path = strdup(host_path);
	if (!obj->path || !obj->host_path) {
		fp_object__free(obj);
		return NULL;
	}
	return obj;
}

int fp_object__read_mem(const void *image, size_t size, const char *path,
			struct fp_object **out, struct fp_err *e)
{
	struct fp_object *obj;
	Elf *elf;
	int ret;

	*out = NULL;
	obj = object_new(path, path);
	if (!obj)
		return -ENOMEM;
	elf = fp_elf_memory(image, size);
	if (!elf) {
		fp_object__free(obj);
		return fp_fail(e, ENOEXEC, "%s: not an ELF file", path);
	}
	ret = read_elf(elf, obj, e);
	elf_end(elf);
	if (ret) {
		fp_object__free(obj);
		return ret;
	}
	*out = obj;
	return 0;
}

int fp_object__read_fd(int fd, const char *host_path, const char *path,
		       struct fp_object **out, struct fp_err *e)
{
	struct fp_object *obj;
	Elf *elf;
	int ret;

	*out = NULL;
	obj = object_new(host_path, path);
	if (!obj)
		return -ENOMEM;
	elf = fp_elf_begin(fd);
	if (!elf) {
		ret = fp_fail(e, ENOEXEC, "%s: not an ELF file", path);
	} else {
		ret = read_elf(elf, obj, e);
		elf_end(elf);
	}
	if (ret) {
		fp_object__free(obj);
		return ret;
	}
	*out = obj;
	return 0;
}

int fp_object__read(const char *host_path, const char *path, struct fp_object **out,
		    struct fp_err *e)
{
	int fd, ret;

	*out = NULL;
	fd = open(host_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		return fp_fail(e, -ret, "%s: cannot open: %s", path, strerror(errno));
	}
	ret = fp_object__read_fd(fd, host_path, path, out, e);
	close(fd);
	return ret;
}
