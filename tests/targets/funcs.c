// SPDX-License-Identifier: GPL-2.0
/*
 * Plain functions, no featprof.h: the target of function regions (tests/integration/
 * test_functions.py). Each function times its own body with the clock featprof's
 * events use (CLOCK_MONOTONIC), so the program knows what featprof should report:
 * per function its calls and its exclusive time (its body less the windows around the
 * measured functions it calls). Nested (work_outer calls work_leaf), recursive
 * (work_rec), in a shared library (lib_work, libfuncs.c), on several threads, one left
 * by longjmp every time (work_jump: never returns), one that ends its thread (work_exit)
 * and one that ends in a tail call (work_tail jumps to work_leaf).
 *
 * Usage: funcs N_THREADS ROUNDS. Says "ready PID", reads a line on stdin before the work and
 * after it (so that its figures can be read while it lives); prints its truth as one
 * JSON line between the two.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))

struct truth {
	long long calls, excl_ns;
};

/* libfuncs.c */
void lib_work(long ns, struct truth *t);

static struct truth t_leaf, t_outer, t_rec, t_lib, t_jump, t_tail;
static jmp_buf jump_back;

static long long now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void spin(long ns)
{
	long long t0 = now();

	while (now() - t0 < ns)
		;
}

static void add(struct truth *t, long long ns)
{
	__atomic_add_fetch(&t->calls, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&t->excl_ns, ns, __ATOMIC_RELAXED);
}

NOINLINE void work_leaf(long ns)
{
	long long t0 = now();

	spin(ns);
	add(&t_leaf, now() - t0);
}

/* Its own work around n leaves; the windows around the calls are not its own. */
NOINLINE void work_outer(int n, long ns)
{
	long long t0 = now(), inner = 0, c0;
	int i;

	for (i = 0; i < n; i++) {
		spin(ns);
		c0 = now();
		work_leaf(ns);
		inner += now() - c0;
	}
	spin(ns);
	add(&t_outer, now() - t0 - inner);
}

NOINLINE void work_rec(int depth, long ns)
{
	long long t0 = now(), inner = 0, c0;

	spin(ns);
	if (depth > 1) {
		c0 = now();
		work_rec(depth - 1, ns);
		inner += now() - c0;
	}
	add(&t_rec, now() - t0 - inner);
}

/* Ends its thread (pthread_exit: a forced unwind, which stops quietly at the kernel's
 * return trampoline): an instance open at the thread's exit. */
NOINLINE void work_exit(long ns)
{
	spin(ns);
	pthread_exit(NULL);
}

static void *exiter(void *arg)
{
	(void)arg;
	work_exit(5000);
	return NULL;
}

/* Its own work, then a tail call (a jmp: -O2's sibling call) to work_leaf: its instance
 * includes the callee's. Its own time is what it spins before the jump. */
NOINLINE void work_tail(long ns)
{
	long long t0 = now();

	spin(ns);
	add(&t_tail, now() - t0);
	work_leaf(ns);
}

/* Never returns: its time is never a complete instance. */
NOINLINE void work_jump(long ns)
{
	long long t0 = now();

	spin(ns);
	add(&t_jump, now() - t0);
	longjmp(jump_back, 1);
}

static int rounds;

static void *worker(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < rounds; i++) {
		work_leaf(20000);
		work_outer(3, 10000);
		lib_work(15000, &t_lib);
		if (i % 4 == 0)
			work_tail(10000);
	}
	return NULL;
}

static void print(const char *name, const struct truth *t, int last)
{
	printf("\"%s\": {\"calls\": %lld, \"excl_ns\": %lld}%s", name, t->calls, t->excl_ns,
	       last ? "" : ", ");
}

int main(int argc, char **argv)
{
	int nthreads = argc > 1 ? atoi(argv[1]) : 2, i;
	volatile int jumps = 0;
	pthread_t th[16];
	char line[64];

	rounds = argc > 2 ? atoi(argv[2]) : 200;
	if (nthreads < 1 || nthreads > 16 || rounds < 1)
		return 2;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, worker, NULL))
			return 1;
	for (i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < rounds / 10 + 1; i++)	/* 40 us a level: a pair's ~0.5 us spread */
		work_rec(5, 40000);
	if (pthread_create(&th[0], NULL, exiter, NULL) || pthread_join(th[0], NULL))
		return 1;
	/* left by longjmp each time; the next call from here finds the last one dead */
	if (setjmp(jump_back))
		jumps++;
	if (jumps < 5)
		work_jump(5000);
	work_leaf(20000);
	printf("{");
	print("work_leaf", &t_leaf, 0);
	print("work_outer", &t_outer, 0);
	print("work_rec", &t_rec, 0);
	print("lib_work", &t_lib, 0);
	print("work_tail", &t_tail, 0);
	print("work_jump", &t_jump, 1);
	printf(", \"jumps\": %d}\n", jumps);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 0;
	return 0;
}
