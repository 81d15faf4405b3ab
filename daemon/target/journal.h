/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The attach journal: what featprofd is about to attach or detach, kept in a file until
 * it is done, so that a featprofd killed in the middle leaves no breakpoint behind for
 * longer than its next start (daemon/target/journal.c).
 */
#ifndef FP_JOURNAL_H
#define FP_JOURNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"

struct fp_target;

/*
 * Opens the journal file in dir (named after the socket, so that daemons on different
 * sockets keep their own), creating dir if needed; a journal left by a previous run is
 * repaired first. Returns the number of sites repaired, or -errno (e filled: the
 * daemon then runs without a journal).
 */
int fp_journal__open(const char *dir, const char *socket_path, struct fp_err *e);
void fp_journal__close(void);
/* Sites repaired at open (a previous run's journal); -1 when there is no journal. */
int fp_journal__repaired(void);
/* Every site of t that a change of its attachments may touch, written before it; end
 * empties the journal once the change is complete. No-ops without a journal. */
void fp_journal__begin(const struct fp_target *t);
void fp_journal__end(void);
/* Shutdown: the changes from here on accumulate in the journal (their closes finish in
 * the pool, daemon/util/closer.h, after their ends) until fp_journal__let_go() empties it. */
void fp_journal__hold(void);
void fp_journal__let_go(void);

/*
 * Registers and unregisters a uprobe (a perf uprobe event, no BPF program) at each
 * offset of the file at path (refs: semaphore offsets, or 0): the kernel's unregister
 * then removes the breakpoint from every process where no other consumer wants it.
 * dev/ino (0: not checked) must be the file's. Returns the number of sites cycled or
 * -errno.
 */
int fp_repair_sites(const char *path, uint64_t dev, uint64_t ino, const uint64_t *offs,
		    const uint64_t *refs, int n);

/*
 * featprof repair PID: probe sites of the process that hold a breakpoint (int3 where the
 * file has none) get a uprobe registered and unregistered again (fp_repair_sites): the
 * kernel then removes each one no live consumer wants; sites featprofd or another tool
 * has attached keep theirs. check: only count. *before: the sites with a breakpoint,
 * *after: those left. 0, -ESRCH (no such process), or -errno (e filled).
 */
int fp_journal__repair_process(pid_t pid, bool check, int *before, int *after, struct fp_err *e);

#endif
