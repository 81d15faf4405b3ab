/* SPDX-License-Identifier: GPL-2.0 */
/*
 * In-process timing of one target (daemon/inproc/inproc.c): the runtime of its objects built
 * with FEATPROF_INPROCESS (usdt/featprof_inprocess.h), the gates of its regions, its
 * figures read out of its memory.
 */
#ifndef FP_INPROC_H
#define FP_INPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"

struct fp_catalog;
struct fp_calibration;
struct fp_snapshot;
struct fp_inproc;

/* What a target's objects offer (cat: its catalog; pid 0: a file target, which has no
 * memory to read). NULL with errno ENOENT when no object carries the runtime. */
struct fp_inproc *fp_inproc__new(pid_t pid, const struct fp_catalog *cat);
/* The catalog grew (dlopen): its new objects' runtimes and gates join. 0 or -errno. */
int fp_inproc__refresh(struct fp_inproc *ip, const struct fp_catalog *cat);
/* The process mapped or unmapped objects: a control block or descriptor that moved (a
 * library unloaded, or loaded again elsewhere) is found again, told the primary and its
 * region's generation before it acts. 0 or -errno (e filled). */
int fp_inproc__remap(struct fp_inproc *ip, struct fp_err *e);
/* What the target gives: the runtime's calibration (for the zero taken when the first
 * gate rises: figures an earlier featprofd left in the process are not this one's), and
 * its BPF object for off-CPU time per region: the thread-site program, the maps of
 * threads and of off-CPU time, the flag that turns the scheduler programs' part on
 * (bpf/featprof.bpf.c ip_switch). Without these, no zero and no off-CPU time. */
void fp_inproc__use(struct fp_inproc *ip, const struct fp_calibration *cal, int prog_fd,
		    bool multi, int threads_fd, int off_fd, volatile uint32_t *active);
/* Takes the process's arena now if it has made one (kept from then on, readable after
 * the process exits). 0, or -errno (-EAGAIN: not made yet). */
int fp_inproc__take_arena(struct fp_inproc *ip);
/* Lowers every gate it raised. Accepts NULL. */
void fp_inproc__free(struct fp_inproc *ip);
/* The catalog region of the process-wide id the runtime gave (a frame's in a thread
 * block: sample's in-process source), by the name the arena keeps; -1: none (yet). */
int fp_inproc__region_of_id(struct fp_inproc *ip, uint64_t id);
/* The process exited: its gates' uprobes are closed by the pool (daemon/util/closer.h). */
void fp_inproc__gone(struct fp_inproc *ip);
/* Can region r be measured in-process: every object holding one of its sites has its
 * gate? */
bool fp_inproc__can(const struct fp_inproc *ip, int r);
/* Raises (on) or lowers region r's gates: its sites then time themselves in the process,
 * or stop. 0 or -errno, e filled; on error nothing changed. */
int fp_inproc__set(struct fp_inproc *ip, int r, bool on, struct fp_err *e);
/* Whether every process of the file with catalog cat (its objects as in the file) can
 * time region r itself, as fp_inproc__can says of one process. */
bool fp_inproc__file_can(const struct fp_catalog *cat, int r);
/* A run's process (featprof run): the figures already in its arena are the run's (its
 * arena began in the run: no zero is taken at the first gate), and its forked children,
 * which featprofd attaches too, wait at a quick exit for their arenas to be taken
 * (FP_IP_HANDOVER_FORKS). */
void fp_inproc__run_member(struct fp_inproc *ip);
/* Whether featprofd has the process's arena (false for NULL). */
bool fp_inproc__had_arena(const struct fp_inproc *ip);
/* Whether featprofd's in-process timing holds a breakpoint at site of object obj (of the
 * catalog): a raised gate, or its hook on the runtime's thread site. */
bool fp_inproc__owns(const struct fp_inproc *ip, int obj, int site);
/* Adds the figures of the regions measured in-process since the last reset to s (its
 * regions, paths and anomalies, by the catalog's region indices; fsets are not derived),
 * their cost from cal (the runtime's own, daemon/inproc/ip_calibrate.c). Nothing while the
 * process has made no arena yet. 0 or -errno. */
int fp_inproc__read(struct fp_inproc *ip, const struct fp_calibration *cal,
		    struct fp_snapshot *s);
/* The figures as they are now become the zero of later reads. 0 or -errno. */
int fp_inproc__reset(struct fp_inproc *ip, const struct fp_calibration *cal, int nregions);
/* The gate sites of the regions it measures (file offset and semaphore), for the attach
 * journal: calls fn for each. */
void fp_inproc__each_gate(const struct fp_inproc *ip, int obj,
			  void (*fn)(void *ctx, unsigned long long off, unsigned long long ref),
			  void *ctx);

#endif
