// SPDX-License-Identifier: GPL-2.0
/*
 * featprof run [--config K=V,...] [-o FILE] [--json] -- CMD ARGS...: perf stat for
 * features. CMD runs as a child of this process and of this user; featprofd measures it
 * from its exec on (a run: the child and whatever it forks, whatever they exec), so the
 * first region event is counted, and this process reads the whole run's figures once
 * the child has exited. Exit status: CMD's (128 + the signal that killed it; 127 if it
 * could not be executed; 1 if nothing ran because featprofd refused).
 *
 * The file (-o) is the run_finish reply (stats --exe's keys, summed over the run's
 * processes) plus "run": the command, the configuration given (--config: option name ->
 * value, as text), wall_ns (from CMD's entry point to its exit: everything it
 * did), cpu_ns (its CPU time on every thread, user and system), exit_status. featprof
 * model reads such files.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/core/core.h"
#include "cli/writers/writers.h"
#include "commands_impl.h"

struct run_opts {
	const char *out;
	int json;
	struct json_object *config;	/* option -> value (strings), in the order given */
	char **cmd;
	struct cli_opts defs;	/* --regions FILE, --function FEATURE=PATTERN (function
				 * regions) */
	int stacks;		/* --stacks: every process sampled with its call stacks */
	long hz;		/* --hz (default featprofd's, 997) */
	const char *unwind;	/* --unwind fp|dwarf (default dwarf) */
};

/* A name: letters, digits, '_', '-', '.'; a value: anything but ',' and '='. */
static int config_add(struct json_object *cfg, const char *arg)
{
	char *s = strdup(arg), *save = NULL, *kv;
	int ok = s != NULL;

	for (kv = s ? strtok_r(s, ",", &save) : NULL; ok && kv; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');

		ok = eq && eq > kv && eq[1] && !strchr(eq + 1, '=') &&
		     strspn(kv, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.")
			     == (size_t)(eq - kv);
		if (!ok)
			break;
		*eq = 0;
		json_object_object_add(cfg, kv, json_object_new_string(eq + 1));
	}
	if (!ok)
		fprintf(stderr, "featprof run: --config takes NAME=VALUE[,NAME=VALUE...]: '%s'\n",
			arg);
	free(s);
	return ok ? 0 : -1;
}

/* 0, 1 for --help, -1 after a one-line error. */
static int run_parse(int argc, char **argv, struct run_opts *o)
{
	int i;

	o->config = json_object_new_object();
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-')
			break;
		if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			return 1;
		if (!strcmp(a, "--json")) {
			o->json = 1;
		} else if (!strcmp(a, "--stacks")) {
			o->stacks = 1;
		} else if (!strcmp(a, "--hz") && i + 1 < argc) {
			char *end;

			o->hz = strtol(argv[++i], &end, 10);
			if (*end || o->hz < 1 || o->hz > 10000) {
				fprintf(stderr, "featprof run: --hz takes 1..10000: '%s'\n",
					argv[i]);
				return -1;
			}
		} else if (!strcmp(a, "--unwind") && i + 1 < argc) {
			o->unwind = argv[++i];
			if (strcmp(o->unwind, "fp") && strcmp(o->unwind, "dwarf")) {
				fprintf(stderr, "featprof run: --unwind takes fp or dwarf: '%s'\n",
					o->unwind);
				return -1;
			}
		} else if ((!strcmp(a, "--config") || !strcmp(a, "-o") ||
			    !strcmp(a, "--output")) && i + 1 < argc) {
			if (a[2] == 'c' && config_add(o->config, argv[i + 1]))
				return -1;
			if (a[2] != 'c')
				o->out = argv[i + 1];
			i++;
		} else if (!strncmp(a, "--config=", 9)) {
			if (config_add(o->config, a + 9))
				return -1;
		} else if (!strcmp(a, "--function") && i + 1 < argc) {
			if (cli_add_function(&o->defs, "run", argv[++i]))
				return -1;
		} else if (!strcmp(a, "--regions") && i + 1 < argc) {
			o->defs.defs_file = argv[++i];
		} else {
			fprintf(stderr, "featprof run: unknown option or missing value '%s'\n", a);
			return -1;
		}
	}
	if (i >= argc) {
		fprintf(stderr, "featprof run: no command (featprof run [OPTIONS] -- CMD ARGS)\n");
		return -1;
	}
	if ((o->hz || o->unwind) && !o->stacks) {
		fprintf(stderr, "featprof run: --hz and --unwind go with --stacks\n");
		return -1;
	}
	o->cmd = argv + i;
	return 0;
}

/* CMD's file as execvp would find it, made absolute and free of links; NULL after a
 * one-line error. */
static char *resolve(const char *cmd)
{
	const char *path = getenv("PATH"), *p;
	char buf[PATH_MAX];
	struct stat sb;

	char *r;

	if (strchr(cmd, '/')) {
		if (!(r = realpath(cmd, NULL)))
			fprintf(stderr, "featprof run: %s: %s\n", cmd, strerror(errno));
		return r;
	}
	for (p = path && *path ? path : "/usr/local/bin:/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");

		if (snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, n ? p : ".", cmd) <
			    (int)sizeof(buf) && !stat(buf, &sb) && S_ISREG(sb.st_mode) &&
		    !access(buf, X_OK))
			return realpath(buf, NULL);
		p += n + (p[n] == ':');
	}
	fprintf(stderr, "featprof run: %s: command not found\n", cmd);
	return NULL;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The child: says on traced[1] whether it will stop at its exec, waits for the go (a
 * byte on go[0]; EOF: no run), then execs; exec's errno goes to err[1]. */
static void child(const int *go, const int *err, const int *traced, const char *file,
		  char **cmd)
{
	char b, t;
	int e;

	close(go[1]);	/* else the EOF of a refused run never comes */
	close(err[0]);
	close(traced[0]);
	/* stopped by the kernel right after the exec, until the parent has had featprofd
	 * attach a target of its own; where ptrace is refused (Yama's scope 3) it runs on,
	 * measured by the file's link until that target is there */
	t = ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0;
	if (write(traced[1], &t, 1) != 1)
		_exit(127);
	close(traced[1]);
	if (read(go[0], &b, 1) != 1)
		_exit(127);
	close(go[0]);
	execv(file, cmd);
	e = errno;
	if (write(err[1], &e, sizeof(e)) < 0)
		_exit(127);
	_exit(e == ENOENT ? 127 : 126);
}

/* Starts the run of file in featprofd over fd with the child pid (stops: it stops at its
 * exec, so that featprofd attaches it before it runs; defs: the run's definitions, taken):
 * the run's number, or 0 after a one-line error. */
static int start(int fd, pid_t pid, const char *file, bool stops, struct json_object *defs,
		 const struct run_opts *o)
{
	struct json_object *req = json_object_new_object(), *res;
	int run;

	json_object_object_add(req, "verb", json_object_new_string("run_start"));
	json_object_object_add(req, "pid", json_object_new_int(pid));
	json_object_object_add(req, "exe", json_object_new_string(file));
	json_object_object_add(req, "all", json_object_new_boolean(1));
	json_object_object_add(req, "stops_at_exec", json_object_new_boolean(stops));
	if (defs)
		json_object_object_add(req, "definitions", defs);
	if (o->stacks) {
		json_object_object_add(req, "stacks", json_object_new_boolean(1));
		if (o->hz)
			json_object_object_add(req, "hz", json_object_new_int((int)o->hz));
		if (o->unwind)
			json_object_object_add(req, "unwind", json_object_new_string(o->unwind));
	}
	res = client_call(fd, "run", req);
	run = res ? (int)geti(res, "run") : 0;
	json_object_put(res);
	return run;
}

#ifdef __x86_64__
/* The program's entry point (AT_ENTRY of /proc/PID/auxv), 0 if unknown. */
static unsigned long entry_of(pid_t pid)
{
	unsigned long av[2] = { 0, 0 }, at = 0;
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	while (fd >= 0 && !at && read(fd, av, sizeof(av)) == (ssize_t)sizeof(av) && av[0])
		if (av[0] == AT_ENTRY)
			at = av[1];
	if (fd >= 0)
		close(fd);
	return at;
}

/*
 * From the stop at its exec, the child runs on to its entry point (a breakpoint there,
 * taken out again): the dynamic linker has then mapped the libraries the program needs,
 * so the target featprofd attaches has their sites from the first instruction of the
 * program on (at the exec, only the executable and the linker are mapped; a library's
 * first events would be missed until its mapping was seen). Returns the wait status of
 * the stop (at the entry: a SIGTRAP stop), or of the exit that came first.
 */
static int run_to_entry(pid_t pid, int ws)
{
	unsigned long at = entry_of(pid), word;
	struct user_regs_struct regs;
	int sig = 0;

	errno = 0;
	word = at ? (unsigned long)ptrace(PTRACE_PEEKTEXT, pid, (void *)at, NULL) : 0;
	if (!at || errno ||
	    ptrace(PTRACE_POKETEXT, pid, (void *)at, (void *)((word & ~0xffUL) | 0xcc)))
		return ws;	/* attached at the exec, as before */
	for (;;) {
		if (ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig))
			return ws;
		while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
			;
		if (!WIFSTOPPED(ws))
			return ws;	/* gone before its entry */
		sig = WSTOPSIG(ws);
		if (sig == SIGTRAP && !ptrace(PTRACE_GETREGS, pid, NULL, &regs) &&
		    regs.rip == at + 1)
			break;
		sig = sig == SIGTRAP ? 0 : sig;	/* a signal for the program: passed on */
	}
	regs.rip = at;
	ptrace(PTRACE_POKETEXT, pid, (void *)at, (void *)word);
	ptrace(PTRACE_SETREGS, pid, NULL, &regs);
	return ws;
}
#endif

/*
 * The child stopped at its exec (SIGTRAP: we trace it): it runs on to its entry, then
 * featprofd gives it its own target, then it goes on. Any other stop (a signal before
 * the exec) is passed on. True when it ended before its entry (*ws: how). *start: when
 * the program's time begins, its detach: from its entry on (the exec, the dynamic
 * linker's work, the stops and the scheduler's delays in waking this process are not
 * counted: they vary by milliseconds between runs on a busy machine). Where the child
 * could not be held at its entry, from the exec stop's detach.
 */
static bool attach_at_exec(int fd, int run, pid_t pid, int sig, int *ws, uint64_t *start)
{
	struct json_object *req = json_object_new_object(), *res;

#ifdef __x86_64__
	if (sig == SIGTRAP) {
		*ws = run_to_entry(pid, *ws);
		if (!WIFSTOPPED(*ws)) {	/* exited meanwhile: nothing to attach */
			json_object_put(req);
			return true;
		}
	}
#endif
	if (sig == SIGTRAP) {
		json_object_object_add(req, "verb", json_object_new_string("run_attach"));
		json_object_object_add(req, "run", json_object_new_int(run));
		res = client_call(fd, "run", req);	/* if it fails, the file's link has it */
		json_object_put(res);
	} else {
		json_object_put(req);
	}
	ptrace(PTRACE_DETACH, pid, NULL, (void *)(long)(sig == SIGTRAP ? 0 : sig));
	*start = now_ns();
	return false;
}

/*
 * Outside regions, the run's: its wall time less the time in regions (every region's
 * exclusive time) and less featprof's own cost (probes_ns: what compensation took out,
 * which the wall time holds), as featprof model counts it, not only the time between a
 * thread's first and last region event that the probes see. Where threads overlap in
 * regions (their sum is past the wall time) it stays the probes' figure. Kept as base_ns
 * (the table's "(outside regions)"); the probes' as run.between_regions_ns.
 */
static void run_outside(struct json_object *res, uint64_t wall)
{
	struct json_object *regs = geta(res, "regions"), *r = json_object_object_get(res, "run");
	double in = 0, probes;
	size_t k;

	for (k = 0; regs && k < json_object_array_length(regs); k++)
		in += getd(json_object_array_get_idx(regs, k), "exclusive_ns");
	probes = cli_probes_ns(res);
	json_object_object_add(r, "between_regions_ns",
			       json_object_new_int64(geti(res, "base_ns")));
	json_object_object_add(res, "probes_ns", json_object_new_int64((int64_t)probes));
	if (in <= (double)wall)
		json_object_object_add(res, "base_ns", json_object_new_int64(
					       (int64_t)((double)wall - in - probes > 0
							 ? (double)wall - in - probes : 0)));
}

/*
 * The command's CPU time, user and system, on every thread: the kernel's accounting of
 * the CLI's waited-for children, which holds the command and every descendant it waited
 * for itself (an orphan reaped by another process is not in it).
 */
static uint64_t cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_CHILDREN, &ru))
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

/* The run's figures with "run" added; NULL after a one-line error. */
static struct json_object *finish(int fd, int run, const struct run_opts *o, uint64_t wall,
				  int status)
{
	struct json_object *req = json_object_new_object(), *res, *r, *cmd;
	int i;

	json_object_object_add(req, "verb", json_object_new_string("run_finish"));
	json_object_object_add(req, "run", json_object_new_int(run));
	res = client_call(fd, "run", req);
	if (!res)
		return NULL;
	r = json_object_new_object();
	cmd = json_object_new_array();
	for (i = 0; o->cmd[i]; i++)
		json_object_array_add(cmd, json_object_new_string(o->cmd[i]));
	json_object_object_add(r, "command", cmd);
	json_object_object_add(r, "config", json_object_get(o->config));
	json_object_object_add(r, "wall_ns", json_object_new_int64((int64_t)wall));
	json_object_object_add(r, "cpu_ns", json_object_new_int64((int64_t)cpu_ns()));
	json_object_object_add(r, "exit_status", json_object_new_int(status));
	json_object_object_add(res, "run", r);
	run_outside(res, wall);
	return res;
}

/*
 * The run's figures: the table (or --json) on stderr, as time(1) and perf stat write
 * theirs, so that the program's stdout is the program's alone (prog > file gets no
 * table); -o FILE the whole reply. The shared table printer writes to stdout, so stdout
 * is pointed at stderr meanwhile (the program, gone by now, had its own copy).
 */
static int report(struct json_object *res, const struct run_opts *o, pid_t pid)
{
	struct json_object *r = json_object_object_get(res, "run");
	char tmp[PATH_MAX + 8];
	int saved;
	FILE *f;

	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	if (saved < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
		fprintf(stderr, "featprof run: %s\n", strerror(errno));
		if (saved >= 0)
			close(saved);
		return -1;
	}
	if (o->json)
		cli_cmd_print_json(res);
	else {
		cli_write_table(res, pid, "featprof run:");
		if (o->stacks)
			cli_write_run_functions(json_object_object_get(res, "sampling"), 15);
		printf("\nwall %.3f ms from entry to exit, CPU %.3f ms, exit status %d\n",
		       (double)geti(r, "wall_ns") / 1e6, (double)geti(r, "cpu_ns") / 1e6,
		       (int)geti(r, "exit_status"));
	}
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	if (!o->out)
		return 0;
	f = cli_open_tmp(o->out, "run", tmp, sizeof(tmp));
	if (!f)
		return -1;
	cli_json_stamp(res);	/* "featprof-run" */
	fprintf(f, "%s\n", json_object_to_json_string_ext(res, JSON_C_TO_STRING_PRETTY));
	return cli_close_tmp(f, tmp, o->out, "run", 1) ? -1 : 0;
}

int cmd_run(int argc, char **argv)
{
	struct run_opts o = { 0 };
	int go[2], err[2], traced[2], fd = -1, run, ws, e = 0, rc, status;
	struct json_object *res, *defs = NULL;
	char *file = NULL, stops = 0;
	uint64_t t0;
	pid_t pid;

	rc = run_parse(argc, argv, &o);
	if (rc == 1)
		cli_help_asked(O_CONFIG | O_DEFS | O_FUNCTION | O_STACKS | O_HZ | O_UNWIND |
			       O_OUTPUT | O_JSON);
	if (rc == 1)
		printf("usage: featprof run [--config NAME=VALUE,...] [--regions FILE] "
		       "[--function FEATURE=[OBJECT:]PATTERN[,...]]... [--stacks [--hz N] "
		       "[--unwind fp|dwarf]] [-o FILE] [--json] -- CMD ARGS...\n");
	if (!rc && cli_request_defs(&o.defs, &defs))
		rc = -1;
	if (rc || !(file = resolve(o.cmd[0])) || (fd = client_connect()) < 0) {
		json_object_put(o.config);
		json_object_put(defs);
		cli_opts_free(&o.defs);
		free(file);
		return rc == 1 ? 0 : rc < 0 ? 2 : 1;
	}
	cli_opts_free(&o.defs);
	if (pipe2(go, O_CLOEXEC) || pipe2(err, O_CLOEXEC) || pipe2(traced, O_CLOEXEC) ||
	    (pid = fork()) < 0) {
		fprintf(stderr, "featprof run: %s\n", strerror(errno));
		return 1;
	}
	if (!pid)
		child(go, err, traced, file, o.cmd);
	close(go[0]);
	close(err[1]);
	close(traced[1]);
	if (read(traced[0], &stops, 1) != 1)
		stops = 0;
	close(traced[0]);
	run = start(fd, pid, file, stops, defs, &o);
	if (!run) {	/* nothing runs: the child sees no go */
		close(go[1]);
		waitpid(pid, NULL, 0);
		return 1;
	}
	signal(SIGINT, SIG_IGN);	/* the terminal's ^C is the child's to take */
	signal(SIGQUIT, SIG_IGN);
	t0 = now_ns();
	if (write(go[1], "g", 1) != 1)
		fprintf(stderr, "featprof run: %s\n", strerror(errno));
	close(go[1]);
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	if (WIFSTOPPED(ws)) {	/* at its exec: from here on it is CMD */
		t0 = now_ns();
		if (!attach_at_exec(fd, run, pid, WSTOPSIG(ws), &ws, &t0)) {
			while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
				;
		}
	}
	if (read(err[0], &e, sizeof(e)) > 0)
		fprintf(stderr, "featprof run: %s: %s\n", o.cmd[0], strerror(e));
	status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	res = finish(fd, run, &o, now_ns() - t0, status);
	if (res)	/* a figure lost is said on stderr; the status stays CMD's */
		report(res, &o, pid);
	json_object_put(res);
	json_object_put(o.config);
	free(file);
	close(fd);
	return status;
}
