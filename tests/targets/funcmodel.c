// SPDX-License-Identifier: GPL-2.0
/*
 * A configurable program whose functions' CPU times depend on its options in known ways,
 * one of them through data, for featprof run --stacks, model --functions and diff
 * --functions (docs/MODELS.md, tests/integration/test_functions_model.py).
 *
 *	funcmodel [Compress=0|1,Checksum=0|1,Window=0|1,Verbose=0|1] [UNIT]
 *
 * Every function burns CPU on a fixed count of iterations (UNIT per unit, default
 * 100000: a few hundred microseconds here), so its CPU time does not depend on the
 * machine's load; the functions, each kept out of line:
 *	parse_input   20 units, always
 *	window_init    5 units when Window, in region setup_window (feature Window)
 *	match_find    30 units when Compress, in region compress (feature Compress), twice
 *	              that when Window too: Window sets the match window, a datum that
 *	              match_find reads, with no code of Window's in it (the influence
 *	              through data: no region of feature Window contains match_find)
 *	crc_block     20 units when Checksum, in region checksum (feature Checksum); 23
 *	              units in the FUNCMODEL_SLOW build (a "patch" that slows it by ~3% of
 *	              the run with every option on: 3 of 110 units)
 *	emit_output    5 units, 8 more when Verbose, outside regions
 * Built without featprof.h too (FUNCMODEL_PLAIN: no probes at all). With $FUNCMODEL_TRUTH
 * set, appends to that file a JSON line of each function's CPU time as the thread's own
 * clock measured it (CLOCK_THREAD_CPUTIME_ID around each call).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef FUNCMODEL_PLAIN
#define FP_BEGIN(name, ...) do { } while (0)
#define FP_END(name) do { } while (0)
#else
#include "featprof.h"
#endif

#ifndef FUNCMODEL_SLOW
#define FUNCMODEL_SLOW 0
#endif

enum { F_PARSE, F_WINDOW, F_MATCH, F_CRC, F_EMIT, F_N };
static const char *const fnames[F_N] = { "parse_input", "window_init", "match_find",
					 "crc_block", "emit_output" };
static long long cpu[F_N];	/* ns, by the thread's CPU clock */
static long unit = 100000;
static int window = 1;		/* the match window: Window's datum */
static volatile unsigned long sink;

static long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* n iterations of a xorshift: the same work wherever it is inlined */
static inline __attribute__((always_inline)) void burn(long n)
{
	unsigned long x = sink | 1;

	for (long i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	sink = x;
}

__attribute__((noinline)) static void parse_input(void)
{
	burn(20 * unit);
}

__attribute__((noinline)) static void window_init(void)
{
	burn(5 * unit);
	window = 2;
}

/* the time it takes grows with the window, which it only reads */
__attribute__((noinline)) static void match_find(void)
{
	burn(window * unit);
}

__attribute__((noinline)) static void crc_block(void)
{
	burn(2 * unit + (FUNCMODEL_SLOW ? 3 * unit / 10 : 0));
}

__attribute__((noinline)) static void emit_output(int verbose)
{
	burn((5 + (verbose ? 8 : 0)) * unit);
}

#define TIMED(k, call)                          \
	do {                                    \
		long long t_ = cpu_ns();        \
		call;                           \
		cpu[k] += cpu_ns() - t_;        \
	} while (0)

static void report_truth(void)
{
	const char *path = getenv("FUNCMODEL_TRUTH");
	char line[512];
	int fd, n, k;

	if (!path || (fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0)
		return;
	n = snprintf(line, sizeof(line), "{\"pid\": %d", (int)getpid());
	for (k = 0; k < F_N; k++)
		n += snprintf(line + n, sizeof(line) - (size_t)n, ", \"%s\": %lld", fnames[k],
			      cpu[k]);
	n += snprintf(line + n, sizeof(line) - (size_t)n, "}\n");
	if (write(fd, line, (size_t)n) != n)
		perror("funcmodel: truth");
	close(fd);
}

int main(int argc, char **argv)
{
	static const char *const onames[] = { "Compress", "Checksum", "Window", "Verbose" };
	int opt[4] = { 0 }, i, k;
	char *s = argc > 1 ? strdup(argv[1]) : NULL, *save = NULL, *kv;

	for (kv = s ? strtok_r(s, ",", &save) : NULL; kv; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');

		for (k = 0; eq && k < 4 && strncmp(kv, onames[k], (size_t)(eq - kv)); k++)
			;
		if (!eq || k == 4 || (strcmp(eq, "=0") && strcmp(eq, "=1"))) {
			fprintf(stderr, "funcmodel: options are Compress, Checksum, Window, "
				"Verbose =0|1: '%s'\n", kv);
			return 2;
		}
		opt[k] = eq[1] == '1';
	}
	free(s);
	if (argc > 2 && (unit = atol(argv[2])) <= 0) {
		fprintf(stderr, "funcmodel: UNIT must be positive\n");
		return 2;
	}
	TIMED(F_PARSE, parse_input());
	if (opt[2]) {
		FP_BEGIN(setup_window, "Window");
		TIMED(F_WINDOW, window_init());
		FP_END(setup_window);
	}
	for (i = 0; opt[0] && i < 30; i++) {
		FP_BEGIN(compress, "Compress");
		TIMED(F_MATCH, match_find());
		FP_END(compress);
	}
	for (i = 0; opt[1] && i < 10; i++) {
		FP_BEGIN(checksum, "Checksum");
		TIMED(F_CRC, crc_block());
		FP_END(checksum);
	}
	TIMED(F_EMIT, emit_output(opt[3]));
	report_truth();
	return 0;
}
