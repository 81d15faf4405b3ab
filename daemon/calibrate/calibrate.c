// SPDX-License-Identifier: GPL-2.0
/*
 * Calibration: what a probe costs the traced thread, measured on featprof sites in the
 * daemon's own binary (the same site shape and BPF program as any target's), at each
 * attach point the kernel offers.
 *
 * A probe's cost splits around the timestamp the BPF program takes: before it (trap,
 * uprobe lookup, program up to the clock read) and after it (rest of the program,
 * return to user space). daemon/util/stats.c subtracts those parts from region and
 * feature-set times. They are measured directly: bpf_ktime_get_ns and
 * clock_gettime(CLOCK_MONOTONIC) read the same clock, so the thread reads the clock
 * right before and right after each site, then reads back the events' timestamps from
 * its own task storage (map lookup by pidfd), where the program keeps the last
 * FP_EV_LOG of them:
 *	begin_pre = K_begin - t_before_begin, begin_post = t_after_begin - K_begin,
 *	end_pre = K_end - t_before_end, end_post = t_after_end - K_end,
 * each less half a clock read (the windows hold one clock_gettime besides the probe).
 * The read is a system call, so it comes after a whole sequence of probes, never between
 * two of them: probes that follow one find the kernel's paths colder than a busy loop
 * leaves them (with a read after each probe, the pair measured 1.65 us where spinning
 * truth targets' probes cost 1.1 us here, and their regions came out over-compensated:
 * -2.4% on 10 us, -20% on 1 us). A program's own code may leave them as cold, though:
 * both are measured (point_figure, "excess").
 * The timed sites belong to an inner region nested in an outer one, with busy work
 * between probes as in a running program (an empty region in a tight loop costs less
 * than one entered after user code ran a while), so the pair cost is what a nested
 * child costs its parent, measured on nested regions.
 *
 * Rounds: ROUNDS rounds of INSTANCES inner regions each, after a warm-up round (on the
 * optimized path the first hit of a site rewrites it). A round's value of a part is the
 * mean over its instances, leaving out those during which the thread was switched out
 * (the kernel charges the events after a switch as cold) and any whose probes took over
 * STALL_NS (nothing but a switch takes that long). Interrupts that hit a probe stay in:
 * the cost of probes in a program is a long-tailed distribution (median 0.46 us, mean
 * 0.6 us, 99th percentile 0.6-1.5 us here with 3-20 us between probes; with 4 ms between
 * them, median 0.9-1.8 us, mean 1.0-2.3 us, 99th percentile 2-11 us, from one run to the
 * next), and a figure holds its mean. The calibration is the median round; its spread,
 * the standard deviation of the round values, is the uncertainty that every compensated
 * figure carries.
 *
 * Gap: a probe costs more the longer the thread ran its own code since its previous
 * probe (measured here, nop1: pair 1.0 us with 3 us of work between probes, 1.2-1.5 us
 * with 50-200 us, 1.7-2.4 us with 500-600 us, 3.3-4.0 us with 1-4 ms; after a sleep 1.6-2.2
 * us), so the kernel charges each event by its gap (bpf/featprof_bpf.h FP_GAP_*, log2
 * steps interpolated between calibration points: daemon/util/stats.c fp_cal_step). Point 0
 * is the rounds above; the other points are measured the same way with their work before
 * each begin and inside each region (fewer instances: they take longer), the cold point
 * with a 1 ms sleep in both places, and FP_CAL_ONCE with none: regions back to back, a
 * clock read between any two probes (the end of one region and the begin of the next;
 * 1.07 us a pair here, as point 0's). Each point is labelled with the gaps its probes
 * had as the kernel saw them (their geometric mean, from the timestamps: 0.55 us at
 * once, 3.6 us for point 0's 3 us of work). Each point's value is its median round, its
 * spread their standard deviation. The points' rounds are measured in turn, not one
 * point after another: a probe's cost here moves between levels from one second to the
 * next (a pair 1.07 or 1.9 us, each steady for a calibration's length), and points
 * measured seconds apart would disagree by that.

 *
 * Attach point: where the kernel optimizes nop5 uprobes (it maps [uprobes-trampoline]
 * into the process after a hit), both points are measured and new targets get the one
 * with the lower pair cost, unless --site says otherwise. Per-machine: a uprobe trap
 * costs ~0.6 us on some machines of this project's kind and ~5 us on others, where the
 * optimized call is ~4x cheaper; on the first kind the two cost the same.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "calibrate_impl.h"
#include "common/err.h"
#include "usdt/featprof_abi.h"
#include "featprof.skel.h"
#include "inproc/ip_calibrate.h"
#include "util/log.h"
#include "common/maps.h"
#include "targets/target.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

#define ROUNDS 21
#define HISTORY_MAX FP_CAL_HISTORY_MAX
#define OUTER 40		/* outer regions per round */
#define INNER 4			/* inner regions per outer one */
#define INSTANCES (OUTER * INNER)
#define WORK_NS 3000.0		/* busy work between probes */
#define STALL_NS 100e3
#define COLD_SLEEP_US 1000
#define GAP_SLEEP (-1.0)	/* a gap that is a sleep: the cold point */
#define GAP_ONCE (-2.0)		/* probes at once: point FP_CAL_ONCE */
#define ONCE_CHAIN 7		/* its regions back to back: 14 events, in the log */

/* Per calibration point (0 is the rounds above): the work before each begin and inside
 * each region; rounds and instances per round. */
static const struct {
	double work_ns;
	int rounds, instances;
} gap_plan[FP_CAL_POINTS] = {
	{ WORK_NS, ROUNDS, INSTANCES },
	{ 60e3, 15, 24 },
	{ 600e3, 9, 12 },
	{ 4e6, 7, 6 },
	{ GAP_ONCE, 15, 4 * (ONCE_CHAIN - 1) },
	{ GAP_SLEEP, 9, 12 },
};
#define GAP_MAX_ROUNDS ROUNDS
_Static_assert(FP_CAL_COLD == FP_CAL_POINTS - 1 && FP_CAL_COLD == FP_CAL_GAPS &&
		       FP_CAL_ONCE == FP_CAL_GAPS - 1, "points");

/* The regions of the daemon's own catalog a calibration enables: its two first. */
#define CAL_REGIONS_MAX 8
static uint8_t cal_sel[CAL_REGIONS_MAX] = { 1, 1 };
/* The function point's: featprof_calibration and the function region, which its own
 * target's catalog appends after the daemon's marked regions (measure_function) */
static uint8_t fn_sel[CAL_REGIONS_MAX];

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void busy(double ns)
{
	double t0 = now_ns();

	while (now_ns() - t0 < ns)
		;
}

struct cal_run {
	struct fp_target *t;
	int pidfd;
	pid_t tid;
	struct fp_tstate st;
	double half_clock;	/* half of one clock_gettime */
	uint32_t sw;		/* the thread's switch-outs at the latest read of its state */
	uint32_t nev;		/* its events then */
	int disturb;		/* a system call after each probe (the disturbed rounds) */
	struct fp_tstate scratch;	/* what that call reads */
	int point;		/* the calibration point being measured */
	double lg_sum[FP_CAL_POINTS];	/* log2 of the gaps of its events measured, summed */
	int lg_n[FP_CAL_POINTS];
	/* per instance its four parts and, [SWITCHED], 1 if the thread was switched out
	 * meanwhile (the kernel would have charged its events as cold) */
	double part[INSTANCES][FP_C_N + 1];
	double outer_excess[OUTER];	/* outer raw - its inside time */
	int n;
	/* function points: the inner region is this function's region, at point fn_at */
	void (*fn)(struct cal_run *c, double *t, double work_ns);
	int fn_at;
};

/*
 * The function regions' functions: featprof_calibration_fn starts with a push (FP_AT_FUNC,
 * as most compiled functions; the kernel emulates it), _fn_step with a sub (FP_AT_FUNC_STEP:
 * single-stepped out of line, as any first instruction but a push, nop or branch). Each
 * calls the body (the clock at its start and end into t[1], t[2], as timed_inner around a
 * marked begin and end; the stack aligned for it) and returns; exported to .dynsym, so
 * that an installed, stripped featprofd has their symbols (Makefile).
 */
__asm__(".text\n"
	".globl featprof_calibration_fn\n"
	".type featprof_calibration_fn, @function\n"
	"featprof_calibration_fn:\n"
	"\tpush %rbx\n"
	"\tcall featprof_calibration_body\n"
	"\tpop %rbx\n"
	"\tret\n"
	".size featprof_calibration_fn, .-featprof_calibration_fn\n"
	".globl featprof_calibration_fn_step\n"
	".type featprof_calibration_fn_step, @function\n"
	"featprof_calibration_fn_step:\n"
	"\tsub $8, %rsp\n"
	"\tcall featprof_calibration_body\n"
	"\tadd $8, %rsp\n"
	"\tret\n"
	".size featprof_calibration_fn_step, .-featprof_calibration_fn_step\n");
void featprof_calibration_fn(struct cal_run *c, double *t, double work_ns);
void featprof_calibration_fn_step(struct cal_run *c, double *t, double work_ns);

/*
 * The thread's state, read from its task storage (a system call, so never between the
 * probes of one measured sequence: it would leave them a colder machine than a program's
 * own code does, and the probes measured so cost more than a program's). n: the events
 * the sequence since the previous read had; 1 when they are all in the state's log (none
 * lost, not more than it keeps), 0 when not (the sequence is not used), or -errno.
 */
static int read_log(struct cal_run *c, uint32_t n)
{
	uint32_t before = c->nev;
	int ret = fp_target__thread_state(c->t, c->pidfd, c->tid, &c->st);

	if (ret)
		return ret;
	c->sw = c->st.switches;
	c->nev = c->st.nev;
	return c->nev - before == n && n <= FP_EV_LOG;
}

/* The timestamp of the sequence's event e of n (0: its first), from the log. */
static double kts(const struct cal_run *c, uint32_t n, uint32_t e)
{
	return (double)c->st.ev_ts[(c->nev - n + e) & (FP_EV_LOG - 1)];
}

#define SWITCHED FP_C_N	/* 1: switched out meanwhile; UNREAD: not in the log */
#define UNREAD 2

/* The four parts of the region whose begin and end are the sequence's events e and e + 1
 * of n, from the clock read before and after each (t[4]) and the log (see the comment at
 * the top), into p; ok 0: not used (SWITCHED). */
static void parts(struct cal_run *c, uint32_t n, uint32_t e, const double t[4], int ok,
		  double *p)
{
	double kb = kts(c, n, e), ke = kts(c, n, e + 1), kp = kts(c, n, e - 1);

	/* the gaps the kernel saw (from the previous event's timestamp: the log holds the
	 * one before the sequence too, once the thread had one) */
	if (ok && ke > kb && kb > kp && c->nev > n) {
		c->lg_sum[c->point] += log2(kb - kp) + log2(ke - kb);
		c->lg_n[c->point] += 2;
	}
	p[FP_C_BEGIN_PRE] = kb - t[0] - c->half_clock;
	p[FP_C_BEGIN_POST] = t[1] - kb - c->half_clock;
	p[FP_C_END_PRE] = ke - t[2] - c->half_clock;
	p[FP_C_END_POST] = t[3] - ke - c->half_clock;
	p[SWITCHED] = ok ? 0 : UNREAD;
}

/* The disturbed rounds' system call after a probe (the thread's state read, as the
 * calibration did after every probe before 2026-11-27), outside the timed windows. */
static void disturb(struct cal_run *c)
{
	if (c->disturb)
		fp_target__thread_state(c->t, c->pidfd, c->tid, &c->scratch);
}

static void gap(double ns);
void featprof_calibration_body(struct cal_run *c, double *t, double work_ns);

__attribute__((visibility("hidden"), used)) void featprof_calibration_body(struct cal_run *c,
									   double *t,
									   double work_ns)
{
	t[1] = now_ns();
	if (work_ns == GAP_ONCE)	/* one clock read between the two probes */
		return;
	disturb(c);
	gap(work_ns);
	t[2] = now_ns();
}

/* A function region's instance: the clock read before the call, in the body, after. */
static void timed_fn(struct cal_run *c, double *t, double work_ns)
{
	t[0] = now_ns();
	c->fn(c, t, work_ns);
	t[3] = now_ns();
}

/* One inner region, the clock read around each of its probes into t[4]. */
static __always_inline void timed_inner(struct cal_run *c, double *t)
{
	if (c->fn) {
		timed_fn(c, t, WORK_NS);
		disturb(c);
		return;
	}
	t[0] = now_ns();
	FP_BEGIN(featprof_calibration_inner, "featprof");
	t[1] = now_ns();
	disturb(c);
	busy(WORK_NS);
	t[2] = now_ns();
	FP_END(featprof_calibration_inner);
	t[3] = now_ns();
	disturb(c);
}

/* One outer region holding INNER timed inner ones, read from the log after its end. */
__attribute__((noinline)) static int outer_region(struct cal_run *c, int o)
{
	const uint32_t n = 2 + 2 * INNER;	/* the outer's begin and end, the inner ones' */
	double o0, o1, t[INNER][4];
	uint32_t sw0 = c->sw;
	int j, ok;

	FP_BEGIN(featprof_calibration, "featprof");
	o0 = now_ns();
	for (j = 0; j < INNER; j++) {
		busy(WORK_NS);
		timed_inner(c, t[j]);
	}
	busy(WORK_NS);
	o1 = now_ns();
	FP_END(featprof_calibration);
	ok = read_log(c, n);
	if (ok < 0)
		return ok;
	for (j = 0; j < INNER; j++) {
		parts(c, n, 1 + 2 * (uint32_t)j, t[j], ok, c->part[o * INNER + j]);
		if (ok && c->sw != sw0)
			c->part[o * INNER + j][SWITCHED] = 1;
	}
	c->outer_excess[o] = ok ? (kts(c, n, n - 1) - kts(c, n, 0)) - (o1 - o0) : NAN;
	return 0;
}

static void gap(double ns)
{
	if (ns == GAP_SLEEP)
		usleep(COLD_SLEEP_US);
	else
		busy(ns);
}

/*
 * Point FP_CAL_ONCE: ONCE_CHAIN inner regions back to back, one clock read between any
 * two probes, so that each probe follows the previous one at once (the end of a region
 * and the begin of the next, an empty region's begin and end). The first begin follows
 * the log's read (a system call) and is left out: ONCE_CHAIN - 1 rows of parts into p.
 */
__attribute__((noinline)) static int timed_once(struct cal_run *c, double (*p)[FP_C_N + 1])
{
	const uint32_t n = 2 * ONCE_CHAIN;
	double t[2 * ONCE_CHAIN + 1];
	uint32_t sw0 = c->sw;
	int k, ok;

	t[0] = now_ns();
	for (k = 0; k < ONCE_CHAIN; k++) {
		if (c->fn) {	/* the body's reads: one at its start, one unused */
			double w[4];

			c->fn(c, w, GAP_ONCE);
			t[2 * k + 1] = w[1];
			t[2 * k + 2] = now_ns();
			continue;
		}
		FP_BEGIN(featprof_calibration_inner, "featprof");
		t[2 * k + 1] = now_ns();
		FP_END(featprof_calibration_inner);
		t[2 * k + 2] = now_ns();
	}
	ok = read_log(c, n);
	if (ok < 0)
		return ok;
	for (k = 1; k < ONCE_CHAIN; k++) {
		double w[4] = { t[2 * k], t[2 * k + 1], t[2 * k + 1], t[2 * k + 2] };

		parts(c, n, 2 * (uint32_t)k, w, ok, p[k - 1]);
		if (ok && c->sw != sw0)
			p[k - 1][SWITCHED] = 1;
	}
	return 0;
}

/* One inner region with work_ns (or a sleep) before its begin and inside it: both of
 * its events have that gap. Its four parts into p, as outer_region's. */
__attribute__((noinline)) static int timed_gap(struct cal_run *c, double work_ns, double *p)
{
	double t[4];
	uint32_t sw0 = c->sw;
	int ok;

	gap(work_ns);
	if (c->fn) {
		timed_fn(c, t, work_ns);
	} else {
		t[0] = now_ns();
		FP_BEGIN(featprof_calibration_inner, "featprof");
		t[1] = now_ns();
		gap(work_ns);
		t[2] = now_ns();
		FP_END(featprof_calibration_inner);
		t[3] = now_ns();
	}
	ok = read_log(c, 2);
	if (ok < 0)
		return ok;
	parts(c, 2, 0, t, ok, p);
	if (ok && c->sw != sw0)
		p[SWITCHED] = 1;
	return 0;
}

/* Each part's mean over c->part[0..n-1] into val, leaving out instances during which the
 * thread was switched out (unless cold: they all were; or none is left) and stalls. */
static void part_means(struct cal_run *c, int n, int cold, double *val)
{
	int i, k, used = 0, pass;

	for (pass = 0; pass < 2 && !used; pass++) {	/* pass 1: the switched ones too */
		memset(val, 0, sizeof(double) * FP_C_N);
		for (i = 0; i < n; i++) {
			const double *p = c->part[i];

			if (p[SWITCHED] == UNREAD || p[0] + p[1] + p[2] + p[3] > STALL_NS ||
			    (p[SWITCHED] && !cold && !pass))
				continue;
			for (k = 0; k < FP_C_N; k++)
				val[k] += p[k];
			used++;
		}
	}
	for (k = 0; k < FP_C_N; k++)
		val[k] = used ? val[k] / used : 0;
}

/* One round: INSTANCES timed inner regions; the round's value of each part. */
static int round_values(struct cal_run *c, double *val, double *outer)
{
	double ex[OUTER];
	int i, n = 0, ret = read_log(c, 0);	/* where the log stands */

	for (i = 0; i < OUTER && ret >= 0; i++)
		ret = outer_region(c, i);
	if (ret < 0)
		return ret;
	part_means(c, INSTANCES, 0, val);
	for (i = 0; i < OUTER; i++)
		if (!isnan(c->outer_excess[i]))
			ex[n++] = c->outer_excess[i];
	*outer = n ? fp_median(ex, n) : 0;
	return 0;
}

/* One round of calibration point b > 0: its instances, the round's value of each part. */
static int gap_round(struct cal_run *c, int b, double *val)
{
	int i, ret = read_log(c, 0);	/* where the log stands */

	for (i = 0; i < gap_plan[b].instances && ret >= 0; i++)
		if (b != FP_CAL_ONCE)
			ret = timed_gap(c, gap_plan[b].work_ns, c->part[i]);
		else if (i % (ONCE_CHAIN - 1) == 0)
			ret = timed_once(c, &c->part[i]);
	ret = ret < 0 ? ret : 0;
	if (!ret)
		part_means(c, gap_plan[b].instances, b == FP_CAL_COLD, val);
	return ret;
}

/*
 * What a probe costs also depends on how cold the program's own code left the kernel's
 * paths, which featprofd cannot see: measured here (point 0, fast-trap machine), a pair
 * cost 1.07 us between probes with only the calibration's busy loop between them and
 * 1.65 us with a system call after each probe (truth.cc, which throws, longjmps and
 * walks many regions between its probes, paid the latter or more; a spinning truth
 * target the former). A program's code between probes is seldom a busy loop, so every
 * warm point is charged the disturbed cost and states the whole difference down to the
 * warm one on top of its spread (charged halfway, truth.cc's compensation removed only
 * 30-56% of its raw error in 2 of 6 fresh-clone runs). DIST_ROUNDS disturbed rounds of
 * point 0 give the difference, per part and attach point (excess); the cold point,
 * after a sleep, is cold either way.
 */
#define DIST_ROUNDS 7
static double excess[FP_AT_N][FP_C_N];

/* The round values of the last calibration, per attach point and calibration point:
 * the drift tracker's history starts from them (fp_calibrate_track). */
static double last_rounds[FP_AT_N][FP_CAL_POINTS][GAP_MAX_ROUNDS][FP_C_N];
/* And each point's gap, as the kernel saw it (the drift tracker keeps them). */
static double last_gap[FP_AT_N][FP_CAL_POINTS];

void fp_calibrate_figure0(struct fp_calibration *out, int at, double (*v)[FP_C_N], int n)
{
	const double *h = excess[at];
	const double *cold = out->point_ns[FP_CAL_COLD];
	double bias[HISTORY_MAX], pair[HISTORY_MAX];
	int i;

	for (i = 0; i < n; i++) {
		bias[i] = v[i][FP_C_BEGIN_POST] + v[i][FP_C_END_PRE];
		pair[i] = v[i][0] + v[i][1] + v[i][2] + v[i][3];
	}
	memcpy(out->part_ns, out->point_ns[0], sizeof(out->part_ns));
	memcpy(out->part_sd, out->point_sd[0], sizeof(out->part_sd));
	out->bias_sd = fp_stdev(bias, n) + h[FP_C_BEGIN_POST] + h[FP_C_END_PRE];
	out->pair_sd = fp_stdev(pair, n) + h[0] + h[1] + h[2] + h[3];
	out->bias_ns = out->part_ns[FP_C_BEGIN_POST] + out->part_ns[FP_C_END_PRE];
	out->pair_ns = out->part_ns[0] + out->part_ns[1] + out->part_ns[2] + out->part_ns[3];
	out->cold_bias_ns = cold[FP_C_BEGIN_POST] + cold[FP_C_END_PRE];
	out->cold_pair_ns = cold[0] + cold[1] + cold[2] + cold[3];
	out->rounds = n;
}

void fp_calibrate_figure(struct fp_calibration *out, int at, int b, double (*v)[FP_C_N], int n)
{
	double col[HISTORY_MAX];
	int i, k;

	for (k = 0; k < FP_C_N; k++) {
		double h = b == FP_CAL_COLD ? 0 : excess[at][k];

		for (i = 0; i < n; i++)
			col[i] = v[i][k];
		out->point_sd[b][k] = fp_stdev(col, n) + h;
		out->point_ns[b][k] = fp_median(col, n) + h;
	}
	out->point_rounds[b] = n;
	out->point_gap_ns[b] = b == FP_CAL_COLD ? 0 : last_gap[at][b];
}

/* The gaps of point b's events measured since the last call: their geometric mean (the
 * kernel steps gaps in log2), or the plan's work where none was seen. */
static double gap_seen(struct cal_run *c, int b)
{
	double g = c->lg_n[b] ? exp2(c->lg_sum[b] / c->lg_n[b]) : gap_plan[b].work_ns;

	c->lg_sum[b] = 0;
	c->lg_n[b] = 0;
	return g;
}

/* Calibration at the target's current attach point (fp_target__shielded). */
static int measure(struct fp_target *t, struct cal_run *c, struct fp_calibration *out,
		   struct fp_err *e)
{
	int at = c->fn ? c->fn_at : fp_target__shielded(t) ? FP_AT_NOP5 : FP_AT_NOP1;
	double (*v)[GAP_MAX_ROUNDS][FP_C_N] = last_rounds[at];
	double outer[ROUNDS], dummy[FP_C_N], o;
	double dist[DIST_ROUNDS][FP_C_N], col[ROUNDS], warm, d;
	uint8_t *sel = c->fn ? fn_sel : cal_sel;
	int i, b, ret;

	memset(out, 0, sizeof(*out));
	ret = fp_target__set_regions(t, sel, 1, e);
	if (ret)
		return ret;
	c->point = 0;
	ret = round_values(c, dummy, &o);	/* warm-up; the first hits rewrite nop5 sites */
	gap_seen(c, 0);
	/* the points' rounds in turn (round i of each point that has one), so that every
	 * point is measured over the whole calibration: a probe's cost moves from one
	 * second to the next, and points measured one after the other would differ by that */
	for (i = 0; i < GAP_MAX_ROUNDS && !ret; i++) {
		for (b = 0; b < FP_CAL_POINTS && !ret; b++) {
			if (i >= gap_plan[b].rounds)
				continue;
			c->point = b;
			ret = b ? gap_round(c, b, v[b][i]) : round_values(c, v[0][i], &outer[i]);
		}
		if (i < DIST_ROUNDS && !ret) {	/* point 0, a system call after each probe */
			c->point = FP_CAL_COLD;	/* its gaps label nothing */
			c->disturb = 1;
			ret = round_values(c, dist[i], &o);
			c->disturb = 0;
		}
	}
	for (b = 0; b < FP_C_N && !ret; b++) {
		for (i = 0; i < ROUNDS; i++)
			col[i] = v[0][i][b];
		warm = fp_median(col, ROUNDS);
		for (i = 0; i < DIST_ROUNDS; i++)
			col[i] = dist[i][b];
		d = fp_median(col, DIST_ROUNDS);
		excess[at][b] = d > warm ? d - warm : 0;
	}
	for (b = 0; b < FP_CAL_POINTS; b++)
		last_gap[at][b] = gap_seen(c, b);
	fp_target__set_regions(t, sel, 0, NULL);	/* a failure to detach changes nothing */
	if (ret)
		return fp_fail(e, -ret, "calibration: cannot read the thread's own state: %s",
			       strerror(-ret));
	for (b = 0; b < FP_CAL_POINTS; b++)
		fp_calibrate_figure(out, at, b, v[b], gap_plan[b].rounds);
	fp_calibrate_figure0(out, at, v[0], ROUNDS);
	for (i = 0; i < ROUNDS; i++)
		outer[i] -= v[0][i][FP_C_BEGIN_POST] + v[0][i][FP_C_END_PRE];
	out->nested_check_ns = fp_median(outer, ROUNDS);
	out->instances = INSTANCES;
	out->valid = 1;
	return 0;
}

static double clock_cost(void)
{
	double t0 = now_ns(), t1;
	int i;

	for (i = 0; i < 999; i++)
		now_ns();
	t1 = now_ns();
	return (t1 - t0) / 1000;
}

/* c's thread is the calling one, of target t: its tid, a pidfd, the clock's cost. */
static int run_init(struct cal_run *c, struct fp_target *t, struct fp_err *e)
{
	c->t = t;
	c->tid = (pid_t)syscall(SYS_gettid);
	c->half_clock = clock_cost() / 2;
	c->pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (c->pidfd < 0)
		return fp_fail(e, errno, "calibration: pidfd_open: %s", strerror(errno));
	return 0;
}

struct cal_run *fp_calibrate_run_new(struct fp_target *t, struct fp_err *e)
{
	struct cal_run *c = calloc(1, sizeof(*c));
	int ret = c ? run_init(c, t, e) : fp_fail(e, ENOMEM, "calibration: out of memory");

	if (ret) {
		fp_calibrate_run_free(c);
		errno = -ret;
		return NULL;
	}
	return c;
}

void fp_calibrate_run_free(struct cal_run *c)
{
	if (c && c->pidfd > 0)
		close(c->pidfd);
	free(c);
}

int fp_calibrate_round(struct cal_run *c, int b, double *v)
{
	double o;
	int ret;

	c->point = b;
	ret = b ? gap_round(c, b, v) : round_values(c, v, &o);
	c->point = 0;
	return ret;
}

int fp_calibrate_plan_rounds(int b)
{
	return gap_plan[b].rounds;
}

double (*fp_calibrate_last_rounds(int at, int b))[FP_C_N]
{
	return last_rounds[at][b];
}

const uint8_t *fp_calibrate_regions(void)
{
	return cal_sel;
}

/*
 * The function attach points (function regions: a uprobe at the entry, a return probe),
 * measured as the others with featprof_calibration_fn or _fn_step as the inner region, in
 * a target of its own (the daemon's catalog and the two functions' definitions). A kernel
 * that cannot attach them leaves them unmeasured: function regions then stay
 * uncompensated, with a warning, and the rest of featprof works as before.
 */
static void measure_functions(struct cal_run *c, struct fp_calibration *at)
{
	static const struct {
		const char *name;
		void (*fn)(struct cal_run *c, double *t, double work_ns);
		int at;
	} fns[] = {
		{ "featprof_calibration_fn", featprof_calibration_fn, FP_AT_FUNC },
		{ "featprof_calibration_fn_step", featprof_calibration_fn_step, FP_AT_FUNC_STEP },
	};
	char exe[4096], def[9000];
	struct fp_err err = { 0 };
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct fp_regdefs defs = { 0 };
	struct fp_target *t = NULL;
	const char *base;
	int ret, k, outer, r;

	/* in the daemon's own file only: no other object's symbols read */
	exe[n > 0 ? n : 0] = 0;
	base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : "*";
	snprintf(def, sizeof(def), "region %s function %s:%s\nregion %s function %s:%s\n",
		 fns[0].name, base, fns[0].name, fns[1].name, base, fns[1].name);
	ret = fp_regdefs__parse(&defs, def, strlen(def), "calibration", &err);
	if (!ret) {
		t = fp_target__new(getpid(), 0, NULL, &defs, &err);
		ret = t ? 0 : -errno;
	}
	outer = t ? fp_catalog__region(fp_target__catalog(t), "featprof_calibration") : -1;
	for (k = 0; k < 2 && !ret; k++) {
		r = fp_catalog__region(fp_target__catalog(t), fns[k].name);
		memset(&at[fns[k].at], 0, sizeof(at[0]));
		memset(fn_sel, 0, sizeof(fn_sel));
		if (fp_target__catalog(t)->nregions > CAL_REGIONS_MAX || outer < 0 || r < 0) {
			ret = fp_fail(&err, ENOENT, "the function %s is not in the daemon "
				      "binary's symbols", fns[k].name);
			break;
		}
		fn_sel[outer] = fn_sel[r] = 1;
		c->t = t;
		c->fn = fns[k].fn;
		c->fn_at = fns[k].at;
		ret = measure(t, c, &at[fns[k].at], &err);
		c->fn = NULL;
	}
	if (ret) {
		memset(&at[FP_AT_FUNC], 0, sizeof(at[0]));
		memset(&at[FP_AT_FUNC_STEP], 0, sizeof(at[0]));
		fp_log(FP_LOG_WARN, "calibration of function regions: %s; their figures stay "
		       "uncompensated", err.msg);
	}
	fp_regdefs__clear(&defs);
	fp_target__free(t);
}

int fp_calibrate_measure(struct fp_daemon_cal *out, enum fp_site_choice site, struct fp_err *e)
{
	struct cal_run *c = calloc(1, sizeof(*c));
	double t_start = now_ns();
	struct fp_target *t = NULL;
	uint8_t *sel = cal_sel;
	int ret = 0, i;

	memset(out, 0, sizeof(*out));
	if (!c) {
		ret = fp_fail(e, ENOMEM, "calibration: out of memory");
		goto out;
	}
	t = fp_target__new(getpid(), 1, NULL, NULL, e);
	if (!t) {
		ret = -errno;
		goto out;
	}
	/* sel[] selects regions 0 and 1: exactly these two, sorted by name first (the
	 * daemon's in-process calibration regions, daemon/inproc/ip_calibrate.c, come after) */
	if (fp_target__catalog(t)->nregions > CAL_REGIONS_MAX ||
	    fp_catalog__region(fp_target__catalog(t), "featprof_calibration") != 0 ||
	    fp_catalog__region(fp_target__catalog(t), "featprof_calibration_inner") != 1) {
		ret = fp_fail(e, ENOENT, "calibration regions missing from the daemon binary");
		goto out;
	}
	ret = run_init(c, t, e);
	if (ret)
		goto out;

	/* does the kernel turn a uprobe on our nop5 into a call? */
	ret = fp_target__set_regions(t, sel, 1, e);
	if (ret)
		goto out;
	for (i = 0; i < 4 && !ret; i++)
		ret = outer_region(c, 0);
	out->kernel_optimizes = fp_calibrate_has_trampoline();
	out->fork_hazard = out->kernel_optimizes && fp_calibrate_fork_loses_trampoline();
	fp_target__set_regions(t, sel, 0, NULL);	/* a failure to detach changes nothing */
	if (ret) {
		fp_fail(e, -ret, "calibration: a round of the daemon's own regions failed: %s",
			strerror(-ret));
		goto out;
	}

	if (out->kernel_optimizes && site != FP_SITE_NOP1 &&
	    (ret = measure(t, c, &out->at[FP_AT_NOP5], e)))
		goto out;
	fp_target__set_shielded(t, false);
	if (site != FP_SITE_NOP5 || !out->kernel_optimizes) {
		ret = measure(t, c, &out->at[FP_AT_NOP1], e);
		if (ret)
			goto out;
	}
	fp_calibrate_choose_point(out, site);
	measure_functions(c, out->at);
	c->t = t;
	ret = fp_ip_calibrate(&out->ip, e);
	if (ret)
		goto out;
	out->runs = 1;
	out->when = (uint64_t)time(NULL);
	out->took_ms = (now_ns() - t_start) / 1e6;
out:
	fp_calibrate_run_free(c);
	fp_target__free(t);
	return ret;
}
