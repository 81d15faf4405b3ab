/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Region definitions: regions made of other providers' stapsdt probes (CPython,
 * PostgreSQL, the JVM). One definition per line (docs/REGIONS.md):
 *
 *   region NAME begin PROV:PROBE[,PROV:PROBE...] end PROV:PROBE[,...] [features F[,F...]]
 *          [nests]
 *   region NAME function [OBJECT:]SYMBOL[,...] [features F[,F...]]
 *
 * A function region runs from the entry of any of the functions to its return (a uprobe
 * and a return probe); OBJECT and SYMBOL are globs (fnmatch) on the basename of a mapped
 * file and on a function's symbol. NAME "*": each function matched is a region of its
 * own, named after it ("OBJECT:SYMBOL" where two objects have one), which is what
 * `featprof enable --function FEATURE=PATTERN` sends. Function regions nest (recursion).
 *
 * '#' starts a comment; blank lines are ignored. NAME and features: 1-63 characters of
 * [A-Za-z0-9_.-]; providers and probes: 1-63 of [A-Za-z0-9_]. A region that does not
 * say "nests" may not be open twice on a thread: a second begin is an anomaly (the
 * third-party pairs are not reentrant; a missing end must not swallow the next one).
 * Argument specs are never read: a definition uses only where a probe is.
 */
#ifndef FP_REGDEFS_H
#define FP_REGDEFS_H

#include <stddef.h>

#include "err.h"

#define FP_REGDEF_MAX_FILE (1 << 20)	/* bytes of one definition text */
#define FP_REGDEF_MAX 4096		/* definitions in one set */
#define FP_REGDEF_MAX_PROBES 16		/* per side of one definition */
#define FP_REGDEF_MAX_FEATURES 8
#define FP_REGDEF_MAX_SYMBOL 255	/* characters of a function pattern */

struct fp_probe_name {
	char *provider;
	char *probe;
};

struct fp_regdef {
	char *name;
	struct fp_probe_name begin[FP_REGDEF_MAX_PROBES], end[FP_REGDEF_MAX_PROBES];
	int nbegin, nend;
	/* function patterns: provider the object's glob (NULL: any), probe the symbol's */
	struct fp_probe_name funcs[FP_REGDEF_MAX_PROBES];
	int nfuncs;
	char *features[FP_REGDEF_MAX_FEATURES];
	int nfeatures;
	int nests;
	char *origin;		/* "FILE:LINE", for messages */
};

struct fp_regdefs {
	struct fp_regdef *defs;
	int ndefs;
	/* a group's definitions for a member attached at its exec or fork, before its
	 * libraries are mapped: they apply where they match, as installed ones, instead
	 * of every probe and pattern having to match now */
	int lenient;
};

/*
 * Parses text (len bytes, not necessarily NUL-terminated) named fname and appends its
 * definitions to *defs. All or nothing: on error nothing is appended and e holds one
 * line "FNAME:LINE: what". 0 or -EINVAL / -E2BIG / -ENOMEM.
 */
int fp_regdefs__parse(struct fp_regdefs *defs, const char *text, size_t len, const char *fname,
		      struct fp_err *e);
/* Reads one file (at most FP_REGDEF_MAX_FILE bytes) and parses it. */
int fp_regdefs__load_file(struct fp_regdefs *defs, const char *path, struct fp_err *e);
/* Every *.regions file of dir, in name order; a missing dir is not an error. */
int fp_regdefs__load_dir(struct fp_regdefs *defs, const char *dir, struct fp_err *e);
/* The installed definitions' directory: $FEATPROF_REGIONS_DIR, else usdt/regions.d of
 * the source tree when the running program is in its build/, else the compiled-in one. */
const char *fp_regdefs__default_dir(void);
void fp_regdefs__clear(struct fp_regdefs *defs);
/* The same definition twice (a file given again, or also installed): not a conflict. */
int fp_regdef__equal(const struct fp_regdef *a, const struct fp_regdef *b);
/* Frees the definitions from index n on. */
void fp_regdefs__truncate(struct fp_regdefs *defs, int n);

#endif
