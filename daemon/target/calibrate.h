/* SPDX-License-Identifier: GPL-2.0 */
#ifndef FP_CALIBRATE_H
#define FP_CALIBRATE_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "stats.h"

/*
 * Probe cost on the running machine, measured on featprof sites in the daemon's own
 * binary (daemon/target/calibrate.c): per attach point, and which one new targets get.
 */
enum fp_site_choice { FP_SITE_AUTO, FP_SITE_NOP1, FP_SITE_NOP5 };
/* attach points: marked sites at the nop1 or the shielded nop5; function regions (a
 * uprobe at a function's entry, a return probe) whose first instruction the kernel
 * emulates (a push), or single-steps out of line (any other) */
enum { FP_AT_NOP1, FP_AT_NOP5, FP_AT_FUNC, FP_AT_FUNC_STEP, FP_AT_N };

struct fp_daemon_cal {
	struct fp_calibration at[FP_AT_N];	/* valid where measured */
	/* the in-process runtime's (daemon/inproc/ip_calibrate.c) */
	struct fp_calibration ip;
	int kernel_optimizes;	/* the kernel rewrites nop5 uprobes into calls */
	int fork_hazard;	/* ... and a forked child lacks the call's trampoline */
	int optimized;		/* new targets are attached at the shielded nop5 */
	char why[192];		/* why that attach point, for status */
	double took_ms;		/* how long the calibration ran */
	uint64_t when;		/* CLOCK_REALTIME seconds of the calibration */
	int runs;		/* calibrations since start (featprof calibrate adds one) */
};

int fp_calibrate(struct fp_daemon_cal *out, enum fp_site_choice site, struct fp_err *e);
/* Follows the drift of the default attach point's cost: a few more rounds, the calibration
 * figured again over the last ones (daemon/target/calibrate.c, "drift"). 0 or -errno (e filled). */
int fp_calibrate_track(struct fp_daemon_cal *cal, struct fp_err *e);
/* daemon/target/calibrate_point.c, for the calibration: is [uprobes-trampoline] mapped
 * in the daemon (the kernel rewrote a hit nop5 site into a call)? Does a child forked
 * after that crash at the site (1, or when it could not be run)? Which point new
 * targets get (out->optimized, out->why) from the points measured and --site. */
int fp_cal_has_trampoline(void);
int fp_cal_fork_loses_trampoline(void);
void fp_cal_choose_point(struct fp_daemon_cal *out, enum fp_site_choice site);
/* Frees the tracker's own target (at exit; fp_calibrate does it first). */
void fp_calibrate_track_free(void);

#endif
