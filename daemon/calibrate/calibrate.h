/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The calibration (daemon/calibrate/): probe cost on the running machine, measured on
 * featprof sites and functions of featprofd's own binary through targets of itself, and
 * its drift followed while the daemon runs. Its figures: util/stats.h fp_daemon_cal.
 */
#ifndef FP_CALIBRATE_H
#define FP_CALIBRATE_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "util/stats.h"

/* Measures the calibration into out (site: the attach point asked for). 0 or -errno (e
 * filled). */
int fp_calibrate(struct fp_daemon_cal *out, enum fp_site_choice site, struct fp_err *e);
/* Follows the drift of the default attach point's cost: a few more rounds, the calibration
 * figured again over the last ones (daemon/calibrate/track.c). 0 or -errno (e filled).
 */
int fp_calibrate_track(struct fp_daemon_cal *cal, struct fp_err *e);
/* Frees the tracker's own target (at exit; fp_calibrate does it first). */
void fp_calibrate_track_free(void);

#endif
