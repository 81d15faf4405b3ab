// SPDX-License-Identifier: GPL-2.0
/*
 * The sampler thread of `featprof sample --remote`: one thread of featprofd that, at
 * each tick of every remotely sampled target, runs that target's task iterator
 * (fp_sample_remote in bpf/featprof.bpf.c: creating an iterator instance and reading it
 * to the end runs the program once per thread of the target). The target's threads are
 * never interrupted: the cost of a tick falls on the CPU this thread runs on.
 *
 * Ticks: on average every 1e9/hz ns, each interval drawn uniformly from 0.5 to 1.5
 * periods, so that the ticks cannot lock in phase with a target that wakes
 * periodically; the thread's timer slack is 1 ns (its wake-ups are not deferred to
 * coalesce with other timers). A tick that comes later than the next one was due (the
 * daemon's CPU was busy) is taken once and the ticks passed over are counted as missed:
 * a sample stands for a period of CPU time only while ticks are kept, so the report says
 * how many were.
 *
 * Its own thread, not the daemon's event loop: a client's request (an attach takes
 * ~100 ms) must not delay ticks. SCHED_FIFO priority 1 where permitted (CAP_SYS_NICE):
 * woken on a CPU where a target thread runs, the sampler displaces it at once, and the
 * tick sees the thread as it was (fp_sample_switch notes whom it displaced); a normal
 * thread would wait there until the target thread's slice ends or it sleeps, and samples
 * would fall at the ends of bursts (measured on the truth target: its share of A 6.6
 * points off at 997 Hz, 4.4 SE, and 40% of its CPU time unsampled; 2.2 points, 1.8 SE
 * with SCHED_FIFO). Where it is not permitted the report says so (sampler_realtime).
 * The list of entries is shared under one mutex, held while a tick runs, so
 * fp_sampler_remove returns only once no tick of that entry runs.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "sample_impl.h"

struct fp_sampler_entry {
	struct fp_sampler_entry *next;
	int fd;			/* a dup of the iterator link's fd */
	volatile uint64_t *cpus;	/* its program's sample_cpus[4] (the object's bss) */
	uint64_t period_ns;
	uint64_t due_ns;
	uint64_t ticks, missed;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv;	/* CLOCK_MONOTONIC: a new entry, or the thread started */
static struct fp_sampler_entry *entries;
static pid_t sampler_tid;
static int rt;			/* the thread runs SCHED_FIFO */
static cpu_set_t allowed;	/* the CPUs it may run on, as it started */
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

/* The next interval: period * U[0.5, 1.5) (xorshift64*, under mu). */
static uint64_t interval(uint64_t period)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return period / 2 + (uint64_t)((double)((rng * 0x2545f4914f6cdd1dULL) >> 11) /
				       9007199254740992.0 * (double)period);
}

static void tick(struct fp_sampler_entry *e, uint64_t now, uint64_t *mask)
{
	char buf[64];
	int fd, k;

	for (k = 0; k < 4; k++)
		e->cpus[k] = 0;
	fd = bpf_iter_create(e->fd);
	if (fd >= 0) {	/* the program writes nothing: one read runs it over every thread */
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		close(fd);
	}
	for (k = 0; k < 4; k++)
		mask[k] |= e->cpus[k];
	e->ticks++;
	e->due_ns += interval(e->period_ns);
	if (e->due_ns <= now) {	/* fell behind: start again from now */
		e->missed += (now - e->due_ns) / e->period_ns + 1;
		e->due_ns = now + interval(e->period_ns);
	}
}

/* After a tick: if a sampled thread ran on this thread's CPU and some CPU it may use ran
 * none, move there (a SCHED_FIFO thread is woken where it last ran, and would displace
 * the target's thread at every tick). mask: the CPUs that ran one. */
static void place(const uint64_t *mask)
{
	int cur = sched_getcpu(), c;
	cpu_set_t one;

	if (cur < 0 || cur >= 256 || !(mask[cur >> 6] & (1ULL << (cur & 63))))
		return;
	for (c = 0; c < 256 && c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &allowed) || (mask[c >> 6] & (1ULL << (c & 63))))
			continue;
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		sched_setaffinity(0, sizeof(one), &one);
		return;
	}
}

static void *run(void *arg)
{
	struct sched_param sp = { .sched_priority = 1 };

	(void)arg;
	prctl(PR_SET_TIMERSLACK, 1UL);
	pthread_mutex_lock(&mu);
	rt = !pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	sched_getaffinity(0, sizeof(allowed), &allowed);
	sampler_tid = (pid_t)syscall(SYS_gettid);
	pthread_cond_broadcast(&cv);
	for (;;) {
		struct fp_sampler_entry *e;
		uint64_t due = UINT64_MAX, now;
		struct timespec ts;

		for (e = entries; e; e = e->next)
			due = e->due_ns < due ? e->due_ns : due;
		now = fp_mono_ns();
		if (due > now) {
			if (due == UINT64_MAX) {
				pthread_cond_wait(&cv, &mu);
				continue;
			}
			ts.tv_sec = (time_t)(due / 1000000000ULL);
			ts.tv_nsec = (long)(due % 1000000000ULL);
			pthread_cond_timedwait(&cv, &mu, &ts);
			continue;
		}
		uint64_t mask[4] = { 0 };

		for (e = entries; e; e = e->next)
			if (e->due_ns <= now)
				tick(e, now, mask);
		place(mask);
	}
	return NULL;
}

static int start(void)
{
	static int started;
	pthread_condattr_t ca;
	pthread_attr_t pa;
	pthread_t th;
	int ret;

	if (started)
		return 0;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_attr_init(&pa);
	pthread_attr_setdetachstate(&pa, PTHREAD_CREATE_DETACHED);
	ret = pthread_create(&th, &pa, run, NULL);
	pthread_attr_destroy(&pa);
	if (ret)
		return -ret;
	started = 1;
	return 0;
}

pid_t fp_sampler_tid(void)
{
	pid_t tid;

	if (start())
		return 0;
	pthread_mutex_lock(&mu);
	while (!sampler_tid)
		pthread_cond_wait(&cv, &mu);
	tid = sampler_tid;
	pthread_mutex_unlock(&mu);
	return tid;
}

struct fp_sampler_entry *fp_sampler_add(int link_fd, volatile uint64_t *cpus, int hz)
{
	struct fp_sampler_entry *e;

	if (hz <= 0 || !fp_sampler_tid()) {
		errno = hz <= 0 ? EINVAL : EAGAIN;
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->fd = fcntl(link_fd, F_DUPFD_CLOEXEC, 0);
	if (e->fd < 0) {
		free(e);
		return NULL;
	}
	e->period_ns = 1000000000ULL / (uint64_t)hz;
	e->cpus = cpus;
	pthread_mutex_lock(&mu);
	e->due_ns = fp_mono_ns() + interval(e->period_ns);
	e->next = entries;
	entries = e;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	return e;
}

int fp_sampler_realtime(void)
{
	int r;

	pthread_mutex_lock(&mu);
	r = rt;
	pthread_mutex_unlock(&mu);
	return r;
}

void fp_sampler_counts(struct fp_sampler_entry *e, uint64_t *ticks, uint64_t *missed)
{
	pthread_mutex_lock(&mu);
	*ticks = e->ticks;
	*missed = e->missed;
	pthread_mutex_unlock(&mu);
}

void fp_sampler_remove(struct fp_sampler_entry *e)
{
	struct fp_sampler_entry **p;

	if (!e)
		return;
	pthread_mutex_lock(&mu);
	for (p = &entries; *p && *p != e; p = &(*p)->next)
		;
	if (*p)
		*p = e->next;
	pthread_mutex_unlock(&mu);
	close(e->fd);
	free(e);
}
