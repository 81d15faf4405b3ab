/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sampling (daemon/sample/): a target's sampling sessions and their figures. Its state is
 * the target's extension (fp_target__set_ext), which the target lets go at its release
 * and end through sampling's own hooks.
 */
#ifndef FP_SAMPLE_H
#define FP_SAMPLE_H

#include <stdbool.h>

#include "common/err.h"
#include "targets/target.h"

struct json_object;

/* Starts sampling t's threads at hz: a cpu-clock event per thread, or (remote) the
 * sampler thread's ticks; stacks: each sample's user call stack too. The open regions
 * come from the program's TLS stack (FEATPROF_SAMPLING) or, where it keeps none, from
 * the regions traced in the kernel. 0 or -errno, e filled. */
int fp_sample_start(struct fp_target *t, int hz, int remote, int stacks, struct fp_err *e);
/* Where the session reads the open regions, in words. */
const char *fp_sample_source(const struct fp_target *t);
/* The session's call stacks name a compiler's clones apart from their function (on), or
 * fold them into it (the default); called after fp_sample_start. */
void fp_sample_split_clones(struct fp_target *t, bool on);
/* Names the ids seen so far while the target can still be read (called periodically). */
void fp_sample_name(struct fp_target *t);
/* Zeroes the sampled figures (reset). 0 or -errno. */
int fp_sample_reset(struct fp_target *t);
/* Stops it; the figures so far stay (sample_impl.h's last). */
void fp_sample_stop(struct fp_target *t);
/* Whether a session runs now. */
bool fp_sample_active(const struct fp_target *t);
/* The sampled figures (a new reference), or NULL when t never sampled. */
struct json_object *fp_sample_report(struct fp_target *t);
/* The same without its call stacks (sample --stacks: stacks, each figure's functions),
 * for the pushes of a subscription, which come every interval: a live session's stacks
 * are then not named or tallied at all. */
struct json_object *fp_sample_report_brief(struct fp_target *t);
/* Puts the report's figures beside the traced ones in a stats reply. */
void fp_sample_merge(struct json_object *stats, struct json_object *report);
/* After stats of several processes were summed (stats --exe): the samples add, so the
 * shares, sampled times and standard errors are figured again from the sums. */
void fp_sample_refigure(struct json_object *stats);

#endif
