/* SPDX-License-Identifier: GPL-2.0 */
#ifndef FP_CLOSER_H
#define FP_CLOSER_H

#include <stdbool.h>

struct bpf_link;

/*
 * Descriptors whose last close waits on the kernel: a uprobe's unregistration (a perf
 * event's, a uprobe_multi link's) waits for RCU grace periods, ~0.1 s each here. Closed
 * one after another, a thousand targets' take minutes; closed at once by a pool of
 * threads, they share grace periods (daemon/util/closer.c).
 *
 * fp_close_later(fd): fd is closed by the pool, at once when the pool cannot take it.
 * Only for descriptors whose close nothing waits on: a gone process's, or at shutdown.
 * fp_link_destroy_later(l): the same for a libbpf link (its descriptor duplicated into
 * the pool first, so libbpf's own close is not the last). fp_closer_wait(): returns when
 * every descriptor given so far is closed. fp_closer_deferring(): whether closes are
 * deferred wherever nothing depends on their timing (set at shutdown).
 */
void fp_close_later(int fd);
void fp_link_destroy_later(struct bpf_link *l);
void fp_closer_wait(void);
void fp_closer_defer_all(void);
bool fp_closer_deferring(void);

#endif
