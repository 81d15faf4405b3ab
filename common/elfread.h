/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ELF files read through libelf (common/elfread.c): the one place that opens one and
 * finds its sections, symbols and segments. elf.c reads an object's notes with it,
 * symbols.c its functions, featprofd the TLS stack's symbol and the dynamic linker's hook.
 */
#ifndef FP_ELFREAD_H
#define FP_ELFREAD_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* libelf's handle of the file open at fd (mapped), or of the image in memory: NULL where
 * it is not an ELF file. elf_end() frees it. */
Elf *fp_elf_begin(int fd);
Elf *fp_elf_memory(const void *image, size_t size);
/* A 64-bit little-endian ELF file whose section and program headers lie inside it: 0, or
 * -ENOEXEC or -EINVAL (e filled, naming path). */
int fp_elf_check(Elf *elf, const char *path, struct fp_err *e);
/* The first section named name, or of type type; NULL: none. */
Elf_Scn *fp_elf_section(Elf *elf, const char *name);
Elf_Scn *fp_elf_section_of_type(Elf *elf, Elf64_Word type);
/* A defined symbol named name of type type (STT_*): in .dynsym and .symtab, or (dynamic)
 * only one the dynamic linker binds (.dynsym, default visibility). 1 and *out, else 0. */
int fp_elf_symbol(Elf *elf, const char *name, int type, bool dynamic, GElf_Sym *out);
/* The file offset of link-time address addr inside a loadable segment (need_x: an
 * executable one): 0 and *off, or -ENOENT. */
int fp_elf_offset(Elf *elf, uint64_t addr, bool need_x, uint64_t *off);

#endif
