// SPDX-License-Identifier: GPL-2.0
/*
 * Red-zone test: a leaf function keeps live data in the whole 128-byte red zone across
 * a begin and an end site, while uprobes (plain perf uprobes, no BPF) are attached to
 * this process's own sites. On Linux 6.18 a uprobe on a 5-byte nop becomes a CALL that
 * writes -8(%rsp); featprof's shielded site must keep every value intact, and the
 * REDZONE_BARE_NOP5 build (a bare nop5 site, the hazard) must show corruption.
 *
 * usage: redzone ITERATIONS [attach]     exit 0: no value corrupted
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "featprof.h"
#include "common/notes.h"

/* A cleared record: every call here reports its own failure (the first one stays). */
static struct fp_err *fresh(struct fp_err *e)
{
	fp_err_clear(e);
	return e;
}

#ifdef REDZONE_BARE_NOP5
/* The hazard: a bare nop5 with a standard stapsdt note at it. */
#define SITE(name)                                                                         \
	__asm__ __volatile__("990: .byte 0x0f,0x1f,0x44,0x00,0x00\n"                       \
			     ".pushsection .note.stapsdt,\"?\",\"note\"\n.balign 4\n"     \
			     ".4byte 992f-991f,994f-993f,3\n991: .asciz \"stapsdt\"\n"     \
			     "992: .balign 4\n993: .8byte 990b\n.8byte 0\n.8byte 0\n"      \
			     ".asciz \"fptest\"\n.asciz \"" #name "\"\n.asciz \"\"\n"      \
			     "994: .balign 4\n.popsection\n")
#define RZ_BEGIN SITE(rz_begin)
#define RZ_END SITE(rz_end)
#else
#define RZ_BEGIN FP_BEGIN(redzone, "RedZone")
#define RZ_END FP_END(redzone)
#endif

/* Fills -8..-128(%rsp) with v+k, runs both sites, returns how many slots changed. */
__attribute__((noinline)) static unsigned long leaf(uint64_t v)
{
	unsigned long bad = 0;
	uint64_t got;

	__asm__ __volatile__("lea 1(%0), %%rax\n"
			     "mov %0, -8(%%rsp)\n"
			     ".irp k,16,24,32,40,48,56,64,72,80,88,96,104,112,120,128\n"
			     "mov %%rax, -\\k(%%rsp)\n"
			     ".endr\n"
			     :
			     : "r"(v)
			     : "rax", "memory");
	RZ_BEGIN;
	RZ_END;
	__asm__ __volatile__("mov -8(%%rsp), %0" : "=r"(got) : : "memory");
	bad += got != v;
#define CHECK(k)                                                                           \
	__asm__ __volatile__("mov -" #k "(%%rsp), %0" : "=r"(got) : : "memory");           \
	bad += got != v + 1;
	CHECK(16) CHECK(24) CHECK(32) CHECK(40) CHECK(48) CHECK(56) CHECK(64) CHECK(72)
	CHECK(80) CHECK(88) CHECK(96) CHECK(104) CHECK(112) CHECK(120) CHECK(128)
	return bad;
}

static int attach_self(const char *exe, uint64_t off)
{
	struct perf_event_attr a;
	FILE *f;
	int type = -1;

	f = fopen("/sys/bus/event_source/devices/uprobe/type", "r");
	if (!f || fscanf(f, "%d", &type) != 1) {
		fprintf(stderr, "redzone: no uprobe PMU\n");
		exit(2);
	}
	fclose(f);
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = (uint32_t)type;
	a.uprobe_path = (uint64_t)(uintptr_t)exe;
	a.probe_offset = off;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 1000000, i;
	int attach = argc > 2 && !strcmp(argv[2], "attach");
	unsigned long corrupted = 0, values = 0;
	long long hits = 0, h;
	int fds[16], nfd = 0, k;
	struct fp_err err = { 0 };
	char exe[4096];
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return 2;
	exe[n] = 0;
	if (attach) {
		struct fp_object *obj;

		if (fp_object__read(exe, exe, &obj, fresh(&err))) {
			fprintf(stderr, "redzone: %s\n", err.msg);
			return 2;
		}
		for (k = 0; k < obj->nsites && nfd < 16; k++) {
			const struct fp_site *s = &obj->sites[k];
			uint64_t off = s->opt_off ? s->opt_off : s->loc_off;

			fds[nfd] = attach_self(exe, off);
			if (fds[nfd] < 0) {
				fprintf(stderr, "redzone: perf_event_open uprobe %s+0x%llx: %s\n",
					exe, (unsigned long long)off, strerror(errno));
				return 2;
			}
			nfd++;
		}
		fp_object__free(obj);
	}
	for (i = 0; i < iters; i++) {
		corrupted += leaf((uint64_t)i * 0x9e3779b97f4a7c15ULL) ? 1 : 0;
		values++;
	}
	for (k = 0; k < nfd; k++)
		if (read(fds[k], &h, sizeof(h)) == sizeof(h))
			hits += h;
	printf("sites_attached=%d hits=%lld calls=%lu corrupted=%lu\n", nfd, hits, values,
	       corrupted);
	return corrupted ? 1 : 0;
}
