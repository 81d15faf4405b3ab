/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * featprof.h - mark feature regions in a C or C++ program for featprof.
 *
 * Use:
 *
 *	FP_BEGIN(compress, "Compression");          region "compress" of feature Compression
 *	FP_END(compress);
 *	FP_BEGIN(enc_zip, "Encryption", "Compression");   an interaction region FR(A,B)
 *	FP_SCOPE(hash, "Checksum");                 ends when the enclosing scope exits
 *
 * Three builds of the same source:
 *  - plain (the default): header only, nothing to link. A site is a few nops and its ELF
 *    notes; featprofd traces it by a uprobe when asked.
 *  - sampling (-DFEATPROF_SAMPLING, or FEATPROF_SAMPLING_GATED): header only too; every
 *    site also keeps the thread's stack of open regions for `featprof sample` (below).
 *  - in-process (-DFEATPROF_INPROCESS): a site whose region's gate is up times itself in
 *    the process (usdt/featprof_inprocess.h). The runtime must be defined once per object
 *    (executable or shared library): compile usdt/featprof_ip.c, or featprof_ip.c as
 *    installed (`pkg-config --variable=ipsource featprof`), into each object exactly once,
 *    with -DFEATPROF_INPROCESS like the rest of it; every translation unit of the object is
 *    built in-process alike.
 *
 * A region name is a C identifier; features are string literals. A region may have any
 * number of begin and end sites, in several functions, translation units and shared
 * objects; its features are the union of those named at its begin sites.
 *
 * In C, FP_SCOPE needs a per-region cleanup function, and C cannot define a function
 * inside another; declare it once per translation unit at file scope with
 * FP_SCOPE_DEFINE(region). C++ needs no declaration (a local class with an inline
 * destructor ends the region, also when an exception unwinds the scope).
 *
 * What a site compiles to (x86-64, default shape FEATPROF_SHAPE_SHIELDED), 19 bytes:
 *
 *	990:	90                         nop                   <- note location
 *		48 8d 64 24 80             lea    -0x80(%rsp),%rsp
 *		0f 1f 44 00 00             nopl   0x0(%rax,%rax,1) <- optimizable site
 *		48 8d a4 24 80 00 00 00    lea    0x80(%rsp),%rsp
 *
 * plus two ELF notes that are not loaded into memory:
 *  - a standard stapsdt note (provider "featprof", name "<region>__begin" or
 *    "<region>__end", no arguments), so readelf -n, bpftrace, perf and libbpf see the site;
 *  - a featprof catalog note (.note.featprof) with the region, its features, the source
 *    file and line and the site's shape, keyed by the same address.
 * The region and whether the site begins or ends it are known from the notes alone: the
 * tracer attaches one uprobe per site and learns the site from the attach cookie.
 *
 * Why this shape (measured on Linux 6.18, a KVM guest, bare perf uprobe, see
 * docs/PROBE-ABI.md):
 *  - A uprobe on a 1-byte nop traps (int3) and the kernel emulates the nop: safe on every
 *    kernel, ~950 ns a hit here. It is where the note points, so any tool that attaches
 *    at the note's location takes this path.
 *  - Linux 6.18 rewrites a uprobe on a 5-byte nop into a CALL to [uprobes-trampoline]
 *    (~710-790 ns a hit here, about 2x cheaper than int3 on bare metal). That CALL pushes
 *    a return address at -8(%rsp), inside the 128-byte red zone where a leaf function may
 *    keep live data: a bare nop5 corrupts it. Here the nop5 runs only with %rsp lowered
 *    by 128, so the pushed address lands at -136 of the real %rsp, below the red zone.
 *    lea changes no flags, loads and stores nothing. featprofd can attach to the nop5
 *    where it has seen the running kernel optimize one (it tests itself at start-up);
 *    by default it attaches at the nop1, which measured as cheap and more exact here
 *    (docs/TRACING.md).
 *  - nop1+nop10 (libbpf usdt.h since 2026) is for kernels that optimize nop10 without
 *    touching the red zone; Linux 6.18 refuses a uprobe on nop10 (-ENOTSUPP), so it is
 *    not used here.
 * An inactive site is 4 instructions: nops and flag-free stack adjustments, no load,
 * store, branch, call or argument set-up (tests/unit/disasm.sh checks the compiled code).
 *
 * Unwinding: while the nop5 or the second lea executes, %rsp is 128 below what the
 * function's CFI describes. A frame-pointer unwinder is unaffected. A DWARF unwinder
 * that samples exactly there must add 128 to %rsp first: every such window is in the
 * catalog (`featprof list --json`: optimizable_offset and the 13 bytes after it), so a
 * sampler that knows the catalog can correct it. featprof's own does not: with
 * `sample --stacks --unwind dwarf` a sample that lands in the window (2 of an idle site's 4
 * instructions) is unwound from a %rsp 128 bytes low, and its stack may be wrong or cut
 * short from there; `--unwind fp` is unaffected. While a uprobe is attached at the nop5 it
 * is a CALL into the kernel's trampoline and a sample lands in the kernel, not in the
 * window.
 *
 * Sampling (`featprof sample`): with FEATPROF_SAMPLING defined, every site also keeps the
 * thread's stack of open regions in thread-local storage, `featprof_tls` below, which a
 * sampler reads at each sample: exact attribution of samples to regions, however their
 * code is laid out. The price: the site is no longer nops only (a begin ~5, an end ~6
 * instructions: a load, a compare, stores; measured in docs/BENCHMARKS.md), always, not
 * only while sampled; a build without it is unchanged. x86-64 executables.
 * With FEATPROF_SAMPLING_GATED instead, the stack is kept only while a sampler raises
 * the gate (`featprof_sample_gate`, a USDT semaphore: featprofd attaches a uprobe that
 * never fires to the `featprof:sample__gate` note, and the kernel counts the semaphore up
 * in the process): an idle begin is a load, a test and a branch; an idle end tests the
 * thread's depth and the gate. Regions already open when the gate rises are not on the
 * stack (their samples go to what encloses them), as tracing misses them too; their
 * ends are counted (`unmatched`).
 *
 * Tunables (define before including; all FEATPROF_, the earlier FP_SITE_SHAPE and
 * FP_DISABLE still taken):
 *  FEATPROF_SITE_SHAPE      FEATPROF_SHAPE_SHIELDED (default) or FEATPROF_SHAPE_NOP1
 *                           (a single nop)
 *  FEATPROF_DISABLE         compile every macro to nothing
 *  FEATPROF_SAMPLING        keep the region stack for the sampler (in every translation
 *                           unit)
 *  FEATPROF_SAMPLING_GATED  the same, kept only while sampled (implies FEATPROF_SAMPLING;
 *                           every translation unit of the executable alike)
 *  FEATPROF_INPROCESS       time enabled regions in the process (the runtime once per
 *                           object, above)
 *
 * Limits: a source path must not contain '"' or '\'.
 */
#ifndef FEATPROF_H
#define FEATPROF_H

#define FEATPROF_VERSION_MAJOR 0
#define FEATPROF_VERSION_MINOR 1
#define FEATPROF_VERSION_PATCH 0

/* The tunables' earlier spellings, still taken. */
#if defined(FP_DISABLE) && !defined(FEATPROF_DISABLE)
#define FEATPROF_DISABLE
#endif
#if defined(FP_SITE_SHAPE) && !defined(FEATPROF_SITE_SHAPE)
#define FP_SHAPE_NOP1 0
#define FP_SHAPE_SHIELDED 1
#define FEATPROF_SITE_SHAPE FP_SITE_SHAPE
#endif

/* The probe ABI, which featprofd reads (usdt/featprof_abi.h names it for its code):
 * catalog note type, site kinds and shapes (a shape is also FEATPROF_SITE_SHAPE's value). */
#define FEATPROF_ABI_NOTE_TYPE_SITE 1
#define FEATPROF_ABI_KIND_BEGIN 1
#define FEATPROF_ABI_KIND_END 2
/* a site's flags (the catalog note's byte after the shape, reserved and 0 before; older
 * featprofd ignore it): a site of an FP_SCOPE, its begin at FP_SCOPE's line, its end at
 * the scope's exits (in C the end's line is FP_SCOPE_DEFINE's, whose function the
 * cleanup calls) */
#define FEATPROF_ABI_SITE_SCOPE 1
#define FEATPROF_SHAPE_NOP1 0
#define FEATPROF_SHAPE_SHIELDED 1
#define FEATPROF_ABI_SHIELD_LEN 19	/* bytes of a shielded site */
#define FEATPROF_ABI_SHIELD_NOP5 6	/* offset of its nop5 from the note location */

/* --- what a program writes: FP_BEGIN, FP_END, FP_SCOPE, FP_SCOPE_DEFINE -------------- */
/* (their parts, __fp_*, are defined further down: a macro is expanded where it is used) */

#ifdef FEATPROF_DISABLE

#define FP_BEGIN(region, ...) ((void)0)
#define FP_END(region) ((void)0)
#define FP_SCOPE(region, ...) typedef int __fp_cat(__fp_unused_, __LINE__) __attribute__((unused))
#define FP_SCOPE_DEFINE(region) struct __fp_cat(__fp_unused_, region)

#else

#define FP_BEGIN(region, ...) __fp_begin(region, 0, __VA_ARGS__)
#define __fp_begin(region, flags, ...)                                                     \
	do {                                                                               \
		__fp_site(region, FEATPROF_ABI_KIND_BEGIN, flags, "begin",                 \
			  ".asciz " #__VA_ARGS__ "\n");                                       \
		__fp_begin_stack(region);                                                  \
		__fp_ip_begin(region);                                                     \
	} while (0)
#define FP_END(region) __fp_end(region, 0)
/* an end; flags: FEATPROF_ABI_SITE_* (a scope's end: FP_SCOPE, FP_SCOPE_DEFINE) */
#define __fp_end(region, flags)                                                            \
	do {                                                                               \
		__fp_ip_end(region);                                                       \
		__fp_end_stack(region);                                                    \
		__fp_site(region, FEATPROF_ABI_KIND_END, flags, "end", "");                \
	} while (0)

#ifdef __cplusplus
#define FP_SCOPE(region, ...)                                                              \
	__fp_begin(region, FEATPROF_ABI_SITE_SCOPE, __VA_ARGS__);                          \
	struct __fp_cat(__fp_scope_t_, __LINE__) {                                        \
		__attribute__((always_inline)) inline ~__fp_cat(__fp_scope_t_, __LINE__)() \
		{                                                                          \
			__fp_end(region, FEATPROF_ABI_SITE_SCOPE);                     \
		}                                                                          \
	} __fp_cat(__fp_scope_v_, __LINE__)
#define FP_SCOPE_DEFINE(region) struct __fp_cat(__fp_scope_unused_, region)
#else
/* The scope's variable has a type FP_SCOPE_DEFINE declares, named so that a scope used
 * before its definition fails with what to do: "unknown type name
 * 'FP_SCOPE_needs__FP_SCOPE_DEFINE__parse__at_file_scope_before_it'" */
#define __fp_scope_type(region) FP_SCOPE_needs__FP_SCOPE_DEFINE__##region##__at_file_scope_before_it
#define FP_SCOPE_DEFINE(region)                                                            \
	typedef char __fp_scope_type(region);                                              \
	static inline __attribute__((always_inline, unused)) void __fp_scope_end_##region( \
		__fp_scope_type(region) *__fp_unused)                                      \
	{                                                                                  \
		(void)__fp_unused;                                                         \
		__fp_end(region, FEATPROF_ABI_SITE_SCOPE);                             \
	}                                                                                  \
	struct __fp_cat(__fp_scope_unused_, region)
#define FP_SCOPE(region, ...)                                                              \
	__fp_begin(region, FEATPROF_ABI_SITE_SCOPE, __VA_ARGS__);                          \
	__fp_scope_type(region) __fp_cat(__fp_scope_v_, __LINE__)                          \
		__attribute__((cleanup(__fp_scope_end_##region), unused))
#endif

#endif /* FEATPROF_DISABLE */

/* --- tunables, the sampler's TLS ABI, the site and its notes (internals) --------------- */

/*
 * The sampler's TLS ABI (version in the magic: "FPT2"). The executable exports
 * featprof_tls (STT_TLS, default visibility); featprofd finds it at
 * fsbase + st_value - roundup(PT_TLS p_memsz, p_align) and reads it whole at a sample.
 * ids[k], for k < min(depth, FEATPROF_ABI_TLS_DEPTH), is the region open at depth k: the address of
 * a NUL-terminated copy of the region's name (one per region per object, symbol
 * featprof_rgn_<region> in a COMDAT group), so that the sampler names it by reading the
 * string once. depth counts regions beyond FEATPROF_ABI_TLS_DEPTH too (not stored). unmatched
 * counts the thread's ends whose region was not on the stack (begun before the stack
 * was kept, or an end without a begin). A build with FEATPROF_SAMPLING also carries a
 * catalog note of type FEATPROF_ABI_NOTE_TYPE_TLS (u32 version, depth, magic, 0, and
 * u64 featprof_tls's offset in its object's TLS block, resolved by the linker: the note
 * is not loaded), which featprofd checks before it reads anything; a gated build also
 * the stapsdt note featprof:sample__gate. A shared library whose featprof_tls a version
 * script made local keeps a stack of its own: featprofd finds it through the thread's
 * dynamic thread vector (glibc's: the module id the library's GOT holds, that offset)
 * and reads it after the executable's (docs/TRACING.md "Libraries").
 */
/* "FPT2", also in the note below (no suffix: asm) */
#define FEATPROF_ABI_TLS_MAGIC 0x32545046
#define FEATPROF_ABI_TLS_DEPTH 16
#define FEATPROF_ABI_TLS_VERSION 2
/* owner "featprof": u32 version, u32 depth, u32 magic */
#define FEATPROF_ABI_NOTE_TYPE_TLS 2
#define FEATPROF_ABI_GATE_PROBE "sample__gate"	/* FEATPROF_SAMPLING_GATED's stapsdt probe */
struct featprof_tls {
	unsigned int magic;
	unsigned int depth;
	const char *ids[FEATPROF_ABI_TLS_DEPTH];
	unsigned long long unmatched;
};

#ifndef FEATPROF_SITE_SHAPE
#define FEATPROF_SITE_SHAPE FEATPROF_SHAPE_SHIELDED
#endif

#define __fp_str(x) #x
#define __fp_xstr(x) __fp_str(x)
#define __fp_cat2(a, b) a##b
#define __fp_cat(a, b) __fp_cat2(a, b)

/* "MAJOR.MINOR.PATCH": featprof's one version (CLI, daemon and featprof.pc use it). */
#define FEATPROF_VERSION                                                                   \
	__fp_xstr(FEATPROF_VERSION_MAJOR) "." __fp_xstr(FEATPROF_VERSION_MINOR) "."        \
		__fp_xstr(FEATPROF_VERSION_PATCH)

#if !defined(__x86_64__)
/* Elsewhere a site is the architecture's nop; only x86-64 has the shielded shape. */
#undef FEATPROF_SITE_SHAPE
#define FEATPROF_SITE_SHAPE FEATPROF_SHAPE_NOP1
#define __fp_site_insns "990:\tnop\n"
#elif FEATPROF_SITE_SHAPE == FEATPROF_SHAPE_SHIELDED
/* Spelled as bytes so that the site is the same under -masm=intel and any assembler. */
#define __fp_site_insns                                                                    \
	"990:\t.byte 0x90\n"                                                               \
	"\t.byte 0x48,0x8d,0x64,0x24,0x80\n"                                               \
	"\t.byte 0x0f,0x1f,0x44,0x00,0x00\n"                                               \
	"\t.byte 0x48,0x8d,0xa4,0x24,0x80,0x00,0x00,0x00\n"
#elif FEATPROF_SITE_SHAPE == FEATPROF_SHAPE_NOP1
#define __fp_site_insns "990:\t.byte 0x90\n"
#else
#error "featprof.h: FEATPROF_SITE_SHAPE must be FEATPROF_SHAPE_SHIELDED or FEATPROF_SHAPE_NOP1"
#endif

/* The .stapsdt.base marker, as sys/sdt.h emits it: lets readers detect prelinking. */
#define __fp_base_insns                                                                    \
	".ifndef _.stapsdt.base\n"                                                         \
	".pushsection .stapsdt.base,\"aG\",\"progbits\",.stapsdt.base,comdat\n"            \
	".weak _.stapsdt.base\n"                                                           \
	".hidden _.stapsdt.base\n"                                                         \
	"_.stapsdt.base: .space 1\n"                                                       \
	".size _.stapsdt.base, 1\n"                                                        \
	".popsection\n"                                                                    \
	".endif\n"

/*
 * The stapsdt note of every featprof site (provider "featprof"), at local label 990:
 * name and args are string literals, sem an assembler expression (the semaphore's
 * symbol, or 0). The note joins the current section's COMDAT group, if any ("?").
 */
#define __fp_note(name, sem, args)                                                         \
	".pushsection .note.stapsdt,\"?\",\"note\"\n"                                      \
	".balign 4\n"                                                                      \
	".4byte 992f-991f,994f-993f,3\n"                                                   \
	"991:\t.asciz \"stapsdt\"\n"                                                       \
	"992:\t.balign 4\n"                                                                \
	"993:\t.8byte 990b\n"                                                              \
	".8byte _.stapsdt.base\n"                                                          \
	".8byte " sem "\n"                                                                 \
	".asciz \"featprof\"\n"                                                            \
	".asciz \"" name "\"\n"                                                            \
	".asciz \"" args "\"\n"                                                            \
	"994:\t.balign 4\n"                                                                \
	".popsection\n"
#define __fp_stapsdt_note(region, kind_name) __fp_note(#region "__" kind_name, "0", "")

/*
 * Catalog note, owner "featprof", type FEATPROF_ABI_NOTE_TYPE_SITE. Descriptor:
 *   u64 pc, u64 base (as in the stapsdt note), u32 line, u8 kind, u8 shape, u8 flags, u8 0,
 *   region\0 file\0 feature\0 ... \0   (end sites carry no features)
 */
#define __fp_catalog_note(region, kind, flags, feats)                                      \
	".pushsection .note.featprof,\"?\",\"note\"\n"                                     \
	".balign 4\n"                                                                      \
	".4byte 996f-995f,998f-997f," __fp_xstr(FEATPROF_ABI_NOTE_TYPE_SITE) "\n"       \
	"995:\t.asciz \"featprof\"\n"                                                      \
	"996:\t.balign 4\n"                                                                \
	"997:\t.8byte 990b\n"                                                              \
	".8byte _.stapsdt.base\n"                                                          \
	".4byte " __fp_xstr(__LINE__) "\n"                                                 \
	".byte " __fp_xstr(kind) "," __fp_xstr(FEATPROF_SITE_SHAPE) "," __fp_xstr(flags) ",0\n" \
	".asciz \"" #region "\"\n"                                                         \
	".asciz \"" __FILE__ "\"\n" feats ".byte 0\n"                                      \
	"998:\t.balign 4\n"                                                                \
	".popsection\n"

/*
 * The one internal macro every site goes through: later site kinds (a sampler-visible
 * region marker, a per-site value) change this and nothing else.
 */
#define __fp_site(region, kind, flags, kind_name, feats)                                   \
	__asm__ __volatile__(__fp_site_insns __fp_stapsdt_note(region, kind_name)         \
				     __fp_catalog_note(region, kind, flags, feats) __fp_base_insns)

#if defined(FEATPROF_SAMPLING_GATED) && !defined(FEATPROF_SAMPLING)
#define FEATPROF_SAMPLING
#endif
#if defined(FEATPROF_SAMPLING) && !defined(FEATPROF_DISABLE)
#if !defined(__x86_64__)
#error "featprof.h: FEATPROF_SAMPLING is implemented for x86-64 only"
#endif
/* Default visibility whatever -fvisibility says: the dynamic linker binds every object's
 * featprof_tls to one, the executable's, so that a library's regions are on the stack
 * featprofd samples (a library that keeps its own is refused by name). */
__attribute__((weak, visibility("default"))) __thread struct featprof_tls featprof_tls = {
	FEATPROF_ABI_TLS_MAGIC, 0, { 0 }, 0
};
__asm__(".pushsection .note.featprof,\"?\",\"note\"\n"
	".balign 4\n"
	".4byte 9,24," __fp_xstr(FEATPROF_ABI_NOTE_TYPE_TLS) "\n"
	".asciz \"featprof\"\n"
	".balign 4\n"
	".4byte " __fp_xstr(FEATPROF_ABI_TLS_VERSION) "," __fp_xstr(FEATPROF_ABI_TLS_DEPTH) ","
	__fp_xstr(FEATPROF_ABI_TLS_MAGIC) ",0\n"
	".quad featprof_tls@dtpoff\n"
	".popsection\n");

/* The region's id: featprof_rgn_<region>, defined once per object (COMDAT), its address
 * taken PC-relative (the same in C and C++, any namespace). */
#define __fp_rgn_id(region, id)                                                            \
	__asm__(".ifndef featprof_rgn_" #region "\n"                                       \
		".pushsection .rodata.featprof_rgn_" #region ",\"aG\",\"progbits\","       \
		"featprof_rgn_" #region ",comdat\n"                                        \
		".weak featprof_rgn_" #region "\n"                                         \
		".hidden featprof_rgn_" #region "\n"                                       \
		"featprof_rgn_" #region ":\t.asciz \"" #region "\"\n"                      \
		".popsection\n"                                                            \
		".endif\n"                                                                 \
		"lea featprof_rgn_" #region "(%%rip), %0"                                  \
		: "=r"(id))

/* The entry is written before depth grows, and depth shrinks before anything else:
 * a sample (the thread stopped between two instructions) never sees a stale entry. */
static inline __attribute__((always_inline, unused)) void __fp_tls_push(const char *id)
{
	unsigned int d = featprof_tls.depth;

	if (d < FEATPROF_ABI_TLS_DEPTH)
		featprof_tls.ids[d] = id;
	__asm__ __volatile__("" ::: "memory");
	featprof_tls.depth = d + 1;
}

/* Pops the innermost entry of id and any above it (begun, never ended: longjmp, an
 * exception past an FP_BEGIN); an end whose region is not on the stack is counted. */
static inline __attribute__((always_inline, unused)) void __fp_tls_pop(const char *id)
{
	unsigned int d = featprof_tls.depth, k;

	if (d > FEATPROF_ABI_TLS_DEPTH) {	/* not stored: the innermost unstored one ends */
		featprof_tls.depth = d - 1;
		return;
	}
	for (k = d; k-- > 0;)
		if (featprof_tls.ids[k] == id) {
			featprof_tls.depth = k;
			return;
		}
	featprof_tls.unmatched++;
}

#ifdef FEATPROF_SAMPLING_GATED
/*
 * The gate: a USDT semaphore (in .probes, as sys/sdt.h places them; one per executable)
 * and the note featprof:sample__gate whose site is a nop in a function nobody calls.
 * featprofd attaches a uprobe there with the semaphore's offset (ref_ctr_offset): the
 * kernel raises the count in the process while the uprobe is attached; it never fires.
 */
__attribute__((weak, section(".probes"))) volatile unsigned short featprof_sample_gate;
__asm__(".pushsection .text.featprof_gate,\"axG\",\"progbits\",featprof_gate,comdat\n"
	".weak featprof_gate\n"
	".hidden featprof_gate\n"
	"featprof_gate:\n"
	"990:\tnop\n"
	"\tret\n" __fp_note(FEATPROF_ABI_GATE_PROBE, "featprof_sample_gate", "")
	".popsection\n" __fp_base_insns);
#define __fp_gate_up() __builtin_expect(featprof_sample_gate != 0, 0)
#define __fp_end_due() __builtin_expect((featprof_tls.depth | featprof_sample_gate) != 0, 0)
#else
#define __fp_gate_up() 1
#define __fp_end_due() 1
#endif

#define __fp_begin_stack(region)                                                           \
	do {                                                                               \
		const char *__fp_id;                                                       \
		if (__fp_gate_up()) {                                                      \
			__fp_rgn_id(region, __fp_id);                                      \
			__fp_tls_push(__fp_id);                                            \
		}                                                                          \
	} while (0)
#define __fp_end_stack(region)                                                             \
	do {                                                                               \
		const char *__fp_id;                                                       \
		if (__fp_end_due()) {                                                      \
			__fp_rgn_id(region, __fp_id);                                      \
			__fp_tls_pop(__fp_id);                                             \
		}                                                                          \
	} while (0)
#else
#define __fp_begin_stack(region) ((void)0)
#define __fp_end_stack(region) ((void)0)
#endif

/*
 * In-process timing (FEATPROF_INPROCESS; docs/PROBE-ABI.md "In-process timing"). Every
 * region of an object has a descriptor, struct featprof_ipr (symbol featprof_ipr_<region>,
 * a COMDAT in .probes), whose first field is a USDT semaphore: the region's gate. The
 * note featprof:<region>__ipgate (a nop in a function nobody calls) names it as its
 * semaphore, so featprofd raises the gate by attaching a uprobe there with it as
 * ref_ctr_offset: the kernel counts it up in the process while the uprobe lives and down
 * when it goes, featprofd's death included. While a region's gate is down its sites cost
 * their nops, a compare and a branch; while it is up they call the runtime
 * (usdt/featprof_inprocess.h), which keeps the thread's region stack and figures in the
 * process's memory, where featprofd reads them. The layout below is an ABI shared with
 * featprofd (FP_IP_ABI_VERSION, also in the FP_NOTE_TYPE_IP catalog note): where it is
 * used, in an in-process build and in featprofd (usdt/featprof_abi.h, and FEATPROF_IP_LAYOUT
 * where it reads the arena); a plain build does not see it.
 */
#if defined(FEATPROF_INPROCESS) || defined(FEATPROF_IP_LAYOUT) || defined(FEATPROF_ABI)
#define FP_IP_ABI_VERSION 3
#define FP_IP_MAGIC 0x31504946	/* "FIP1": a control block and a thread block start so */
#define FP_NOTE_TYPE_IP 3	/* owner "featprof": u32 version, u32 thread block size,
				 * u64 control block address, u64 base (as the sites') */
#define FP_IP_THREAD_SIZE 19968	/* sizeof(struct featprof_ip_thread) */
#define FP_IP_GATE_SUFFIX "__ipgate"
#define FP_IP_THREAD_PROBE "ip__thread"	/* featprof:ip__thread, arg 8@%rdi: a thread's
					 * block, when the thread takes it in an object */
#define FP_IP_DEPTH 32		/* open regions per thread */
#define FP_IP_IDS 256		/* regions per process (ids 1..FP_IP_IDS) */
#define FP_IP_NAME 64		/* a region's name in the arena, its NUL included */
#define FP_IP_CHUNK 16		/* a thread's region figures come 16 ids at a time */
#define FP_IP_PATHS 512		/* region paths per thread, entry 0 the base (none open) */
#define FP_IP_SLOTS 1024	/* the path table's hash index */
#define FP_IP_HIST 40		/* log2(ns) buckets, as bpf/featprof_bpf.h's */
#define FP_IP_CLOCK_MONO 0	/* clock_gettime(CLOCK_MONOTONIC), ns */
#define FP_IP_CLOCK_TSC 1	/* rdtsc, converted by ns = ticks * mult >> shift */
#endif
/* The arena's layout: where it is used, in an in-process build and in featprofd (which
 * defines FEATPROF_IP_LAYOUT to read it). */
#if defined(FEATPROF_INPROCESS) || defined(FEATPROF_IP_LAYOUT)
/* anomalies, as bpf/featprof_bpf.h's enum fp_anomaly numbers them */
enum {
	FP_IP_AN_END_WITHOUT_BEGIN, FP_IP_AN_ABANDONED, FP_IP_AN_OVERFLOW, FP_IP_AN_EXIT_INSIDE,
	FP_IP_AN_DISABLED_OPEN, FP_IP_AN_NO_STATE, FP_IP_AN_PATHS_FULL, FP_IP_AN_N
};

struct featprof_ip_ctl;

/* A region's descriptor, one per region per object (24 bytes, the region's name after
 * it). */
struct featprof_ipr {
	volatile unsigned short gate;	/* the USDT semaphore: > 0 while measured */
	unsigned short pad;
	volatile unsigned int id;	/* its process-wide id, given at first use; 0: none */
	volatile unsigned int gen;	/* written by featprofd before it raises the gate: the
					 * same in every object while the region is measured */
	unsigned int pad2;
	struct featprof_ip_ctl *owner;	/* its object's control block */
};

/* Times in the arena are in the clock's units (FP_IP_CLOCK_*: TSC ticks or ns), which
 * featprofd converts: a site keeps the conversion out of its event. */
struct featprof_ip_frame {
	unsigned long long start;	/* clock at the begin */
	unsigned long long child;	/* inclusive time of completed direct children */
	unsigned int id, gen;		/* region id, its descriptor's gen at the begin */
	unsigned int path;		/* this frame's path entry */
	unsigned int nchild, ndesc;
	unsigned int parent;		/* the path entry open at its begin (with id: path's
					 * key, so the next begin at this depth reuses it) */
};

/* One region's figures on one thread (inclusive, exclusive, min, max: clock units; the
 * histogram by log2 of ns). The last three fields are the sites' cache, not figures: an
 * instance of hist_lo + [0, hist_span) clock units falls in bucket hist_k (0 0 0: none). */
struct featprof_ip_fig {
	unsigned long long count, incl, excl, min, max, nchild, ndesc, recursion;
	unsigned long long hist[FP_IP_HIST];
	unsigned long long hist_lo, hist_span, hist_k;
};

/* One region path on one thread: its parent entry and innermost region, and the
 * exclusive time (clock units) of the instances of that region that ended on it, their count and
 * their direct children's. Entry 0, the base: the time between an outermost end and the
 * next outermost begin, the count of such intervals. */
struct featprof_ip_path {
	unsigned int parent, id;
	unsigned long long time, count, nchild;
};

/* A thread's state and figures (its owner's; free blocks keep their figures). */
struct featprof_ip_thread {
	unsigned int magic, version;
	volatile unsigned long long owner;	/* pthread_self of its thread, 0: free */
	struct featprof_ip_thread *volatile next;	/* the control block's list */
	unsigned long long reserved;
	unsigned long long epoch;	/* the control block's epoch it last saw */
	unsigned long long last;	/* clock at its latest outermost end, 0: none */
	unsigned int depth, overflow;	/* open frames; begins beyond FP_IP_DEPTH */
	unsigned int reserved2, cur;	/* -; the path open now */
	unsigned int npaths;
	volatile unsigned int tid;	/* its owner's thread id */
	unsigned long long anomalies[FP_IP_AN_N];
	struct featprof_ip_frame f[FP_IP_DEPTH];
	struct featprof_ip_fig *chunk[FP_IP_IDS / FP_IP_CHUNK];	/* by (id - 1) / 16 */
	unsigned short slot[FP_IP_SLOTS];	/* path entries by hash of (parent, id), 0: free */
	struct featprof_ip_path paths[FP_IP_PATHS];
};

/*
 * A process's thread blocks live in an arena, a memfd file the runtime maps shared at its
 * first event (FP_IP_ARENA bytes, sparse: only pages used take memory). featprofd opens
 * the same file through /proc/PID/map_files and keeps it, so a process's figures outlive
 * its exec, exit or death. Pointers inside are the process's addresses; featprofd reads
 * the one at p at offset p - base.
 */
#define FP_IP_ARENA (64ULL << 20)
struct featprof_ip_arena {
	unsigned int magic, version;
	unsigned long long size;		/* of the file */
	volatile unsigned long long used;	/* bytes given out, from the start */
	unsigned long long base;		/* where the process maps it */
	volatile unsigned int next_id, nthreads;
	/* by id - 1: a descriptor of the region (0 while no object that has one is mapped:
	 * an object unloaded takes its own out) and its name, which stays */
	struct featprof_ipr *volatile regions[FP_IP_IDS];
	struct featprof_ip_thread *volatile threads;	/* the blocks, newest first */
	volatile unsigned int key_state, key;	/* thread-exit key: 0 none, 1 making, 2 */
	volatile unsigned int pid;	/* the process that made it (a fork makes its own) */
	volatile unsigned int id_lock;		/* held while an id is given */
	char names[FP_IP_IDS][FP_IP_NAME];
	/* the clock the times are in, as featprofd wrote it into the primary control block
	 * before the arena was made (a reader converts with it) */
	unsigned int clock, tsc_shift;
	unsigned long long tsc_mult;
	/* where log2(ns) bucket k begins, in clock units (the first with ns >= 2^k; 0 for
	 * k = 0, all ones past the last): the sites' bucket cache is refilled from it */
	unsigned long long bucket[FP_IP_HIST + 1];
};

/*
 * The arena's handover at exit: featprofd writes WANTED into the primary's block when it
 * configures the process, HELD once it has opened the arena (which then outlives the
 * process). A process that exits normally with WANTED and a gate up waits, at most
 * FEATPROF_IP_HANDOVER_MS, for HELD: its figures are not lost by exiting before
 * featprofd saw its first event. A forked child starts again from NONE, or, where
 * featprofd also wrote FORKS (it attaches the process's forked children: featprof run),
 * from WANTED | FORKS: a child that exits at once waits for featprofd to take its arena.
 */
#define FP_IP_HANDOVER_NONE 0
#define FP_IP_HANDOVER_WANTED 1
#define FP_IP_HANDOVER_HELD 2
#define FP_IP_HANDOVER_STATE 3		/* the bits of the above */
#define FP_IP_HANDOVER_FORKS 4

/* An object's control block (symbol featprof_ip_ctl, hidden, in .data). */
struct featprof_ip_ctl {
	unsigned int magic, version;
	/* written by featprofd before it raises a gate of the process */
	struct featprof_ip_ctl *volatile primary;	/* the block whose arena and clock every
							 * object of the process uses */
	volatile unsigned int configured, clock;	/* FP_IP_CLOCK_* */
	volatile unsigned long long tsc_mult;
	volatile unsigned int tsc_shift;
	/* the primary's: FP_IP_HANDOVER_*, whether featprofd has the arena (version 1 had no
	 * FORKS) */
	volatile unsigned int handover;
	volatile unsigned long long epoch;	/* bumped when gates were lowered */
	/* the primary's: the arena, made at the process's first event (1 while making) */
	struct featprof_ip_arena *volatile arena;
	/* the object's thread-exit and fork hooks: the primary's are the process's */
	void (*exit_hook)(void *);
	void (*fork_hook)(void);
};
#endif /* FEATPROF_INPROCESS || FEATPROF_IP_LAYOUT */

#if defined(FEATPROF_INPROCESS) && !defined(FEATPROF_DISABLE)
#include "featprof_inprocess.h"
#else
#define __fp_ip_begin(region) ((void)0)
#define __fp_ip_end(region) ((void)0)
#endif


#endif /* FEATPROF_H */
