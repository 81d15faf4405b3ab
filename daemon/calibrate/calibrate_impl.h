/* SPDX-License-Identifier: GPL-2.0 */
/* The calibration's private header (daemon/calibrate/): calibrate_point.c for calibrate.c. */
#ifndef FP_CALIBRATE_IMPL_H
#define FP_CALIBRATE_IMPL_H

#include "calibrate.h"

/* Is [uprobes-trampoline] mapped in the daemon (the kernel rewrote a hit nop5 site into a
 * call)? Does a child forked after that crash at the site (1, or when it could not be
 * run)? Which point new targets get (out->optimized, out->why) from the points measured
 * and --site. */
int fp_calibrate_has_trampoline(void);
int fp_calibrate_fork_loses_trampoline(void);
void fp_calibrate_choose_point(struct fp_daemon_cal *out, enum fp_site_choice site);

#endif
