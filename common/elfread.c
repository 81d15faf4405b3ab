// SPDX-License-Identifier: GPL-2.0
/* ELF files through libelf, opened and searched in one place: common/elfread.h. */
#include <errno.h>
#include <string.h>

#include "elfread.h"

static Elf *checked_kind(Elf *elf)
{
	if (elf && elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		return NULL;
	}
	return elf;
}

Elf *fp_elf_begin(int fd)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	return checked_kind(elf_begin(fd, ELF_C_READ_MMAP, NULL));
}

Elf *fp_elf_memory(const void *image, size_t size)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	return checked_kind(elf_memory((char *)image, size));
}

int fp_elf_check(Elf *elf, const char *path, struct fp_err *e)
{
	size_t size;
	const char *image = elf_rawfile(elf, &size);
	GElf_Ehdr eh;

	if (!gelf_getehdr(elf, &eh) || gelf_getclass(elf) != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return fp_fail(e, ENOEXEC, "%s: not a 64-bit little-endian ELF file", path);
	if (!image || eh.e_shoff > size ||
	    (uint64_t)eh.e_shnum * eh.e_shentsize > size - eh.e_shoff || eh.e_phoff > size ||
	    (uint64_t)eh.e_phnum * eh.e_phentsize > size - eh.e_phoff)
		return fp_fail(e, EINVAL, "%s: truncated ELF file (headers past its end)", path);
	return 0;
}

Elf_Scn *fp_elf_section(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

Elf_Scn *fp_elf_section_of_type(Elf *elf, Elf64_Word type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
			return scn;
	return NULL;
}

int fp_elf_symbol(Elf *elf, const char *name, int type, bool dynamic, GElf_Sym *out)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t k, n;

		if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize ||
		    (sh.sh_type != SHT_DYNSYM && (dynamic || sh.sh_type != SHT_SYMTAB)))
			continue;
		d = elf_getdata(scn, NULL);
		n = sh.sh_size / sh.sh_entsize;
		for (k = 0; d && k < n; k++) {
			const char *nm;

			if (!gelf_getsym(d, (int)k, out) || GELF_ST_TYPE(out->st_info) != type ||
			    out->st_shndx == SHN_UNDEF ||
			    (dynamic && GELF_ST_VISIBILITY(out->st_other) != STV_DEFAULT))
				continue;
			nm = elf_strptr(elf, sh.sh_link, out->st_name);
			if (nm && !strcmp(nm, name))
				return 1;
		}
	}
	return 0;
}

int fp_elf_offset(Elf *elf, uint64_t addr, bool need_x, uint64_t *off)
{
	size_t i, n;

	if (elf_getphdrnum(elf, &n))
		return -ENOENT;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    (need_x && !(ph.p_flags & PF_X)))
			continue;
		if (addr >= ph.p_vaddr && addr - ph.p_vaddr < ph.p_filesz) {
			*off = addr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOENT;
}
