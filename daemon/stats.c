// SPDX-License-Identifier: GPL-2.0
/*
 * Compensation. A traced region's raw inclusive time contains part of its own probes'
 * cost (the return to user space after the begin's timestamp, the trap before the
 * end's): the bias b, measured as the raw time of an empty region. A region that
 * encloses n nested regions also contains their probes entirely: n times the pair
 * cost p. So per instance
 *	incl = raw_incl - b - ndesc * p
 *	excl = incl - sum(children's incl) = raw_excl - b - nchild * (p - b)
 * (a child's raw time already holds its own b). The kernel sums count, ndesc and
 * nchild, so the sums compensate exactly as the instances would.
 */
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
	free(s);
}

struct fp_snapshot *fp_snapshot__dup(const struct fp_snapshot *s)
{
	struct fp_snapshot *d = fp_snapshot__new(s->nregions);

	if (!d)
		return NULL;
	d->taken_ns = s->taken_ns;
	memcpy(d->regions, s->regions, sizeof(*s->regions) * (size_t)s->nregions);
	memcpy(d->anomalies, s->anomalies, sizeof(s->anomalies));
	if (s->nfsets) {
		d->fsets = malloc(sizeof(*d->fsets) * (size_t)s->nfsets);
		if (!d->fsets) {
			fp_snapshot__free(d);
			return NULL;
		}
		memcpy(d->fsets, s->fsets, sizeof(*d->fsets) * (size_t)s->nfsets);
		d->nfsets = s->nfsets;
	}
	return d;
}

static uint64_t sub(uint64_t a, uint64_t b)
{
	return a >= b ? a - b : a; /* after a reset, the current value is the delta */
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
		a->incl_ns = sub(a->incl_ns, b->incl_ns);
		a->excl_ns = sub(a->excl_ns, b->excl_ns);
		a->nchild = sub(a->nchild, b->nchild);
		a->ndesc = sub(a->ndesc, b->ndesc);
		a->recursion = sub(a->recursion, b->recursion);
		for (k = 0; k < FP_HIST_BUCKETS; k++)
			a->hist[k] = sub(a->hist[k], b->hist[k]);
		/* min and max are of all time: an interval's own extremes are not kept */
	}
	for (i = 0; i < d->nfsets; i++)
		for (j = 0; j < prev->nfsets; j++)
			if (prev->fsets[j].mask == d->fsets[i].mask) {
				d->fsets[i].ns = sub(d->fsets[i].ns, prev->fsets[j].ns);
				d->fsets[i].events = sub(d->fsets[i].events, prev->fsets[j].events);
				break;
			}
	for (k = 0; k < FP_AN_MAX; k++)
		d->anomalies[k] = sub(d->anomalies[k], prev->anomalies[k]);
	return d;
}

double fp_comp_incl(const struct fp_region_fig *r, const struct fp_calibration *c)
{
	double v = (double)r->incl_ns;

	if (c && c->valid)
		v -= (double)r->count * c->bias_ns + (double)r->ndesc * c->pair_ns;
	return v > 0 ? v : 0;
}

double fp_comp_excl(const struct fp_region_fig *r, const struct fp_calibration *c)
{
	double v = (double)r->excl_ns;

	if (c && c->valid)
		v -= (double)r->count * c->bias_ns +
		     (double)r->nchild * (c->pair_ns - c->bias_ns);
	return v > 0 ? v : 0;
}

void fp_feature_times(const struct fp_snapshot *s, int nfeatures, uint64_t *ns_out)
{
	int i, f;

	memset(ns_out, 0, sizeof(*ns_out) * (size_t)nfeatures);
	for (i = 0; i < s->nfsets; i++)
		for (f = 0; f < nfeatures && f < FP_MAX_FEATURES; f++)
			if (s->fsets[i].mask & (1ULL << f))
				ns_out[f] += s->fsets[i].ns;
}
