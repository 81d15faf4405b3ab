/* SPDX-License-Identifier: GPL-2.0 */
/* The calibration's private header (daemon/calibrate/): calibrate_point.c for calibrate.c. */
#ifndef FP_CALIBRATE_IMPL_H
#define FP_CALIBRATE_IMPL_H

#include <stdint.h>

#include "calibrate.h"
#include "common/err.h"
#include "util/stats.h"

/* Is [uprobes-trampoline] mapped in the daemon (the kernel rewrote a hit nop5 site into a
 * call)? Does a child forked after that crash at the site (1, or when it could not be
 * run)? Which point new targets get (out->optimized, out->why) from the points measured
 * and --site. */
int fp_calibrate_has_trampoline(void);
int fp_calibrate_fork_loses_trampoline(void);
void fp_calibrate_choose_point(struct fp_daemon_cal *out, enum fp_site_choice site);

/* --- calibrate.c: a calibration, its rounds and figures, for track.c --- */
#define FP_CAL_HISTORY_MAX 64	/* round values kept per point, at most */
struct cal_run;
struct fp_target;

/* Rounds measured on the calling thread of t (the daemon's own target). NULL with errno
 * (e filled). */
struct cal_run *fp_calibrate_run_new(struct fp_target *t, struct fp_err *e);
void fp_calibrate_run_free(struct cal_run *c);
/* One round of calibration point b (its sites enabled: fp_calibrate_regions()): the round's
 * value of each part into v[FP_C_N]. 0 or -errno. */
int fp_calibrate_round(struct cal_run *c, int b, double *v);
/* The regions of the daemon's own catalog a calibration enables (its two first). */
const uint8_t *fp_calibrate_regions(void);
/* Rounds of point b in a calibration, and their values at attach point at in the last one. */
int fp_calibrate_plan_rounds(int b);
double (*fp_calibrate_last_rounds(int at, int b))[FP_C_N];
/* Point b's figures of attach point at from its n round values v[n][FP_C_N]: medians and
 * spreads, the disturbed excess, the gap seen. figure0: those status shows, from point 0's
 * rounds and the cold point's figures (after every point's). */
void fp_calibrate_figure(struct fp_calibration *out, int at, int b, double (*v)[FP_C_N], int n);
void fp_calibrate_figure0(struct fp_calibration *out, int at, double (*v)[FP_C_N], int n);

/* A calibration (fp_calibrate, less the drift tracker's part). 0 or -errno (e filled). */
int fp_calibrate_measure(struct fp_daemon_cal *out, enum fp_site_choice site, struct fp_err *e);

#endif
