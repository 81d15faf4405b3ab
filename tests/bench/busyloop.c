// SPDX-License-Identifier: GPL-2.0
/*
 * SimpleBusyLoop (after the thesis this product competes with): one small region in a
 * loop, a busy-counting body. Built in variants from this one file:
 *   -DBL_DRY      no probes                       -DBL_SDT     sys/sdt.h probes (nop)
 *   (default)     featprof, shielded site          -DFEATPROF_SITE_SHAPE=FEATPROF_SHAPE_NOP1
 *   -DBL_TSC      the floor of a timed event: each site one rdtsc, the end's minus the
 *                 begin's summed per thread (what any in-process timer does at least)
 *   -DBL_STATIC   static in-process tracer: two timestamps per iteration into a
 *                 preallocated buffer, durations summed at the end
 *
 * usage: busyloop ITERATIONS BODY [options]
 *   BODY            iterations of the busy-counting body
 *   --wait          print "ready PID" and wait for a line on stdin before the loop
 *   --threads T     T threads run the loop (default 1)
 *   --bare nop1|nop5  attach perf uprobes without a BPF program to this process's own
 *                   featprof sites (what a uprobe hit costs with perf's sample work)
 *   --floor nop1|nop5 attach an empty BPF program to them, through the multi-uprobe
 *                   link featprofd uses (the floor: a program that does nothing)
 *   --function [step] the body in a plain function, busy_fn (its first instruction a
 *                   push) or busy_fn_step (a sub: single-stepped), called from the loop
 *                   instead of the sites (function regions: featprof enable --function)
 *   --floor function  an empty BPF program at that function's entry and return, through
 *                   the two multi-uprobe links featprofd uses for function regions
 *   --truth NS      accuracy mode: the region busy-waits NS ns to a clock deadline and
 *                   measures itself; with --nested an outer region (NS) holds an inner
 *                   one (NS); with --chain, back to back: a flat region (NS), then at
 *                   once an outer one of NS/2 + an inner of NS + NS/2, then the next
 *                   iteration's flat one at once (regions that follow each other)
 *   --warm N        (with --wait) N iterations first, then print "warm" and wait for
 *                   another line before the measured ones (first hits of a site cost
 *                   more: the kernel's out-of-line area, a nop5's rewrite); the
 *                   measured ones run in new threads
 *   --carried       each iteration's chain starts from the previous one's result (by
 *                   default each starts afresh, and the CPU overlaps consecutive ones)
 *   --hold          after the result, wait for a line on stdin before exiting (the
 *                   threads have exited, the process lives)
 *   --reads         (busyloop_tsc) time ITERATIONS timestamp reads back to back instead
 * Prints one JSON object: ns per iteration of the loop, and the truth in --truth mode.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(BL_DRY) || defined(BL_TSC)
#define FEATPROF_DISABLE
#define BL_NO_SITES
#endif
#include "featprof.h"
#ifndef BL_NO_SITES
#include "common/notes.h"
#include "common/symbols.h"
#include "kern/uprobe.h"
#include <linux/bpf.h>
#endif

#if defined(BL_TSC)
static __thread uint64_t tsc_begin, tsc_sum;
static inline uint64_t tsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}
#define BEGIN_SITE() (tsc_begin = tsc())
#define END_SITE() (tsc_sum += tsc() - tsc_begin)

#elif defined(BL_SDT)
#include <sys/sdt.h>
#define BEGIN_SITE() DTRACE_PROBE(busyloop, busy__begin)
#define END_SITE() DTRACE_PROBE(busyloop, busy__end)
#else
#define BEGIN_SITE() FP_BEGIN(busy, "Busy")
#define END_SITE() FP_END(busy)
#endif

static long iters, body;
static long truth_ns;
static int nested, carried, chain;
static __thread uint64_t carry = 1;	/* --carried: the chain goes on from here */
#ifdef BL_STATIC
static uint64_t *stamps;	/* static tracer buffer */
#endif

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#ifdef BL_TSC
/* --reads: ITERATIONS timestamp reads back to back (the floor: one read) */
static int reads(void)
{
	uint64_t t0 = now_ns(), sum = 0;

	for (long i = 0; i < iters; i++)
		sum += tsc();
	printf("{\"reads\":%ld,\"ns_per_read\":%.3f,\"sum_low_bit\":%d}\n", iters,
	       (double)(now_ns() - t0) / (double)iters, (int)(sum & 1));
	return 0;
}
#endif

/* The busy body: a register-only dependency chain, so its speed does not depend on
 * where the compiler put a counter in memory (a volatile counter's did, by 2x). */
static inline __attribute__((always_inline)) void spin(long n)
{
	uint64_t x = carried ? carry : 1;

	for (long k = 0; k < n; k++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		__asm__ __volatile__("" : "+r"(x));
	}
	if (carried)	/* the next iteration's chain waits for this one's end */
		carry = x;
}

struct res {
	uint64_t loop_ns, cpu_ns, ticks;
	uint64_t truth_outer, truth_inner, truth_flat;
};

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void *loop(void *arg)
{
	struct res *r = arg;
	uint64_t t0 = now_ns(), c0 = cpu_ns();

	for (long i = 0; i < iters; i++) {
#ifdef BL_STATIC
		stamps[2 * i] = now_ns();
#endif
		BEGIN_SITE();
		spin(body);
		END_SITE();
#ifdef BL_STATIC
		stamps[2 * i + 1] = now_ns();
#endif
	}
	r->loop_ns = now_ns() - t0;
	r->cpu_ns = cpu_ns() - c0;
#ifdef BL_TSC
	r->ticks = tsc_sum;
#endif
	return NULL;
}

/*
 * --function: the body in a function of its own, what a function region measures:
 * busy_fn starts with a push (the kernel emulates it), busy_fn_step (--function step)
 * with a sub (single-stepped out of line); both call busy_body. Written in assembly so
 * that the first instruction is that one whatever the compiler does.
 */
void busy_body(long n);
void busy_fn(long n);
void busy_fn_step(long n);
void busy_body(long n)
{
	spin(n);
	__asm__ __volatile__("");
}
__asm__(".text\n"
	".globl busy_fn\n.type busy_fn, @function\nbusy_fn:\n"
	"\tpush %rbx\n\tcall busy_body\n\tpop %rbx\n\tret\n.size busy_fn, .-busy_fn\n"
	".globl busy_fn_step\n.type busy_fn_step, @function\nbusy_fn_step:\n"
	"\tsub $8, %rsp\n\tcall busy_body\n\tadd $8, %rsp\n\tret\n"
	".size busy_fn_step, .-busy_fn_step\n");

static int function;	/* 1: busy_fn, 2: busy_fn_step */

static void *fn_loop(void *arg)
{
	void (*fn)(long) = function == 2 ? busy_fn_step : busy_fn;
	struct res *r = arg;
	uint64_t t0 = now_ns();

	for (long i = 0; i < iters; i++)
		fn(body);
	r->loop_ns = now_ns() - t0;
	return NULL;
}

static void busy_until(uint64_t end)
{
	while (now_ns() < end)
		;
}

/* Accuracy: regions of truth_ns, their own time measured inside. */
static void *truth_loop(void *arg)
{
	struct res *r = arg;
	uint64_t t0 = now_ns();

	for (long i = 0; i < iters; i++) {
		uint64_t a, b, c = 0, d = 0, e1, e2, own = (uint64_t)truth_ns / (chain ? 2 : 1);

		if (chain) {	/* ended right before the outer's begin */
			FP_BEGIN(acc_flat, "Accuracy");
			a = now_ns();
			busy_until(a + (uint64_t)truth_ns);
			b = now_ns();
			FP_END(acc_flat);
			r->truth_flat += b - a;
		}
		/* truth is what the code between the sites takes untraced: the outer's own
		 * segments plus the inner's own time, not the inner's probes */
		FP_BEGIN(acc_outer, "Accuracy");
		a = now_ns();
		busy_until(a + own);
		e1 = now_ns();
		if (nested) {
			FP_BEGIN(acc_inner, "Accuracy");
			c = now_ns();
			busy_until(c + (uint64_t)truth_ns);
			d = now_ns();
			FP_END(acc_inner);
			r->truth_inner += d - c;
		}
		e2 = now_ns();
		if (chain)
			busy_until(e2 + own);
		b = now_ns();
		FP_END(acc_outer);
		r->truth_outer += (e1 - a) + (d - c) + (b - e2);
	}
	r->loop_ns = now_ns() - t0;
	return NULL;
}

#ifndef BL_NO_SITES
/* An empty program (r0 = 0; exit) for the multi-uprobe link. */
static int empty_prog(void)
{
	struct bpf_insn insns[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_KPROBE;
	a.expected_attach_type = FP_ATTACH_UPROBE_MULTI;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = 2;
	a.license = (uint64_t)(uintptr_t)"GPL";
	return (int)syscall(__NR_bpf, BPF_PROG_LOAD, &a, sizeof(a));
}

/* --floor function: the empty program at busy_fn's entry and, by a return probe, its
 * return (two multi-uprobe links, as featprofd's function regions). */
static int attach_function(int prog, const char *exe, struct fp_object *obj,
			   long long *nsites)
{
	struct fp_symbols *sy = NULL;
	uint64_t off = 0, zero = 0;
	int k, ret = -1, fd = open(exe, O_RDONLY | O_CLOEXEC);
	struct fp_err err = { 0 };

	if (fd < 0 || fp_symbols__read(fd, exe, "", &sy, &err))
		sy = NULL;
	if (fd >= 0)
		close(fd);
	for (k = 0; sy && k < sy->n; k++)
		if (!strcmp(sy->f[k].name, function == 2 ? "busy_fn_step" : "busy_fn"))
			off = sy->f[k].off;
	if (off && fp_uprobe_multi_link(prog, exe, &off, &zero, &zero, 1, getpid(), 0) >= 0 &&
	    fp_uprobe_multi_link(prog, exe, &off, &zero, &zero, 1, getpid(),
				 FP_UPROBE_MULTI_RETURN) >= 0) {
		*nsites = 2;
		ret = 0;
	} else {
		fprintf(stderr, "busyloop: busy_fn: %s\n", off ? strerror(errno) : "no symbol");
	}
	fp_symbols__free(sy);
	fp_object__free(obj);
	return ret;
}

static int attach_bare(const char *where, long long *nsites, int floor)
{
	uint64_t offs[16], zero[16] = { 0 };
	int prog = floor ? empty_prog() : -1;
	struct fp_object *obj;
	struct fp_err err = { 0 };
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int type = -1, k;
	FILE *f;

	if (n < 0)
		return -1;
	exe[n] = 0;
	f = fopen("/sys/bus/event_source/devices/uprobe/type", "r");
	if (!f || fscanf(f, "%d", &type) != 1)
		return -1;
	fclose(f);
	if (fp_object__read(exe, exe, &obj, &err)) {
		fprintf(stderr, "busyloop: %s\n", err.msg);
		return -1;
	}
	if (floor && prog < 0) {
		perror("busyloop: BPF_PROG_LOAD");
		return -1;
	}
	if (!strcmp(where, "function"))
		return attach_function(prog, exe, obj, nsites);
	for (k = 0; k < obj->nsites; k++) {
		const struct fp_site *s = &obj->sites[k];
		struct perf_event_attr a;

		if (!s->region || strcmp(s->region, "busy"))
			continue;
		if (floor) {
			if (*nsites < 16)
				offs[(*nsites)++] =
				    !strcmp(where, "nop5") && s->opt_off ? s->opt_off : s->loc_off;
			continue;
		}
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = (uint32_t)type;
		a.uprobe_path = (uint64_t)(uintptr_t)exe;
		a.probe_offset = !strcmp(where, "nop5") && s->opt_off ? s->opt_off : s->loc_off;
		if (syscall(SYS_perf_event_open, &a, 0, -1, -1, 0) < 0) {
			perror("busyloop: perf_event_open");
			return -1;
		}
		(*nsites)++;
	}
	fp_object__free(obj);
	if (floor && fp_uprobe_multi_link(prog, exe, offs, zero, zero, (uint32_t)*nsites,
					  getpid(), 0) < 0) {
		fprintf(stderr, "busyloop: multi-uprobe link: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}
#endif

static void run_threads(int threads, struct res *r, pthread_t *tid)
{
	int i;

	memset(r, 0, sizeof(*r) * (size_t)threads);
	for (i = 0; i < threads; i++)
		pthread_create(&tid[i], NULL, truth_ns ? truth_loop : function ? fn_loop : loop,
			       &r[i]);
	for (i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
}

int main(int argc, char **argv)
{
	int threads = 1, wait = 0, hold = 0, i;
	long warm = 0;
	const char *bare = NULL;
	int floor = 0;
	struct res r[64];
	pthread_t tid[64];
	long long nsites = 0;
	uint64_t loop_max = 0, to = 0, ti = 0, tf = 0, cpu = 0, ticks = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: busyloop ITERATIONS BODY [--wait] [--threads T] "
			"[--bare nop1|nop5] [--truth NS [--nested]]\n");
		return 2;
	}
	iters = atol(argv[1]);
	body = atol(argv[2]);
	for (i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--wait"))
			wait = 1;
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			threads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--bare") && i + 1 < argc)
			bare = argv[++i];
		else if (!strcmp(argv[i], "--floor") && i + 1 < argc)
			bare = argv[++i], floor = 1;
		else if (!strcmp(argv[i], "--truth") && i + 1 < argc)
			truth_ns = atol(argv[++i]);
#ifdef BL_TSC
		else if (!strcmp(argv[i], "--reads"))
			return reads();
#endif
		else if (!strcmp(argv[i], "--carried"))
			carried = 1;
		else if (!strcmp(argv[i], "--nested"))
			nested = 1;
		else if (!strcmp(argv[i], "--chain"))
			nested = chain = 1;
		else if (!strcmp(argv[i], "--warm") && i + 1 < argc)
			warm = atol(argv[++i]);
		else if (!strcmp(argv[i], "--hold"))
			hold = 1;
		else if (!strcmp(argv[i], "--function"))
			function = i + 1 < argc && !strcmp(argv[i + 1], "step") ? (i++, 2) : 1;
		else
			return 2;
	}
	if (threads < 1 || threads > 64 || iters < 1)
		return 2;
#ifdef BL_STATIC
	stamps = calloc((size_t)iters * 2, sizeof(*stamps));
	if (!stamps || threads != 1)
		return 2;
#endif
	if (bare) {
#ifdef BL_NO_SITES
		(void)floor;
		return 2;
#else
		if (attach_bare(bare, &nsites, floor))
			return 1;
#endif
	}
	if (wait) {
		char line[16];

		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 3;
		if (warm) {
			long measured = iters;

			iters = warm;
			run_threads(threads, r, tid);
			iters = measured;
			printf("warm\n");
			fflush(stdout);
			if (!fgets(line, sizeof(line), stdin))
				return 3;
		}
	}
	run_threads(threads, r, tid);
	for (i = 0; i < threads; i++) {
		if (r[i].loop_ns > loop_max)
			loop_max = r[i].loop_ns;
		cpu += r[i].cpu_ns;
		ticks += r[i].ticks;
		to += r[i].truth_outer;
		ti += r[i].truth_inner;
		tf += r[i].truth_flat;
	}
	printf("{\"iterations\":%ld,\"threads\":%d,\"loop_ns\":%llu,\"ns_per_iteration\":%.2f",
	       iters, threads, (unsigned long long)loop_max, (double)loop_max / (double)iters);
	if (cpu)	/* the loop's own threads' CPU time (threads may outnumber CPUs) */
		printf(",\"cpu_ns_per_iteration\":%.3f",
		       (double)cpu / ((double)iters * (double)threads));
	if (ticks)
		printf(",\"tsc_ticks\":%llu", (unsigned long long)ticks);
	if (bare)
		printf(",\"bare_sites\":%lld", nsites);
	if (truth_ns)
		printf(",\"truth_outer_ns\":%llu,\"truth_inner_ns\":%llu,\"truth_flat_ns\":%llu",
		       (unsigned long long)to, (unsigned long long)ti, (unsigned long long)tf);
#ifdef BL_STATIC
	{
		uint64_t sum = 0;

		for (long k = 0; k < iters; k++)
			sum += stamps[2 * k + 1] - stamps[2 * k];
		printf(",\"static_sum_ns\":%llu", (unsigned long long)sum);
	}
#endif
	printf("}\n");
	if (hold) {
		char line[16];

		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 3;
	}
	return 0;
}
