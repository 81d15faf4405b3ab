# featprof - build, test, install.  `make V=1` shows the full commands.
.DELETE_ON_ERROR:
.SUFFIXES:

PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
INCLUDEDIR ?= $(PREFIX)/include
LIBDIR ?= $(PREFIX)/lib
UNITDIR ?= $(PREFIX)/lib/systemd/system

CC ?= gcc
CLANG ?= clang
BPFTOOL ?= bpftool
PKG_CONFIG ?= pkg-config
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux

O := build
WARN := -Wall -Wextra -Werror -Wshadow -Wmissing-prototypes -Wno-unused-parameter
CFLAGS ?= -O2 -g
ALL_CFLAGS := $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -MMD -MP -I$(O) -Iusdt
LIBS_NOTES := $(shell $(PKG_CONFIG) --libs libelf 2>/dev/null || echo -lelf) -lz
LIBS_JSON := $(shell $(PKG_CONFIG) --libs json-c 2>/dev/null || echo -ljson-c)
CFLAGS_JSON := $(shell $(PKG_CONFIG) --cflags json-c 2>/dev/null)

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

NOTES_OBJS := $(O)/daemon/notes.o $(O)/daemon/catalog.o

# --- BPF: vmlinux.h from the running kernel's BTF, object, skeleton --------------------
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Werror -I$(O) -Ibpf

$(O)/vmlinux.h: $(VMLINUX_BTF)
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@

$(O)/featprof.bpf.o: bpf/featprof.bpf.c bpf/featprof.h $(O)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(O)/featprof.skel.h: $(O)/featprof.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name featprof_bpf > $@
CLI_OBJS := $(O)/cli/main.o $(O)/cli/list.o $(O)/cli/client.o $(O)/cli/commands.o \
	$(O)/cli/opts.o \
	$(NOTES_OBJS)
DAEMON_OBJS := $(O)/daemon/main.o $(O)/daemon/server.o $(O)/daemon/target.o \
	$(O)/daemon/calibrate.o $(O)/daemon/stats.o $(O)/daemon/report.o $(O)/daemon/log.o \
	$(O)/daemon/uprobe_multi.o $(O)/daemon/verbs.o $(O)/daemon/access.o $(NOTES_OBJS)
LIBS_BPF := $(shell $(PKG_CONFIG) --libs libbpf 2>/dev/null || echo -lbpf)

TEST_TARGETS := $(O)/tests/targets/site_c $(O)/tests/targets/site_cxx \
	$(O)/tests/targets/libsite.so $(O)/tests/targets/site_shlib \
	$(O)/tests/targets/site_nopie $(O)/tests/targets/redzone \
	$(O)/tests/targets/redzone_bare $(O)/tests/targets/truth
UNIT_BINS := $(O)/tests/unit/notes_dump $(O)/tests/unit/test_notes $(O)/tests/unit/test_stats

all: $(O)/featprof $(O)/featprofd $(O)/featprof-demo

$(O)/daemon/target.o $(O)/daemon/calibrate.o: $(O)/featprof.skel.h

$(O)/featprofd: $(DAEMON_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LIBS_BPF) $(LIBS_NOTES) $(LIBS_JSON) -lm

$(O)/featprof-demo: tests/targets/demo.c usdt/featprof.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -Wall -Wextra -Werror -Iusdt $< -o $@ -lpthread

$(O)/%.o: %.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(CFLAGS_JSON) -c $< -o $@

$(O)/featprof: $(CLI_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LIBS_NOTES) $(LIBS_JSON)

# --- test programs and unit tests ------------------------------------------------------
TGT_FLAGS := -O2 -g -Wall -Wextra -Werror -Iusdt

$(O)/tests/targets/site_c: tests/targets/site.c usdt/featprof.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TGT_FLAGS) -std=c99 $< -o $@
$(O)/tests/targets/site_nopie: tests/targets/site.c usdt/featprof.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TGT_FLAGS) -std=c99 -fno-pie -no-pie $< -o $@
$(O)/tests/targets/site_cxx: tests/targets/site_cxx.cc usdt/featprof.h
	$(call msg,CXX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) $(TGT_FLAGS) -std=c++11 $< -o $@
$(O)/tests/targets/libsite.so: tests/targets/libsite.c usdt/featprof.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TGT_FLAGS) -fPIC -shared $< -o $@
$(O)/tests/targets/site_shlib: tests/targets/site_shlib.c $(O)/tests/targets/libsite.so
	$(call msg,CC,$@)
	$(Q)$(CC) $(TGT_FLAGS) $< -o $@ -L$(O)/tests/targets -lsite -Wl,-rpath,'$$ORIGIN'
$(O)/tests/targets/redzone: tests/targets/redzone.c usdt/featprof.h $(O)/daemon/notes.o
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TGT_FLAGS) $< $(O)/daemon/notes.o -o $@ $(LIBS_NOTES)
$(O)/tests/targets/redzone_bare: tests/targets/redzone.c usdt/featprof.h $(O)/daemon/notes.o
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TGT_FLAGS) -DREDZONE_BARE_NOP5 $< $(O)/daemon/notes.o -o $@ $(LIBS_NOTES)

$(O)/tests/targets/truth: tests/targets/truth.cc usdt/featprof.h
	$(call msg,CXX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) $(TGT_FLAGS) -std=c++11 $< -o $@ -lpthread

$(O)/tests/unit/notes_dump: $(O)/tests/unit/notes_dump.o $(NOTES_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LIBS_NOTES) $(LIBS_JSON)
$(O)/tests/unit/test_notes: $(O)/tests/unit/test_notes.o $(NOTES_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LIBS_NOTES) $(LIBS_JSON)
$(O)/tests/unit/test_stats: $(O)/tests/unit/test_stats.o $(O)/daemon/stats.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@

$(O)/tests/unit/fuzz_notes: tests/unit/fuzz_notes.c daemon/notes.c daemon/notes.h
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -D_GNU_SOURCE -Idaemon \
		tests/unit/fuzz_notes.c daemon/notes.c -o $@ $(LIBS_NOTES)

# --- benchmarks (tests/bench): SimpleBusyLoop in variants ------------------------------
BENCH_BINS := $(O)/bench/busyloop_dry $(O)/bench/busyloop_sdt $(O)/bench/busyloop_fp \
	$(O)/bench/busyloop_fp_nop1 $(O)/bench/busyloop_static
BL_FLAGS := -O2 -g -Wall -Wextra -Werror -Iusdt -D_GNU_SOURCE

$(O)/bench/busyloop_dry: tests/bench/busyloop.c usdt/featprof.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BL_FLAGS) -DBL_DRY $< -o $@ -lpthread
$(O)/bench/busyloop_sdt: tests/bench/busyloop.c usdt/featprof.h $(O)/daemon/notes.o \
		$(O)/daemon/uprobe_multi.o
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BL_FLAGS) -DBL_SDT $< $(O)/daemon/notes.o $(O)/daemon/uprobe_multi.o -o $@ -lpthread $(LIBS_NOTES)
$(O)/bench/busyloop_fp: tests/bench/busyloop.c usdt/featprof.h $(O)/daemon/notes.o \
		$(O)/daemon/uprobe_multi.o
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BL_FLAGS) $< $(O)/daemon/notes.o $(O)/daemon/uprobe_multi.o -o $@ -lpthread \
		$(LIBS_NOTES)
$(O)/bench/busyloop_fp_nop1: tests/bench/busyloop.c usdt/featprof.h $(O)/daemon/notes.o \
		$(O)/daemon/uprobe_multi.o
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BL_FLAGS) -DFP_SITE_SHAPE=FP_SHAPE_NOP1 $< $(O)/daemon/notes.o $(O)/daemon/uprobe_multi.o -o $@ \
		-lpthread $(LIBS_NOTES)
$(O)/bench/busyloop_static: tests/bench/busyloop.c usdt/featprof.h $(O)/daemon/notes.o \
		$(O)/daemon/uprobe_multi.o
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BL_FLAGS) -DBL_STATIC $< $(O)/daemon/notes.o $(O)/daemon/uprobe_multi.o -o $@ -lpthread $(LIBS_NOTES)

# Full benchmark (minutes); results into docs/BENCHMARKS.md.
bench:
	$(Q)scripts/install-deps.sh python3-bpfcc
	$(Q)$(MAKE) --no-print-directory all $(BENCH_BINS)
	$(Q)python3 tests/bench/run_bench.py $(O) --out docs/BENCHMARKS.md

# --- top-level targets ---------------------------------------------------------------
deps:
	$(Q)scripts/install-deps.sh

check: deps
	$(Q)$(MAKE) --no-print-directory all $(TEST_TARGETS) $(UNIT_BINS) $(O)/tests/unit/fuzz_notes \
		$(BENCH_BINS)
	$(Q)tests/run.sh

# The main job on the built-in demo target (see README).
demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/demo.sh $(O)

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(INCLUDEDIR) \
		$(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(UNITDIR)
	install -m 0755 $(O)/featprof $(DESTDIR)$(BINDIR)/featprof
	install -m 0755 $(O)/featprofd $(DESTDIR)$(SBINDIR)/featprofd
	sed 's|@SBINDIR@|$(SBINDIR)|' systemd/featprofd.service > $(DESTDIR)$(UNITDIR)/featprofd.service
	install -m 0644 systemd/featprofd.socket $(DESTDIR)$(UNITDIR)/featprofd.socket
	install -m 0644 usdt/featprof.h $(DESTDIR)$(INCLUDEDIR)/featprof.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' featprof.pc.in \
		> $(DESTDIR)$(LIBDIR)/pkgconfig/featprof.pc

clean:
	rm -rf $(O)

.PHONY: all deps check demo bench install clean

-include $(shell find $(O) -name '*.d' 2>/dev/null)
