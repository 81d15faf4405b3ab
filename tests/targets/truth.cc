// SPDX-License-Identifier: GPL-2.0
/*
 * Known-answer target for the integration tests. Every region busy-waits to a
 * clock_gettime deadline, and the target measures each region's inclusive time itself
 * (right after its begin site, right before its end site): the ground truth featprof is
 * held against. Waits for a line on stdin before it starts, so the test can enable
 * first; prints the truth as one JSON object at the end.
 *
 * usage: truth MODE [ITERATIONS] [THREADS]
 *   accuracy   flat, nested, recursive, several exits, longjmp, C++ exception (default)
 *   inside     a thread is inside a region when the test enables it
 *   open       a region is disabled while a thread is inside it, then "tick" runs
 *   exit       a thread exits inside a region
 *   redzone    leaf function with live red-zone data across its sites, N times
 *   spin       short regions forever (for bad-input tests)
 */
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <pthread.h>
#include <stdexcept>
#include <unistd.h>

#include "featprof.h"

static uint64_t now_ns()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void busy_us(unsigned us)
{
	uint64_t end = now_ns() + us * 1000ULL;

	while (now_ns() < end)
		;
}

enum { R_FLAT, R_OUTER, R_INNER, R_REC, R_MULTI, R_JOUT, R_JIN, R_SCOPED, R_N };
static const char *const names[R_N] = { "flat", "outer", "inner", "rec", "multi",
					 "jmp_outer", "jmp_inner", "scoped" };

struct truth {
	uint64_t incl[R_N], excl[R_N], count[R_N];
};

static void add(struct truth *t, int r, uint64_t incl, uint64_t children)
{
	t->incl[r] += incl;
	t->excl[r] += incl - children;
	t->count[r]++;
}

/* Recursion: each level 150 us of its own, then the next level inside. */
static uint64_t rec(struct truth *t, int depth)
{
	uint64_t t0, child = 0, t1;

	FP_BEGIN(rec, "C");
	t0 = now_ns();
	busy_us(150);
	if (depth > 1)
		child = rec(t, depth - 1);
	t1 = now_ns();
	FP_END(rec);
	add(t, R_REC, t1 - t0, child);
	return t1 - t0;
}

/* Records the end of the truth interval; declared after FP_SCOPE, destroyed before it. */
struct stamp {
	uint64_t *at;
	~stamp() { *at = now_ns(); }
};

static __attribute__((noinline)) void scoped_throw(uint64_t *t0, uint64_t *t1)
{
	FP_SCOPE(scoped, "D");
	stamp s = { t1 };
	*t0 = now_ns();
	busy_us(400);
	throw std::runtime_error("leave the scope by an exception");
}

static void one_iteration(struct truth *t, long i)
{
	uint64_t a, b, c, d;
	static thread_local jmp_buf jb;

	/* flat: 600 us */
	FP_BEGIN(flat, "A");
	a = now_ns();
	busy_us(600);
	b = now_ns();
	FP_END(flat);
	add(t, R_FLAT, b - a, 0);

	/* nested: outer 240 us + inner 320 us + outer 160 us */
	FP_BEGIN(outer, "B");
	a = now_ns();
	busy_us(240);
	FP_BEGIN(inner, "A", "B");
	c = now_ns();
	busy_us(320);
	d = now_ns();
	FP_END(inner);
	add(t, R_INNER, d - c, 0);
	busy_us(160);
	b = now_ns();
	FP_END(outer);
	add(t, R_OUTER, b - a, d - c);

	/* recursion, three levels */
	rec(t, 3);

	/* several exits */
	FP_BEGIN(multi, "A");
	a = now_ns();
	if (i & 1) {
		busy_us(280);
		b = now_ns();
		FP_END(multi);
	} else {
		busy_us(360);
		b = now_ns();
		FP_END(multi);
	}
	add(t, R_MULTI, b - a, 0);

	/* longjmp out of jmp_inner; the landing path ends it. Volatile: locals changed
	 * between setjmp and longjmp are otherwise indeterminate after the jump. */
	{
		volatile uint64_t ja, jc, jd;

		FP_BEGIN(jmp_outer, "C");
		ja = now_ns();
		if (setjmp(jb) == 0) {
			FP_BEGIN(jmp_inner, "C", "D");
			jc = now_ns();
			busy_us(200);
			longjmp(jb, 1);
		}
		jd = now_ns(); /* the region ends on the landing path */
		FP_END(jmp_inner);
		add(t, R_JIN, jd - jc, 0);
		busy_us(150);
		b = now_ns();
		FP_END(jmp_outer);
		add(t, R_JOUT, b - ja, jd - jc);
	}

	/* an exception through an FP_SCOPE */
	try {
		scoped_throw(&a, &b);
	} catch (const std::exception &) {
		add(t, R_SCOPED, b - a, 0);
	}
}

struct worker_arg {
	long iters;
	struct truth t;
};

static void *worker(void *p)
{
	struct worker_arg *w = (struct worker_arg *)p;

	/* a pause between iterations: 4 threads must not oversubscribe 2 cores, where a
	 * thread that loses its CPU inside a probe makes a region look longer */
	for (long i = 0; i < w->iters; i++) {
		one_iteration(&w->t, i);
		usleep(30000);
	}
	return NULL;
}

static void wait_go()
{
	char line[16];

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		exit(3);
}

static void *inside_thread(void *p)
{
	FP_BEGIN(long_region, "L");
	usleep(1500000); /* the test enables while we are here */
	FP_END(long_region);
	FP_BEGIN(tick, "L");
	busy_us(100);
	FP_END(tick);
	return p;
}

static void *exit_thread(void *p)
{
	FP_BEGIN(long_region, "L");
	busy_us(100);
	pthread_exit(p); /* never ends the region */
}

/* Fills -8..-128(%rsp) with v, runs both sites, returns how many slots changed. */
static __attribute__((noinline)) unsigned long rz_leaf(uint64_t v)
{
	unsigned long bad = 0;
	uint64_t got;

	__asm__ __volatile__(".irp k,8,16,24,32,40,48,56,64,72,80,88,96,104,112,120,128\n"
			     "mov %0, -\\k(%%rsp)\n"
			     ".endr\n"
			     :
			     : "r"(v)
			     : "memory");
	FP_BEGIN(redzone, "RedZone");
	FP_END(redzone);
#define RZ_CHECK(k)                                                                        \
	__asm__ __volatile__("mov -" #k "(%%rsp), %0" : "=r"(got) : : "memory");           \
	bad += got != v;
	RZ_CHECK(8) RZ_CHECK(16) RZ_CHECK(24) RZ_CHECK(32) RZ_CHECK(40) RZ_CHECK(48)
	RZ_CHECK(56) RZ_CHECK(64) RZ_CHECK(72) RZ_CHECK(80) RZ_CHECK(88) RZ_CHECK(96)
	RZ_CHECK(104) RZ_CHECK(112) RZ_CHECK(120) RZ_CHECK(128)
	return bad;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "accuracy";
	long iters = argc > 2 ? atol(argv[2]) : 20;
	int nthreads = argc > 3 ? atoi(argv[3]) : 4;

	if (!strcmp(mode, "accuracy")) {
		struct worker_arg w[16];
		pthread_t tid[16];
		struct truth sum;

		if (nthreads < 1 || nthreads > 16)
			return 2;
		memset(w, 0, sizeof(w));
		memset(&sum, 0, sizeof(sum));
		wait_go();
		for (int i = 0; i < nthreads; i++) {
			w[i].iters = iters;
			pthread_create(&tid[i], NULL, worker, &w[i]);
		}
		for (int i = 0; i < nthreads; i++) {
			pthread_join(tid[i], NULL);
			for (int r = 0; r < R_N; r++) {
				sum.incl[r] += w[i].t.incl[r];
				sum.excl[r] += w[i].t.excl[r];
				sum.count[r] += w[i].t.count[r];
			}
		}
		printf("{\"truth\":{");
		for (int r = 0; r < R_N; r++)
			printf("%s\"%s\":{\"count\":%llu,\"inclusive_ns\":%llu,\"exclusive_ns\":%llu}",
			       r ? "," : "", names[r], (unsigned long long)sum.count[r],
			       (unsigned long long)sum.incl[r], (unsigned long long)sum.excl[r]);
		printf("}}\n");
	} else if (!strcmp(mode, "inside") || !strcmp(mode, "open") || !strcmp(mode, "exit")) {
		pthread_t tid;

		wait_go();
		pthread_create(&tid, NULL, strcmp(mode, "exit") ? inside_thread : exit_thread, NULL);
		pthread_join(tid, NULL);
		printf("done\n");
	} else if (!strcmp(mode, "redzone")) {
		unsigned long corrupted = 0;

		wait_go();
		for (long i = 0; i < iters; i++)
			corrupted += rz_leaf((uint64_t)i * 0x9e3779b97f4a7c15ULL + 1) ? 1 : 0;
		printf("{\"calls\":%ld,\"corrupted\":%lu}\n", iters, corrupted);
		return corrupted ? 1 : 0;
	} else if (!strcmp(mode, "spin")) {
		wait_go();
		for (;;) {
			FP_BEGIN(spin, "S");
			busy_us(20);
			FP_END(spin);
			usleep(1000);
		}
	} else {
		fprintf(stderr, "truth: unknown mode %s\n", mode);
		return 2;
	}
	fflush(stdout);
	return 0;
}
