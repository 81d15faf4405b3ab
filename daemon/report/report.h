/* SPDX-License-Identifier: GPL-2.0 */
/* JSON presentation of a target's figures: the "stats" reply and stream pushes. */
#ifndef FP_REPORT_H
#define FP_REPORT_H

#include "util/stats.h"
#include "common/catalog.h"
#include "util/stats.h"
#include "targets/target.h"

struct json_object;

struct json_object *fp_report_stats(const struct fp_catalog *cat, const struct fp_snapshot *s,
				    const struct fp_calibration *cal, const uint8_t *enabled);
/* {"pid","enabled_regions","attached_sites"}: the enable/disable reply. */
struct json_object *fp_report_enabled(const struct fp_target *t);
/* pid, comm, exited, elapsed_ns, added to a stats reply. */
void fp_report_target_keys(struct json_object *o, const struct fp_target *t,
			   const struct fp_snapshot *snap);

/* featprof repair's reply: the process's sites that held a breakpoint, how many were
 * removed and held. */
struct json_object *fp_report_repair(pid_t pid, int before, int after);

/* The replies the verbs send (daemon/serve/verbs.c parses, calls and replies; it writes
 * no JSON). {key: v}: a subscription's or a run's number. */
struct json_object *fp_report_number(const char *key, int64_t v);
/* A request's id, as the reply echoes it. */
struct json_object *fp_report_id(long long id);
/* hello: the protocol version and the calibration keys. */
struct json_object *fp_report_hello(const struct fp_daemon_cal *dc);
/* sample's reply. */
struct json_object *fp_report_sampling(pid_t pid, bool on, int hz, bool remote);
/* calibrate's reply: the previous calibration and the keys of the new one. */
struct json_object *fp_report_recalibrated(const struct fp_daemon_cal *prev,
					   const struct fp_daemon_cal *now);
/* What status says besides its targets; a count below 0 is left out. */
struct fp_status_counts {
	int clients, subscriptions;
	int repaired_at_start;		/* breakpoints the journal repaired at start */
	long long watch_lost;		/* the watcher's events lost (no watcher: -1) */
};
/* status: targets (each t[i] with its snapshot and stray breakpoints, -1: exited),
 * executables and the BPF objects where the client is privileged (executables: taken),
 * the counts, the calibration keys and kernel (taken). */
struct json_object *fp_report_status(struct fp_target *const *t,
				     struct fp_snapshot *const *snap, const int *strays, int n,
				     struct json_object *executables,
				     const struct fp_status_counts *counts,
				     const struct fp_daemon_cal *dc, struct json_object *kernel);

#endif
