/* SPDX-License-Identifier: GPL-2.0 */
/* Between daemon/target/target.c and daemon/target/target_links.c only: a target's attachments. */
#ifndef FP_TARGET_LINKS_H
#define FP_TARGET_LINKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct fp_target;

/* The target's link set, for its capacity of regions (trampolines: one per region,
 * point and end where the kernel has no attach cookie). 0 or -ENOMEM. */
int fp_links__new(struct fp_target *t, bool trampolines);
/* Releases and frees it. */
void fp_links__free(struct fp_target *t);
/* Attaches (on) or detaches the sites of the regions with sel[r] set, journaled; force:
 * rebuild the link set even when no region changes (a region gained sites). 0 or -errno
 * (e filled); on error nothing changed. */
int fp_links__set(struct fp_target *t, const uint8_t *sel, int on, int force, struct fp_err *e);
/* Closes every link and trampoline, journaled; attached_sites 0. */
void fp_links__release(struct fp_target *t);

#endif
