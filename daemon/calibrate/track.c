// SPDX-License-Identifier: GPL-2.0
/*
 * The calibration's drift (daemon/calibrate/track.c): a few more rounds of the default
 * attach point every few seconds while targets are live, the calibration figured again
 * over the last ones (calibrate.c measures the rounds and figures them); and the
 * calibration itself, which the tracker's history starts from (fp_calibrate).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calibrate_impl.h"
#include "common/err.h"
#include "targets/target.h"

/* --- drift ---------------------------------------------------------------------------
 *
 * A probe's cost moves while the daemon runs: six calibrations within 20 s here gave nop5
 * pairs of 3.5-4.8 us and nop1 pairs of 11.6-16.4 us, where one calibration's spread is
 * 20-100 ns and 1-2 us. So while targets are live, fp_calibrate_track() measures
 * TRACK_ROUNDS more rounds at the default attach point every few seconds (a warm-up round
 * first, as at start) and keeps the last HISTORY rounds: the calibration is their median,
 * its spread their standard deviation, so both follow the machine and the uncertainty
 * holds the drift over the last minutes, not one moment's noise. The tracker's target
 * (the daemon's own calibration sites) is loaded once; its sites are attached for the
 * measurement and detached after it, so that no uprobe of featprofd's stays while it
 * waits (a detach waits for an RCU grace period, ~50 ms here: hence every 10 s, not
 * more often). It is freed before a full calibration. Each tick also measures one round
 * of one other calibration point, in turn (the longest, 6 instances of 8 ms: ~50 ms);
 * each keeps its last GAP_HISTORY rounds.
 */
#define TRACK_ROUNDS 3
#define HISTORY 63		/* point 0's rounds kept */
#define GAP_HISTORY 15		/* each other point's */
_Static_assert(HISTORY < FP_CAL_HISTORY_MAX && GAP_HISTORY < FP_CAL_HISTORY_MAX, "history");

static struct {
	struct fp_target *t;
	struct cal_run *c;
	struct {
		double v[HISTORY][FP_C_N];
		int n, next;
	} b[FP_CAL_POINTS];
	int point, turn;	/* turn: the other calibration point measured next tick */
} track;

static void track_push(int b, const double *v)
{
	int max = b ? GAP_HISTORY : HISTORY;

	memcpy(track.b[b].v[track.b[b].next], v, sizeof(track.b[b].v[0]));
	track.b[b].next = (track.b[b].next + 1) % max;
	if (track.b[b].n < max)
		track.b[b].n++;
}

/* The tracker's history starts again from the last calibration's rounds at point. */
static void track_seed(int point)
{
	int i, b;

	memset(track.b, 0, sizeof(track.b));
	track.point = point;
	track.turn = 1;
	for (b = 0; b < FP_CAL_POINTS; b++)
		for (i = 0; i < fp_calibrate_plan_rounds(b); i++)
			track_push(b, fp_calibrate_last_rounds(point, b)[i]);
}

void fp_calibrate_track_free(void)
{
	fp_calibrate_run_free(track.c);
	track.c = NULL;
	fp_target__free(track.t);
	track.t = NULL;
}

/* The tracker's own target, loaded once, its sites at the default point. */
static int track_open(int optimized, struct fp_err *e)
{
	track.t = fp_target__new(getpid(), optimized, NULL, NULL, e);
	track.c = track.t ? fp_calibrate_run_new(track.t, e) : NULL;
	if (!track.c) {
		int ret = -errno;

		fp_calibrate_track_free();
		return ret;
	}
	return 0;
}

/* The calibration of a point from the history: medians and spreads of its rounds. */
static void track_figure(struct fp_calibration *out)
{
	int b;

	for (b = 0; b < FP_CAL_POINTS; b++)
		fp_calibrate_figure(out, track.point, b, track.b[b].v, track.b[b].n);
	fp_calibrate_figure0(out, track.point, track.b[0].v, track.b[0].n);
}

int fp_calibrate_track(struct fp_daemon_cal *cal, struct fp_err *e)
{
	int point = cal->optimized ? FP_AT_NOP5 : FP_AT_NOP1, i, ret = 0;
	const uint8_t *sel = fp_calibrate_regions();
	double v[FP_C_N];

	if (!cal->at[point].valid || track.point != point || !track.b[0].n)
		return fp_fail(e, EINVAL, "drift: no calibration of the default attach point");
	if (!track.t && (ret = track_open(cal->optimized, e)))
		return ret;
	ret = fp_target__set_regions(track.t, sel, 1, e);
	if (ret)
		return ret;
	ret = fp_calibrate_round(track.c, 0, v);	/* warm-up, as at start */
	for (i = 0; i < TRACK_ROUNDS && !ret; i++) {
		ret = fp_calibrate_round(track.c, 0, v);
		if (!ret)
			track_push(0, v);
	}
	if (!ret && !(ret = fp_calibrate_round(track.c, track.turn, v)))	/* another's */
		track_push(track.turn, v);
	track.turn = track.turn % (FP_CAL_POINTS - 1) + 1;
	fp_target__set_regions(track.t, sel, 0, NULL);
	if (ret)
		return fp_fail(e, -ret, "drift: cannot read the thread's own state: %s",
			       strerror(-ret));
	track_figure(&cal->at[point]);
	return 0;
}

int fp_calibrate(struct fp_daemon_cal *out, enum fp_site_choice site, struct fp_err *e)
{
	int ret;

	fp_calibrate_track_free();	/* its links would double every probe measured here */
	ret = fp_calibrate_measure(out, site, e);
	if (!ret)
		track_seed(out->optimized ? FP_AT_NOP5 : FP_AT_NOP1);
	return ret;
}
