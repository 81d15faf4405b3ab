// SPDX-License-Identifier: GPL-2.0
/*
 * The calibration's choice of attach point (daemon/calibrate/calibrate.c): whether the
 * kernel rewrites a nop5 uprobe into a call, whether a child forked afterwards survives
 * the rewritten site, and which point new targets get.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "calibrate_impl.h"
#include "usdt/featprof_abi.h"
#include "common/maps.h"

int fp_calibrate_has_trampoline(void)
{
	struct fp_vma *v = NULL;
	int nv = fp_read_maps(0, &v), i, found = 0;

	for (i = 0; i < nv && !found; i++)
		found = !strcmp(v[i].path, "[uprobes-trampoline]");
	fp_free_maps(v, nv);
	return found;
}

/* Two sites of the inner region, hit by the daemon and then by a forked child. */
__attribute__((noinline)) static void fork_probe(void)
{
	FP_BEGIN(featprof_calibration_inner, "featprof");
	FP_END(featprof_calibration_inner);
}

/*
 * Does a child forked after the optimized path rewrote a site survive hitting it? The
 * kernel maps [uprobes-trampoline] into the process whose thread hit the site and
 * rewrites the site into a call to it; a fork copies the rewritten page but not the
 * mapping (seen on Linux 6.18), so the child faults at its first optimized site. The
 * child catches its own fault and exits with FORK_FAULTED: a handled signal reaches
 * neither the kernel log ("segfault at ...") nor a core-dump handler. 1: it faulted (or
 * could not be run: assume the worst), 0: it lived.
 */
#define FORK_FAULTED 71

static void fork_fault(int sig)
{
	_exit(FORK_FAULTED);
}

int fp_calibrate_fork_loses_trampoline(void)
{
	int i, status = 0;
	pid_t p;

	for (i = 0; i < 3; i++)	/* the first hit traps and rewrites the site */
		fork_probe();
	p = fork();
	if (p == 0) {
		struct sigaction sa = { .sa_handler = fork_fault };
		struct rlimit none = { 0, 0 };

		setrlimit(RLIMIT_CORE, &none);	/* in case a signal is not caught */
		sigemptyset(&sa.sa_mask);
		sigaction(SIGSEGV, &sa, NULL);	/* the call lands on an unmapped page */
		sigaction(SIGBUS, &sa, NULL);
		sigaction(SIGILL, &sa, NULL);
		sigaction(SIGTRAP, &sa, NULL);
		fork_probe();
		_exit(0);
	}
	if (p < 0 || waitpid(p, &status, 0) != p)
		return 1;
	return !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

/* Which attach point new targets get, and why (for status). */
void fp_calibrate_choose_point(struct fp_daemon_cal *out, enum fp_site_choice site)
{
	double p1, p5;

	p1 = out->at[FP_AT_NOP1].pair_ns;
	p5 = out->at[FP_AT_NOP5].pair_ns;
	if (!out->kernel_optimizes) {
		out->optimized = 0;
		snprintf(out->why, sizeof(out->why), "this kernel does not optimize nop5 uprobes");
	} else if (site == FP_SITE_NOP1 || site == FP_SITE_NOP5) {
		out->optimized = site == FP_SITE_NOP5;
		snprintf(out->why, sizeof(out->why), "set by --site%s",
			 site == FP_SITE_NOP5 && out->fork_hazard
				 ? " (children forked by a target will crash at their first site, "
				   "also after the probes are detached: a child keeps the call)"
				 : "");
	} else if (out->fork_hazard) {	/* never a hazard to the target */
		out->optimized = 0;
		snprintf(out->why, sizeof(out->why),
			 "nop5 is %.2fx cheaper, but this kernel does not give a forked child "
			 "the optimized path's trampoline: the child would crash at its first "
			 "site", p1 / p5);
	} else {
		out->optimized = p5 < p1;
		snprintf(out->why, sizeof(out->why),
			 "measured pair cost nop1 %.0f ns, nop5 %.0f ns: "
			 "%s is %.2fx cheaper",
			 p1, p5, p5 < p1 ? "nop5" : "nop1", p5 < p1 ? p1 / p5 : p5 / p1);
	}
}
