/* SPDX-License-Identifier: GPL-2.0 */
/* What sampling reads from the target's files (daemon/target/sample_elf.c). */
#ifndef FP_SAMPLE_ELF_H
#define FP_SAMPLE_ELF_H

#include <stdint.h>
#include <sys/types.h>

#include "err.h"

struct fp_target;

/* The executable of pid keeps the sampler's stack (its TLS note, this ABI); its gate's
 * site and semaphore offsets (0: not gated). 0 or -errno (e filled; -ENOENT: it keeps
 * none, no TLS note). */
int fp_sample_tls_abi(pid_t pid, uint64_t *gate_off, uint64_t *sem_off, struct fp_err *e);
/* featprof_tls's offset from the thread pointer in the executable of pid. 0 or -errno. */
int fp_sample_tls_offset(pid_t pid, int64_t *off, struct fp_err *e);
/* Every library of t with a stack binds it to the executable's. 0 or -EOPNOTSUPP. */
int fp_sample_one_stack(const struct fp_target *t, struct fp_err *e);
/* t's site addresses into its sampling object's sample_sites. */
void fp_sample_probe_sites(struct fp_target *t);

#endif
