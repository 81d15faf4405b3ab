// SPDX-License-Identifier: GPL-2.0
/*
 * Compensation. Every probe costs the thread some time before the kernel takes the
 * event's timestamp (the trap, the lookup, the program up to the clock read) and some
 * after it (the rest of the program, the return to user space): four parts, measured
 * by daemon/calibrate/calibrate.c for each gap bucket (how long the thread ran its own code since
 * its previous event: a probe after a long stretch of user code costs more).
 *
 * The kernel charges each event its bucket's parts and sums, per region instance, the
 * cost inside it: its begin's post part, every nested probe whole, its end's pre part
 * (cost_ns; exclusive: less what is inside completed children, xcost_ns), and per
 * interval of a region path the post part of the event that opened it and the pre part
 * of the one that closed it (bpf/featprof.bpf.c, "Cost"). A compensated figure is its
 * raw time less that sum: a feature's time is the sum of its sets' (its span starts at
 * the timestamp of its outermost begin and ends at that of its end, as a region's does).
 *
 * Uncertainty: the calibration's spread (standard deviation of its round values) of
 * each part, summed over the events it is charged for (the kernel sums it too), added
 * linearly: the error of a calibration is systematic, it does not average out over
 * events.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

const char *const fp_anomaly_names[FP_AN_MAX] = {
	[FP_AN_END_WITHOUT_BEGIN] = "end_without_begin",
	[FP_AN_ABANDONED] = "begin_without_end",
	[FP_AN_OVERFLOW] = "stack_overflow",
	[FP_AN_EXIT_INSIDE] = "thread_exit_inside",
	[FP_AN_DISABLED_OPEN] = "disabled_while_open",
	[FP_AN_NO_STATE] = "no_thread_state",
	[FP_AN_PATHS_FULL] = "paths_full",
	[FP_AN_BEGIN_TWICE] = "begin_twice",
	[FP_AN_NO_RETURN] = "no_return",
};

struct fp_snapshot *fp_snapshot__new(int nregions)
{
	struct fp_snapshot *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->nregions = nregions;
	s->regions = calloc(nregions > 0 ? (size_t)nregions : 1, sizeof(*s->regions));
	if (!s->regions) {
		free(s);
		return NULL;
	}
	return s;
}

void fp_snapshot__free(struct fp_snapshot *s)
{
	if (!s)
		return;
	free(s->regions);
	free(s->fsets);
	free(s->paths);
	free(s->inproc);
	free(s);
}

/* A copy of n elements of size sz (NULL for none); *ok cleared on failure. */
static void *dup_array(const void *a, int n, size_t sz, int *ok)
{
	void *d;

	if (!n)
		return NULL;
	d = malloc(sz * (size_t)n);
	if (!d)
		*ok = 0;
	else
		memcpy(d, a, sz * (size_t)n);
	return d;
}

struct fp_snapshot *fp_snapshot__dup(const struct fp_snapshot *s)
{
	struct fp_snapshot *d = fp_snapshot__new(s->nregions);

	if (!d)
		return NULL;
	int ok = 1;

	d->taken_ns = s->taken_ns;
	memcpy(d->regions, s->regions, sizeof(*s->regions) * (size_t)s->nregions);
	memcpy(d->anomalies, s->anomalies, sizeof(s->anomalies));
	d->fsets = dup_array(s->fsets, s->nfsets, sizeof(*s->fsets), &ok);
	d->nfsets = s->nfsets;
	d->paths = dup_array(s->paths, s->npaths, sizeof(*s->paths), &ok);
	d->npaths = s->npaths;
	d->inproc = s->inproc ? dup_array(s->inproc, s->nregions, 1, &ok) : NULL;
	if (!ok) {
		fp_snapshot__free(d);
		return NULL;
	}
	return d;
}

static uint64_t minus(uint64_t a, uint64_t b)
{
	return a >= b ? a - b : a; /* after a reset, the current value is the delta */
}

static int cmp_path_id(const void *a, const void *b)
{
	uint64_t x = ((const struct fp_path_fig *)a)->id, y = ((const struct fp_path_fig *)b)->id;

	return x < y ? -1 : x > y;
}

static void add_region(struct fp_region_fig *a, const struct fp_region_fig *b)
{
	int k;

	if (b->count && (!a->count || b->min_ns < a->min_ns))
		a->min_ns = b->min_ns;
	if (b->max_ns > a->max_ns)
		a->max_ns = b->max_ns;
	a->count += b->count;
	a->incl_ns += b->incl_ns;
	a->excl_ns += b->excl_ns;
	a->nchild += b->nchild;
	a->ndesc += b->ndesc;
	a->recursion += b->recursion;
	a->off_pre_ns += b->off_pre_ns;
	a->off_blk_ns += b->off_blk_ns;
	a->xoff_pre_ns += b->xoff_pre_ns;
	a->xoff_blk_ns += b->xoff_blk_ns;
	a->cost_ns += b->cost_ns;
	a->unc_ns += b->unc_ns;
	a->xcost_ns += b->xcost_ns;
	a->xunc_ns += b->xunc_ns;
	a->npre += b->npre;
	a->xnpre += b->xnpre;
	for (k = 0; k < FP_HIST_BUCKETS; k++)
		a->hist[k] += b->hist[k];
}

int fp_snapshot__add(struct fp_snapshot *d, const struct fp_snapshot *s)
{
	struct fp_path_fig *arr;
	int i, o;

	for (i = 0; i < d->nregions && i < s->nregions; i++)
		add_region(&d->regions[i], &s->regions[i]);
	for (i = 0; i < FP_AN_MAX; i++)
		d->anomalies[i] += s->anomalies[i];
	if (s->npaths) {
		arr = realloc(d->paths, sizeof(*arr) * (size_t)(d->npaths + s->npaths));
		if (!arr)
			return -ENOMEM;
		d->paths = arr;
		memcpy(arr + d->npaths, s->paths, sizeof(*arr) * (size_t)s->npaths);
		d->npaths += s->npaths;
	}
	if (d->npaths < 2)
		return 0;
	arr = d->paths;
	qsort(arr, (size_t)d->npaths, sizeof(*arr), cmp_path_id);	/* equal ids: one */
	for (i = 1, o = 0; i < d->npaths; i++) {
		struct fp_path_fig *a = &arr[o], *b = &arr[i];

		if (a->id != b->id) {
			arr[++o] = *b;
			continue;
		}
		a->ns += b->ns;
		a->events += b->events;
		a->opened_by_begin += b->opened_by_begin;
		a->closed_by_begin += b->closed_by_begin;
		a->off_pre_ns += b->off_pre_ns;
		a->off_blk_ns += b->off_blk_ns;
		a->count += b->count;
		a->cost_ns += b->cost_ns;
		a->unc_ns += b->unc_ns;
		a->npre += b->npre;
	}
	d->npaths = o + 1;
	return 0;
}

struct fp_snapshot *fp_snapshot__delta(const struct fp_snapshot *cur,
				       const struct fp_snapshot *prev)
{
	struct fp_snapshot *d = fp_snapshot__dup(cur);
	int i, j, k;

	if (!d || !prev)
		return d;
	for (i = 0; i < d->nregions && i < prev->nregions; i++) {
		struct fp_region_fig *a = &d->regions[i];
		const struct fp_region_fig *b = &prev->regions[i];
		int reset = a->count < b->count;

		if (reset)
			continue;
		a->count -= b->count;
		a->incl_ns = minus(a->incl_ns, b->incl_ns);
		a->excl_ns = minus(a->excl_ns, b->excl_ns);
		a->nchild = minus(a->nchild, b->nchild);
		a->ndesc = minus(a->ndesc, b->ndesc);
		a->recursion = minus(a->recursion, b->recursion);
		a->off_pre_ns = minus(a->off_pre_ns, b->off_pre_ns);
		a->off_blk_ns = minus(a->off_blk_ns, b->off_blk_ns);
		a->xoff_pre_ns = minus(a->xoff_pre_ns, b->xoff_pre_ns);
		a->xoff_blk_ns = minus(a->xoff_blk_ns, b->xoff_blk_ns);
		a->cost_ns = minus(a->cost_ns, b->cost_ns);
		a->unc_ns = minus(a->unc_ns, b->unc_ns);
		a->xcost_ns = minus(a->xcost_ns, b->xcost_ns);
		a->xunc_ns = minus(a->xunc_ns, b->xunc_ns);
		a->npre = minus(a->npre, b->npre);
		a->xnpre = minus(a->xnpre, b->xnpre);
		for (k = 0; k < FP_HIST_BUCKETS; k++)
			a->hist[k] = minus(a->hist[k], b->hist[k]);
		/* min and max are of all time: an interval's own extremes are not kept */
	}
	for (i = 0; i < d->nfsets; i++)
		for (j = 0; j < prev->nfsets; j++)
			if (prev->fsets[j].mask == d->fsets[i].mask) {
				struct fp_fset_fig *x = &d->fsets[i];
				const struct fp_fset_fig *y = &prev->fsets[j];

				x->ns = minus(x->ns, y->ns);
				x->events = minus(x->events, y->events);
				x->opened_by_begin = minus(x->opened_by_begin, y->opened_by_begin);
				x->closed_by_begin = minus(x->closed_by_begin, y->closed_by_begin);
				x->off_pre_ns = minus(x->off_pre_ns, y->off_pre_ns);
				x->off_blk_ns = minus(x->off_blk_ns, y->off_blk_ns);
				x->cost_ns = minus(x->cost_ns, y->cost_ns);
				x->unc_ns = minus(x->unc_ns, y->unc_ns);
				x->npre = minus(x->npre, y->npre);
				break;
			}
	for (i = 0; i < d->npaths; i++)
		for (j = 0; j < prev->npaths; j++)
			if (prev->paths[j].id == d->paths[i].id) {
				struct fp_path_fig *x = &d->paths[i];
				const struct fp_path_fig *y = &prev->paths[j];

				x->ns = minus(x->ns, y->ns);
				x->events = minus(x->events, y->events);
				x->opened_by_begin = minus(x->opened_by_begin, y->opened_by_begin);
				x->closed_by_begin = minus(x->closed_by_begin, y->closed_by_begin);
				x->off_pre_ns = minus(x->off_pre_ns, y->off_pre_ns);
				x->off_blk_ns = minus(x->off_blk_ns, y->off_blk_ns);
				x->count = minus(x->count, y->count);
				x->cost_ns = minus(x->cost_ns, y->cost_ns);
				x->unc_ns = minus(x->unc_ns, y->unc_ns);
				x->npre = minus(x->npre, y->npre);
				break;
			}
	for (k = 0; k < FP_AN_MAX; k++)
		d->anomalies[k] = minus(d->anomalies[k], prev->anomalies[k]);
	return d;
}

int fp_snapshot__derive_fsets(struct fp_snapshot *s, const uint64_t *region_mask, int nregions)
{
	struct fp_fset_fig *sets = NULL;
	int i, j, n = 0;

	/* sorted by id, each path's parent is found by bsearch; depth bounds the walk */
	if (s->npaths)
		qsort(s->paths, (size_t)s->npaths, sizeof(*s->paths), cmp_path_id);
	for (i = 0; i < s->npaths; i++) {
		struct fp_path_fig key, *p = &s->paths[i];
		uint64_t mask = 0;
		uint32_t hops;

		key.id = p->id;
		for (hops = 0; key.id && hops <= FP_MAX_DEPTH; hops++) {
			const struct fp_path_fig *q = bsearch(&key, s->paths, (size_t)s->npaths,
							      sizeof(*s->paths), cmp_path_id);

			if (!q)		/* an ancestor seen by no CPU yet: as far as known */
				break;
			if ((int)q->region < nregions)
				mask |= region_mask[q->region];
			key.id = q->parent;
		}
		p->mask = p->id ? mask : 0;
	}
	for (i = 0; i < s->npaths; i++) {
		const struct fp_path_fig *p = &s->paths[i];

		for (j = 0; j < n && sets[j].mask != p->mask; j++)
			;
		if (j == n) {
			struct fp_fset_fig *a = realloc(sets, sizeof(*sets) * (size_t)(n + 1));

			if (!a) {
				free(sets);
				return -ENOMEM;
			}
			sets = a;
			memset(&sets[n++], 0, sizeof(*sets));
			sets[j].mask = p->mask;
		}
		sets[j].ns += p->ns;
		sets[j].events += p->events;
		sets[j].opened_by_begin += p->opened_by_begin;
		sets[j].closed_by_begin += p->closed_by_begin;
		sets[j].off_pre_ns += p->off_pre_ns;
		sets[j].off_blk_ns += p->off_blk_ns;
		sets[j].cost_ns += p->cost_ns;
		sets[j].unc_ns += p->unc_ns;
		sets[j].npre += p->npre;
	}
	free(s->fsets);
	s->fsets = sets;
	s->nfsets = n;
	return 0;
}

/* The spread of a charged cost ns of a part whose warm cost is warm and measured spread sd
 * (daemon/util/stats.h, FP_GAP_EXTRA_UNC and FP_GAP_DRIFT_UNC). */
static double spread(double ns, double warm, double sd)
{
	return fmax(sd, FP_GAP_EXTRA_UNC * fabs(ns - warm) + FP_GAP_DRIFT_UNC * ns);
}

/* The gap points in the order of their gaps (those with one) into o; how many. */
static int gap_order(const struct fp_calibration *c, int o[FP_CAL_GAPS])
{
	int n = 0, i, j;

	for (i = 0; i < FP_CAL_GAPS; i++) {
		if (!(c->point_gap_ns[i] > 0))
			continue;
		for (j = n++; j > 0 && c->point_gap_ns[o[j - 1]] > c->point_gap_ns[i]; j--)
			o[j] = o[j - 1];
		o[j] = i;
	}
	return n;
}

void fp_cal_step(const struct fp_calibration *c, int k, double ns[FP_C_N], double sd[FP_C_N])
{
	int o[FP_CAL_GAPS], n = gap_order(c, o), i = 0, p;
	double x = k + log2(1.5), w = 0;

	if (k >= FP_GAP_COLD) {
		for (p = 0; p < FP_C_N; p++) {
			ns[p] = c->point_ns[FP_CAL_COLD][p];
			sd[p] = spread(ns[p], c->point_ns[0][p], c->point_sd[FP_CAL_COLD][p]);
		}
		return;
	}
	if (!n) {	/* no gap known: point 0 alone */
		o[0] = 0;
		n = 1;
	}
	/* the points around x: o[i] and o[i + 1] with weight w on o[i + 1] */
	while (i + 1 < n && log2(c->point_gap_ns[o[i + 1]]) <= x)
		i++;
	if (i + 1 < n && x > log2(c->point_gap_ns[o[i]]))
		w = (x - log2(c->point_gap_ns[o[i]])) /
		    (log2(c->point_gap_ns[o[i + 1]]) - log2(c->point_gap_ns[o[i]]));
	for (p = 0; p < FP_C_N; p++) {
		const double *a0 = c->point_ns[o[i]], *e0 = c->point_sd[o[i]];
		const double *a = w ? c->point_ns[o[i + 1]] : a0;
		const double *e = w ? c->point_sd[o[i + 1]] : e0;

		ns[p] = a0[p] + w * (a[p] - a0[p]);
		sd[p] = e0[p] + w * (e[p] - e0[p]);
		sd[p] = spread(ns[p], c->point_ns[0][p], sd[p]);
	}
}

static double clamp0(double v)
{
	return v > 0 ? v : 0;
}

static int usable(const struct fp_calibration *c)
{
	return c && c->valid;
}

/*
 * A switch while a probe runs is in the raw time but not in the program's: featprof sees
 * a figure's preempted time but not whether it fell in a probe or in the code. A thread
 * is switched out at a return to user space (from a tick, an interrupt, or a probe's
 * trap), so each preemption falls in a probe with the probes' share p of the time the
 * thread ran. Of a figure's n preemptions (of mean length L), K did, K binomial: about
 * n p on average, but few and long (a tick's slice, milliseconds), so the uncertainty
 * is L (n p + 2 sqrt(n p)): what K reaches about 19 times in 20 where n p is not tiny.
 */
static double in_probes(double preempted, uint64_t n, double probes, double raw)
{
	double ran = raw - preempted, p, np;

	if (!n || preempted <= 0)
		return 0;
	p = ran > probes ? probes / ran : 1;
	np = (double)n * p;
	return preempted / (double)n * (np + 2 * sqrt(np));
}

double fp_comp_incl(const struct fp_region_fig *r, const struct fp_calibration *c, double *unc)
{
	double v = (double)r->incl_ns, u = 0;

	if (usable(c)) {
		v -= (double)r->cost_ns;
		u = (double)r->unc_ns +
		    in_probes((double)r->off_pre_ns, r->npre, (double)r->cost_ns,
			      (double)r->incl_ns);
	}
	if (unc)
		*unc = u;
	return clamp0(v);
}

double fp_comp_excl(const struct fp_region_fig *r, const struct fp_calibration *c, double *unc)
{
	double v = (double)r->excl_ns, u = 0;

	if (usable(c)) {
		v -= (double)r->xcost_ns;
		u = (double)r->xunc_ns +
		    in_probes((double)r->xoff_pre_ns, r->xnpre, (double)r->xcost_ns,
			      (double)r->excl_ns);
	}
	if (unc)
		*unc = u;
	return clamp0(v);
}

double fp_comp_fset(const struct fp_fset_fig *f, const struct fp_calibration *c, double *unc)
{
	double v = (double)f->ns, u = 0;

	if (usable(c)) {
		v -= (double)f->cost_ns;
		u = (double)f->unc_ns +
		    in_probes((double)f->off_pre_ns, f->npre, (double)f->cost_ns, (double)f->ns);
	}
	if (unc)
		*unc = u;
	return clamp0(v);
}

static void add_fig(struct fp_feature_fig *o, const struct fp_fset_fig *e, double ns, double unc)
{
	o->ns += ns;
	o->unc += unc;
	o->raw_ns += e->ns;
	o->off_pre_ns += e->off_pre_ns;
	o->off_blk_ns += e->off_blk_ns;
}

double fp_comp_path(const struct fp_path_fig *p, const struct fp_calibration *c, double *unc)
{
	struct fp_fset_fig f = { .ns = p->ns, .events = p->events,
				 .opened_by_begin = p->opened_by_begin,
				 .closed_by_begin = p->closed_by_begin, .off_pre_ns = p->off_pre_ns,
				 .cost_ns = p->cost_ns, .unc_ns = p->unc_ns, .npre = p->npre };

	return fp_comp_fset(&f, c, unc);
}

void fp_feature_times(const struct fp_snapshot *s, const struct fp_calibration *c,
		      int nfeatures, struct fp_feature_fig *out, struct fp_feature_fig *base)
{
	int i, f;

	memset(out, 0, sizeof(*out) * (size_t)nfeatures);
	if (base)
		memset(base, 0, sizeof(*base));
	for (i = 0; i < s->nfsets; i++) {
		const struct fp_fset_fig *e = &s->fsets[i];
		double unc, ns = fp_comp_fset(e, c, &unc);

		if (!e->mask && base)
			add_fig(base, e, ns, unc);
		for (f = 0; f < nfeatures && f < FP_MAX_FEATURES; f++)
			if (e->mask & (1ULL << f))
				add_fig(&out[f], e, ns, unc);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double fp_median(double *v, int n)
{
	if (n < 1)
		return 0;
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double fp_stdev(const double *v, int n)
{
	double m = 0, s = 0;
	int i;

	for (i = 0; i < n; i++)
		m += v[i] / n;
	for (i = 0; i < n; i++)
		s += (v[i] - m) * (v[i] - m);
	return n > 1 ? sqrt(s / (n - 1)) : 0;
}
