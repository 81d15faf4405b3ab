/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sample --stacks --unwind dwarf: the copies of each sample's user registers and stack
 * top (bpf/sample.bpf.c stack_copies) unwound by the objects' call frame information
 * (daemon/target/sample_dwarf.c, elfutils' libdwfl).
 */
#ifndef FP_SAMPLE_DWARF_H
#define FP_SAMPLE_DWARF_H

#include <stdint.h>
#include <sys/types.h>

#include "err.h"

struct fp_dwarf;
struct fp_sample_key;

/* One unwound sample: its key (the open regions) and return addresses, innermost
 * first (ips[0] the interrupted instruction); truncated: the unwinding stopped before
 * the thread's first frame (the copy ended, no CFI for an address). */
typedef void (*fp_dwarf_fn)(void *arg, const struct fp_sample_key *key, const uint64_t *ips,
			    int n, int truncated);

/* An unwinder of process pid's copies from the ring buffer map at ring_fd. NULL (e
 * filled) when libdwfl cannot report the process. */
struct fp_dwarf *fp_dwarf__new(pid_t pid, int ring_fd, struct fp_err *e);
/* Unwinds the copies waiting, calling fn for each (NULL: drops them). Their count, or
 * -errno. */
int fp_dwarf__drain(struct fp_dwarf *d, fp_dwarf_fn fn, void *arg);
/* Its work so far: copies unwound, those whose unwinding stopped early, the CPU time
 * spent (ns), and the frames found. */
void fp_dwarf__counts(const struct fp_dwarf *d, uint64_t *copies, uint64_t *truncated,
		      uint64_t *cpu_ns, uint64_t *frames);
void fp_dwarf__free(struct fp_dwarf *d);

#endif
