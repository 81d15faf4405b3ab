// SPDX-License-Identifier: GPL-2.0
/*
 * Options of the featprof subcommands: one getopt_long table, each subcommand says which
 * options it takes. Numbers are parsed strictly (the whole argument, in range): "10x"
 * is an error, not 10. Both "--opt value" and "--opt=value" work.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

int parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!*s || strspn(s, "0123456789-") != strlen(s))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int parse_pid(const char *s, long *pid)
{
	return *s == '-' ? -1 : parse_long(s, 1, FP_MAX_PID, pid);
}

void cli_opts_free(struct cli_opts *o)
{
	int i;

	for (i = 0; i < o->nfunc; i++)
		free(o->func_features[i]);
	free(o->func_features);
	free(o->func_text);
	o->func_features = NULL;
	o->func_text = NULL;
	o->nfunc = 0;
}

/* --function FEATURE=PATTERN[,PATTERN...]: one definition line (its patterns checked by
 * the definitions' parser, here and in the daemon). */
int cli_add_function(struct cli_opts *o, const char *cmd, const char *arg)
{
	const char *eq = strchr(arg, '=');
	size_t old = o->func_text ? strlen(o->func_text) : 0;
	char **f, *t;
	int n;

	if (!eq || eq == arg || !eq[1] || strpbrk(arg, " \t\n#")) {
		fprintf(stderr, "featprof %s: --function takes FEATURE=PATTERN[,PATTERN...]: "
			"'%s'\n", cmd, arg);
		return -1;
	}
	n = snprintf(NULL, 0, "region * function %s features %.*s\n", eq + 1,
		     (int)(eq - arg), arg);
	t = realloc(o->func_text, old + (size_t)n + 1);
	f = realloc(o->func_features, sizeof(*f) * (size_t)(o->nfunc + 1));
	if (t)
		o->func_text = t;
	if (f)
		o->func_features = f;
	if (!t || !f || !(f[o->nfunc] = strndup(arg, (size_t)(eq - arg)))) {
		fprintf(stderr, "featprof %s: out of memory\n", cmd);
		return -1;
	}
	o->nfunc++;
	snprintf(t + old, (size_t)n + 1, "region * function %s features %.*s\n", eq + 1,
		 (int)(eq - arg), arg);
	return 0;
}

/* The long options, and which command flag (O_*) each needs. */
static const struct option lopts[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "all", no_argument, NULL, 'a' },
	{ "by-region", no_argument, NULL, 'r' },
	{ "regions", required_argument, NULL, 'R' },
	{ "exe", required_argument, NULL, 'x' },
	{ "interval", required_argument, NULL, 'i' },
	{ "count", required_argument, NULL, 'n' },
	{ "format", required_argument, NULL, 'f' },
	{ "output", required_argument, NULL, 'o' },
	{ "duration", required_argument, NULL, 'd' },
	{ "value", required_argument, NULL, 'V' },
	{ "listen", required_argument, NULL, 'l' },
	{ "threshold", required_argument, NULL, 't' },
	{ "hz", required_argument, NULL, 'z' },
	{ "remote", no_argument, NULL, 'm' },
	{ "check", no_argument, NULL, 'c' },
	{ "trap", no_argument, NULL, 'T' },
	{ "function", required_argument, NULL, 'F' },
	{ "functions", no_argument, NULL, 'U' },
	{ "stacks", no_argument, NULL, 'S' },
	{ "top", required_argument, NULL, 'K' },
	{ "unwind", required_argument, NULL, 'W' },
	{ "max-overhead", required_argument, NULL, 'M' },
	{ "split-clones", no_argument, NULL, 'C' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};
static const struct { int ch; unsigned bit; } need[] = {
	{ 'j', O_JSON }, { 'a', O_ALL }, { 'r', O_REGIONS },
	{ 'i', O_INTERVAL }, { 'n', O_COUNT }, { 'f', O_FORMAT }, { 'o', O_OUTPUT },
	{ 'd', O_DURATION }, { 'V', O_VALUE }, { 'l', O_LISTEN },
	{ 't', O_THRESHOLD }, { 'z', O_HZ }, { 'R', O_DEFS }, { 'x', O_EXE },
	{ 'm', O_REMOTE }, { 'c', O_CHECK }, { 'T', O_TRAP }, { 'F', O_FUNCTION },
	{ 'U', O_FUNCTIONS }, { 'S', O_STACKS }, { 'K', O_TOP },
	{ 'W', O_UNWIND }, { 'M', O_MAX_OVERHEAD }, { 'C', O_SPLIT_CLONES },
	/* options of run's and model's own parsers (no getopt letter: help only) */
	{ 1000, O_CONFIG }, { 1001, O_MODEL | O_PLAN | O_MODEL_FUNCTIONS },
	{ 1002, O_MODEL | O_PLAN }, { 1003, O_MODEL | O_MODEL_FUNCTIONS },
	{ 1004, O_MODEL_FUNCTIONS }, { 1005, O_MODEL_FUNCTIONS }, { 1006, O_PLAN },
	{ 1007, O_MODEL | O_PLAN | O_MODEL_FUNCTIONS }, { 1008, O_PLAN },
};

/*
 * What each option means, with its unit and default: `featprof help COMMAND` (and
 * COMMAND --help) lists, under the command's usage, the ones the command takes; the man
 * page and the completion read that list. Where a command's default differs, its usage
 * line says it (sample's 10 s, drill's 5 s).
 */
static const struct { int ch; const char *flags, *text; } descs[] = {
	{ 'j', "-j, --json", "JSON instead of the table (it names its format and version)" },
	{ 'a', "-a, --all", "every feature of the target" },
	{ 'r', "-r, --by-region", "the names are regions, not features" },
	{ 'R', "--regions FILE", "region definitions of other providers' probes (*.regions)" },
	{ 'F', "--function F=PATTERN", "regions at the functions matching PATTERN (globs, "
	  "[OBJECT:]), in feature F; repeatable" },
	{ 'T', "--trap", "by uprobes, also where the program times itself in-process" },
	{ 'x', "--exe PATH", "every process of the executable PATH, now and later" },
	{ 'i', "-i, --interval TIME", "between tables or lines: a number is ms, or 500ms, 2s, "
	  "1m (default 1s, at least 50ms)" },
	{ 'n', "-n, --count N", "stop after N tables or lines (default: until Ctrl-C or exit)" },
	{ 'd', "-d, --duration TIME", "how long: a number is seconds, or 30s, 5m (whole "
	  "seconds, up to 1h)" },
	{ 'o', "-o, --output FILE", "write FILE (atomically: FILE.tmp renamed when complete)" },
	{ 'f', "-f, --format FMT", "the file's format (pprof: gzip profile.proto; folded: one "
	  "line per stack)" },
	{ 'V', "--value WHAT", "folded's value: wall (default), cpu, offcpu or count" },
	{ 'l', "-l, --listen ADDR:PORT", "where /metrics is served (default 127.0.0.1:9478)" },
	{ 't', "-t, --threshold PCT", "changes smaller than PCT percent are not reported "
	  "(default 5)" },
	{ 'z', "-z, --hz N", "samples a second per thread, 1 to 10000 (default 997)" },
	{ 'm', "--remote", "featprofd's own sampler thread reads the target (Linux 5.18)" },
	{ 'S', "--stacks", "call stacks too: per function, self and total time" },
	{ 'W', "--unwind fp|dwarf", "stacks by frame pointers, or by DWARF CFI from a copy "
	  "of the stack (default dwarf)" },
	{ 'C', "--split-clones", "a function's compiler clones (.constprop.0, .cold) apart" },
	{ 'K', "--top N", "the N first rows, 1 to 1000" },
	{ 'M', "--max-overhead PCT", "leave out a function whose probes would cost more "
	  "(default 5)" },
	{ 'U', "--functions", "functions, not regions" },
	{ 'c', "--check", "say what would be repaired, change nothing" },
	{ 1000, "--config NAME=V,...", "the run's configuration, kept in the file for "
	  "featprof model; repeatable" },
	{ 1001, "--choices NAME=V1|V2", "a one-of group: exactly one of the options is on "
	  "in every run; repeatable" },
	{ 1002, "--parallel NAME", "a numeric option that sets the number of threads" },
	{ 1003, "--predict NAME=V,...", "a configuration's predicted times, with 95% "
	  "intervals" },
	{ 1004, "--min-share PCT", "functions with at least PCT of the runs' time "
	  "(default 1)" },
	{ 1005, "--refine DIR", "time the functions the model fits worst exactly, by "
	  "running the runs again (files into DIR)" },
	{ 1006, "--constraint RULE", "NAME=V&...[->NAME=V]: configurations the plan must "
	  "keep to; repeatable" },
	{ 1007, "--functions", "a model per function from the runs' call stacks "
	  "(featprof run --stacks)" },
	{ 1008, "--next N", "with runs: the N configurations that most reduce the chosen "
	  "wall model's uncertainty, 1 to 100" },
};
static unsigned help_allowed;
static int help_asked;

/* "  FLAGS  TEXT", TEXT wrapped at spaces within 80 columns under itself */
static void help_line(FILE *f, const char *flags, const char *text)
{
	const int col = 25, width = 80 - col;
	int len;

	fprintf(f, "  %-22s ", flags);
	while ((len = (int)strlen(text)) > width) {
		int cut = width;

		while (cut > 0 && text[cut] != ' ')
			cut--;
		if (!cut)
			break;
		fprintf(f, "%.*s\n%*s", cut, text, col, "");
		text += cut + 1;
	}
	fprintf(f, "%s\n", text);
}

void cli_help_asked(unsigned allowed)
{
	help_asked = 1;
	help_allowed = allowed;
}

void cli_help_options(FILE *f)
{
	size_t i, k;

	if (!help_asked)
		return;
	help_asked = 0;
	fprintf(f, "options:\n");
	for (i = 0; i < sizeof(descs) / sizeof(descs[0]); i++)
		for (k = 0; k < sizeof(need) / sizeof(need[0]); k++)
			if (need[k].ch == descs[i].ch && (help_allowed & need[k].bit))
				help_line(f, descs[i].flags, descs[i].text);
	help_line(f, "-h, --help", "this help");
}

/* A time: a whole number with a unit (ms, s, m, h), or without one in unit_ms, into
 * *ms. 0, or -1. */
static int parse_ms(const char *s, long unit_ms, long *ms)
{
	static const struct { const char *sfx; long ms; } units[] = {
		{ "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 },
	};
	size_t digits = strspn(s, "0123456789"), k;
	char num[24];
	long v;

	if (!digits || digits >= sizeof(num))
		return -1;
	memcpy(num, s, digits);
	num[digits] = 0;
	if (parse_long(num, 0, 1L << 40, &v))
		return -1;
	if (!s[digits]) {
		*ms = v * unit_ms;
		return 0;
	}
	for (k = 0; k < sizeof(units) / sizeof(units[0]); k++)
		if (!strcmp(s + digits, units[k].sfx)) {
			*ms = v * units[k].ms;
			return 0;
		}
	return -1;
}

/* An option that takes a number in its range: 0, or -1 (said). */
static int take_number(struct cli_opts *o, int c, const char *cmd, const char *arg)
{
	char *end;
	long ms;

	switch (c) {
	case 'M':
		o->max_overhead = strtod(arg, &end);
		if (*end || end == arg || !(o->max_overhead > 0 && o->max_overhead <= 100)) {
			fprintf(stderr, "featprof %s: --max-overhead takes a percentage over 0 "
				"and up to 100: '%s'\n", cmd, arg);
			return -1;
		}
		break;
	case 'K':
		if (parse_long(arg, 1, 1000, &o->top)) {
			fprintf(stderr, "featprof %s: --top takes 1 to 1000: '%s'\n",
				cmd, arg);
			return -1;
		}
		break;
	case 'i':
		if (parse_ms(arg, 1, &ms) || ms < FP_CLI_MIN_INTERVAL || ms > FP_MAX_INTERVAL_MS) {
			fprintf(stderr, "featprof %s: --interval takes %d ms to %d s (a number "
				"is milliseconds; or 500ms, 2s): '%s'\n", cmd,
				FP_CLI_MIN_INTERVAL, FP_MAX_INTERVAL_MS / 1000, arg);
			return -1;
		}
		o->interval = ms;
		break;
	case 'z':
		if (parse_long(arg, FP_MIN_HZ, FP_MAX_HZ, &o->hz)) {
			fprintf(stderr, "featprof %s: --hz takes %d to %d: '%s'\n",
				cmd, FP_MIN_HZ, FP_MAX_HZ, arg);
			return -1;
		}
		break;
	case 'd':
		if (parse_ms(arg, 1000, &ms) || ms % 1000 || ms < 1000 ||
		    ms > FP_MAX_RECORD_MS) {
			fprintf(stderr, "featprof %s: --duration takes whole seconds, 1 to %d "
				"(a number is seconds; or 30s, 5m): '%s'\n", cmd,
				FP_MAX_RECORD_MS / 1000, arg);
			return -1;
		}
		o->duration = ms / 1000;
		break;
	case 'n':
		if (parse_long(arg, 0, 1L << 40, &o->count)) {
			fprintf(stderr, "featprof %s: --count takes a number: '%s'\n",
				cmd, arg);
			return -1;
		}
		break;
	}
	return 0;
}

static int take_option(struct cli_opts *o, int c, const char *cmd, char *arg)
{
	switch (c) {
	case 'j':
		o->json = 1;
		break;
	case 'a':
		o->all = 1;
		break;
	case 'r':
		o->regions = 1;
		break;
	case 'm':
		o->remote = 1;
		break;
	case 'c':
		o->check = 1;
		break;
	case 'T':
		o->trap = 1;
		break;
	case 'U':
		o->functions = 1;
		break;
	case 'S':
		o->stacks = 1;
		break;
	case 'C':
		o->split_clones = 1;
		o->stacks = 1;
		break;
	case 'W':
		if (strcmp(arg, "fp") && strcmp(arg, "dwarf")) {
			fprintf(stderr, "featprof %s: --unwind takes fp or dwarf: '%s'\n",
				cmd, arg);
			return -1;
		}
		o->unwind = arg;
		o->stacks = 1;
		break;
	case 'F':
		if (cli_add_function(o, cmd, arg))
			return -1;
		break;
	case 'f':
		o->format = arg;
		break;
	case 'o':
		o->output = arg;
		break;
	case 'V':
		o->value = arg;
		break;
	case 'l':
		o->listen = arg;
		break;
	case 't':
		o->threshold = arg;
		break;
	case 'R':
		o->defs_file = arg;
		break;
	case 'x':
		if (arg[0] != '/') {
			fprintf(stderr, "featprof %s: --exe takes an absolute path: '%s'\n",
				cmd, arg);
			return -1;
		}
		o->exe = arg;
		break;
	case 'M':
	case 'i':
	case 'z':
	case 'd':
	case 'n':
	case 'K':
		return take_number(o, c, cmd, arg);
	}
	return 0;
}

int cli_parse(int argc, char **argv, unsigned allowed, struct cli_opts *o)
{
	int c, k;

	memset(o, 0, sizeof(*o));
	o->interval = 1000;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":jari:n:f:o:d:l:t:z:h", lopts, NULL)) != -1) {
		if (c == 'h') {
			help_asked = 1;
			help_allowed = allowed;
			return 1;
		}
		if (c == '?' || c == ':') {
			fprintf(stderr, "featprof %s: %s option '%s'\n", argv[0],
				c == ':' ? "missing value for" : "unknown", argv[optind - 1]);
			return -1;
		}
		for (k = 0; k < (int)(sizeof(need) / sizeof(need[0])); k++)
			if (need[k].ch == c && !(allowed & need[k].bit)) {
				fprintf(stderr, "featprof %s: option '%s' does not apply here\n",
					argv[0], argv[optind - 1]);
				return -1;
			}
		if (take_option(o, c, argv[0], optarg))
			return -1;
	}
	o->pos = argv + optind;
	o->npos = argc - optind;
	return 0;
}
