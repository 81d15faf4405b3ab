/* SPDX-License-Identifier: GPL-2.0 */
#ifndef FEATPROF_POOL_H
#define FEATPROF_POOL_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"

struct fp_target;
struct fp_daemon_cal;

/*
 * The BPF objects targets share (daemon/target/pool.c): a process's target takes a slot and a
 * range of region indices in an object that up to FP_POOL_SLOTS process targets use; an
 * executable group's file target has an object of its own. Sets t->skel, t->slot,
 * t->rbase, t->paths_fd, t->nodes_fd, t->ts_map, t->multi for a target of cap regions.
 * 0 or -errno (e filled, who names the target).
 */
int fp_pool__join(struct fp_target *t, int cap, const char *who, struct fp_err *e);
/* The target's slot and range emptied and given back; the last target of an object
 * destroys it. t->skel is NULL after. */
void fp_pool__leave(struct fp_target *t);

/* The daemon's calibration: what every object charges per event (bpf/featprof.bpf.c
 * "Cost"), now and whenever it changes (fp_pool__costs_changed). */
void fp_pool__use_calibration(const struct fp_daemon_cal *dc);
void fp_pool__costs_changed(void);
/* The watcher's maps of processes and of held threads and its ring, reused by every
 * object made from now on (members, held, watch_events); -1: none. */
void fp_pool__use_members_maps(int members, int held);
void fp_pool__use_watch_ring(int fd);
/* How many objects are loaded now, and how many targets they hold (status). */
void fp_pool__counts(int *objects, int *targets);

#endif
