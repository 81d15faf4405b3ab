/* SPDX-License-Identifier: GPL-2.0 */
/* The process watcher (bpf/watch.bpf.c): kernel events about profiled processes. */
#ifndef FP_WATCH_H
#define FP_WATCH_H

#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"

struct fp_watch;

/* One event: kind FP_WATCH_*, the process, other (a group, ...), and when the kernel
 * saw it (ts: CLOCK_MONOTONIC ns, daemon/util/clock.h's clock). */
typedef void (*fp_watch_fn)(void *ctx, uint32_t kind, uint32_t tgid, uint32_t other,
			    uint64_t ts);

/* cb gets each event. NULL with e filled when the kernel cannot run it (the daemon then
 * works without following mappings). */
struct fp_watch *fp_watch__open(fp_watch_fn cb, void *ctx, struct fp_err *e);
void fp_watch__free(struct fp_watch *w);
/* The fd to poll for events; consume them with fp_watch__consume. */
int fp_watch__fd(const struct fp_watch *w);
int fp_watch__consume(struct fp_watch *w);
/* Reports exec of process tgid, and its forks when group > 0 (its executable group);
 * group < 0 stops. 0 or -errno. */
int fp_watch__process(struct fp_watch *w, pid_t tgid, int group);
/* Reports process pid's dlopen/dlclose (a uprobe on its ld.so's _dl_debug_state):
 * the uprobe's fd to close when done (daemon/kern/uprobe.h), or -errno with e filled (a
 * static executable). */
int fp_watch__dlopen(struct fp_watch *w, pid_t pid, struct fp_err *e);
/* The fd of the watcher's map name ("watched", "exes"), -1 if none. */
int fp_watch__map_fd(struct fp_watch *w, const char *name);
/* Events lost to a full ring since start. */
uint64_t fp_watch__lost(const struct fp_watch *w);

#endif
