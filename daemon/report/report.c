// SPDX-License-Identifier: GPL-2.0
/*
 * JSON presentation of a target's figures (the "stats" reply and stream pushes) and of
 * the calibration. Keys are documented in docs/TRACING.md; keys are added, never renamed.
 * Times are compensated for the probes' cost (daemon/util/stats.c) unless named raw_*; each
 * compensated time has an *_uncertainty_ns or uncertainty_ns beside it. CPU time is the
 * compensated wall time less the off-CPU time (the probes run on the CPU).
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>

#include "inproc/ip_calibrate.h"
#include "targets/target.h"
#include "common/protocol.h"
#include "report.h"

static struct json_object *u64(uint64_t v)
{
	return json_object_new_int64(v > INT64_MAX ? INT64_MAX : (int64_t)v);
}

static struct json_object *dbl_ns(double v)
{
	return u64(v > 0 ? (uint64_t)(v + 0.5) : 0);
}

static void add(struct json_object *o, const char *k, struct json_object *v)
{
	json_object_object_add(o, k, v);
}

static struct json_object *feature_list(const struct fp_catalog *cat, uint64_t mask)
{
	struct json_object *a = json_object_new_array();
	int f;

	for (f = 0; f < cat->nfeatures && f < FP_MAX_FEATURES; f++)
		if (mask & (1ULL << f))
			json_object_array_add(a, json_object_new_string(cat->features[f]));
	return a;
}

/*
 * wall (compensated), its uncertainty, and the CPU / off-CPU split, under prefix.
 * Off-CPU time is counted raw (a switch inside a probe included), so it is capped at the
 * compensated wall time, preempted and blocked scaled alike: CPU time is never negative
 * and CPU + off-CPU = wall. Where the figure is not above its uncertainty, the probes'
 * cost and its spread dominate what was measured: the region's own time is somewhere in
 * [0, wall + uncertainty], and probe_cost_dominates says so instead of a precise-looking
 * figure (docs/TRACING.md, "Uncertainty").
 */
static void add_times(struct json_object *o, const char *prefix, double wall, double unc,
		      uint64_t pre, uint64_t blk)
{
	double off = (double)(pre + blk), k = off > wall && off > 0 ? wall / off : 1;
	char key[64];

#define KEY(name) (snprintf(key, sizeof(key), "%s%s", prefix, name), key)
	add(o, KEY("cpu_ns"), dbl_ns(wall - off * k));
	add(o, KEY("offcpu_ns"), dbl_ns(off * k));
	add(o, KEY("offcpu_preempted_ns"), dbl_ns((double)pre * k));
	add(o, KEY("offcpu_blocked_ns"), dbl_ns((double)blk * k));
	add(o, KEY("uncertainty_ns"), dbl_ns(unc));
	add(o, KEY("probe_cost_dominates"), json_object_new_boolean(unc > 0 && wall <= unc));
#undef KEY
}

/* The calibration points the kernel's per-gap costs are interpolated from (daemon/
 * stats.c fp_cal_step): each point's gap (cold: after a sleep), its parts and spreads,
 * how many rounds it is figured from. */
static struct json_object *gap_points(const struct fp_calibration *cal)
{
	struct json_object *a = json_object_new_array(), *b, *ns, *sd;
	int i, k;

	for (i = 0; i < FP_CAL_POINTS; i++) {
		b = json_object_new_object();
		ns = json_object_new_array();
		sd = json_object_new_array();
		add(b, "gap_ns", json_object_new_double(cal->point_gap_ns[i]));
		add(b, "cold", json_object_new_boolean(i == FP_CAL_COLD));
		for (k = 0; k < FP_C_N; k++) {
			json_object_array_add(ns, json_object_new_double(cal->point_ns[i][k]));
			json_object_array_add(sd, json_object_new_double(cal->point_sd[i][k]));
		}
		add(b, "parts_ns", ns);
		add(b, "parts_sd_ns", sd);
		add(b, "pair_ns", json_object_new_double(cal->point_ns[i][0] +
							 cal->point_ns[i][1] +
							 cal->point_ns[i][2] +
							 cal->point_ns[i][3]));
		add(b, "rounds", json_object_new_int(cal->point_rounds[i]));
		json_object_array_add(a, b);
	}
	return a;
}

static struct json_object *calibration_json(const struct fp_calibration *cal)
{
	static const char *const part[FP_C_N] = { "begin_pre", "begin_post", "end_pre",
						  "end_post" };
	struct json_object *o = json_object_new_object();
	char k[32];
	int i;

	add(o, "valid", json_object_new_boolean(cal && cal->valid));
	add(o, "bias_ns", json_object_new_double(cal ? cal->bias_ns : 0));
	add(o, "pair_ns", json_object_new_double(cal ? cal->pair_ns : 0));
	if (!cal || !cal->valid)
		return o;
	add(o, "bias_sd_ns", json_object_new_double(cal->bias_sd));
	add(o, "pair_sd_ns", json_object_new_double(cal->pair_sd));
	for (i = 0; i < FP_C_N; i++) {
		snprintf(k, sizeof(k), "%s_ns", part[i]);
		add(o, k, json_object_new_double(cal->part_ns[i]));
		snprintf(k, sizeof(k), "%s_sd_ns", part[i]);
		add(o, k, json_object_new_double(cal->part_sd[i]));
	}
	add(o, "nested_check_ns", json_object_new_double(cal->nested_check_ns));
	add(o, "cold_pair_ns", json_object_new_double(cal->cold_pair_ns));
	add(o, "cold_bias_ns", json_object_new_double(cal->cold_bias_ns));
	add(o, "rounds", json_object_new_int(cal->rounds));
	add(o, "instances", json_object_new_int(cal->instances));
	add(o, "gap_points", gap_points(cal));
	return o;
}

static struct json_object *daemon_cal_json(const struct fp_daemon_cal *dc)
{
	struct json_object *o = json_object_new_object();

	add(o, "attach_point", json_object_new_string(dc->optimized ? "shielded-nop5" : "nop1"));
	add(o, "why", json_object_new_string(dc->why));
	add(o, "kernel_optimizes_nop5", json_object_new_boolean(dc->kernel_optimizes));
	add(o, "nop5_fork_crashes_child", json_object_new_boolean(dc->fork_hazard));
	add(o, "nop1", calibration_json(&dc->at[FP_AT_NOP1]));
	add(o, "nop5", calibration_json(&dc->at[FP_AT_NOP5]));
	/* function regions: a function's entry uprobe and its return probe, the entry's
	 * first instruction a push (emulated) or another (single-stepped) */
	add(o, "function", calibration_json(&dc->at[FP_AT_FUNC]));
	add(o, "function_stepped", calibration_json(&dc->at[FP_AT_FUNC_STEP]));
	add(o, "inprocess", calibration_json(&dc->ip));	/* the runtime's own */
	add(o, "inprocess_clock", json_object_new_string(
		fp_ip_clock()->clock == FP_IP_CLOCK_TSC ? "tsc" : "monotonic"));
	add(o, "took_ms", json_object_new_double(dc->took_ms));
	add(o, "runs", json_object_new_int(dc->runs));
	add(o, "time", u64(dc->when));
	return o;
}

static struct json_object *region_json(const struct fp_catalog *cat, int r,
				       const struct fp_region_fig *g,
				       const struct fp_calibration *cal, const uint8_t *enabled,
				       const uint8_t *inproc)
{
	struct json_object *o = json_object_new_object(), *h = json_object_new_array();
	struct json_object *fl = json_object_new_array();
	double ui, ux, incl = fp_comp_incl(g, cal, &ui), excl = fp_comp_excl(g, cal, &ux);
	int f, k;

	for (f = 0; f < cat->regions[r].nfeatures; f++)
		json_object_array_add(fl, json_object_new_string(cat->regions[r].features[f]));
	add(o, "name", json_object_new_string(cat->regions[r].name));
	add(o, "features", fl);
	add(o, "enabled", json_object_new_boolean(enabled && enabled[r]));
	/* in-process: the runtime times the region itself (wall time only: no off-CPU);
	 * function: a uprobe at a function's entry and a return probe; calls: an entry
	 * probe that counts (its times are 0) */
	add(o, "measured", json_object_new_string(inproc && inproc[r]		? "in-process"
						  : cat->regions[r].calls_only	? "calls"
						  : cat->regions[r].function	? "function"
										: "trap"));
	add(o, "count", u64(g->count));
	add(o, "inclusive_ns", dbl_ns(incl));
	add(o, "exclusive_ns", dbl_ns(excl));
	add(o, "raw_inclusive_ns", u64(g->incl_ns));
	add(o, "raw_exclusive_ns", u64(g->excl_ns));
	add(o, "inclusive_uncertainty_ns", dbl_ns(ui));
	add(o, "exclusive_uncertainty_ns", dbl_ns(ux));
	add_times(o, "", incl, ui, g->off_pre_ns, g->off_blk_ns);
	add_times(o, "exclusive_", excl, ux, g->xoff_pre_ns, g->xoff_blk_ns);
	add(o, "min_ns", u64(g->min_ns));	/* of one instance, raw */
	add(o, "max_ns", u64(g->max_ns));
	add(o, "mean_ns", dbl_ns(g->count ? incl / (double)g->count : 0));
	add(o, "nested", u64(g->ndesc));
	add(o, "children", u64(g->nchild));	/* the direct ones of those */
	add(o, "recursion", u64(g->recursion));
	for (k = 0; k < FP_HIST_BUCKETS; k++) {
		struct json_object *b;

		if (!g->hist[k])
			continue;
		b = json_object_new_object();
		add(b, "ge_ns", u64(1ULL << k));
		add(b, "count", u64(g->hist[k]));
		json_object_array_add(h, b);
	}
	add(o, "histogram", h);
	return o;
}

static int cmp_id(const void *a, const void *b)
{
	uint64_t x = ((const struct fp_path_fig *)a)->id, y = ((const struct fp_path_fig *)b)->id;

	return x < y ? -1 : x > y;
}

/* The region names of a path, outermost first ("?" for an ancestor not yet seen). */
static struct json_object *path_names(const struct fp_catalog *cat, const struct fp_snapshot *s,
				      const struct fp_path_fig *p)
{
	struct json_object *a = json_object_new_array();
	const struct fp_path_fig *chain[FP_MAX_DEPTH];
	struct fp_path_fig key = { .id = p->id };
	int n = 0, i;

	while (key.id && n < FP_MAX_DEPTH) {
		const struct fp_path_fig *q = bsearch(&key, s->paths, (size_t)s->npaths,
						      sizeof(*s->paths), cmp_id);

		if (!q)
			break;
		chain[n++] = q;
		key.id = q->parent;
	}
	for (i = n - 1; i >= 0; i--)
		json_object_array_add(a, json_object_new_string(
						 (int)chain[i]->region < cat->nregions
							 ? cat->regions[chain[i]->region].name
							 : "?"));
	if (n && chain[n - 1]->depth > 1)	/* the walk stopped short of the outermost */
		json_object_array_put_idx(a, 0, json_object_new_string("?"));
	return a;
}

/* "paths": each region path's exclusive time and the instances it ended (the data of
 * flame graphs); requires s->paths sorted by id (fp_snapshot__derive_fsets does it). */
static struct json_object *paths_json(const struct fp_catalog *cat, const struct fp_snapshot *s,
				      const struct fp_calibration *cal)
{
	struct json_object *arr = json_object_new_array();
	int i;

	for (i = 0; i < s->npaths; i++) {
		const struct fp_path_fig *p = &s->paths[i];
		struct json_object *o;
		double unc, ns;

		if (!p->id)	/* no region open: base_ns */
			continue;
		ns = fp_comp_path(p, cal, &unc);
		o = json_object_new_object();
		add(o, "path", path_names(cat, s, p));
		add(o, "features", feature_list(cat, p->mask));
		add(o, "ns", dbl_ns(ns));
		add(o, "raw_ns", u64(p->ns));
		add(o, "count", u64(p->count));
		add_times(o, "", ns, unc, p->off_pre_ns, p->off_blk_ns);
		json_object_array_add(arr, o);
	}
	return arr;
}

struct json_object *fp_report_stats(const struct fp_catalog *cat, const struct fp_snapshot *s,
				    const struct fp_calibration *cal, const uint8_t *enabled)
{
	struct json_object *root = json_object_new_object(), *regs = json_object_new_array();
	struct json_object *feats = json_object_new_array(), *sets = json_object_new_array();
	struct json_object *an = json_object_new_object();
	struct fp_feature_fig *ff = calloc((size_t)cat->nfeatures + 1, sizeof(*ff)), base;
	int r, f, i, k;

	for (r = 0; r < cat->nregions && r < s->nregions; r++)
		json_object_array_add(regs, region_json(cat, r, &s->regions[r], cal, enabled,
							    s->inproc));
	if (ff)
		fp_feature_times(s, cal, cat->nfeatures, ff, &base);
	for (f = 0; ff && f < cat->nfeatures; f++) {
		struct json_object *o = json_object_new_object();

		add(o, "name", json_object_new_string(cat->features[f]));
		add(o, "ns", dbl_ns(ff[f].ns));
		add(o, "raw_ns", u64(ff[f].raw_ns));
		add_times(o, "", ff[f].ns, ff[f].unc, ff[f].off_pre_ns, ff[f].off_blk_ns);
		json_object_array_add(feats, o);
	}
	for (i = 0; i < s->nfsets; i++) {
		const struct fp_fset_fig *e = &s->fsets[i];
		struct json_object *o;
		double unc, ns;

		if (!e->mask)	/* no feature open: that is base_ns */
			continue;
		ns = fp_comp_fset(e, cal, &unc);
		o = json_object_new_object();
		add(o, "features", feature_list(cat, e->mask));
		add(o, "ns", dbl_ns(ns));
		add(o, "raw_ns", u64(e->ns));
		add(o, "events", u64(e->events));
		add_times(o, "", ns, unc, e->off_pre_ns, e->off_blk_ns);
		json_object_array_add(sets, o);
	}
	for (k = 0; k < FP_AN_MAX; k++)
		add(an, fp_anomaly_names[k], u64(s->anomalies[k]));
	add(root, "regions", regs);
	add(root, "features", feats);
	add(root, "feature_sets", sets);
	add(root, "paths", paths_json(cat, s, cal));
	add(root, "base_ns", dbl_ns(ff ? base.ns : 0));
	add(root, "base_raw_ns", u64(ff ? base.raw_ns : 0));
	add(root, "base_uncertainty_ns", dbl_ns(ff ? base.unc : 0));
	add(root, "anomalies", an);
	add(root, "compensation", calibration_json(cal));
	free(ff);
	return root;
}

/* Calibration keys of hello, status and calibrate. */
/* status bpf_objects: the BPF objects loaded for targets and how many targets they hold
 * (daemon/targets/pool.c). */
static void bpf_objects_json(struct json_object *o)
{
	struct json_object *b = json_object_new_object();
	int nobj, ntgt;

	fp_pool__counts(&nobj, &ntgt);
	json_object_object_add(b, "objects", json_object_new_int(nobj));
	json_object_object_add(b, "targets", json_object_new_int(ntgt));
	json_object_object_add(o, "bpf_objects", b);
}

/* The calibration keys of hello, status and calibrate, added to o. */
static void daemon_keys(struct json_object *o, const struct fp_daemon_cal *dc)
{
	const struct fp_calibration *def = &dc->at[dc->optimized ? FP_AT_NOP5 : FP_AT_NOP1];

	add(o, "optimized_uprobes", json_object_new_boolean(dc->optimized));
	add(o, "calibration", calibration_json(def));
	add(o, "kernel_optimizes_nop5", json_object_new_boolean(dc->kernel_optimizes));
	add(o, "pair_ns_nop1", json_object_new_double(dc->at[FP_AT_NOP1].pair_ns));
	add(o, "pair_ns_nop5", json_object_new_double(dc->at[FP_AT_NOP5].pair_ns));
	add(o, "pair_ns_function", json_object_new_double(dc->at[FP_AT_FUNC].pair_ns));
	add(o, "pair_ns_function_stepped",
	    json_object_new_double(dc->at[FP_AT_FUNC_STEP].pair_ns));
	add(o, "attach", daemon_cal_json(dc));
}

struct json_object *fp_report_enabled(const struct fp_target *t)
{
	struct json_object *o = json_object_new_object(), *a = json_object_new_array();
	const struct fp_catalog *cat = fp_target__catalog(t);
	const uint8_t *enabled = fp_target__enabled(t);
	int sites = fp_target__attached_sites(t), ip = fp_target__ip_regions(t);
	int r;

	for (r = 0; enabled && r < cat->nregions; r++)
		if (enabled[r])
			json_object_array_add(a, json_object_new_string(cat->regions[r].name));
	add(o, "pid", json_object_new_int(fp_target__pid(t)));
	add(o, "enabled_regions", a);
	add(o, "attached_sites", json_object_new_int(sites));
	add(o, "inprocess_regions", json_object_new_int(ip));
	/* how its regions are measured: traps, its own runtime, or both */
	add(o, "mode", json_object_new_string(!ip ? "trap" : sites ? "mixed" : "in-process"));
	add(o, "inprocess_capable", json_object_new_boolean(fp_target__inproc(t) != NULL));
	return o;
}

/*
 * The anomalies that enabling and disabling cause, apart ("anomalies_expected", each at
 * most its count in "anomalies"): an end without a begin, up to the threads x regions
 * enabled while the process ran (it was inside when the sites were attached); every
 * instance open at a disable.
 */
static void add_expected(struct json_object *o, const struct fp_target *t,
			 const struct fp_snapshot *snap)
{
	struct json_object *x = json_object_new_object();
	uint64_t unmatched = snap->anomalies[FP_AN_END_WITHOUT_BEGIN];
	uint64_t allowed = fp_target__unmatched_allowed(t);

	add(x, fp_anomaly_names[FP_AN_END_WITHOUT_BEGIN],
	    u64(unmatched < allowed ? unmatched : allowed));
	add(x, fp_anomaly_names[FP_AN_DISABLED_OPEN],
	    u64(snap->anomalies[FP_AN_DISABLED_OPEN]));
	add(o, "anomalies_expected", x);
}

void fp_report_target_keys(struct json_object *o, const struct fp_target *t,
			   const struct fp_snapshot *snap)
{
	static const char *const pts[] = { "none", "nop1", "nop5", "mixed" };
	uint64_t since = fp_target__enabled_at_ns(t);

	add(o, "pid", json_object_new_int(fp_target__pid(t)));
	add(o, "comm", json_object_new_string(fp_target__comm(t)));
	add(o, "exited", json_object_new_boolean(fp_target__exited(t)));
	add(o, "attach_points", json_object_new_string(pts[fp_target__attach_points(t)]));
	add(o, "elapsed_ns", u64(since && snap->taken_ns > since ? snap->taken_ns - since : 0));
	add_expected(o, t, snap);
}

/* One target of the status reply. */
static struct json_object *target_status_json(const struct fp_target *t,
					    const struct fp_snapshot *snap)
{
	struct json_object *o = fp_report_enabled(t), *an = json_object_new_object();
	int k;

	add(o, "comm", json_object_new_string(fp_target__comm(t)));
	add(o, "exited", json_object_new_boolean(fp_target__exited(t)));
	add(o, "regions", json_object_new_int(fp_target__catalog(t)->nregions));
	add(o, "site_address",
	    json_object_new_string(fp_target__shielded(t) ? "shielded-nop5" : "nop1"));
	for (k = 0; snap && k < FP_AN_MAX; k++)
		add(an, fp_anomaly_names[k], u64(snap->anomalies[k]));
	add(o, "anomalies", an);
	return o;
}

struct json_object *fp_report_repair(pid_t pid, int before, int after)
{
	struct json_object *o = json_object_new_object();

	add(o, "pid", json_object_new_int(pid));
	add(o, "breakpoints", json_object_new_int(before));
	add(o, "removed", json_object_new_int(before - after));
	add(o, "held", json_object_new_int(after));
	return o;
}

struct json_object *fp_report_number(const char *key, int64_t v)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, key, json_object_new_int64(v));
	return o;
}

struct json_object *fp_report_id(long long id)
{
	return json_object_new_int64(id);
}

struct json_object *fp_report_hello(const struct fp_daemon_cal *dc)
{
	struct json_object *o = fp_report_number("version", FP_PROTO_VERSION);

	daemon_keys(o, dc);
	return o;
}

struct json_object *fp_report_sampling(pid_t pid, bool on, int hz, bool remote)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "pid", json_object_new_int(pid));
	json_object_object_add(o, "sampling", json_object_new_boolean(on));
	json_object_object_add(o, "hz", json_object_new_int(hz));
	json_object_object_add(o, "clock", json_object_new_string(remote ? "remote"
									  : "cpu-clock"));
	return o;
}

struct json_object *fp_report_recalibrated(const struct fp_daemon_cal *prev,
					   const struct fp_daemon_cal *now)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "previous", daemon_cal_json(prev));
	daemon_keys(o, now);
	return o;
}

struct json_object *fp_report_status(struct fp_target *const *t,
				     struct fp_snapshot *const *snap, const int *strays, int n,
				     struct json_object *executables,
				     const struct fp_status_counts *counts,
				     const struct fp_daemon_cal *dc, struct json_object *kernel)
{
	struct json_object *o = fp_report_number("version", FP_PROTO_VERSION);
	struct json_object *ts = json_object_new_array(), *x;
	int i;

	for (i = 0; i < n; i++) {
		x = target_status_json(t[i], snap[i]);
		if (strays[i] >= 0)	/* int3s at its sites that featprofd did not put there */
			json_object_object_add(x, "stray_breakpoints",
					       json_object_new_int(strays[i]));
		json_object_array_add(ts, x);
	}
	json_object_object_add(o, "targets", ts);
	if (executables) {
		json_object_object_add(o, "executables", executables);
		bpf_objects_json(o);	/* the BPF objects targets share */
	}
	if (counts->watch_lost >= 0)	/* dlopen, exec, fork events lost to a full ring */
		json_object_object_add(o, "watch_events_lost",
				       json_object_new_int64(counts->watch_lost));
	json_object_object_add(o, "clients", json_object_new_int(counts->clients));
	json_object_object_add(o, "subscriptions", json_object_new_int(counts->subscriptions));
	if (counts->repaired_at_start >= 0)	/* left by a featprofd killed mid-attach */
		json_object_object_add(o, "breakpoints_repaired_at_start",
				       json_object_new_int(counts->repaired_at_start));
	daemon_keys(o, dc);
	json_object_object_add(o, "kernel", kernel);
	return o;
}
