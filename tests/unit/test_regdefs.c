// SPDX-License-Identifier: GPL-2.0
/*
 * Region definitions (common/regdefs.c) parsed from texts made here: both kinds of
 * definition with every word; comments and blank lines; one line of error naming the
 * file and line, and nothing appended (all or nothing); the same definition twice is no
 * conflict, another one of the same name is; "*" many times; the limits; a directory of
 * *.regions files in name order.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/regdefs.h"
#include "test.h"

static int parse(struct fp_regdefs *d, const char *text, struct fp_err *e)
{
	memset(e, 0, sizeof(*e));
	return fp_regdefs__parse(d, text, strlen(text), "t.regions", e);
}

static void t_good(void)
{
	struct fp_regdefs d = { 0 };
	struct fp_err e;
	const struct fp_regdef *r;

	CHECK_INT(parse(&d, "# PostgreSQL's queries\n\n"
			    "region pg.query begin postgresql:query__start end "
			    "postgresql:query__done,postgresql:query__error features Query,SQL "
			    "nests   # trailing comment\n"
			    "region zlib function libz.so*:deflate*,inflate features Zlib\n",
			    &e), 0);
	CHECK_INT(d.ndefs, 2);
	r = &d.defs[0];
	CHECK_STR(r->name, "pg.query");
	CHECK_INT(r->nbegin, 1);
	CHECK_STR(r->begin[0].provider, "postgresql");
	CHECK_STR(r->begin[0].probe, "query__start");
	CHECK_INT(r->nend, 2);
	CHECK_STR(r->end[1].probe, "query__error");
	CHECK_INT(r->nfeatures, 2);
	CHECK_STR(r->features[1], "SQL");
	CHECK_INT(r->nests, 1);
	CHECK_STR(r->origin, "t.regions:3");
	r = &d.defs[1];
	CHECK_INT(r->nfuncs, 2);
	CHECK_STR(r->funcs[0].provider, "libz.so*");
	CHECK_STR(r->funcs[0].probe, "deflate*");
	CHECK(r->funcs[1].provider == NULL, "an unqualified pattern matches in any object");
	CHECK_INT(r->nests, 1);	/* function regions recurse */
	/* the same text again: the same definitions, no conflict, nothing added */
	CHECK_INT(parse(&d, "region zlib function libz.so*:deflate*,inflate features Zlib\n",
			&e), 0);
	CHECK_INT(d.ndefs, 2);
	/* "*": one region per function matched, defined as often as asked */
	CHECK_INT(parse(&d, "region * function a*\nregion * function b* features B\n", &e), 0);
	CHECK_INT(d.ndefs, 4);
	fp_regdefs__truncate(&d, 2);
	CHECK_INT(d.ndefs, 2);
	fp_regdefs__clear(&d);
	CHECK_INT(d.ndefs, 0);
}

/* text must fail with a line that holds want, and leave d as it was. */
static void bad(struct fp_regdefs *d, const char *text, int code, const char *want)
{
	int n0 = d->ndefs, ret;
	struct fp_err e;

	ret = parse(d, text, &e);
	CHECK(ret == -code && strstr(e.msg, want) && !strchr(e.msg, '\n') && d->ndefs == n0,
	      "%s: ret %d, '%s', %d definitions (had %d)", text, ret, e.msg, d->ndefs, n0);
}

static void t_bad(void)
{
	struct fp_regdefs d = { 0 };
	struct fp_err e;
	char *big;
	int i;

	CHECK_INT(parse(&d, "region kept begin p:a end p:b\n", &e), 0);
	bad(&d, "region x begin p:a features A\n", EINVAL,
	    "t.regions:1: a region needs a begin and an end");
	bad(&d, "region ok begin p:a end p:b\nregion x begin p:a end p:b frobnicate\n", EINVAL,
	    "t.regions:2: unknown word");
	bad(&d, "region kept begin p:a end p:c\n", EINVAL, "already defined at t.regions:1");
	bad(&d, "region x begin p:a end p:b features\n", EINVAL, "a feature list is missing");
	bad(&d, "region x begin p:a begin p:c end p:b\n", EINVAL, "begin or end given twice");
	bad(&d, "region x begin p:a end p:b nests nests\n", EINVAL, "'nests' given twice");
	bad(&d, "region bad/name begin p:a end p:b\n", EINVAL, "a region name is 1-63");
	bad(&d, "region x function f begin p:a end p:b\n", EINVAL,
	    "a function region has no begin or end probes");
	bad(&d, "region * begin p:a end p:b\n", EINVAL, "only a function definition may be "
	    "named '*'");
	bad(&d, "regions x begin p:a end p:b\n", EINVAL, "expected: region NAME");
	bad(&d, "region x begin a b c d e f g h i j k l m n o p q\n", EINVAL, "too many words");
	CHECK(fp_regdefs__parse(&d, "region x\0 begin", 16, "t.regions", &e) == -EINVAL &&
	      strstr(e.msg, "a NUL byte"), "a NUL byte: '%s'", e.msg);
	big = malloc(FP_REGDEF_MAX_FILE + 2);
	memset(big, '#', FP_REGDEF_MAX_FILE + 1);
	big[FP_REGDEF_MAX_FILE + 1] = 0;
	bad(&d, big, E2BIG, "larger than");
	free(big);
	big = malloc(64 * (FP_REGDEF_MAX + 1));
	for (big[0] = 0, i = 0; i <= FP_REGDEF_MAX; i++)
		sprintf(big + strlen(big), "region r%d begin p:a end p:b\n", i);
	bad(&d, big, E2BIG, "more than");
	free(big);
	CHECK_INT(d.ndefs, 1);
	fp_regdefs__clear(&d);
}

static void t_dir(void)
{
	char dir[] = "/tmp/featprof-test-regdefs-XXXXXX", p[128];
	struct fp_regdefs d = { 0 };
	struct fp_err e = { 0 };
	FILE *f;

	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(p, sizeof(p), "%s/b.regions", dir);
	f = fopen(p, "w");
	fputs("region second begin p:c end p:d\n", f);
	fclose(f);
	snprintf(p, sizeof(p), "%s/a.regions", dir);
	f = fopen(p, "w");
	fputs("region first begin p:a end p:b\n", f);
	fclose(f);
	snprintf(p, sizeof(p), "%s/ignored.txt", dir);
	f = fopen(p, "w");
	fputs("not a definition\n", f);
	fclose(f);
	CHECK_INT(fp_regdefs__load_dir(&d, dir, &e), 0);
	CHECK_INT(d.ndefs, 2);
	CHECK(d.ndefs && !strcmp(d.defs[0].name, "first"), "the first file's first");
	CHECK(d.ndefs && strstr(d.defs[0].origin, "a.regions:1"), "origin %s",
	      d.ndefs ? d.defs[0].origin : "");
	CHECK_INT(fp_regdefs__load_dir(&d, "/nonexistent/featprof", &e), 0);
	fp_regdefs__clear(&d);
	unlink(p);
	snprintf(p, sizeof(p), "%s/a.regions", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/b.regions", dir);
	unlink(p);
	rmdir(dir);
}

int main(void)
{
	t_good();
	t_bad();
	t_dir();
	TEST_DONE("test_regdefs");
}
