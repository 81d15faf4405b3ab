// SPDX-License-Identifier: GPL-2.0
/*
 * A target is one process: its probe catalog and one BPF object of its own (maps sized
 * to its regions, so one target's figures never mix with another's). Or one file: an
 * executable group's target (fp_target__new_file), attached with no pid filter and
 * measuring the members that the watcher's map says (daemon/groups.c). Enabling a region
 * attaches one uprobe per site, filtered to the process, with FP_COOKIE in the cookie
 * and the note's semaphore as ref_ctr_offset.
 *
 * Where the kernel has it (Linux 6.6, daemon/uprobe_multi.c), all enabled sites of a target in one
 * object are one multi-uprobe link: one syscall attaches them all. Closing a uprobe link waits for
 * an RCU grace period (~50 ms here), so links are never closed one per region: a change attaches
 * the new link set (generation g+1 in every cookie), flips link_gen, then closes the old set - one
 * wait per change, for 1 or 10,000 sites (docs/TRACING.md has the figures). Per-site perf-event
 * links remain the fallback.
 *
 * A region counts only while region_enabled says so: enable attaches, then sets it to a
 * new generation (a thread already inside sees an end without begin, counted); disable
 * clears it, bumps disable_epoch so threads drop frames of the region before their next
 * event, then detaches. A frame remembers its region's generation, so a frame begun
 * before a disable is dropped even when the region is enabled again before the thread's
 * next event. Sites that fire in between are ignored by the BPF program.
 *
 * Links are not pinned: closing the daemon's fds removes every uprobe, so a killed
 * daemon leaves the target with bare nops.
 */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "featprof.skel.h"
#include "log.h"
#include "sample.h"
#include "target.h"
#include "journal.h"
#include "strays.h"
#include "uprobe_multi.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

static void detach_links(struct fp_rlinks *l)
{
	int i;

	for (i = 0; i < l->nfds; i++)
		close(l->fds[i]);
	for (i = 0; i < l->nlinks; i++)
		bpf_link__destroy(l->links[i]);
	free(l->fds);
	free(l->links);
	memset(l, 0, sizeof(*l));
}

/* The multi-uprobe link exists if the kernel's BTF knows its struct. */
static int kernel_has_uprobe_multi(void)
{
	static int known = -1;
	struct btf *btf;

	if (known >= 0)
		return known;
	btf = btf__load_vmlinux_btf();
	known = btf && btf__find_by_name_kind(btf, "bpf_uprobe_multi_link", BTF_KIND_STRUCT) > 0;
	btf__free(btf);
	return known;
}

static void close_set(int *fds, int n)
{
	int i;

	for (i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
}

void fp_target__release(struct fp_target *t)
{
	int r, journal = t->attached_sites > 0;

	if (journal)
		fp_journal__begin(t);
	close_set(t->set_fds, t->nset_fds);
	t->set_fds = NULL;
	t->nset_fds = 0;
	if (t->links && t->cat)
		for (r = 0; r < t->cat->nregions; r++)
			detach_links(&t->links[r]);
	if (journal)
		fp_journal__end();
	t->attached_sites = 0;
	if (t->enabled && t->cat) {
		t->points_kept = fp_target__attach_points(t);
		memset(t->enabled, 0, (size_t)t->cat->nregions);
	}
	if (t->skel) {
		fp_target__record_stop(t);
		fp_target__sample_stop(t);
	}
	featprof_bpf__destroy(t->skel);
	t->skel = NULL;
}

unsigned long long fp_start_time(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long st = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');	/* fields 3 on follow the command name */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
			 "%*d %*d %*d %*d %llu", &st) != 1)
		return 0;
	return st;
}

void fp_target__retire(struct fp_target *t)
{
	if (t->exited)
		return;
	t->exited_ns = fp_mono_ns();
	fp_snapshot__free(t->last);
	t->last = fp_target__snapshot(t);
	t->exited = 1;
	fp_target__release(t);
}

void fp_target__free(struct fp_target *t)
{
	if (!t)
		return;
	fp_target__release(t);
	free(t->links);
	fp_catalog__free(t->cat);
	fp_proc__free(t->proc);
	fp_snapshot__free(t->last);
	fp_regdefs__clear(&t->own_defs);
	fp_wants_clear(&t->wants);
	json_object_put(t->sample_last);
	free(t->sample_ids);
	free(t->enabled);
	free(t->region_mask);
	if (t->pidfd >= 0)
		close(t->pidfd);
	free(t);
}

void fp_no_probes_msg(const struct fp_proc *proc, const char *comm, char *err, size_t errlen)
{
	char prov[256] = "";
	int o, k, n = 0;

	for (o = 0; o < proc->nobjs; o++)
		for (k = 0; k < proc->objs[o]->nsites && n < 4; k++) {
			const char *p = proc->objs[o]->sites[k].provider;

			if (!strstr(prov, p) && strlen(prov) + strlen(p) + 3 < sizeof(prov)) {
				strcat(prov, n++ ? ", " : " (other stapsdt providers: ");
				strcat(prov, p);
			}
		}
	if (n)
		strcat(prov, ")");
	snprintf(err, errlen, "pid %d (%s): no featprof probes%s", (int)proc->pid, comm, prov);
}

static void read_comm(struct fp_target *t)
{
	char p[64];
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/comm", (int)t->pid);
	f = fopen(p, "re");
	if (f) {
		if (fgets(t->comm, sizeof(t->comm), f))
			t->comm[strcspn(t->comm, "\n")] = 0;
		fclose(f);
	}
}

static int take_defs(struct fp_target *t, struct fp_regdefs *more, char *err, size_t errlen);

/* Region r's entry in region_info: its feature mask and flags. */
static int fill_region_info(struct fp_target *t, int r)
{
	struct fp_region_info info = { 0 };
	__u32 key = (__u32)r;
	int f;

	for (f = 0; f < t->cat->nfeatures; f++)
		if (fp_region__has_feature(&t->cat->regions[r], t->cat->features[f]))
			info.mask |= 1ULL << f;
	if (!t->cat->regions[r].nests)
		info.flags |= FP_RI_NONEST;
	t->region_mask[r] = info.mask;
	return bpf_map__update_elem(t->skel->maps.region_info, &key, sizeof(key), &info,
				    sizeof(info), BPF_ANY);
}

/* Regions beyond those of the first catalog read: room for dlopen and definitions. */
static int region_capacity(int n)
{
	return n * 2 + 64;
}

/* The watcher's map of processes, reused by every object (members), -1: none. */
static int members_fd = -1;

void fp_target__use_members_map(int fd)
{
	members_fd = fd;
}

void fp_target__set_member_group(struct fp_target *t, uint32_t value)
{
	if (t->skel)
		__atomic_store_n(&t->skel->bss->member_group, value, __ATOMIC_SEQ_CST);
}

uint32_t fp_target__member_group(const struct fp_target *t)
{
	return t->skel ? t->skel->bss->member_group : 0;
}

/*
 * The part of a new target that is the same for a process and a file: the catalog from
 * t->proc's objects, the BPF object loaded and its always-on programs attached. who
 * names the target in messages. 0 or -errno with err filled.
 */
static int load(struct fp_target *t, const char *who, char *err, size_t errlen)
{
	int ret, r;

	t->cat = fp_catalog__new(t->proc->objs, t->proc->nobjs, t->defs);
	if (!t->cat || fp_catalog__extend(t->cat, t->proc->objs, t->proc->nobjs,
					  &t->own_defs) < 0) {
		snprintf(err, errlen, "%s: out of memory", who);
		return -ENOMEM;
	}
	if (!t->cat->nregions) {
		fp_no_probes_msg(t->proc, t->comm, err, errlen);
		return -ENOENT;
	}
	if (t->cat->nfeatures > FP_MAX_FEATURES) {
		snprintf(err, errlen, "%s: %d features, at most %d supported", who,
			 t->cat->nfeatures, FP_MAX_FEATURES);
		return -E2BIG;
	}
	t->cap_regions = region_capacity(t->cat->nregions);
	t->enabled = calloc((size_t)t->cap_regions, 1);
	t->region_mask = calloc((size_t)t->cap_regions, sizeof(*t->region_mask));
	t->links = calloc((size_t)t->cap_regions, sizeof(*t->links));
	t->skel = featprof_bpf__open();
	if (!t->enabled || !t->region_mask || !t->links || !t->skel) {
		snprintf(err, errlen, "%s: cannot open BPF object", who);
		return -ENOMEM;
	}
	t->multi = kernel_has_uprobe_multi();
	if (t->multi)
		bpf_program__set_expected_attach_type(t->skel->progs.fp_site_multi,
						      FP_ATTACH_UPROBE_MULTI);
	else
		bpf_program__set_autoload(t->skel->progs.fp_site_multi, false);
	bpf_map__set_max_entries(t->skel->maps.region_info, (__u32)t->cap_regions);
	bpf_map__set_max_entries(t->skel->maps.region_enabled, (__u32)t->cap_regions);
	bpf_map__set_max_entries(t->skel->maps.region_stats, (__u32)t->cap_regions);
	bpf_map__set_max_entries(t->skel->maps.paths, FP_MAX_PATHS);
	bpf_map__set_max_entries(t->skel->maps.path_nodes, FP_MAX_PATHS);
	if (members_fd < 0 || bpf_map__reuse_fd(t->skel->maps.members, members_fd))
		bpf_map__set_max_entries(t->skel->maps.members, 1);	/* never looked at */
	ret = featprof_bpf__load(t->skel);
	if (ret) {
		char buf[128];

		libbpf_strerror(ret, buf, sizeof(buf));
		snprintf(err, errlen, "%s: cannot load BPF programs: %s", who, buf);
		return ret;
	}
	for (r = 0; r < t->cat->nregions; r++) {
		ret = fill_region_info(t, r);
		if (ret) {
			snprintf(err, errlen, "%s: cannot fill the region map: %s", who,
				 strerror(-ret));
			return ret;
		}
	}
	t->skel->links.fp_exit = bpf_program__attach(t->skel->progs.fp_exit);
	if (!t->skel->links.fp_exit) {
		ret = -errno;
		snprintf(err, errlen, "%s: cannot attach thread-exit program: %s", who,
			 strerror(errno));
		return ret;
	}
	t->skel->links.fp_switch = bpf_program__attach(t->skel->progs.fp_switch);
	t->skel->links.fp_wakeup = bpf_program__attach(t->skel->progs.fp_wakeup);
	if (!t->skel->links.fp_switch || !t->skel->links.fp_wakeup) {
		ret = -errno;
		snprintf(err, errlen, "%s: cannot attach the context-switch program: %s", who,
			 strerror(errno));
		return ret;
	}
	return 0;
}

struct fp_target *fp_target__new(pid_t pid, int use_opt, const struct fp_regdefs *defs,
				 struct fp_regdefs *more, char *err, size_t errlen)
{
	struct fp_target *t = calloc(1, sizeof(*t));
	char who[32];
	int ret = 0;

	if (!t) {
		errno = ENOMEM;
		return NULL;
	}
	t->pid = pid;
	t->use_opt = use_opt;
	t->defs = defs;
	t->rec_fd = -1;
	t->start_time = fp_start_time(pid);
	t->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (t->pidfd < 0) {
		ret = -errno;
		snprintf(err, errlen, "pid %d: %s", (int)pid,
			 errno == ESRCH ? "no such process" : strerror(errno));
		goto fail;
	}
	read_comm(t);
	ret = fp_proc__read(pid, &t->proc, err, errlen);
	if (ret)
		goto fail;
	ret = more ? take_defs(t, more, err, errlen) : 0;
	if (ret < 0)
		goto fail;
	snprintf(who, sizeof(who), "pid %d", (int)pid);
	ret = load(t, who, err, errlen);
	if (ret)
		goto fail;
	return t;
fail:
	fp_target__free(t);
	errno = -ret;
	return NULL;
}

struct fp_target *fp_target__new_file(int fd, const char *path, int group, int use_opt,
				      const struct fp_regdefs *defs, char *err, size_t errlen)
{
	struct fp_target *t = calloc(1, sizeof(*t));
	struct fp_object *obj = NULL;
	const char *base = strrchr(path, '/');
	char host[64];
	int ret = -ENOMEM, own;

	if (!t || !(t->proc = calloc(1, sizeof(*t->proc))) ||
	    !(t->proc->objs = calloc(1, sizeof(*t->proc->objs)))) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto fail;
	}
	t->pidfd = -1;
	t->rec_fd = -1;
	t->use_opt = use_opt;
	t->defs = defs;
	t->group = group;
	snprintf(t->comm, sizeof(t->comm), "%s", base ? base + 1 : path);
	/* the inode the group was keyed by, not whatever the path names now; the object
	 * holds its own descriptor (closed with it) */
	own = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (own < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	snprintf(host, sizeof(host), "/proc/self/fd/%d", own);
	ret = fp_object__read(host, path, &obj, err, errlen);
	if (ret) {
		close(own);
		goto fail;
	}
	obj->fd = own;
	t->proc->objs[t->proc->nobjs++] = obj;
	ret = load(t, path, err, errlen);
	if (ret == -ENOENT)
		snprintf(err, errlen, "%s: no featprof probes or defined regions in the file "
			 "itself", path);
	if (ret)
		goto fail;
	fp_target__set_member_group(t, (uint32_t)group);
	return t;
fail:
	fp_target__free(t);
	errno = -ret;
	return NULL;
}

/* The one message target.c logs itself: a change that half happened. */
static void log_warn(const struct fp_target *t, const char *what, int err)
{
	fp_log(FP_LOG_WARN, "pid %d: %s: %s", (int)t->pid, what, strerror(-err));
}

static uint64_t site_offset(const struct fp_target *t, const struct fp_site *site)
{
	return t->use_opt && site->opt_off ? site->opt_off : site->loc_off;
}

static int attach_per_site(struct fp_target *t, int region, struct fp_rlinks *l, char *err,
			   size_t errlen)
{
	const struct fp_region *reg = &t->cat->regions[region];
	int s;

	l->links = calloc((size_t)reg->nsites, sizeof(*l->links));
	if (!l->links)
		return -ENOMEM;
	for (s = 0; s < reg->nsites; s++) {
		const struct fp_object *obj = t->cat->objs[reg->sites[s].obj];
		const struct fp_site *site = &obj->sites[reg->sites[s].site];
		LIBBPF_OPTS(bpf_uprobe_opts, opts);
		uint64_t off = site_offset(t, site);

		opts.bpf_cookie = FP_COOKIE(region, reg->sites[s].kind == FP_KIND_END, 0);
		opts.ref_ctr_offset = site->sem_off;
		/* a file's target: every process (-1; libbpf's 0 is the caller) */
		l->links[l->nlinks] = bpf_program__attach_uprobe_opts(
			t->skel->progs.fp_site, t->pid ? t->pid : -1, obj->host_path, off, &opts);
		if (!l->links[l->nlinks]) {
			int e = errno;

			snprintf(err, errlen,
				 "attach: cannot attach '%s' at %s+0x%llx in pid %d: %s", reg->name,
				 obj->path, (unsigned long long)off, (int)t->pid, strerror(e));
			return -e;
		}
		l->nlinks++;
	}
	return 0;
}

/*
 * Builds the link set for the regions in want[] (generation gen): one multi-uprobe link
 * per object holding such sites. Returns the number of links in *fds_out, or -errno.
 */
static int build_set(struct fp_target *t, const uint8_t *want, unsigned gen, int **fds_out,
		     char *err, size_t errlen)
{
	int prog_fd = bpf_program__fd(t->skel->progs.fp_site_multi);
	int o, r, s, n = 0, ret = 0, cap = 0;
	uint64_t *offs = NULL, *refs = NULL, *cookies = NULL;
	int *fds = calloc((size_t)t->cat->nobjs + 1, sizeof(int));

	for (r = 0; r < t->cat->nregions; r++)
		cap += want[r] ? t->cat->regions[r].nsites : 0;
	offs = calloc((size_t)cap + 1, 8);
	refs = calloc((size_t)cap + 1, 8);
	cookies = calloc((size_t)cap + 1, 8);
	if (!fds || !offs || !refs || !cookies) {
		ret = -ENOMEM;
		goto out;
	}
	for (o = 0; o < t->cat->nobjs; o++) {
		const struct fp_object *obj = t->cat->objs[o];
		uint32_t k = 0;
		int fd;

		for (r = 0; r < t->cat->nregions; r++) {
			const struct fp_region *reg = &t->cat->regions[r];

			if (!want[r])
				continue;
			for (s = 0; s < reg->nsites; s++) {
				const struct fp_site *site;

				if (reg->sites[s].obj != o)
					continue;
				site = &obj->sites[reg->sites[s].site];
				offs[k] = site_offset(t, site);
				refs[k] = site->sem_off;
				cookies[k] = FP_COOKIE(r, reg->sites[s].kind == FP_KIND_END, gen);
				k++;
			}
		}
		if (!k)
			continue;
		fd = fp_uprobe_multi_link(prog_fd, obj->host_path, offs, refs, cookies, k, t->pid);
		if (fd < 0) {
			ret = fd;
			snprintf(err, errlen, "attach: cannot attach %u sites in %s of pid %d: %s",
				 k, obj->path, (int)t->pid, strerror(-fd));
			goto out;
		}
		fds[n++] = fd;
	}
out:
	free(offs);
	free(refs);
	free(cookies);
	if (ret) {
		close_set(fds, n);
		return ret;
	}
	*fds_out = fds;
	return n;
}

/* An array map's update of a valid index does not fail; checked all the same. */
static int set_flag(struct fp_target *t, int region, int on)
{
	__u32 key = (__u32)region, val = on ? ++t->enable_gen : 0;

	if (on && !val)	/* 2^32 enables: 0 means disabled */
		val = ++t->enable_gen;
	return bpf_map__update_elem(t->skel->maps.region_enabled, &key, sizeof(key), &val,
				    sizeof(val), BPF_ANY);
}

static int set_enabled_flags(struct fp_target *t, const uint8_t *sel, int on)
{
	int r, ret = 0;

	for (r = 0; r < t->cat->nregions && !ret; r++)
		if (sel[r] && !!t->enabled[r] != !!on)
			ret = set_flag(t, r, on);
	return ret;
}

static int count_sites(const struct fp_target *t, const uint8_t *want)
{
	int r, n = 0;

	for (r = 0; r < t->cat->nregions; r++)
		n += want[r] ? t->cat->regions[r].nsites : 0;
	return n;
}

/* force: rebuild the link set even when no region changes (a region gained sites). */
static int change_regions(struct fp_target *t, const uint8_t *sel, int on, int force,
			  char *err, size_t errlen);

/* Every change of a target's attachments is journaled (daemon/journal.c). */
static int set_regions(struct fp_target *t, const uint8_t *sel, int on, int force, char *err,
		       size_t errlen)
{
	int ret;

	fp_journal__begin(t);
	ret = change_regions(t, sel, on, force, err, errlen);
	fp_journal__end();
	return ret;
}

static int change_regions(struct fp_target *t, const uint8_t *sel, int on, int force,
			  char *err, size_t errlen)
{
	int r, n, ret = 0, changed = 0;
	uint8_t *want;
	int *fds = NULL;

	if (t->exited || !t->skel)
		return -EINVAL;
	for (r = 0; r < t->cat->nregions; r++)
		changed |= sel[r] && !!t->enabled[r] != !!on;
	if (!changed && !(force && t->multi))
		return 0;
	if (!t->multi) {
		for (r = 0; r < t->cat->nregions && !ret; r++)
			if (sel[r])
				ret = fp_target__set_region(t, r, on, err, errlen);
		return ret;
	}
	want = malloc((size_t)t->cat->nregions);
	if (!want)
		return -ENOMEM;
	for (r = 0; r < t->cat->nregions; r++)
		want[r] = sel[r] ? (uint8_t)!!on : t->enabled[r];
	if (!on) {	/* stop counting first: sites may fire until the set is replaced */
		ret = set_enabled_flags(t, sel, 0);
		if (ret) {
			set_enabled_flags(t, sel, 1);
			snprintf(err, errlen, "pid %d: cannot update the region map: %s",
				 (int)t->pid, strerror(-ret));
			free(want);
			return ret;
		}
		__atomic_add_fetch(&t->skel->bss->disable_epoch, 1, __ATOMIC_SEQ_CST);
	}
	n = count_sites(t, want) ? build_set(t, want, t->gen + 1, &fds, err, errlen) : 0;
	if (n < 0) {
		if (!on)	/* nothing changed: the regions stay enabled on the old set */
			set_enabled_flags(t, sel, 1);
		free(want);
		return n;
	}
	t->gen++;
	__atomic_store_n(&t->skel->bss->link_gen, t->gen & 1, __ATOMIC_SEQ_CST);
	if (on && (ret = set_enabled_flags(t, sel, 1)))	/* attached, but not counted */
		log_warn(t, "cannot enable regions in the map", ret);
	close_set(t->set_fds, t->nset_fds);	/* the one grace-period wait */
	t->set_fds = fds;
	t->nset_fds = n;
	memcpy(t->enabled, want, (size_t)t->cat->nregions);
	t->attached_sites = count_sites(t, want);
	if (on && !t->enabled_at_ns)
		t->enabled_at_ns = fp_mono_ns();
	free(want);
	return 0;
}

int fp_target__set_regions(struct fp_target *t, const uint8_t *sel, int on, char *err,
			   size_t errlen)
{
	return set_regions(t, sel, on, 0, err, errlen);
}

/* The per-site path (no multi-uprobe link): the region's own links. */
static int set_region_links(struct fp_target *t, int region, int on, char *err, size_t errlen)
{
	struct fp_rlinks *l;
	int ret;

	l = &t->links[region];
	if (on) {
		ret = attach_per_site(t, region, l, err, errlen);
		if (ret) {
			detach_links(l);
			return ret;
		}
		ret = set_flag(t, region, 1);
		if (ret) {
			detach_links(l);
			snprintf(err, errlen, "pid %d: cannot update the region map: %s",
				 (int)t->pid, strerror(-ret));
			return ret;
		}
		t->attached_sites += t->cat->regions[region].nsites;
		if (!t->enabled_at_ns)
			t->enabled_at_ns = fp_mono_ns();
	} else {
		ret = set_flag(t, region, 0);
		if (ret) {
			snprintf(err, errlen, "pid %d: cannot update the region map: %s",
				 (int)t->pid, strerror(-ret));
			return ret;
		}
		__atomic_add_fetch(&t->skel->bss->disable_epoch, 1, __ATOMIC_SEQ_CST);
		detach_links(l);
		t->attached_sites -= t->cat->regions[region].nsites;
	}
	t->enabled[region] = (uint8_t)!!on;
	return 0;
}

int fp_target__set_region(struct fp_target *t, int region, int on, char *err, size_t errlen)
{
	int ret;

	if (region < 0 || region >= t->cat->nregions || t->exited || !t->skel)
		return -EINVAL;
	if (!!t->enabled[region] == !!on)
		return 0;
	if (t->multi) {
		uint8_t *sel = calloc((size_t)t->cat->nregions, 1);

		if (!sel)
			return -ENOMEM;
		sel[region] = 1;
		ret = fp_target__set_regions(t, sel, on, err, errlen);
		free(sel);
		return ret;
	}
	fp_journal__begin(t);
	ret = set_region_links(t, region, on, err, errlen);
	fp_journal__end();
	return ret;
}

static int wanted(const struct fp_target *t, int r)
{
	const struct fp_region *reg = &t->cat->regions[r];
	int i;

	if (t->wants.all)
		return 1;
	for (i = 0; i < t->wants.nregions; i++)
		if (!strcmp(t->wants.regions[i], reg->name))
			return 1;
	for (i = 0; i < t->wants.nfeatures; i++)
		if (fp_region__has_feature(reg, t->wants.features[i]))
			return 1;
	return 0;
}

int fp_target__apply_wants(struct fp_target *t, int on, char *err, size_t errlen)
{
	uint8_t *sel = calloc((size_t)t->cat->nregions + 1, 1);
	int r, ret;

	if (!sel)
		return -ENOMEM;
	for (r = 0; r < t->cat->nregions; r++)
		sel[r] = (uint8_t)(on ? wanted(t, r) : t->enabled[r] && !wanted(t, r));
	ret = fp_target__set_regions(t, sel, on, err, errlen);
	free(sel);
	return ret;
}

int fp_target__set_wants(struct fp_target *t, const struct fp_wants *w)
{
	return fp_wants_copy(&t->wants, w);
}

/* Would the catalog over the process's objects and all definitions fit the object? */
static int check_fits(struct fp_target *t, char *err, size_t errlen)
{
	struct fp_catalog *c = fp_catalog__new(t->proc->objs, t->proc->nobjs, t->defs);
	int ret = 0;

	if (!c || fp_catalog__extend(c, t->proc->objs, t->proc->nobjs, &t->own_defs) < 0)
		ret = -ENOMEM;
	else if (c->nregions > t->cap_regions || c->nfeatures > FP_MAX_FEATURES)
		ret = -E2BIG;
	if (ret == -E2BIG)
		snprintf(err, errlen,
			 "pid %d: %d regions and %d features would exceed this target's room "
			 "(%d, %d): detach and attach again", (int)t->pid, c->nregions,
			 c->nfeatures, t->cap_regions, FP_MAX_FEATURES);
	else if (ret)
		snprintf(err, errlen, "pid %d: out of memory", (int)t->pid);
	fp_catalog__free(c);
	return ret;
}

int fp_target__refresh(struct fp_target *t, char *err, size_t errlen)
{
	int n0, r, ret, added, *nsites0 = NULL;
	uint8_t *sel = NULL;
	int force = 0, any = 0;

	if (t->exited || !t->skel)
		return -EINVAL;
	ret = fp_proc__refresh(t->proc, err, errlen);
	t->cat->objs = t->proc->objs;	/* the array may have moved */
	if (ret < 0)
		return ret;
	if (!ret && !t->defs_added)	/* no object mapped, no definition: as it was */
		return 0;
	t->defs_added = 0;
	n0 = t->cat->nregions;
	ret = check_fits(t, err, errlen);
	if (ret)
		return ret;
	nsites0 = calloc((size_t)n0 + 1, sizeof(*nsites0));
	if (!nsites0)
		return -ENOMEM;
	for (r = 0; r < n0; r++)
		nsites0[r] = t->cat->regions[r].nsites;
	added = fp_catalog__extend(t->cat, t->proc->objs, t->proc->nobjs, t->defs);
	if (added >= 0) {
		ret = fp_catalog__extend(t->cat, t->proc->objs, t->proc->nobjs, &t->own_defs);
		added = ret < 0 ? ret : added + ret;
	}
	if (added <= 0) {
		free(nsites0);
		if (added < 0)
			snprintf(err, errlen, "pid %d: out of memory", (int)t->pid);
		return added;
	}
	for (r = 0; r < t->cat->nregions; r++) {
		ret = fill_region_info(t, r);
		if (ret) {
			snprintf(err, errlen, "pid %d: cannot fill the region map: %s",
				 (int)t->pid, strerror(-ret));
			goto out;
		}
	}
	sel = calloc((size_t)t->cat->nregions, 1);
	if (!sel) {
		ret = -ENOMEM;
		goto out;
	}
	for (r = 0; r < t->cat->nregions; r++) {
		int grew = r < n0 && t->enabled[r] && t->cat->regions[r].nsites != nsites0[r];

		if (r >= n0 && wanted(t, r))
			sel[r] = 1, any = 1;
		if (grew && !t->multi) {	/* per-site links: attach the region again */
			ret = fp_target__set_region(t, r, 0, err, errlen);
			if (!ret)
				ret = fp_target__set_region(t, r, 1, err, errlen);
			if (ret)
				goto out;
		}
		force |= grew;
	}
	ret = any || force ? set_regions(t, sel, 1, force, err, errlen) : 0;
out:
	free(sel);
	free(nsites0);
	return ret ? ret : t->cat->nregions - n0;
}

/* Checks more's probes against the process and moves the new ones into own_defs; returns
 * how many were moved, or -errno (nothing moved). */
static int take_defs(struct fp_target *t, struct fp_regdefs *more, char *err, size_t errlen)
{
	struct fp_regdef *a;
	int i, j, n0 = t->own_defs.ndefs;

	for (i = 0; i < more->ndefs; i++) {
		const struct fp_probe_name *p = fp_regdef__missing(t->proc->objs, t->proc->nobjs,
								   &more->defs[i]);

		if (p) {
			snprintf(err, errlen, "%s: pid %d has no probe %s:%s", more->defs[i].origin,
				 (int)t->pid, p->provider, p->probe);
			return -ENOENT;
		}
	}
	a = realloc(t->own_defs.defs, sizeof(*a) * (size_t)(n0 + more->ndefs + 1));
	if (!a)
		return -ENOMEM;
	t->own_defs.defs = a;
	for (i = 0; i < more->ndefs; i++) {
		int dup = 0;

		for (j = 0; j < t->own_defs.ndefs && !dup; j++)
			dup = !strcmp(a[j].name, more->defs[i].name);
		if (dup)
			continue;
		a[t->own_defs.ndefs++] = more->defs[i];
		memset(&more->defs[i], 0, sizeof(more->defs[i]));
	}
	fp_regdefs__clear(more);	/* what is left: the duplicates */
	t->defs_added = t->own_defs.ndefs > n0;
	return t->own_defs.ndefs - n0;
}

int fp_target__add_defs(struct fp_target *t, struct fp_regdefs *more, char *err,
			size_t errlen)
{
	int n0 = t->own_defs.ndefs, ret;

	if (t->exited || !t->skel)
		return -EINVAL;
	ret = fp_proc__refresh(t->proc, err, errlen);
	t->cat->objs = t->proc->objs;
	if (ret < 0)
		return ret;
	ret = take_defs(t, more, err, errlen);
	if (ret <= 0)
		return ret;
	ret = fp_target__refresh(t, err, errlen);
	if (ret < 0)	/* not applied: not kept */
		fp_regdefs__truncate(&t->own_defs, n0);
	return ret;
}
