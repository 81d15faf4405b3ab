// SPDX-License-Identifier: GPL-2.0
/* featprof: the command line client. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands/commands.h"
#include "cli/core/core.h"
#include "usdt/featprof_abi.h"	/* FEATPROF_VERSION */

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct cmd cmds[] = {
	{ "list", cmd_list,
	  "list PID|PATH [--regions FILE] [--function F=PAT]... [--json]  its regions, sites\n"
	  "     PID|PATH --functions [[OBJECT:]PATTERN]  the functions that can be regions" },
	{ "enable", cmd_enable,
	  "enable PID|--exe PATH FEATURE...|--all [--by-region]\n"
	  "                                        [--regions FILE] [--function F=PATTERN]...\n"
	  "                                        start measuring" },
	{ "disable", cmd_disable, "disable PID|--exe PATH FEATURE...|--all [--by-region]" },
	{ "status", cmd_status, "status [--exe PATH] [--json]        targets, probes, anomalies" },
	{ "stats", cmd_stats, "stats PID|--exe PATH [--json]       figures since enable/reset" },
	{ "top", cmd_top, "top PID|--exe PATH [--interval MS] [--count N]  live table" },
	{ "stream", cmd_stream,
	  "stream PID|--exe PATH [--interval MS] [--count N]  JSON lines of deltas" },
	{ "reset", cmd_reset, "reset PID                           zero the figures" },
	{ "calibrate", cmd_calibrate, "calibrate [--json]                  probe cost, again" },
	{ "detach", cmd_detach, "detach PID                          drop the target" },
	{ "repair", cmd_repair, "repair PID [--check] [--json]       clear stray int3s" },
	{ "metrics", cmd_metrics, "metrics [--listen ADDR:PORT] [PID...]  serve /metrics" },
	{ "sample", cmd_sample,
	  "sample PID|--exe PATH [--hz N] [--duration S] [--remote]  sampled time\n"
	  "     PID --stacks [--unwind fp|dwarf] [--top N] [-o FILE --format folded|pprof]\n"
	  "                                        and which functions it goes to" },
	{ "drill", cmd_drill,
	  "drill PID REGION [--top N] [--duration S]  its hottest functions, timed inside it" },
	{ "record", cmd_record, "record PID --duration S -o trace.json   timeline" },
	{ "save", cmd_save, "save PID --duration S -o FILE       per-interval figures" },
	{ "diff", cmd_diff, "diff A B [--threshold PCT]          regressions, Welch's t\n"
	  "     --functions A... --to B...         which functions changed (run files)" },
	{ "report", cmd_report, "report PID|FILE -o report.html      one-page HTML" },
	{ "run", cmd_run,
	  "run [--config K=V,...] [--function F=PAT]... [-o FILE] [--json] -- CMD ARGS\n"
	  "     [--stacks [--hz N] [--unwind fp|dwarf]]  a whole run, measured (and sampled)" },
	{ "model", cmd_model,
	  "model FILE... [--predict K=V,...] [--json] | model --plan FILE\n"
	  "     --functions FILE... [--min-share PCT]  per function (run --stacks files)\n"
	  "                                        options' and interactions' influence" },
	{ "export", cmd_export, "export PID --format pprof|folded|json [-o FILE] [--duration S]" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: featprof [--socket PATH] COMMAND [ARGS]\n"
		   "  socket: --socket, else $FEATPROF_SOCKET, else %s\n\ncommands:\n",
		FP_DEFAULT_SOCKET);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %s\n", cmds[i].help);
	fprintf(f, "\nCommands may be abbreviated to any unique prefix; featprof help COMMAND (or "
		   "COMMAND --help)\nsays what it takes. featprof --version (-V) prints the "
		   "version.\n");
}

int usage_error(const char *msg)
{
	fprintf(stderr, "featprof: %s (see featprof --help)\n", msg);
	return 2;
}

/* The command name names: itself, else the one command it is a prefix of. NULL after a
 * line (none, or several: they are listed). */
static const struct cmd *command(const char *name)
{
	const struct cmd *found = NULL;
	size_t i, len = strlen(name), n = 0;
	char cands[512] = "";

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(cmds[i].name, name))
			return &cmds[i];
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strncmp(cmds[i].name, name, len))
			continue;
		found = &cmds[i];
		snprintf(cands + strlen(cands), sizeof(cands) - strlen(cands), "%s%s",
			 n++ ? ", " : "", cmds[i].name);
	}
	if (n == 1)
		return found;
	if (n)
		fprintf(stderr, "featprof: ambiguous command '%s': %s (see featprof --help)\n",
			name, cands);
	else
		fprintf(stderr, "featprof: unknown command '%s' (see featprof --help)\n", name);
	return NULL;
}

int main(int argc, char **argv)
{
	const struct cmd *found;
	int a = 1, rc;

	while (a < argc && argv[a][0] == '-') {
		if (!strcmp(argv[a], "-h") || !strcmp(argv[a], "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[a], "--socket") && a + 1 < argc) {
			socket_path = argv[a + 1];
			a += 2;
		} else if (!strncmp(argv[a], "--socket=", 9)) {
			socket_path = argv[a] + 9;
			a++;
		} else if (!strcmp(argv[a], "--commands")) {	/* completion, man page */
			size_t i;

			for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
				printf("%s\n", cmds[i].name);
			return 0;
		} else if (!strcmp(argv[a], "--summary") && a + 1 < argc) {	/* man page */
			found = command(argv[a + 1]);
			if (!found)
				return 2;
			printf("%s\n", found->help);
			return 0;
		} else if (!strcmp(argv[a], "--version") || !strcmp(argv[a], "-V")) {
			printf("featprof %s\n", FEATPROF_VERSION);
			return 0;
		} else {
			fprintf(stderr, "featprof: unknown option '%s' (see featprof --help)\n",
				argv[a]);
			return 2;
		}
	}
	if (a >= argc) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[a], "help")) {	/* featprof help [COMMAND]: its --help */
		static char help_opt[] = "--help";
		char *args[3];

		if (a + 1 >= argc) {
			usage(stdout);
			return 0;
		}
		found = command(argv[a + 1]);
		if (!found)
			return 2;
		args[0] = argv[a + 1];
		args[1] = help_opt;
		args[2] = NULL;
		rc = found->fn(2, args);
		cli_help_options(stdout);
		return rc;
	}
	found = command(argv[a]);
	if (!found)
		return 2;
	cli_command = found->name;
	rc = found->fn(argc - a, argv + a);
	cli_help_options(stdout);
	return rc;
}
