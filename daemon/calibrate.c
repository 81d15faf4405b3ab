// SPDX-License-Identifier: GPL-2.0
/*
 * Calibration on the running machine, at start-up, on featprof sites in the daemon's
 * own binary (the same site shape and the same BPF program as any target):
 *  - optimized uprobes: attach at the shielded nop5, hit it, and look for the
 *    kernel's [uprobes-trampoline] mapping in our own address space. Present: the
 *    kernel rewrote the nop5 into a CALL, so targets get nop5 attach points. Absent:
 *    a nop5 would be single-stepped (slower than the nop1's int3), so targets get nop1.
 *  - bias: the raw inclusive time the kernel measures for an empty region.
 *  - pair cost: the wall time one begin+end pair adds to the thread (loop of empty
 *    regions traced minus the same loop untraced).
 * Preemption and interrupts only ever add time, so each figure is the minimum over
 * short rounds (round means, not single events): the round the CPU was ours.
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

#define ROUNDS 15
#define LOOPS 1000

__attribute__((noinline)) static void calib_empty(void)
{
	FP_BEGIN(featprof_calibration, "featprof");
	FP_END(featprof_calibration);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double loop_ns(void)
{
	double t0 = now_ns();
	int i;

	for (i = 0; i < LOOPS; i++)
		calib_empty();
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

int fp_calibrate(struct fp_daemon_cal *out, char *err, size_t errlen)
{
	double bias = 1e18, on_min = 1e18, off_min = 1e18;
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
	ret = fp_target__set_region(t, r, 1, err, errlen);
	if (ret)
		goto out;
	for (i = 0; i < 100; i++)
		calib_empty();
	out->optimized = has_trampoline();
	if (!out->optimized) {
		fp_target__set_region(t, r, 0, err, errlen);
		t->use_opt = 0;
		ret = fp_target__set_region(t, r, 1, err, errlen);
		if (ret)
			goto out;
	}
	for (i = 0; i < ROUNDS; i++) {
		struct fp_snapshot *s;
		double on, off;

		if (!t->enabled[r] && (ret = fp_target__set_region(t, r, 1, err, errlen)))
			goto out;
		fp_target__reset(t);
		on = loop_ns();
		s = fp_target__snapshot(t);
		if (!s || !s->regions[r].count) {
			fp_snapshot__free(s);
			snprintf(err, errlen, "calibration region was not measured");
			ret = -EIO;
			goto out;
		}
		if ((double)s->regions[r].incl_ns / (double)s->regions[r].count < bias)
			bias = (double)s->regions[r].incl_ns / (double)s->regions[r].count;
		fp_snapshot__free(s);
		fp_target__set_region(t, r, 0, err, errlen);
		off = loop_ns();
		on_min = on < on_min ? on : on_min;
		off_min = off < off_min ? off : off_min;
	}
	out->cal.bias_ns = bias;
	out->cal.pair_ns = on_min - off_min > bias ? on_min - off_min : bias;
	out->cal.valid = 1;
out:
	fp_target__free(t);
	return ret;
}
