/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * featprof_inprocess.h - the runtime of FEATPROF_INPROCESS builds, included by
 * featprof.h (never directly); the layout it keeps is featprof.h's (FP_IP_ABI_VERSION).
 * Its code is compiled in the one unit per object that defines FEATPROF_IP_RUNTIME
 * (usdt/featprof_ip.c).
 *
 * What the runtime does to a process, all of it only once featprofd has raised a gate
 * (until then a site costs its gate test and nothing else):
 *   - at the first event: creates a memfd file ("featprof-ip", FP_IP_ARENA = 64 MiB,
 *     sparse: pages are used as threads take blocks) and maps it shared;
 *   - registers one pthread key (a thread's block is given back at its exit) and one
 *     pthread_atfork child handler (a forked child gets an arena of its own);
 *   - keeps the primary object loaded (dlopen RTLD_NOLOAD | RTLD_NODELETE through
 *     dladdr: it holds the process's control block and the key's destructor);
 *   - runs a destructor at exit and at its object's dlclose: the region descriptors leave
 *     the arena's table and, where featprofd asked for the arena and has not taken it,
 *     waits for it, FEATPROF_IP_HANDOVER_MS (2 s) at most, only while a gate is up;
 *   - takes a timestamp per event (rdtsc or clock_gettime, as featprofd chose); makes
 *     its system calls (getpid, gettid, memfd_create, ftruncate, write, close,
 *     nanosleep) by the raw syscall instruction, so errno never changes; mmap through
 *     libc.
 *
 * A site of region R (x86-64, what FP_BEGIN and FP_END add to the usual site):
 *
 *	cmpw $0, featprof_ipr_R(%rip)      the gate, a USDT semaphore
 *	jne  <slow>                        out of line: call featprof_ip_begin(&featprof_ipr_R)
 *
 * and, once per region per object, in one COMDAT group: the descriptor featprof_ipr_R
 * (.probes, initialised data, so that it is file-backed as a semaphore must be) and a
 * function nobody calls, featprof_ipgate_R, a nop with the stapsdt note
 * featprof:R__ipgate whose semaphore is the descriptor. featprofd raises the gate by
 * attaching a uprobe to that nop with the semaphore's offset; the kernel increments it
 * in the process while the uprobe lives and decrements it when it goes (featprofd's
 * exit or death included), so a gate never stays up without featprofd.
 *
 * While a gate is up its sites take a timestamp and keep the figures in the process
 * (featprof_ip_begin/featprof_ip_end below): per thread a block (struct
 * featprof_ip_thread) with its stack of open regions, per region its count, inclusive
 * and exclusive time, min, max, log2 histogram, and per region path the exclusive time
 * of its instances; no kernel entry. The blocks live in an arena (struct
 * featprof_ip_arena): a memfd file mapped shared at the process's first event, which
 * featprofd opens and keeps, so the figures outlive the process's exec, exit or death.
 * A reader reads each 64-bit figure with one load: it is at most one instance behind.
 * Per event the work is what the figures need and nothing more (one clock read, one
 * conversion to ns per end; a begin reuses the path its depth had the time before).
 *
 * One runtime per process: every object (the executable, its libraries) has its own
 * control block (featprof_ip_ctl, hidden), but featprofd writes the address of one of
 * them, the primary, into all of them before it raises a gate; the arena (thread blocks,
 * region ids) and the clock are the primary's, so regions of several objects nest as they
 * do under traps. A thread finds its block through a thread-local pointer per object
 * (initial-exec TLS, 8 bytes), or the first time in an object by its pthread_self in the
 * arena's list.
 *
 * Threads: a block is taken from the arena at a thread's first event and given back at
 * its exit (a pthread key's destructor), figures kept: featprofd sums free blocks too, and
 * a later thread reuses one. fork: the child maps a copy of the arena in its place (a
 * file of its own), keeps its own thread's block, frees the others and zeroes every
 * figure (pthread_atfork), so it starts from zero. longjmp and exceptions:
 * an end pops the frames above its region (counted as begun, never ended), as the kernel
 * side does. Disable: featprofd lowers the gate, then bumps the control block's epoch; a
 * thread that sees a new epoch drops the frames of regions whose gate is down or whose
 * generation changed before it records anything.
 *
 * dlclose: an object unloaded takes its descriptors out of the arena's id table (a
 * destructor); the ids keep their names, so the region's figures stay and an object
 * loaded again gets the same ids. The primary's object is pinned (it holds the process's
 * control block and thread-exit hook; __fp_ip_pin).
 *
 * Clock: rdtsc where featprofd says the TSC is usable (the kernel's own clocksource is
 * the TSC), durations converted to ns by the multiplier it wrote; clock_gettime
 * (CLOCK_MONOTONIC) otherwise. A begin takes its timestamp last and an end first, so the
 * runtime's own work is outside the regions as far as it can be; featprofd calibrates
 * and subtracts the rest.
 *
 * Threads with glibc before 2.34 that do not link libpthread: no thread-exit hook (the
 * weak references below are null), which a single-threaded program does not need.
 */
#ifndef FEATPROF_INPROCESS_H
#define FEATPROF_INPROCESS_H

#if !defined(__x86_64__)
#error "featprof.h: FEATPROF_INPROCESS is implemented for x86-64 only"
#endif

#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef MAP_ANONYMOUS
#define MAP_ANONYMOUS 0x20	/* Linux's, hidden by ISO C modes */
#endif

/* How long, at most, a process that exits while featprofd measures it waits for
 * featprofd to take its arena (FP_IP_HANDOVER_WANTED): ms. */
#ifndef FEATPROF_IP_HANDOVER_MS
#define FEATPROF_IP_HANDOVER_MS 2000
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Weak: glibc before 2.34 has these in libpthread only. */
extern __typeof__(pthread_key_create) pthread_key_create __attribute__((weak));
extern __typeof__(pthread_setspecific) pthread_setspecific __attribute__((weak));
extern __typeof__(pthread_atfork) pthread_atfork __attribute__((weak));
/* And these in libdl: under names of their own, so that a program's <dlfcn.h> does not
 * meet a second declaration (the layout is glibc's Dl_info). */
struct __fp_dl_info {
	const char *fname;
	void *fbase;
	const char *sname;
	void *saddr;
};
extern int __fp_dladdr(const void *addr, struct __fp_dl_info *info) __asm__("dladdr")
	__attribute__((weak));
extern void *__fp_dlopen(const char *file, int mode) __asm__("dlopen") __attribute__((weak));
#define __FP_RTLD_NOW 2
#define __FP_RTLD_NOLOAD 4
#define __FP_RTLD_NODELETE 0x1000

/* The runtime's functions, hidden: each object (the executable, each shared library)
 * has one copy, compiled in the one translation unit of that object that defines
 * FEATPROF_IP_RUNTIME (usdt/featprof_ip.c is such a file); every other unit, whatever
 * header brings featprof.h in, only calls them. */
#define __FP_IP_FN __attribute__((visibility("hidden")))
__FP_IP_FN struct featprof_ip_arena *__fp_ip_arena(struct featprof_ip_ctl *p);
__FP_IP_FN void __fp_ip_exit(void *arg);
__FP_IP_FN void __fp_ip_forked(void);
__FP_IP_FN struct featprof_ip_thread *__fp_ip_thread(struct featprof_ip_ctl *p);
__FP_IP_FN unsigned int __fp_ip_id(struct featprof_ip_arena *a, struct featprof_ipr *r);
__FP_IP_FN void __fp_ip_epoch(struct featprof_ip_ctl *p, struct featprof_ip_thread *t);
__FP_IP_FN void __fp_ip_unload(void);
__FP_IP_FN void featprof_ip_begin(struct featprof_ipr *r);
__FP_IP_FN void featprof_ip_end(struct featprof_ipr *r);
__FP_IP_FN void featprof_ip_end_at(struct featprof_ipr *r, unsigned long long now);
__FP_IP_FN void __fp_ip_begin_slow(struct featprof_ipr *r);
__FP_IP_FN void __fp_ip_bucket(struct featprof_ip_ctl *p, struct featprof_ip_fig *g,
			       unsigned long long incl);
/* featprof:ip__thread, a function of one nop (featprofd's scheduler programs learn from
 * its argument where a thread's region stack is: off-CPU time per region), defined below
 * in a COMDAT group: one site per object, however often it is compiled. */
__FP_IP_FN void featprof_ip_thread_site(struct featprof_ip_thread *t);

/* This object's control block; weak and hidden: one per object, however many
 * translation units include the header. */
__attribute__((weak, visibility("hidden"))) struct featprof_ip_ctl featprof_ip_ctl = {
	FP_IP_MAGIC, FP_IP_ABI_VERSION, 0, 0, 0, 0, 0, 0, 0, 0, __fp_ip_exit, __fp_ip_forked
};
__attribute__((weak, visibility("hidden"), tls_model("initial-exec"))) __thread
	struct featprof_ip_thread *featprof_ip_me;

__asm__(".pushsection .note.featprof,\"?\",\"note\"\n"
	".balign 4\n"
	".4byte 9,24," __fp_xstr(FP_NOTE_TYPE_IP) "\n"
	".asciz \"featprof\"\n"
	".balign 4\n"
	".4byte " __fp_xstr(FP_IP_ABI_VERSION) "," __fp_xstr(FP_IP_THREAD_SIZE) "\n"
	".8byte featprof_ip_ctl\n"
	".8byte _.stapsdt.base\n"
	".popsection\n" __fp_base_insns);
/* the size the note states is the block's (C99 has no _Static_assert) */
typedef char __fp_ip_thread_size_check[sizeof(struct featprof_ip_thread) == FP_IP_THREAD_SIZE
					       ? 1
					       : -1];

#ifdef FEATPROF_IP_RUNTIME	/* the object's one copy of the runtime */
#include "featprof_ip_runtime.h"
#endif

#ifdef __cplusplus
}
#endif

/* The descriptor and the gate of a region, once per object (one COMDAT group). */
#define __fp_ip_decl(region)                                                               \
	".ifndef featprof_ipr_" #region "\n"                                               \
	".pushsection .probes,\"awG\",@progbits,featprof_ip_" #region ",comdat\n"          \
	".balign 8\n"                                                                      \
	".weak featprof_ipr_" #region "\n"                                                 \
	".hidden featprof_ipr_" #region "\n"                                               \
	".type featprof_ipr_" #region ",@object\n"                                         \
	"featprof_ipr_" #region ":\t.zero 16\n"                                            \
	".8byte featprof_ip_ctl\n"                                                         \
	".asciz \"" #region "\"\n"                                                          \
	".size featprof_ipr_" #region ",.-featprof_ipr_" #region "\n"                      \
	".popsection\n"                                                                    \
	".pushsection .text.featprof_ipgate_" #region ",\"axG\",@progbits,featprof_ip_"    \
	#region ",comdat\n"                                                                \
	".weak featprof_ipgate_" #region "\n"                                              \
	".hidden featprof_ipgate_" #region "\n"                                            \
	"featprof_ipgate_" #region ":\n"                                                   \
	"990:\tnop\n"                                                                      \
	"\tret\n" __fp_note(#region FP_IP_GATE_SUFFIX, "featprof_ipr_" #region, "")        \
	".popsection\n"                                                                    \
	".endif\n" __fp_base_insns

/* A site's gate test: two instructions while the gate is down, the call out of line. */
#define __fp_ip_site(region, fn)                                                           \
	do {                                                                               \
		__label__ __fp_ip_up;                                                      \
		struct featprof_ipr *__fp_r;                                               \
		__asm__ goto(__fp_ip_decl(region) "cmpw $0, featprof_ipr_" #region "(%%rip)\n" \
			     "jne %l[__fp_ip_up]\n"                                        \
			     :                                                             \
			     :                                                             \
			     : "cc"                                                        \
			     : __fp_ip_up);                                                \
		if (0) {                                                                   \
		__fp_ip_up:                                                                \
			__asm__("lea featprof_ipr_" #region "(%%rip), %0" : "=r"(__fp_r));  \
			fn(__fp_r);                                                        \
		}                                                                          \
	} while (0)
#define __fp_ip_begin(region) __fp_ip_site(region, featprof_ip_begin)
#define __fp_ip_end(region) __fp_ip_site(region, featprof_ip_end)

#endif /* FEATPROF_INPROCESS_H */
