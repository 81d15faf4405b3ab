// SPDX-License-Identifier: GPL-2.0
/* Compensation, uncertainty, deltas and per-feature time: daemon/util/stats.c, pure arithmetic. */
#include <stdlib.h>

#include "util/stats.h"
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

	/* A leaf of 10 instances, 10 us each plus its bias of 500 ns, which the kernel
	 * charged it (bpf/featprof.bpf.c "Cost"), with its spread. */
	leaf.count = 10;
	leaf.incl_ns = leaf.excl_ns = 10 * (10000 + 500);
	leaf.cost_ns = leaf.xcost_ns = 10 * 500;
	leaf.unc_ns = leaf.xunc_ns = 10 * 5;
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
	parent.cost_ns = 4 * (500 + 3 * 1300);
	parent.xcost_ns = parent.cost_ns - 12 * 500;
	parent.unc_ns = 4 * 5 + 12 * 13;
	parent.xunc_ns = parent.unc_ns - 12 * 5;
	CHECK_INT(fp_comp_incl(&parent, &cal, &unc), 4 * (20000 + 30000));
	CHECK_INT(unc, 4 * 5 + 12 * 13);
	CHECK_INT(fp_comp_excl(&parent, &cal, NULL), 4 * 20000);

	/* The preempted time that may have fallen in the probes joins the uncertainty: of n
	 * preemptions, each in a probe with the probes' share p of the time the thread ran,
	 * L (np + 2 sqrt(np)). Inclusive: probes 4 x 500 + 12 x 1300 = 17600 ns of 217600
	 * ran, 4 preemptions of 4400 ns: np = 0.3235, 4400 x 1.4611 = 6428.9 ns; exclusive:
	 * probes 11600 of 91600 ran, 2 of 5800 ns: np = 0.2533, 5800 x 1.2598 = 7306.9 ns
	 * (CHECK_INT truncates). */
	parent.off_pre_ns = 17600;
	parent.xoff_pre_ns = 11600;
	parent.npre = 4;
	parent.xnpre = 2;
	parent.incl_ns += 17600;
	parent.excl_ns += 11600;
	fp_comp_incl(&parent, &cal, &unc);
	CHECK_INT(unc, 4 * 5 + 12 * 13 + 6428);	/* 6428.9 */
	fp_comp_excl(&parent, &cal, &unc);
	CHECK_INT(unc, 4 * 5 + 12 * 8 + 7306);	/* 7306.9 */
	parent.npre = parent.xnpre = 0;
	parent.off_pre_ns = parent.xoff_pre_ns = 0;
	parent.incl_ns -= 17600;
	parent.excl_ns -= 11600;

	/* Compensation never goes below zero, and is off without a calibration. */
	leaf.incl_ns = leaf.excl_ns = 100;
	leaf.cost_ns = 500;
	CHECK_INT(fp_comp_incl(&leaf, &cal, NULL), 0);
	cal.valid = 0;
	CHECK_INT(fp_comp_incl(&leaf, &cal, &unc), 100);
	CHECK_INT(unc, 0);
	cal = make_cal();

	/* The kernel's per-gap-step costs: linear in log2(gap) between calibration points
	 * in the order of their gaps (3, 60, 600 us, 4 ms, then the point of probes at once,
	 * 500 ns; the last point cold), flat beyond them. Step 12 (gaps of 4.1-8.2 us,
	 * middle 6144 ns) lies 0.239 of the way from 3 to 60 us in log2; step 10 (1536 ns)
	 * 0.626 of the way from 500 ns to 3 us. The spread is at least half the cost above
	 * point 0 plus a tenth of the cost. */
	{
		struct fp_calibration g = {
			.valid = 1, .point_gap_ns = { 3000, 60000, 600000, 4000000, 500, 0 }
		};
		double ns[FP_C_N], sd[FP_C_N];

		for (int i = 0; i < FP_CAL_POINTS; i++)
			for (int k = 0; k < FP_C_N; k++) {
				g.point_ns[i][k] = 100 * (i + 1) + k;
				g.point_sd[i][k] = 10 * (i + 1);
			}
		fp_cal_step(&g, 5, ns, sd);	/* below every point: the one at once */
		CHECK_INT(ns[0], 500);
		CHECK_INT(sd[0], 250);	/* half of 400 above point 0, and 50 */
		fp_cal_step(&g, 10, ns, sd);
		CHECK_INT(ns[0] * 10, 2494);
		CHECK_INT(sd[0] * 100, 9966);
		fp_cal_step(&g, 12, ns, sd);
		CHECK_INT(ns[0] * 10, 1239);
		CHECK_INT(ns[3] * 10, 1269);
		CHECK_INT(sd[0] * 100, 2435);	/* half of 23.93 above point 0, and 12.39 */
		fp_cal_step(&g, 30, ns, sd);
		CHECK_INT(ns[0], 400);
		CHECK_INT(sd[0], 190);	/* half the 300 above point 0, and 40: more than 40 */
		fp_cal_step(&g, FP_GAP_COLD, ns, sd);
		CHECK_INT(ns[2], 602);
		CHECK_INT(sd[2], 310);
		g.point_gap_ns[FP_CAL_ONCE] = 0;	/* not measured: left out */
		fp_cal_step(&g, 5, ns, sd);
		CHECK_INT(ns[0], 100);
		CHECK_INT(sd[0], 10);	/* 10 % of the cost */
	}

	/* Deltas; a reset (counts going back) yields the current figures. */
	a->regions[0].count = 10;
	a->regions[0].incl_ns = 1000;
	a->regions[0].off_blk_ns = 50;
	a->regions[0].cost_ns = 300;
	a->anomalies[FP_AN_ABANDONED] = 2;
	b->regions[0].count = 15;
	b->regions[0].incl_ns = 1600;
	b->regions[0].off_blk_ns = 80;
	b->regions[0].cost_ns = 420;
	b->anomalies[FP_AN_ABANDONED] = 5;
	d = fp_snapshot__delta(b, a);
	CHECK_INT(d->regions[0].count, 5);
	CHECK_INT(d->regions[0].incl_ns, 600);
	CHECK_INT(d->regions[0].off_blk_ns, 30);
	CHECK_INT(d->regions[0].cost_ns, 120);
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
	 * Raw time = true time + probe parts inside, which the kernel charged the sets.
	 */
	b->fsets = calloc(4, sizeof(*b->fsets));
	b->nfsets = 4;
	b->fsets[0] = (struct fp_fset_fig){ .mask = 1, .ns = 2 * (100 + 500 + 50 + 800),
					    .events = 4, .opened_by_begin = 2,
					    .closed_by_begin = 2, .off_blk_ns = 20,
					    .cost_ns = 2 * (500 + 800), .unc_ns = 2 * (5 + 8) };
	b->fsets[1] = (struct fp_fset_fig){ .mask = 3, .ns = 2 * (30 + 500), .events = 2,
					    .opened_by_begin = 2, .closed_by_begin = 0,
					    .cost_ns = 2 * 500, .unc_ns = 2 * (1 + 4) };
	b->fsets[2] = (struct fp_fset_fig){ .mask = 4, .ns = 7 + 500, .events = 1,
					    .opened_by_begin = 1, .cost_ns = 500, .unc_ns = 5 };
	b->fsets[3] = (struct fp_fset_fig){ .mask = 0, .ns = 1000 + 800, .events = 1,
					    .closed_by_begin = 1, .cost_ns = 800, .unc_ns = 8 };
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
						    .ns = 100, .events = 2, .cost_ns = 40,
						    .unc_ns = 4 };
		p->paths[2] = (struct fp_path_fig){ .id = 0, .ns = 1000, .events = 1 };
		p->paths[3] = (struct fp_path_fig){ .id = 77, .parent = 99, .region = 1,
						    .depth = 2, .ns = 5, .events = 1 };
		CHECK_INT(fp_snapshot__derive_fsets(p, rmask, 2), 0);
		CHECK_INT(p->nfsets, 4);	/* {0,1}, {0}, {1} (the orphan), base */
		for (int i = 0; i < p->nfsets; i++) {
			if (p->fsets[i].mask == 3)
				CHECK_INT(p->fsets[i].ns, 30);
			else if (p->fsets[i].mask == 1)
				CHECK_INT(p->fsets[i].ns + p->fsets[i].cost_ns, 140);
			else if (p->fsets[i].mask == 2)	/* the orphan: only its own region */
				CHECK_INT(p->fsets[i].ns, 5);
			else
				CHECK_INT(p->fsets[i].ns, 1000);	/* base, mask 0 */
		}
		/* a path compensates as its set: its raw time less its charged cost (the
		 * paths are sorted by id now) */
		for (int i = 0; i < p->npaths; i++)
			if (p->paths[i].id == outer) {
				CHECK_INT(fp_comp_path(&p->paths[i], &cal, &unc), 60);
				CHECK_INT(unc, 4);
			}
		fp_snapshot__free(p);
	}
	TEST_DONE("test_stats");
}
