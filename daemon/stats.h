/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Figures of one target, summed over CPUs, and the pure arithmetic on them: probe-cost
 * compensation, per-feature time from feature-set time, deltas. No I/O, no BPF.
 */
#ifndef FP_STATS_H
#define FP_STATS_H

#include <linux/types.h>
#include <stdint.h>

#include "../bpf/featprof.h"

struct fp_region_fig {
	uint64_t count, incl_ns, excl_ns, min_ns, max_ns, nchild, ndesc, recursion;
	uint64_t hist[FP_HIST_BUCKETS];
};

struct fp_fset_fig {
	uint64_t mask;
	uint64_t ns;
	uint64_t events;
};

struct fp_snapshot {
	uint64_t taken_ns;		/* CLOCK_MONOTONIC */
	int nregions;
	struct fp_region_fig *regions;
	int nfsets;
	struct fp_fset_fig *fsets;
	uint64_t anomalies[FP_AN_MAX];
};

/* Probe cost, measured at start-up (daemon/calibrate.c). */
struct fp_calibration {
	double bias_ns;		/* raw inclusive time of an empty region */
	double pair_ns;		/* what one begin+end pair costs the thread in all */
	int valid;
};

struct fp_snapshot *fp_snapshot__new(int nregions);
void fp_snapshot__free(struct fp_snapshot *s);
struct fp_snapshot *fp_snapshot__dup(const struct fp_snapshot *s);
/* d = cur - prev, region by region and set by set (a reset makes counts go back). */
struct fp_snapshot *fp_snapshot__delta(const struct fp_snapshot *cur,
				       const struct fp_snapshot *prev);

/* Compensated sums of a region: never below zero. */
double fp_comp_incl(const struct fp_region_fig *r, const struct fp_calibration *c);
double fp_comp_excl(const struct fp_region_fig *r, const struct fp_calibration *c);

/* Time of each feature (any set containing it) and of exactly-this-set, from fsets. */
void fp_feature_times(const struct fp_snapshot *s, int nfeatures, uint64_t *ns_out);

extern const char *const fp_anomaly_names[FP_AN_MAX];

#endif
