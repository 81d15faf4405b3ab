/* SPDX-License-Identifier: GPL-2.0 */
/* The stacks module's private header (daemon/stacks/): what its files call of each other. */
#ifndef FP_STACKS_IMPL_H
#define FP_STACKS_IMPL_H

#include <stdint.h>

#include "stacks.h"

/*
 * sample --stacks: the functions inlined at an address of an object, from its DWARF
 * (daemon/stacks/inline.c), so that a frame shows the calls the compiler folded
 * into it, as perf report and gdb do.
 */
/* the deepest chain of inlined calls kept at one address */
#define FP_INLINE_MAX 8

struct fp_inlines;

/* The DWARF of the ELF file at path, else of debug_file (a separate debug file; may be
 * NULL): NULL when neither has .debug_info (or memory ran out). */
struct fp_inlines *fp_inlines__open(const char *path, const char *debug_file);
void fp_inlines__free(struct fp_inlines *in);
/*
 * The functions inlined at link-time address addr, innermost first, at most max of them:
 * their names (valid while in lives), how many. 0 where the compiler inlined nothing
 * there or the DWARF does not say.
 */
int fp_inlines__at(struct fp_inlines *in, uint64_t addr, const char **names, int max);

#endif
