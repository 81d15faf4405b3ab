// SPDX-License-Identifier: GPL-2.0
/* Files written whole or not at all (core.h cli_open_tmp, cli_close_tmp). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core.h"

FILE *cli_open_tmp(const char *out, const char *what, char *tmp, size_t tmplen)
{
	FILE *f;

	if (snprintf(tmp, tmplen, "%s.tmp", out) >= (int)tmplen) {
		fprintf(stderr, "featprof %s: file name too long\n", what);
		return NULL;
	}
	f = fopen(tmp, "we");
	if (!f)
		fprintf(stderr, "featprof %s: cannot write %s: %s\n", what, out, strerror(errno));
	return f;
}

int cli_close_tmp(FILE *f, const char *tmp, const char *out, const char *what, int ok)
{
	int err = 0;

	if (fflush(f) || ferror(f))
		err = errno ? errno : EIO;
	if (fclose(f) && !err)
		err = errno;
	if (ok && !err && rename(tmp, out))
		err = errno;
	if (ok && err)
		fprintf(stderr, "featprof %s: cannot write %s: %s\n", what, out, strerror(err));
	if (!ok || err)
		unlink(tmp);
	return ok && !err ? 0 : -1;
}
