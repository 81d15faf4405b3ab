// SPDX-License-Identifier: GPL-2.0
/*
 * A target's attachments (daemon/targets/target.h): which probe sites of its enabled regions are
 * attached, and how - one multi-uprobe link set per change, or one link per site (with
 * a cookie trampoline where the kernel has no attach cookie) - and region_enabled kept in
 * step. The design of a change (new set, flip, close the old one): daemon/targets/target.c.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/closer.h"
#include "common/err.h"
#include "common/procfs.h"
#include "featprof.skel.h"
#include "inproc/inproc.h"
#include "target_impl.h"
#include "util/log.h"
#include "kern/uprobe.h"

/* The uprobes of one enabled region: multi-uprobe link fds, or per-site links. */
struct fp_rlinks {
	int *fds;
	int nfds;
	struct bpf_link **links;
	int nlinks;
};

/* A target's attachments. */
struct fp_linkset {
	struct fp_rlinks *regions;	/* per region (of the capacity), per-site mode */
	int *tramp_fds;			/* no attach cookie: per (region, point, end) the
					 * trampoline (daemon/kern/uprobe.c), 0: not made yet */
	int *set_fds;			/* multi mode: the current link set, one per object */
	int nset_fds;
	unsigned gen;			/* generation of the current link set */
};

int fp_target__links_new(struct fp_target *t, bool trampolines)
{
	struct fp_linkset *ls = calloc(1, sizeof(*ls));

	if (!ls)
		return -ENOMEM;
	ls->regions = calloc((size_t)t->cap_regions, sizeof(*ls->regions));
	if (trampolines)
		ls->tramp_fds = calloc((size_t)t->cap_regions * 4, sizeof(*ls->tramp_fds));
	if (!ls->regions || (trampolines && !ls->tramp_fds)) {
		free(ls->regions);
		free(ls);
		return -ENOMEM;
	}
	t->links = ls;
	return 0;
}

void fp_target__links_free(struct fp_target *t)
{
	if (!t->links)
		return;
	fp_target__links_release(t);
	free(t->links->regions);
	free(t->links);
	t->links = NULL;
}

/* later: closed by daemon/util/closer.c (a gone process's, or at shutdown), else here, now. */
static void detach_links(struct fp_rlinks *l, bool later)
{
	int i;

	for (i = 0; i < l->nfds; i++)
		later ? fp_close_later(l->fds[i]) : (void)close(l->fds[i]);
	for (i = 0; i < l->nlinks; i++)
		later ? fp_link_destroy_later(l->links[i]) : bpf_link__destroy(l->links[i]);
	free(l->fds);
	free(l->links);
	memset(l, 0, sizeof(*l));
}

static void close_set(int *fds, int n, bool later)
{
	int i;

	for (i = 0; i < n; i++)
		later ? fp_close_later(fds[i]) : (void)close(fds[i]);
	free(fds);
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

/* A perf-event uprobe running the trampoline of the cookie (made once per cookie; with
 * per-site links every cookie is of generation 0): one per region, end or begin, attach
 * point. The perf fd, or -errno. */
static int attach_trampoline(struct fp_target *t, uint64_t cookie, const char *path,
			     uint64_t off, uint64_t ref, int ret)
{
	uint64_t k = (uint64_t)(FP_COOKIE_REGION(cookie) - (uint32_t)t->rbase) << 2 |
		     FP_COOKIE_OPT(cookie) << 1 | FP_COOKIE_IS_END(cookie);
	int *fd;

	if (k >= (uint64_t)t->cap_regions * 4)
		return -EINVAL;
	fd = &t->links->tramp_fds[k];
	if (*fd <= 0)
		*fd = fp_cookie_trampoline(cookie, bpf_map__fd(t->skel->maps.site_cookie),
					   bpf_map__fd(t->skel->maps.site_prog));
	if (*fd < 0) {
		int e = *fd;

		*fd = 0;
		return e;
	}
	return fp_uprobe_perf_attach(*fd, path, off, ref, t->pid, ret);
}

static int attach_per_site(struct fp_target *t, int region, struct fp_rlinks *l, struct fp_err *e)
{
	const struct fp_region *reg = &t->cat->regions[region];
	int s;

	l->links = calloc((size_t)reg->nsites, sizeof(*l->links));
	l->fds = calloc((size_t)reg->nsites, sizeof(*l->fds));
	if (!l->links || !l->fds)
		return -ENOMEM;
	for (s = 0; s < reg->nsites; s++) {
		const struct fp_object *obj = t->cat->objs[reg->sites[s].obj];
		const struct fp_site *site = fp_ref_site(t->cat->objs, &reg->sites[s]);
		LIBBPF_OPTS(bpf_uprobe_opts, opts);
		uint64_t off = site_offset(t, site);

		opts.bpf_cookie = FP_COOKIE(t->slot, t->rbase + region,
					    reg->sites[s].kind == FP_KIND_END, 0,
					    off != site->loc_off || site->stepped) |
				  (reg->sites[s].func ? FP_COOKIE_FUNC : 0) |
				  (reg->calls_only ? FP_COOKIE_CALLS : 0);
		opts.ref_ctr_offset = site->sem_off;
		/* a function's end: the return probe of the function at its entry */
		opts.retprobe = reg->sites[s].func && reg->sites[s].kind == FP_KIND_END;
		if (t->links->tramp_fds) {	/* no attach cookie: the site's trampoline */
			int fd = attach_trampoline(t, opts.bpf_cookie, obj->host_path, off,
						   site->sem_off, opts.retprobe);

			if (fd < 0)
				return fp_fail(e, -fd, "attach: cannot attach '%s' at %s+0x%llx "
					       "in pid %d: %s", reg->name, obj->path,
					       (unsigned long long)off, (int)t->pid,
					       strerror(-fd));
			l->fds[l->nfds++] = fd;
			continue;
		}
		/* a file's target: every process (-1; libbpf's 0 is the caller) */
		l->links[l->nlinks] = bpf_program__attach_uprobe_opts(
			t->skel->progs.fp_site, t->pid ? t->pid : -1, obj->host_path, off, &opts);
		if (!l->links[l->nlinks]) {
			int no = errno;

			return fp_fail(e, no, "attach: cannot attach '%s' at %s+0x%llx in pid %d: "
				       "%s", reg->name, obj->path, (unsigned long long)off,
				       (int)t->pid, strerror(no));
		}
		l->nlinks++;
	}
	return 0;
}

/* Which link of an object a site goes to (build_set): the sites (marked ones and, without
 * sessions, functions' entries), functions' return probes, functions' sessions. */
enum { LINK_SITES, LINK_RETURNS, LINK_SESSIONS, LINK_KINDS };

static int link_kind(const struct fp_target *t, const struct fp_site_ref *ref)
{
	if (!ref->func)
		return LINK_SITES;
	if (t->session)	/* one program at entry and return: the entries only */
		return ref->kind == FP_KIND_END ? -1 : LINK_SESSIONS;
	return ref->kind == FP_KIND_END ? LINK_RETURNS : LINK_SITES;
}

/*
 * Builds the link set for the regions in want[] (generation gen): per object one
 * multi-uprobe link of its sites, one of return probes where it holds functions' ends,
 * or one session link of functions' entries where the kernel has sessions. Returns the
 * number of links in *fds_out, or -errno.
 */
static int build_set(struct fp_target *t, const uint8_t *want, unsigned gen, int **fds_out,
		     struct fp_err *e)
{
	static const unsigned flags[LINK_KINDS] = { 0, FP_UPROBE_MULTI_RETURN, FP_UPROBE_SESSION };
	static const char *const what[LINK_KINDS] = { "sites", "return probes", "sessions" };
	int o, r, s, n = 0, ret = 0, cap = 0, kind;
	uint64_t *offs = NULL, *refs = NULL, *cookies = NULL;
	int *fds = calloc((size_t)t->cat->nobjs * LINK_KINDS + 1, sizeof(int));

	for (r = 0; r < t->cat->nregions; r++)
		cap += want[r] ? t->cat->regions[r].nsites : 0;
	offs = calloc((size_t)cap + 1, 8);
	refs = calloc((size_t)cap + 1, 8);
	cookies = calloc((size_t)cap + 1, 8);
	if (!fds || !offs || !refs || !cookies) {
		ret = -ENOMEM;
		goto out;
	}
	for (o = 0; o < t->cat->nobjs * LINK_KINDS; o++) {
		const struct fp_object *obj = t->cat->objs[o / LINK_KINDS];
		uint32_t k = 0;
		int fd, prog;

		kind = o % LINK_KINDS;
		for (r = 0; r < t->cat->nregions; r++) {
			const struct fp_region *reg = &t->cat->regions[r];

			if (!want[r])
				continue;
			for (s = 0; s < reg->nsites; s++) {
				const struct fp_site *site;

				if (reg->sites[s].obj != o / LINK_KINDS ||
				    link_kind(t, &reg->sites[s]) != kind)
					continue;
				site = fp_ref_site(t->cat->objs, &reg->sites[s]);
				offs[k] = site_offset(t, site);
				refs[k] = site->sem_off;
				cookies[k] = FP_COOKIE(t->slot, t->rbase + r,
						       reg->sites[s].kind == FP_KIND_END, gen,
						       offs[k] != site->loc_off || site->stepped) |
					     (reg->sites[s].func ? FP_COOKIE_FUNC : 0) |
					     (reg->calls_only ? FP_COOKIE_CALLS : 0);
				k++;
			}
		}
		if (!k)
			continue;
		prog = bpf_program__fd(kind == LINK_SESSIONS ? t->skel->progs.fp_site_session
							     : t->skel->progs.fp_site_multi);
		fd = fp_uprobe_multi_link(prog, obj->host_path, offs, refs, cookies, k, t->pid,
					  flags[kind]);
		if (fd < 0) {
			ret = fp_fail(e, -fd, "attach: cannot attach %u %s in %s of pid %d: %s", k,
				      what[kind], obj->path, (int)t->pid, strerror(-fd));
			goto out;
		}
		fds[n++] = fd;
	}
out:
	free(offs);
	free(refs);
	free(cookies);
	if (ret) {
		close_set(fds, n, false);
		return ret;
	}
	*fds_out = fds;
	return n;
}

/* An array map's update of a valid index does not fail; checked all the same. */
static int set_flag(struct fp_target *t, int region, int on)
{
	__u32 key = (__u32)(t->rbase + region), val = on ? ++t->enable_gen : 0;

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
			  struct fp_err *e);

/* Every change of a target's attachments is journaled (daemon/targets/journal.c). */
/*
 * The regions of sel that time themselves in the process (daemon/inproc/inproc.c) leave rest,
 * the regions left for uprobes: on, their gates go up (unless the target is trapped by
 * request), marked 2 in ip_on until fp_target__links_set keeps them (1) or lowers them again;
 * off, their gates go down. 0 or -errno (e filled).
 */
static int set_inproc(struct fp_target *t, const uint8_t *sel, int on, uint8_t *rest,
		      struct fp_err *e)
{
	int r, ret = 0;

	for (r = 0; r < t->cat->nregions && !ret; r++) {
		if (!sel[r])
			continue;
		if (on && !t->enabled[r] && !t->trap_only && fp_inproc__can(t->ip, r)) {
			ret = fp_inproc__set(t->ip, r, true, e);
			if (!ret)
				t->ip_on[r] = 2;
		} else if (!on && t->ip_on[r]) {
			fp_inproc__set(t->ip, r, false, NULL);
			t->ip_on[r] = 0;
			t->enabled[r] = 0;
			t->ip_regions--;
		} else {
			continue;
		}
		rest[r] = 0;
	}
	return ret;
}

/* The gates raised by this change stay (ok) or go down again. */
static void end_inproc(struct fp_target *t, int ok)
{
	int r;

	for (r = 0; r < t->cat->nregions; r++) {
		if (t->ip_on[r] != 2)
			continue;
		if (!ok) {
			fp_inproc__set(t->ip, r, false, NULL);
			t->ip_on[r] = 0;
			continue;
		}
		t->ip_on[r] = 1;
		t->enabled[r] = 1;
		t->ip_regions++;
		if (!t->enabled_at_ns)
			t->enabled_at_ns = fp_mono_ns();
	}
}

int fp_target__links_set(struct fp_target *t, const uint8_t *sel, int on, int force,
			  struct fp_err *e)
{
	uint8_t *rest = NULL;
	int ret = 0;

	if (t->exited || !t->skel)
		return -EINVAL;
	fp_journal__begin(t);
	if (t->ip) {
		rest = malloc((size_t)t->cat->nregions + 1);
		if (!rest)
			ret = -ENOMEM;
		else
			memcpy(rest, sel, (size_t)t->cat->nregions);
		if (!ret)
			ret = set_inproc(t, sel, on, rest, e);
	}
	if (!ret)
		ret = change_regions(t, rest ? rest : sel, on, force, e);
	if (t->ip)
		end_inproc(t, !ret);
	fp_journal__end();
	free(rest);
	return ret;
}

static int change_regions(struct fp_target *t, const uint8_t *sel, int on, int force,
			  struct fp_err *e)
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
				ret = fp_target__set_region(t, r, on, e);
		return ret;
	}
	want = malloc((size_t)t->cat->nregions);
	if (!want)
		return -ENOMEM;
	for (r = 0; r < t->cat->nregions; r++)	/* in-process regions: no uprobe */
		want[r] = sel[r] ? (uint8_t)!!on : t->enabled[r] && !t->ip_on[r];
	if (!on) {	/* stop counting first: sites may fire until the set is replaced */
		ret = set_enabled_flags(t, sel, 0);
		if (ret) {
			set_enabled_flags(t, sel, 1);
			free(want);
			return fp_fail(e, -ret, "pid %d: cannot update the region map: %s",
				       (int)t->pid, strerror(-ret));
		}
		__atomic_add_fetch(&t->skel->bss->disable_epoch[t->slot], 1, __ATOMIC_SEQ_CST);
	}
	n = count_sites(t, want) ? build_set(t, want, t->links->gen + 1, &fds, e) : 0;
	if (n < 0) {
		if (!on)	/* nothing changed: the regions stay enabled on the old set */
			set_enabled_flags(t, sel, 1);
		free(want);
		return n;
	}
	t->links->gen++;
	__atomic_store_n(&t->skel->bss->link_gen[t->slot], t->links->gen & 1, __ATOMIC_SEQ_CST);
	if (on && (ret = set_enabled_flags(t, sel, 1)))	/* attached, but not counted */
		log_warn(t, "cannot enable regions in the map", ret);
	/* the one grace-period wait */
	close_set(t->links->set_fds, t->links->nset_fds, false);
	t->links->set_fds = fds;
	t->links->nset_fds = n;
	for (r = 0; r < t->cat->nregions; r++)
		t->enabled[r] = want[r] || t->ip_on[r];
	t->attached_sites = count_sites(t, want);
	if (on && !t->enabled_at_ns)
		t->enabled_at_ns = fp_mono_ns();
	free(want);
	return 0;
}

/* Enabling n regions of a live process: its threads may be inside them (each thread
 * once per region), whose ends then come without a begin (fp_target__unmatched_allowed). */
static void allow_unmatched(struct fp_target *t, int n)
{
	struct fp_procfs_status st;

	if (n && !fp_procfs_status(t->pid, &st) && st.threads > 0)
		t->unmatched_allowed += (uint64_t)st.threads * (uint64_t)n;
}

static int newly_on(const struct fp_target *t, const uint8_t *sel)
{
	int i, n = 0;

	for (i = 0; i < t->cat->nregions; i++)
		n += sel[i] && !t->enabled[i];
	return n;
}

int fp_target__set_regions(struct fp_target *t, const uint8_t *sel, int on, struct fp_err *e)
{
	int n = on ? newly_on(t, sel) : 0, ret = fp_target__links_set(t, sel, on, 0, e);

	if (!ret)
		allow_unmatched(t, n);
	return ret;
}

/* The per-site path (no multi-uprobe link): the region's own links. */
static int set_region_links(struct fp_target *t, int region, int on, struct fp_err *e)
{
	struct fp_rlinks *l;
	int ret;

	l = &t->links->regions[region];
	if (on) {
		ret = attach_per_site(t, region, l, e);
		if (ret) {
			detach_links(l, false);
			return ret;
		}
		ret = set_flag(t, region, 1);
		if (ret) {
			detach_links(l, false);
			return fp_fail(e, -ret, "pid %d: cannot update the region map: %s",
				       (int)t->pid, strerror(-ret));
		}
		t->attached_sites += t->cat->regions[region].nsites;
		if (!t->enabled_at_ns)
			t->enabled_at_ns = fp_mono_ns();
	} else {
		ret = set_flag(t, region, 0);
		if (ret)
			return fp_fail(e, -ret, "pid %d: cannot update the region map: %s",
				       (int)t->pid, strerror(-ret));
		__atomic_add_fetch(&t->skel->bss->disable_epoch[t->slot], 1, __ATOMIC_SEQ_CST);
		detach_links(l, false);
		t->attached_sites -= t->cat->regions[region].nsites;
	}
	t->enabled[region] = (uint8_t)!!on;
	return 0;
}

int fp_target__set_region(struct fp_target *t, int region, int on, struct fp_err *e)
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
		ret = fp_target__set_regions(t, sel, on, e);
		free(sel);
		return ret;
	}
	fp_journal__begin(t);
	ret = set_region_links(t, region, on, e);
	fp_journal__end();
	if (!ret && on)
		allow_unmatched(t, 1);
	return ret;
}


/* A gone process's links, and every link at shutdown, are closed by the pool: its
 * unregistrations' grace periods are shared (daemon/util/closer.h). */
void fp_target__links_release(struct fp_target *t)
{
	int r, journal = t->attached_sites > 0;
	bool later = t->exited || fp_closer_deferring();

	if (!t->links)
		return;
	if (journal)
		fp_journal__begin(t);
	close_set(t->links->set_fds, t->links->nset_fds, later);
	t->links->set_fds = NULL;
	t->links->nset_fds = 0;
	if (t->cat)
		for (r = 0; r < t->cat->nregions; r++)
			detach_links(&t->links->regions[r], later);
	if (journal)
		fp_journal__end();
	if (t->links->tramp_fds)
		for (r = 0; r < 4 * t->cap_regions; r++)
			if (t->links->tramp_fds[r] > 0)
				close(t->links->tramp_fds[r]);
	free(t->links->tramp_fds);
	t->links->tramp_fds = NULL;
	t->attached_sites = 0;
}
