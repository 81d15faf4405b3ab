/* SPDX-License-Identifier: GPL-2.0 */
/* The sampler thread of featprof sample --remote: daemon/target/sampler.c. */
#ifndef FP_SAMPLER_H
#define FP_SAMPLER_H

#include <stdint.h>
#include <sys/types.h>

struct fp_sampler_entry;

/* The sampler thread's tid (started on first use), 0 when it cannot be started. */
pid_t fp_sampler_tid(void);
/* Whether the sampler thread runs SCHED_FIFO (needs CAP_SYS_NICE). */
int fp_sampler_realtime(void);
/* Runs the task iterator of link_fd (dup'ed) at hz on average; its program marks in
 * cpus[4] the CPUs where it found a sampled thread running. NULL and errno on failure. */
struct fp_sampler_entry *fp_sampler_add(int link_fd, volatile uint64_t *cpus, int hz);
/* Ticks taken so far, and ticks passed over because the sampler fell behind. */
void fp_sampler_counts(struct fp_sampler_entry *e, uint64_t *ticks, uint64_t *missed);
/* No tick of e runs after this returns; e is freed. NULL: nothing. */
void fp_sampler_remove(struct fp_sampler_entry *e);

#endif
