// SPDX-License-Identifier: GPL-2.0
/*
 * Sampling's figures (featprof sample; the sessions are daemon/sample/sample.c): the
 * ids of the region stacks named while the target can be read, the samples counted per
 * stack in the kernel summed per region, feature, feature set and path, with the
 * binomial standard error of each (its header says how), and, with --stacks, the call
 * stacks beside them (daemon/stacks/stacks.c; --unwind dwarf: the copies unwound
 * by daemon/stacks/dwarf.c, counted here).
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "common/procfs.h"
#include "util/clock.h"
#include "usdt/featprof_abi.h"
#include "inproc/inproc.h"
#include "sample.h"
#include "sample_impl.h"
#include "stacks/stacks.h"
#include "sample.skel.h"

/* The region an id names (FP_SRC_TLS: the string at that address in the target, cached;
 * FP_SRC_KERNEL: the region's index); -1 when it names none of the catalog's. */
static int region_of(struct fp_target *t, uint64_t id)
{
	struct fp_sampling *sm = fp_sample_state(t);
	const struct fp_catalog *cat = fp_target__catalog(t);
	char name[128] = "";
	int i, r;

	if (sm->src == FP_SRC_KERNEL)
		return id < (uint64_t)cat->nregions ? (int)id : -1;
	for (i = 0; i < sm->nids; i++)
		if (sm->ids[i].id == id)
			return sm->ids[i].region;
	if (sm->src == FP_SRC_INPROC) {	/* the arena's name of the runtime's id */
		r = fp_target__inproc(t) ? fp_inproc__region_of_id(fp_target__inproc(t), id) : -1;
		if (r < 0)
			return r;	/* not named yet: asked again */
		goto keep;
	}
	/* a read may stop at the end of a mapping: fall back to smaller reads */
	if (fp_procfs_read(fp_target__pid(t), id, name, sizeof(name) - 1) <= 0 &&
	    fp_procfs_read(fp_target__pid(t), id, name, 32) <= 0)
		name[0] = 0;
	name[sizeof(name) - 1] = 0;
	r = name[0] ? fp_catalog__region(cat, name) : -1;
keep:
	if (sm->nids % 64 == 0) {
		struct fp_sample_id *g = realloc(sm->ids, (size_t)(sm->nids + 64) *
							       sizeof(*g));

		if (!g)
			return r;
		sm->ids = g;
	}
	sm->ids[sm->nids].id = id;
	sm->ids[sm->nids++].region = r;
	return r;
}

/* FP_SRC_KERNEL: a key's frames as region indices; a frame whose enable generation was
 * not its region's at the sample was disabled since the thread's last event and was not
 * open: left out (FP_SK_ID). */
static void drop_gone(const struct fp_target *t, struct fp_sample_key *k)
{
	struct fp_sampling *sm = fp_sample_state(t);
	uint32_t i, n = 0, r, gf, gn;

	if (sm->src != FP_SRC_KERNEL)
		return;
	for (i = 0; i < k->depth && i < FP_TLS_SLOTS; i++) {
		r = (uint32_t)(k->ids[i] & 0xffff);
		gn = (uint32_t)(k->ids[i] >> 16) & 0xffffff;
		gf = (uint32_t)(k->ids[i] >> 40) & 0xffffff;
		if (gn && gn == gf && r < (uint32_t)fp_target__catalog(t)->nregions)
			k->ids[n++] = r;
	}
	for (i = n; i < FP_TLS_SLOTS; i++)
		k->ids[i] = 0;
	k->depth = n;
}

/* --unwind dwarf: one copy unwound; its stack named and counted with its regions. */
static void on_unwound(void *arg, const struct fp_sample_key *key, const uint64_t *ips, int n,
		       int truncated)
{
	struct fp_target *t = arg;
	struct fp_sampling *sm = fp_sample_state(t);
	struct fp_sample_key k = *key;
	int32_t id;

	drop_gone(t, &k);
	fp_stacks__thread(sm->stacks, fp_target__pid(t), k.tid);	/* named while it lives */
	id =
	    n ? fp_stacks__add(sm->stacks, fp_target__pid(t), fp_target__proc(t), ips, n, truncated)
	      : FP_USTACK_LOST;
	fp_stacks__count(sm->stacks, &k, id);
}

/* --unwind dwarf: the copies waiting, unwound. */
static void drain(struct fp_target *t)
{
	struct fp_sampling *sm = fp_sample_state(t);

	if (sm->dwarf && sm->stacks) {
		fp_dwarf__drain(sm->dwarf, on_unwound, t);
		if (sm->skel)	/* the copies' size: what the unwinds use */
			sm->skel->data->sample_copy_chunks = fp_dwarf__chunks(sm->dwarf);
	}
}

void fp_sample_name(struct fp_target *t)
{
	struct fp_sampling *sm = fp_sample_state(t);
	struct fp_sample_key key, prev;
	int mfd, have, k;

	if (!fp_sample_active(t) || !sm->skel)
		return;
	drain(t);
	mfd = bpf_map__fd(sm->skel->maps.samples);
	for (have = !bpf_map_get_next_key(mfd, NULL, &key); have;
	     prev = key, have = !bpf_map_get_next_key(mfd, &prev, &key)) {
		for (k = 0; k < (int)key.depth && k < FP_TLS_SLOTS; k++)
			region_of(t, key.ids[k]);
		if (sm->stacks)	/* the thread named while it lives */
			fp_stacks__thread(sm->stacks, fp_target__pid(t), key.tid);
		if (sm->stacks && key.ustack >= 0)
			fp_stacks__get(sm->stacks, bpf_map__fd(sm->skel->maps.ustacks),
				       key.ustack, fp_target__pid(t), fp_target__proc(t));
	}
}

static struct json_object *figure(uint64_t c, uint64_t n, double period)
{
	struct json_object *o = json_object_new_object();
	double p = n ? (double)c / (double)n : 0;
	double se = sqrt(p * (1 - p) / (n ? (double)n : 1)) * (double)n * period;

	json_object_object_add(o, "samples", json_object_new_int64((int64_t)c));
	json_object_object_add(o, "sampled_ns", json_object_new_double((double)c * period));
	json_object_object_add(o, "sampled_stderr_ns", json_object_new_double(se));
	json_object_object_add(o, "share", json_object_new_double(p));
	return o;
}

/* The functions of figure x ("functions": of its "samples", each sample period ns of
 * CPU): their shares again (after a sum over processes) and their CPU time estimates,
 * self_ns and total_ns, with binomial standard errors (x's samples are the CPU time it
 * had, the share of them in a function what sampling estimates). */
static void functions_refigure(struct json_object *x, double period)
{
	struct json_object *a = json_object_object_get(x, "functions");
	double n = json_object_get_double(json_object_object_get(x, "samples"));
	static const char *const what[] = { "self", "total" };
	char key[32];
	size_t i;
	int w;

	for (i = 0; json_object_is_type(a, json_type_array) && i < json_object_array_length(a);
	     i++) {
		struct json_object *f = json_object_array_get_idx(a, i);

		for (w = 0; w < 2; w++) {
			double c, p;

			snprintf(key, sizeof(key), "%s_samples", what[w]);
			c = json_object_get_double(json_object_object_get(f, key));
			p = n > 0 ? c / n : 0;
			snprintf(key, sizeof(key), "%s_share", what[w]);
			json_object_object_add(f, key, json_object_new_double(p));
			snprintf(key, sizeof(key), "%s_stderr", what[w]);
			json_object_object_add(f, key, json_object_new_double(
						       n > 0 ? sqrt(p * (1 - p) / n) : 0));
			snprintf(key, sizeof(key), "%s_ns", what[w]);
			json_object_object_add(f, key, json_object_new_double(c * period));
			snprintf(key, sizeof(key), "%s_stderr_ns", what[w]);
			json_object_object_add(f, key, json_object_new_double(
						       sqrt(c * (1 - p)) * period));
		}
	}
}

/* functions_refigure of every figure of sampling report sm. */
static void all_functions_refigure(struct json_object *sm)
{
	static const char *const arrs[] = { "regions", "features", "threads" };
	double period = json_object_get_double(json_object_object_get(sm, "period_ns"));
	struct json_object *a;
	size_t i, k;

	functions_refigure(sm, period);
	functions_refigure(json_object_object_get(sm, "base"), period);
	for (i = 0; i < 3; i++)
		if (json_object_object_get_ex(sm, arrs[i], &a))
			for (k = 0; k < json_object_array_length(a); k++)
				functions_refigure(json_object_array_get_idx(a, k), period);
}

/* Ends whose region was not on the thread's stack, this session, summed over the threads
 * sampled: in a gated build, chiefly the regions that were open when the gate rose. */
static uint64_t unmatched(struct fp_target *t)
{
	struct fp_sampling *sm = fp_sample_state(t);
	int mfd = bpf_map__fd(sm->skel->maps.sample_threads), have = 0;
	struct fp_sample_thread v;
	uint32_t k, prev = 0;
	uint64_t n = 0;

	while (!bpf_map_get_next_key(mfd, have ? &prev : NULL, &k)) {
		have = 1;
		prev = k;
		if (!bpf_map_lookup_elem(mfd, &k, &v) &&
		    v.session == sm->skel->bss->sample_session && v.last > v.base)
			n += v.last - v.base;
	}
	return n;
}

/* The samples counted per region, feature, feature set and path. */
struct tally {
	uint64_t *incl, *excl, feat[FP_MAX_FEATURES], n, base, unknown, deeper;
	uint64_t set_mask[256], set_n[256], overflow_sets;
	int nsets;
	double period;
	struct json_object *paths;
};

/* The stack's regions, outermost first, for the exports' paths. */
static void tally_path(struct fp_target *t, struct tally *tl, const struct fp_sample_key *key,
		       uint64_t c)
{
	struct json_object *ph = json_object_new_object(), *names = json_object_new_array();
	int k;

	for (k = 0; k < (int)key->depth && k < FP_TLS_SLOTS; k++)
		json_object_array_add(
		    names, json_object_new_string(
			       fp_target__catalog(t)->regions[region_of(t, key->ids[k])].name));
	json_object_object_add(ph, "path", names);
	json_object_object_add(ph, "samples", json_object_new_int64((int64_t)c));
	json_object_object_add(ph, "sampled_ns", json_object_new_double((double)c * tl->period));
	json_object_array_add(tl->paths, ph);
}

/* c samples of one stack (key). */
static void tally_key(struct fp_target *t, struct tally *tl, const struct fp_sample_key *key,
		      uint64_t c)
{
	uint8_t seen[4096 / 8] = { 0 };
	uint64_t mask = 0;
	int k, r, f, bad = 0, top = -1;

	tl->n += c;
	tl->deeper += key->deeper ? c : 0;
	if (!key->depth) {
		tl->base += c;
		return;
	}
	for (k = 0; k < (int)key->depth && k < FP_TLS_SLOTS; k++) {
		r = region_of(t, key->ids[k]);
		if (r < 0 || r >= 4096) {
			bad = 1;
			continue;
		}
		mask |= fp_target__region_mask(t)[r];
		if (!(seen[r / 8] & (1 << (r % 8)))) {
			seen[r / 8] |= (uint8_t)(1 << (r % 8));
			tl->incl[r] += c;
		}
		top = k == (int)key->depth - 1 ? r : top;
	}
	tl->unknown += bad ? c : 0;
	if (top >= 0 && !key->deeper)
		tl->excl[top] += c;
	if (!bad && !key->deeper)
		tally_path(t, tl, key, c);
	for (f = 0; f < fp_target__catalog(t)->nfeatures && f < FP_MAX_FEATURES; f++)
		if (mask & (1ULL << f))
			tl->feat[f] += c;
	for (k = 0; k < tl->nsets && tl->set_mask[k] != mask; k++)
		;
	if (k == tl->nsets && tl->nsets < 256) {
		tl->set_mask[tl->nsets] = mask;
		tl->set_n[tl->nsets++] = 0;
	}
	if (k < tl->nsets)
		tl->set_n[k] += c;
	else
		tl->overflow_sets += c;
}

/* The session's rate and clock, its duration and sample count. */
static void report_session(struct fp_target *t, struct json_object *o, const struct tally *tl)
{
	struct fp_sampling *sm = fp_sample_state(t);

	json_object_object_add(o, "active", json_object_new_boolean(sm->nlinks > 0));
	json_object_object_add(o, "hz", json_object_new_int(sm->hz));
	json_object_object_add(o, "period_ns", json_object_new_double(tl->period));
	json_object_object_add(o, "clock", json_object_new_string(
				  sm->remote ? "remote" : "cpu-clock"));
	if (sm->remote) {
		uint64_t ticks = sm->ticks, missed = sm->missed;

		if (sm->sampler)
			fp_sampler_counts(sm->sampler, &ticks, &missed);
		json_object_object_add(o, "ticks", json_object_new_int64((int64_t)ticks));
		json_object_object_add(o, "ticks_missed", json_object_new_int64((int64_t)missed));
		json_object_object_add(o, "sampler_realtime", json_object_new_boolean(
						  fp_sampler_realtime()));
	}
	json_object_object_add(o, "duration_ns", json_object_new_int64(
				  (int64_t)((sm->stop_ns ? sm->stop_ns : fp_mono_ns()) -
					    sm->start_ns)));
	json_object_object_add(o, "samples", json_object_new_int64((int64_t)tl->n));
	json_object_object_add(o, "tls_offset", json_object_new_int64(sm->tls_off));
	json_object_object_add(o, "regions_from", json_object_new_string(
				       sm->src == FP_SRC_TLS      ? "tls"
				       : sm->src == FP_SRC_INPROC ? "inprocess"
									: "kernel"));
	json_object_object_add(o, "stack", json_object_new_string(sm->gated ? "gated"
										    : "always"));
}

/* Regions, features, feature sets, base and paths. */
static void report_figures(struct fp_target *t, struct json_object *o, struct tally *tl)
{
	const struct fp_catalog *cat = fp_target__catalog(t);
	int nf = cat->nfeatures, r, f, k;
	struct json_object *a, *x;

	a = json_object_new_array();
	for (r = 0; r < cat->nregions; r++) {
		x = figure(tl->incl[r], tl->n, tl->period);
		json_object_object_add(
		    x, "name", json_object_new_string(cat->regions[r].name));
		json_object_object_add(x, "exclusive_samples", json_object_new_int64(
						  (int64_t)tl->excl[r]));
		json_object_object_add(x, "exclusive_sampled_ns", json_object_new_double(
						  (double)tl->excl[r] * tl->period));
		json_object_array_add(a, x);
	}
	json_object_object_add(o, "regions", a);
	a = json_object_new_array();
	for (f = 0; f < nf && f < FP_MAX_FEATURES; f++) {
		x = figure(tl->feat[f], tl->n, tl->period);
		json_object_object_add(x, "name", json_object_new_string(cat->features[f]));
		json_object_array_add(a, x);
	}
	json_object_object_add(o, "features", a);
	a = json_object_new_array();
	for (k = 0; k < tl->nsets; k++) {
		struct json_object *fl = json_object_new_array();

		for (f = 0; f < nf && f < FP_MAX_FEATURES; f++)
			if (tl->set_mask[k] & (1ULL << f))
				json_object_array_add(fl,
						      json_object_new_string(cat->features[f]));
		x = figure(tl->set_n[k], tl->n, tl->period);
		json_object_object_add(x, "features", fl);
		json_object_array_add(a, x);
	}
	json_object_object_add(o, "feature_sets", a);
	json_object_object_add(o, "base", figure(tl->base, tl->n, tl->period));
	json_object_object_add(o, "paths", tl->paths);
	tl->paths = NULL;
}

static void report_anomalies(struct fp_target *t, struct json_object *o,
			     const struct tally *tl)
{
	struct fp_sampling *sm = fp_sample_state(t);
	int ncpu = libbpf_num_possible_cpus(), k;
	uint64_t an[FP_SA_MAX] = { 0 };
	struct json_object *ano;
	__u32 a;

	for (a = 0; a < FP_SA_MAX; a++) {
		uint64_t v[ncpu > 0 ? ncpu : 1];

		if (!bpf_map__lookup_elem(sm->skel->maps.sample_anomalies, &a, sizeof(a), v,
					  sizeof(v), 0))
			for (k = 0; k < ncpu; k++)
				an[a] += v[k];
	}
	ano = json_object_new_object();
	json_object_object_add(ano, "read_failed", json_object_new_int64((int64_t)an[0]));
	json_object_object_add(ano, "bad_magic", json_object_new_int64((int64_t)an[1]));
	json_object_object_add(ano, "stacks_full", json_object_new_int64((int64_t)an[2]));
	json_object_object_add(ano, "call_stack_lost", json_object_new_int64(
				       (int64_t)an[FP_SA_STACK_LOST]));
	json_object_object_add(ano, "unknown_region", json_object_new_int64(
				       (int64_t)tl->unknown));
	json_object_object_add(ano, "deeper_than_stored", json_object_new_int64(
				       (int64_t)tl->deeper));
	json_object_object_add(ano, "sets_not_kept", json_object_new_int64(
				       (int64_t)tl->overflow_sets));
	json_object_object_add(ano, "unmatched_ends", json_object_new_int64(
				       (int64_t)unmatched(t)));
	json_object_object_add(o, "anomalies", ano);
	/* featprofd's uprobes at work (regions traced meanwhile): not in the figures */
	json_object_object_add(o, "probe_samples", json_object_new_int64(
				       (int64_t)an[FP_SA_IN_PROBE]));
	json_object_object_add(o, "probe_ns", json_object_new_double(
				       (double)an[FP_SA_IN_PROBE] * tl->period));
}

/* Key k with c samples, its regions named, for the stacks' report. */
static void sampled_of(struct fp_target *t, const struct fp_sample_key *k, uint64_t c,
		       struct fp_sampled *v)
{
	int i, r;

	memset(v, 0, sizeof(*v));
	v->c = c;
	v->ustack = k->ustack;
	v->tid = k->tid;
	for (i = 0; i < (int)k->depth && i < FP_TLS_SLOTS; i++) {
		r = region_of(t, k->ids[i]);
		if (r < 0 || r >= fp_target__catalog(t)->nregions) {
			v->bad = 1;
			continue;
		}
		v->reg[v->nreg++] = r;
		v->fmask |= fp_target__region_mask(t)[r];
	}
}

/* --stacks: how the stacks were taken; --unwind dwarf: featprofd's work unwinding. */
static void report_unwinding(struct fp_target *t, struct json_object *o)
{
	struct fp_sampling *sm = fp_sample_state(t);
	struct json_object *s = json_object_object_get(o, "stacks");
	uint64_t copies, truncated, cpu_ns, frames, cut, fast, mism;
	bool verified;

	if (!s)
		return;
	json_object_object_add(s, "unwind", json_object_new_string(
				       sm->dwarf ? "dwarf" : "frame pointers"));
	if (!sm->dwarf)
		return;
	fp_dwarf__counts(sm->dwarf, &copies, &truncated, &cpu_ns, &frames, &cut);
	/* what a copy takes now (what the unwinds use), at most copy_bytes_max */
	json_object_object_add(s, "copy_bytes", json_object_new_int(
				       (int)fp_dwarf__chunks(sm->dwarf) * FP_STACK_CHUNK));
	json_object_object_add(s, "copy_bytes_max", json_object_new_int(FP_STACK_COPY));
	json_object_object_add(s, "copies_cut", json_object_new_int64((int64_t)cut));
	json_object_object_add(s, "copies_unwound", json_object_new_int64((int64_t)copies));
	json_object_object_add(s, "unwind_cpu_ns", json_object_new_int64((int64_t)cpu_ns));
	json_object_object_add(s, "unwind_frames", json_object_new_int64((int64_t)frames));
	fp_dwarf__rules(sm->dwarf, &fast, &mism, &verified);
	json_object_object_add(s, "copies_by_rules", json_object_new_int64((int64_t)fast));
	if (verified)
		json_object_object_add(s, "unwind_mismatches",
				       json_object_new_int64((int64_t)mism));
	json_object_object_add(s, "copies_truncated", json_object_new_int64(
				       (int64_t)truncated));
}

struct keys {
	struct fp_sampled *v;
	int n, cap;
};

static int keys_add(struct fp_target *t, struct keys *k, const struct fp_sample_key *key,
		    uint64_t c)
{
	if (k->n == k->cap) {
		struct fp_sampled *g = realloc(k->v, (size_t)(k->cap + 256) * sizeof(*g));

		if (!g)
			return -ENOMEM;
		k->v = g;
		k->cap += 256;
	}
	sampled_of(t, key, c, &k->v[k->n++]);
	return 0;
}

/*
 * --unwind dwarf: the pairs of regions and stack counted in featprofd, and for each
 * key of the kernel's count (its samples, of which copies went out) the samples whose
 * copy never came (the ring full, no user registers): as lost stacks.
 */
static int dwarf_keys(struct fp_target *t, struct keys *k, struct fp_sample_key *w,
		      uint64_t *wc, int nw)
{
	struct fp_sampling *sm = fp_sample_state(t);
	int i, j;
	uint64_t c;

	for (i = 0; i < fp_stacks__naggs(sm->stacks); i++) {
		const struct fp_sample_key *a = fp_stacks__agg(sm->stacks, i, &c);

		if (keys_add(t, k, a, c))
			return -ENOMEM;
	}
	for (j = 0; j < nw; j++) {
		uint64_t got = 0;

		for (i = 0; i < fp_stacks__naggs(sm->stacks); i++) {
			struct fp_sample_key a = *fp_stacks__agg(sm->stacks, i, &c);

			a.ustack = w[j].ustack;
			got += memcmp(&a, &w[j], sizeof(a)) ? 0 : c;
		}
		w[j].ustack = FP_USTACK_LOST;
		if (wc[j] > got && keys_add(t, k, &w[j], wc[j] - got))
			return -ENOMEM;
	}
	return 0;
}

/* The kernel's keys of an unwinding session, duplicates (after drop_gone) merged. */
static int dwarf_key(struct fp_sample_key **w, uint64_t **wc, int *nw,
		     const struct fp_sample_key *key, uint64_t c)
{
	int j;

	for (j = 0; j < *nw; j++)
		if (!memcmp(&(*w)[j], key, sizeof(*key))) {
			(*wc)[j] += c;
			return 0;
		}
	if (*nw % 64 == 0) {
		struct fp_sample_key *g = realloc(*w, (size_t)(*nw + 64) * sizeof(*g));
		uint64_t *h = g ? realloc(*wc, (size_t)(*nw + 64) * sizeof(*h)) : NULL;

		if (g)
			*w = g;
		if (!h)
			return -ENOMEM;
		*wc = h;
	}
	(*w)[*nw] = *key;
	(*wc)[(*nw)++] = c;
	return 0;
}

/* The session's report; with_stacks false: without its call stacks, which are not
 * named, interned or tallied at all then (a subscription's push every interval). */
static struct json_object *report(struct fp_target *t, bool with_stacks)
{
	struct fp_sampling *sm = fp_sample_state(t);
	const struct fp_catalog *cat = fp_target__catalog(t);
	struct tally tl = { .period = sm && sm->hz ? 1e9 / sm->hz : 0 };
	struct fp_sample_key key, prev, *w = NULL;
	struct json_object *o = NULL;
	struct keys k = { 0 };
	int mfd, have, nw = 0, bad = 0;
	uint64_t c, *wc = NULL;

	if (!sm)
		return NULL;	/* never sampled */
	if (sm->last)
		return json_object_get(sm->last);
	if (!sm->skel || !sm->hz)
		return NULL;
	drain(t);	/* the copies still in the ring */
	tl.incl = calloc((size_t)cat->nregions + 1, sizeof(*tl.incl));
	tl.excl = calloc((size_t)cat->nregions + 1, sizeof(*tl.excl));
	tl.paths = json_object_new_array();
	if (!tl.incl || !tl.excl || !tl.paths)
		goto out;
	mfd = bpf_map__fd(sm->skel->maps.samples);
	for (have = !bpf_map_get_next_key(mfd, NULL, &key); have;
	     prev = key, have = !bpf_map_get_next_key(mfd, &prev, &key)) {
		struct fp_sample_key kk = key;	/* key stays the map's: the next follows it */

		if (bpf_map_lookup_elem(mfd, &key, &c))
			continue;
		drop_gone(t, &kk);
		tally_key(t, &tl, &kk, c);
		if (!sm->stacks || !with_stacks)
			continue;
		if (kk.ustack == FP_USTACK_DWARF)
			bad |= dwarf_key(&w, &wc, &nw, &kk, c);
		else
			bad |= keys_add(t, &k, &kk, c);
	}
	if (sm->stacks && sm->dwarf && with_stacks)
		bad |= dwarf_keys(t, &k, w, wc, nw);
	if (bad)
		goto out;
	o = json_object_new_object();
	report_session(t, o, &tl);
	report_figures(t, o, &tl);
	report_anomalies(t, o, &tl);
	if (sm->stacks && with_stacks) {
		int fd = sm->dwarf ? -1 : bpf_map__fd(sm->skel->maps.ustacks);

		fp_stacks__report(sm->stacks, fd, fp_target__pid(t), fp_target__proc(t),
				  cat, k.v, k.n, o);
		all_functions_refigure(o);
		report_unwinding(t, o);
	}
out:
	free(k.v);
	free(w);
	free(wc);
	json_object_put(tl.paths);
	free(tl.incl);
	free(tl.excl);
	return o;
}

bool fp_sample_active(const struct fp_target *t)
{
	struct fp_sampling *sm = fp_sample_state(t);

	return sm && sm->nlinks > 0;
}

struct json_object *fp_sample_report(struct fp_target *t)
{
	return report(t, true);
}

/* A copy of one figure object without its call-stack keys (the values shared). */
static struct json_object *without_stacks(struct json_object *x)
{
	struct json_object *o = json_object_new_object();

	json_object_object_foreach(x, k, v)
		if (strcmp(k, "functions") && strcmp(k, "functions_more") && strcmp(k, "begins_in"))
			json_object_object_add(o, k, json_object_get(v));
	return o;
}

struct json_object *fp_sample_report_brief(struct fp_target *t)
{
	struct fp_sampling *sm = fp_sample_state(t);
	struct json_object *r, *o, *a, *b;
	size_t i;

	if (!sm || !sm->last)	/* a live session: without the stacks */
		return report(t, false);
	r = json_object_get(sm->last);	/* an ended one's, kept whole: stripped */
	if (!json_object_object_get_ex(r, "stacks", NULL))
		return r;
	o = json_object_new_object();
	json_object_object_foreach(r, k, v) {
		if (!strcmp(k, "stacks") || !strcmp(k, "functions") ||
		    !strcmp(k, "functions_more") || !strcmp(k, "threads"))
			continue;
		if (!strcmp(k, "base")) {
			json_object_object_add(o, k, without_stacks(v));
		} else if (!strcmp(k, "regions") || !strcmp(k, "features")) {
			a = json_object_new_array();
			for (i = 0; i < json_object_array_length(v); i++) {
				b = json_object_array_get_idx(v, i);
				json_object_array_add(a, without_stacks(b));
			}
			json_object_object_add(o, k, a);
		} else {
			json_object_object_add(o, k, json_object_get(v));
		}
	}
	json_object_put(r);
	return o;
}

/* Adds samples, sampled_ns, sampled_stderr_ns and "measured" to the stats reply's
 * regions and features, from the sampling report s. */
static void refigure(struct json_object *o, uint64_t n, double period, int share)
{
	struct json_object *v, *f;
	uint64_t c;

	if (!o || !json_object_object_get_ex(o, "samples", &v))
		return;
	c = (uint64_t)json_object_get_int64(v);
	f = figure(c, n, period);
	json_object_object_add(o, "sampled_ns", json_object_get(json_object_object_get(
					f, "sampled_ns")));
	json_object_object_add(o, "sampled_stderr_ns", json_object_get(json_object_object_get(
					f, "sampled_stderr_ns")));
	if (share)
		json_object_object_add(o, "share", json_object_get(json_object_object_get(f,
										"share")));
	json_object_put(f);
}

void fp_sample_refigure(struct json_object *stats)
{
	static const char *const arrs[] = { "regions", "features" };
	struct json_object *sm, *a;
	double period;
	uint64_t n;
	size_t i, k;

	if (!json_object_object_get_ex(stats, "sampling", &sm))
		return;
	n = (uint64_t)json_object_get_int64(json_object_object_get(sm, "samples"));
	period = json_object_get_double(json_object_object_get(sm, "period_ns"));
	json_object_object_del(sm, "feature_sets");
	json_object_object_del(sm, "paths");
	refigure(json_object_object_get(sm, "base"), n, period, 1);
	all_functions_refigure(sm);	/* summed: their shares of the sums */
	for (i = 0; i < 2; i++) {
		if (json_object_object_get_ex(sm, arrs[i], &a))
			for (k = 0; k < json_object_array_length(a); k++)
				refigure(json_object_array_get_idx(a, k), n, period, 1);
		if (json_object_object_get_ex(stats, arrs[i], &a))
			for (k = 0; k < json_object_array_length(a); k++)
				refigure(json_object_array_get_idx(a, k), n, period, 0);
	}
}

void fp_sample_merge(struct json_object *stats, struct json_object *s)
{
	static const char *const arrs[] = { "regions", "features" };
	size_t i, j, k;

	for (i = 0; i < 2; i++) {
		struct json_object *a, *b;

		if (!json_object_object_get_ex(stats, arrs[i], &a) ||
		    !json_object_object_get_ex(s, arrs[i], &b))
			continue;
		for (j = 0; j < json_object_array_length(a); j++) {
			struct json_object *x = json_object_array_get_idx(a, j), *nm, *cnt;
			const char *name = json_object_object_get_ex(x, "name", &nm)
						   ? json_object_get_string(nm) : "";
			int traced = json_object_object_get_ex(x, i ? "ns" : "count", &cnt) &&
				     json_object_get_double(cnt) > 0;

			for (k = 0; k < json_object_array_length(b); k++) {
				struct json_object *y = json_object_array_get_idx(b, k), *v;

				if (!json_object_object_get_ex(y, "name", &nm) ||
				    strcmp(json_object_get_string(nm), name))
					continue;
				json_object_object_get_ex(y, "samples", &v);
				json_object_object_add(x, "samples", json_object_get(v));
				json_object_object_get_ex(y, "sampled_ns", &v);
				json_object_object_add(x, "sampled_ns", json_object_get(v));
				json_object_object_get_ex(y, "sampled_stderr_ns", &v);
				json_object_object_add(x, "sampled_stderr_ns", json_object_get(v));
				json_object_object_add(x, "measured", json_object_new_string(
							  traced ? "traced+sampled" : "sampled"));
			}
		}
	}
	json_object_object_add(stats, "sampling", json_object_get(s));
}
