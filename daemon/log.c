// SPDX-License-Identifier: GPL-2.0
/* Logging to stderr; under journald (JOURNAL_STREAM) with <N> level prefixes. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "log.h"

int fp_log_level = FP_LOG_INFO;

void fp_log(int level, const char *fmt, ...)
{
	static const char *const names[8] = { "", "", "", "error", "warning", "", "info",
					      "debug" };
	va_list ap;

	if (level > fp_log_level)
		return;
	if (getenv("JOURNAL_STREAM"))
		fprintf(stderr, "<%d>", level);
	else
		fprintf(stderr, "featprofd: %s: ", names[level & 7]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
