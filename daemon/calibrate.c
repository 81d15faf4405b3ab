// SPDX-License-Identifier: GPL-2.0
/*
 * Calibration on the running machine, at start-up, on featprof sites in the daemon's
 * own binary (the same site shape and the same BPF program as any target):
 *  - optimized uprobes: attach at the shielded nop5, hit it, and look for the
 *    kernel's [uprobes-trampoline] mapping in our own address space. Absent: a nop5
 *    would be single-stepped, so targets get the nop1 (int3). Present: the attach
 *    points are measured, and with --site auto the nop5 is used where clearly cheaper.
 *    The default is the nop1: in this project's KVM guest (Linux 6.18) the two cost
 *    the same within noise (pair ~1.3 us each), and regions traced through the
 *    optimized path picked up millisecond stalls at their probes with 4 threads
 *    (+5 to +30% on some regions) that the int3 path never showed (docs/TRACING.md).
 *  - bias: what the kernel's measurement of a region exceeds the region's own time,
 *    measured inside it with clock_gettime. The region does BUSY_NS of work: after
 *    that long in user space the probe path is colder, and costs more, than in a
 *    tight loop of empty regions (measured here: ~1.4 us against ~0.6 us).
 *  - pair cost: the wall time one begin+end pair adds to the thread (the same loop
 *    traced minus untraced).
 * The bias is the median of 31 short rounds (round means) on one warmed-up
 * attachment: the minimum round was ~100 ns below what regions in a running program
 * showed (tests/bench, 1 and 10 us regions), and rounds that each re-attached the
 * probes started cold and scattered (480-1012 ns between daemon starts). The pair
 * cost is the difference of the fastest traced and untraced rounds: preemption only
 * ever adds time.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "calibrate.h"
#include "featprof.h"
#include "target.h"

#define BIAS_ROUNDS 31
#define PAIR_ROUNDS 5
#define LOOPS 400
#define BUSY_NS 10000.0

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Returns the region's own time, measured inside it. */
__attribute__((noinline)) static double calib_region(void)
{
	double t0, t1;

	FP_BEGIN(featprof_calibration, "featprof");
	t0 = now_ns();
	while (now_ns() - t0 < BUSY_NS)
		;
	t1 = now_ns();
	FP_END(featprof_calibration);
	return t1 - t0;
}

/* Mean wall time of one loop iteration; *inside: sum of the regions' own times. */
static double loop_ns(double *inside)
{
	double t0 = now_ns(), in = 0;
	int i;

	for (i = 0; i < LOOPS; i++)
		in += calib_region();
	if (inside)
		*inside = in;
	return (now_ns() - t0) / LOOPS;
}

static int has_trampoline(void)
{
	char line[512];
	int found = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, "[uprobes-trampoline]") != NULL;
	if (f)
		fclose(f);
	return found;
}

/* Bias and pair cost at the target's current attach address (t->use_opt). */
static int measure(struct fp_target *t, int r, double *bias_out, double *pair_out, char *err,
		   size_t errlen)
{
	double biases[BIAS_ROUNDS], on_min = 1e18, off_min = 1e18, bias;
	int i, j, ret;

	/* bias: one attachment, warmed up, then rounds; the median round */
	ret = fp_target__set_region(t, r, 1, err, errlen);
	if (ret)
		return ret;
	loop_ns(NULL);
	for (i = 0; i < BIAS_ROUNDS; i++) {
		struct fp_snapshot *s;
		double inside, b;

		fp_target__reset(t);
		loop_ns(&inside);
		s = fp_target__snapshot(t);
		if (!s || !s->regions[r].count) {
			fp_snapshot__free(s);
			snprintf(err, errlen, "calibration region was not measured");
			return -EIO;
		}
		b = ((double)s->regions[r].incl_ns - inside) / (double)s->regions[r].count;
		fp_snapshot__free(s);
		for (j = i; j > 0 && biases[j - 1] > b; j--)	/* insertion sort */
			biases[j] = biases[j - 1];
		biases[j] = b;
	}
	/* pair cost: the fastest traced round against the fastest untraced one */
	for (i = 0; i < PAIR_ROUNDS; i++) {
		double on, off;

		if (i && (ret = fp_target__set_region(t, r, 1, err, errlen)))
			return ret;
		loop_ns(NULL);	/* warm */
		on = loop_ns(NULL);
		fp_target__set_region(t, r, 0, err, errlen);
		loop_ns(NULL);
		off = loop_ns(NULL);
		on_min = on < on_min ? on : on_min;
		off_min = off < off_min ? off : off_min;
	}
	bias = biases[BIAS_ROUNDS / 2];
	*bias_out = bias > 0 ? bias : 0;
	*pair_out = on_min - off_min > *bias_out ? on_min - off_min : *bias_out;
	return 0;
}

int fp_calibrate(struct fp_daemon_cal *out, enum fp_site_choice site, char *err, size_t errlen)
{
	double bias1 = 0, pair1 = 0, bias5 = 0, pair5 = 0;
	struct fp_target *t;
	int r, i, ret = 0;

	memset(out, 0, sizeof(*out));
	t = fp_target__new(getpid(), 1, err, errlen);
	if (!t)
		return -errno;
	r = fp_catalog__region(t->cat, "featprof_calibration");
	if (r < 0) {
		snprintf(err, errlen, "calibration region missing from the daemon binary");
		ret = -ENOENT;
		goto out;
	}
	/* does the kernel turn a uprobe on our nop5 into a call? */
	ret = fp_target__set_region(t, r, 1, err, errlen);
	if (ret)
		goto out;
	for (i = 0; i < 10; i++)
		calib_region();
	out->kernel_optimizes = has_trampoline();
	fp_target__set_region(t, r, 0, err, errlen);

	if (out->kernel_optimizes && site != FP_SITE_NOP1) {
		ret = measure(t, r, &bias5, &pair5, err, errlen);
		if (ret)
			goto out;
		out->nop5_pair_ns = pair5;
	}
	if (site != FP_SITE_NOP5 || !out->kernel_optimizes) {
		t->use_opt = 0;
		ret = measure(t, r, &bias1, &pair1, err, errlen);
		if (ret)
			goto out;
		out->nop1_pair_ns = pair1;
	}
	/* nop5 only where the kernel optimizes it and it is clearly (10%) cheaper: the
	 * two measure within noise of each other here, and the int3 path did not stall */
	out->optimized = out->kernel_optimizes && site != FP_SITE_NOP1 &&
			 (site == FP_SITE_NOP5 || pair5 < 0.9 * pair1);
	out->cal.bias_ns = out->optimized ? bias5 : bias1;
	out->cal.pair_ns = out->optimized ? pair5 : pair1;
	out->cal.valid = 1;
out:
	fp_target__free(t);
	return ret;
}
