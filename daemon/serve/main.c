// SPDX-License-Identifier: GPL-2.0
/* featprofd: arguments, calibration, systemd readiness, then the server loop. */
#include <bpf/libbpf.h>
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "calibrate/calibrate.h"
#include "usdt/featprof_abi.h"	/* FEATPROF_VERSION */
#include "inproc/ip_calibrate.h"
#include "targets/target.h"
#include "kern/kernel.h"
#include "util/log.h"
#include "common/protocol.h"
#include "serve_impl.h"

static struct fp_daemon_cal cal;

/* libbpf's messages go through the daemon's log: its warnings (a verifier rejection,
 * a missing kernel feature) as warnings, the rest at debug level. */
/*
 * libbpf's messages, one log line each. A program the verifier rejects comes as one
 * message of many lines (libbpf's "-- BEGIN PROG LOAD LOG --" block) whose reason and
 * source line are at its end: a warning keeps its last VERIFIER_TAIL lines, each a log
 * line of its own (all of them with -v), instead of the first kilobyte.
 */
#define VERIFIER_TAIL 16

static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	int lvl = level == LIBBPF_WARN ? FP_LOG_WARN : FP_LOG_DEBUG, n = 0, skip;
	char *msg = NULL, *p, *nl;

	if (lvl > fp_log_level)
		return 0;
	if (vasprintf(&msg, fmt, ap) < 0)
		return 0;
	for (p = msg; *p; p++)
		n += *p == '\n' && p[1];
	skip = fp_log_level < FP_LOG_DEBUG && n >= VERIFIER_TAIL ? n + 1 - VERIFIER_TAIL : 0;
	if (skip)
		fp_log(lvl, "libbpf: (%d lines of the load log left out; featprofd -v shows them)",
		       skip);
	for (p = msg; p && *p; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		if (nl)
			*nl = 0;
		if (skip > 0)
			skip--;
		else if (*p)
			fp_log(lvl, "%s", p);
	}
	free(msg);
	return 0;
}

/* sd_notify without libsystemd: one datagram to $NOTIFY_SOCKET. */
static void notify(const char *msg)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;
	int fd;

	if (!path || (path[0] != '/' && path[0] != '@') || strlen(path) >= sizeof(sa.sun_path))
		return;
	strcpy(sa.sun_path, path);
	if (path[0] == '@')
		sa.sun_path[0] = 0;
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa, len) < 0)
		fp_log(FP_LOG_WARN, "sd_notify: %s", strerror(errno));
	close(fd);
}

static void ready(void)
{
	notify("READY=1");
}

/* beside the socket, not its folder: the journal's folder is root's alone (0700), the
 * socket's must let the --group (or the socket unit's group) reach the socket */
#define FP_DEFAULT_STATE_DIR "/run/featprof/state"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: featprofd [--socket PATH] [--group GROUP] [--site auto|nop1|nop5] [-v|-q]\n"
		"                 [--regions-dir DIR] [--state-dir DIR] [--version]\n"
		"  --socket PATH  listen here (default %s; systemd socket activation "
		"is used when LISTEN_FDS is set)\n"
		"  --group GROUP  members of GROUP may connect (default: root only)\n"
		"  --site WHERE   auto (default): the attach point measured cheaper at start-up;\n"
		"                 nop1: the 1-byte nop (int3 path); nop5: the shielded nop5\n"
		"                 (optimized call) where the kernel optimizes it\n"
		"  --regions-dir DIR  region definitions of other providers' probes, *.regions\n"
		"                 (default %s)\n"
		"  --state-dir DIR  the attach journal (default %s; a tmpfs: it only\n"
		"                 has to outlive featprofd, not the machine)\n",
		FP_DEFAULT_SOCKET, fp_regdefs__default_dir(), FP_DEFAULT_STATE_DIR);
}

/*
 * Each target costs descriptors (its BPF maps, programs and links, ~30), so the usual soft
 * limit of 1,024 fits ~30 targets. The soft limit goes up to the hard one (raising it that
 * far needs no privilege; the unit sets the hard one with LimitNOFILE); everything here
 * waits with epoll, so descriptors above 1,023 are fine.
 */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		rlim_t was = rl.rlim_cur;

		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			fp_log(FP_LOG_WARN, "cannot raise the descriptor limit from %llu to %llu: "
			       "%s", (unsigned long long)was, (unsigned long long)rl.rlim_max,
			       strerror(errno));
	}
	getrlimit(RLIMIT_NOFILE, &rl);
	fp_log(FP_LOG_INFO, "descriptor limit %llu", (unsigned long long)rl.rlim_cur);
}

struct args {
	struct fp_server_opts o;
	const char *regions_dir, *state_dir;
};

/* The command line into a; -1: exit 0 (help, version), 1: exit 2 (bad usage), 0: go on. */
static int parse_args(int argc, char **argv, struct args *a)
{
	static const struct option lopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "group", required_argument, NULL, 'g' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "site", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "regions-dir", required_argument, NULL, 'R' },
		{ "state-dir", required_argument, NULL, 'D' },
		{ NULL, 0, NULL, 0 },
	};
	struct group *grp;
	int c;

	while ((c = getopt_long(argc, argv, "s:g:vqh", lopts, NULL)) != -1) {
		switch (c) {
		case 's':
			a->o.socket_path = optarg;
			break;
		case 'g':
			grp = getgrnam(optarg);
			if (!grp) {
				fprintf(stderr, "featprofd: no group '%s'\n", optarg);
				return 1;
			}
			a->o.gid = grp->gr_gid;
			break;
		case 'S':
			if (!strcmp(optarg, "nop1")) {
				a->o.site = FP_SITE_NOP1;
			} else if (!strcmp(optarg, "nop5")) {
				a->o.site = FP_SITE_NOP5;
			} else if (strcmp(optarg, "auto")) {
				fprintf(stderr, "featprofd: --site takes auto, nop1 or nop5\n");
				return 1;
			}
			break;
		case 'R':
			a->regions_dir = optarg;
			break;
		case 'D':
			a->state_dir = optarg;
			break;
		case 'v':
			fp_log_level = FP_LOG_DEBUG;
			break;
		case 'q':
			fp_log_level = FP_LOG_WARN;
			break;
		case 'h':
			usage(stdout);
			return -1;
		case 'V':
			printf("featprofd %s (protocol %d)\n", FEATPROF_VERSION, FP_PROTO_VERSION);
			return -1;
		default:
			usage(stderr);
			return 1;
		}
	}
	return 0;
}

static double gap_pair(const struct fp_calibration *k, int b)
{
	return k->point_ns[b][0] + k->point_ns[b][1] + k->point_ns[b][2] + k->point_ns[b][3];
}

/* The probe costs at start: 0, or -1 (logged: featprofd cannot run here). */
static int calibrate_at_start(enum fp_site_choice site)
{
	struct fp_err e = { 0 };
	int c;

	if (fp_kernel_missing(&e)) {	/* one line, before any load */
		fp_log(FP_LOG_ERR, "%s", e.msg);
		return -1;
	}
	if (fp_calibrate(&cal, site, &e)) {
		fp_log(FP_LOG_ERR, "calibration failed: %s (the verifier's lines, if any, are "
		       "above)", e.msg);
		return -1;
	}
	for (c = 0; c < FP_AT_N; c++) {
		const struct fp_calibration *k = &cal.at[c];

		if (k->valid)
			fp_log(FP_LOG_INFO,
			       "%s: pair cost %.0f ns (sd %.0f), bias %.0f ns (sd %.0f); "
			       "begin %.0f+%.0f, end %.0f+%.0f ns around the timestamp; by the "
			       "gap since the thread's previous probe: %.0f (at once, %.1f us), "
			       "%.0f (%.1f us), %.0f (%.0f us), %.0f (%.0f us), %.0f (%.1f ms), "
			       "%.0f (cold) ns a pair",
			       c == FP_AT_NOP5	 ? "shielded nop5"
			       : c == FP_AT_FUNC ? "function entry (a push) and return"
			       : c == FP_AT_FUNC_STEP
				       ? "function entry (single-stepped) and return"
				       : "nop1",
			       k->pair_ns, k->pair_sd,
			       k->bias_ns, k->bias_sd, k->part_ns[0], k->part_ns[1], k->part_ns[2],
			       k->part_ns[3], gap_pair(k, FP_CAL_ONCE),
			       k->point_gap_ns[FP_CAL_ONCE] / 1e3,
			       gap_pair(k, 0), k->point_gap_ns[0] / 1e3, gap_pair(k, 1),
			       k->point_gap_ns[1] / 1e3, gap_pair(k, 2), k->point_gap_ns[2] / 1e3,
			       gap_pair(k, 3), k->point_gap_ns[3] / 1e6, gap_pair(k, FP_CAL_COLD));
	}
	if (cal.ip.valid)
		fp_log(FP_LOG_INFO, "in-process runtime (%s clock): pair cost %.1f ns (sd %.1f), "
		       "bias %.1f ns; begin %.1f+%.1f, end %.1f+%.1f ns around the timestamp",
		       fp_ip_clock()->clock == FP_IP_CLOCK_TSC ? "TSC" : "CLOCK_MONOTONIC",
		       cal.ip.pair_ns, cal.ip.pair_sd, cal.ip.bias_ns, cal.ip.part_ns[0],
		       cal.ip.part_ns[1], cal.ip.part_ns[2], cal.ip.part_ns[3]);
	fp_log(FP_LOG_INFO, "attaching at the %s (%s); calibration took %.0f ms",
	       cal.optimized ? "shielded nop5" : "nop1", cal.why, cal.took_ms);
	return 0;
}

/*
 * Debug files from a debuginfod server (common/symbols.c) only where DEBUGINFOD_URLS names
 * one: said at the start. The client library waits up to 90 s for a server by default,
 * while the daemon serves no one: 5 s unless DEBUGINFOD_TIMEOUT says otherwise.
 */
static void debuginfod_env(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	if (!urls || !*urls)
		return;
	setenv("DEBUGINFOD_TIMEOUT", "5", 0);
	fp_log(FP_LOG_INFO, "debug files of stripped objects from debuginfod: %s (timeout %s s)",
	       urls, getenv("DEBUGINFOD_TIMEOUT"));
}

int main(int argc, char **argv)
{
	struct args a = {
		.o = { .socket_path = FP_DEFAULT_SOCKET, .cal = &cal, .ready = ready,
		       .site = FP_SITE_AUTO },	/* see docs/TRACING.md, "attach point" */
		.regions_dir = fp_regdefs__default_dir(),
		.state_dir = FP_DEFAULT_STATE_DIR,
	};
	struct fp_err e = { 0 }, je = { 0 };
	int ret = parse_args(argc, argv, &a);

	if (ret)
		return ret < 0 ? 0 : 2;
	raise_nofile();
	if (fp_regdefs__load_dir(&a.o.defs, a.regions_dir, &e)) {
		fp_log(FP_LOG_ERR, "region definitions: %s", e.msg);
		return 1;
	}
	fp_log(FP_LOG_INFO, "%d region definitions from %s", a.o.defs.ndefs, a.regions_dir);
	libbpf_set_print(libbpf_log);
	debuginfod_env();
	ret = fp_journal__open(a.state_dir, a.o.socket_path, &je);
	if (ret < 0)
		fp_log(FP_LOG_WARN, "attach journal: %s; a featprofd killed during an attach "
		       "may leave breakpoints until `featprof repair PID`", je.msg);
	else if (ret)
		fp_log(FP_LOG_WARN, "attach journal: removed the breakpoints of %d probe sites "
		       "left by a featprofd killed during an attach or detach", ret);
	if (calibrate_at_start(a.o.site))
		return 1;
	fp_target__use_calibration(&cal);
	ret = fp_server_run(&a.o);
	fp_journal__close();
	fp_regdefs__clear(&a.o.defs);
	notify("STOPPING=1");
	return ret ? 1 : 0;
}
