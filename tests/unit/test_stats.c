// SPDX-License-Identifier: GPL-2.0
/* Compensation, deltas and per-feature time: daemon/stats.c, pure arithmetic. */
#include <stdlib.h>

#include "../../daemon/stats.h"
#include "test.h"

int main(void)
{
	struct fp_calibration cal = { .bias_ns = 500, .pair_ns = 1300, .valid = 1 };
	struct fp_region_fig parent = { 0 }, leaf = { 0 };
	struct fp_snapshot *a = fp_snapshot__new(1), *b = fp_snapshot__new(1), *d;
	uint64_t fns[3];

	/* A leaf of 10 instances, 10 us each plus its bias of 500 ns. */
	leaf.count = 10;
	leaf.incl_ns = leaf.excl_ns = 10 * (10000 + 500);
	CHECK_INT(fp_comp_incl(&leaf, &cal), 100000);
	CHECK_INT(fp_comp_excl(&leaf, &cal), 100000);

	/* A parent of 4 instances, 20 us of its own, each holding 3 children (10 us each):
	 * its raw inclusive time holds its bias and 3 whole probe pairs, each child's raw
	 * time holds that child's bias. */
	parent.count = 4;
	parent.nchild = parent.ndesc = 12;
	parent.incl_ns = 4 * (20000 + 3 * 10000 + 500 + 3 * 1300);
	parent.excl_ns = parent.incl_ns - 12 * (10000 + 500);
	CHECK_INT(fp_comp_incl(&parent, &cal), 4 * (20000 + 30000));
	CHECK_INT(fp_comp_excl(&parent, &cal), 4 * 20000);

	/* Compensation never goes below zero, and is off without a calibration. */
	leaf.incl_ns = leaf.excl_ns = 100;
	CHECK_INT(fp_comp_incl(&leaf, &cal), 0);
	cal.valid = 0;
	CHECK_INT(fp_comp_incl(&leaf, &cal), 100);

	/* Deltas; a reset (counts going back) yields the current figures. */
	a->regions[0].count = 10;
	a->regions[0].incl_ns = 1000;
	a->anomalies[FP_AN_ABANDONED] = 2;
	b->regions[0].count = 15;
	b->regions[0].incl_ns = 1600;
	b->anomalies[FP_AN_ABANDONED] = 5;
	d = fp_snapshot__delta(b, a);
	CHECK_INT(d->regions[0].count, 5);
	CHECK_INT(d->regions[0].incl_ns, 600);
	CHECK_INT(d->anomalies[FP_AN_ABANDONED], 3);
	fp_snapshot__free(d);
	d = fp_snapshot__delta(a, b);
	CHECK_INT(d->regions[0].count, 10);
	fp_snapshot__free(d);

	/* Feature time from feature-set time: {A}=100, {A,B}=30, {C}=7. */
	b->fsets = calloc(3, sizeof(*b->fsets));
	b->nfsets = 3;
	b->fsets[0] = (struct fp_fset_fig){ .mask = 1, .ns = 100 };
	b->fsets[1] = (struct fp_fset_fig){ .mask = 3, .ns = 30 };
	b->fsets[2] = (struct fp_fset_fig){ .mask = 4, .ns = 7 };
	fp_feature_times(b, 3, fns);
	CHECK_INT(fns[0], 130);
	CHECK_INT(fns[1], 30);
	CHECK_INT(fns[2], 7);
	fp_snapshot__free(a);
	fp_snapshot__free(b);
	TEST_DONE("test_stats");
}
