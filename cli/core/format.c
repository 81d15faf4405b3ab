// SPDX-License-Identifier: GPL-2.0
/* A time for people: the one formatter of the CLI's tables (core.h cli_fmt_ns). */
#include <math.h>
#include <stdio.h>

#include "core.h"

const char *cli_fmt_ns(double ns, char *buf, size_t len)
{
	double a = fabs(ns);

	if (a < 1e3)
		snprintf(buf, len, "%.0f ns", ns);
	else if (a < 1e6)
		snprintf(buf, len, "%.2f us", ns / 1e3);
	else if (a < 1e9)
		snprintf(buf, len, "%.2f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.3f s", ns / 1e9);
	return buf;
}
