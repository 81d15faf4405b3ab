// SPDX-License-Identifier: GPL-2.0
/*
 * The functions of an ELF file (common/symbols.h). Where the table comes from, in the
 * order gdb and perf look: the file's own .symtab; a debug file that carries it,
 * found by the file's build id (ROOT/usr/lib/debug/.build-id/xx/rest.debug), by its
 * .gnu_debuglink (next to the file, in .debug/ beside it, under ROOT/usr/lib/debug/ +
 * the file's directory; its CRC-32 checked) or from a debuginfod server; else the
 * MiniDebugInfo in .gnu_debugdata with .dynsym; else .dynsym. A function is an STT_FUNC
 * symbol defined in the file; its entry's file offset comes from the file's executable
 * PT_LOAD segments, as a marked site's does (common/elf.c). This module does not log.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elfutils/debuginfod.h>
#include <lzma.h>
#include <unistd.h>
#include <zlib.h>

#include "demangle.h"
#include "elfread.h"
#include "err.h"
#include "symbols.h"

#define MAX_FUNCS (1 << 22)	/* symbols kept per file */

const char *fp_symbols__source_name(int source)
{
	switch (source) {
	case FP_SYM_SYMTAB:
		return "symtab";
	case FP_SYM_BUILD_ID:
		return "build-id";
	case FP_SYM_DEBUGLINK:
		return "debuglink";
	case FP_SYM_DEBUGINFOD:
		return "debuginfod";
	case FP_SYM_DYNSYM:
		return "dynsym";
	case FP_SYM_MINIDEBUG:
		return "minidebuginfo";
	case FP_SYM_PERF_MAP:
		return "perf-map";
	default:
		return "none";
	}
}

const char *fp_func__unmeasurable(const struct fp_symbols *s, const struct fp_func *f)
{
	if (s->go)
		return "a Go binary: the kernel's return probe rewrites return addresses on "
		       "stacks that Go moves";
	/* a return probe there would take whatever the function keeps at the top of its
	 * frame for a return address, and overwrite it */
	if (strstr(f->name + fp_clone_base(f->name), ".cold"))
		return "the cold part of a function, entered by a jump, not called (its time "
		       "is the function's: measure that)";
	if (!f->size)
		return "its symbol has size 0 (an alias or an assembler label)";
	if (!f->off)
		return "its address is in no executable segment of the file";
	return NULL;
}

const char *fp_symbols__calls_only(const struct fp_symbols *s)
{
	return s && s->unwinds ? "C++ code: its calls are counted, not timed (an exception that "
			    "unwinds through a function whose return address the kernel's "
			    "return probe replaced aborts the program: the trampoline has no "
			    "unwind information)"
			  : NULL;
}

void fp_symbols__free(struct fp_symbols *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++)
		free(s->f[i].name);
	free(s->f);
	free(s->debug_file);
	free(s->soname);
	free(s->by_off);
	free(s);
}

static int cmp_off(const void *a, const void *b, void *base)
{
	const struct fp_func *f = base, *x = &f[*(const int *)a], *y = &f[*(const int *)b];

	size_t ux = strspn(x->name, "_"), uy = strspn(y->name, "_"), lx, ly;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	if ((x->size != 0) != (y->size != 0))
		return (y->size != 0) - (x->size != 0);	/* one with a size first */
	/* the name people call it by: a global one before a local alias at the same
	 * address (__clone3 before glibc's __GI___clone3), a name before an alias that
	 * only prefixes it (both local: __pthread_mutex_unlock_usercnt before
	 * __GI___pthread_mutex_unlock_usercnt), then the fewest leading underscores, then
	 * the name (the same choice every time) */
	if (x->global != y->global)
		return y->global - x->global;
	lx = strlen(x->name);
	ly = strlen(y->name);
	if (lx != ly && !strcmp(lx > ly ? x->name + lx - ly : y->name + ly - lx,
				lx > ly ? y->name : x->name))
		return lx > ly ? 1 : -1;
	if (ux != uy)
		return ux < uy ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The index by entry offset: functions in code, one per offset. 0 or -ENOMEM. */
static int index_offsets(struct fp_symbols *s)
{
	int k, w = 0;

	s->by_off = malloc(((size_t)s->n + 1) * sizeof(*s->by_off));
	if (!s->by_off)
		return -ENOMEM;
	for (k = 0; k < s->n; k++)
		if (s->f[k].off)
			s->by_off[w++] = k;
	qsort_r(s->by_off, (size_t)w, sizeof(*s->by_off), cmp_off, s->f);
	s->nby_off = 0;
	for (k = 0; k < w; k++)
		if (!s->nby_off || s->f[s->by_off[s->nby_off - 1]].off != s->f[s->by_off[k]].off)
			s->by_off[s->nby_off++] = s->by_off[k];
	return 0;
}

const struct fp_func *fp_symbols__at(struct fp_symbols *s, uint64_t off)
{
	const struct fp_func *f;
	int lo = 0, hi;

	if (!s || (!s->by_off && index_offsets(s)))
		return NULL;
	hi = s->nby_off;
	while (lo < hi) {	/* the first entry above off */
		int mid = lo + (hi - lo) / 2;

		if (s->f[s->by_off[mid]].off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	f = &s->f[s->by_off[lo - 1]];
	return !f->size || off - f->off < f->size ? f : NULL;
}

static int cmp_func(const void *a, const void *b)
{
	const struct fp_func *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->addr < y->addr ? -1 : x->addr > y->addr);
}

/* The section of type type (SHT_SYMTAB, SHT_DYNSYM), or NULL. */
/* The functions of elf's symbol table of type type appended to s->f. 1 read, 0 no such
 * table (or an empty one), -errno. */
static int read_table(Elf *elf, Elf64_Word type, struct fp_symbols *s)
{
	Elf_Scn *scn = fp_elf_section_of_type(elf, type);
	Elf_Data *data;
	GElf_Shdr sh;
	size_t i, n;
	int got = 0;

	if (!scn || !gelf_getshdr(scn, &sh) || !sh.sh_entsize)
		return 0;
	data = elf_getdata(scn, NULL);
	if (!data)
		return 0;
	n = data->d_size / sh.sh_entsize;
	for (i = 0; i < n; i++) {
		struct fp_func *a;
		const char *name;
		GElf_Sym sym;

		if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		if (s->n >= MAX_FUNCS)
			return -E2BIG;
		a = realloc(s->f, sizeof(*a) * (size_t)(s->n + 1));
		if (!a)
			return -ENOMEM;
		s->f = a;
		a[s->n] = (struct fp_func){
			.name = strdup(name),
			.addr = sym.st_value,
			.size = sym.st_size,
			.global = GELF_ST_BIND(sym.st_info) != STB_LOCAL,
		};
		if (!a[s->n].name)
			return -ENOMEM;
		s->n++;
		got = 1;
	}
	return got;
}

/*
 * Is the file C++ code that exceptions pass through? The C++ personality routine, throw
 * or rethrow among its dynamic symbols (defined or needed). Not C code with cleanups
 * (glibc's .gcc_except_table, _Unwind_Resume: thread cancellation's forced unwinding,
 * which ends quietly at the return trampoline: measured, the thread exits and its
 * open regions count thread_exit_inside); a C++ exception does not (std::terminate).
 */
static int unwinds(Elf *elf)
{
	static const char *const names[] = { "__gxx_personality_v0", "__cxa_throw",
					     "__cxa_rethrow" };
	Elf_Scn *scn = fp_elf_section_of_type(elf, SHT_DYNSYM);
	Elf_Data *data;
	GElf_Shdr sh;
	size_t i, k;

	if (!scn || !gelf_getshdr(scn, &sh) || !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
		return 0;
	for (i = 0; i < data->d_size / sh.sh_entsize; i++) {
		GElf_Sym sym;
		const char *n;

		if (!gelf_getsym(data, (int)i, &sym) ||
		    !(n = elf_strptr(elf, sh.sh_link, sym.st_name)))
			continue;
		for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
			if (!strcmp(n, names[k]))
				return 1;
	}
	return 0;
}

/* The build id (NT_GNU_BUILD_ID) as hex into hex, or 0 when the file has none. */
static int build_id(Elf *elf, char *hex, size_t hexlen)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		size_t off = 0, name_off, desc_off, i;
		Elf_Data *data;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		while (data && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			const uint8_t *d = (const uint8_t *)data->d_buf + desc_off;

			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((const char *)data->d_buf + name_off, "GNU", 4) ||
			    nh.n_descsz < 2 || 2 * (size_t)nh.n_descsz + 1 > hexlen)
				continue;
			for (i = 0; i < nh.n_descsz; i++)
				snprintf(hex + 2 * i, 3, "%02x", d[i]);
			return 1;
		}
	}
	return 0;
}

static uint32_t file_crc(int fd)
{
	unsigned char buf[65536];
	uLong crc = crc32(0L, Z_NULL, 0);
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		crc = crc32(crc, buf, (uInt)n);
	return (uint32_t)crc;
}

/* Opens a candidate debug file: one with a .symtab (and, want_crc, that CRC-32). */
static Elf *open_debug(const char *p, int check_crc, uint32_t crc, int *fd_out)
{
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	Elf *elf;

	if (fd < 0)
		return NULL;
	if (check_crc && (file_crc(fd) != crc || lseek(fd, 0, SEEK_SET))) {
		close(fd);
		return NULL;
	}
	elf = fp_elf_begin(fd);
	if (!elf || !fp_elf_section_of_type(elf, SHT_SYMTAB)) {
		if (elf)
			elf_end(elf);
		close(fd);
		return NULL;
	}
	*fd_out = fd;
	return elf;
}

/* Whether the debug file d carries build id hex (a file of another build names other
 * addresses: not used). A file without one is taken (older debug files). */
static int same_build(Elf *d, const char *hex)
{
	char h[130];

	return !build_id(d, h, sizeof(h)) || !strcmp(h, hex);
}

/* The debug file found by .gnu_debuglink: next to the file, in .debug/ beside it, or
 * under ROOT/usr/lib/debug/ + its directory, with the CRC-32 it names; or NULL. */
static Elf *by_debuglink(Elf *elf, const char *path, const char *root, char *found,
			 size_t foundlen, int *fd)
{
	Elf_Scn *scn = fp_elf_section(elf, ".gnu_debuglink");
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
	const char *name = data ? data->d_buf : NULL, *slash = strrchr(path, '/');
	size_t nl = name ? strnlen(name, data->d_size) : 0, k;
	char dir[4096], p[8400];
	uint32_t crc;
	Elf *d;

	if (!nl || nl >= data->d_size || data->d_size < 4 || strchr(name, '/'))
		return NULL;
	memcpy(&crc, (const char *)data->d_buf + data->d_size - 4, 4);
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 0, path);
	for (k = 0; k < 3; k++) {
		const char *fmt = k == 0 ? "%s%s/%s" : k == 1 ? "%s%s/.debug/%s"
							      : "%s/usr/lib/debug%s/%s";

		snprintf(p, sizeof(p), fmt, root, dir, name);
		d = open_debug(p, 1, crc, fd);
		if (d) {
			snprintf(found, foundlen, "%s", p + strlen(root));
			return d;
		}
	}
	return NULL;
}

/*
 * The debug file of build id hex from a debuginfod server, by elfutils' client library
 * (its protocol, its cache under $XDG_CACHE_HOME/debuginfod_client or
 * ~/.cache/debuginfod_client, negative answers cached too, DEBUGINFOD_TIMEOUT and the
 * rest of its environment honoured): asked only when DEBUGINFOD_URLS names a server, so
 * that nothing is sent anywhere otherwise. NULL when none answers.
 */
static Elf *by_debuginfod(const char *hex, char *found, size_t foundlen, int *fd)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	debuginfod_client *c;
	char *where = NULL;
	Elf *d = NULL;
	int f;

	if (!urls || !*urls || !(c = debuginfod_begin()))
		return NULL;
	f = debuginfod_find_debuginfo(c, (const unsigned char *)hex, 0, &where);
	debuginfod_end(c);
	if (f >= 0 && where) {
		d = open_debug(where, 0, 0, fd);
		if (d)
			snprintf(found, foundlen, "%s", where);
	}
	if (f >= 0)
		close(f);
	free(where);
	return d;
}

/* The separate debug file of elf (named path, seen under root), or NULL; *source says
 * how it was found (enum fp_sym_source). A candidate of another build is passed over. */
static Elf *find_debug(Elf *elf, const char *path, const char *root, char *found,
		       size_t foundlen, int *fd, int *source)
{
	static const int how[] = { FP_SYM_BUILD_ID, FP_SYM_DEBUGLINK, FP_SYM_DEBUGINFOD };
	char hex[130], p[8400];
	int has_id = build_id(elf, hex, sizeof(hex));
	Elf *d = NULL;
	size_t k;

	for (k = 0; k < sizeof(how) / sizeof(how[0]) && !d; k++) {
		if (how[k] == FP_SYM_BUILD_ID && has_id) {
			snprintf(p, sizeof(p), "%s/usr/lib/debug/.build-id/%.2s/%s.debug", root,
				 hex, hex + 2);
			if ((d = open_debug(p, 0, 0, fd)))
				snprintf(found, foundlen, "%s", p + strlen(root));
		} else if (how[k] == FP_SYM_DEBUGLINK) {
			d = by_debuglink(elf, path, root, found, foundlen, fd);
		} else if (how[k] == FP_SYM_DEBUGINFOD && has_id) {
			d = by_debuginfod(hex, found, foundlen, fd);
		}
		if (d && has_id && !same_build(d, hex)) {
			elf_end(d);
			close(*fd);
			*fd = -1;
			d = NULL;
		}
		if (d)
			*source = how[k];
	}
	return d;
}

/* DT_SONAME of a shared object, or NULL. */
static char *soname(Elf *elf)
{
	Elf_Scn *scn = fp_elf_section_of_type(elf, SHT_DYNAMIC);
	Elf_Data *data;
	GElf_Shdr sh;
	size_t i;

	if (!scn || !gelf_getshdr(scn, &sh) || !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
		return NULL;
	for (i = 0; i < data->d_size / sh.sh_entsize; i++) {
		GElf_Dyn dyn;
		const char *n;

		if (!gelf_getdyn(data, (int)i, &dyn) || dyn.d_tag == DT_NULL)
			break;
		if (dyn.d_tag == DT_SONAME && (n = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val)))
			return strdup(n);
	}
	return NULL;
}

/* Is the instruction at p a push of a register (50+r, or a REX prefix and 50+r)? The
 * kernel emulates it (push_setup_xol_ops, where it has that); any other first
 * instruction but a nop or a branch, which functions do not start with, it single-steps
 * out of line. */
static int is_push(const uint8_t *p, size_t left)
{
	if (left >= 1 && p[0] >= 0x50 && p[0] <= 0x57)
		return 1;
	return left >= 2 && p[0] >= 0x40 && p[0] <= 0x4f && p[1] >= 0x50 && p[1] <= 0x57;
}

/*
 * MiniDebugInfo: .gnu_debugdata holds an xz-compressed ELF file whose .symtab has the
 * functions .dynsym lacks (gdb's "MiniDebugInfo"). Decompressed with liblzma (the xz
 * format is not written by hand here) into *buf, at most MINI_MAX bytes; the ELF in
 * memory, or NULL.
 */
#define MINI_MAX (64u << 20)

static Elf *minidebug(Elf *elf, uint8_t **buf)
{
	Elf_Scn *scn = fp_elf_section(elf, ".gnu_debugdata");
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
	lzma_stream z = LZMA_STREAM_INIT;
	size_t cap = 1 << 20;
	lzma_ret r = LZMA_MEM_ERROR;

	*buf = NULL;
	if (!data || !data->d_size || lzma_stream_decoder(&z, UINT64_MAX, 0) != LZMA_OK)
		return NULL;
	z.next_in = data->d_buf;
	z.avail_in = data->d_size;
	do {
		uint8_t *b = realloc(*buf, cap);

		if (!b)
			break;
		*buf = b;
		z.next_out = b + z.total_out;
		z.avail_out = cap - z.total_out;
		r = lzma_code(&z, LZMA_FINISH);
		cap *= 2;
	} while (r == LZMA_OK && z.avail_out == 0 && cap <= MINI_MAX);
	lzma_end(&z);
	if (r != LZMA_STREAM_END) {
		free(*buf);
		*buf = NULL;
		return NULL;
	}
	return fp_elf_memory(*buf, z.total_out);
}

/* Each function's entry as a file offset, from elf's executable PT_LOAD segments, and
 * whether its first instruction is stepped. */
static void set_offsets(Elf *elf, struct fp_symbols *s)
{
	size_t nph = 0, i, size = 0;
	const uint8_t *image = (const uint8_t *)elf_rawfile(elf, &size);
	int k;

	if (elf_getphdrnum(elf, &nph))
		return;
	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X))
			continue;
		for (k = 0; k < s->n; k++)
			if (s->f[k].addr >= ph.p_vaddr && s->f[k].addr - ph.p_vaddr < ph.p_filesz)
				s->f[k].off = s->f[k].addr - ph.p_vaddr + ph.p_offset;
	}
	for (k = 0; k < s->n; k++)
		s->f[k].stepped = !(image && s->f[k].off && s->f[k].off < size &&
				    is_push(image + s->f[k].off, size - s->f[k].off));
}

/* The functions of elf (ended here), a file named path seen under root. */
static int read_elf(Elf *elf, const char *path, const char *root, struct fp_symbols **out,
		    struct fp_err *e)
{
	struct fp_symbols *s = calloc(1, sizeof(*s));
	char found[8400];
	Elf *dbg = NULL, *mini = NULL;
	int ret = 0, dfd = -1, k, w;
	uint8_t *mbuf = NULL;

	*out = NULL;
	if (!s) {
		if (elf)
			elf_end(elf);
		return -ENOMEM;
	}
	if (!elf) {
		ret = fp_fail(e, ENOEXEC, "%s: not an ELF file", path);
		goto out;
	}
	s->go = fp_elf_section(elf, ".go.buildinfo") || fp_elf_section(elf, ".note.go.buildid");
	s->unwinds = unwinds(elf);
	s->soname = soname(elf);
	if (!build_id(elf, s->build_id, sizeof(s->build_id)))
		s->build_id[0] = 0;
	ret = read_table(elf, SHT_SYMTAB, s);
	if (ret > 0) {
		s->source = FP_SYM_SYMTAB;
	} else if (!ret && (dbg = find_debug(elf, path, root, found, sizeof(found), &dfd,
					      &s->source))) {
		ret = read_table(dbg, SHT_SYMTAB, s);
		s->debug_file = strdup(found);
		if (!s->debug_file)
			ret = -ENOMEM;
	}
	if (!ret && (mini = minidebug(elf, &mbuf))) {
		/* its .symtab has what .dynsym lacks: both read (duplicates merge below) */
		ret = read_table(mini, SHT_SYMTAB, s);
		if (ret >= 0 && read_table(elf, SHT_DYNSYM, s) < 0)
			ret = -ENOMEM;
		s->source = FP_SYM_MINIDEBUG;
	}
	if (!ret) {
		ret = read_table(elf, SHT_DYNSYM, s);
		s->source = ret > 0 ? FP_SYM_DYNSYM : FP_SYM_NONE;
	}
	if (ret < 0) {
		fp_fail(e, -ret, "%s: reading its symbols: %s", path, strerror(-ret));
		goto out;
	}
	ret = 0;
	set_offsets(elf, s);
	if (s->n)
		qsort(s->f, (size_t)s->n, sizeof(*s->f), cmp_func);
	for (k = 0, w = 0; k < s->n; k++) {	/* one entry per name and address */
		if (w && !cmp_func(&s->f[w - 1], &s->f[k])) {
			s->f[w - 1].size = s->f[w - 1].size ? s->f[w - 1].size : s->f[k].size;
			free(s->f[k].name);
			continue;
		}
		s->f[w++] = s->f[k];
	}
	s->n = w;
out:
	if (mini)
		elf_end(mini);
	free(mbuf);
	if (dbg)
		elf_end(dbg);
	if (dfd >= 0)
		close(dfd);
	if (elf)
		elf_end(elf);
	if (ret) {
		fp_symbols__free(s);
		return ret;
	}
	*out = s;
	return 0;
}

int fp_symbols__read(int fd, const char *path, const char *root, struct fp_symbols **out,
		     struct fp_err *e)
{
	return read_elf(fp_elf_begin(fd), path, root, out, e);
}

int fp_symbols__read_mem(const void *image, size_t size, const char *path, const char *root,
			 struct fp_symbols **out, struct fp_err *e)
{
	return read_elf(fp_elf_memory(image, size), path, root, out, e);
}
