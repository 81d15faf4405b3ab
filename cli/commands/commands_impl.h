/* SPDX-License-Identifier: GPL-2.0 */
/* The commands' private header (cli/commands/): what args.c gives the others. */
#ifndef FP_CLI_COMMANDS_IMPL_H
#define FP_CLI_COMMANDS_IMPL_H

#include "commands.h"

struct json_object;

/* A reply printed as one line of JSON; a reply asked for with --json printed and
 * released (exit status 1 when there was none). */
void cli_cmd_print_json(struct json_object *o);
int cli_cmd_json_done(struct json_object *res);
/* verb for pid (0: none) on a connection of its own: the reply, NULL after a line. */
struct json_object *cli_cmd_call(const char *verb, long pid);
/* PID [--json] (use: the usage line's words), or --json alone: 0, or the exit status. */
int cli_cmd_pid_args(int argc, char **argv, long *pid, int *json, const char *use);
int cli_cmd_json_only(int argc, char **argv, int *json);
/* A verb that takes a pid and says ok: the exit status. */
int cli_cmd_pid_verb(int argc, char **argv, const char *verb, const char *use);

/* save.c: Welch's t-test of b's mean against a's (n values each, two at least): the
 * means, the change b - a with its 95% interval (Welch-Satterthwaite dof), relative to
 * a, and the two-sided p. */
struct cli_welch {
	double ma, mb, diff, lo, hi, rel, p, df;
};
void cli_cmd_welch(const double *a, int na, const double *b, int nb, struct cli_welch *w);
/* refine.c: model --functions --refine DIR: the coarse model of files[0..n), its hard
 * functions timed in the same runs again (into DIR), the model of those, with each hard
 * function's error before and after ("refined"). A new reference, or NULL with e. */
struct fpm_spec;
struct fp_err;
struct json_object *cli_cmd_refine(char **files, int n, const struct fpm_spec *spec,
				   double fn_min, const char *dir, struct fp_err *e);
/* diff_functions.c: featprof diff --functions A... --to B... (cmd_diff's argv). */
int cmd_diff_functions(int argc, char **argv);

#endif
