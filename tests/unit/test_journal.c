// SPDX-License-Identifier: GPL-2.0
/*
 * The attach journal's reader (daemon/targets/journal_parse.c) on texts made here: each
 * file's sites handed over once, in order, with their semaphore offsets; a file line that
 * does not parse skips its sites; a text that is not a journal, or an empty one, calls
 * nothing; the callback can stop the reading; a file with thousands of sites (the arrays
 * grow) keeps them all.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "targets/target_impl.h"
#include "test.h"

struct seen {
	int calls, stop_at;
	char paths[8][64];
	uint64_t dev[8], ino[8];
	int n[8];
	uint64_t sum_offs[8], sum_refs[8];
};

static int record(void *ctx, const char *path, uint64_t dev, uint64_t ino,
		  const uint64_t *offs, const uint64_t *refs, int n)
{
	struct seen *s = ctx;
	int i, k = s->calls++;

	if (k < 8) {
		snprintf(s->paths[k], sizeof(s->paths[k]), "%s", path);
		s->dev[k] = dev;
		s->ino[k] = ino;
		s->n[k] = n;
		for (i = 0; i < n; i++) {
			s->sum_offs[k] += offs[i];
			s->sum_refs[k] += refs[i];
		}
	}
	return s->stop_at && s->calls == s->stop_at ? 7 : 0;
}

static int parse(const char *text, struct seen *s)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int ret;

	memset(s->paths, 0, sizeof(s->paths));
	ret = fp_journal_parse(f, record, s);
	fclose(f);
	return ret;
}

int main(void)
{
	struct seen s = { 0 };
	char *big;
	size_t len = 0, cap = 1 << 20;
	int i, ret;

	ret = parse("featprof-journal 1\n"
		    "file 2049 77 /usr/bin/prog\n"
		    "site 4096 0\nsite 4200 8192\n"
		    "file 2049 78 /proc/12/root/usr/lib/libx.so\n"
		    "site 100 0\n", &s);
	CHECK_INT(ret, 0);
	CHECK_INT(s.calls, 2);
	CHECK_STR(s.paths[0], "/usr/bin/prog");
	CHECK_INT(s.dev[0], 2049);
	CHECK_INT(s.ino[0], 77);
	CHECK_INT(s.n[0], 2);
	CHECK_INT(s.sum_offs[0], 8296);
	CHECK_INT(s.sum_refs[0], 8192);
	CHECK_STR(s.paths[1], "/proc/12/root/usr/lib/libx.so");
	CHECK_INT(s.n[1], 1);

	memset(&s, 0, sizeof(s));	/* a bad file line: its sites skipped, the next kept */
	ret = parse("featprof-journal 1\nfile nonsense\nsite 1 0\nfile 1 2 /a\nsite 5 0\n", &s);
	CHECK_INT(ret, 0);
	CHECK_INT(s.calls, 1);
	CHECK_STR(s.paths[0], "/a");
	CHECK_INT(s.sum_offs[0], 5);

	memset(&s, 0, sizeof(s));	/* a site before any file: no file to give it to */
	CHECK_INT(parse("featprof-journal 1\nsite 9 0\n", &s), 0);
	CHECK_INT(s.calls, 0);
	CHECK_INT(parse("", &s), 0);
	CHECK_INT(parse("featprof-journal 2\nfile 1 2 /a\nsite 5 0\n", &s), 0);
	CHECK_INT(parse("some other file\n", &s), 0);
	CHECK_INT(s.calls, 0);

	memset(&s, 0, sizeof(s));	/* the callback stops it */
	s.stop_at = 1;
	ret = parse("featprof-journal 1\nfile 1 2 /a\nsite 5 0\nfile 1 3 /b\nsite 6 0\n", &s);
	CHECK_INT(ret, 7);
	CHECK_INT(s.calls, 1);

	big = malloc(cap);	/* 5000 sites of one file */
	len += (size_t)snprintf(big, cap, "featprof-journal 1\nfile 1 2 /big\n");
	for (i = 1; i <= 5000; i++)
		len += (size_t)snprintf(big + len, cap - len, "site %d %d\n", i, 2 * i);
	memset(&s, 0, sizeof(s));
	CHECK_INT(parse(big, &s), 0);
	CHECK_INT(s.n[0], 5000);
	CHECK_INT(s.sum_offs[0], 5000ULL * 5001 / 2);
	CHECK_INT(s.sum_refs[0], 5000ULL * 5001);
	free(big);
	TEST_DONE("test_journal");
}
