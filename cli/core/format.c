// SPDX-License-Identifier: GPL-2.0
/* A time for people: the one formatter of the CLI's tables (core.h cli_fmt_ns). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core.h"
#include "common/demangle.h"

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

const char *cli_fmt_region(const char *name, char *buf, size_t len)
{
	const char *colon = strchr(name, ':'), *sym = colon ? colon + 1 : name;
	char d[1024];

	if (sym[0] != '_' || (sym[1] != 'Z' && sym[1] != 'R') ||
	    fp_demangle(sym, d, sizeof(d)) == sym)
		return name;
	snprintf(buf, len, "%.*s%s", (int)(sym - name), name, d);
	return buf;
}
