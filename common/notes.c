// SPDX-License-Identifier: GPL-2.0
/*
 * Probe catalog reader: stapsdt notes (any provider) and featprof catalog notes.
 *
 * A stapsdt note (owner "stapsdt", type 3) holds three 64-bit addresses - the probe
 * location, the link-time address of .stapsdt.base, the semaphore - then three
 * NUL-terminated strings: provider, name, argument spec. The addresses are link-time
 * virtual addresses written into a non-allocated section, so they are never relocated
 * at run time; if a tool such as prelink moved the object after linking, the
 * .stapsdt.base section no longer sits at the address recorded in the note, and the
 * difference is added to the location and the semaphore (libbpf and systemtap do the
 * same). A uprobe is placed by file offset, which the PT_LOAD segment containing the
 * address gives: off = addr - p_vaddr + p_offset. That covers PIE, non-PIE and shared
 * objects alike.
 *
 * A featprof catalog note (owner "featprof", type 1) describes the site at the same
 * location: region, kind, features, source file and line, and shape. For a shielded
 * site the bytes at the location are checked against the shape (nop1, lea, nop5, lea)
 * before the nop5 offset is offered as the optimizable attach point: nothing in a note
 * is trusted to describe the code.
 *
 * Every note is hostile input until checked: sizes are checked against the section
 * without overflow, strings must end inside their descriptor, and an error names the
 * file and the offset of the note. This module does not log.
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
#include "seterr.h"

#define NT_STAPSDT 3
#define MAX_PROC_OBJECTS 4096

static const uint8_t shield_bytes[FP_SHIELD_LEN] = {
	0x90,				    /* nop */
	0x48, 0x8d, 0x64, 0x24, 0x80,	    /* lea -0x80(%rsp),%rsp */
	0x0f, 0x1f, 0x44, 0x00, 0x00,	    /* nopl 0x0(%rax,%rax,1) */
	0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00, /* lea 0x80(%rsp),%rsp */
};

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* A string at buf[*pos] that ends before buf[end]; advances *pos past its NUL. */
static const char *take_str(const uint8_t *buf, size_t end, size_t *pos)
{
	const uint8_t *nul;
	const char *s;

	if (*pos >= end)
		return NULL;
	nul = memchr(buf + *pos, 0, end - *pos);
	if (!nul)
		return NULL;
	s = (const char *)buf + *pos;
	*pos = (size_t)(nul - buf) + 1;
	return s;
}

static int is_ident(const char *s)
{
	if (!*s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_' ||
		      (*s >= '0' && *s <= '9')))
			return 0;
	return 1;
}

static int is_printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 0;
	return 1;
}

static void site_clear(struct fp_site *s)
{
	int i;

	free(s->provider);
	free(s->name);
	free(s->args);
	free(s->region);
	free(s->file);
	for (i = 0; i < s->nfeatures; i++)
		free(s->features[i]);
	free(s->features);
	memset(s, 0, sizeof(*s));
}

void fp_object__free(struct fp_object *obj)
{
	int i;

	if (!obj)
		return;
	for (i = 0; i < obj->nsites; i++)
		site_clear(&obj->sites[i]);
	for (i = 0; i < obj->ncat; i++)
		site_clear(&obj->cat[i]);
	free(obj->sites);
	free(obj->cat);
	free(obj->path);
	free(obj->host_path);
	if (obj->fd >= 0)
		close(obj->fd);
	free(obj);
}

static struct fp_site *push_site(struct fp_site **arr, int *n)
{
	struct fp_site *a;

	if (*n >= (1 << 20)) {
		errno = E2BIG;
		return NULL;
	}
	a = realloc(*arr, sizeof(**arr) * (size_t)(*n + 1));
	if (!a)
		return NULL;
	*arr = a;
	memset(&a[*n], 0, sizeof(a[0]));
	return &a[(*n)++];
}

static int parse_stapsdt(struct fp_object *obj, const uint8_t *d, size_t dsz, uint64_t off,
			 char *err, size_t errlen)
{
	const char *prov, *name, *args;
	struct fp_site *s;
	size_t pos = 24;

	if (dsz < 24) {
		seterr(err, errlen, "%s: stapsdt note at offset 0x%llx: descriptor of %zu bytes, "
		       "need 24", obj->path, (unsigned long long)off, dsz);
		return -EINVAL;
	}
	prov = take_str(d, dsz, &pos);
	name = prov ? take_str(d, dsz, &pos) : NULL;
	args = name ? take_str(d, dsz, &pos) : NULL;
	if (!args) {
		seterr(err, errlen, "%s: stapsdt note at offset 0x%llx: provider, name or "
		       "arguments not terminated", obj->path, (unsigned long long)off);
		return -EINVAL;
	}
	if (!*prov || !*name || !is_printable(prov) || !is_printable(name) ||
	    !is_printable(args)) {
		seterr(err, errlen, "%s: stapsdt note at offset 0x%llx: empty or unprintable "
		       "provider or name", obj->path, (unsigned long long)off);
		return -EINVAL;
	}
	s = push_site(&obj->sites, &obj->nsites);
	if (!s)
		return -errno;
	s->pc = rd64(d);
	s->base = rd64(d + 8);
	s->sem = rd64(d + 16);
	s->note_off = off;
	s->provider = strdup(prov);
	s->name = strdup(name);
	s->args = strdup(args);
	if (!s->provider || !s->name || !s->args)
		return -ENOMEM;
	if (!strcmp(prov, "featprof") && !fp_site_is_gate(s, NULL))
		obj->nfeatprof++;
	return 0;
}

int fp_site_is_gate(const struct fp_site *s, size_t *region_len)
{
	size_t n = strlen(s->name), k = strlen(FP_IP_GATE_SUFFIX);

	if (strcmp(s->provider, "featprof"))
		return 0;
	if (!strcmp(s->name, FP_GATE_PROBE) || !strcmp(s->name, FP_IP_THREAD_PROBE))
		return 1;	/* no region's: region_len stays */
	if (n <= k || strcmp(s->name + n - k, FP_IP_GATE_SUFFIX))
		return 0;
	if (region_len)
		*region_len = n - k;
	return 1;
}

/*
 * The in-process runtime's note (FP_NOTE_TYPE_IP): u32 version, u32 thread block size,
 * u64 control block address, u64 base. One per translation unit built with
 * FEATPROF_INPROCESS; they must agree (one control block per object).
 */
static int parse_ip(struct fp_object *obj, const uint8_t *d, uint64_t n, uint64_t off,
		    char *err, size_t errlen)
{
	if (n < 24) {
		seterr(err, errlen, "%s: in-process note at offset 0x%llx: %llu bytes, 24 "
		       "expected", obj->path, (unsigned long long)off, (unsigned long long)n);
		return -EINVAL;
	}
	if (obj->ip_version && (obj->ip_version != rd32(d) || obj->ip_ctl != rd64(d + 8))) {
		seterr(err, errlen, "%s: in-process note at offset 0x%llx disagrees with an "
		       "earlier one: translation units built with different headers", obj->path,
		       (unsigned long long)off);
		return -EINVAL;
	}
	obj->ip_version = rd32(d);
	obj->ip_thread_size = rd32(d + 4);
	obj->ip_ctl = rd64(d + 8);
	obj->ip_base = rd64(d + 16);
	if (!obj->ip_version) {
		seterr(err, errlen, "%s: in-process note at offset 0x%llx: version 0", obj->path,
		       (unsigned long long)off);
		return -EINVAL;
	}
	return 0;
}

/*
 * The sampler's TLS ABI note (FP_NOTE_TYPE_TLS): u32 version, u32 depth, u32 magic. One
 * per translation unit built with FEATPROF_SAMPLING; they must agree.
 */
static int parse_tls(struct fp_object *obj, const uint8_t *d, uint64_t n, uint64_t off,
		     char *err, size_t errlen)
{
	uint32_t v, depth, magic;

	if (n < 12) {
		seterr(err, errlen, "%s: TLS note at offset 0x%llx: %llu bytes, 12 expected",
		       obj->path, (unsigned long long)off, (unsigned long long)n);
		return -EINVAL;
	}
	v = rd32(d);
	depth = rd32(d + 4);
	magic = rd32(d + 8);
	if (obj->tls_version && (obj->tls_version != v || obj->tls_depth != depth ||
				 obj->tls_magic != magic)) {
		seterr(err, errlen, "%s: TLS note at offset 0x%llx disagrees with an earlier "
		       "one (version %u/%u): translation units built with different headers",
		       obj->path, (unsigned long long)off, v, obj->tls_version);
		return -EINVAL;
	}
	obj->tls_version = v;
	obj->tls_depth = depth;
	obj->tls_magic = magic;
	return 0;
}

static int parse_catalog(struct fp_object *obj, const uint8_t *d, size_t dsz, uint64_t off,
			 char *err, size_t errlen)
{
	const char *region, *file, *f;
	struct fp_site *s;
	size_t pos = 24;
	char **feats;

	if (dsz < 24) {
		seterr(err, errlen, "%s: featprof note at offset 0x%llx: descriptor of %zu "
		       "bytes, need 24", obj->path, (unsigned long long)off, dsz);
		return -EINVAL;
	}
	region = take_str(d, dsz, &pos);
	file = region ? take_str(d, dsz, &pos) : NULL;
	if (!file) {
		seterr(err, errlen, "%s: featprof note at offset 0x%llx: region or file not "
		       "terminated", obj->path, (unsigned long long)off);
		return -EINVAL;
	}
	if (!is_ident(region) || !is_printable(file) ||
	    (d[20] != FP_KIND_BEGIN && d[20] != FP_KIND_END) ||
	    (d[21] != FP_SHAPE_NOP1 && d[21] != FP_SHAPE_SHIELDED)) {
		seterr(err, errlen, "%s: featprof note at offset 0x%llx: bad region name, kind "
		       "%u or shape %u", obj->path, (unsigned long long)off, d[20], d[21]);
		return -EINVAL;
	}
	s = push_site(&obj->cat, &obj->ncat);
	if (!s)
		return -errno;
	s->pc = rd64(d);
	s->base = rd64(d + 8);
	s->line = rd32(d + 16);
	s->kind = d[20];
	s->shape = d[21];
	s->note_off = off;
	s->region = strdup(region);
	s->file = strdup(file);
	if (!s->region || !s->file)
		return -ENOMEM;
	for (;;) {
		f = take_str(d, dsz, &pos);
		if (!f) {
			seterr(err, errlen, "%s: featprof note at offset 0x%llx: feature list not "
			       "terminated", obj->path, (unsigned long long)off);
			return -EINVAL;
		}
		if (!*f)
			break;
		if (!is_printable(f) || s->nfeatures >= 64) {
			seterr(err, errlen, "%s: featprof note at offset 0x%llx: unprintable "
			       "feature name or more than 64 features", obj->path,
			       (unsigned long long)off);
			return -EINVAL;
		}
		feats = realloc(s->features, sizeof(*feats) * (size_t)(s->nfeatures + 1));
		if (!feats)
			return -ENOMEM;
		s->features = feats;
		s->features[s->nfeatures] = strdup(f);
		if (!s->features[s->nfeatures])
			return -ENOMEM;
		s->nfeatures++;
	}
	if (s->kind == FP_KIND_END && s->nfeatures) {
		seterr(err, errlen, "%s: featprof note at offset 0x%llx: an end site with "
		       "features", obj->path, (unsigned long long)off);
		return -EINVAL;
	}
	return 0;
}

int fp_notes_parse(struct fp_object *obj, const uint8_t *buf, size_t size, uint64_t sec_off,
		   int featprof_section, char *err, size_t errlen)
{
	size_t pos = 0;
	int ret;

	while (pos < size) {
		uint64_t namesz, descsz, type, name_end, desc_off, desc_end;
		uint64_t off = sec_off + pos;

		if (size - pos < 12) {
			seterr(err, errlen, "%s: note at offset 0x%llx: truncated header",
			       obj->path, (unsigned long long)off);
			return -EINVAL;
		}
		namesz = rd32(buf + pos);
		descsz = rd32(buf + pos + 4);
		type = rd32(buf + pos + 8);
		name_end = pos + 12 + namesz;
		desc_off = (name_end + 3) & ~3ULL;
		desc_end = desc_off + descsz;
		if (desc_end > size) {
			seterr(err, errlen, "%s: note at offset 0x%llx: name of %llu and "
			       "descriptor of %llu bytes overrun the section (%zu bytes)",
			       obj->path, (unsigned long long)off, (unsigned long long)namesz,
			       (unsigned long long)descsz, size - pos);
			return -EINVAL;
		}
		if (!featprof_section && type == NT_STAPSDT && namesz == 8 &&
		    !memcmp(buf + pos + 12, "stapsdt", 8)) {
			ret = parse_stapsdt(obj, buf + desc_off, descsz, off, err, errlen);
			if (ret)
				return ret;
		} else if (featprof_section && type == FP_NOTE_TYPE_SITE && namesz == 9 &&
			   !memcmp(buf + pos + 12, "featprof", 9)) {
			ret = parse_catalog(obj, buf + desc_off, descsz, off, err, errlen);
			if (ret)
				return ret;
		} else if (featprof_section && type == FP_NOTE_TYPE_TLS && namesz == 9 &&
			   !memcmp(buf + pos + 12, "featprof", 9)) {
			ret = parse_tls(obj, buf + desc_off, descsz, off, err, errlen);
			if (ret)
				return ret;
		} else if (featprof_section && type == FP_NOTE_TYPE_IP && namesz == 9 &&
			   !memcmp(buf + pos + 12, "featprof", 9)) {
			ret = parse_ip(obj, buf + desc_off, descsz, off, err, errlen);
			if (ret)
				return ret;
		}
		/* Other owners and types in these sections are not ours: skip them. */
		pos = (size_t)((desc_end + 3) & ~3ULL);
	}
	return 0;
}

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
static int merge_catalog(struct fp_object *obj, char *err, size_t errlen)
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
		if (!c || !c->region) {
			seterr(err, errlen, "%s: featprof note at offset 0x%llx has no catalog "
			       "entry", obj->path, (unsigned long long)s->note_off);
			return -EINVAL;
		}
		rl = strlen(c->region);
		if (strncmp(s->name, c->region, rl) ||
		    strcmp(s->name + rl, c->kind == FP_KIND_BEGIN ? "__begin" : "__end")) {
			seterr(err, errlen, "%s: featprof note at offset 0x%llx: name '%s' does "
			       "not match catalog entry at 0x%llx", obj->path,
			       (unsigned long long)s->note_off, s->name,
			       (unsigned long long)c->note_off);
			return -EINVAL;
		}
		s->kind = c->kind;
		s->shape = c->shape;
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

static int read_elf(Elf *elf, struct fp_object *obj, char *err, size_t errlen)
{
	const uint8_t *image;
	size_t shstrndx, image_sz, nph, i;
	Elf_Scn *scn = NULL;
	uint64_t base_addr = 0;
	int have_base = 0, ret;
	struct segs sg = { 0 };
	GElf_Ehdr eh;

	if (elf_kind(elf) != ELF_K_ELF) {
		seterr(err, errlen, "%s: not an ELF file", obj->path);
		return -ENOEXEC;
	}
	if (!gelf_getehdr(elf, &eh) || gelf_getclass(elf) != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB) {
		seterr(err, errlen, "%s: not a 64-bit little-endian ELF file", obj->path);
		return -ENOEXEC;
	}
	image = (const uint8_t *)elf_rawfile(elf, &image_sz);
	if (!image || eh.e_shoff > image_sz ||
	    (uint64_t)eh.e_shnum * eh.e_shentsize > image_sz - eh.e_shoff ||
	    eh.e_phoff > image_sz ||
	    (uint64_t)eh.e_phnum * eh.e_phentsize > image_sz - eh.e_phoff) {
		seterr(err, errlen, "%s: truncated ELF file (headers past its end)", obj->path);
		return -EINVAL;
	}
	if (elf_getshdrstrndx(elf, &shstrndx) || elf_getphdrnum(elf, &nph)) {
		seterr(err, errlen, "%s: bad ELF headers: %s", obj->path, elf_errmsg(-1));
		return -EINVAL;
	}
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
			seterr(err, errlen, "%s: section %s at offset 0x%llx cannot be read: %s",
			       obj->path, name, (unsigned long long)sh.sh_offset, elf_errmsg(-1));
			ret = -EINVAL;
			goto out;
		}
		ret = fp_notes_parse(obj, data->d_buf, data->d_size, sh.sh_offset, fps, err,
				     errlen);
		if (ret)
			goto out;
	}

	ret = merge_catalog(obj, err, errlen);
	if (ret)
		goto out;
	if (obj->ip_version) {
		uint64_t ctl = obj->ip_ctl;

		if (obj->ip_base && have_base)
			ctl += base_addr - obj->ip_base;
		if (vaddr_to_off(&sg, ctl, 0, &obj->ip_ctl_off)) {
			seterr(err, errlen, "%s: in-process note: control block 0x%llx is not in "
			       "the file's loaded data", obj->path, (unsigned long long)ctl);
			ret = -EINVAL;
			goto out;
		}
	}

	for (i = 0; i < (size_t)obj->nsites; i++) {
		struct fp_site *s = &obj->sites[i];
		uint64_t pc = s->pc, sem = s->sem;

		if (s->base && have_base) {
			pc += base_addr - s->base;
			if (sem)
				sem += base_addr - s->base;
		}
		if (vaddr_to_off(&sg, pc, 1, &s->loc_off)) {
			seterr(err, errlen, "%s: stapsdt note at offset 0x%llx: location 0x%llx is "
			       "not in an executable segment", obj->path,
			       (unsigned long long)s->note_off, (unsigned long long)pc);
			ret = -EINVAL;
			goto out;
		}
		if (sem && vaddr_to_off(&sg, sem, 0, &s->sem_off)) {
			seterr(err, errlen,
			       "%s: stapsdt note at offset 0x%llx: semaphore 0x%llx is "
			       "not in a loaded segment",
			       obj->path, (unsigned long long)s->note_off, (unsigned long long)sem);
			ret = -EINVAL;
			goto out;
		}
		if (s->kind && s->shape == FP_SHAPE_SHIELDED && image &&
		    s->loc_off <= image_sz && image_sz - s->loc_off >= FP_SHIELD_LEN &&
		    !memcmp(image + s->loc_off, shield_bytes, FP_SHIELD_LEN))
			s->opt_off = s->loc_off + FP_SHIELD_NOP5;
	}
	ret = 0;
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
			struct fp_object **out, char *err, size_t errlen)
{
	struct fp_object *obj;
	Elf *elf;
	int ret;

	*out = NULL;
	elf_version(EV_CURRENT);
	obj = object_new(path, path);
	if (!obj)
		return -ENOMEM;
	elf = elf_memory((char *)image, size);
	if (!elf) {
		seterr(err, errlen, "%s: not an ELF file", path);
		fp_object__free(obj);
		return -ENOEXEC;
	}
	ret = read_elf(elf, obj, err, errlen);
	elf_end(elf);
	if (ret) {
		fp_object__free(obj);
		return ret;
	}
	*out = obj;
	return 0;
}

/* Reads the notes of the file open at fd (not closed here). */
static int read_fd(int fd, const char *host_path, const char *path, struct fp_object **out,
		   char *err, size_t errlen)
{
	struct fp_object *obj;
	Elf *elf;
	int ret;

	*out = NULL;
	elf_version(EV_CURRENT);
	obj = object_new(host_path, path);
	if (!obj)
		return -ENOMEM;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		seterr(err, errlen, "%s: not an ELF file", path);
		ret = -ENOEXEC;
	} else {
		ret = read_elf(elf, obj, err, errlen);
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
		    char *err, size_t errlen)
{
	int fd, ret;

	*out = NULL;
	fd = open(host_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		seterr(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return ret;
	}
	ret = read_fd(fd, host_path, path, out, err, errlen);
	close(fd);
	return ret;
}

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
 * root if that is the mapped inode. The fd, or -errno with err filled.
 */
static int open_mapping(pid_t pid, unsigned long long start, unsigned long long end,
			const char *path, int deleted, uint64_t dev, uint64_t ino, char *err,
			size_t errlen)
{
	char p[4200];
	struct stat st;
	int fd, e;

	snprintf(p, sizeof(p), "/proc/%d/map_files/%llx-%llx", (int)pid, start, end);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	e = errno;
	if (fd >= 0)	/* the mapped file itself */
		return fd;
	if (e != EPERM && e != EACCES) {
		seterr(err, errlen, "%s: cannot open %s: %s", path, p, strerror(e));
		return -e;
	}
	if (!deleted) {
		snprintf(p, sizeof(p), "/proc/%d/root%s", (int)pid, path);
		fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			e = errno;
			seterr(err, errlen, "%s: cannot open: %s", path, strerror(e));
			return -e;
		}
	}
	if (fd < 0 || fstat(fd, &st) || (uint64_t)st.st_ino != ino ||
	    (uint64_t)makedev(major(st.st_dev), minor(st.st_dev)) != dev) {
		if (fd >= 0)
			close(fd);
		seterr(err, errlen,
		       "%s: %s since it was mapped; reading the mapped file needs "
		       "/proc/%d/map_files (CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE)",
		       path, deleted ? "deleted" : "replaced on disk", (int)pid);
		return -EPERM;
	}
	return fd;
}

int fp_proc__refresh(struct fp_proc *proc, char *err, size_t errlen)
{
	int ret = 0, added = 0, i, k, nv;
	struct fp_vma *v = NULL;

	nv = fp_read_maps(proc->pid, &v);
	if (nv < 0) {
		seterr(err, errlen, "pid %d: %s", (int)proc->pid,
		       nv == -ENOENT ? "no such process" : strerror(-nv));
		return nv;
	}
	for (k = 0; k < nv && !ret; k++) {
		char host[64], oerr[600], *path = v[k].path;
		struct fp_object *obj, **objs;
		struct fp_file_id *seen;
		int dup = 0, deleted = 0, fd;
		size_t len = strlen(path);

		if (v[k].perms[2] != 'x' || path[0] != '/' || !v[k].ino)
			continue;
		if (len > 10 && !strcmp(path + len - 10, " (deleted)")) {
			path[len - 10] = 0;
			deleted = 1;
		}
		for (i = 0; i < proc->nseen && !dup; i++)
			dup = proc->seen[i].dev == v[k].dev && proc->seen[i].ino == v[k].ino;
		if (dup)
			continue;
		if (proc->nseen >= MAX_PROC_OBJECTS) {
			ret = -E2BIG;
			break;
		}
		seen = realloc(proc->seen, sizeof(*seen) * (size_t)(proc->nseen + 1));
		if (!seen) {
			ret = -ENOMEM;
			break;
		}
		proc->seen = seen;
		seen[proc->nseen++] = (struct fp_file_id){ v[k].dev, v[k].ino };
		fd = open_mapping(proc->pid, v[k].start, v[k].end, path, deleted, v[k].dev,
				  v[k].ino, oerr, sizeof(oerr));
		if (fd < 0) {
			ret = fp_strv_add(&proc->errors, &proc->nerrors, oerr);
			continue;
		}
		snprintf(host, sizeof(host), "/proc/self/fd/%d", fd);
		ret = read_fd(fd, host, path, &obj, oerr, sizeof(oerr));
		if (ret == -ENOEXEC || (!ret && !obj->nsites)) {
			fp_object__free(obj);
			close(fd);
			ret = 0;
			continue;
		}
		if (ret) {
			close(fd);
			ret = fp_strv_add(&proc->errors, &proc->nerrors, oerr);
			continue;
		}
		obj->fd = fd;
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
	if (ret) {
		seterr(err, errlen, "pid %d: %s", (int)proc->pid, strerror(-ret));
		return ret;
	}
	return added;
}

int fp_proc__read(pid_t pid, struct fp_proc **out, char *err, size_t errlen)
{
	struct fp_proc *proc;
	int ret;

	*out = NULL;
	if (pid <= 0) {
		seterr(err, errlen, "pid %d: not a process id", (int)pid);
		return -EINVAL;
	}
	proc = calloc(1, sizeof(*proc));
	if (!proc)
		return -ENOMEM;
	proc->pid = pid;
	ret = fp_proc__refresh(proc, err, errlen);
	if (ret < 0) {
		fp_proc__free(proc);
		return ret;
	}
	*out = proc;
	return 0;
}
