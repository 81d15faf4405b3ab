// SPDX-License-Identifier: GPL-2.0
/*
 * The groups' replies and figures as JSON (stats --exe, status, the enable and sample
 * replies): groups.c keeps the membership, this file presents it.
 */
#include <json-c/json.h>
#include <stdint.h>

#include "groups_impl.h"
#include "registry/registry.h"
#include "sample/sample.h"

/* The sites the group's file target has attached for every process, 0: none. */
/* The figures of the file's targets, this one and earlier ones; NULL: none. */
static struct json_object *file_stats(struct fp_group *g)
{
	struct json_object *st = g->file ? fp_registry_stats(g->file) : NULL, *sum = NULL;

	if (!g->file_gone)
		return st;
	json_object_deep_copy(g->file_gone, &sum, NULL);
	if (st) {
		fp_merge_figures(sum, st);
		json_object_put(st);
	}
	return sum;
}

static int shared_sites(const struct fp_group *g)
{
	return g->file && !fp_target__exited(g->file) ? fp_target__attached_sites(g->file) : 0;
}

static struct json_object *pids_json(const struct fp_group *g)
{
	struct json_object *a = json_object_new_array();
	int i;

	for (i = 0; i < g->nlive; i++)
		json_object_array_add(a, json_object_new_int(g->live[i]));
	for (i = 0; i < g->npending; i++)	/* measured already, by the file's link */
		json_object_array_add(a, json_object_new_int(g->pending[i]));
	return a;
}

/* A region the group measures is on in its sum, whichever targets have it (the file's
 * leaves in-process regions of a run to the members, whose figures stay after exit). */
static void mark_wanted(const struct fp_group *g, struct json_object *sum)
{
	struct json_object *regs = json_object_object_get(sum, "regions");
	size_t i, n = json_object_is_type(regs, json_type_array) ? json_object_array_length(regs)
								  : 0;

	for (i = 0; !g->ended && i < n; i++) {	/* a library's too: by the group's wants */
		struct json_object *o = json_object_array_get_idx(regs, i);
		const char *name = json_object_get_string(json_object_object_get(o, "name"));

		if (fp_wants_has(&g->wants, name, json_object_object_get(o, "features")))
			json_object_object_add(o, "enabled", json_object_new_boolean(1));
	}
}

/* The group's figures: the exited members', the file's target's, the live members'. */
struct json_object *fp_group__stats(struct fp_group *g)
{
	struct json_object *sum = NULL, *procs, *shared;
	size_t k;
	int i;

	procs = json_object_new_array();
	json_object_deep_copy(g->exited, &sum, NULL);
	shared = file_stats(g);
	if (shared) {
		fp_merge_figures(sum, shared);
		json_object_object_add(sum, "shared", shared);
	}
	for (i = 0; i < g->nlive; i++) {
		struct fp_target *t = fp_registry_find(g->live[i]);
		struct json_object *one = t ? fp_registry_stats(t) : NULL;

		if (!one)
			continue;
		fp_merge_figures(sum, one);
		json_object_array_add(procs, one);
	}
	for (k = 0; k < json_object_array_length(g->exited_procs); k++)
		json_object_array_add(procs, json_object_get(
					     json_object_array_get_idx(g->exited_procs, k)));
	fp_sample_refigure(sum);
	mark_wanted(g, sum);
	json_object_object_add(sum, "exe", json_object_new_string(g->path));
	json_object_object_add(sum, "processes", procs);
	fp_group__keys(sum, g);
	json_object_object_add(sum, "exited", json_object_new_boolean(g->nlive == 0));
	return sum;
}

struct json_object *fp_groups_status(void)
{
	struct json_object *a = json_object_new_array();
	int i;

	for (i = 0; i < FP_MAX_GROUPS; i++) {
		struct fp_group *g = fp_group_tab[i];
		struct json_object *o;

		if (!g)
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "exe", json_object_new_string(g->path));
		json_object_object_add(o, "processes", pids_json(g));
		fp_group__keys(o, g);
		json_object_object_add(o, "shared_sites", json_object_new_int(shared_sites(g)));
		json_object_array_add(a, o);
	}
	return a;
}

struct json_object *fp_group__enable_reply(const struct fp_group *g, const char *path,
					   bool ended)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "exe", json_object_new_string(path));
	json_object_object_add(o, "processes", pids_json(g));
	json_object_object_add(o, "summed", json_object_new_int64((int64_t)g->summed));
	if (ended)
		json_object_object_add(o, "ended", json_object_new_boolean(1));
	return o;
}

struct json_object *fp_group__sample_reply(const struct fp_group *g, bool on, int started,
					   int failed)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "exe", json_object_new_string(g->path));
	json_object_object_add(o, "sampling", json_object_new_boolean(on));
	json_object_object_add(o, "processes_sampled", json_object_new_int(started));
	json_object_object_add(o, "processes_not_sampled", json_object_new_int(failed));
	return o;
}

struct json_object *fp_group__run_attach_reply(bool own)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "own_target", json_object_new_boolean(own));
	return o;
}

struct json_object *fp_group__run_reply(struct fp_group *g)
{
	struct json_object *o = fp_group__stats(g);

	if (o)
		json_object_object_add(o, "run_pid", json_object_new_int(g->run_pid));
	return o;
}
