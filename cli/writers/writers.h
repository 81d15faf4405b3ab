/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The writers (cli/writers/): featprofd's replies turned into what people and other
 * tools read (tables, pprof, folded stacks). They print or write; they never ask
 * featprofd. Writers that write a file return 0, or 1 (a line said why) or -errno.
 */
#ifndef FP_CLI_WRITERS_H
#define FP_CLI_WRITERS_H

#include <stdint.h>
#include <stdio.h>

struct json_object;

/* table.c: the stats table of a stats reply or push (pid and title head it); the
 * anomaly counters that are not zero after prefix, on one line, less those expected
 * (the reply's anomalies_expected, or NULL), which get a line of their own. */
void cli_write_table(struct json_object *st, long pid, const char *title);
void cli_write_anomalies(const char *prefix, struct json_object *an,
			 struct json_object *expected);
/* featprof's own cost in a stats reply: the probe time compensation took out of the
 * regions and out of the time between them (raw less compensated, summed); the reply's
 * "probes_ns" where it has one (featprof run's, whose outside time is the wall's). */
double cli_probes_ns(struct json_object *st);

/* pprof.c: a gzip-compressed profile.proto of stats (a stats reply) and cat (the list
 * reply); of a sampling report's call stacks. 0 or -errno. */
int cli_write_pprof(FILE *f, struct json_object *st, struct json_object *cat, long pid,
		    int64_t duration_ns);
int cli_write_stacks_pprof(FILE *f, struct json_object *sm, long pid, int64_t duration_ns);

/* stacks.c: sample --stacks' table (top functions per feature, region and outside
 * regions) and the folded lines of a sampling report sm. */
void cli_write_stacks_table(struct json_object *sm, long top);
/* featprof run --stacks: the run's top functions by self time (sampling report sm's
 * "functions", every sample's), each with its CPU time estimates and standard errors. */
void cli_write_run_functions(struct json_object *sm, long top);
int cli_write_stacks_folded(FILE *f, struct json_object *sm);

/* folded.c: one line per region path of stats (a stats reply) with its figure key
 * ("exclusive_ns", ...; "sampled_ns": the sampler's paths): 0, -EIO (said: not sampled)
 * or -EINVAL (no paths). */
int cli_write_folded(FILE *f, struct json_object *st, const char *key);

/* html.c: featprof report's page of stats (a stats reply) from source (what it was
 * read from, shown): one self-contained HTML file. 0 or -errno. */
int cli_write_html(FILE *f, struct json_object *st, const char *source);
/* html.c: featprof report A... --to B...: a page with the differential flame graph of
 * run files b (nb, of featprof run --stacks) against a (na), each side a mean run, B's
 * speed factor taken out. 0, -EINVAL (a side without samples) or -EIO. */
int cli_write_html_diff(FILE *f, struct json_object **a, int na, struct json_object **b,
			int nb);

/* trace.c: a recording's instances (the record pushes' "events" arrays, added as they
 * come: 0 or -ENOMEM) written as a Chrome trace once it is done (done: its last push;
 * names: the regions' names; ring: its size), compensated: 0 or -ENOMEM. */
struct cli_trace;
struct cli_trace *cli_trace__new(void);
void cli_trace__free(struct cli_trace *t);
int cli_trace__add(struct cli_trace *t, struct json_object *events);
int cli_trace__write(struct cli_trace *t, FILE *f, struct json_object *names,
		     struct json_object *done, long pid, uint32_t ring);

#endif
