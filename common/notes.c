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
 * (common/elf.c reads the ELF file; common/proc.c a process's objects.)
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "notes.h"
#include "symbols.h"
#include "err.h"

#define NT_STAPSDT 3


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
	for (i = 0; i < obj->nfuncs; i++)
		site_clear(&obj->funcs[i]);
	free(obj->funcs);
	fp_symbols__free(obj->syms);
	free(obj->syms_err);
	free(obj->root);
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
			 struct fp_err *e)
{
	const char *prov, *name, *args;
	struct fp_site *s;
	size_t pos = 24;

	if (dsz < 24)
		return fp_fail(e, EINVAL,
			       "%s: stapsdt note at offset 0x%llx: descriptor of %zu bytes, "
			       "need 24",
			       obj->path, (unsigned long long)off, dsz);
	prov = take_str(d, dsz, &pos);
	name = prov ? take_str(d, dsz, &pos) : NULL;
	args = name ? take_str(d, dsz, &pos) : NULL;
	if (!args)
		return fp_fail(e, EINVAL, "%s: stapsdt note at offset 0x%llx: provider, name or "
			       "arguments not terminated", obj->path, (unsigned long long)off);
	if (!*prov || !*name || !is_printable(prov) || !is_printable(name) ||
	    !is_printable(args)) {
		return fp_fail(e, EINVAL, "%s: stapsdt note at offset 0x%llx: empty or unprintable "
			       "provider or name", obj->path, (unsigned long long)off);
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
		    struct fp_err *e)
{
	if (n < 24)
		return fp_fail(e, EINVAL,
			       "%s: in-process note at offset 0x%llx: %llu bytes, 24 "
			       "expected",
			       obj->path, (unsigned long long)off, (unsigned long long)n);
	if (obj->ip_version && (obj->ip_version != rd32(d) || obj->ip_ctl != rd64(d + 8)))
		return fp_fail(e, EINVAL,
			       "%s: in-process note at offset 0x%llx disagrees with an "
			       "earlier one: translation units built with different headers",
			       obj->path, (unsigned long long)off);
	obj->ip_version = rd32(d);
	obj->ip_thread_size = rd32(d + 4);
	obj->ip_ctl = rd64(d + 8);
	obj->ip_base = rd64(d + 16);
	if (!obj->ip_version)
		return fp_fail(e, EINVAL, "%s: in-process note at offset 0x%llx: version 0",
			       obj->path, (unsigned long long)off);
	return 0;
}

/*
 * The sampler's TLS ABI note (FP_NOTE_TYPE_TLS): u32 version, u32 depth, u32 magic, and in
 * notes of 24 bytes (featprof.h since the libraries' own stacks) u32 0 and u64
 * featprof_tls's offset in the object's TLS block. One per translation unit built with
 * FEATPROF_SAMPLING; they must agree.
 */
static int parse_tls(struct fp_object *obj, const uint8_t *d, uint64_t n, uint64_t off,
		     struct fp_err *e)
{
	uint32_t v, depth, magic;

	if (n < 12)
		return fp_fail(e, EINVAL, "%s: TLS note at offset 0x%llx: %llu bytes, 12 expected",
			       obj->path, (unsigned long long)off, (unsigned long long)n);
	v = rd32(d);
	depth = rd32(d + 4);
	magic = rd32(d + 8);
	if (obj->tls_version && (obj->tls_version != v || obj->tls_depth != depth ||
				 obj->tls_magic != magic)) {
		return fp_fail(e, EINVAL, "%s: TLS note at offset 0x%llx disagrees with an "
			       "earlier one (version %u/%u): translation units built with "
			       "different headers", obj->path, (unsigned long long)off, v,
			       obj->tls_version);
	}
	obj->tls_version = v;
	obj->tls_depth = depth;
	obj->tls_magic = magic;
	if (n >= 24) {
		obj->tls_dtpoff = rd64(d + 16);
		obj->tls_dtpoff_known = true;
	}
	return 0;
}

static int parse_catalog(struct fp_object *obj, const uint8_t *d, size_t dsz, uint64_t off,
			 struct fp_err *e)
{
	const char *region, *file, *f;
	struct fp_site *s;
	size_t pos = 24;
	char **feats;

	if (dsz < 24)
		return fp_fail(e, EINVAL, "%s: featprof note at offset 0x%llx: descriptor of %zu "
			       "bytes, need 24", obj->path, (unsigned long long)off, dsz);
	region = take_str(d, dsz, &pos);
	file = region ? take_str(d, dsz, &pos) : NULL;
	if (!file)
		return fp_fail(e, EINVAL, "%s: featprof note at offset 0x%llx: region or file not "
			       "terminated", obj->path, (unsigned long long)off);
	if (!is_ident(region) || !is_printable(file) ||
	    (d[20] != FP_KIND_BEGIN && d[20] != FP_KIND_END) ||
	    (d[21] != FP_SHAPE_NOP1 && d[21] != FP_SHAPE_SHIELDED)) {
		return fp_fail(e, EINVAL,
			       "%s: featprof note at offset 0x%llx: bad region name, kind "
			       "%u or shape %u",
			       obj->path, (unsigned long long)off, d[20], d[21]);
	}
	s = push_site(&obj->cat, &obj->ncat);
	if (!s)
		return -errno;
	s->pc = rd64(d);
	s->base = rd64(d + 8);
	s->line = rd32(d + 16);
	s->kind = d[20];
	s->shape = d[21];
	s->scope = d[22] & FEATPROF_ABI_SITE_SCOPE;	/* other flag bits: a later header's */
	s->note_off = off;
	s->region = strdup(region);
	s->file = strdup(file);
	if (!s->region || !s->file)
		return -ENOMEM;
	for (;;) {
		f = take_str(d, dsz, &pos);
		if (!f)
			return fp_fail(e, EINVAL,
				       "%s: featprof note at offset 0x%llx: feature list not "
				       "terminated",
				       obj->path, (unsigned long long)off);
		if (!*f)
			break;
		if (!is_printable(f) || s->nfeatures >= 64)
			return fp_fail(e, EINVAL, "%s: featprof note at offset 0x%llx: unprintable "
				       "feature name or more than 64 features", obj->path,
				       (unsigned long long)off);
		feats = realloc(s->features, sizeof(*feats) * (size_t)(s->nfeatures + 1));
		if (!feats)
			return -ENOMEM;
		s->features = feats;
		s->features[s->nfeatures] = strdup(f);
		if (!s->features[s->nfeatures])
			return -ENOMEM;
		s->nfeatures++;
	}
	if (s->kind == FP_KIND_END && s->nfeatures)
		return fp_fail(e, EINVAL, "%s: featprof note at offset 0x%llx: an end site with "
			       "features", obj->path, (unsigned long long)off);
	return 0;
}

int fp_notes_parse(struct fp_object *obj, const uint8_t *buf, size_t size, uint64_t sec_off,
		   int featprof_section, struct fp_err *e)
{
	size_t pos = 0;
	int ret;

	while (pos < size) {
		uint64_t namesz, descsz, type, name_end, desc_off, desc_end;
		uint64_t off = sec_off + pos;

		if (size - pos < 12)
			return fp_fail(e, EINVAL, "%s: note at offset 0x%llx: truncated header",
				       obj->path, (unsigned long long)off);
		namesz = rd32(buf + pos);
		descsz = rd32(buf + pos + 4);
		type = rd32(buf + pos + 8);
		name_end = pos + 12 + namesz;
		desc_off = (name_end + 3) & ~3ULL;
		desc_end = desc_off + descsz;
		if (desc_end > size)
			return fp_fail(e, EINVAL,
				       "%s: note at offset 0x%llx: name of %llu and "
				       "descriptor of %llu bytes overrun the section (%zu bytes)",
				       obj->path, (unsigned long long)off,
				       (unsigned long long)namesz, (unsigned long long)descsz,
				       size - pos);
		if (!featprof_section && type == NT_STAPSDT && namesz == 8 &&
		    !memcmp(buf + pos + 12, "stapsdt", 8)) {
			ret = parse_stapsdt(obj, buf + desc_off, descsz, off, e);
			if (ret)
				return ret;
		} else if (featprof_section && type == FP_NOTE_TYPE_SITE && namesz == 9 &&
			   !memcmp(buf + pos + 12, "featprof", 9)) {
			ret = parse_catalog(obj, buf + desc_off, descsz, off, e);
			if (ret)
				return ret;
		} else if (featprof_section && type == FP_NOTE_TYPE_TLS && namesz == 9 &&
			   !memcmp(buf + pos + 12, "featprof", 9)) {
			ret = parse_tls(obj, buf + desc_off, descsz, off, e);
			if (ret)
				return ret;
		} else if (featprof_section && type == FP_NOTE_TYPE_IP && namesz == 9 &&
			   !memcmp(buf + pos + 12, "featprof", 9)) {
			ret = parse_ip(obj, buf + desc_off, descsz, off, e);
			if (ret)
				return ret;
		}
		/* Other owners and types in these sections are not ours: skip them. */
		pos = (size_t)((desc_end + 3) & ~3ULL);
	}
	return 0;
}
