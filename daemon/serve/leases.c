// SPDX-License-Identifier: GPL-2.0
/*
 * What a client changed for as long as its connection lasts (requests with "temporary":
 * true): regions it enabled and sampling it started, undone by featprofd when the
 * connection closes, however the client ended (Ctrl-C, kill -9, a crash). The CLI's
 * drill, sample and save make their changes this way over one connection they hold, so
 * that no probe they set outlives them.
 *
 * An enable's lease holds the regions that request turned on (those already enabled
 * stay, whoever enabled them) and the names it asked for (so that regions appearing
 * later no longer join); an enable of the same regions without "temporary" makes them
 * permanent. A sampling lease holds the target's latest start: any later start or stop
 * of sampling there, by anyone, ends it. A lease names its target by pointer and pid,
 * and is passed over when that target is gone.
 */
#include <json-c/json.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "clients/client.h"
#include "common/catalog.h"
#include "common/err.h"
#include "registry/registry.h"
#include "sample/sample.h"
#include "serve_impl.h"
#include "targets/target.h"
#include "util/log.h"
#include "util/wants.h"

struct lease {
	struct fp_client *c;
	struct fp_target *t;
	pid_t pid;
	bool sampling;	  /* else an enable */
	uint8_t *regions; /* enable: per region, turned on by it */
	int nregions;
	struct json_object *names; /* enable: what it asked for ("regions", "features") */
};

static struct lease *leases;
static int nleases;

static void lease_free(struct lease *l)
{
	free(l->regions);
	json_object_put(l->names);
}

static void remove_at(int i)
{
	lease_free(&leases[i]);
	leases[i] = leases[--nleases];
}

static struct lease *add(struct fp_client *c, struct fp_target *t)
{
	struct lease *l = realloc(leases, (size_t)(nleases + 1) * sizeof(*l));

	if (!l)
		return NULL;
	leases = l;
	l = &leases[nleases++];
	memset(l, 0, sizeof(*l));
	l->c = c;
	l->t = t;
	l->pid = fp_target__pid(t);
	return l;
}

uint8_t *fp_leases_before(struct fp_target *t)
{
	const struct fp_catalog *cat = fp_target__catalog(t);
	const uint8_t *en = fp_target__enabled(t);
	uint8_t *b = calloc((size_t)cat->nregions + 1, 1);

	if (b && en)
		memcpy(b, en, (size_t)cat->nregions);
	return b;
}

int fp_leases_enabled(struct fp_client *c, struct fp_target *t, const uint8_t *before,
		      const uint8_t *sel, struct json_object *req, bool temporary)
{
	const struct fp_catalog *cat = fp_target__catalog(t);
	struct lease *l;
	int r, i, any = 0;

	if (!temporary) { /* permanent now, whoever leased them */
		for (i = 0; i < nleases; i++)
			for (r = 0;
			     !leases[i].sampling && leases[i].t == t && r < leases[i].nregions; r++)
				if (sel[r])
					leases[i].regions[r] = 0;
		return 0;
	}
	for (r = 0; r < cat->nregions; r++)
		any |= sel[r] && !before[r];
	if (!any) /* it turned nothing on: nothing to undo */
		return 0;
	if (!(l = add(c, t)) || !(l->regions = calloc((size_t)cat->nregions + 1, 1)) ||
	    !(l->names = json_object_new_object())) {
		if (l)
			remove_at(nleases - 1);
		return -ENOMEM;
	}
	l->nregions = cat->nregions;
	for (r = 0; r < cat->nregions; r++)
		l->regions[r] = sel[r] && !before[r];
	for (i = 0; i < 2; i++) {
		const char *k = i ? "features" : "regions";
		struct json_object *v;

		if (json_object_object_get_ex(req, k, &v))
			json_object_object_add(l->names, k, json_object_get(v));
	}
	return 0;
}

int fp_leases_sampling(struct fp_client *c, struct fp_target *t, bool temporary)
{
	int i;

	for (i = nleases - 1; i >= 0; i--) /* a start or stop ends the last one's */
		if (leases[i].sampling && leases[i].t == t)
			remove_at(i);
	if (!temporary)
		return 0;
	if (!add(c, t))
		return -ENOMEM;
	leases[nleases - 1].sampling = true;
	return 0;
}

/* Lease l undone on its target (still the one it named). */
static void undo(struct lease *l)
{
	struct fp_target *t = fp_registry_find(l->pid);
	const uint8_t *en;
	struct fp_err e = {0};
	struct fp_wants names;
	uint8_t *sel;
	int r, n = 0;

	if (t != l->t || fp_target__exited(t))
		return;
	if (l->sampling) {
		fp_sample_stop(t);
		fp_log(FP_LOG_INFO,
		       "pid %d: sampling stopped: the client that started it "
		       "closed its connection",
		       (int)l->pid);
		return;
	}
	en = fp_target__enabled(t);
	sel = calloc((size_t)fp_target__catalog(t)->nregions + 1, 1);
	for (r = 0; sel && en && r < l->nregions; r++)
		n += sel[r] = l->regions[r] && en[r];
	if (n && fp_target__set_regions(t, sel, 0, &e))
		fp_log(FP_LOG_WARN, "pid %d: undoing a closed client's enables: %s", (int)l->pid,
		       e.msg);
	free(sel);
	if (!fp_wants_parse(&names, l->names, &e)) {
		fp_target__update_wants(t, &names, false);
		fp_wants_clear(&names);
	}
	fp_registry_sync_dl_hook(t);
	fp_log(FP_LOG_INFO,
	       "pid %d: %d region(s) disabled: the client that enabled them for "
	       "its connection closed it",
	       (int)l->pid, n);
}

void fp_leases_reap(void)
{
	int i;

	for (i = nleases - 1; i >= 0; i--)
		if (leases[i].c->dead) {
			undo(&leases[i]);
			remove_at(i);
		}
	if (!nleases) {
		free(leases);
		leases = NULL;
	}
}
