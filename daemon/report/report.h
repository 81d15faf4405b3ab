/* SPDX-License-Identifier: GPL-2.0 */
/* JSON presentation of a target's figures: the "stats" reply and stream pushes. */
#ifndef FP_REPORT_H
#define FP_REPORT_H

#include "calibrate.h"
#include "catalog.h"
#include "stats.h"
#include "target.h"

struct json_object;

struct json_object *fp_report_stats(const struct fp_catalog *cat, const struct fp_snapshot *s,
				    const struct fp_calibration *cal, const uint8_t *enabled);
struct json_object *fp_report_calibration(const struct fp_calibration *cal);
struct json_object *fp_report_daemon_cal(const struct fp_daemon_cal *dc);
/* The calibration keys of hello, status and calibrate, added to o. */
void fp_report_daemon_keys(struct json_object *o, const struct fp_daemon_cal *dc);
/* status bpf_objects: the BPF objects loaded for targets and how many targets they hold
 * (daemon/target/pool.c). */
void fp_report_bpf_objects(struct json_object *o);
/* {"pid","enabled_regions","attached_sites"}: the enable/disable reply. */
struct json_object *fp_report_enabled(const struct fp_target *t);
/* pid, comm, exited, elapsed_ns, added to a stats reply. */
void fp_report_target_keys(struct json_object *o, const struct fp_target *t,
			   const struct fp_snapshot *snap);
/* One target of the status reply. */
struct json_object *fp_report_target_status(const struct fp_target *t,
					    const struct fp_snapshot *snap);

/* featprof repair's reply: the process's sites that held a breakpoint, how many were
 * removed and held. */
struct json_object *fp_report_repair(pid_t pid, int before, int after);

#endif
