// SPDX-License-Identifier: GPL-2.0
/* Compensation, uncertainty, deltas and per-feature time: daemon/stats.c, pure arithmetic. */
#include <stdlib.h>

#include "stats.h"
#include "test.h"

/* begin 400+100, end 400+400 ns around the timestamp: bias 500, pair 1300 */
static struct fp_calibration make_cal(void)
{
	struct fp_calibration c = { .valid = 1,
				    .part_ns = { 400, 100, 400, 400 },
				    .part_sd = { 4, 1, 4, 4 } };

	c.bias_ns = c.part_ns[FP_C_BEGIN_POST] + c.part_ns[FP_C_END_PRE];
	c.pair_ns = 1300;
	c.bias_sd = 5;
	c.pair_sd = 13;
	return c;
}

int main(void)
{
	struct fp_calibration cal = make_cal();
	struct fp_region_fig parent = { 0 }, leaf = { 0 };
	struct fp_snapshot *a = fp_snapshot__new(1), *b = fp_snapshot__new(1), *d;
	struct fp_feature_fig ff[3], base;
	double unc;

	/* A leaf of 10 instances, 10 us each plus its bias of 500 ns. */
	leaf.count = 10;
	leaf.incl_ns = leaf.excl_ns = 10 * (10000 + 500);
	CHECK_INT(fp_comp_incl(&leaf, &cal, &unc), 100000);
	CHECK_INT(unc, 10 * 5);
	CHECK_INT(fp_comp_excl(&leaf, &cal, NULL), 100000);

	/* A parent of 4 instances, 20 us of its own, each holding 3 children (10 us each):
	 * its raw inclusive time holds its bias and 3 whole probe pairs, each child's raw
	 * time holds that child's bias. */
	parent.count = 4;
	parent.nchild = parent.ndesc = 12;
	parent.incl_ns = 4 * (20000 + 3 * 10000 + 500 + 3 * 1300);
	parent.excl_ns = parent.incl_ns - 12 * (10000 + 500);
	CHECK_INT(fp_comp_incl(&parent, &cal, &unc), 4 * (20000 + 30000));
	CHECK_INT(unc, 4 * 5 + 12 * 13);
	CHECK_INT(fp_comp_excl(&parent, &cal, NULL), 4 * 20000);

	/* The share of the preempted time that may have fallen in the probes joins the
	 * uncertainty: the probes' share of the time the thread ran (inclusive: probes
	 * 4 x 500 + 12 x 1300 = 17600 ns of 217600 ran, 17600 preempted; exclusive: probes
	 * 4 x 500 + 12 x 800 = 11600 of 91600 ran, 11600 preempted). */
	parent.off_pre_ns = 17600;
	parent.xoff_pre_ns = 11600;
	parent.incl_ns += 17600;
	parent.excl_ns += 11600;
	fp_comp_incl(&parent, &cal, &unc);
	CHECK_INT(unc, 4 * 5 + 12 * 13 + 17600.0 * 17600 / 217600);
	fp_comp_excl(&parent, &cal, &unc);
	CHECK_INT(unc, 4 * 5 + 12 * 13 + 11600.0 * 11600 / 91600);
	parent.off_pre_ns = parent.xoff_pre_ns = 0;
	parent.incl_ns -= 17600;
	parent.excl_ns -= 11600;

	/* Compensation never goes below zero, and is off without a calibration. */
	leaf.incl_ns = leaf.excl_ns = 100;
	CHECK_INT(fp_comp_incl(&leaf, &cal, NULL), 0);
	cal.valid = 0;
	CHECK_INT(fp_comp_incl(&leaf, &cal, &unc), 100);
	CHECK_INT(unc, 0);
	cal = make_cal();

	/* Deltas; a reset (counts going back) yields the current figures. */
	a->regions[0].count = 10;
	a->regions[0].incl_ns = 1000;
	a->regions[0].off_blk_ns = 50;
	a->anomalies[FP_AN_ABANDONED] = 2;
	b->regions[0].count = 15;
	b->regions[0].incl_ns = 1600;
	b->regions[0].off_blk_ns = 80;
	b->anomalies[FP_AN_ABANDONED] = 5;
	d = fp_snapshot__delta(b, a);
	CHECK_INT(d->regions[0].count, 5);
	CHECK_INT(d->regions[0].incl_ns, 600);
	CHECK_INT(d->regions[0].off_blk_ns, 30);
	CHECK_INT(d->anomalies[FP_AN_ABANDONED], 3);
	fp_snapshot__free(d);
	d = fp_snapshot__delta(a, b);
	CHECK_INT(d->regions[0].count, 10);
	fp_snapshot__free(d);

	/*
	 * Feature sets. A region of feature A (2 instances) holding a region of A and B:
	 * per instance the set {A} has an interval begin->begin (begin_post + begin_pre of
	 * probe time inside) and one end->end (end_post + end_pre); {A,B} one begin->end
	 * (begin_post + end_pre). {C}: one begin->end, and base (no feature) one end->begin.
	 * Raw time = true time + probe parts inside.
	 */
	b->fsets = calloc(4, sizeof(*b->fsets));
	b->nfsets = 4;
	b->fsets[0] = (struct fp_fset_fig){ .mask = 1, .ns = 2 * (100 + 500 + 50 + 800),
					    .events = 4, .opened_by_begin = 2,
					    .closed_by_begin = 2, .off_blk_ns = 20 };
	b->fsets[1] = (struct fp_fset_fig){ .mask = 3, .ns = 2 * (30 + 500), .events = 2,
					    .opened_by_begin = 2, .closed_by_begin = 0 };
	b->fsets[2] = (struct fp_fset_fig){ .mask = 4, .ns = 7 + 500, .events = 1,
					    .opened_by_begin = 1 };
	b->fsets[3] = (struct fp_fset_fig){ .mask = 0, .ns = 1000 + 800, .events = 1,
					    .closed_by_begin = 1 };
	CHECK_INT(fp_comp_fset(&b->fsets[1], &cal, &unc), 60);
	CHECK_INT(unc, 2 * (1 + 4));
	fp_feature_times(b, &cal, 3, ff, &base);
	/* A: its span is the outer region's: 2 x (100 + 50 + 30) of its own time */
	CHECK_INT(ff[0].ns, 2 * (100 + 50) + 60);
	CHECK_INT(ff[0].raw_ns, 2 * (100 + 500 + 50 + 800) + 2 * (30 + 500));
	CHECK_INT(ff[0].off_blk_ns, 20);
	CHECK_INT(ff[1].ns, 60);
	CHECK_INT(ff[2].ns, 7);
	CHECK_INT(base.ns, 1000);
	fp_snapshot__free(a);
	fp_snapshot__free(b);

	/*
	 * Feature sets from region paths: region 0 (feature bit 0) holding region 1 (bit
	 * 1), and region 0 alone; plus base. Paths are given out of order, and one path's
	 * parent was never seen: its mask is what is known.
	 */
	{
		uint64_t rmask[2] = { 1, 2 };
		struct fp_snapshot *p = fp_snapshot__new(2);
		uint64_t outer = FP_PATH_HASH(0, 0), inner = FP_PATH_HASH(outer, 1);

		p->paths = calloc(4, sizeof(*p->paths));
		p->npaths = 4;
		p->paths[0] = (struct fp_path_fig){ .id = inner, .parent = outer, .region = 1,
						    .depth = 2, .ns = 30, .events = 1 };
		p->paths[1] = (struct fp_path_fig){ .id = outer, .region = 0, .depth = 1,
						    .ns = 100, .events = 2 };
		p->paths[2] = (struct fp_path_fig){ .id = 0, .ns = 1000, .events = 1 };
		p->paths[3] = (struct fp_path_fig){ .id = 77, .parent = 99, .region = 1,
						    .depth = 2, .ns = 5, .events = 1 };
		CHECK_INT(fp_snapshot__derive_fsets(p, rmask, 2), 0);
		CHECK_INT(p->nfsets, 4);	/* {0,1}, {0}, {1} (the orphan), base */
		for (int i = 0; i < p->nfsets; i++) {
			if (p->fsets[i].mask == 3)
				CHECK_INT(p->fsets[i].ns, 30);
			else if (p->fsets[i].mask == 1)
				CHECK_INT(p->fsets[i].ns, 100);
			else if (p->fsets[i].mask == 2)	/* the orphan: only its own region */
				CHECK_INT(p->fsets[i].ns, 5);
			else
				CHECK_INT(p->fsets[i].ns, 1000);	/* base, mask 0 */
		}
		fp_snapshot__free(p);
	}
	TEST_DONE("test_stats");
}
