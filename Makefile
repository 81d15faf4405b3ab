# featprof - build, test, install.  `make V=1` shows the full commands.
# Layout: docs/ARCHITECTURE.md.
.DELETE_ON_ERROR:
.SUFFIXES:

PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
INCLUDEDIR ?= $(PREFIX)/include
LIBDIR ?= $(PREFIX)/lib
UNITDIR ?= $(PREFIX)/lib/systemd/system
REGIONSDIR ?= $(PREFIX)/share/featprof/regions.d
MANDIR ?= $(PREFIX)/share/man
COMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
# the group whose members may use featprofd.socket (the Debian package: featprof)
SOCKET_GROUP ?= root

CC ?= gcc
CXX ?= g++
CLANG ?= clang
BPFTOOL ?= bpftool
PKG_CONFIG ?= pkg-config
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
CFLAGS ?= -O2 -g
CPPFLAGS ?=
LDFLAGS ?=
# -Werror where the warnings are ours to fix (CI sets WERROR=-Werror: .ci/run); a
# distribution's newer compiler only warns
WERROR ?=

# The one version: usdt/featprof.h's FEATPROF_VERSION_* (CLI, daemon, featprof.pc).
VERSION := $(shell awk '/define FEATPROF_VERSION_(MAJOR|MINOR|PATCH)/ {print $$3}' \
	usdt/featprof.h | paste -sd. -)

# The BPF target architecture, from the machine (bpf_tracing.h needs it for pt_regs).
ARCH ?= $(shell uname -m)
ARCH_MAP := x86_64:x86 aarch64:arm64 riscv64:riscv s390x:s390 ppc64le:powerpc \
	loongarch64:loongarch
BPF_ARCH := $(or $(patsubst $(ARCH):%,%,$(filter $(ARCH):%,$(ARCH_MAP))),$(ARCH))

.DEFAULT_GOAL := all

O := build
WARN := -Wall -Wextra $(WERROR) -Wshadow -Wmissing-prototypes -Wno-unused-parameter
# daemon/ in folders by layer (docs/ARCHITECTURE.md; scripts/layers.py derives the ranks)
DAEMON_DIRS := util kern stacks clients inproc targets sample calibrate report registry groups \
	streams serve
# one include root for the daemon's folders ("sample/sample.h") and one for the tree
# ("common/err.h", "bpf/featprof_bpf.h"); generated headers from the build folder
INCLUDES := -I$(O) -I. -Idaemon
ALL_CFLAGS := $(CPPFLAGS) $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -MMD -MP $(INCLUDES)
# -liberty: C++ and Rust symbols demangled (common/demangle.c, Debian's libiberty-dev)
# -ldebuginfod: debug files from a debuginfod server (common/symbols.c, libdebuginfod-dev)
LIBS_NOTES := $(shell $(PKG_CONFIG) --libs libelf 2>/dev/null || echo -lelf) -lz -llzma -liberty -ldebuginfod
LIBS_DW := $(shell $(PKG_CONFIG) --libs libdw 2>/dev/null || echo -ldw)
LIBS_JSON := $(shell $(PKG_CONFIG) --libs json-c 2>/dev/null || echo -ljson-c)
LIBS_BPF := $(shell $(PKG_CONFIG) --libs libbpf 2>/dev/null || echo -lbpf)
# featprof metrics' HTTP server (cli/commands/metrics.c, Debian's libmicrohttpd-dev)
LIBS_MHD := $(shell $(PKG_CONFIG) --libs libmicrohttpd 2>/dev/null || echo -lmicrohttpd)
ALL_CFLAGS += $(shell $(PKG_CONFIG) --cflags json-c 2>/dev/null)

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# --- objects ---------------------------------------------------------------------------
HDRS := usdt/featprof.h usdt/featprof_inprocess.h usdt/featprof_ip_runtime.h	# what an instrumented program includes
# an object's notes (notes.c), its ELF file (elf.c), a process's objects (proc.c)
NOTES_OBJS := $(O)/common/notes.o $(O)/common/elf.o $(O)/common/elfread.o $(O)/common/proc.o \
	$(O)/common/maps.o \
	$(O)/common/symbols.o $(O)/common/demangle.o
COMMON_OBJS := $(O)/common/notes.o $(O)/common/elf.o $(O)/common/proc.o $(O)/common/catalog.o $(O)/common/regdefs.o \
	$(O)/common/strays.o $(O)/common/request.o $(O)/common/maps.o $(O)/common/symbols.o \
	$(O)/common/procfs.o $(O)/common/elfread.o $(O)/common/demangle.o
CLI_OBJS := $(patsubst %.c,$(O)/%.o,$(wildcard cli/*.c cli/*/*.c)) \
	$(COMMON_OBJS)
DAEMON_OBJS := $(patsubst %.c,$(O)/%.o,$(foreach d,$(DAEMON_DIRS),$(wildcard daemon/$(d)/*.c))) \
	$(COMMON_OBJS)
# the in-process runtime's own calibration carries the runtime (usdt/featprof_inprocess.h)
$(O)/daemon/inproc/ip_calibrate.o: ALL_CFLAGS += -DFEATPROF_INPROCESS -DFEATPROF_IP_RUNTIME
# the in-process module reads the arena: its layout (usdt/featprof.h), hidden from plain builds
$(O)/daemon/inproc/inproc.o $(O)/daemon/inproc/inproc_read.o: ALL_CFLAGS += -DFEATPROF_IP_LAYOUT

# The compiled-in data path follows PREFIX (DESTDIR stays out of it): regdefs.o depends on
# a stamp rewritten only when REGIONSDIR changes, so `make install PREFIX=...` after a
# plain `make` rebuilds it.
REGIONSDIR_STAMP := $(O)/.regionsdir
$(shell mkdir -p $(O) && [ "$$(cat $(REGIONSDIR_STAMP) 2>/dev/null)" = '$(REGIONSDIR)' ] || \
	printf '%s\n' '$(REGIONSDIR)' > $(REGIONSDIR_STAMP))
$(O)/common/regdefs.o: ALL_CFLAGS += -DFP_REGIONS_DIR='"$(REGIONSDIR)"'
$(O)/common/regdefs.o: $(REGIONSDIR_STAMP)

$(O)/%.o: %.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# --- BPF: objects and skeletons -------------------------------------------------------
# The kernel's types from bpf/kernel_types.h (UAPI from linux-libc-dev, in the multiarch
# include folder that clang's BPF target does not search; the rest CO-RE-relocated at
# load), so the objects do not depend on the build machine's kernel. BPF_TYPES=btf
# uses a vmlinux.h dumped from VMLINUX_BTF instead (another architecture's build).
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
BPF_TYPES ?= tree
BPF_TYPES_DEP := bpf/kernel_types.h
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -Wall $(WERROR) -Ibpf \
	$(if $(MULTIARCH),-idirafter /usr/include/$(MULTIARCH))
ifeq ($(BPF_TYPES),btf)
BPF_CFLAGS += -DFP_BTF_VMLINUX -I$(O)
BPF_TYPES_DEP += $(O)/vmlinux.h
endif

$(O)/vmlinux.h: $(VMLINUX_BTF)
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@

$(O)/featprof.bpf.o: bpf/featprof.bpf.c bpf/featprof_bpf.h bpf/task_state.h bpf/shared_maps.h \
	$(BPF_TYPES_DEP)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(O)/featprof.skel.h: $(O)/featprof.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name featprof_bpf > $@

# Generated headers come before any daemon object (each file's real use is then in its .d).
$(filter $(O)/daemon/%,$(DAEMON_OBJS)): | $(O)/featprof.skel.h $(O)/watch.skel.h \
	$(O)/sample.skel.h

$(O)/watch.bpf.o: bpf/watch.bpf.c bpf/featprof_bpf.h $(BPF_TYPES_DEP)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(O)/watch.skel.h: $(O)/watch.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name watch_bpf > $@

# featprof sample's programs, an object of their own (daemon/sample/sample.c)
$(O)/sample.bpf.o: bpf/sample.bpf.c bpf/featprof_bpf.h bpf/task_state.h bpf/shared_maps.h \
	$(BPF_TYPES_DEP)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(O)/sample.skel.h: $(O)/sample.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name sample_bpf > $@

# --- programs --------------------------------------------------------------------------
all: $(O)/featprof $(O)/featprofd $(O)/featprof-demo $(O)/man/featprof.1 $(O)/libfeatprof_ip.a

# The in-process runtime as a static library (featprof-inprocess.pc, CMake's
# featprof::inprocess): position-independent, its symbols hidden, so that each object
# linking it keeps a copy of its own (usdt/featprof_ip.c)
$(O)/libfeatprof_ip.a: usdt/featprof_ip.c $(HDRS)
	$(call msg,AR,$@)
	$(Q)mkdir -p $(O)/ip
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -Iusdt -c usdt/featprof_ip.c -o $(O)/ip/featprof_ip.o
	$(Q)rm -f $@ && ar rcs $@ $(O)/ip/featprof_ip.o

# The man pages, from what the programs and the header say of themselves (scripts/mkman.sh)
$(O)/man/featprof.1: $(O)/featprof $(O)/featprofd usdt/featprof.h scripts/mkman.sh
	$(call msg,MAN,$(@D))
	$(Q)scripts/mkman.sh $(O) $(@D) $(VERSION)

$(O)/featprofd: $(DAEMON_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LIBS_BPF) $(LIBS_DW) $(LIBS_NOTES) $(LIBS_JSON) -lm -lpthread \
		-Wl,--export-dynamic-symbol='featprof_calibration_fn*'	# its calibration's functions

$(O)/featprof: $(CLI_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LIBS_NOTES) $(LIBS_JSON) $(LIBS_MHD) -lm \
		-lpthread	# -lz: pprof too

# Instrumented programs: the demo, test targets, benchmarks. Built from one source each
# with per-target flags; extra objects and libraries through TGT_OBJS / TGT_LIBS.
TGT_FLAGS := -O2 -g -Wall -Wextra -Werror -Iusdt -I. -Idaemon -D_GNU_SOURCE

$(O)/featprof-demo: examples/demo.c $(HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TGT_FLAGS) $(LDFLAGS) $< -o $@ -lpthread

C_TARGETS := $(addprefix $(O)/tests/targets/,site_c libsite.so site_shlib site_nopie \
	redzone redzone_bare regress regress_sampled service gated gated_always \
	inproc service_ip libsite_ip.so site_shlib_ip configurable configurable_ip \
	libcodec.so codec libcodec_ip.so codec_ip libcodec_sampled.so codec_sampled \
	libcodec_local.so codec_local libcodec_iplocal.so codec_iplocal codec_plainexe \
	pipeline_ip libfuncs.so funcs funcs_dyn nested \
	libstacks.so libstacks_fp.so stacks stacks_fp stacks_sampled stacks_ip \
	funcmodel funcmodel_slow funcmodel_plain hotleaf)
CXX_TARGETS := $(addprefix $(O)/tests/targets/,site_cxx truth throws shipped)
SAMPLED_TARGETS := $(addprefix $(O)/tests/targets/,truth_sampled demo_sampled)
TEST_TARGETS := $(C_TARGETS) $(CXX_TARGETS) $(SAMPLED_TARGETS) $(O)/tests/targets/funcs_mini
BENCH_BINS := $(addprefix $(O)/bench/busyloop_,dry tsc sdt fp fp_nop1 static fp_sampling \
	fp_gated fp_inproc) $(O)/bench/gap_cost $(O)/bench/event_cost
# every C unit test tests/unit/test_*.c (tests/run.sh runs them), and notes_dump
UNIT_BINS := $(O)/tests/unit/notes_dump \
	$(patsubst tests/unit/%.c,$(O)/tests/unit/%,$(wildcard tests/unit/test_*.c))

$(O)/tests/targets/site_c $(O)/tests/targets/site_nopie: tests/targets/site.c
$(O)/tests/targets/site_c: private TGT_EXTRA := -std=c99
$(O)/tests/targets/site_nopie: private TGT_EXTRA := -std=c99 -fno-pie -no-pie
$(O)/tests/targets/regress $(O)/tests/targets/regress_sampled: tests/targets/regress.c
$(O)/tests/targets/regress_sampled: private TGT_EXTRA := -DFEATPROF_SAMPLING
$(O)/tests/targets/gated $(O)/tests/targets/gated_always: tests/targets/gated.c
$(O)/tests/targets/gated: private TGT_EXTRA := -DFEATPROF_SAMPLING_GATED
$(O)/tests/targets/gated_always: private TGT_EXTRA := -DFEATPROF_SAMPLING
$(O)/tests/targets/gated $(O)/tests/targets/gated_always: private TGT_LIBS := -lpthread
$(O)/tests/targets/service: tests/targets/service.c
$(O)/tests/targets/configurable $(O)/tests/targets/configurable_ip: tests/targets/configurable.c
# function-level models (issue 44): a build, a build with crc_block slowed, one without probes
FUNCMODEL := $(addprefix $(O)/tests/targets/,funcmodel funcmodel_slow funcmodel_plain)
$(FUNCMODEL): tests/targets/funcmodel.c
$(O)/tests/targets/funcmodel_slow: private TGT_EXTRA := -DFUNCMODEL_SLOW=1
$(O)/tests/targets/funcmodel_plain: private TGT_EXTRA := -DFUNCMODEL_PLAIN
$(O)/tests/targets/hotleaf: tests/targets/hotleaf.c
# FEATPROF_INPROCESS builds take the runtime once per object from usdt/featprof_ip.c
IP_TARGETS := $(addprefix $(O)/tests/targets/,configurable_ip inproc service_ip libsite_ip.so \
	site_shlib_ip libcodec_ip.so codec_ip libcodec_iplocal.so codec_iplocal pipeline_ip stacks_ip) \
	$(O)/bench/busyloop_fp_inproc
$(IP_TARGETS): usdt/featprof_ip.c
$(O)/tests/targets/configurable_ip: private TGT_EXTRA := -DFEATPROF_INPROCESS
$(O)/tests/targets/configurable_ip: private TGT_LIBS := -lpthread
$(O)/tests/targets/pipeline_ip: tests/targets/pipeline.c
$(O)/tests/targets/pipeline_ip: private TGT_EXTRA := -DFEATPROF_INPROCESS
$(O)/tests/targets/pipeline_ip: private TGT_LIBS := -lpthread
$(O)/tests/targets/service: private TGT_LIBS := -ldl -lpthread
# FEATPROF_INPROCESS builds (usdt/featprof_inprocess.h): the same sources, timed in-process
$(O)/tests/targets/inproc: tests/targets/inproc.c
$(O)/tests/targets/inproc: private TGT_EXTRA := -DFEATPROF_INPROCESS
$(O)/tests/targets/inproc: private TGT_LIBS := -lpthread
$(O)/tests/targets/nested: tests/targets/nested.c
$(O)/tests/targets/nested: private TGT_LIBS := -lpthread
$(O)/tests/targets/service_ip: tests/targets/service.c
$(O)/tests/targets/service_ip: private TGT_EXTRA := -DFEATPROF_INPROCESS
$(O)/tests/targets/service_ip: private TGT_LIBS := -ldl -lpthread
$(O)/tests/targets/libsite_ip.so: tests/targets/libsite.c
$(O)/tests/targets/libsite_ip.so: private TGT_EXTRA := -fPIC -shared -DFEATPROF_INPROCESS
$(O)/tests/targets/site_shlib_ip: tests/targets/site_shlib.c $(O)/tests/targets/libsite_ip.so
$(O)/tests/targets/site_shlib_ip: private TGT_EXTRA := -DFEATPROF_INPROCESS
$(O)/tests/targets/site_shlib_ip: private TGT_LIBS := -L$(O)/tests/targets -lsite_ip \
	-Wl,-rpath,'$$ORIGIN'
$(O)/tests/targets/libsite.so: tests/targets/libsite.c
$(O)/tests/targets/libsite.so: private TGT_EXTRA := -fPIC -shared
$(O)/tests/targets/site_shlib: tests/targets/site_shlib.c $(O)/tests/targets/libsite.so
$(O)/tests/targets/site_shlib: private TGT_LIBS := -L$(O)/tests/targets -lsite -Wl,-rpath,'$$ORIGIN'
# An executable and a shared library with regions in both (tests/targets/codec.c), in
# each build: default, in-process, sampling; _local: a library whose version script keeps
# its region stack to itself
CODEC := $(O)/tests/targets/codec
$(O)/tests/targets/libcodec.so $(O)/tests/targets/libcodec_ip.so \
	$(O)/tests/targets/libcodec_sampled.so $(O)/tests/targets/libcodec_local.so: \
	tests/targets/libcodec.c
$(O)/tests/targets/libcodec.so: private TGT_EXTRA := -fPIC -shared -fvisibility=hidden
$(O)/tests/targets/libcodec_ip.so: private TGT_EXTRA := -fPIC -shared -fvisibility=hidden \
	-DFEATPROF_INPROCESS
$(O)/tests/targets/libcodec_sampled.so: private TGT_EXTRA := -fPIC -shared -fvisibility=hidden \
	-DFEATPROF_SAMPLING
$(O)/tests/targets/libcodec_local.so: tests/targets/libcodec.map
$(O)/tests/targets/libcodec_local.so: private TGT_EXTRA := -fPIC -shared -DFEATPROF_SAMPLING \
	-Wl,--version-script=tests/targets/libcodec.map
# ... timed in-process under the same version script; and the sampling build's library in
# an executable without featprof.h (only the library keeps a stack)
$(O)/tests/targets/libcodec_iplocal.so: tests/targets/libcodec.c tests/targets/libcodec.map
$(O)/tests/targets/libcodec_iplocal.so: private TGT_EXTRA := -fPIC -shared -DFEATPROF_INPROCESS \
	-Wl,--version-script=tests/targets/libcodec.map
$(CODEC) $(CODEC)_ip $(CODEC)_sampled $(CODEC)_local $(CODEC)_iplocal \
	$(CODEC)_plainexe: tests/targets/codec.c
$(CODEC)_iplocal: $(O)/tests/targets/libcodec_iplocal.so
$(CODEC)_iplocal: private TGT_EXTRA := -DFEATPROF_INPROCESS
$(CODEC)_iplocal: private TGT_LIBS := -L$(O)/tests/targets -lcodec_iplocal \
	-Wl,-rpath,'$$ORIGIN' -lpthread
$(CODEC)_plainexe: $(O)/tests/targets/libcodec_sampled.so
$(CODEC)_plainexe: private TGT_EXTRA := -DFEATPROF_DISABLE
$(CODEC)_plainexe: private TGT_LIBS := -L$(O)/tests/targets -lcodec_sampled \
	-Wl,-rpath,'$$ORIGIN' -lpthread
$(CODEC): $(O)/tests/targets/libcodec.so
$(CODEC)_ip: $(O)/tests/targets/libcodec_ip.so
$(CODEC)_sampled: $(O)/tests/targets/libcodec_sampled.so
$(CODEC)_local: $(O)/tests/targets/libcodec_local.so
$(CODEC): private TGT_LIBS := -L$(O)/tests/targets -lcodec -Wl,-rpath,'$$ORIGIN' -lpthread
$(CODEC)_ip: private TGT_EXTRA := -DFEATPROF_INPROCESS
$(CODEC)_ip: private TGT_LIBS := -L$(O)/tests/targets -lcodec_ip -Wl,-rpath,'$$ORIGIN' -lpthread
$(CODEC)_sampled $(CODEC)_local: private TGT_EXTRA := -DFEATPROF_SAMPLING
$(CODEC)_sampled: private TGT_LIBS := -L$(O)/tests/targets -lcodec_sampled \
	-Wl,-rpath,'$$ORIGIN' -lpthread
$(CODEC)_local: private TGT_LIBS := -L$(O)/tests/targets -lcodec_local -Wl,-rpath,'$$ORIGIN' \
	-lpthread
# Plain functions for function regions: full symbols, and stripped to .dynsym (-rdynamic -s)
$(O)/tests/targets/libfuncs.so: tests/targets/libfuncs.c
$(O)/tests/targets/libfuncs.so: private TGT_EXTRA := -fPIC -shared
$(O)/tests/targets/funcs $(O)/tests/targets/funcs_dyn: tests/targets/funcs.c \
	$(O)/tests/targets/libfuncs.so
$(O)/tests/targets/funcs $(O)/tests/targets/funcs_dyn: private TGT_LIBS := \
	-L$(O)/tests/targets -lfuncs -Wl,-rpath,'$$ORIGIN' -lpthread
$(O)/tests/targets/funcs_dyn: private TGT_EXTRA := -rdynamic -s
# Known shares of a region's time in known functions (sample --stacks): built with frame
# pointers (_fp, _sampled) and without (Debian's -O2), the library likewise. The frame-
# pointer builds by clang: GCC 12 leaves them out of leaf functions whatever the flags
# (-mno-omit-leaf-frame-pointer too), and a walk from a leaf then skips its caller
$(O)/tests/targets/libstacks.so $(O)/tests/targets/libstacks_fp.so: tests/targets/libstacks.c
$(O)/tests/targets/libstacks.so: private TGT_EXTRA := -fPIC -shared -fomit-frame-pointer
$(O)/tests/targets/libstacks_fp.so: private TGT_EXTRA := -fPIC -shared -fno-omit-frame-pointer \
	-mno-omit-leaf-frame-pointer
$(O)/tests/targets/libstacks_fp.so $(O)/tests/targets/stacks_fp \
	$(O)/tests/targets/stacks_sampled: private TGT_CC := $(CLANG)
$(O)/tests/targets/stacks $(O)/tests/targets/stacks_fp $(O)/tests/targets/stacks_sampled \
	$(O)/tests/targets/stacks_ip: tests/targets/stacks.c
$(O)/tests/targets/stacks $(O)/tests/targets/stacks_ip: $(O)/tests/targets/libstacks.so
$(O)/tests/targets/stacks_ip: private TGT_EXTRA := -fomit-frame-pointer -DFEATPROF_INPROCESS
$(O)/tests/targets/stacks_ip: private TGT_LIBS := -L$(O)/tests/targets -lstacks \
	-Wl,-rpath,'$$ORIGIN' -lpthread
$(O)/tests/targets/stacks_fp $(O)/tests/targets/stacks_sampled: $(O)/tests/targets/libstacks_fp.so
$(O)/tests/targets/stacks: private TGT_EXTRA := -fomit-frame-pointer
$(O)/tests/targets/stacks: private TGT_LIBS := -L$(O)/tests/targets -lstacks \
	-Wl,-rpath,'$$ORIGIN' -lpthread
$(O)/tests/targets/stacks_fp: private TGT_EXTRA := -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer
$(O)/tests/targets/stacks_sampled: private TGT_EXTRA := -fno-omit-frame-pointer \
	-mno-omit-leaf-frame-pointer -DFEATPROF_SAMPLING
$(O)/tests/targets/stacks_fp $(O)/tests/targets/stacks_sampled: private TGT_LIBS := \
	-L$(O)/tests/targets -lstacks_fp -Wl,-rpath,'$$ORIGIN' -lpthread
# ... and with MiniDebugInfo (as Fedora ships binaries; gdb's recipe): stripped, with an
# xz-compressed .symtab of the functions .dynsym lacks in .gnu_debugdata
$(O)/tests/targets/funcs_mini: $(O)/tests/targets/funcs
	$(call msg,MINIDEBUG,$@)
	$(Q)nm -D $< --format=posix --defined-only | awk '{print $$1}' | sort > $@.dynsyms
	$(Q)nm $< --format=posix --defined-only | awk '$$2 ~ /[TtWw]/ {print $$1}' | sort \
		> $@.funcsyms
	$(Q)comm -13 $@.dynsyms $@.funcsyms > $@.keep
	$(Q)objcopy --only-keep-debug $< $@.debug
	$(Q)objcopy -S --remove-section .gdb_index --remove-section .comment \
		--keep-symbols=$@.keep $@.debug $@.mini
	$(Q)xz -f $@.mini
	$(Q)objcopy --strip-all --remove-section .gnu_debuglink \
		--add-section .gnu_debugdata=$@.mini.xz $< $@
	$(Q)rm -f $@.dynsyms $@.funcsyms $@.keep $@.debug $@.mini.xz
$(O)/tests/targets/redzone $(O)/tests/targets/redzone_bare: tests/targets/redzone.c \
	$(NOTES_OBJS)
$(O)/tests/targets/redzone $(O)/tests/targets/redzone_bare: private TGT_OBJS := $(NOTES_OBJS)
$(O)/tests/targets/redzone $(O)/tests/targets/redzone_bare: private TGT_LIBS := $(LIBS_NOTES)
$(O)/tests/targets/redzone_bare: private TGT_EXTRA := -DREDZONE_BARE_NOP5

$(O)/bench/event_cost: tests/bench/event_cost.c
$(O)/bench/gap_cost: tests/bench/gap_cost.c
$(O)/bench/gap_cost: private TGT_LIBS := -lpthread
$(filter $(O)/bench/busyloop_%,$(BENCH_BINS)): tests/bench/busyloop.c $(NOTES_OBJS) \
	$(O)/daemon/kern/uprobe.o
$(O)/bench/busyloop_%: private TGT_OBJS := $(NOTES_OBJS) $(O)/daemon/kern/uprobe.o
$(O)/bench/busyloop_%: private TGT_LIBS := -lpthread $(LIBS_NOTES) $(LIBS_BPF)
$(O)/bench/busyloop_dry: private TGT_EXTRA := -DBL_DRY
$(O)/bench/busyloop_tsc: private TGT_EXTRA := -DBL_TSC
$(O)/bench/busyloop_sdt: private TGT_EXTRA := -DBL_SDT
$(O)/bench/busyloop_fp_nop1: private TGT_EXTRA := -DFEATPROF_SITE_SHAPE=FEATPROF_SHAPE_NOP1
$(O)/bench/busyloop_static: private TGT_EXTRA := -DBL_STATIC
$(O)/bench/busyloop_fp_sampling: private TGT_EXTRA := -DFEATPROF_SAMPLING
$(O)/bench/busyloop_fp_gated: private TGT_EXTRA := -DFEATPROF_SAMPLING_GATED
$(O)/bench/busyloop_fp_inproc: private TGT_EXTRA := -DFEATPROF_INPROCESS

$(C_TARGETS) $(BENCH_BINS): $(HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(or $(TGT_CC),$(CC)) $(TGT_FLAGS) $(TGT_EXTRA) $(LDFLAGS) $(filter %.c,$^) $(TGT_OBJS) \
		-o $@ $(TGT_LIBS)

$(O)/tests/targets/truth: private TGT_LIBS := -lpthread
$(CXX_TARGETS): $(O)/tests/targets/%: tests/targets/%.cc $(HDRS)
	$(call msg,CXX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) -O2 -g -Wall -Wextra -Werror -Iusdt -std=c++11 $(LDFLAGS) $< -o $@ $(TGT_LIBS)

# The same programs built with FEATPROF_SAMPLING (the region stack in TLS), for the
# sampling accuracy measurements (tests/bench/sample_accuracy.py).
$(O)/tests/targets/truth_sampled: tests/targets/truth.cc usdt/featprof.h
	$(call msg,CXX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) -O2 -g -Wall -Wextra -Werror -Iusdt -std=c++11 -DFEATPROF_SAMPLING \
		$(LDFLAGS) $< -o $@ -lpthread
$(O)/tests/targets/demo_sampled: examples/demo.c $(HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TGT_FLAGS) -DFEATPROF_SAMPLING $(LDFLAGS) $< -o $@ -lpthread

$(O)/tests/unit/notes_dump $(O)/tests/unit/test_notes: $(O)/tests/unit/%: \
	$(O)/tests/unit/%.o $(COMMON_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LIBS_NOTES) $(LIBS_JSON)
$(O)/tests/unit/test_stats: $(O)/tests/unit/test_stats.o $(O)/daemon/util/stats.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ -lm
$(O)/tests/unit/test_merge: $(O)/tests/unit/test_merge.o $(O)/daemon/groups/merge.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LIBS_JSON)
# the catalog over objects made in the test, and what is asked for by name
$(O)/tests/unit/test_catalog $(O)/tests/unit/test_wants: $(O)/tests/unit/%: \
	$(O)/tests/unit/%.o $(O)/daemon/util/wants.o $(COMMON_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LIBS_NOTES) $(LIBS_JSON)
# the names people read alone (libiberty's demangler)
$(O)/tests/unit/test_demangle: $(O)/tests/unit/test_demangle.o $(O)/common/demangle.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ -liberty
# the in-process runtime's histogram alone (its code compiled into the test)
$(O)/tests/unit/test_ip_buckets: $(O)/tests/unit/test_ip_buckets.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ -lpthread
# region definitions alone
$(O)/tests/unit/test_regdefs: $(O)/tests/unit/test_regdefs.o $(O)/common/regdefs.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@
# the attach journal's reader alone
$(O)/tests/unit/test_journal: $(O)/tests/unit/test_journal.o $(O)/daemon/targets/journal_parse.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@
# the model library alone: its folder and the reply keys' getters, no CLI around it
$(O)/tests/unit/test_model: $(O)/tests/unit/test_model.o \
	$(patsubst %.c,$(O)/%.o,$(wildcard cli/model/*.c)) $(O)/cli/core/json.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LIBS_JSON) -lm

$(O)/tests/unit/fuzz_notes: tests/unit/fuzz_notes.c common/notes.c common/elf.c common/proc.c \
	common/notes.h common/err.h common/maps.c common/maps.h common/symbols.c \
	common/symbols.h common/elfread.c common/elfread.h common/demangle.c
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-D_GNU_SOURCE -I. tests/unit/fuzz_notes.c common/notes.c common/elf.c \
		common/elfread.c common/proc.c common/maps.c common/symbols.c common/demangle.c \
		-o $@ $(LIBS_NOTES)

$(O)/tests/unit/fuzz_regdefs: tests/unit/fuzz_regdefs.c common/regdefs.c common/regdefs.h common/err.h
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-D_GNU_SOURCE -I. tests/unit/fuzz_regdefs.c common/regdefs.c -o $@

$(O)/tests/unit/fuzz_request: tests/unit/fuzz_request.c common/request.c common/request.h
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-D_GNU_SOURCE -I. $(shell $(PKG_CONFIG) --cflags json-c 2>/dev/null) \
		tests/unit/fuzz_request.c common/request.c -o $@ $(LIBS_JSON)

# --- top-level targets -----------------------------------------------------------------
deps:
	$(Q)scripts/install-deps.sh

demo-deps:
	$(Q)scripts/install-deps.sh --demo

check: deps
	$(Q)$(MAKE) --no-print-directory all $(TEST_TARGETS) $(UNIT_BINS) \
		$(O)/tests/unit/fuzz_notes $(O)/tests/unit/fuzz_regdefs \
		$(O)/tests/unit/fuzz_request $(BENCH_BINS)
	$(Q)tests/run.sh

# The project's own limits (.clang-format): 100 columns with 8-wide tabs, no trailing
# blanks. Generated and copied-in files are not checked.
FORMAT_FILES = $(shell git ls-files '*.c' '*.h' '*.cc' 2>/dev/null)
format-check:
	$(Q)awk '{ l = $$0; gsub(/\t/, "        ", l); \
		if (length(l) > 100) { print FILENAME ":" FNR ": over 100 columns"; bad = 1 } \
		if ($$0 ~ /[ \t]+$$/) { print FILENAME ":" FNR ": trailing blanks"; bad = 1 } } \
		END { exit bad }' $(FORMAT_FILES)

# The functional suite under this kernel (as it is, and acting as 5.10) and, in QEMU,
# Debian 11's 5.10 and Debian 12's 6.1 and 6.12 (tests/kernels/run.sh; fetch-kernels
# downloads them once into its cache). Emulated: function only, about a minute each.
# .ci/run runs it after check.
KERNELS_DIR ?= ../shared/kernels
kernel-check: deps
	$(Q)scripts/install-deps.sh qemu-system-x86 busybox-static kmod cpio zstd
	$(Q)$(KERNELS_DIR)/fetch-kernels
	$(Q)$(KERNELS_DIR)/fetch-kernels --bullseye
	$(Q)$(MAKE) --no-print-directory all $(TEST_TARGETS) $(BENCH_BINS)
	$(Q)FEATPROF_KERNELS=$(KERNELS_DIR) tests/kernels/run.sh $(O)

# Full benchmark (minutes); results into docs/BENCHMARKS.md.
bench:
	$(Q)scripts/install-deps.sh python3-bpfcc
	$(Q)$(MAKE) --no-print-directory all $(BENCH_BINS)
	$(Q)python3 tests/bench/run_bench.py $(O) --out docs/BENCHMARKS.md
	$(Q)python3 tests/bench/coverage.py $(O) --repeats 1 --out docs/COVERAGE.md
	$(Q)$(MAKE) --no-print-directory $(O)/tests/targets/stacks_sampled
	$(Q)python3 tests/bench/stacks_bench.py $(O) --out docs/BENCHMARKS.md
	$(Q)python3 tests/bench/run_stacks_cost.py $(O) --out docs/BENCHMARKS.md
	$(Q)python3 tests/bench/idle_ab.py $(O) --out docs/BENCHMARKS.md
	$(Q)python3 tests/bench/inproc_event.py $(O) --out docs/BENCHMARKS.md

# The main job on the built-in demo target (see README).
demo: demo-deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/demo.sh $(O)

# the installed paths into the pkg-config and CMake files
SUBST = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	-e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	-e 's|@MAJOR@|$(firstword $(subst ., ,$(VERSION)))|'
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(INCLUDEDIR) \
		$(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(UNITDIR) $(DESTDIR)$(REGIONSDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(COMPLETIONDIR)
	install -m 0644 $(O)/man/featprof.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 $(O)/man/featprof.h.3 $(DESTDIR)$(MANDIR)/man3/
	install -m 0644 $(O)/man/featprofd.8 $(DESTDIR)$(MANDIR)/man8/
	install -m 0644 scripts/featprof.bash-completion $(DESTDIR)$(COMPLETIONDIR)/featprof
	install -m 0755 $(O)/featprof $(DESTDIR)$(BINDIR)/featprof
	install -m 0644 usdt/regions.d/*.regions $(DESTDIR)$(REGIONSDIR)/
	install -m 0755 $(O)/featprofd $(DESTDIR)$(SBINDIR)/featprofd
	sed 's|@SBINDIR@|$(SBINDIR)|' systemd/featprofd.service > $(DESTDIR)$(UNITDIR)/featprofd.service
	sed 's|@SOCKET_GROUP@|$(SOCKET_GROUP)|' systemd/featprofd.socket \
		> $(DESTDIR)$(UNITDIR)/featprofd.socket
	install -m 0644 usdt/featprof.h usdt/featprof_inprocess.h usdt/featprof_ip_runtime.h \
		usdt/featprof_ip.c \
		$(DESTDIR)$(INCLUDEDIR)/
	install -m 0644 $(O)/libfeatprof_ip.a $(DESTDIR)$(LIBDIR)/
	install -d $(DESTDIR)$(LIBDIR)/cmake/featprof
	$(SUBST) usdt/featprof.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/featprof.pc
	$(SUBST) usdt/featprof-inprocess.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/featprof-inprocess.pc
	$(SUBST) usdt/featprofConfig.cmake.in > $(DESTDIR)$(LIBDIR)/cmake/featprof/featprofConfig.cmake
	$(SUBST) usdt/featprofConfigVersion.cmake.in \
		> $(DESTDIR)$(LIBDIR)/cmake/featprof/featprofConfigVersion.cmake

# The Debian package (debian/): dpkg-buildpackage on a copy of the tree in $(O)/deb, so
# that neither its build nor its output (featprof_VERSION_ARCH.deb) lands in the tree.
DEB_SRC := $(O)/deb/featprof-$(VERSION)
deb:
	$(Q)scripts/install-deps.sh --demo debhelper dpkg-dev
	$(Q)rm -rf $(O)/deb && mkdir -p $(DEB_SRC)
	$(Q)tar -c --exclude=./$(O) --exclude=./.git . | tar -x -C $(DEB_SRC)
	$(Q)cd $(DEB_SRC) && dpkg-buildpackage -b -us -uc
	$(Q)ls -l $(O)/deb/*.deb

# The package checked as a user gets it: lintian (no errors), then `apt install` in a
# clean Debian 12 root made by debootstrap, where a member of group featprof runs the
# README's quick start without root (tests/package/deb_check.sh; needs the network).
deb-check: deb
	$(Q)scripts/install-deps.sh --demo lintian debootstrap
	$(Q)tests/package/deb_check.sh $(O)/deb

clean:
	rm -rf $(O)

.PHONY: all deps demo-deps check format-check demo bench install clean kernel-check deb deb-check

-include $(shell find $(O) -path $(O)/deb -prune -o -name '*.d' -type f -print 2>/dev/null)
