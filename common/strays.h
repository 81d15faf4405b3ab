/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Breakpoints at featprof sites. A site whose first code byte in a process's memory is
 * int3 (0xcc) while the file holds another byte carries a uprobe there: one attached
 * now (by featprofd or another tool), or one that nobody owns any more, left when a
 * process that was registering or unregistering uprobes was SIGKILLed (the kernel's
 * unregister gives up for a task with a fatal signal pending). Such a target traps into
 * the kernel at every hit with nothing measuring it. docs/TRACING.md, "Breakpoints left
 * behind".
 */
#ifndef FP_STRAYS_H
#define FP_STRAYS_H

#include <stdint.h>

#include "notes.h"

struct fp_trap {
	int obj;		/* index into proc->objs */
	int site;		/* index into that object's sites */
	uint64_t off;		/* file offset of the byte that reads 0xcc */
};

/*
 * The probe sites of proc (every stapsdt note: both attach points of a featprof site,
 * the note's nop1 and the shielded nop5)
 * whose byte reads 0xcc in memory but not in the file: up to max of them in out. Returns
 * how many there are (may exceed max), or -errno (memory not readable: no ptrace right).
 */
int fp_traps(const struct fp_proc *proc, struct fp_trap *out, int max);

#endif
