// SPDX-License-Identifier: GPL-2.0
/*
 * Known-answer target for the integration tests. Every region busy-waits to a
 * clock_gettime deadline, and the target measures each region's time itself: right
 * after its begin site and right before its end site, less the time the probes of
 * regions nested in it took (timestamps taken right before and after each nested site).
 * That is what the region would take untraced, the ground truth featprof's compensated
 * figures are held against. A feature's truth is the time of its outermost regions.
 *
 * Protocol on stdin/stdout: prints "ready PID", waits for a line; runs one warm-up
 * iteration per thread (first hits of optimized uprobe sites rewrite them, see
 * docs/TRACING.md), prints "warm", waits for a line, runs the measured iterations and
 * prints the truth as one JSON object.
 *
 * usage: truth MODE [ITERATIONS] [THREADS] [SCALE]
 * With TRUTH_HOLD set, accuracy and offcpu wait for one more line after the truth.
 *   accuracy   flat, nested, recursive, several exits, longjmp, C++ exception (default);
 *              busy times are multiplied by SCALE (a float, default 1)
 *   offcpu     a region spins 1 ms of thread CPU time, then sleeps 1 ms (SCALE
 *              multiplies both); truth of CPU, runnable and sleeping time per region
 *              from CLOCK_THREAD_CPUTIME_ID and /proc/thread-self/schedstat
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

static double scale = 1.0;

/* What one clock read costs here (the median of back-to-back reads): every truth
 * interval misses about one, and every probe window holds one. */
static uint64_t clock_cost_ns()
{
	uint64_t d[101];

	for (int i = 0; i < 101; i++) {
		uint64_t t0 = now_ns();

		d[i] = now_ns() - t0;
	}
	for (int i = 1; i < 101; i++)	/* insertion sort: 101 values */
		for (int j = i; j > 0 && d[j] < d[j - 1]; j--) {
			uint64_t x = d[j];

			d[j] = d[j - 1];
			d[j - 1] = x;
		}
	return d[50];
}

static void busy_us(unsigned us)
{
	uint64_t end = now_ns() + (uint64_t)(us * 1000.0 * scale);

	while (now_ns() < end)
		;
}

enum { R_FLAT, R_OUTER, R_INNER, R_REC, R_MULTI, R_JOUT, R_JIN, R_SCOPED, R_N };
static const char *const names[R_N] = { "flat", "outer", "inner", "rec", "multi",
					 "jmp_outer", "jmp_inner", "scoped" };

enum { F_A, F_B, F_C, F_D, F_N };
static const char *const fnames[F_N] = { "A", "B", "C", "D" };

struct truth {
	uint64_t incl[R_N], excl[R_N], count[R_N];
	uint64_t feat[F_N];
	/* the probes as this thread saw them: time around the sites of flat and of the
	 * nested regions (each window also holds one clock read), and how many */
	uint64_t probe_ns, probes;
};

static void add(struct truth *t, int r, uint64_t incl, uint64_t children)
{
	t->incl[r] += incl;
	t->excl[r] += incl - children;
	t->count[r]++;
}

/* Time of a nested probe: the window around its site, as seen from the parent. */
#define NESTED(site, win)                                                                  \
	do {                                                                               \
		uint64_t _w0 = now_ns(), _w;                                               \
		site;                                                                      \
		_w = now_ns() - _w0;                                                       \
		(win) += _w;                                                               \
		t->probe_ns += _w;                                                         \
		t->probes++;                                                               \
	} while (0)

/* Recursion: each level 150 us of its own, then the next level inside. Returns the
 * level's untraced time; *win gets the time of its own probes and its descendants'. */
static uint64_t rec(struct truth *t, int depth, uint64_t *win)
{
	uint64_t t0, t1, child = 0, cwin = 0, incl;

	NESTED(FP_BEGIN(rec, "C"), *win);
	t0 = now_ns();
	busy_us(150);
	if (depth > 1)
		child = rec(t, depth - 1, &cwin);
	t1 = now_ns();
	NESTED(FP_END(rec), *win);
	incl = t1 - t0 - cwin;
	add(t, R_REC, incl, child);
	*win += cwin;
	return incl;
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
	uint64_t a, b, c, d, win, x, w0;
	static thread_local jmp_buf jb;

	/* flat: 600 us; its probes' windows too, outside its truth */
	w0 = now_ns();
	FP_BEGIN(flat, "A");
	a = now_ns();
	busy_us(600);
	b = now_ns();
	FP_END(flat);
	x = now_ns();
	t->probe_ns += (a - w0) + (x - b);
	t->probes += 2;
	add(t, R_FLAT, b - a, 0);
	t->feat[F_A] += b - a;

	/* nested: outer 240 us + inner 320 us + outer 160 us */
	win = 0;
	FP_BEGIN(outer, "B");
	a = now_ns();
	busy_us(240);
	NESTED(FP_BEGIN(inner, "A", "B"), win);
	c = now_ns();
	busy_us(320);
	d = now_ns();
	NESTED(FP_END(inner), win);
	add(t, R_INNER, d - c, 0);
	busy_us(160);
	b = now_ns();
	FP_END(outer);
	add(t, R_OUTER, b - a - win, d - c);
	t->feat[F_A] += d - c;
	t->feat[F_B] += b - a - win;

	/* recursion, three levels */
	win = 0;
	t->feat[F_C] += rec(t, 3, &win);

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
	t->feat[F_A] += b - a;

	/* longjmp out of jmp_inner; the landing path ends it. Volatile: locals changed
	 * between setjmp and longjmp are otherwise indeterminate after the jump. */
	{
		volatile uint64_t ja, jc, jd, jw;

		FP_BEGIN(jmp_outer, "C");
		ja = now_ns();
		if (setjmp(jb) == 0) {
			jw = now_ns();
			FP_BEGIN(jmp_inner, "C", "D");
			jc = now_ns();
			jw = jc - jw;	/* the begin's window */
			busy_us(200);
			longjmp(jb, 1);
		}
		jd = now_ns(); /* the region ends on the landing path */
		FP_END(jmp_inner);
		x = now_ns();
		add(t, R_JIN, jd - jc, 0);
		busy_us(150);
		b = now_ns();
		FP_END(jmp_outer);
		add(t, R_JOUT, b - ja - jw - (x - jd), jd - jc);
		t->feat[F_C] += b - ja - jw - (x - jd);
		t->feat[F_D] += jd - jc;
	}

	/* an exception through an FP_SCOPE */
	try {
		scoped_throw(&a, &b);
	} catch (const std::exception &) {
		add(t, R_SCOPED, b - a, 0);
		t->feat[F_D] += b - a;
	}
}

struct worker_arg {
	long iters;
	struct truth t;
	/* offcpu mode: per region, wall, thread CPU, runnable (schedstat run_delay) */
	uint64_t wall, cpu, runnable, count;
};

static pthread_barrier_t warm_barrier;
static int offcpu_mode, pause_between;

static uint64_t thread_cpu_ns()
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Time this thread spent runnable, waiting for a CPU: schedstat's second field. */
static uint64_t run_delay_ns()
{
	unsigned long long run = 0, delay = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "re");

	if (!f || fscanf(f, "%llu %llu", &run, &delay) != 2)
		exit(4);
	fclose(f);
	return delay;
}

/* 1 ms of this thread's CPU time, then 1 ms asleep (times SCALE). */
static void cpu_then_sleep(struct worker_arg *w)
{
	uint64_t w0, c0, r0, w1, c1, r1, want = (uint64_t)(1e6 * scale);
	struct timespec ts = { 0, (long)(1e6 * scale) };

	FP_BEGIN(cpu_sleep, "Work");
	w0 = now_ns();
	c0 = thread_cpu_ns();
	r0 = run_delay_ns();
	while (thread_cpu_ns() - c0 < want)
		;
	nanosleep(&ts, NULL);
	r1 = run_delay_ns();
	c1 = thread_cpu_ns();
	w1 = now_ns();
	FP_END(cpu_sleep);
	w->wall += w1 - w0;
	w->cpu += c1 - c0;
	w->runnable += r1 - r0;
	w->count++;
}

static void *worker(void *p)
{
	struct worker_arg *w = (struct worker_arg *)p;
	struct truth warm;

	memset(&warm, 0, sizeof(warm));
	if (offcpu_mode) {
		cpu_then_sleep(w);
		w->wall = w->cpu = w->runnable = w->count = 0;
	} else {
		one_iteration(&warm, 0);
	}
	pthread_barrier_wait(&warm_barrier);	/* main prints "warm" */
	pthread_barrier_wait(&warm_barrier);	/* and lets us go on */
	/* accuracy: a pause between iterations, so that the threads rarely oversubscribe
	 * the CPUs (a thread preempted inside a probe makes a region look longer) */
	for (long i = 0; i < w->iters; i++) {
		if (offcpu_mode) {
			cpu_then_sleep(w);
		} else {
			one_iteration(&w->t, i);
			/* Several threads pause between iterations; one thread never sleeps:
			 * the first probes after a 30 ms sleep cost far more than the
			 * calibration's cold point (a 1 ms sleep) says, on some machines for a
			 * millisecond after the wake-up (here the first begin's window 6-12 us
			 * against a 3.4 us cold pair), and one thread need not make room. */
			if (pause_between)
				usleep(30000);
			/* outside any region: a probe right after a wake-up costs more than
			 * the calibrated one (cold caches; docs/TRACING.md measures it) */
			busy_us(50);
		}
	}
	return NULL;
}

static void wait_line()
{
	char line[16];

	if (!fgets(line, sizeof(line), stdin))
		exit(3);
}

static void wait_go()
{
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	wait_line();
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

	if (argc > 4)
		scale = atof(argv[4]);
	offcpu_mode = !strcmp(mode, "offcpu");
	if (!strcmp(mode, "accuracy") || offcpu_mode) {
		struct worker_arg w[64];
		pthread_t tid[64];
		struct truth sum;
		uint64_t wall = 0, cpu = 0, runnable = 0, count = 0;

		if (nthreads < 1 || nthreads > 64 || !(scale > 0))
			return 2;
		memset(w, 0, sizeof(w));
		memset(&sum, 0, sizeof(sum));
		pthread_barrier_init(&warm_barrier, NULL, (unsigned)nthreads + 1);
		pause_between = nthreads > 1;
		wait_go();
		for (int i = 0; i < nthreads; i++) {
			w[i].iters = iters;
			pthread_create(&tid[i], NULL, worker, &w[i]);
		}
		pthread_barrier_wait(&warm_barrier);
		printf("warm\n");
		fflush(stdout);
		wait_line();
		pthread_barrier_wait(&warm_barrier);
		for (int i = 0; i < nthreads; i++) {
			pthread_join(tid[i], NULL);
			for (int r = 0; r < R_N; r++) {
				sum.incl[r] += w[i].t.incl[r];
				sum.excl[r] += w[i].t.excl[r];
				sum.count[r] += w[i].t.count[r];
			}
			sum.probe_ns += w[i].t.probe_ns;
			sum.probes += w[i].t.probes;
			for (int f = 0; f < F_N; f++)
				sum.feat[f] += w[i].t.feat[f];
			wall += w[i].wall;
			cpu += w[i].cpu;
			runnable += w[i].runnable;
			count += w[i].count;
		}
		if (offcpu_mode) {
			printf("{\"truth\":{\"cpu_sleep\":{\"count\":%llu,\"inclusive_ns\":%llu,"
			       "\"cpu_ns\":%llu,\"offcpu_preempted_ns\":%llu,"
			       "\"offcpu_blocked_ns\":%llu}}}\n",
			       (unsigned long long)count, (unsigned long long)wall,
			       (unsigned long long)cpu, (unsigned long long)runnable,
			       (unsigned long long)(wall - cpu - runnable));
		} else {
			printf("{\"truth\":{");
			for (int r = 0; r < R_N; r++)
				printf("%s\"%s\":{\"count\":%llu,\"inclusive_ns\":%llu,"
				       "\"exclusive_ns\":%llu}",
				       r ? "," : "", names[r], (unsigned long long)sum.count[r],
				       (unsigned long long)sum.incl[r],
				       (unsigned long long)sum.excl[r]);
			printf("},\"features\":{");
			for (int f = 0; f < F_N; f++)
				printf("%s\"%s\":%llu", f ? "," : "", fnames[f],
				       (unsigned long long)sum.feat[f]);
			printf("},\"probes\":{\"count\":%llu,\"window_ns\":%llu,"
			       "\"clock_ns\":%llu}}\n",
			       (unsigned long long)sum.probes, (unsigned long long)sum.probe_ns,
			       (unsigned long long)clock_cost_ns());
		}
		if (getenv("TRUTH_HOLD")) {	/* alive until told: for featprof record */
			fflush(stdout);
			wait_line();
		}
	} else if (!strcmp(mode, "inside") || !strcmp(mode, "open") || !strcmp(mode, "exit")) {
		pthread_t tid;

		wait_go();
		pthread_create(&tid, NULL, strcmp(mode, "exit") ? inside_thread : exit_thread,
			       NULL);
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
