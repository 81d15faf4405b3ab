// SPDX-License-Identifier: GPL-2.0
/*
 * A long command's progress (sample, drill, save, record, export --duration): one line on
 * stderr, rewritten in place, only where stderr is a terminal, so that a pipe or a log
 * gets nothing of it; cleared before the command prints its result.
 */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "core.h"

static int shown;

void cli_progress(const char *fmt, ...)
{
	va_list ap;

	if (!isatty(STDERR_FILENO))
		return;
	fputs("\r\033[K", stderr);	/* to the line's start, the old text erased */
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fflush(stderr);
	shown = 1;
}

void cli_progress_done(void)
{
	if (!shown)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	shown = 0;
}
