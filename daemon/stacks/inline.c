// SPDX-License-Identifier: GPL-2.0
/*
 * Inlined frames (daemon/stacks/stacks_impl.h). The object's DWARF through libdw: its
 * compilation units' address ranges, read once and sorted, find the unit of an address;
 * a descent from the unit's DIE through the entries that contain the address (functions,
 * inlined calls, lexical blocks; namespaces and types, which hold C++ member functions,
 * are searched through) finds the chain of DW_TAG_inlined_subroutine entries around it,
 * each named by its abstract origin's DW_AT_name. dwarf_getscopes is not used: where the
 * innermost scope is an inlined call it goes on with the scopes of the inlined function's
 * abstract definition, not with the calls around it. Each address's answer is kept:
 * a session names the same return addresses over and over; and an object's opened DWARF
 * outlives the session for a minute (below, "kept"), for the next session to use.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "stacks_impl.h"


struct unit {
	uint64_t lo, hi;	/* [lo, hi) */
	Dwarf_Off die;		/* the unit's DIE */
};

struct answer {
	uint64_t addr1;		/* addr + 1; 0: a free slot */
	int n;
	const char *names[FP_INLINE_MAX];
};

struct fp_inlines {
	int fd;
	Dwarf *dw;
	struct unit *units;
	int nunits;
	struct answer *cache;	/* open addressing by address, a power of two */
	int ncache, used;
};

static int cmp_unit(const void *a, const void *b)
{
	const struct unit *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The units' address ranges. 0 or -ENOMEM. */
static int read_units(struct fp_inlines *in)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	uint8_t unit_type;
	int cap = 0;

	while (!dwarf_get_units(in->dw, cu, &cu, NULL, &unit_type, &cudie, NULL)) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t o = 0;

		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial)
			continue;
		while ((o = dwarf_ranges(&cudie, o, &base, &lo, &hi)) > 0) {
			if (hi <= lo)
				continue;
			if (in->nunits == cap) {
				struct unit *u = realloc(in->units, sizeof(*u) * (size_t)(cap =
							 cap ? cap * 2 : 64));

				if (!u)
					return -ENOMEM;
				in->units = u;
			}
			in->units[in->nunits++] = (struct unit){ lo, hi, dwarf_dieoffset(&cudie) };
		}
	}
	qsort(in->units, (size_t)in->nunits, sizeof(*in->units), cmp_unit);
	return 0;
}

static Dwarf *open_dwarf(const char *path, int *fd)
{
	Dwarf *dw;

	*fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (*fd < 0)
		return NULL;
	dw = dwarf_begin(*fd, DWARF_C_READ);
	if (dw) {
		Dwarf_CU *cu = NULL;
		Dwarf_Die cudie;

		if (!dwarf_get_units(dw, NULL, &cu, NULL, NULL, &cudie, NULL))
			return dw;	/* it has units: .debug_info */
		dwarf_end(dw);
	}
	close(*fd);
	*fd = -1;
	return NULL;
}

/* The file a DWARF was read from, by identity (a path differs between processes: their
 * /proc/PID/root, map_files) */
struct file_id {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
};

static bool file_id(const char *path, struct file_id *id)
{
	struct stat st;

	memset(id, 0, sizeof(*id));
	if (!path || stat(path, &st))
		return false;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	id->size = st.st_size;
	id->mtime = st.st_mtim;
	return true;
}

/*
 * Opened DWARF kept across sampling sessions. Opening is the dear part: libdw inflates
 * every compressed .debug_* section of the file at once (libc6-dbg's libc: ~45 ms here,
 * paid by every `sample --stacks` session that names a libc frame, and every drill and
 * bench window, which are sessions of their own). An object's DWARF is shared by the
 * sessions that name it (refs) and kept KEEP_IDLE_NS after the last one ends, at most
 * KEEP_MAX of them idle; featprofd's one thread uses them.
 */
#define KEEP_MAX 8
#define KEEP_IDLE_NS (60 * 1000000000ULL)

struct kept {
	struct fp_inlines *in;
	struct file_id path_id, debug_id;
	int refs;
	uint64_t idle_since;
};

static struct kept kept[KEEP_MAX * 2];	/* in use (at most one per object) and idle */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void destroy(struct fp_inlines *in)
{
	if (in->dw)
		dwarf_end(in->dw);
	if (in->fd >= 0)
		close(in->fd);
	free(in->units);
	free(in->cache);
	free(in);
}

/* Idle entries past KEEP_IDLE_NS freed, and the oldest idle ones past KEEP_MAX. */
static void sweep(void)
{
	uint64_t now = mono_ns();
	int i, idle = 0, oldest;

	for (i = 0; i < KEEP_MAX * 2; i++)
		if (kept[i].in && !kept[i].refs) {
			if (now - kept[i].idle_since > KEEP_IDLE_NS) {
				destroy(kept[i].in);
				kept[i].in = NULL;
			} else {
				idle++;
			}
		}
	while (idle > KEEP_MAX) {
		oldest = -1;
		for (i = 0; i < KEEP_MAX * 2; i++)
			if (kept[i].in && !kept[i].refs &&
			    (oldest < 0 || kept[i].idle_since < kept[oldest].idle_since))
				oldest = i;
		destroy(kept[oldest].in);
		kept[oldest].in = NULL;
		idle--;
	}
}

static bool same_id(const struct file_id *a, const struct file_id *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

static struct fp_inlines *open_new(const char *path, const char *debug_file)
{
	struct fp_inlines *in = calloc(1, sizeof(*in));

	if (!in)
		return NULL;
	in->dw = open_dwarf(path, &in->fd);
	if (!in->dw)
		in->dw = open_dwarf(debug_file, &in->fd);
	if (!in->dw || read_units(in) || !in->nunits) {
		destroy(in);
		return NULL;
	}
	return in;
}

struct fp_inlines *fp_inlines__open(const char *path, const char *debug_file)
{
	struct file_id pid, did;
	struct fp_inlines *in;
	int i, free_slot = -1;

	sweep();
	if (!file_id(path, &pid))
		return NULL;
	file_id(debug_file, &did);
	for (i = 0; i < KEEP_MAX * 2; i++) {
		if (!kept[i].in) {
			free_slot = free_slot < 0 ? i : free_slot;
			continue;
		}
		if (same_id(&kept[i].path_id, &pid) && same_id(&kept[i].debug_id, &did)) {
			kept[i].refs++;
			return kept[i].in;
		}
	}
	in = open_new(path, debug_file);
	if (in && free_slot >= 0)
		kept[free_slot] = (struct kept){ in, pid, did, 1, 0 };
	return in;	/* not kept where every slot is in use: freed at its session's end */
}

void fp_inlines__free(struct fp_inlines *in)
{
	int i;

	if (!in)
		return;
	for (i = 0; i < KEEP_MAX * 2; i++)
		if (kept[i].in == in) {
			if (!--kept[i].refs)
				kept[i].idle_since = mono_ns();
			sweep();
			return;
		}
	destroy(in);
}

/* The DIE of the unit whose ranges hold addr. */
static bool unit_of(struct fp_inlines *in, uint64_t addr, Dwarf_Die *die)
{
	int lo = 0, hi = in->nunits, k;

	while (lo < hi) {	/* the first unit starting above addr */
		int mid = lo + (hi - lo) / 2;

		if (in->units[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (k = lo - 1; k >= 0 && k >= lo - 8; k--)	/* overlaps are rare and short */
		if (in->units[k].hi > addr)
			return dwarf_offdie(in->dw, in->units[k].die, die) != NULL;
	return false;
}

/* Whether the walk looks inside die for addr: entries with code that holds it, and
 * those without code that may hold such entries. */
static bool may_hold(Dwarf_Die *die, uint64_t addr)
{
	switch (dwarf_tag(die)) {
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_lexical_block:
		return dwarf_haspc(die, addr) == 1;
	case DW_TAG_namespace:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_module:
		return true;
	default:
		return false;
	}
}

/* Below parent, the inlined calls around addr, outermost first, into names (n so far);
 * the count. A C++ type or namespace can hold functions, so it is searched through; a
 * function or block holding addr is entered and the search ends there. */
static int descend(Dwarf_Die *parent, uint64_t addr, const char **names, int n, int depth)
{
	Dwarf_Die child;
	int r;

	if (depth > 64 || dwarf_child(parent, &child) != 0)
		return n;
	do {
		int tag;

		if (!may_hold(&child, addr))
			continue;
		tag = dwarf_tag(&child);
		if (tag == DW_TAG_inlined_subroutine) {
			Dwarf_Attribute a;
			const char *name = dwarf_formstring(dwarf_attr_integrate(&child,
										  DW_AT_name, &a));

			if (n < FP_INLINE_MAX)
				names[n++] = name ? name : "[inlined]";
			return descend(&child, addr, names, n, depth + 1);
		}
		r = descend(&child, addr, names, n, depth + 1);
		if (tag == DW_TAG_subprogram || tag == DW_TAG_lexical_block || r != n)
			return r;	/* the code around addr: no sibling holds it too */
	} while (dwarf_siblingof(&child, &child) == 0);
	return n;
}

static struct answer *slot_of(struct fp_inlines *in, uint64_t addr)
{
	unsigned k = (unsigned)((addr * 0x9E3779B97F4A7C15ULL) >> 40) & (unsigned)(in->ncache - 1);

	while (in->cache[k].addr1 && in->cache[k].addr1 != addr + 1)
		k = (k + 1) & (unsigned)(in->ncache - 1);
	return &in->cache[k];
}

/* Room for one more answer. 0 or -ENOMEM. */
static int make_room(struct fp_inlines *in)
{
	struct answer *old = in->cache;
	int n = in->ncache, i;

	if (2 * (in->used + 1) <= in->ncache)
		return 0;
	in->ncache = n ? n * 2 : 256;
	in->cache = calloc((size_t)in->ncache, sizeof(*in->cache));
	if (!in->cache) {
		in->cache = old;
		in->ncache = n;
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		if (old[i].addr1)
			*slot_of(in, old[i].addr1 - 1) = old[i];
	free(old);
	return 0;
}

int fp_inlines__at(struct fp_inlines *in, uint64_t addr, const char **names, int max)
{
	const char *outer[FP_INLINE_MAX];
	struct answer *a;
	Dwarf_Die cu;
	int n = 0, k;

	if (!in || make_room(in))
		return 0;
	a = slot_of(in, addr);
	if (!a->addr1) {
		if (unit_of(in, addr, &cu))
			n = descend(&cu, addr, outer, 0, 0);
		a->addr1 = addr + 1;
		a->n = n;
		for (k = 0; k < n; k++)	/* innermost first */
			a->names[k] = outer[n - 1 - k];
		in->used++;
	}
	for (k = 0; k < a->n && k < max; k++)
		names[k] = a->names[k];
	return k;
}
