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

__asm__(".pushsection .text.featprof_ip_thread_site,\"axG\",@progbits,"
	"featprof_ip_thread_site,comdat\n"
	".weak featprof_ip_thread_site\n"
	".hidden featprof_ip_thread_site\n"
	".type featprof_ip_thread_site,@function\n"
	"featprof_ip_thread_site:\n"
	"990:\tnop\n"
	"\tret\n"
	".size featprof_ip_thread_site,.-featprof_ip_thread_site\n"
	__fp_note(FP_IP_THREAD_PROBE, "0", "8@%rdi")
	".popsection\n" __fp_base_insns);

/* The process's primary control block, 0 until featprofd names it: an object it has not
 * configured (a gate raised by another tool, a library mapped again before featprofd saw
 * it) does nothing. */
static inline struct featprof_ip_ctl *__fp_ip_primary(void)
{
	return featprof_ip_ctl.primary;
}

static inline unsigned long long __fp_ip_now(const struct featprof_ip_ctl *p)
{
	if (p->clock == FP_IP_CLOCK_TSC) {
		unsigned int lo, hi;

		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		return (unsigned long long)hi << 32 | lo;
	}
#ifdef CLOCK_MONOTONIC
	{
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		return (unsigned long long)ts.tv_sec * 1000000000ULL +
		       (unsigned long long)ts.tv_nsec;
	}
#else	/* ISO C without POSIX declarations: the system call itself */
	{
		long ts[2];
		long ret;

		__asm__ __volatile__("syscall" : "=a"(ret) : "0"(228L), "D"(1L), "S"(ts)
				     : "rcx", "r11", "memory");	/* clock_gettime(MONO) */
		(void)ret;
		return (unsigned long long)ts[0] * 1000000000ULL + (unsigned long long)ts[1];
	}
#endif
}

/* A duration in the clock's units, in ns. */
static inline unsigned long long __fp_ip_ns(const struct featprof_ip_ctl *p,
					    unsigned long long d)
{
	if (p->clock != FP_IP_CLOCK_TSC)
		return d;
	return (unsigned long long)(((unsigned __int128)d * p->tsc_mult) >> p->tsc_shift);
}

static inline unsigned int __fp_ip_log2(unsigned long long v)
{
	return v ? 63 - (unsigned int)__builtin_clzll(v) : 0;
}

/* A raw system call: the runtime needs no declaration a strict ISO C mode may hide. */
static inline long __fp_ip_sys(long nr, long a, long b, long c)
{
	long ret;

	__asm__ __volatile__("syscall" : "=a"(ret) : "0"(nr), "D"(a), "S"(b), "d"(c)
			     : "rcx", "r11", "memory");
	return ret;
}
#define __FP_NR_nanosleep 35
#define __FP_NR_ftruncate 77
#define __FP_NR_getpid 39
#define __FP_NR_gettid 186
#define __FP_NR_memfd_create 319
#define __FP_NR_close 3
#define __FP_NR_write 1
#define __FP_MFD_CLOEXEC 1
#define __FP_MFD_ALLOW_SEALING 2	/* featprofd seals it against shrinking */

/* A new arena file of FP_IP_ARENA bytes mapped shared at addr (0: anywhere), its header
 * written; MAP_FAILED-like 0 on failure. */
static inline struct featprof_ip_arena *__fp_ip_map(void *addr, const void *copy,
						   unsigned long long copy_len)
{
	long fd = __fp_ip_sys(__FP_NR_memfd_create, (long)"featprof-ip",
			      __FP_MFD_CLOEXEC | __FP_MFD_ALLOW_SEALING, 0), n;
	unsigned long long done = 0;
	struct featprof_ip_arena *a;
	void *m;

	if (fd < 0)
		return 0;
	if (__fp_ip_sys(__FP_NR_ftruncate, fd, (long)FP_IP_ARENA, 0) < 0)
		copy_len = ~0ULL;	/* fail below */
	while (copy && done < copy_len && copy_len != ~0ULL) {	/* at offset 0 on */
		n = __fp_ip_sys(__FP_NR_write, fd, (long)((const char *)copy + done),
				(long)(copy_len - done));
		if (n <= 0 && n != -4)	/* -EINTR: again */
			break;
		done += n > 0 ? (unsigned long long)n : 0;
	}
	if (copy_len == ~0ULL || (copy && done < copy_len)) {
		__fp_ip_sys(__FP_NR_close, fd, 0, 0);
		return 0;
	}
	m = mmap(addr, FP_IP_ARENA, PROT_READ | PROT_WRITE,
		 MAP_SHARED | (addr ? MAP_FIXED : 0), (int)fd, 0);
	__fp_ip_sys(__FP_NR_close, fd, 0, 0);	/* the mapping keeps the file */
	if (m == MAP_FAILED)
		return 0;
	a = (struct featprof_ip_arena *)m;
	if (!copy) {
		a->magic = FP_IP_MAGIC;
		a->version = FP_IP_ABI_VERSION;
		a->size = FP_IP_ARENA;
		a->used = (sizeof(*a) + 63) & ~63ULL;
	}
	a->base = (unsigned long long)m;
	a->pid = (unsigned int)__fp_ip_sys(__FP_NR_getpid, 0, 0, 0);
	return a;
}

/* The primary's object stays loaded (every object's control block names it, and the
 * thread-exit hook is its code): a library is pinned as dlopen's RTLD_NODELETE does.
 * Without dladdr and dlopen (glibc before 2.34, no libdl) it is not, and a program must
 * not dlclose the library featprofd chose (the executable, where it has a runtime). */
static inline void __fp_ip_pin(const struct featprof_ip_ctl *p)
{
	struct __fp_dl_info i;

	if (__fp_dladdr && __fp_dlopen && __fp_dladdr(p, &i) && i.fname && i.fname[0])
		__fp_dlopen(i.fname, __FP_RTLD_NOW | __FP_RTLD_NOLOAD | __FP_RTLD_NODELETE);
}

/* The process's arena, made by the first thread that needs it. 0: none can be made. */
__attribute__((weak, visibility("hidden"), noinline, unused)) struct featprof_ip_arena *
__fp_ip_arena(struct featprof_ip_ctl *p)
{
	struct featprof_ip_arena *a = p->arena, *none = 0;

	if (a && a != (struct featprof_ip_arena *)1)
		return a;
	if (__atomic_compare_exchange_n(&p->arena, &none, (struct featprof_ip_arena *)1, 0,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		__fp_ip_pin(p);
		a = __fp_ip_map(0, 0, 0);
		__atomic_store_n(&p->arena, a ? a : (struct featprof_ip_arena *)2,
				 __ATOMIC_RELEASE);
		return a;
	}
	while ((a = __atomic_load_n(&p->arena, __ATOMIC_ACQUIRE)) ==
	       (struct featprof_ip_arena *)1)
		sched_yield();
	return a == (struct featprof_ip_arena *)2 ? 0 : a;	/* 2: could not be made */
}

/* size bytes of the arena (64-aligned, zeroed: never used before). 0: full. */
static inline void *__fp_ip_alloc(struct featprof_ip_arena *a, unsigned long long size)
{
	unsigned long long at;

	size = (size + 63) & ~63ULL;
	at = __atomic_fetch_add(&a->used, size, __ATOMIC_RELAXED);
	if (at + size > a->size || at + size < at)
		return 0;
	return (char *)a + at;
}

/* Thread exit: the block goes back, its figures stay. */
__attribute__((weak, visibility("hidden"), unused)) void __fp_ip_exit(void *arg)
{
	struct featprof_ip_thread *t = (struct featprof_ip_thread *)arg;

	if (t->depth + t->overflow)
		t->anomalies[FP_IP_AN_EXIT_INSIDE] += t->depth + t->overflow;
	t->depth = t->overflow = 0;
	t->last = 0;
	t->cur = 0;
	__atomic_store_n(&t->owner, 0, __ATOMIC_RELEASE);
}

/* fork, in the child: a copy of the arena in its place, in a file of its own (the
 * parent's is shared); its thread's block stays (emptied), the others go back; every
 * block's figures start again from zero. */
__attribute__((weak, visibility("hidden"), unused)) void __fp_ip_forked(void)
{
	struct featprof_ip_ctl *p = __fp_ip_primary();
	struct featprof_ip_arena *a = p ? p->arena : 0;
	unsigned long long self = (unsigned long long)pthread_self();
	struct featprof_ip_thread *t;
	unsigned int i;

	if (!a || a == (struct featprof_ip_arena *)1 || a == (struct featprof_ip_arena *)2)
		return;
	/* featprofd asks again if it measures it, unless it attaches the forks */
	p->handover = p->handover & FP_IP_HANDOVER_FORKS
			      ? FP_IP_HANDOVER_WANTED | FP_IP_HANDOVER_FORKS
			      : FP_IP_HANDOVER_NONE;
	if (!__fp_ip_map(a, a, a->used < a->size ? a->used : a->size)) {
		/* no file of its own: stop measuring here rather than write the parent's */
		p->arena = (struct featprof_ip_arena *)2;
		featprof_ip_me = 0;
		return;
	}
	for (t = a->threads; t; t = t->next) {
		for (i = 0; i < FP_IP_IDS / FP_IP_CHUNK; i++)
			if (t->chunk[i])
				memset(t->chunk[i], 0,
				       sizeof(struct featprof_ip_fig) * FP_IP_CHUNK);
		for (i = 0; i < t->npaths && i < FP_IP_PATHS; i++) {
			struct featprof_ip_path *e = &t->paths[i];

			e->ns = e->count = e->nchild = 0;
		}
		memset(t->anomalies, 0, sizeof(t->anomalies));
		t->depth = t->overflow = 0;
		t->last = 0;
		t->cur = 0;
		if (t->owner != self)
			t->owner = 0;
		else
			t->tid = (unsigned int)__fp_ip_sys(__FP_NR_gettid, 0, 0, 0);
	}
}

/* The thread-exit key and the fork hook, once per process, the primary object's (kept in
 * the arena, which a forked child copies: its key and hook are the parent's, as they
 * should be). */
static inline void __fp_ip_key(const struct featprof_ip_ctl *p, struct featprof_ip_arena *a,
				struct featprof_ip_thread *t)
{
	unsigned int none = 0;
	pthread_key_t k;

	if (!pthread_key_create || !pthread_setspecific || !p->exit_hook)
		return;
	if (__atomic_compare_exchange_n(&a->key_state, &none, 1, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE)) {
		if (!pthread_key_create(&k, p->exit_hook)) {	/* the primary's, pinned */
			a->key = (unsigned int)k;
			if (pthread_atfork && p->fork_hook)
				pthread_atfork(0, 0, p->fork_hook);
			__atomic_store_n(&a->key_state, 2, __ATOMIC_RELEASE);
		} else {
			__atomic_store_n(&a->key_state, 3, __ATOMIC_RELEASE);	/* none */
		}
	}
	while (__atomic_load_n(&a->key_state, __ATOMIC_ACQUIRE) == 1)
		sched_yield();
	if (a->key_state == 2)
		pthread_setspecific((pthread_key_t)a->key, t);
}

/* The calling thread's block: its own in the arena's list (made through another
 * object), a free one, or a new one. 0: no arena, or it is full. */
__attribute__((weak, visibility("hidden"), noinline, unused)) struct featprof_ip_thread *
__fp_ip_thread(struct featprof_ip_ctl *p)
{
	unsigned long long self = (unsigned long long)pthread_self(), none;
	struct featprof_ip_arena *a = __fp_ip_arena(p);
	struct featprof_ip_thread *t, *head;

	if (!a)
		return 0;
	for (t = a->threads; t; t = t->next)
		if (t->owner == self)
			return featprof_ip_me = t;
	for (t = a->threads; t; t = t->next) {
		none = 0;
		if (!t->owner && __atomic_compare_exchange_n(&t->owner, &none, self, 0,
							     __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			break;
	}
	if (!t) {
		t = (struct featprof_ip_thread *)__fp_ip_alloc(a, sizeof(*t));
		if (!t)
			return 0;
		t->magic = FP_IP_MAGIC;
		t->version = FP_IP_ABI_VERSION;
		t->owner = self;
		t->npaths = 1;	/* entry 0: base */
		head = __atomic_load_n(&a->threads, __ATOMIC_ACQUIRE);
		do
			t->next = head;
		while (!__atomic_compare_exchange_n(&a->threads, &head, t, 0, __ATOMIC_RELEASE,
						    __ATOMIC_ACQUIRE));
		__atomic_add_fetch(&a->nthreads, 1, __ATOMIC_RELAXED);
	}
	t->epoch = p->epoch;
	t->tid = (unsigned int)__fp_ip_sys(__FP_NR_gettid, 0, 0, 0);
	__fp_ip_key(p, a, t);
	/* featprof:ip__thread: featprofd's scheduler programs learn where the thread's
	 * region stack is (off-CPU time per region); a nop until it attaches there */
	featprof_ip_thread_site(t);
	return featprof_ip_me = t;
}

/* The region's process-wide id, given at its first event in this object: the id of a
 * region of the same name (another object's, or one unloaded since: a region begun in a
 * library and ended in the executable is one region), else a new one. Under the arena's
 * lock: rare, and two objects must not give one region two ids. 0: all taken, or the
 * name is longer than the arena keeps. */
__attribute__((weak, visibility("hidden"), noinline, unused)) unsigned int
__fp_ip_id(struct featprof_ip_arena *a, struct featprof_ipr *r)
{
	const char *name = (const char *)(r + 1);	/* the name follows the descriptor */
	unsigned int id = 0, i, n;
	size_t len = strlen(name);

	if (len >= FP_IP_NAME)
		return 0;
	while (__atomic_exchange_n(&a->id_lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
	if (r->id) {	/* another thread of this object gave it one meanwhile */
		id = r->id;
		goto out;
	}
	n = a->next_id < FP_IP_IDS ? a->next_id : FP_IP_IDS;
	for (i = 0; i < n && !id; i++)
		if (!memcmp(a->names[i], name, len + 1))
			id = i + 1;
	if (id && !a->regions[id - 1])
		a->regions[id - 1] = r;
	if (!id && a->next_id < FP_IP_IDS) {
		id = a->next_id + 1;
		a->regions[id - 1] = r;	/* before the id is seen: a reader maps it */
		memcpy(a->names[id - 1], name, len + 1);
		__atomic_store_n(&a->next_id, id, __ATOMIC_RELEASE);
	}
	if (id)
		__atomic_store_n(&r->id, id, __ATOMIC_RELEASE);
out:
	__atomic_store_n(&a->id_lock, 0, __ATOMIC_RELEASE);
	return id;
}

/* Region id's figures on thread t, their chunk made at its first use. 0: arena full. */
static inline struct featprof_ip_fig *__fp_ip_fig(struct featprof_ip_ctl *p,
						   struct featprof_ip_thread *t, unsigned int id)
{
	struct featprof_ip_fig **c = &t->chunk[(id - 1) / FP_IP_CHUNK];

	if (!*c)
		*c = (struct featprof_ip_fig *)__fp_ip_alloc(p->arena,
							      sizeof(**c) * FP_IP_CHUNK);
	return *c ? &(*c)[(id - 1) % FP_IP_CHUNK] : 0;
}

/* The path entry of region id open inside path parent, made at its first use; 0 (base)
 * when the table is full (counted). */
static inline unsigned int __fp_ip_child(struct featprof_ip_thread *t, unsigned int parent,
					 unsigned int id)
{
	unsigned int h = (parent * 0x9e3779b1u ^ id * 0x85ebca6bu) % FP_IP_SLOTS, n, k;

	for (k = 0; k < FP_IP_SLOTS; k++, h = (h + 1) % FP_IP_SLOTS) {
		n = t->slot[h];
		if (!n)
			break;
		if (t->paths[n].parent == parent && t->paths[n].id == id)
			return n;
	}
	if (k == FP_IP_SLOTS || t->npaths >= FP_IP_PATHS) {
		t->anomalies[FP_IP_AN_PATHS_FULL]++;
		return 0;
	}
	n = t->npaths;
	t->paths[n].parent = parent;
	t->paths[n].id = id;
	__asm__ __volatile__("" ::: "memory");	/* the entry before the count that shows it */
	t->npaths = n + 1;
	t->slot[h] = (unsigned short)n;
	return n;
}

/* A new epoch: frames of regions whose gate went down (or came up again with another
 * generation) since they began are dropped, the others keep their order and get their
 * paths again; the interval since the thread's last outermost end is not attributed. */
__attribute__((weak, visibility("hidden"), noinline, unused)) void
__fp_ip_epoch(struct featprof_ip_ctl *p, struct featprof_ip_thread *t)
{
	unsigned int k, out = 0, path = 0;

	for (k = 0; k < t->depth && k < FP_IP_DEPTH; k++) {
		struct featprof_ip_frame *f = &t->f[k];
		struct featprof_ipr *r = f->id && f->id <= FP_IP_IDS ? p->arena->regions[f->id - 1]
								     : 0;

		if (!r || !r->gate || r->gen != f->gen) {
			t->anomalies[FP_IP_AN_DISABLED_OPEN]++;
			continue;
		}
		path = __fp_ip_child(t, path, f->id);
		t->f[out] = *f;
		t->f[out++].path = path;
	}
	t->depth = out;
	t->overflow = 0;
	t->cur = path;
	t->last = 0;
	t->epoch = p->epoch;
}

/* Whether a gate of a region with an id is up: featprofd is alive and measures. */
static inline int __fp_ip_measured(struct featprof_ip_arena *a)
{
	unsigned int i, n = a->next_id < FP_IP_IDS ? a->next_id : FP_IP_IDS;

	for (i = 0; i < n; i++)
		if (a->regions[i] && a->regions[i]->gate)
			return 1;
	return 0;
}

/* At exit (or this object's dlclose): while featprofd wants the arena, has not opened it
 * yet, and still measures, wait for it (in 100 us steps, FEATPROF_IP_HANDOVER_MS at
 * most): a process that exits within a millisecond of its first event would otherwise
 * take its figures with it. featprofd takes the arena at the first thread's
 * featprof:ip__thread event, so this waits only for a process that is that quick. */
static inline void __fp_ip_hand_over(struct featprof_ip_ctl *p, struct featprof_ip_arena *a)
{
	long step[2] = { 0, 100000 }, n;	/* a struct timespec */

	for (n = 0; n < FEATPROF_IP_HANDOVER_MS * 10L; n++) {
		if ((__atomic_load_n(&p->handover, __ATOMIC_ACQUIRE) & FP_IP_HANDOVER_STATE) !=
			    FP_IP_HANDOVER_WANTED ||
		    !__fp_ip_measured(a))
			return;
		__fp_ip_sys(__FP_NR_nanosleep, (long)step, 0, 0);
	}
}

/* The object is unloaded (dlclose) or the process exits: the arena handed over, then
 * its descriptors leave the arena's table, so nothing reads them once they are gone;
 * their names stay, and the ids with them. Every translation unit lists it: it runs more
 * than once, and may. */
__attribute__((weak, visibility("hidden"), destructor, unused)) void __fp_ip_unload(void)
{
	struct featprof_ip_ctl *p = featprof_ip_ctl.primary;
	struct featprof_ip_arena *a = p ? p->arena : 0;
	unsigned int i, n;

	if (!a || a == (struct featprof_ip_arena *)1 || a == (struct featprof_ip_arena *)2)
		return;
	__fp_ip_hand_over(p, a);
	while (__atomic_exchange_n(&a->id_lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
	n = a->next_id < FP_IP_IDS ? a->next_id : FP_IP_IDS;
	for (i = 0; i < n; i++)
		if (a->regions[i] && a->regions[i]->owner == &featprof_ip_ctl)
			a->regions[i] = 0;
	__atomic_store_n(&a->id_lock, 0, __ATOMIC_RELEASE);
}

__attribute__((weak, visibility("hidden"), noinline, cold, unused)) void
featprof_ip_begin(struct featprof_ipr *r)
{
	struct featprof_ip_ctl *p = __fp_ip_primary();
	struct featprof_ip_thread *t = featprof_ip_me;
	struct featprof_ip_frame *f;
	unsigned long long now;
	unsigned int id = r->id, d, k;

	if (__builtin_expect(!p, 0) || (__builtin_expect(!t, 0) && !(t = __fp_ip_thread(p))))
		return;
	if (__builtin_expect(!id, 0) && !(id = __fp_ip_id(p->arena, r))) {
		t->anomalies[FP_IP_AN_NO_STATE]++;
		return;
	}
	if (__builtin_expect(t->epoch != p->epoch, 0))
		__fp_ip_epoch(p, t);
	d = t->depth;
	if (__builtin_expect(d >= FP_IP_DEPTH, 0)) {
		t->overflow++;
		t->anomalies[FP_IP_AN_OVERFLOW]++;
		return;
	}
	for (k = 0; k < d; k++)
		if (t->f[k].id == id) {
			struct featprof_ip_fig *g = __fp_ip_fig(p, t, id);

			if (g)
				g->recursion++;
			break;
		}
	f = &t->f[d];
	/* the path: the one the previous instance at this depth had, if it is the same */
	if (f->id != id || f->parent != t->cur || !f->path) {
		f->parent = t->cur;
		f->path = __fp_ip_child(t, t->cur, id);
	}
	f->id = id;
	f->gen = r->gen;
	f->child_ns = 0;
	f->nchild = f->ndesc = 0;
	now = __fp_ip_now(p);	/* late: the work above is outside the region */
	if (!d && t->last) {	/* the base: since the thread's last outermost end */
		t->paths[0].ns += __fp_ip_ns(p, now - t->last);
		t->paths[0].count++;
	}
	f->start = now;
	t->depth = d + 1;
	t->cur = f->path;
}

__attribute__((weak, visibility("hidden"), noinline, cold, unused)) void
featprof_ip_end(struct featprof_ipr *r)
{
	struct featprof_ip_ctl *p = __fp_ip_primary();
	struct featprof_ip_thread *t = featprof_ip_me;
	unsigned long long now, incl, excl;
	struct featprof_ip_frame *f;
	struct featprof_ip_fig *g;
	unsigned int id = r->id, d, k, found;

	if (__builtin_expect(!p, 0))
		return;
	now = __fp_ip_now(p);	/* early */
	if (!t) {	/* none here yet: the thread's block, if another object made it */
		struct featprof_ip_arena *a = p->arena;

		if (!a || (unsigned long)a <= 2 || !(t = __fp_ip_thread(p)))
			return;	/* no begin seen in the process: nothing to end */
	}
	if (__builtin_expect(!id, 0))	/* begun elsewhere, if at all: the name's id */
		id = __fp_ip_id(p->arena, r);
	if (__builtin_expect(t->epoch != p->epoch, 0))
		__fp_ip_epoch(p, t);
	if (__builtin_expect(t->overflow, 0)) {	/* a begin not pushed: this ends it */
		t->overflow--;
		return;
	}
	d = t->depth;
	for (k = d, found = FP_IP_DEPTH; k-- > 0;)
		if (id && t->f[k].id == id) {
			found = k;
			break;
		}
	if (found == FP_IP_DEPTH) {
		t->anomalies[FP_IP_AN_END_WITHOUT_BEGIN]++;
		return;
	}
	if (d - 1 - found)	/* begun above it and never ended: dropped */
		t->anomalies[FP_IP_AN_ABANDONED] += d - 1 - found;
	f = &t->f[found];
	incl = __fp_ip_ns(p, now - f->start);
	excl = incl > f->child_ns ? incl - f->child_ns : 0;
	{	/* the instance's own time, to its path */
		struct featprof_ip_path *e = &t->paths[f->path];

		e->ns += excl;
		e->count++;
		e->nchild += f->nchild;
	}
	t->depth = found;
	t->cur = found ? t->f[found - 1].path : 0;
	if (!found)
		t->last = now;
	if (found) {
		struct featprof_ip_frame *up = &t->f[found - 1];

		up->child_ns += incl;
		up->nchild++;
		up->ndesc += 1 + f->ndesc;
	}
	g = __fp_ip_fig(p, t, id);
	if (!g) {
		t->anomalies[FP_IP_AN_NO_STATE]++;
		return;
	}
	if (!g->count || incl < g->min_ns)
		g->min_ns = incl;
	if (incl > g->max_ns)
		g->max_ns = incl;
	g->count++;
	g->incl_ns += incl;
	g->excl_ns += excl;
	g->nchild += f->nchild;
	g->ndesc += f->ndesc;
	k = __fp_ip_log2(incl);
	g->hist[k < FP_IP_HIST ? k : FP_IP_HIST - 1]++;
}

#endif /* FEATPROF_IP_RUNTIME */

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
