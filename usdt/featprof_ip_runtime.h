/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * featprof_ip_runtime.h - the code of the in-process runtime (usdt/featprof_inprocess.h
 * says what it does to a process), included by featprof_inprocess.h in the one unit per
 * object that defines FEATPROF_IP_RUNTIME (usdt/featprof_ip.c), never directly.
 */
#ifndef FEATPROF_IP_RUNTIME_H
#define FEATPROF_IP_RUNTIME_H

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

static inline unsigned long long __fp_ip_tsc(void)
{
	unsigned int lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return (unsigned long long)hi << 32 | lo;
}

static inline unsigned long long __fp_ip_now(const struct featprof_ip_ctl *p)
{
	if (p->clock == FP_IP_CLOCK_TSC)
		return __fp_ip_tsc();
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

/* The clock into the arena, and where each log2(ns) bucket begins in its units: the first
 * t with ns(t) >= 2^k (featprofd wrote the clock before any gate rose, so before the
 * arena is made). */
static inline void __fp_ip_buckets(const struct featprof_ip_ctl *p, struct featprof_ip_arena *a)
{
	unsigned long long t, ns;
	unsigned int k;

	a->clock = p->clock;
	a->tsc_mult = p->tsc_mult;
	a->tsc_shift = p->tsc_shift;
	a->bucket[0] = 0;
	for (k = 1; k <= FP_IP_HIST; k++) {
		ns = 1ULL << k;
		if (k == FP_IP_HIST || (p->clock == FP_IP_CLOCK_TSC && !p->tsc_mult)) {
			a->bucket[k] = ~0ULL;	/* past the last; or no multiplier: no cache */
			continue;
		}
		t = p->clock != FP_IP_CLOCK_TSC
			    ? ns
			    : (unsigned long long)((((unsigned __int128)ns << p->tsc_shift) +
						    p->tsc_mult - 1) / p->tsc_mult);
		while (t && __fp_ip_ns(p, t - 1) >= ns)	/* exact, whatever the rounding */
			t--;
		while (__fp_ip_ns(p, t) < ns)
			t++;
		a->bucket[k] = t;
	}
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
		if (a)
			__fp_ip_buckets(p, a);
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

			e->time = e->count = e->nchild = 0;
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

/* Frame f at depth d opened at time now (read last: what came before is outside). */
static inline void __fp_ip_open(struct featprof_ip_thread *t, struct featprof_ip_frame *f,
				unsigned int d, unsigned long long now)
{
	if (!d && t->last) {	/* the base: since the thread's last outermost end */
		t->paths[0].time += now - t->last;
		t->paths[0].count++;
	}
	f->start = now;
	t->depth = d + 1;
	t->cur = f->path;
}

/* A begin its fast path declined. */
__attribute__((weak, visibility("hidden"), noinline, cold, unused)) void
__fp_ip_begin_slow(struct featprof_ipr *r)
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
	f->child = 0;
	f->nchild = f->ndesc = 0;
	now = __fp_ip_now(p);	/* late: the work above is outside the region */
	__fp_ip_open(t, f, d, now);
}

/* An instance of frame f into its region's figures g (clock units), but its histogram. */
static inline void __fp_ip_add(struct featprof_ip_fig *g, const struct featprof_ip_frame *f,
			       unsigned long long incl, unsigned long long excl)
{
	if (!g->count || incl < g->min)
		g->min = incl;
	if (incl > g->max)
		g->max = incl;
	g->count++;
	g->incl += incl;
	g->excl += excl;
	g->nchild += f->nchild;
	g->ndesc += f->ndesc;
}

/* An end its fast path declined, with the timestamp it took. */
__attribute__((weak, visibility("hidden"), noinline, cold, unused)) void
featprof_ip_end_at(struct featprof_ipr *r, unsigned long long now)
{
	struct featprof_ip_ctl *p = __fp_ip_primary();
	struct featprof_ip_thread *t = featprof_ip_me;
	unsigned long long incl, excl;
	struct featprof_ip_frame *f;
	struct featprof_ip_fig *g;
	unsigned int id = r->id, d, k, found;

	if (__builtin_expect(!p, 0))
		return;
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
	incl = now - f->start;	/* clock units */
	excl = incl > f->child ? incl - f->child : 0;
	{	/* the instance's own time, to its path */
		struct featprof_ip_path *e = &t->paths[f->path];

		e->time += excl;
		e->count++;
		e->nchild += f->nchild;
	}
	t->depth = found;
	t->cur = found ? t->f[found - 1].path : 0;
	if (!found)
		t->last = now;
	if (found) {
		struct featprof_ip_frame *up = &t->f[found - 1];

		up->child += incl;
		up->nchild++;
		up->ndesc += 1 + f->ndesc;
	}
	g = __fp_ip_fig(p, t, id);
	if (!g) {
		t->anomalies[FP_IP_AN_NO_STATE]++;
		return;
	}
	__fp_ip_add(g, f, incl, excl);
	k = __fp_ip_log2(__fp_ip_ns(p, incl));
	g->hist[k < FP_IP_HIST ? k : FP_IP_HIST - 1]++;
}

/* A site's instance outside its figure's cached bucket: counted in its own, which the
 * cache holds from now on. */
__attribute__((weak, visibility("hidden"), noinline, cold, unused)) void
__fp_ip_bucket(struct featprof_ip_ctl *p, struct featprof_ip_fig *g, unsigned long long incl)
{
	const unsigned long long *b = p->arena->bucket;
	unsigned int k = __fp_ip_log2(__fp_ip_ns(p, incl));

	k = k < FP_IP_HIST ? k : FP_IP_HIST - 1;
	g->hist[k]++;
	g->hist_k = k;
	g->hist_lo = b[k];
	g->hist_span = b[k + 1] - b[k];	/* the last: to the end of the clock */
}

/* An instance into its figure's histogram: through the bucket cache, which holds the
 * bucket of the region's previous instance (no address waiting for the timestamp). */
static inline void __fp_ip_hist(struct featprof_ip_ctl *p, struct featprof_ip_fig *g,
				unsigned long long incl)
{
	if (__builtin_expect(incl - g->hist_lo < g->hist_span, 1))
		g->hist[g->hist_k]++;
	else
		__fp_ip_bucket(p, g, incl);
}

/*
 * The fast paths, where a site's call lands while its gate is up: the usual event
 * of a thread that has its block, of a region that has its id, under the TSC clock, with
 * no new epoch; a begin at a depth whose previous instance had the same path (and no
 * recursion), an end of the innermost open region whose figures exist. They do what
 * featprof_ip_begin and featprof_ip_end_at do then, in clock units (featprofd converts),
 * and the histogram through the figure's bucket cache; any other event goes there (an end
 * with the timestamp it took). A begin reads the clock last, an end first. What they
 * leave out (a conversion per event, a histogram address that waits for the timestamp,
 * the work of the rare cases) is what kept an event 4-9 ns above the timestamp read
 * here; inline in every site they were no faster (docs/BENCHMARKS.md "In-process
 * events beside the timestamp read").
 */
__attribute__((weak, visibility("hidden"), noinline, unused)) void
featprof_ip_begin(struct featprof_ipr *r)
{
	struct featprof_ip_ctl *p = featprof_ip_ctl.primary;
	struct featprof_ip_thread *t = featprof_ip_me;
	struct featprof_ip_frame *f;
	unsigned long long now;
	unsigned int id = r->id, d, k;

	if (__builtin_expect(!p || !t || !id || p->clock != FP_IP_CLOCK_TSC ||
				     t->epoch != p->epoch || t->depth >= FP_IP_DEPTH,
			     0))
		goto slow;
	d = t->depth;
	f = &t->f[d];
	if (__builtin_expect(f->id != id || f->parent != t->cur || !f->path, 0))
		goto slow;
	for (k = 0; k < d; k++)
		if (__builtin_expect(t->f[k].id == id, 0))	/* recursion: counted there */
			goto slow;
	f->gen = r->gen;
	f->child = 0;
	f->nchild = f->ndesc = 0;
	now = __fp_ip_tsc();
	__fp_ip_open(t, f, d, now);
	return;
slow:
	__fp_ip_begin_slow(r);
}

__attribute__((weak, visibility("hidden"), noinline, unused)) void
featprof_ip_end(struct featprof_ipr *r)
{
	struct featprof_ip_ctl *p = featprof_ip_ctl.primary;
	struct featprof_ip_thread *t;
	struct featprof_ip_frame *f;
	struct featprof_ip_path *e;
	struct featprof_ip_fig *g;
	unsigned long long now, incl, excl;
	unsigned int id, d;

	if (__builtin_expect(!p || p->clock != FP_IP_CLOCK_TSC, 0)) {
		if (p)
			featprof_ip_end_at(r, __fp_ip_now(p));	/* early */
		return;
	}
	now = __fp_ip_tsc();
	t = featprof_ip_me;
	id = r->id;
	/* depth 0 (nothing open) and FP_IP_DEPTH (the only depth with overflowed begins to
	 * end first) go the slow way, in one compare */
	if (__builtin_expect(!t || !id || t->epoch != p->epoch ||
				     t->depth - 1 >= FP_IP_DEPTH - 1,
			     0))
		goto slow;
	d = t->depth;
	f = &t->f[d - 1];
	g = t->chunk[(id - 1) / FP_IP_CHUNK];
	if (__builtin_expect(f->id != id || !g, 0))
		goto slow;
	g += (id - 1) % FP_IP_CHUNK;
	incl = now - f->start;
	excl = incl > f->child ? incl - f->child : 0;
	e = &t->paths[f->path];	/* the instance's own time, to its path */
	e->time += excl;
	e->count++;
	e->nchild += f->nchild;
	t->depth = d - 1;
	if (d > 1) {
		struct featprof_ip_frame *up = f - 1;

		t->cur = up->path;
		up->child += incl;
		up->nchild++;
		up->ndesc += 1 + f->ndesc;
	} else {
		t->cur = 0;
		t->last = now;
	}
	__fp_ip_add(g, f, incl, excl);
	__fp_ip_hist(p, g, incl);
	return;
slow:
	featprof_ip_end_at(r, now);
}

#endif /* FEATPROF_IP_RUNTIME_H */
