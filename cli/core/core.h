/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every part of featprof's CLI stands on (cli/core/): the one option parser, the
 * client of featprofd's socket and its replies' keys, files written whole or not at all,
 * and the one way a time is written for people.
 */
#ifndef FP_CLI_CORE_H
#define FP_CLI_CORE_H

#include <stdint.h>
#include <stdio.h>

#include "common/protocol.h"

int usage_error(const char *msg);

/* cli/core/opts.c */
#define FP_CLI_MIN_INTERVAL FP_MIN_INTERVAL_MS
enum {
	O_JSON = 1, O_ALL = 2, O_REGIONS = 4, O_INTERVAL = 8, O_COUNT = 16,
	O_FORMAT = 32, O_OUTPUT = 64, O_DURATION = 128, O_VALUE = 256, O_LISTEN = 512,
	O_THRESHOLD = 1024, O_HZ = 2048, O_DEFS = 4096, O_EXE = 8192, O_REMOTE = 16384,
	O_CHECK = 32768, O_TRAP = 65536, O_FUNCTION = 131072, O_FUNCTIONS = 262144,
	O_STACKS = 524288, O_TOP = 1048576, O_UNWIND = 2097152, O_MAX_OVERHEAD = 4194304,
	O_SPLIT_CLONES = 8388608,
	/* run's and model's own (their parsers: cli/commands/run.c, model.c), for help */
	O_CONFIG = 1u << 24, O_MODEL = 1u << 25, O_PLAN = 1u << 26, O_MODEL_FUNCTIONS = 1u << 27,
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
	int split_clones;	/* sample --stacks --split-clones: .constprop.N etc. apart */
	long top;		/* --top N (0: the command's default) */
	double max_overhead;	/* drill --max-overhead PCT (0: the default) */
	char **pos;		/* the arguments that are not options */
	int npos;
};
/* 0, 1 for --help, -1 after printing a one-line error. argv[0] is the subcommand. */
int cli_parse(int argc, char **argv, unsigned allowed, struct cli_opts *o);
/* After a command's usage for --help: the options it takes, each with its meaning, unit
 * and default (nothing where --help was not asked). */
void cli_help_options(FILE *f);
/* For a command with a parser of its own: --help was asked; allowed: its options. */
void cli_help_asked(unsigned allowed);
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
/* The installed definitions and FILE's (may be NULL); 0, or 1 after a one-line error. */
int cli_load_defs(struct fp_regdefs *defs, const char *file, const char *cmd);
/* cli/core/json.c: a reply's key k: 0, "" or NULL when absent. */
int64_t geti(struct json_object *o, const char *k);
double getd(struct json_object *o, const char *k);
const char *gets_(struct json_object *o, const char *k);
struct json_object *geta(struct json_object *o, const char *k);
/* The element of array a whose "name" is name; NULL where none is (or a is NULL). */
struct json_object *getn(struct json_object *a, const char *name);
/* The command being run ("stats"; main.c sets it). */
extern const char *cli_command;
/* What the CLI's JSON output is: "format": "featprof-COMMAND" and "format_version"
 * added to object o where it has no "format" (files with one of their own keep it). */
#define FP_CLI_JSON_VERSION 1
void cli_json_stamp(struct json_object *o);
int client_connect(void);
struct json_object *client_read(int fd);
struct json_object *client_call(int fd, const char *what, struct json_object *req);
/* One request on its own connection: verb and pid (0: none) added to req (NULL: {}),
 * which it consumes. The result, or NULL after a one-line error. */
struct json_object *client_request(const char *what, const char *verb, long pid,
				   struct json_object *req);
/* The same over one connection kept until the command ends; temporary: featprofd undoes
 * the request's change (regions it enabled, sampling it started) when that connection
 * closes, however the command ended (Ctrl-C, kill -9). */
struct json_object *client_request_held(const char *what, const char *verb, long pid,
					struct json_object *req, int temporary);

/* cli/core/files.c: files written whole or not at all: open out.tmp (NULL after a line),
 * then close it and rename it to out when ok (0), else remove it (-1, a line if it
 * failed). */
FILE *cli_open_tmp(const char *out, const char *what, char *tmp, size_t tmplen);
int cli_close_tmp(FILE *f, const char *tmp, const char *out, const char *what, int ok);

/* cli/core/signals.c: SIGINT and SIGTERM set cli_interrupted, and a blocked read or sleep
 * returns at once (no SA_RESTART): a waiting command checks it and stops. */
#include <signal.h>
extern volatile sig_atomic_t cli_interrupted;
void cli_catch_interrupts(void);

/* cli/core/progress.c: a long command's progress on stderr, one line rewritten in place,
 * only where stderr is a terminal (printf's fmt); cleared by cli_progress_done. */
void cli_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_progress_done(void);

/* cli/core/format.c: a time in ns for people, in the unit that fits it ("812 ns",
 * "3.25 us", "41.07 ms", "1.205 s"; negative times too), into buf. */
const char *cli_fmt_ns(double ns, char *buf, size_t len);
/* A region's name as people read it: a function region named after a C++ or Rust symbol
 * ([OBJECT:]SYMBOL) demangled into buf; name itself otherwise (JSON keeps the symbol). */
const char *cli_fmt_region(const char *name, char *buf, size_t len);

#endif
