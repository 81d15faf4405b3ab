/* SPDX-License-Identifier: GPL-2.0 */
#ifndef FP_CALIBRATE_H
#define FP_CALIBRATE_H

#include <stddef.h>

#include "server.h"

/*
 * Traces the daemon's own calibration region to learn (1) whether this kernel
 * optimizes nop5 uprobes and which attach point is cheaper, (2) the probe bias and pair cost used for compensation.
 */
enum fp_site_choice { FP_SITE_AUTO, FP_SITE_NOP1, FP_SITE_NOP5 };

int fp_calibrate(struct fp_daemon_cal *out, enum fp_site_choice site, char *err, size_t errlen);

#endif
