// SPDX-License-Identifier: GPL-2.0
/*
 * Closing descriptors whose release waits on the kernel (daemon/util/closer.h).
 *
 * The kernel unregisters a uprobe at the last close of the perf event or BPF link that
 * holds it and then waits for the grace periods of the RCU flavours uprobe handlers run
 * under (uprobe_unregister_sync(): tasks-trace RCU and the uprobes' SRCU), ~0.1 s here
 * for each descriptor. Waiters in the same grace period are released together, so
 * FP_CLOSERS threads closing at once take about as long as one. Threads are started when
 * a descriptor is queued and none is idle, and leave after FP_CLOSER_IDLE_S without work.
 * Signals stay with the main thread (they are blocked before the first thread starts:
 * featprofd reads them from a signalfd).
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "closer.h"
#include "log.h"

#define FP_CLOSERS 128			/* threads at most */
#define FP_CLOSER_STACK (64 * 1024)
#define FP_CLOSER_IDLE_S 2

static struct {
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	int *q;			/* ring of queued descriptors */
	int cap, head, len;
	int threads, idle, busy;
	bool defer_all;
} c = { .mu = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER,
	.done = PTHREAD_COND_INITIALIZER };

static void *closer(void *arg)
{
	struct timespec until;

	(void)arg;
	pthread_mutex_lock(&c.mu);
	for (;;) {
		int fd;

		c.idle++;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += FP_CLOSER_IDLE_S;
		while (!c.len)
			if (pthread_cond_timedwait(&c.work, &c.mu, &until) == ETIMEDOUT && !c.len)
				break;
		c.idle--;
		if (!c.len)
			break;
		fd = c.q[c.head];
		c.head = (c.head + 1) % c.cap;
		c.len--;
		c.busy++;
		pthread_mutex_unlock(&c.mu);
		close(fd);
		pthread_mutex_lock(&c.mu);
		c.busy--;
		if (!c.len && !c.busy)
			pthread_cond_broadcast(&c.done);
	}
	c.threads--;
	pthread_mutex_unlock(&c.mu);
	return NULL;
}

/* Room for one more in the ring; false when memory is short. Under c.mu. */
static bool grow(void)
{
	int cap = c.cap ? 2 * c.cap : 256, i;
	int *q;

	if (c.len < c.cap)
		return true;
	q = malloc(sizeof(int) * (size_t)cap);
	if (!q)
		return false;
	for (i = 0; i < c.len; i++)
		q[i] = c.q[(c.head + i) % c.cap];
	free(c.q);
	c.q = q;
	c.cap = cap;
	c.head = 0;
	return true;
}

void fp_close_later(int fd)
{
	pthread_attr_t pa;
	pthread_t th;
	bool queued;

	if (fd < 0)
		return;
	pthread_mutex_lock(&c.mu);
	queued = grow();
	if (queued) {
		c.q[(c.head + c.len) % c.cap] = fd;
		c.len++;
		if (c.idle < c.len && c.threads < FP_CLOSERS && !pthread_attr_init(&pa)) {
			pthread_attr_setstacksize(&pa, FP_CLOSER_STACK);
			pthread_attr_setdetachstate(&pa, PTHREAD_CREATE_DETACHED);
			if (!pthread_create(&th, &pa, closer, NULL))
				c.threads++;
			pthread_attr_destroy(&pa);
		}
		if (!c.threads) {	/* no thread could be started: closed here after all */
			c.len--;
			queued = false;
		}
		pthread_cond_signal(&c.work);
	}
	pthread_mutex_unlock(&c.mu);
	if (!queued)
		close(fd);
}

void fp_link_destroy_later(struct bpf_link *l)
{
	int fd = l ? bpf_link__fd(l) : -1;

	if (fd >= 0)
		fp_close_later(fcntl(fd, F_DUPFD_CLOEXEC, 0));
	bpf_link__destroy(l);
}

void fp_closer_wait(void)
{
	pthread_mutex_lock(&c.mu);
	while (c.len || c.busy)
		pthread_cond_wait(&c.done, &c.mu);
	pthread_mutex_unlock(&c.mu);
}

void fp_closer_defer_all(void)
{
	c.defer_all = true;
}

bool fp_closer_deferring(void)
{
	return c.defer_all;
}
