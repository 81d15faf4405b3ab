// SPDX-License-Identifier: GPL-2.0
/* Logging to stderr; under journald (JOURNAL_STREAM) with <N> level prefixes. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

int fp_log_level = FP_LOG_INFO;

static void vlog(int level, const char *fmt, va_list ap)
{
	static const char *const names[8] = { "", "", "", "error", "warning", "", "info",
					      "debug" };
	char line[1024];
	size_t n;

	if (level > fp_log_level)
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n && line[n - 1] == '\n')	/* libbpf ends its messages with one */
		line[--n] = 0;
	if (getenv("JOURNAL_STREAM"))
		fprintf(stderr, "<%d>%s\n", level, line);
	else
		fprintf(stderr, "featprofd: %s: %s\n", names[level & 7], line);
}

void fp_log(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(level, fmt, ap);
	va_end(ap);
}
