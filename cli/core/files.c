// SPDX-License-Identifier: GPL-2.0
/*
 * Files written whole or not at all (core.h cli_open_tmp, cli_close_tmp): written as
 * OUT.tmp, renamed to OUT when complete. A command that a signal ends meanwhile (Ctrl-C,
 * SIGTERM, SIGHUP where it does not take them itself) removes OUT.tmp on its way out.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core.h"

static char pending[4096];	/* the .tmp being written, "" none */

static void remove_pending(int sig)
{
	if (pending[0])
		unlink(pending);	/* async-signal-safe, as the rest */
	signal(sig, SIG_DFL);
	raise(sig);
}

FILE *cli_open_tmp(const char *out, const char *what, char *tmp, size_t tmplen)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa, old;
	size_t k;
	FILE *f;

	if (snprintf(tmp, tmplen, "%s.tmp", out) >= (int)tmplen ||
	    strlen(tmp) >= sizeof(pending)) {
		fprintf(stderr, "featprof %s: file name too long\n", what);
		return NULL;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = remove_pending;
	sigemptyset(&sa.sa_mask);
	for (k = 0; k < sizeof(sigs) / sizeof(sigs[0]); k++)	/* not over a handler */
		if (!sigaction(sigs[k], NULL, &old) && old.sa_handler == SIG_DFL)
			sigaction(sigs[k], &sa, NULL);
	strcpy(pending, tmp);	/* before the file exists: no moment without it */
	f = fopen(tmp, "we");
	if (!f) {
		pending[0] = 0;
		fprintf(stderr, "featprof %s: cannot write %s: %s\n", what, out, strerror(errno));
	}
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
	if (!strcmp(pending, tmp))
		pending[0] = 0;	/* renamed, or removed just below */
	if (ok && err)
		fprintf(stderr, "featprof %s: cannot write %s: %s\n", what, out, strerror(err));
	if (!ok || err)
		unlink(tmp);
	return ok && !err ? 0 : -1;
}
