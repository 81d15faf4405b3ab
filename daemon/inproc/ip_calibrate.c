// SPDX-License-Identifier: GPL-2.0
/*
 * The in-process runtime's clock and own cost (usdt/featprof_inprocess.h). This file is
 * built with FEATPROF_INPROCESS: featprofd carries the runtime itself, on two regions of
 * its own, and measures it as it measures a probe (daemon/calibrate/calibrate.c): it reads its
 * clock right before and after each site and then the event's timestamp from its own
 * thread block, so the four parts around the timestamp are measured per event. No gate
 * is needed: featprofd raises its own descriptors' directly.
 *
 * Clock: the TSC where the kernel's clocksource is the TSC (the kernel then trusts it to
 * run at one rate on every CPU), its rate measured against CLOCK_MONOTONIC over the
 * calibration (ns = ticks * mult >> FP_IP_SHIFT, written into every target's control
 * block); CLOCK_MONOTONIC otherwise.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/err.h"
#include "usdt/featprof_abi.h"
#include "ip_calibrate.h"

#define IP_ROUNDS 21
#define IP_INSTANCES 400
#define IP_WORK_NS 300.0	/* work between sites: a short region */
#define IP_SHIFT 24

extern struct featprof_ipr featprof_ipr_featprof_ipcal __attribute__((visibility("hidden")));
extern struct featprof_ipr featprof_ipr_featprof_ipcal_inner
	__attribute__((visibility("hidden")));

static struct fp_ip_clock clk;

const struct fp_ip_clock *fp_ip_clock(void)
{
	return &clk;
}

static double mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static unsigned long long tsc(void)
{
	unsigned int lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return (unsigned long long)hi << 32 | lo;
}

static int kernel_uses_tsc(void)
{
	char buf[32] = "";
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");

	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	return !strcmp(buf, "tsc\n");
}

static void busy(double ns)
{
	double t0 = mono_ns();

	while (mono_ns() - t0 < ns)
		;
}

/* One inner region's four parts (ns), the inner nested in an outer one: its begin's
 * timestamp is its frame's start, its end's the start plus the inclusive time the end
 * gave the outer frame (its only child). */
static void timed(const struct featprof_ip_ctl *p, double *part)
{
	const struct featprof_ip_frame *f = featprof_ip_me->f;
	unsigned long long t0, t1, t2, t3, kb, d = featprof_ip_me->depth;
	double incl;

	t0 = __fp_ip_now(p);
	FP_BEGIN(featprof_ipcal_inner, "featprof");
	t1 = __fp_ip_now(p);
	kb = f[d].start;
	busy(IP_WORK_NS);
	t2 = __fp_ip_now(p);
	FP_END(featprof_ipcal_inner);
	t3 = __fp_ip_now(p);
	incl = (double)__fp_ip_ns(p, f[d - 1].child);
	part[0] = (double)__fp_ip_ns(p, kb - t0);
	part[1] = (double)__fp_ip_ns(p, t1 - kb);
	part[2] = incl - (double)__fp_ip_ns(p, t2 - kb);
	part[3] = (double)__fp_ip_ns(p, t3 - kb) - incl;
}

int fp_ip_calibrate(struct fp_calibration *out, struct fp_err *e)
{
	struct featprof_ip_ctl *p = &featprof_ip_ctl;
	double v[IP_ROUNDS][4], col[IP_ROUNDS], t0, t1, half;
	unsigned long long c0, c1, n0;
	int i, j, k;

	memset(out, 0, sizeof(*out));
	clk.clock = kernel_uses_tsc() ? FP_IP_CLOCK_TSC : FP_IP_CLOCK_MONO;
	if (clk.clock == FP_IP_CLOCK_TSC) {	/* the TSC's rate against CLOCK_MONOTONIC */
		t0 = mono_ns();
		c0 = tsc();
		busy(50e6);
		c1 = tsc();
		t1 = mono_ns();
		if (c1 <= c0)
			return fp_fail(e, EINVAL, "in-process clock: the TSC went back");
		clk.shift = IP_SHIFT;
		clk.mult = (uint64_t)llround((t1 - t0) / (double)(c1 - c0) * (1 << IP_SHIFT));
	}
	p->clock = clk.clock;
	p->tsc_mult = clk.mult;
	p->tsc_shift = clk.shift;
	p->configured = 1;
	p->primary = p;	/* as featprofd configures a target */
	featprof_ipr_featprof_ipcal.gate = 1;	/* our own: raised by hand */
	featprof_ipr_featprof_ipcal_inner.gate = 1;
	n0 = __fp_ip_now(p);	/* half a clock read: in each timed window once */
	for (i = 0; i < 999; i++)
		__fp_ip_now(p);
	half = (double)__fp_ip_ns(p, __fp_ip_now(p) - n0) / 1000 / 2;
	for (i = -1; i < IP_ROUNDS; i++) {	/* round -1: warm-up */
		double sum[4] = { 0 };

		for (j = 0; j < IP_INSTANCES; j++) {
			double part[4];

			FP_BEGIN(featprof_ipcal, "featprof");
			busy(IP_WORK_NS);
			timed(p, part);
			busy(IP_WORK_NS);
			FP_END(featprof_ipcal);
			for (k = 0; k < 4; k++)
				sum[k] += part[k] - half;
		}
		for (k = 0; i >= 0 && k < 4; k++)
			v[i][k] = sum[k] / IP_INSTANCES;
	}
	featprof_ipr_featprof_ipcal.gate = 0;
	featprof_ipr_featprof_ipcal_inner.gate = 0;
	for (k = 0; k < 4; k++) {
		for (i = 0; i < IP_ROUNDS; i++)
			col[i] = v[i][k];
		out->part_sd[k] = fp_stdev(col, IP_ROUNDS);
		out->part_ns[k] = fp_median(col, IP_ROUNDS);	/* IP_ROUNDS is odd */
	}
	out->bias_ns = out->part_ns[1] + out->part_ns[2];
	out->pair_ns = out->part_ns[0] + out->part_ns[1] + out->part_ns[2] + out->part_ns[3];
	out->bias_sd = out->part_sd[1] + out->part_sd[2];
	out->pair_sd = out->part_sd[0] + out->part_sd[1] + out->part_sd[2] + out->part_sd[3];
	out->rounds = IP_ROUNDS;
	out->instances = IP_INSTANCES;
	out->valid = 1;
	return 0;
}
