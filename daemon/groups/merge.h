/* SPDX-License-Identifier: GPL-2.0 */
/* Summing one process's figures (a stats reply) into another's: daemon/groups/merge.c. */
#ifndef FP_MERGE_H
#define FP_MERGE_H

struct json_object;

/*
 * Sums src's figures into dst: numbers add (min_* take the least, max_* the largest,
 * elapsed and the sampling rate's keys the largest), objects recurse, arrays of named
 * objects (regions, features) merge by name. Keys that describe one process (pid, comm)
 * and arrays without names (paths) are not summed.
 */
void fp_merge_figures(struct json_object *dst, struct json_object *src);

#endif
