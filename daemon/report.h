/* SPDX-License-Identifier: GPL-2.0 */
/* JSON presentation of a target's figures: the "stats" reply and stream pushes. */
#ifndef FP_REPORT_H
#define FP_REPORT_H

#include "calibrate.h"
#include "catalog.h"
#include "stats.h"

struct json_object;

struct json_object *fp_report_stats(const struct fp_catalog *cat, const struct fp_snapshot *s,
				    const struct fp_calibration *cal, const uint8_t *enabled);
struct json_object *fp_report_calibration(const struct fp_calibration *cal);
struct json_object *fp_report_daemon_cal(const struct fp_daemon_cal *dc);

#endif
