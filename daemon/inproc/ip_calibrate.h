/* SPDX-License-Identifier: GPL-2.0 */
/* The in-process runtime's clock and own cost (daemon/inproc/ip_calibrate.c). */
#ifndef FP_IP_CALIBRATE_H
#define FP_IP_CALIBRATE_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "util/stats.h"

/* The clock every in-process target gets (featprof.h FP_IP_CLOCK_*): for the TSC, ns =
 * ticks * mult >> shift. */
struct fp_ip_clock {
	uint32_t clock, shift;
	uint64_t mult;
};

/* Chooses the clock and measures the runtime's four parts into out (valid set). 0 or
 * -errno (e filled). */
int fp_ip_calibrate(struct fp_calibration *out, struct fp_err *e);
const struct fp_ip_clock *fp_ip_clock(void);

#endif
