/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Figures of one target, summed over CPUs, and the pure arithmetic on them: probe-cost
 * compensation, per-feature time from feature-set time, deltas. No I/O, no BPF.
 */
#ifndef FP_STATS_H
#define FP_STATS_H

#include <linux/types.h>
#include <stdint.h>

#include "bpf/featprof_bpf.h"

struct fp_region_fig {
	uint64_t count, incl_ns, excl_ns, min_ns, max_ns, nchild, ndesc, recursion;
	uint64_t off_pre_ns, off_blk_ns, xoff_pre_ns, xoff_blk_ns;
	uint64_t cost_ns, unc_ns, xcost_ns, xunc_ns;	/* the probes' (fp_region_stats) */
	uint64_t npre, xnpre;				/* preemptions inside */
	uint64_t hist[FP_HIST_BUCKETS];
};

struct fp_fset_fig {
	uint64_t mask;
	uint64_t ns;
	uint64_t events;
	uint64_t opened_by_begin, closed_by_begin;
	uint64_t off_pre_ns, off_blk_ns;
	uint64_t cost_ns, unc_ns, npre;
};

/* One region path: its exclusive time (intervals with exactly this path open). */
struct fp_path_fig {
	uint64_t id, parent;	/* FP_PATH_HASH; 0 = base (no region open) */
	uint32_t region, depth;	/* innermost region; 1 = outermost */
	uint64_t mask;		/* features of the path: the union of its regions' */
	uint64_t ns, events, opened_by_begin, closed_by_begin, off_pre_ns, off_blk_ns, count;
	uint64_t cost_ns, unc_ns, npre;
};

struct fp_snapshot {
	uint64_t taken_ns;		/* CLOCK_MONOTONIC */
	int nregions;
	struct fp_region_fig *regions;
	int nfsets;
	struct fp_fset_fig *fsets;	/* derived from paths */
	int npaths;
	struct fp_path_fig *paths;
	uint64_t anomalies[FP_AN_MAX];
	uint8_t *inproc;		/* per region: 1 if measured in-process (NULL: none) */
};

/*
 * Probe cost at one attach point, measured by daemon/calibrate/calibrate.c. A probe's cost to the
 * thread splits around the event's timestamp: the part before it and the part after.
 * The same order as bpf/featprof_bpf.h's FP_PART_*.
 */
enum { FP_C_BEGIN_PRE, FP_C_BEGIN_POST, FP_C_END_PRE, FP_C_END_POST, FP_C_N };
/* Calibration points: FP_CAL_GAPS gaps between probes (0: the rounds, 3 us of work
 * between probes; 1-3: more work; FP_CAL_ONCE: probes at once, one clock read between
 * them), each labelled with the gap its probes had as the kernel sees it (between
 * their timestamps); then COLD (after a sleep). */
#define FP_CAL_GAPS 5
#define FP_CAL_ONCE 4
#define FP_CAL_COLD 5
#define FP_CAL_POINTS 6
_Static_assert((int)FP_C_N == (int)FP_PARTS && (int)FP_C_END_PRE == (int)FP_PART_END_PRE, "parts");

struct fp_calibration {
	int valid;
	double part_ns[FP_C_N];	/* median over rounds of each part */
	double part_sd[FP_C_N];	/* spread: standard deviation of the round values */
	double bias_ns;		/* begin_post + end_pre: in a region's own raw time */
	double pair_ns;		/* all four: what a nested begin+end costs its parent */
	double bias_sd, pair_sd;	/* spread of the per-round sums */
	int rounds, instances;	/* instances per round */
	double nested_check_ns;	/* calibration's outer region: raw - inside - predicted,
				 * per instance: ~0 when the model holds for nesting */
	double cold_pair_ns, cold_bias_ns;	/* the same, for a region entered right
						 * after a sleep (point FP_CAL_COLD) */
	/* per calibration point (a gap of point_gap_ns since the previous probe's
	 * timestamp; the last: cold, after a sleep) each part's median over its rounds and
	 * its spread;
	 * point 0 is part_ns/part_sd above. The kernel charges interpolations of them
	 * (fp_cal_step) */
	double point_gap_ns[FP_CAL_POINTS];
	double point_ns[FP_CAL_POINTS][FP_C_N], point_sd[FP_CAL_POINTS][FP_C_N];
	int point_rounds[FP_CAL_POINTS];
};

/*
 * What one event costs in gap step k (bpf/featprof_bpf.h: gaps of 2^k to 2^(k+1) ns;
 * FP_GAP_COLD: cold), per part, and its spread: linear in log2(gap) between the two
 * calibration points around the step's middle (1.5 x 2^k ns), the points taken in the
 * order of their gaps (one with none left out), the nearest point's beyond them; the
 * cold point for FP_GAP_COLD. The spread is at least FP_GAP_EXTRA_UNC of what the step
 * costs above point 0 (the warm probe) plus FP_GAP_DRIFT_UNC of the
 * whole: the cost moves with the machine from minute to minute more than within one
 * calibration (measured here: the warm pair 0.96-1.05 us in most calibrations of an
 * hour, once 1.31 us; the extra with 600 us between probes 0.15 to 1.1 us a probe above
 * the warm 0.46 us, in calibrations and runs a few minutes apart).
 */
#define FP_GAP_EXTRA_UNC 0.5
#define FP_GAP_DRIFT_UNC 0.1
/*
 * An event after another CPU hit the object's probes (another thread's, since this
 * thread's previous event) may cost more than its gap says: two threads of one process on
 * 2 CPUs, each with 240-600 us between its probes, paid 1.4-1.8x a probe alone (and a
 * thread hitting probes every 2 us nothing more at 3 us gaps). Not charged, but this
 * share of the event's cost joins its spread.
 */
#define FP_GAP_SHARED_UNC 0.5
void fp_cal_step(const struct fp_calibration *c, int k, double ns[FP_C_N], double sd[FP_C_N]);

struct fp_snapshot *fp_snapshot__new(int nregions);
void fp_snapshot__free(struct fp_snapshot *s);
struct fp_snapshot *fp_snapshot__dup(const struct fp_snapshot *s);
/*
 * Fills each path's mask (region_mask[r]: features of region r) by walking its parents,
 * then s->fsets as the sums of paths of equal mask. 0 or -ENOMEM.
 */
int fp_snapshot__derive_fsets(struct fp_snapshot *s, const uint64_t *region_mask, int nregions);
/* Adds s's regions, paths and anomalies to d, d's paths of equal id merged into one
 * (fsets are not: derive them after). 0 or -ENOMEM. */
int fp_snapshot__add(struct fp_snapshot *d, const struct fp_snapshot *s);
/* d = cur - prev, region by region, path by path, set by set (a reset makes counts go
 * back). */
struct fp_snapshot *fp_snapshot__delta(const struct fp_snapshot *cur,
				       const struct fp_snapshot *prev);

/*
 * Compensated sums of a region and of a feature set, never below zero: the raw time less
 * the probes' cost the kernel summed per event (by gap bucket); *unc (if not NULL) gets
 * the uncertainty: the summed spread, and the share of preempted time that may have
 * fallen in probes. c: NULL or not valid: raw figures, no uncertainty.
 */
double fp_comp_incl(const struct fp_region_fig *r, const struct fp_calibration *c, double *unc);
double fp_comp_excl(const struct fp_region_fig *r, const struct fp_calibration *c, double *unc);
double fp_comp_fset(const struct fp_fset_fig *f, const struct fp_calibration *c, double *unc);
/* A path's exclusive time, compensated as a set's (its intervals are the same kind). */
double fp_comp_path(const struct fp_path_fig *p, const struct fp_calibration *c, double *unc);

/* Per feature: the compensated time, its uncertainty and off-CPU time (preempted,
 * blocked) of every set containing it. Arrays of nfeatures. base: the set of no
 * feature (time outside every region), ns and uncertainty; may be NULL. */
struct fp_feature_fig {
	double ns, unc;
	uint64_t raw_ns, off_pre_ns, off_blk_ns;
};
void fp_feature_times(const struct fp_snapshot *s, const struct fp_calibration *c,
		      int nfeatures, struct fp_feature_fig *out, struct fp_feature_fig *base);

extern const char *const fp_anomaly_names[FP_AN_MAX];

/* The median of v[0..n-1] (sorted in place; 0 for none) and the sample standard
 * deviation (0 for fewer than two): the calibrations' round values. */
double fp_median(double *v, int n);
double fp_stdev(const double *v, int n);

/*
 * The daemon's calibration: probe cost on the running machine, measured on featprof
 * sites in its own binary (daemon/calibrate/), per attach point, and which one new targets
 * get. Here, below both, because the targets charge it (daemon/targets/pool.c) and the
 * calibration fills it.
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

#endif
