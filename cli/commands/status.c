// SPDX-License-Identifier: GPL-2.0
/* featprof status and calibrate: the daemon, its targets and groups, its probe cost. */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/core/core.h"
#include "cli/writers/writers.h"
#include "commands_impl.h"

/* The kernel's mechanisms: what each part uses, and what this kernel lacks. */
static void print_kernel(struct json_object *k)
{
	int i;

	if (!k)
		return;
	printf("kernel %s:\n", gets_(k, "release"));
	for (i = 0; i < 2; i++) {
		struct json_object *m = json_object_object_get(k, i ? "unavailable" : "mechanisms");

		if (!m)
			continue;
		json_object_object_foreach(m, name, v)
			printf("  %s%s: %s\n", i ? "unavailable, " : "", name,
			       json_object_get_string(v));
	}
}

static void print_group(struct json_object *g)
{
	struct json_object *ps = geta(g, "processes");
	size_t k;

	printf("%s: %zu processes now, %lld joined, %lld exited, %lld gone before they were "
	       "attached, %lld measured in the sum only\n", gets_(g, "exe"),
	       ps ? json_object_array_length(ps) : 0, (long long)geti(g, "processes_joined"),
	       (long long)geti(g, "processes_exited"), (long long)geti(g, "processes_missed"),
	       (long long)geti(g, "processes_summed"));
	if (ps && json_object_array_length(ps)) {
		printf("  pids:");
		for (k = 0; k < json_object_array_length(ps); k++)
			printf(" %lld", (long long)json_object_get_int64(
						json_object_array_get_idx(ps, k)));
		printf("\n");
	}
}

/* featprof status --exe PATH [--json]: one executable's entry. */
static int status_exe(struct json_object *res, const char *exe, int json)
{
	struct json_object *gs = geta(res, "executables"), *g = NULL;
	size_t i;

	for (i = 0; gs && i < json_object_array_length(gs) && !g; i++)
		if (!strcmp(gets_(json_object_array_get_idx(gs, i), "exe"), exe))
			g = json_object_array_get_idx(gs, i);
	if (!g) {
		fprintf(stderr, "featprof status: %s is not profiled as an executable\n", exe);
		json_object_put(res);
		return 1;
	}
	if (json)
		cli_cmd_print_json(g);
	else
		print_group(g);
	json_object_put(res);
	return 0;
}

int cmd_status(int argc, char **argv)
{
	struct json_object *res, *ts, *gs, *cal = NULL, *at = NULL;
	struct cli_opts o;
	int rc = cli_parse(argc, argv, O_JSON | O_EXE, &o), json = o.json;
	size_t i;

	if (rc || o.npos) {
		fprintf(rc == 1 ? stdout : stderr, "usage: featprof status [--exe PATH] "
			"[--json]\n");
		return rc == 1 ? 0 : 2;
	}
	res = cli_cmd_call("status", 0);
	if (res && o.exe)
		return status_exe(res, o.exe, json);
	if (!res || json)
		return cli_cmd_json_done(res);
	json_object_object_get_ex(res, "calibration", &cal);
	json_object_object_get_ex(res, "attach", &at);
	printf("featprofd: protocol %lld, %lld client(s), %lld subscription(s)\n",
	       (long long)geti(res, "version"), (long long)geti(res, "clients"),
	       (long long)geti(res, "subscriptions"));
	printf("probes: new targets attached at the %s (%s)\n",
	       json_object_get_boolean(json_object_object_get(res, "optimized_uprobes"))
		       ? "shielded nop5"
		       : "nop1 (int3)",
	       gets_(at, "why"));
	for (i = 0; i < 2; i++) {
		struct json_object *c = json_object_object_get(at, i ? "nop5" : "nop1");

		if (!c || !json_object_get_boolean(json_object_object_get(c, "valid")))
			continue;
		printf("  %s: pair %.0f ns (sd %.0f), bias %.0f ns (sd %.0f); begin %.0f+%.0f ns, "
		       "end %.0f+%.0f ns around the timestamp\n", i ? "nop5" : "nop1",
		       getd(c, "pair_ns"), getd(c, "pair_sd_ns"), getd(c, "bias_ns"),
		       getd(c, "bias_sd_ns"), getd(c, "begin_pre_ns"), getd(c, "begin_post_ns"),
		       getd(c, "end_pre_ns"), getd(c, "end_post_ns"));
	}
	printf("  calibrated %lld time(s), last took %.0f ms; compensation of new targets: "
	       "bias %.0f ns, pair %.0f ns\n", (long long)geti(at, "runs"), getd(at, "took_ms"),
	       getd(cal, "bias_ns"), getd(cal, "pair_ns"));
	print_kernel(json_object_object_get(res, "kernel"));
	ts = geta(res, "targets");
	if (!ts || !json_object_array_length(ts))
		printf("no targets\n");
	for (i = 0; ts && i < json_object_array_length(ts); i++) {
		struct json_object *t = json_object_array_get_idx(ts, i), *an, *er;
		size_t k;

		printf("pid %lld (%s)%s: %zu of %lld regions enabled, %lld sites attached\n",
		       (long long)geti(t, "pid"), gets_(t, "comm"),
		       json_object_get_boolean(json_object_object_get(t, "exited")) ? " exited"
										    : "",
		       json_object_array_length(geta(t, "enabled_regions")),
		       (long long)geti(t, "regions"), (long long)geti(t, "attached_sites"));
		er = geta(t, "enabled_regions");
		if (er && json_object_array_length(er)) {
			printf("  enabled:");
			for (k = 0; k < json_object_array_length(er); k++)
				printf(" %s",
				       json_object_get_string(json_object_array_get_idx(er, k)));
			printf("\n");
		}
		if (json_object_object_get_ex(t, "anomalies", &an))
			cli_write_anomalies("  anomalies:", an, NULL);
		if (geti(t, "stray_breakpoints") > 0)
			printf("  %lld probe sites hold a breakpoint featprofd did not put there "
			       "(another tool's, or left behind: featprof repair %lld)\n",
			       (long long)geti(t, "stray_breakpoints"), (long long)geti(t, "pid"));
	}
	if (geti(res, "breakpoints_repaired_at_start") > 0)
		printf("at start: removed the breakpoints of %lld probe sites left by a featprofd "
		       "killed during an attach\n",
		       (long long)geti(res, "breakpoints_repaired_at_start"));
	gs = geta(res, "executables");
	for (i = 0; gs && i < json_object_array_length(gs); i++)
		print_group(json_object_array_get_idx(gs, i));
	json_object_put(res);
	return 0;
}

/* featprof calibrate [--json]: measure the probe cost again (root). */
int cmd_calibrate(int argc, char **argv)
{
	struct json_object *res, *prev = NULL, *at = NULL;
	int i, json, rc = cli_cmd_json_only(argc, argv, &json);

	if (rc)
		return rc < 0 ? 0 : rc;
	res = cli_cmd_call("calibrate", 0);
	if (!res || json)
		return cli_cmd_json_done(res);
	json_object_object_get_ex(res, "previous", &prev);
	json_object_object_get_ex(res, "attach", &at);
	for (i = 0; i < 2; i++) {
		const char *k = i ? "nop5" : "nop1";
		struct json_object *n = json_object_object_get(at, k);
		struct json_object *o = json_object_object_get(prev, k);

		if (!n || !json_object_get_boolean(json_object_object_get(n, "valid")))
			continue;
		printf("%s: pair %.0f ns (sd %.0f), was %.0f ns; bias %.0f ns (sd %.0f), was %.0f "
		       "ns\n",
		       k, getd(n, "pair_ns"), getd(n, "pair_sd_ns"), getd(o, "pair_ns"),
		       getd(n, "bias_ns"), getd(n, "bias_sd_ns"), getd(o, "bias_ns"));
	}
	printf("new targets: %s (%s)\n", gets_(at, "attach_point"), gets_(at, "why"));
	json_object_put(res);
	return 0;
}
