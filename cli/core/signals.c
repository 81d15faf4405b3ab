// SPDX-License-Identifier: GPL-2.0
/*
 * Ctrl-C and SIGTERM for the commands that wait (core.h cli_catch_interrupts): a handler
 * installed without SA_RESTART, so that the read or sleep a command is blocked in returns
 * at once (EINTR) and the command sees cli_interrupted, instead of the signal waiting for
 * the next push (10 s with --interval 10000, for ever from an exited target).
 */
#include <signal.h>
#include <string.h>

#include "core.h"

volatile sig_atomic_t cli_interrupted;

static void on_signal(int sig)
{
	(void)sig;
	cli_interrupted = 1;
}

void cli_catch_interrupts(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}
