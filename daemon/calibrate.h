/* SPDX-License-Identifier: GPL-2.0 */
#ifndef FP_CALIBRATE_H
#define FP_CALIBRATE_H

#include <stddef.h>

#include "server.h"

/*
 * Traces the daemon's own calibration region to learn (1) whether this kernel
 * optimizes nop5 uprobes, (2) the probe bias and pair cost used for compensation.
 */
int fp_calibrate(struct fp_daemon_cal *out, char *err, size_t errlen);

#endif
