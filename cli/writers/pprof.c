// SPDX-License-Identifier: GPL-2.0
/*
 * pprof output: a gzip-compressed profile.proto message (github.com/google/pprof,
 * proto/profile.proto), encoded by hand: the profile is a few dozen messages of
 * varints and length-delimited fields, and a protobuf library would add a code
 * generator and a dependency for that. zlib writes the gzip framing.
 *
 * Mapping from featprof's figures:
 *  - one sample per region path; its stack is the path's regions, innermost first
 *    (pprof's order: leaf first); values: wall ns, CPU ns, off-CPU ns (exclusive time
 *    of the path, compensated) and the count of instances ended on that path; when the
 *    target was sampled (featprof sample), one sample per sampled stack too, its CPU
 *    time in a fifth value, sampled_cpu (the traced values 0 there, and it 0 in the
 *    traced samples);
 *  - one function and one location per region: name "region [Feature,Feature]",
 *    filename and line of its first begin site;
 *  - labels on every sample: pid (number) and exe (the target's executable, or its
 *    command name when /proc no longer has it).
 *  - one mapping, the executable, with has_functions and has_line_numbers set (the
 *    names are already symbolic); wall time is the default sample type.
 * Fields used (profile.proto numbers): Profile 1 sample_type, 2 sample, 3 mapping,
 * 4 location, 5 function, 6 string_table, 9 time_nanos, 10 duration_nanos,
 * 11 period_type, 12 period, 14 default_sample_type; ValueType 1 type, 2 unit;
 * Sample 1 location_id (packed), 2 value (packed), 3 label; Label 1 key, 2 str,
 * 3 num; Mapping 1 id, 5 filename, 7 has_functions, 9 has_line_numbers; Location
 * 1 id, 2 mapping_id, 4 line; Line 1 function_id, 2 line; Function 1 id, 2 name,
 * 4 filename, 5 start_line.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "cli/core/core.h"
#include "writers.h"

struct pb {
	uint8_t *b;
	size_t n, cap;
	int oom;
};

static void put(struct pb *p, const void *d, size_t n)
{
	if (p->oom)
		return;
	if (p->n + n > p->cap) {
		size_t cap = (p->n + n) * 2 + 64;
		uint8_t *b = realloc(p->b, cap);

		if (!b) {
			p->oom = 1;
			return;
		}
		p->b = b;
		p->cap = cap;
	}
	memcpy(p->b + p->n, d, n);
	p->n += n;
}

static void varint(struct pb *p, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;

	do {
		b[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	put(p, b, n);
}

/* A varint field (wire type 0); proto3 leaves zero values out. */
static void f_varint(struct pb *p, int field, uint64_t v)
{
	if (!v)
		return;
	varint(p, (uint64_t)field << 3);
	varint(p, v);
}

/* A length-delimited field (wire type 2): bytes, a string, a message, packed values. */
static void f_bytes(struct pb *p, int field, const void *d, size_t n)
{
	varint(p, (uint64_t)field << 3 | 2);
	varint(p, n);
	put(p, d, n);
}

static void f_msg(struct pb *p, int field, struct pb *m)
{
	f_bytes(p, field, m->b, m->n);
	p->oom |= m->oom;
	m->n = 0;	/* reused for the next message */
}

/* The string table: index of s, added on first use. */
struct strtab {
	char **s;
	int n;
};

static int64_t str_id(struct strtab *t, const char *s)
{
	char **a;
	int i;

	for (i = 0; i < t->n; i++)
		if (!strcmp(t->s[i], s))
			return i;
	a = realloc(t->s, sizeof(*a) * (size_t)(t->n + 1));
	if (!a || !(a[t->n] = strdup(s))) {
		t->s = a ? a : t->s;
		return 0;	/* "": the profile stays readable */
	}
	t->s = a;
	return t->n++;
}




/* Index of the region named name in the catalog's regions, or -1. */
static int region_index(struct json_object *regions, const char *name)
{
	size_t i;

	for (i = 0; regions && i < json_object_array_length(regions); i++)
		if (!strcmp(gets_(json_object_array_get_idx(regions, i), "name"), name))
			return (int)i;
	return -1;
}

static void value_type(struct pb *p, struct pb *m, struct strtab *t, int field,
		       const char *type, const char *unit)
{
	f_varint(m, 1, (uint64_t)str_id(t, type));
	f_varint(m, 2, (uint64_t)str_id(t, unit));
	f_msg(p, field, m);
}

/* Function and location r + 1 for each region of the catalog. */
static void functions(struct pb *p, struct pb *m, struct pb *l, struct strtab *t,
		      struct json_object *regions)
{
	char name[512], dn[1024];
	size_t r, k;

	for (r = 0; regions && r < json_object_array_length(regions); r++) {
		struct json_object *reg = json_object_array_get_idx(regions, r);
		struct json_object *fl = geta(reg, "features"), *sites = geta(reg, "sites");
		struct json_object *site = NULL;
		size_t len;

		snprintf(name, sizeof(name), "%s [",
			 cli_fmt_region(gets_(reg, "name"), dn, sizeof(dn)));
		for (k = 0; fl && k < json_object_array_length(fl); k++) {
			len = strlen(name);
			snprintf(name + len, sizeof(name) - len, "%s%s", k ? "," : "",
				 json_object_get_string(json_object_array_get_idx(fl, k)));
		}
		len = strlen(name);
		snprintf(name + len, sizeof(name) - len, "]");
		for (k = 0; sites && k < json_object_array_length(sites) && !site; k++)
			if (!strcmp(gets_(json_object_array_get_idx(sites, k), "kind"), "begin"))
				site = json_object_array_get_idx(sites, k);
		f_varint(m, 1, r + 1);
		f_varint(m, 2, (uint64_t)str_id(t, name));
		f_varint(m, 4, (uint64_t)str_id(t, site ? gets_(site, "file") : ""));
		f_varint(m, 5, site ? (uint64_t)geti(site, "line") : 0);
		f_msg(p, 5, m);
		f_varint(l, 1, r + 1);	/* Line */
		f_varint(l, 2, site ? (uint64_t)geti(site, "line") : 0);
		f_varint(m, 1, r + 1);	/* Location */
		f_varint(m, 2, 1);	/* the one mapping */
		f_msg(m, 4, l);
		f_msg(p, 4, m);
	}
}

static void label(struct pb *s, struct pb *m, struct strtab *t, const char *key,
		  const char *str, int64_t num)
{
	f_varint(m, 1, (uint64_t)str_id(t, key));
	if (str)
		f_varint(m, 2, (uint64_t)str_id(t, str));
	else
		f_varint(m, 3, (uint64_t)num);
	f_msg(s, 3, m);
}

#define NVALS 5

static const char *name_at(struct json_object *names, size_t k)
{
	return json_object_get_string(json_object_array_get_idx(names, k));
}

/* The string table after the rest of p, the whole gzip-compressed into f; frees t.
 * 0 or -errno. */
static int finish(FILE *f, struct pb *p, struct strtab *t, int oom)
{
	unsigned char out[16384];
	int ret = 0, zr = Z_OK, v;
	z_stream z;

	for (v = 0; v < t->n; v++)	/* the string table, last: every index is known */
		f_bytes(p, 6, t->s[v], strlen(t->s[v]));
	memset(&z, 0, sizeof(z));
	if (oom || p->oom ||
	    deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY)) {
		ret = -ENOMEM;
		goto out;
	}
	z.next_in = p->b;
	z.avail_in = (uInt)p->n;
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		zr = deflate(&z, Z_FINISH);
		if (fwrite(out, 1, sizeof(out) - z.avail_out, f) != sizeof(out) - z.avail_out)
			ret = -EIO;
	} while (zr == Z_OK && !ret);
	if (zr != Z_STREAM_END && !ret)
		ret = -EIO;
	deflateEnd(&z);
out:
	for (v = 0; v < t->n; v++)
		free(t->s[v]);
	free(t->s);
	return ret;
}

int cli_write_pprof(FILE *f, struct json_object *st, struct json_object *cat, long pid,
		   int64_t duration_ns)
{
	static const char *const vals[NVALS][3] = {
		{ "wall", "nanoseconds", "ns" },	{ "cpu", "nanoseconds", "cpu_ns" },
		{ "offcpu", "nanoseconds", "offcpu_ns" }, { "count", "count", "count" },
		{ "sampled_cpu", "nanoseconds", "sampled_ns" },
	};
	struct json_object *regions = geta(cat, "regions"), *paths, *sm;
	struct json_object *lists[2] = { geta(st, "paths"), NULL };
	int which;
	struct pb p = { 0 }, m = { 0 }, l = { 0 }, s = { 0 }, pk = { 0 };
	struct strtab t = { 0 };
	char exe[4096], link[64];
	size_t i, k;
	ssize_t n;
	int ret, v;

	str_id(&t, "");	/* string_table[0] must be "" */
	snprintf(link, sizeof(link), "/proc/%ld/exe", pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n > 0)
		exe[n] = 0;
	else
		snprintf(exe, sizeof(exe), "%s", gets_(st, "comm"));
	for (v = 0; v < NVALS; v++)
		value_type(&p, &m, &t, 1, vals[v][0], vals[v][1]);
	f_varint(&m, 1, 1);	/* Mapping: the executable, already symbolic */
	f_varint(&m, 5, (uint64_t)str_id(&t, exe));
	f_varint(&m, 7, 1);
	f_varint(&m, 9, 1);
	f_msg(&p, 3, &m);
	functions(&p, &m, &l, &t, regions);
	/* the traced paths, then the sampler's stacks (featprof sample): each kind has zeros
	 * in the other's values */
	lists[1] = json_object_object_get_ex(st, "sampling", &sm) ? geta(sm, "paths") : NULL;
	for (which = 0; which < 2; which++) {
		paths = lists[which];
		for (i = 0; paths && i < json_object_array_length(paths); i++) {
			struct json_object *ph = json_object_array_get_idx(paths, i);
			struct json_object *names = geta(ph, "path");
			size_t np = names ? json_object_array_length(names) : 0;

			for (k = 0; k < np; k++)	/* with an unknown region: left out */
				if (region_index(regions, name_at(names, k)) < 0)
					break;
			if (!np || k < np)
				continue;
			for (k = np; k-- > 0;)	/* leaf first */
				varint(&pk, (uint64_t)region_index(regions, name_at(names, k)) + 1);
			f_msg(&s, 1, &pk);
			for (v = 0; v < NVALS; v++)
				varint(&pk, (uint64_t)getd(ph, vals[v][2]));
			f_msg(&s, 2, &pk);
			label(&s, &m, &t, "pid", NULL, pid);
			label(&s, &m, &t, "exe", exe, 0);
			f_msg(&p, 2, &s);
		}
	}
	f_varint(&p, 9, (uint64_t)time(NULL) * 1000000000ULL);
	f_varint(&p, 10, (uint64_t)duration_ns);
	value_type(&p, &m, &t, 11, "wall", "nanoseconds");
	f_varint(&p, 12, 1);
	f_varint(&p, 14, (uint64_t)str_id(&t, "wall"));
	ret = finish(f, &p, &t, p.oom || m.oom || s.oom || pk.oom || l.oom);
	free(p.b);
	free(m.b);
	free(l.b);
	free(s.b);
	free(pk.b);
	return ret;
}

/* One function and its location (id), named name, in object mapping (0: none). */
static void fn_loc(struct pb *p, struct pb *m, struct pb *l, struct strtab *t, uint64_t id,
		   const char *name, const char *file, uint64_t mapping)
{
	f_varint(m, 1, id);
	f_varint(m, 2, (uint64_t)str_id(t, name));
	f_varint(m, 3, (uint64_t)str_id(t, name));
	f_varint(m, 4, (uint64_t)str_id(t, file));
	f_msg(p, 5, m);
	f_varint(l, 1, id);	/* Line */
	f_varint(m, 1, id);	/* Location */
	f_varint(m, 2, mapping);
	f_msg(m, 4, l);
	f_msg(p, 4, m);
}

/* The objects the frames fell in: mapping i + 1 each, with its build id. */
static void mappings(struct pb *p, struct pb *m, struct strtab *t, struct json_object *objs)
{
	size_t i;

	for (i = 0; objs && i < json_object_array_length(objs); i++) {
		struct json_object *o = json_object_array_get_idx(objs, i);

		f_varint(m, 1, i + 1);
		f_varint(m, 2, (uint64_t)geti(o, "start"));
		f_varint(m, 3, (uint64_t)geti(o, "end"));
		f_varint(m, 4, (uint64_t)geti(o, "offset"));
		f_varint(m, 5, (uint64_t)str_id(t, gets_(o, "path")));
		f_varint(m, 6, (uint64_t)str_id(t, gets_(o, "build_id")));
		f_varint(m, 7, 1);	/* has_functions: named already */
		f_msg(p, 3, m);
	}
}

/*
 * sample --stacks as pprof: one sample per distinct (regions, stack), values its samples
 * and their CPU time (samples x period); its locations leaf first: the call stack's
 * functions (each in the mapping of its object, with the object's build id), then the
 * open regions innermost first, then the regions' features (joined by '+') as the root,
 * so that a flame graph opens at the feature. Functions and locations 1..F are the
 * report's functions; regions and feature sets follow (F + 1 + their index in names).
 */
int cli_write_stacks_pprof(FILE *f, struct json_object *sm, long pid, int64_t duration_ns)
{
	struct json_object *sk = json_object_object_get(sm, "stacks");
	struct json_object *fns = geta(sk, "functions"), *a = geta(sk, "samples");
	struct pb p = { 0 }, m = { 0 }, l = { 0 }, s = { 0 }, pk = { 0 };
	struct strtab t = { 0 }, names = { 0 };
	double period = getd(sm, "period_ns");
	size_t nf = fns ? json_object_array_length(fns) : 0, i, k;
	char buf[1024];
	int ret;

	if (!a || !fns) {
		fprintf(stderr, "featprof sample: the report has no call stacks\n");
		return 1;
	}
	str_id(&t, "");
	value_type(&p, &m, &t, 1, "samples", "count");
	value_type(&p, &m, &t, 1, "cpu", "nanoseconds");
	mappings(&p, &m, &t, geta(sk, "objects"));
	for (i = 0; i < nf; i++) {
		struct json_object *fn = json_object_array_get_idx(fns, i);
		int64_t ob = geti(fn, "object_index");

		fn_loc(&p, &m, &l, &t, i + 1, gets_(fn, "name"), gets_(fn, "object"),
		       ob >= 0 && json_object_object_get(fn, "object_index") ? (uint64_t)ob + 1
									     : 0);
	}
	for (i = 0; i < json_object_array_length(a); i++) {
		struct json_object *x = json_object_array_get_idx(a, i);
		struct json_object *st = geta(x, "stack"), *rl = geta(x, "regions");
		struct json_object *fl = geta(x, "features");
		size_t len = 0;

		for (k = st ? json_object_array_length(st) : 0; k-- > 0;) {
			int64_t id = json_object_get_int64(json_object_array_get_idx(st, k));

			if (id >= 0 && (size_t)id < nf)
				varint(&pk, (uint64_t)id + 1);
		}
		for (k = rl ? json_object_array_length(rl) : 0; k-- > 0;) {
			snprintf(buf, sizeof(buf), "r%s", name_at(rl, k));
			varint(&pk, nf + 1 + (uint64_t)str_id(&names, buf));
		}
		buf[len++] = 'f';
		buf[len] = 0;
		for (k = 0; fl && k < json_object_array_length(fl) && len < sizeof(buf); k++)
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", k ? "+" : "",
						name_at(fl, k));
		if (len == 1)
			snprintf(buf, sizeof(buf), "f%s", rl && json_object_array_length(rl)
								  ? "[no feature]" : "[no region]");
		varint(&pk, nf + 1 + (uint64_t)str_id(&names, buf));
		f_msg(&s, 1, &pk);
		varint(&pk, (uint64_t)geti(x, "samples"));
		varint(&pk, (uint64_t)((double)geti(x, "samples") * period));
		f_msg(&s, 2, &pk);
		label(&s, &m, &t, "pid", NULL, pid);
		f_msg(&p, 2, &s);
	}
	for (i = 0; i < (size_t)names.n; i++)	/* regions and feature sets: no object */
		fn_loc(&p, &m, &l, &t, nf + 1 + i, names.s[i] + 1, "", 0);
	f_varint(&p, 9, (uint64_t)time(NULL) * 1000000000ULL);
	f_varint(&p, 10, (uint64_t)duration_ns);
	value_type(&p, &m, &t, 11, "cpu", "nanoseconds");
	f_varint(&p, 12, (uint64_t)period);
	f_varint(&p, 14, (uint64_t)str_id(&t, "cpu"));
	ret = finish(f, &p, &t, p.oom || m.oom || s.oom || pk.oom || l.oom);
	for (i = 0; i < (size_t)names.n; i++)
		free(names.s[i]);
	free(names.s);
	free(p.b);
	free(m.b);
	free(l.b);
	free(s.b);
	free(pk.b);
	if (ret == -ENOMEM)
		fprintf(stderr, "featprof sample: out of memory\n");
	return ret;
}
