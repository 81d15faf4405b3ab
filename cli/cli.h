/* SPDX-License-Identifier: GPL-2.0 */
/* featprof, the CLI (cli/): the command table, the one option parser, the commands, their
 * writers and the model. What its files call of each other. */
#ifndef FP_CLI_H
#define FP_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "common/protocol.h"

int usage_error(const char *msg);

/* cli/opts.c */
#define FP_CLI_MIN_INTERVAL FP_MIN_INTERVAL_MS
enum {
	O_JSON = 1, O_ALL = 2, O_REGIONS = 4, O_INTERVAL = 8, O_COUNT = 16,
	O_FORMAT = 32, O_OUTPUT = 64, O_DURATION = 128, O_VALUE = 256, O_LISTEN = 512,
	O_THRESHOLD = 1024, O_HZ = 2048, O_DEFS = 4096, O_EXE = 8192, O_REMOTE = 16384,
	O_CHECK = 32768, O_TRAP = 65536, O_FUNCTION = 131072, O_FUNCTIONS = 262144,
	O_STACKS = 524288, O_TOP = 1048576, O_UNWIND = 2097152,
};
struct cli_opts {
	int json, all, regions, remote, check, trap;
	long interval, count, duration, hz;
	const char *format, *output, *value, *listen, *threshold;
	const char *defs_file;	/* --regions FILE: region definitions */
	const char *exe;	/* --exe PATH: an executable's processes */
	/* --function FEATURE=PATTERN[,...] (repeatable), as definition lines
	 * ("region * function PATTERNS features FEATURE"), and the features they name */
	char *func_text;
	char **func_features;
	int nfunc;
	int functions;		/* list --functions */
	int stacks;		/* sample --stacks */
	const char *unwind;	/* sample --unwind fp|dwarf */
	long top;		/* --top N (0: the command's default) */
	char **pos;		/* the arguments that are not options */
	int npos;
};
/* 0, 1 for --help, -1 after printing a one-line error. argv[0] is the subcommand. */
int cli_parse(int argc, char **argv, unsigned allowed, struct cli_opts *o);
struct json_object;
/* What cli_parse allocated (--function). */
void cli_opts_free(struct cli_opts *o);
/* One --function FEATURE=PATTERN[,...] into o (cmd names the command in messages): 0, or
 * -1 after a one-line error. */
int cli_add_function(struct cli_opts *o, const char *cmd, const char *arg);
/* The request's "definitions": --regions FILE's and --function's, as an array of
 * {"name", "text"} (NULL: none); 0, or 1 after a one-line error. */
int cli_request_defs(const struct cli_opts *o, struct json_object **out);
int parse_long(const char *s, long min, long max, long *out);
int parse_pid(const char *s, long *pid);

struct json_object;
struct fp_regdefs;
extern const char *socket_path;
/* cli/list.c: reads --regions FILE (checked here) into {"name", "text"} for a request;
 * NULL after a one-line error. */
struct json_object *cli_definitions(const char *path);
/* The installed definitions and FILE's (may be NULL); 0, or 1 after a one-line error. */
int cli_load_defs(struct fp_regdefs *defs, const char *file, const char *cmd);
/* A reply's key k: 0, "" or NULL when absent. */
int64_t geti(struct json_object *o, const char *k);
double getd(struct json_object *o, const char *k);
const char *gets_(struct json_object *o, const char *k);
struct json_object *geta(struct json_object *o, const char *k);
int client_connect(void);
struct json_object *client_read(int fd);
struct json_object *client_call(int fd, const char *what, struct json_object *req);
/* One request on its own connection: verb and pid (0: none) added to req (NULL: {}),
 * which it consumes. The result, or NULL after a one-line error. */
struct json_object *client_request(const char *what, const char *verb, long pid,
				   struct json_object *req);

int cmd_list(int argc, char **argv);
int cmd_enable(int argc, char **argv);
int cmd_disable(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_stream(int argc, char **argv);
int cmd_reset(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_metrics(int argc, char **argv);
int cmd_save(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_sample(int argc, char **argv);
int cmd_drill(int argc, char **argv);
/* cli/save.c: files written whole or not at all: open out.tmp (NULL after a line), then
 * close it and rename it to out when ok (0), else remove it (-1, a line if it failed). */
FILE *fp_open_tmp(const char *out, const char *what, char *tmp, size_t tmplen);
int cli_close_tmp(FILE *f, const char *tmp, const char *out, const char *what, int ok);

int cmd_run(int argc, char **argv);
int cmd_model(int argc, char **argv);
/* cli/commands.c: the stats table of a stats reply (pid and title head it). */
void cli_print_stats(struct json_object *st, long pid, const char *title);

int cmd_detach(int argc, char **argv);
int cmd_repair(int argc, char **argv);

/* cli/pprof.c: a gzip-compressed profile.proto of stats (a stats reply) and cat (the
 * list reply). 0 or -errno. */
int fp_write_pprof(FILE *f, struct json_object *st, struct json_object *cat, long pid,
		   int64_t duration_ns);

/* cli/stacks.c: sample --stacks' table (top functions per feature, region and outside
 * regions) and folded lines of a sampling report sm; cli/pprof.c its pprof profile. The
 * writers return 0, or 1 (a line said why) or -errno. */
void stacks_table(struct json_object *sm, long top);
int stacks_write_folded(FILE *f, struct json_object *sm);
int fp_write_stacks_pprof(FILE *f, struct json_object *sm, long pid, int64_t duration_ns);

/* Student's t (cli/tdist.c): P(|T| > t) with df degrees of freedom; the t with that
 * probability p; the two-sided 95% point (1.96 for dof <= 0: a normal). */
double cli_t_two_sided(double t, double df);
double cli_t_quantile(double p, double df);
double cli_t975(int dof);

#endif
