// SPDX-License-Identifier: GPL-2.0
/*
 * Calibration: what a probe costs the traced thread, measured on featprof sites in the
 * daemon's own binary (the same site shape and BPF program as any target's), at each
 * attach point the kernel offers.
 *
 * A probe's cost splits around the timestamp the BPF program takes: before it (trap,
 * uprobe lookup, program up to the clock read) and after it (rest of the program,
 * return to user space). daemon/stats.c subtracts those parts from region and
 * feature-set times. They are measured directly: bpf_ktime_get_ns and
 * clock_gettime(CLOCK_MONOTONIC) read the same clock, so the thread reads the clock
 * right before and right after each site, then reads back the event's timestamp from
 * its own task storage (map lookup by pidfd, outside the timed windows):
 *	begin_pre = K_begin - t_before_begin, begin_post = t_after_begin - K_begin,
 *	end_pre = K_end - t_before_end, end_post = t_after_end - K_end,
 * each less half a clock read (the windows hold one clock_gettime besides the probe).
 * The timed sites belong to an inner region nested in an outer one, with busy work
 * between probes as in a running program (an empty region in a tight loop costs less
 * than one entered after user code ran a while), so the pair cost is what a nested
 * child costs its parent, measured on nested regions.
 *
 * Rounds: ROUNDS rounds of INSTANCES inner regions each, after a warm-up round (on the
 * optimized path the first hit of a site rewrites it). A round's value of a part is the
 * mean over its instances, leaving out instances whose probes took over STALL_FACTOR
 * times the round's median (preemption or an interrupt in the probe: off-CPU time is
 * accounted separately, and a stall is not the probe's cost). The calibration is the
 * median round; its spread, the standard deviation of the round values, is the
 * uncertainty that every compensated figure carries.
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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "calibrate.h"
#include "featprof.h"
#include "featprof.skel.h"
#include "target.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

#define ROUNDS 21
#define OUTER 40		/* outer regions per round */
#define INNER 4			/* inner regions per outer one */
#define INSTANCES (OUTER * INNER)
#define WORK_NS 3000.0		/* busy work between probes */
#define STALL_FACTOR 4.0
#define COLD_ROUNDS 5
#define COLD_INSTANCES 16	/* per cold round, each after a sleep */
#define COLD_SLEEP_US 1000

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
	double part[INSTANCES][FP_C_N];
	double outer_excess[OUTER];	/* outer raw - its inside time */
	int n;
};

/* The timestamp of this thread's latest event, read from its task storage. */
static int last_ts(struct cal_run *c, double *ts)
{
	int ret = fp_target__thread_state(c->t, c->pidfd, c->tid, &c->st);

	if (ret)
		return ret;
	*ts = (double)c->st.last_ts;
	return 0;
}

/* One inner region, its four parts measured into p (see the comment at the top). */
static __always_inline int timed_inner(struct cal_run *c, double *p)
{
	double t0, t1, t2, t3, kb = 0, ke = 0;
	int ret;

	t0 = now_ns();
	FP_BEGIN(featprof_calibration_inner, "featprof");
	t1 = now_ns();
	ret = last_ts(c, &kb);
	busy(WORK_NS);
	t2 = now_ns();
	FP_END(featprof_calibration_inner);
	t3 = now_ns();
	ret = ret ? ret : last_ts(c, &ke);
	p[FP_C_BEGIN_PRE] = kb - t0 - c->half_clock;
	p[FP_C_BEGIN_POST] = t1 - kb - c->half_clock;
	p[FP_C_END_PRE] = ke - t2 - c->half_clock;
	p[FP_C_END_POST] = t3 - ke - c->half_clock;
	return ret;
}

/* One outer region holding INNER timed inner ones. */
__attribute__((noinline)) static int outer_region(struct cal_run *c, int o)
{
	double o0, o1, ke = 0, kob;
	int j, ret = 0;

	FP_BEGIN(featprof_calibration, "featprof");
	o0 = now_ns();
	for (j = 0; j < INNER && !ret; j++) {
		busy(WORK_NS);
		ret = timed_inner(c, c->part[o * INNER + j]);
	}
	busy(WORK_NS);
	o1 = now_ns();
	FP_END(featprof_calibration);
	/* the outer begin's timestamp: the frame at depth 0 of the state read last */
	kob = (double)c->st.f[0].start;
	ret = ret ? ret : last_ts(c, &ke);
	c->outer_excess[o] = (ke - kob) - (o1 - o0);
	return ret;
}

/*
 * One timed region entered right after a sleep: the probe path finds caches (and,
 * in a VM, a CPU) gone cold, as a region entered after a wait does in a program.
 */
__attribute__((noinline)) static int cold_region(struct cal_run *c, int i)
{
	usleep(COLD_SLEEP_US);
	return timed_inner(c, c->part[i]);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double stdev(const double *v, int n)
{
	double m = 0, s = 0;
	int i;

	for (i = 0; i < n; i++)
		m += v[i] / n;
	for (i = 0; i < n; i++)
		s += (v[i] - m) * (v[i] - m);
	return n > 1 ? sqrt(s / (n - 1)) : 0;
}

/* One round: INSTANCES timed inner regions; the round's value of each part. */
static int round_values(struct cal_run *c, double *val, double *outer)
{
	double sums[INSTANCES], lim, cnt = 0;
	int i, k, ret;

	for (i = 0; i < OUTER; i++)
		if ((ret = outer_region(c, i)))
			return ret;
	for (i = 0; i < INSTANCES; i++)
		sums[i] = c->part[i][0] + c->part[i][1] + c->part[i][2] + c->part[i][3];
	lim = STALL_FACTOR * median(sums, INSTANCES);
	memset(val, 0, sizeof(double) * FP_C_N);
	for (i = 0; i < INSTANCES; i++) {
		double s = c->part[i][0] + c->part[i][1] + c->part[i][2] + c->part[i][3];

		if (s > lim)
			continue;
		for (k = 0; k < FP_C_N; k++)
			val[k] += c->part[i][k];
		cnt++;
	}
	for (k = 0; k < FP_C_N; k++)
		val[k] /= cnt;
	*outer = median(c->outer_excess, OUTER);
	return 0;
}

/* The round values of the last calibration, per attach point: the drift tracker's
 * history starts from them (fp_calibrate_track). */
static double last_rounds[FP_AT_N][ROUNDS][FP_C_N];

/* Calibration at the target's current attach point (t->use_opt). */
static int measure(struct fp_target *t, struct cal_run *c, struct fp_calibration *out,
		   char *err, size_t errlen)
{
	double v[ROUNDS][FP_C_N], col[ROUNDS], bias[ROUNDS], pair[ROUNDS], outer[ROUNDS];
	double cold_pair[COLD_ROUNDS], cold_bias[COLD_ROUNDS];
	double dummy[FP_C_N], o;
	uint8_t sel[2] = { 1, 1 };
	int i, k, ret;

	memset(out, 0, sizeof(*out));
	ret = fp_target__set_regions(t, sel, 1, err, errlen);
	if (ret)
		return ret;
	ret = round_values(c, dummy, &o);	/* warm-up; the first hits rewrite nop5 sites */
	for (i = 0; i < ROUNDS && !ret; i++)
		ret = round_values(c, v[i], &outer[i]);
	/* cold: the mean of each round (no stall filter: a cold probe is what we want) */
	for (i = 0; i < COLD_ROUNDS && !ret; i++) {
		double p = 0, b = 0;
		int j;

		for (j = 0; j < COLD_INSTANCES && !ret; j++) {
			const double *q = c->part[j];

			ret = cold_region(c, j);
			p += (q[0] + q[1] + q[2] + q[3]) / COLD_INSTANCES;
			b += (q[FP_C_BEGIN_POST] + q[FP_C_END_PRE]) / COLD_INSTANCES;
		}
		cold_pair[i] = p;
		cold_bias[i] = b;
	}
	fp_target__set_regions(t, sel, 0, err, errlen);
	if (ret) {
		snprintf(err, errlen, "calibration: cannot read the thread's own state: %s",
			 strerror(-ret));
		return ret;
	}
	for (k = 0; k < FP_C_N; k++) {
		for (i = 0; i < ROUNDS; i++)
			col[i] = v[i][k];
		out->part_sd[k] = stdev(col, ROUNDS);
		out->part_ns[k] = median(col, ROUNDS);
	}
	for (i = 0; i < ROUNDS; i++) {
		bias[i] = v[i][FP_C_BEGIN_POST] + v[i][FP_C_END_PRE];
		pair[i] = v[i][0] + v[i][1] + v[i][2] + v[i][3];
		outer[i] -= bias[i];
	}
	out->bias_sd = stdev(bias, ROUNDS);
	out->pair_sd = stdev(pair, ROUNDS);
	out->bias_ns = out->part_ns[FP_C_BEGIN_POST] + out->part_ns[FP_C_END_PRE];
	out->pair_ns = out->part_ns[0] + out->part_ns[1] + out->part_ns[2] + out->part_ns[3];
	out->nested_check_ns = median(outer, ROUNDS);
	out->cold_pair_ns = median(cold_pair, COLD_ROUNDS);
	out->cold_bias_ns = median(cold_bias, COLD_ROUNDS);
	out->rounds = ROUNDS;
	out->instances = INSTANCES;
	out->valid = 1;
	memcpy(last_rounds[t->use_opt ? FP_AT_NOP5 : FP_AT_NOP1], v, sizeof(v));
	return 0;
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

/* Two sites of the inner region, hit by the daemon and then by a forked child. */
__attribute__((noinline)) static void fork_probe(void)
{
	FP_BEGIN(featprof_calibration_inner, "featprof");
	FP_END(featprof_calibration_inner);
}

/*
 * Does a child forked after the optimized path rewrote a site survive hitting it? The
 * kernel maps [uprobes-trampoline] into the process whose thread hit the site and
 * rewrites the site into a call to it; a fork copies the rewritten page but not the
 * mapping (seen on Linux 6.18), so the child faults at its first optimized site. The
 * child catches its own fault and exits with FORK_FAULTED: a handled signal reaches
 * neither the kernel log ("segfault at ...") nor a core-dump handler. 1: it faulted (or
 * could not be run: assume the worst), 0: it lived.
 */
#define FORK_FAULTED 71

static void fork_fault(int sig)
{
	_exit(FORK_FAULTED);
}

static int fork_loses_trampoline(void)
{
	int i, status = 0;
	pid_t p;

	for (i = 0; i < 3; i++)	/* the first hit traps and rewrites the site */
		fork_probe();
	p = fork();
	if (p == 0) {
		struct sigaction sa = { .sa_handler = fork_fault };
		struct rlimit none = { 0, 0 };

		setrlimit(RLIMIT_CORE, &none);	/* in case a signal is not caught */
		sigemptyset(&sa.sa_mask);
		sigaction(SIGSEGV, &sa, NULL);	/* the call lands on an unmapped page */
		sigaction(SIGBUS, &sa, NULL);
		sigaction(SIGILL, &sa, NULL);
		sigaction(SIGTRAP, &sa, NULL);
		fork_probe();
		_exit(0);
	}
	if (p < 0 || waitpid(p, &status, 0) != p)
		return 1;
	return !WIFEXITED(status) || WEXITSTATUS(status) != 0;
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
 * more often). It is freed before a full calibration.
 */
#define TRACK_ROUNDS 3
#define HISTORY 63

static struct {
	struct fp_target *t;
	struct cal_run *c;
	double v[HISTORY][FP_C_N];
	int n, next, point;
} track;

static void track_push(const double *v)
{
	memcpy(track.v[track.next], v, sizeof(track.v[0]));
	track.next = (track.next + 1) % HISTORY;
	if (track.n < HISTORY)
		track.n++;
}

static void track_seed(int point)
{
	int i;

	track.n = track.next = 0;
	track.point = point;
	for (i = 0; i < ROUNDS; i++)
		track_push(last_rounds[point][i]);
}

void fp_calibrate_track_free(void)
{
	if (track.c && track.c->pidfd > 0)
		close(track.c->pidfd);
	free(track.c);
	track.c = NULL;
	fp_target__free(track.t);
	track.t = NULL;
}

/* The tracker's own target, loaded once, its sites at the default point. */
static int track_open(int optimized, char *err, size_t errlen)
{
	int ret;

	track.c = calloc(1, sizeof(*track.c));
	track.t = track.c ? fp_target__new(getpid(), optimized, NULL, NULL, err, errlen) : NULL;
	if (!track.t) {
		ret = track.c ? -errno : -ENOMEM;
		fp_calibrate_track_free();
		return ret;
	}
	track.c->t = track.t;
	track.c->tid = (pid_t)syscall(SYS_gettid);
	track.c->pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	track.c->half_clock = clock_cost() / 2;
	ret = track.c->pidfd < 0 ? -errno : 0;
	if (ret) {
		snprintf(err, errlen, "drift: pidfd_open: %s", strerror(-ret));
		fp_calibrate_track_free();
	}
	return ret;
}

/* The calibration of a point from the history: medians and spreads of its rounds. */
static void track_figure(struct fp_calibration *out)
{
	double col[HISTORY], bias[HISTORY], pair[HISTORY];
	int i, k;

	for (k = 0; k < FP_C_N; k++) {
		for (i = 0; i < track.n; i++)
			col[i] = track.v[i][k];
		out->part_sd[k] = stdev(col, track.n);
		out->part_ns[k] = median(col, track.n);
	}
	for (i = 0; i < track.n; i++) {
		bias[i] = track.v[i][FP_C_BEGIN_POST] + track.v[i][FP_C_END_PRE];
		pair[i] = track.v[i][0] + track.v[i][1] + track.v[i][2] + track.v[i][3];
	}
	out->bias_sd = stdev(bias, track.n);
	out->pair_sd = stdev(pair, track.n);
	out->bias_ns = out->part_ns[FP_C_BEGIN_POST] + out->part_ns[FP_C_END_PRE];
	out->pair_ns = out->part_ns[0] + out->part_ns[1] + out->part_ns[2] + out->part_ns[3];
	out->rounds = track.n;
}

int fp_calibrate_track(struct fp_daemon_cal *cal, char *err, size_t errlen)
{
	int point = cal->optimized ? FP_AT_NOP5 : FP_AT_NOP1, i, ret = 0;
	uint8_t sel[2] = { 1, 1 };
	double v[FP_C_N], o;

	if (!cal->at[point].valid || track.point != point || !track.n) {
		snprintf(err, errlen, "drift: no calibration of the default attach point");
		return -EINVAL;
	}
	if (!track.t && (ret = track_open(cal->optimized, err, errlen)))
		return ret;
	ret = fp_target__set_regions(track.t, sel, 1, err, errlen);
	if (ret)
		return ret;
	ret = round_values(track.c, v, &o);	/* warm-up, as at start */
	for (i = 0; i < TRACK_ROUNDS && !ret; i++) {
		ret = round_values(track.c, v, &o);
		if (!ret)
			track_push(v);
	}
	fp_target__set_regions(track.t, sel, 0, err, errlen);
	if (ret) {
		snprintf(err, errlen, "drift: cannot read the thread's own state: %s",
			 strerror(-ret));
		return ret;
	}
	track_figure(&cal->at[point]);
	return 0;
}

int fp_calibrate(struct fp_daemon_cal *out, enum fp_site_choice site, char *err, size_t errlen)
{
	struct cal_run *c = calloc(1, sizeof(*c));
	double t_start = now_ns(), p1, p5;
	struct fp_target *t = NULL;
	uint8_t sel[2] = { 1, 1 };
	int ret = 0, i;

	memset(out, 0, sizeof(*out));
	fp_calibrate_track_free();	/* its links would double every probe measured here */
	if (!c) {
		snprintf(err, errlen, "calibration: out of memory");
		ret = -ENOMEM;
		goto out;
	}
	t = fp_target__new(getpid(), 1, NULL, NULL, err, errlen);
	if (!t) {
		ret = -errno;
		goto out;
	}
	/* sel[] below selects regions 0 and 1: exactly these two, sorted by name */
	if (t->cat->nregions != 2 || fp_catalog__region(t->cat, "featprof_calibration") != 0 ||
	    fp_catalog__region(t->cat, "featprof_calibration_inner") != 1) {
		snprintf(err, errlen, "calibration regions missing from the daemon binary");
		ret = -ENOENT;
		goto out;
	}
	c->t = t;
	c->tid = (pid_t)syscall(SYS_gettid);
	c->pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (c->pidfd < 0) {
		ret = -errno;
		snprintf(err, errlen, "calibration: pidfd_open: %s", strerror(errno));
		goto out;
	}
	c->half_clock = clock_cost() / 2;

	/* does the kernel turn a uprobe on our nop5 into a call? */
	ret = fp_target__set_regions(t, sel, 1, err, errlen);
	if (ret)
		goto out;
	for (i = 0; i < 4 && !ret; i++)
		ret = outer_region(c, 0);
	out->kernel_optimizes = has_trampoline();
	out->fork_hazard = out->kernel_optimizes && fork_loses_trampoline();
	fp_target__set_regions(t, sel, 0, err, errlen);
	if (ret)
		goto out;

	if (out->kernel_optimizes && site != FP_SITE_NOP1 &&
	    (ret = measure(t, c, &out->at[FP_AT_NOP5], err, errlen)))
		goto out;
	t->use_opt = 0;
	if (site != FP_SITE_NOP5 || !out->kernel_optimizes) {
		ret = measure(t, c, &out->at[FP_AT_NOP1], err, errlen);
		if (ret)
			goto out;
	}
	p1 = out->at[FP_AT_NOP1].pair_ns;
	p5 = out->at[FP_AT_NOP5].pair_ns;
	if (!out->kernel_optimizes) {
		out->optimized = 0;
		snprintf(out->why, sizeof(out->why), "this kernel does not optimize nop5 uprobes");
	} else if (site == FP_SITE_NOP1 || site == FP_SITE_NOP5) {
		out->optimized = site == FP_SITE_NOP5;
		snprintf(out->why, sizeof(out->why), "set by --site%s",
			 site == FP_SITE_NOP5 && out->fork_hazard
				 ? " (children forked by a target will crash at their first site, "
				   "also after the probes are detached: a child keeps the call)"
				 : "");
	} else if (out->fork_hazard) {	/* never a hazard to the target */
		out->optimized = 0;
		snprintf(out->why, sizeof(out->why),
			 "nop5 is %.2fx cheaper, but this kernel does not give a forked child "
			 "the optimized path's trampoline: the child would crash at its first "
			 "site", p1 / p5);
	} else {
		out->optimized = p5 < p1;
		snprintf(out->why, sizeof(out->why),
			 "measured pair cost nop1 %.0f ns, nop5 %.0f ns: "
			 "%s is %.2fx cheaper",
			 p1, p5, p5 < p1 ? "nop5" : "nop1", p5 < p1 ? p1 / p5 : p5 / p1);
	}
	out->runs = 1;
	out->when = (uint64_t)time(NULL);
	out->took_ms = (now_ns() - t_start) / 1e6;
	track_seed(out->optimized ? FP_AT_NOP5 : FP_AT_NOP1);
out:
	if (c && c->pidfd > 0)
		close(c->pidfd);
	free(c);
	fp_target__free(t);
	return ret;
}
