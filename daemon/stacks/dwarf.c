// SPDX-License-Identifier: GPL-2.0
/*
 * sample --stacks --unwind dwarf: unwinding the copies the sampler sends (bpf/sample.bpf.c
 * copy_stack: the thread's user registers and up to FP_STACK_COPY bytes of its stack
 * above sp, with the sample's key) by the call frame information of the objects mapped
 * (.eh_frame, else .debug_frame of the file or its debug file): what perf record
 * --call-graph dwarf does, with the same library, elfutils' libdwfl, chosen over reading
 * .eh_frame rows by hand because it also handles the CFA expressions, signal frames and
 * separate debug files the objects people run carry (docs/BENCHMARKS.md "Call stacks":
 * what it costs).
 *
 * One Dwfl per session: the process's modules reported from /proc/PID/maps once, again
 * when an address falls outside every module (a library loaded since); a thread state
 * attached once whose callbacks read the copy being unwound: its registers at the start,
 * stack words inside the copy, nothing else (memory outside it is not read: the process
 * has moved on since the sample). The CFI tables libdwfl reads stay cached in it.
 *
 * What a copy takes is what the unwinds use: each copy unwound to its outermost frame
 * says how far above sp it read; over a window of copies the most of that, doubled and
 * rounded up to FP_STACK_CHUNKs (2 at least), is what the sampler copies next
 * (fp_dwarf__chunks), and a copy that wanted more than it was given (cut by that limit,
 * not by the stack's end) puts it back to all FP_STACK_COPY bytes for good: a program
 * whose stacks deepen later loses at most the copies until the next drain (every 200
 * ms), once (copies_cut). The copy is most of what a DWARF sample costs the target
 * (docs/BENCHMARKS.md "Call stacks").
 */
#include <bpf/libbpf.h>
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/user.h>
#include <time.h>

#include "common/err.h"
#include "bpf/featprof_bpf.h"
#include "stacks_impl.h"

#define FP_DWARF_FRAMES FP_STACK_FRAMES
/* a word of the copy's registers: x86-64's struct pt_regs, whose first words
 * struct user_regs_struct lays out alike */
#define REG(r) (offsetof(struct user_regs_struct, r) / 8)
_Static_assert(offsetof(struct user_regs_struct, ss) / 8 + 1 == FP_PT_REGS_WORDS,
	       "struct pt_regs and struct user_regs_struct disagree");

struct fp_dwarf {
	pid_t pid;
	Dwfl *dwfl;
	struct ring_buffer *rb;
	const struct fp_stack_copy *cur;	/* the copy being unwound */
	uint64_t ips[FP_DWARF_FRAMES];
	int n;
	bool rereported;		/* this drain reported the modules again */
	fp_dwarf_fn fn;
	void *arg;
	uint64_t copies, truncated, cpu_ns, frames;
	unsigned chunks;		/* what the sampler copies now, in FP_STACK_CHUNKs */
	uint64_t used;			/* the copy being unwound: bytes above sp it read */
	bool wanted_more;		/* ... it wanted more than its limit gave */
	uint64_t win_copies, win_used, win_cut;	/* this window: copies, most used, cut */
	uint64_t cut;			/* copies cut by the limit, in all */
	bool stuck;			/* a copy was cut: all of the stack from then on */
	struct rule *rules;		/* the CFI's rules by address (open addressing) */
	unsigned nrules, used_rules;
	uint64_t fast, mismatches;	/* copies unwound by the rules; verify: differed */
	bool verify;			/* FEATPROF_DWARF_VERIFY: libdwfl too, compared */
};

#define WINDOW 256	/* copies between two lowerings of the limit */

/*
 * The rules by address. Most frames' call frame information on x86-64 is three rules:
 * the CFA is rsp or rbp plus an offset, the return address is saved at CFA + an offset,
 * rbp is kept or saved at CFA + an offset (and the caller's rsp is the CFA, as the ABI
 * says). libdwfl finds and runs an FDE's program for every frame of every copy (its
 * frames allocated, its registers copied); here each address's rules are read from the
 * same CFI once (dwarf_cfi_addrframe: .eh_frame, else .debug_frame, as libdwfl) and
 * kept, and a copy whose frames all have such rules is unwound by them in one pass.
 * Anything else (a CFA expression or another register, a signal frame, a register
 * saved in a register, no CFI: libdwfl's frame-pointer fallback) unwinds the whole copy
 * by libdwfl, as before. FEATPROF_DWARF_VERIFY=1 in featprofd's environment unwinds every
 * copy both ways and counts those whose frames differ (tests/integration/test_unwind.py).
 */
enum { R_EMPTY, R_FAST, R_SLOW };
enum { RBP_SAME, RBP_AT, RBP_LOST };
struct rule {
	uint64_t pc;		/* the address looked up */
	uint8_t kind, cfa_reg, rbp;	/* cfa_reg: 6 rbp, 7 rsp (DWARF numbers) */
	int64_t cfa_off, ra_off, rbp_off;	/* ra_off, rbp_off: from the CFA */
};
#define RULES_MAX (1u << 16)
#define X86_RBP 6
#define X86_RSP 7
#define X86_RA 16

static void adapt(struct fp_dwarf *d)
{
	unsigned want;

	if (d->win_cut) {	/* too little for some: all of it, for good */
		d->chunks = FP_STACK_COPY / FP_STACK_CHUNK;
		d->stuck = true;
	} else if (d->win_copies >= WINDOW && !d->stuck) {
		want = (unsigned)((2 * d->win_used + FP_STACK_CHUNK - 1) / FP_STACK_CHUNK);
		want = want < 2 ? 2 : want;
		if (want < d->chunks)
			d->chunks = want;
	} else {
		return;
	}
	d->win_copies = d->win_used = d->win_cut = 0;
}

unsigned fp_dwarf__chunks(const struct fp_dwarf *d)
{
	return d->chunks;
}

static const Dwfl_Callbacks dwfl_cbs = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct fp_dwarf *d = arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;	/* one thread: the copy's */
	*thread_argp = d;
	return (pid_t)d->cur->tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

/* A stack word: only inside the copy. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct fp_dwarf *d = arg;
	uint64_t sp = d->cur->regs[REG(rsp)];

	(void)dwfl;
	if (addr < sp)
		return false;
	if (addr - sp + sizeof(*result) > d->cur->size) {
		/* past the copy: the stack's end, or the limit (then it wanted more) */
		d->wanted_more |= d->cur->limited && addr - sp < FP_STACK_COPY;
		return false;
	}
	memcpy(result, d->cur->stack + (addr - sp), sizeof(*result));
	if (addr - sp + sizeof(*result) > d->used)
		d->used = addr - sp + sizeof(*result);
	return true;
}

/* The copy's registers in DWARF's x86-64 numbering: rax rdx rcx rbx rsi rdi rbp rsp,
 * r8-r15, then the return address column, rip. */
static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	static const uint8_t from[17] = {
		REG(rax), REG(rdx), REG(rcx), REG(rbx), REG(rsi), REG(rdi), REG(rbp), REG(rsp),
		REG(r8),  REG(r9),  REG(r10), REG(r11), REG(r12), REG(r13), REG(r14), REG(r15),
		REG(rip),
	};
	struct fp_dwarf *d = arg;
	Dwarf_Word regs[17];
	int k;

	for (k = 0; k < 17; k++)
		regs[k] = d->cur->regs[from[k]];
	return dwfl_thread_state_registers(thread, 0, 17, regs);
}

static const Dwfl_Thread_Callbacks thread_cbs = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static int frame_cb(Dwfl_Frame *frame, void *arg)
{
	struct fp_dwarf *d = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(frame, &pc, &activation) || !pc)
		return DWARF_CB_ABORT;
	d->ips[d->n++] = pc;
	return d->n < FP_DWARF_FRAMES ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* The process's modules, reported (again: add == true keeps those reported before). */
static int report(struct fp_dwarf *d, bool add)
{
	int ret;

	if (add)
		dwfl_report_begin_add(d->dwfl);
	else
		dwfl_report_begin(d->dwfl);
	ret = dwfl_linux_proc_report(d->dwfl, d->pid);
	if (dwfl_report_end(d->dwfl, NULL, NULL) || ret)
		return ret > 0 ? -ret : -ENOENT;
	return 0;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

/* Where register regno of the caller is, by frame f's CFI: same (1), at CFA + *off (0),
 * lost (2); -1 for any other rule. */
static int saved_at(Dwarf_Frame *f, int regno, int64_t *off)
{
	Dwarf_Op mem[3], *ops;
	size_t n;

	if (dwarf_frame_register(f, regno, mem, &ops, &n))
		return -1;
	if (!n)
		return ops ? 2 : 1;	/* undefined : same value */
	if (ops[0].atom != DW_OP_call_frame_cfa || n > 2 ||
	    (n == 2 && ops[1].atom != DW_OP_plus_uconst))
		return -1;
	*off = n == 2 ? (int64_t)ops[1].number : 0;
	return 0;
}

/* r's rules from the CFI (kind R_SLOW where they are not the three simple ones). */
static void read_rule(struct fp_dwarf *d, struct rule *r)
{
	Dwfl_Module *m = dwfl_addrmodule(d->dwfl, r->pc);
	Dwarf_Frame *f = NULL;
	Dwarf_CFI *cfi;
	Dwarf_Addr bias;
	Dwarf_Op *ops;
	size_t n;
	bool sig;
	int ra;

	r->kind = R_SLOW;
	if (!m)
		return;
	cfi = dwfl_module_eh_cfi(m, &bias);
	if (!cfi || dwarf_cfi_addrframe(cfi, r->pc - bias, &f)) {
		free(f);
		f = NULL;
		cfi = dwfl_module_dwarf_cfi(m, &bias);
		if (!cfi || dwarf_cfi_addrframe(cfi, r->pc - bias, &f)) {
			free(f);
			return;
		}
	}
	ra = dwarf_frame_info(f, NULL, NULL, &sig);
	if (ra == X86_RA && !sig && !dwarf_frame_cfa(f, &ops, &n) && n == 1 &&
	    ops[0].atom == DW_OP_bregx && (ops[0].number == X86_RSP || ops[0].number == X86_RBP)) {
		int rbp = saved_at(f, X86_RBP, &r->rbp_off), rra = saved_at(f, X86_RA, &r->ra_off);

		r->cfa_reg = (uint8_t)ops[0].number;
		r->cfa_off = (int64_t)ops[0].number2;
		r->rbp = rbp == 1 ? RBP_SAME : rbp == 0 ? RBP_AT : RBP_LOST;
		if (rbp >= 0 && (rra == 0 || rra == 2)) {
			r->kind = R_FAST;
			if (rra == 2)	/* undefined: the outermost frame */
				r->ra_off = INT64_MIN;
		}
	}
	free(f);
}

static void clear_rules(struct fp_dwarf *d)
{
	if (d->rules)
		memset(d->rules, 0, sizeof(*d->rules) * d->nrules);
	d->used_rules = 0;
}

/* The slot of address pc in table t of n (a power of two): its rules, or the empty slot
 * where they go. */
static struct rule *slot(struct rule *t, unsigned n, uint64_t pc)
{
	unsigned k = (unsigned)((pc * 0x9E3779B97F4A7C15ULL) >> 40);

	while (t[k & (n - 1)].kind && t[k & (n - 1)].pc != pc)
		k++;
	return &t[k & (n - 1)];
}

/* The table doubled (1024 slots first), its rules moved; unchanged without memory. */
static void grow(struct fp_dwarf *d)
{
	unsigned n = d->nrules ? 2 * d->nrules : 1024, i;
	struct rule *t = calloc(n, sizeof(*t));

	if (!t)
		return;
	for (i = 0; i < d->nrules; i++)
		if (d->rules[i].kind)
			*slot(t, n, d->rules[i].pc) = d->rules[i];
	free(d->rules);
	d->rules = t;
	d->nrules = n;
}

/* The rules at address pc, read once and kept while the table is under half full
 * (RULES_MAX slots at most; past that, read each time). */
static const struct rule *rule_at(struct fp_dwarf *d, uint64_t pc)
{
	static struct rule one;
	struct rule *r;

	if (2 * (d->used_rules + 1) > d->nrules && d->nrules < RULES_MAX)
		grow(d);
	if (2 * (d->used_rules + 1) > d->nrules) {
		one = (struct rule){ .pc = pc };
		read_rule(d, &one);
		return &one;
	}
	r = slot(d->rules, d->nrules, pc);
	if (!r->kind) {
		r->pc = pc;
		read_rule(d, r);
		d->used_rules++;
	}
	return r;
}

/* The copy unwound by the rules: 0 the outermost frame reached (or the stack's end), 1
 * stopped early, -1 a frame without simple rules (d->n and the reads undone by the
 * caller). */
static int unwind_fast(struct fp_dwarf *d)
{
	const struct fp_stack_copy *c = d->cur;
	uint64_t pc = c->regs[REG(rip)], sp = c->regs[REG(rsp)], bp = c->regs[REG(rbp)];
	bool bp_ok = true;
	Dwarf_Word w;

	while (pc) {
		const struct rule *r;
		uint64_t cfa;

		d->ips[d->n++] = pc;
		if (d->n >= FP_DWARF_FRAMES)
			return 1;
		r = rule_at(d, d->n == 1 ? pc : pc - 1);	/* a return address: its call */
		if (r->kind != R_FAST || (r->cfa_reg == X86_RBP && !bp_ok))
			return -1;
		cfa = (r->cfa_reg == X86_RSP ? sp : bp) + (uint64_t)r->cfa_off;
		if (r->ra_off == INT64_MIN)
			return 0;
		if (r->rbp == RBP_AT) {
			if (!memory_read(d->dwfl, cfa + (uint64_t)r->rbp_off, &w, d))
				bp_ok = false;
			else
				bp = w;
		} else if (r->rbp == RBP_LOST) {
			bp_ok = false;
		}
		/* a return address past the copy, or 0, ends the stack without an error, as
		 * libdwfl ends it (FEATPROF_DWARF_VERIFY: the copies where it is past the copy
		 * differed once in 10,000 before); wanted_more says whether the copy's limit
		 * cut it */
		if (!memory_read(d->dwfl, cfa + (uint64_t)r->ra_off, &w, d) || !w)
			return 0;
		pc = w;
		sp = cfa;
	}
	return 1;	/* the first frame's pc 0 */
}

/* The copy unwound by libdwfl: 0 the outermost frame reached, else stopped early. */
static int unwind_dwfl(struct fp_dwarf *d)
{
	d->n = 0;
	return dwfl_getthread_frames(d->dwfl, (pid_t)d->cur->tid, frame_cb, d);
}

/* verify: libdwfl's frames of the copy against the rules' (in d->ips[0..n), ret). */
static void verify(struct fp_dwarf *d, int ret)
{
	uint64_t ips[FP_DWARF_FRAMES], used = d->used;
	bool more = d->wanted_more;
	int n = d->n, r;

	memcpy(ips, d->ips, sizeof(ips[0]) * (size_t)n);
	r = unwind_dwfl(d);
	if (d->n != n || memcmp(ips, d->ips, sizeof(ips[0]) * (size_t)n) || (r != 0) != (ret != 0))
		d->mismatches++;
	memcpy(d->ips, ips, sizeof(ips[0]) * (size_t)n);
	d->n = n;
	d->used = used;
	d->wanted_more = more;
}

/* One copy out of the ring: unwound, handed to d->fn. */
static int on_copy(void *ctx, void *data, size_t size)
{
	struct fp_dwarf *d = ctx;
	int ret, truncated;

	if (size < sizeof(struct fp_stack_copy) || !d->fn)
		return 0;	/* !fn: dropped unread (a reset) */
	d->cur = data;
	d->n = 0;
	d->used = 0;
	d->wanted_more = false;
	if (!d->rereported &&
	    !dwfl_addrmodule(d->dwfl, d->cur->regs[REG(rip)])) {
		d->rereported = true;	/* a library loaded since: once a drain */
		report(d, true);
		clear_rules(d);
	}
	ret = unwind_fast(d);
	if (ret < 0) {
		d->used = 0;
		d->wanted_more = false;
		ret = unwind_dwfl(d);
	} else {
		d->fast++;
		if (d->verify)
			verify(d, ret);
	}
	/* 0: the outermost frame reached; else it stopped early (the copy ended, an address
	 * without CFI), unless the frames filled the array (cut, as the stack map cuts);
	 * libdwfl ends quietly where the copy's limit cut it: truncated too */
	truncated = ret != 0 || d->wanted_more;
	d->copies++;
	d->truncated += truncated;
	d->win_copies++;
	if (d->wanted_more) {
		d->win_cut++;
		d->cut++;
	} else if (!truncated && d->used > d->win_used) {
		d->win_used = d->used;	/* a whole unwind's need */
	}
	d->frames += (uint64_t)d->n;
	d->fn(d->arg, &d->cur->key, d->ips, d->n, truncated);
	return 0;
}

struct fp_dwarf *fp_dwarf__new(pid_t pid, int ring_fd, struct fp_err *e)
{
	struct fp_dwarf *d = calloc(1, sizeof(*d));
	int ret;

	if (!d) {
		fp_fail(e, ENOMEM, "out of memory");
		return NULL;
	}
	d->pid = pid;
	d->chunks = FP_STACK_COPY / FP_STACK_CHUNK;
	d->verify = getenv("FEATPROF_DWARF_VERIFY") && *getenv("FEATPROF_DWARF_VERIFY") == '1';
	d->dwfl = dwfl_begin(&dwfl_cbs);
	ret = d->dwfl ? report(d, false) : -ENOMEM;
	if (ret) {
		fp_fail(e, d->dwfl ? EIO : ENOMEM, "pid %d: libdwfl cannot read its mappings: %s",
			(int)pid, d->dwfl ? dwfl_errmsg(-1) : "out of memory");
		fp_dwarf__free(d);
		return NULL;
	}
	if (!dwfl_attach_state(d->dwfl, NULL, pid, &thread_cbs, d)) {
		fp_fail(e, EIO, "pid %d: libdwfl cannot unwind it: %s", (int)pid,
			dwfl_errmsg(-1));
		fp_dwarf__free(d);
		return NULL;
	}
	d->rb = ring_buffer__new(ring_fd, on_copy, d, NULL);
	if (!d->rb) {
		fp_fail(e, errno, "pid %d: cannot read the stack copies' ring: %s", (int)pid,
			strerror(errno));
		fp_dwarf__free(d);
		return NULL;
	}
	return d;
}

int fp_dwarf__drain(struct fp_dwarf *d, fp_dwarf_fn fn, void *arg)
{
	uint64_t t0 = thread_cpu_ns();
	int n;

	d->fn = fn;
	d->arg = arg;
	d->rereported = false;
	n = ring_buffer__consume(d->rb);
	adapt(d);
	d->cpu_ns += thread_cpu_ns() - t0;
	return n;
}

void fp_dwarf__counts(const struct fp_dwarf *d, uint64_t *copies, uint64_t *truncated,
		      uint64_t *cpu_ns, uint64_t *frames, uint64_t *cut)
{
	*cut = d->cut;
	*copies = d->copies;
	*truncated = d->truncated;
	*cpu_ns = d->cpu_ns;
	*frames = d->frames;
}

void fp_dwarf__rules(const struct fp_dwarf *d, uint64_t *fast, uint64_t *mismatches,
		     bool *verified)
{
	*fast = d->fast;
	*mismatches = d->mismatches;
	*verified = d->verify;
}

void fp_dwarf__free(struct fp_dwarf *d)
{
	if (!d)
		return;
	free(d->rules);
	ring_buffer__free(d->rb);
	if (d->dwfl)
		dwfl_end(d->dwfl);
	free(d);
}
