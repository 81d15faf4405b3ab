// SPDX-License-Identifier: GPL-2.0
/*
 * The region-definition parser (format in regdefs.h and docs/REGIONS.md). Input comes
 * from clients (featprof --regions FILE sends the text), so every byte is checked: no
 * line, token or count is trusted, and the fuzzer in tests/unit/fuzz_regdefs.c runs it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "regdefs.h"
#include "err.h"

#ifndef FP_REGIONS_DIR
#define FP_REGIONS_DIR "/usr/local/share/featprof/regions.d"
#endif

#define MAX_TOKEN 63

static void def_free(struct fp_regdef *d)
{
	int i;

	free(d->name);
	free(d->origin);
	for (i = 0; i < d->nbegin; i++) {
		free(d->begin[i].provider);
		free(d->begin[i].probe);
	}
	for (i = 0; i < d->nend; i++) {
		free(d->end[i].provider);
		free(d->end[i].probe);
	}
	for (i = 0; i < d->nfuncs; i++) {
		free(d->funcs[i].provider);
		free(d->funcs[i].probe);
	}
	for (i = 0; i < d->nfeatures; i++)
		free(d->features[i]);
	memset(d, 0, sizeof(*d));
}

void fp_regdefs__truncate(struct fp_regdefs *defs, int n)
{
	while (defs->ndefs > n && defs->ndefs > 0)
		def_free(&defs->defs[--defs->ndefs]);
}

void fp_regdefs__clear(struct fp_regdefs *defs)
{
	int i;

	for (i = 0; i < defs->ndefs; i++)
		def_free(&defs->defs[i]);
	free(defs->defs);
	defs->defs = NULL;
	defs->ndefs = 0;
}

static int str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static int probes_equal(const struct fp_probe_name *a, const struct fp_probe_name *b, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!str_eq(a[i].provider, b[i].provider) || strcmp(a[i].probe, b[i].probe))
			return 0;
	return 1;
}

int fp_regdef__equal(const struct fp_regdef *a, const struct fp_regdef *b)
{
	int i;

	if (a->nbegin != b->nbegin || a->nend != b->nend || a->nfeatures != b->nfeatures ||
	    a->nests != b->nests || !probes_equal(a->begin, b->begin, a->nbegin) ||
	    !probes_equal(a->end, b->end, a->nend) || a->nfuncs != b->nfuncs ||
	    !probes_equal(a->funcs, b->funcs, a->nfuncs))
		return 0;
	for (i = 0; i < a->nfeatures; i++)
		if (strcmp(a->features[i], b->features[i]))
			return 0;
	return 1;
}

/* A name of 1-63 characters, each allowed by extra (besides letters and digits). */
static int valid_name(const char *s, size_t n, const char *extra)
{
	size_t i;

	if (!n || n > MAX_TOKEN)
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      (c && strchr(extra, c))))
			return 0;
	}
	return 1;
}

/* Splits s (NUL-terminated, modified) at commas into at most max items. */
static int split_commas(char *s, char **items, int max)
{
	int n = 0;

	for (;;) {
		char *c = strchr(s, ',');

		if (n == max)
			return -1;
		items[n++] = s;
		if (!c)
			return n;
		*c = 0;
		s = c + 1;
	}
}

static int parse_probes(char *tok, struct fp_probe_name *out, int *nout, const char **why)
{
	char *items[FP_REGDEF_MAX_PROBES];
	int n = split_commas(tok, items, FP_REGDEF_MAX_PROBES), i;

	if (n < 0) {
		*why = "too many probes (at most 16 per side)";
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		char *colon = strchr(items[i], ':');

		if (!colon || !valid_name(items[i], (size_t)(colon - items[i]), "_") ||
		    !valid_name(colon + 1, strlen(colon + 1), "_")) {
			*why = "a probe is PROVIDER:NAME (letters, digits, '_')";
			return -EINVAL;
		}
		*colon = 0;
		out[*nout].provider = strdup(items[i]);
		out[*nout].probe = strdup(colon + 1);
		(*nout)++;
		if (!out[*nout - 1].provider || !out[*nout - 1].probe)
			return -ENOMEM;
	}
	return 0;
}

/* [OBJECT:]SYMBOL[,...]: globs of a file's basename and of a symbol (C++ and versioned
 * names included: no spaces, no commas). */
static int parse_funcs(char *tok, struct fp_probe_name *out, int *nout, const char **why)
{
	const char *obj_chars = "_.+-*?[]!", *sym_chars = "_.$@*?[]!-:<>~";
	char *items[FP_REGDEF_MAX_PROBES];
	int n = split_commas(tok, items, FP_REGDEF_MAX_PROBES), i;

	if (n < 0) {
		*why = "too many function patterns (at most 16)";
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		char *colon = strchr(items[i], ':'), *sym = items[i];
		size_t k, len;

		/* C++ names hold "::": an object's glob ends at the first single colon */
		if (colon && colon[1] != ':') {
			if (!valid_name(items[i], (size_t)(colon - items[i]), obj_chars)) {
				*why = "a function's OBJECT is a glob of a file name (letters, "
				       "digits, '_', '.', '+', '-', '*', '?', '[', ']')";
				return -EINVAL;
			}
			*colon = 0;
			sym = colon + 1;
		} else {
			colon = NULL;
		}
		len = strlen(sym);
		for (k = 0; k < len; k++) {
			char ch = sym[k];

			if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			      (ch >= '0' && ch <= '9') || strchr(sym_chars, ch)))
				break;
		}
		if (!len || len > FP_REGDEF_MAX_SYMBOL || k < len) {
			*why = "a function is [OBJECT:]SYMBOL, SYMBOL 1-255 characters of a symbol "
			       "name or a glob";
			return -EINVAL;
		}
		out[*nout].provider = colon ? strdup(items[i]) : NULL;
		out[*nout].probe = strdup(sym);
		(*nout)++;
		if ((colon && !out[*nout - 1].provider) || !out[*nout - 1].probe)
			return -ENOMEM;
	}
	return 0;
}

/* "features F,..." of a definition: each name checked and kept. 0 or -errno (why). */
static int parse_features(char *list, struct fp_regdef *d, const char **why)
{
	char *items[FP_REGDEF_MAX_FEATURES];
	int k, nf = split_commas(list, items, FP_REGDEF_MAX_FEATURES);

	if (nf < 0) {
		*why = "too many features (at most 8)";
		return -EINVAL;
	}
	for (k = 0; k < nf; k++) {
		if (!valid_name(items[k], strlen(items[k]), "_.-")) {
			*why = "a feature name is 1-63 letters, digits, '_', '.', '-'";
			return -EINVAL;
		}
		d->features[d->nfeatures] = strdup(items[k]);
		if (!d->features[d->nfeatures++])
			return -ENOMEM;
	}
	return 0;
}

/* The words of a definition after its name: begin, end, function, features, nests. */
static int parse_words(char **tok, int n, struct fp_regdef *d, const char **why)
{
	int i, ret;

	for (i = 0; i < n; i++) {
		int last = i + 1 >= n;

		if (!strcmp(tok[i], "nests")) {
			if (d->nests) {
				*why = "'nests' given twice";
				return -EINVAL;
			}
			d->nests = 1;
		} else if (!strcmp(tok[i], "begin") || !strcmp(tok[i], "end")) {
			int end = tok[i][0] == 'e';

			if (last || (end ? d->nend : d->nbegin)) {
				*why = last ? "a probe list is missing"
					    : "begin or end given twice";
				return -EINVAL;
			}
			i++;
			ret = end ? parse_probes(tok[i], d->end, &d->nend, why)
				  : parse_probes(tok[i], d->begin, &d->nbegin, why);
			if (ret)
				return ret;
		} else if (!strcmp(tok[i], "function")) {
			if (last || d->nfuncs) {
				*why = last ? "a function list is missing"
					    : "function given twice";
				return -EINVAL;
			}
			ret = parse_funcs(tok[++i], d->funcs, &d->nfuncs, why);
			if (ret)
				return ret;
		} else if (!strcmp(tok[i], "features")) {
			if (last || d->nfeatures) {
				*why = last ? "a feature list is missing" : "features given twice";
				return -EINVAL;
			}
			ret = parse_features(tok[++i], d, why);
			if (ret)
				return ret;
		} else {
			*why = "unknown word (expected begin, end, function, features or nests)";
			return -EINVAL;
		}
	}
	return 0;
}

/* One line without its newline, NUL-terminated (modified). 0 for a blank or comment. */
static int parse_line(char *line, struct fp_regdef *d, const char **why)
{
	char *tok[16], *save = NULL, *t;
	int n = 0, ret;
	char *hash = strchr(line, '#');

	if (hash)
		*hash = 0;
	for (t = strtok_r(line, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save)) {
		if (n == 16) {
			*why = "too many words";
			return -EINVAL;
		}
		tok[n++] = t;
	}
	if (!n)
		return 0;
	if (strcmp(tok[0], "region") || n < 4 || (n < 6 && strcmp(tok[2], "function"))) {
		*why = "expected: region NAME begin PROV:PROBE end PROV:PROBE [features F,...] "
		       "[nests], or region NAME function [OBJECT:]SYMBOL[,...] [features F,...]";
		return -EINVAL;
	}
	if (strcmp(tok[1], "*") && !valid_name(tok[1], strlen(tok[1]), "_.-")) {
		*why = "a region name is 1-63 letters, digits, '_', '.', '-'";
		return -EINVAL;
	}
	d->name = strdup(tok[1]);
	if (!d->name)
		return -ENOMEM;
	ret = parse_words(tok + 2, n - 2, d, why);
	if (ret)
		return ret;
	if (d->nfuncs) {
		if (d->nbegin || d->nend) {
			*why = "a function region has no begin or end probes";
			return -EINVAL;
		}
		d->nests = 1;	/* recursion: every call an instance */
		return 1;
	}
	if (!strcmp(d->name, "*")) {
		*why = "only a function definition may be named '*'";
		return -EINVAL;
	}
	if (!d->nbegin || !d->nend) {
		*why = "a region needs a begin and an end probe";
		return -EINVAL;
	}
	return 1;
}

/* Whether d (of origin "FILE:LINE") is in defs or added already: 1 as it is, 0 not; -EINVAL
 * another definition of its name (e filled). "*" may be defined many times. */
static int known(const struct fp_regdefs *defs, const struct fp_regdef *added, int nadded,
		 const struct fp_regdef *d, const char *origin, struct fp_err *e)
{
	int i;

	for (i = 0; i < defs->ndefs + nadded; i++) {
		const struct fp_regdef *o = i < defs->ndefs ? &defs->defs[i]
							    : &added[i - defs->ndefs];

		if (strcmp(o->name, d->name))
			continue;
		if (fp_regdef__equal(o, d))
			return 1;	/* already there, as it is */
		if (strcmp(d->name, "*"))
			return fp_fail(e, EINVAL, "%s: region '%s' already defined at %s", origin,
				       d->name, o->origin);
	}
	return 0;
}

/* n definitions moved to the end of defs. 0 or -ENOMEM (nothing moved). */
static int append(struct fp_regdefs *defs, const struct fp_regdef *added, int n)
{
	struct fp_regdef *all = realloc(defs->defs, sizeof(*all) * (size_t)(defs->ndefs + n));

	if (!all)
		return -ENOMEM;
	memcpy(all + defs->ndefs, added, sizeof(*all) * (size_t)n);
	defs->defs = all;
	defs->ndefs += n;
	return 0;
}

int fp_regdefs__parse(struct fp_regdefs *defs, const char *text, size_t len, const char *fname,
		      struct fp_err *e)
{
	struct fp_regdef *added = NULL;
	int nadded = 0, lineno = 0, ret = 0, i;
	size_t pos = 0;
	char *buf;

	if (len > FP_REGDEF_MAX_FILE)
		return fp_fail(e, E2BIG, "%s: larger than %d bytes", fname, FP_REGDEF_MAX_FILE);
	buf = malloc(len + 1);
	if (!buf)
		return -ENOMEM;
	while (pos < len && !ret) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		const char *why = NULL;
		struct fp_regdef d = { 0 }, *a;
		char origin[300];

		lineno++;
		memcpy(buf, text + pos, n);
		buf[n] = 0;
		pos += n + (nl ? 1 : 0);
		if (strlen(buf) != n) {
			ret = fp_fail(e, EINVAL, "%s:%d: a NUL byte in the text", fname, lineno);
			break;
		}
		ret = parse_line(buf, &d, &why);
		if (ret <= 0) {
			if (ret == -EINVAL)
				fp_fail(e, EINVAL, "%s:%d: %s", fname, lineno, why);
			else if (ret)
				fp_fail(e, -ret, "%s:%d: %s", fname, lineno, strerror(-ret));
			def_free(&d);
			continue;
		}
		snprintf(origin, sizeof(origin), "%s:%d", fname, lineno);
		ret = known(defs, added, nadded, &d, origin, e);
		if (ret == 1) {
			def_free(&d);
			ret = 0;
			continue;
		}
		if (!ret && defs->ndefs + nadded >= FP_REGDEF_MAX) {
			ret = fp_fail(e, E2BIG, "%s:%d: more than %d definitions", fname, lineno,
				      FP_REGDEF_MAX);
		}
		if (!ret && !(d.origin = strdup(origin)))
			ret = -ENOMEM;
		if (!ret) {
			a = realloc(added, sizeof(*a) * (size_t)(nadded + 1));
			if (!a)
				ret = -ENOMEM;
			else
				(added = a)[nadded++] = d;
		}
		if (ret)
			def_free(&d);
		if (ret == -ENOMEM)
			fp_fail(e, ENOMEM, "%s: out of memory", fname);
	}
	free(buf);
	if (!ret && nadded) {
		ret = append(defs, added, nadded);
		if (ret)
			fp_fail(e, ENOMEM, "%s: out of memory", fname);
		else
			nadded = 0;	/* defs has them now */
	}
	for (i = 0; i < nadded; i++)
		def_free(&added[i]);
	free(added);
	return ret;
}

int fp_regdefs__load_file(struct fp_regdefs *defs, const char *path, struct fp_err *e)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;
	size_t len = 0;
	struct stat st;
	char *text;
	ssize_t n;

	if (fd < 0) {
		ret = -errno;
		return fp_fail(e, -ret, "%s: %s", path, strerror(errno));
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return fp_fail(e, EINVAL, "%s: not a regular file", path);
	}
	text = malloc(FP_REGDEF_MAX_FILE + 1);
	if (!text) {
		close(fd);
		return -ENOMEM;
	}
	while ((n = read(fd, text + len, FP_REGDEF_MAX_FILE + 1 - len)) > 0 &&
	       len + (size_t)n <= FP_REGDEF_MAX_FILE)
		len += (size_t)n;
	ret = n < 0 ? -errno : 0;
	close(fd);
	if (ret)
		fp_fail(e, -ret, "%s: %s", path, strerror(-ret));
	else if (n > 0)
		ret = fp_fail(e, E2BIG, "%s: larger than %d bytes", path, FP_REGDEF_MAX_FILE);
	else
		ret = fp_regdefs__parse(defs, text, len, path, e);
	free(text);
	return ret;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int fp_regdefs__load_dir(struct fp_regdefs *defs, const char *dir, struct fp_err *e)
{
	DIR *d = opendir(dir);
	char **names = NULL, path[PATH_MAX];
	struct dirent *de;
	int n = 0, i, ret = 0, no = errno;

	if (!d)
		return no == ENOENT ? 0 : fp_fail(e, no, "%s: %s", dir, strerror(no));
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		char **a;

		if (l < 9 || strcmp(de->d_name + l - 8, ".regions") || de->d_name[0] == '.')
			continue;
		a = realloc(names, sizeof(*a) * (size_t)(n + 1));
		if (!a || !(a[n] = strdup(de->d_name))) {
			names = a ? a : names;
			ret = -ENOMEM;
			break;
		}
		names = a;
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, (size_t)n, sizeof(*names), cmp_str);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (!ret)
			ret = fp_regdefs__load_file(defs, path, e);
		free(names[i]);
	}
	free(names);
	return ret;
}

const char *fp_regdefs__default_dir(void)
{
	static char buf[PATH_MAX];
	const char *env = getenv("FEATPROF_REGIONS_DIR");
	char exe[PATH_MAX - 32], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct stat st;

	if (env && *env)
		return env;
	if (n > 0) {
		exe[n] = 0;
		slash = strrchr(exe, '/');
		if (slash)
			*slash = 0;
		snprintf(buf, sizeof(buf), "%s/../usdt/regions.d", exe);
		if (!stat(buf, &st) && S_ISDIR(st.st_mode) && realpath(buf, exe))
			return strcpy(buf, exe);
	}
	return FP_REGIONS_DIR;
}
