// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the probe catalog reader on the project's test targets, on corrupted
 * copies of them, and on a running process. No privileges needed.
 * usage: test_notes BUILD_DIR
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/catalog.h"
#include "common/protocol.h"
#include "test.h"

/* A cleared record: every call here reports its own failure (the first one stays). */
static struct fp_err *fresh(struct fp_err *e)
{
	fp_err_clear(e);
	return e;
}

static char dir[1024];

static char *path_of(const char *name)
{
	static char buf[2048];

	snprintf(buf, sizeof(buf), "%s/tests/targets/%s", dir, name);
	return buf;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st))
		return NULL;
	buf = malloc((size_t)st.st_size);
	if (buf && read(fd, buf, (size_t)st.st_size) != st.st_size) {
		free(buf);
		buf = NULL;
	}
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

static const struct fp_region *region(const struct fp_catalog *cat, const char *name)
{
	int i = fp_catalog__region(cat, name);

	CHECK(i >= 0, "region %s missing", name);
	return i >= 0 ? &cat->regions[i] : NULL;
}

static void check_site_bytes(const char *file, const struct fp_object *obj)
{
	size_t len;
	uint8_t *img = slurp(file, &len);
	int i;

	CHECK(img != NULL, "cannot read %s", file);
	if (!img)
		return;
	for (i = 0; i < obj->nsites; i++) {
		const struct fp_site *s = &obj->sites[i];

		CHECK(s->loc_off < len && img[s->loc_off] == 0x90,
		      "%s: site %s at file offset 0x%llx is not a nop", file, s->name,
		      (unsigned long long)s->loc_off);
		CHECK(s->opt_off == s->loc_off + FP_SHIELD_NOP5, "%s: %s opt_off 0x%llx", file,
		      s->name, (unsigned long long)s->opt_off);
		CHECK(s->opt_off < len && img[s->opt_off] == 0x0f && img[s->opt_off + 1] == 0x1f,
		      "%s: no nop5 at the optimizable offset", file);
	}
	free(img);
}

static void test_c_target(const char *name)
{
	const char *file = path_of(name);
	const struct fp_region *r;
	struct fp_catalog *cat;
	struct fp_object *obj;
	struct fp_err err = { 0 };
	int ret;

	ret = fp_object__read(file, file, &obj, fresh(&err));
	CHECK_INT(ret, 0);
	if (ret) {
		fprintf(stderr, "  %s\n", err.msg);
		return;
	}
	check_site_bytes(file, obj);
	cat = fp_catalog__new(&obj, 1, NULL);
	CHECK_INT(cat->nregions, 4);
	CHECK_INT(cat->nfeatures, 4);
	CHECK(fp_catalog__feature(cat, "Encryption") >= 0, "feature Encryption missing");
	if ((r = region(cat, "compress"))) {
		CHECK_INT(r->nbegin, 1);
		CHECK_INT(r->nend, 2);
		CHECK_INT(r->nfeatures, 1);
		CHECK_STR(r->features[0], "Compression");
	}
	if ((r = region(cat, "compress_enc"))) {
		CHECK_INT(r->nfeatures, 2);
		CHECK_STR(r->features[0], "Compression");
		CHECK_STR(r->features[1], "Encryption");
	}
	if ((r = region(cat, "hot_inline")))
		CHECK(r->nbegin >= 2 && r->nend >= 2, "inline sites not duplicated: %d/%d",
		      r->nbegin, r->nend);
	if ((r = region(cat, "checksum"))) {
		const struct fp_site *s = &obj->sites[r->sites[0].site];

		CHECK_INT(r->nbegin, 1);
		CHECK(r->nend >= 1, "scope end sites: %d", r->nend);
		CHECK(strstr(s->file, "site.c") != NULL, "file %s", s->file);
		CHECK(s->line > 10 && s->line < 100, "line %u", s->line);
	}
	fp_catalog__free(cat);
	fp_object__free(obj);
}

static void test_cxx_target(void)
{
	const char *file = path_of("site_cxx");
	const struct fp_region *r;
	struct fp_catalog *cat;
	struct fp_object *obj;
	struct fp_err err = { 0 };

	CHECK_INT(fp_object__read(file, file, &obj, fresh(&err)), 0);
	if (!obj)
		return;
	cat = fp_catalog__new(&obj, 1, NULL);
	/* scaled<int> and scaled<double>: two instantiations, each with its sites */
	if ((r = region(cat, "tmpl_scale")))
		CHECK(r->nbegin >= 2 && r->nend >= 2, "template sites %d/%d", r->nbegin,
		      r->nend);
	check_site_bytes(file, obj);
	fp_catalog__free(cat);
	fp_object__free(obj);
}

/* Finds the file offset and size of a section in an image. */
static int find_section(uint8_t *img, size_t len, const char *want, size_t *off, size_t *sz)
{
	Elf *elf = elf_memory((char *)img, len);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	int found = 0;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return -1;
	while (!found && (scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && !strcmp(n, want)) {
			*off = sh.sh_offset;
			*sz = sh.sh_size;
			found = 1;
		}
	}
	elf_end(elf);
	return found ? 0 : -1;
}

static void expect_corrupt(const uint8_t *img, size_t len, const char *what, const char *msg)
{
	struct fp_object *obj = (struct fp_object *)1;
	struct fp_err err = { 0 };
	int ret;

	ret = fp_object__read_mem(img, len, what, &obj, fresh(&err));
	CHECK(ret < 0 && obj == NULL, "%s: corrupt input accepted", what);
	CHECK(strstr(err.msg, what) && strstr(err.msg, msg), "%s: error '%s' lacks '%s'", what,
	      err.msg, msg);
}

static void test_corrupt(void)
{
	size_t len, off, sz;
	uint8_t *orig = slurp(path_of("site_c"), &len), *img;
	struct fp_object *obj;
	uint32_t v;
	struct fp_err err = { 0 };

	CHECK(orig != NULL, "cannot read site_c");
	if (!orig)
		return;
	elf_version(EV_CURRENT);
	CHECK_INT(find_section(orig, len, ".note.stapsdt", &off, &sz), 0);
	img = malloc(len);

	/* descriptor size running past the section */
	memcpy(img, orig, len);
	v = 0x7ffffff0;
	memcpy(img + off + 4, &v, 4);
	expect_corrupt(img, len, "descsz", "note at offset 0x");

	/* strings without terminator: fill the first note's descriptor strings */
	memcpy(img, orig, len);
	memcpy(&v, img + off + 4, 4);
	memset(img + off + 20 + 24, 'A', v - 24);
	expect_corrupt(img, len, "unterminated", "not terminated");

	/* truncated file, cut in the middle of the note section */
	expect_corrupt(orig, off + sz / 2, "truncated", "truncated ELF file");

	/* featprof catalog entry with a bad kind */
	memcpy(img, orig, len);
	CHECK_INT(find_section(img, len, ".note.featprof", &off, &sz), 0);
	img[off + 24 + 20] = 7;
	expect_corrupt(img, len, "kind", "kind 7");

	/* prelink: note base and location both moved back by 0x10; the reader must put the
	 * location back where .stapsdt.base says it is */
	memcpy(img, orig, len);
	CHECK_INT(find_section(img, len, ".note.stapsdt", &off, &sz), 0);
	{
		uint64_t pc, base;
		struct fp_object *ref;

		memcpy(&pc, img + off + 20, 8);
		memcpy(&base, img + off + 28, 8);
		pc -= 0x10;
		base -= 0x10;
		memcpy(img + off + 20, &pc, 8);
		memcpy(img + off + 28, &base, 8);
		CHECK_INT(fp_object__read_mem(orig, len, "orig", &ref, fresh(&err)), 0);
		/* the catalog note still has the old pc, so only compare stapsdt reading */
		if (!fp_object__read_mem(img, len, "prelinked", &obj, fresh(&err))) {
			CHECK(0, "prelinked copy should disagree with its catalog note");
			fp_object__free(obj);
		} else {
			CHECK(strstr(err.msg, "no catalog entry") != NULL, "prelink: %s", err.msg);
		}
		fp_object__free(ref);
	}

	/* location outside any executable segment (a foreign note: no catalog to match) */
	{
		size_t blen;
		uint8_t *bare = slurp(path_of("redzone_bare"), &blen);

		CHECK_INT(find_section(bare, blen, ".note.stapsdt", &off, &sz), 0);
		memset(bare + off + 20, 0xff, 8);
		expect_corrupt(bare, blen, "location", "not in an executable segment");
		free(bare);
	}

	/* not ELF */
	expect_corrupt((const uint8_t *)"hello world\n", 12, "text", "not an ELF file");
	free(img);
	free(orig);
}

static void test_shlib_process(void)
{
	const struct fp_region *r;
	struct fp_catalog *cat;
	struct fp_proc *proc;
	struct fp_err err = { 0 };
	int ret, have_lib = 0, i, objs_seen[2] = { 0, 0 };
	pid_t pid = fork();

	if (pid == 0) {
		execl(path_of("site_shlib"), "site_shlib", "4000000000", (char *)NULL);
		_exit(127);
	}
	usleep(200000);
	ret = fp_proc__read(pid, &proc, fresh(&err));
	CHECK_INT(ret, 0);
	if (!ret) {
		for (i = 0; i < proc->nobjs; i++)
			have_lib |= strstr(proc->objs[i]->path, "libsite.so") != NULL;
		CHECK(proc->nobjs >= 2 && have_lib, "objects: %d, libsite.so %s", proc->nobjs,
		      have_lib ? "found" : "missing");
		cat = fp_catalog__new(proc->objs, proc->nobjs, NULL);
		if ((r = region(cat, "export_fmt"))) {
			for (i = 0; i < r->nsites; i++)
				objs_seen[strstr(cat->objs[r->sites[i].obj]->path, "libsite") ? 1
											   : 0] = 1;
			CHECK(objs_seen[0] && objs_seen[1],
			      "export_fmt should have sites in the executable and the library");
		}
		CHECK(region(cat, "lib_region") != NULL, "lib_region");
		fp_catalog__free(cat);
		fp_proc__free(proc);
	} else {
		fprintf(stderr, "  %s\n", err.msg);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);

	ret = fp_proc__read(pid, &proc, fresh(&err));
	CHECK_INT(ret, -ESRCH);	/* the one error record: its code and message together */
	CHECK_INT(err.code, ESRCH);
	CHECK(strstr(err.msg, "no such process") != NULL, "err: %s", err.msg);
}

/* Region definitions: the parser's errors name file and line; a definition becomes a
 * region of CPython's probes with begin/end roles and no nesting unless it says so. */
static void test_regdefs(void)
{
	static const char good[] = "# c\n\nregion a.gc begin python:gc__start "
				   "end python:gc__done features G,H\n"
				   "region imp begin python:import__find__load__start "
				   "end python:import__find__load__done nests # trailing\n";
	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "region x begin a:b\n", "f:1: expected" },
		{ "\nregion x begin a:b end c\n", "f:2: a probe is" },
		{ "region x begin a:b end a:c bogus\n", "f:1: unknown word" },
		{ "region x begin a:b end a:c features\n", "f:1: a feature list is missing" },
		{ "region x/y begin a:b end a:c\n", "f:1: a region name" },
		{ "region x begin a:b end a:c nests nests\n", "f:1: 'nests' given twice" },
		{ "region x begin a:b begin a:b end a:c\n", "f:1: begin or end given twice" },
		{ "region x begin a:b end a:c\x00\n", "f:1: a NUL byte" },
	};
	struct fp_regdefs defs = { 0 };
	struct fp_object *obj = NULL;
	struct fp_catalog *cat;
	struct fp_err err = { 0 };
	size_t i;
	int r;

	CHECK_INT(fp_regdefs__parse(&defs, good, sizeof(good) - 1, "f", fresh(&err)), 0);
	CHECK_INT(defs.ndefs, 2);
	if (defs.ndefs == 2) {
		CHECK_STR(defs.defs[0].name, "a.gc");
		CHECK_INT(defs.defs[0].nfeatures, 2);
		CHECK_INT(defs.defs[0].nests, 0);
		CHECK_INT(defs.defs[1].nests, 1);
		CHECK_STR(defs.defs[1].origin, "f:4");
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t len = strlen(bad[i].text);

		if (strstr(bad[i].want, "NUL"))
			len = strlen(bad[i].text) + 2;
		CHECK(fp_regdefs__parse(&defs, bad[i].text, len, "f", fresh(&err)) < 0 &&
			      strstr(err.msg, bad[i].want),
		      "bad %zu: '%s' (want '%s')", i, err.msg, bad[i].want);
		CHECK_INT(defs.ndefs, 2);	/* all or nothing */
	}
	CHECK_INT(fp_regdefs__parse(&defs, good, sizeof(good) - 1, "g", fresh(&err)), 0);
	CHECK_INT(defs.ndefs, 2);	/* the same definitions again: kept once */
	CHECK(fp_regdefs__parse(&defs, "region a.gc begin x:y end x:z\n", 30, "g", fresh(&err)) <
		      0 &&
		  strstr(err.msg, "already defined at f:3"),
	      "conflict: %s", err.msg);
	if (fp_object__read("/usr/bin/python3.11", "/usr/bin/python3.11", &obj, fresh(&err))) {
		printf("  (no /usr/bin/python3.11 with probes: catalog part not run: %s)\n",
		       err.msg);
		fp_regdefs__clear(&defs);
		return;
	}
	cat = fp_catalog__new(&obj, 1, &defs);
	CHECK(cat && cat->nregions == 2, "python regions: %d", cat ? cat->nregions : -1);
	r = cat ? fp_catalog__region(cat, "a.gc") : -1;
	CHECK(r >= 0, "region a.gc");
	if (r >= 0) {
		const struct fp_region *g = &cat->regions[r];

		CHECK(g->nbegin == 1 && g->nend == 1 && !g->nests, "a.gc: %d begin %d end",
		      g->nbegin, g->nend);
		CHECK_STR(g->origin, "f:3");
		CHECK(fp_region__has_feature(g, "H"), "a.gc has feature H");
	}
	CHECK(fp_regdef__missing(&obj, 1, &defs.defs[0]) == NULL, "all probes present");
	fp_catalog__free(cat);
	fp_object__free(obj);
	fp_regdefs__clear(&defs);
}

/* The one error channel (common/err.h): the first failure stays, its code and message
 * together; a NULL record only returns; each code maps to one protocol status. */
static void test_err(void)
{
	struct fp_err e = { 0 };
	static const struct {
		int code;
		enum fp_status st;
	} map[] = {
		{ 0, FP_OK }, { EINVAL, FP_E_BAD_REQUEST }, { EBADRQC, FP_E_UNKNOWN_VERB },
		{ EMSGSIZE, FP_E_TOO_LONG }, { ESRCH, FP_E_NO_SUCH_PROCESS },
		{ EPERM, FP_E_PERMISSION_DENIED }, { EACCES, FP_E_PERMISSION_DENIED },
		{ ENODATA, FP_E_NO_PROBES }, { ENOENT, FP_E_UNKNOWN_NAME },
		{ ENOTCONN, FP_E_NOT_ATTACHED }, { EBUSY, FP_E_BUSY }, { EUSERS, FP_E_BUSY },
		{ EOPNOTSUPP, FP_E_UNSUPPORTED }, { ENOMEM, FP_E_INTERNAL }, { EIO, FP_E_INTERNAL },
	};
	size_t i;

	CHECK_INT(fp_fail(NULL, ESRCH, "ignored"), -ESRCH);
	CHECK_INT(fp_fail(&e, ENODATA, "pid %d: no probes", 7), -ENODATA);
	CHECK_INT(fp_fail(&e, EIO, "a caller's vaguer failure"), -EIO);
	CHECK_INT(e.code, ENODATA);
	CHECK(!strcmp(e.msg, "pid 7: no probes"), "first failure kept: %s", e.msg);
	fp_err_clear(&e);
	CHECK(!e.code && !e.msg[0], "cleared");
	CHECK_INT(fp_fail(&e, EBUSY, "then %s", "another"), -EBUSY);
	CHECK(e.code == EBUSY && !strcmp(e.msg, "then another"), "after a clear: %s", e.msg);
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		CHECK_INT(fp_status_of(map[i].code), map[i].st);
		CHECK_INT(fp_status_of(-map[i].code), map[i].st);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_notes BUILD_DIR\n");
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s", argv[1]);
	test_c_target("site_c");
	test_c_target("site_nopie");
	test_cxx_target();
	test_corrupt();
	test_shlib_process();
	test_regdefs();
	test_err();
	TEST_DONE("test_notes");
}
