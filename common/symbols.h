/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The functions of an ELF file, for function regions (docs/REGIONS.md "Functions") and
 * for naming sampled frames: its .symtab, else a separate debug file's (by build id under
 * /usr/lib/debug/.build-id/, by .gnu_debuglink, or from a debuginfod server where
 * DEBUGINFOD_URLS names one), else the .symtab in its .gnu_debugdata (MiniDebugInfo) with
 * its .dynsym, else its .dynsym (what a stripped Debian binary keeps: exported functions
 * only). Each function's entry as the uprobe file offset.
 */
#ifndef FP_SYMBOLS_H
#define FP_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

enum fp_sym_source {
	FP_SYM_NONE,		/* no symbol table at all */
	FP_SYM_SYMTAB,		/* the file's own .symtab */
	FP_SYM_BUILD_ID,	/* .symtab of a separate debug file (debug_file) found by
				 * the build id under /usr/lib/debug/.build-id/ */
	FP_SYM_DEBUGLINK,	/* the same, found by .gnu_debuglink (its CRC checked) */
	FP_SYM_DEBUGINFOD,	/* the same, from a debuginfod server (DEBUGINFOD_URLS;
				 * debug_file is libdebuginfod's cached copy) */
	FP_SYM_DYNSYM,		/* .dynsym only: exported functions */
	FP_SYM_MINIDEBUG,	/* .gnu_debugdata: an xz-compressed symbol table beside
				 * .dynsym (MiniDebugInfo, as Fedora ships) */
	FP_SYM_PERF_MAP,	/* a JIT's /tmp/perf-PID.map (sample --stacks' [jit] object:
				 * daemon/stacks/jit.c) */
};

struct fp_func {
	char *name;
	uint64_t addr;		/* link-time address */
	uint64_t size;		/* 0: the symbol has none (cannot be measured) */
	uint64_t off;		/* uprobe file offset of the entry; 0: not in code */
	int global;		/* STB_GLOBAL or STB_WEAK */
	int stepped;		/* its first instruction is not a push: the kernel executes it
				 * out of line, single-stepped (a uprobe there costs several
				 * times more: docs/REGIONS.md "Functions") */
};

struct fp_symbols {
	struct fp_func *f;	/* sorted by name, then address */
	int n;
	int source;		/* enum fp_sym_source */
	char *debug_file;	/* the separate debug file read, else NULL */
	char *soname;		/* DT_SONAME (liblzma.so.5 of liblzma.so.5.4.1), else NULL */
	char build_id[41];	/* NT_GNU_BUILD_ID in hex (up to 20 bytes), "" when none */
	int *by_off;		/* indices into f by entry offset, those in code (built on
				 * the first fp_symbols__at) */
	int nby_off;
	int go;			/* a Go binary: return probes would corrupt its stacks */
	int unwinds;		/* C++ exceptions may unwind through its functions (it uses
				 * __gxx_personality_v0, __cxa_throw or __cxa_rethrow): an
				 * exception that meets the kernel's return trampoline ends in
				 * std::terminate */
};

/*
 * Reads the functions of the ELF file open at fd, named path in the target; root is the
 * prefix under which the target's files are seen ("/proc/PID/root", or "" for the
 * host), for debug files. 0, or -errno with one line in err.
 */
int fp_symbols__read(int fd, const char *path, const char *root, struct fp_symbols **out,
		     struct fp_err *e);
/* The same from an ELF image in memory (the fuzzer). */
int fp_symbols__read_mem(const void *image, size_t size, const char *path, const char *root,
			 struct fp_symbols **out, struct fp_err *e);
void fp_symbols__free(struct fp_symbols *s);
/* The function whose code holds file offset off: the one whose [off, off + size)
 * contains it, or, among symbols without a size (.dynsym of some assembly), the nearest
 * before it; NULL when none does (sample --stacks names frames by it). */
const struct fp_func *fp_symbols__at(struct fp_symbols *s, uint64_t off);
const char *fp_symbols__source_name(int source);
/* Why f cannot be measured, or NULL when it can. */
const char *fp_func__unmeasurable(const struct fp_symbols *s, const struct fp_func *f);
/* Why s's functions are measured by their calls alone (a function region with an entry
 * probe, no return probe), or NULL when they are timed. */
const char *fp_symbols__calls_only(const struct fp_symbols *s);

#endif
