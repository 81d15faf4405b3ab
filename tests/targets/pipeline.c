// SPDX-License-Identifier: GPL-2.0
/*
 * A multi-threaded configurable program with known influences, for featprof model's
 * threads, one-of options, numeric options and influences no feature names
 * (docs/MODELS.md, tests/integration/test_model.py t_model_threads).
 *
 *	pipeline check=none|crc|sha,level=N,threads=T,delta=0|1 [UNIT_US]
 *
 * 40 blocks. Times in units of UNIT_US microseconds (default 500) of the thread's own
 * CPU time (CLOCK_THREAD_CPUTIME_ID), so they hold when threads share the CPUs:
 *	outside every region              5 units, first
 *	region read (feature Core)        1 unit a block, on the main thread
 *	region crc (feature crc)          0.5 a block when check=crc (main thread)
 *	region sha (feature sha)          1.5 a block when check=sha (main thread)
 *	region delta (feature delta)      0.25 a block when delta=1 (main thread)
 *	region match (feature level)      0.5 + 0.25 level a block, and 0.5 more when
 *	                                  delta=1 (an influence its features do not name),
 *	                                  on T worker threads at once, blocks dealt in turn
 * So the CPU time is 65 + 20 [crc] + 60 [sha] + 10 level + 30 delta units, and the wall
 * time 45 + 20 [crc] + 60 [sha] + 10 delta + (20 + 10 level + 20 delta) / T (T at most
 * the CPUs). With $PIPELINE_TRUTH set, appends to that file a JSON line of each region's
 * thread CPU time as the program measured it.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "featprof.h"

#define BLOCKS 40
enum { R_READ, R_CRC, R_SHA, R_DELTA, R_MATCH, R_N };
static const char *const names[R_N] = { "read", "crc", "sha", "delta", "match" };

static long unit_ns = 500000;
static int level = 1, threads = 1, use_delta, check;	/* check: 0 none, 1 crc, 2 sha */
static long long truth[R_N];
static pthread_mutex_t truth_lock = PTHREAD_MUTEX_INITIALIZER;

static long long cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Spins quarters of a unit of this thread's CPU time; adds it to truth[k] (k >= 0). */
static void spin(long quarters, int k)
{
	long long t0 = cpu_now(), end = t0 + quarters * unit_ns / 4, t;

	while ((t = cpu_now()) < end)
		;
	if (k >= 0) {
		pthread_mutex_lock(&truth_lock);
		truth[k] += t - t0;
		pthread_mutex_unlock(&truth_lock);
	}
}

static void *worker(void *p)
{
	long id = (long)p;

	for (int b = (int)id; b < BLOCKS; b += threads) {
		FP_BEGIN(match, "level");
		spin(2 + level + 2 * use_delta, R_MATCH);
		FP_END(match);
	}
	return NULL;
}

static int parse(char *s)
{
	char *save = NULL, *kv;

	for (kv = strtok_r(s, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		if (!strcmp(kv, "check=none") || !strcmp(kv, "check=crc") ||
		    !strcmp(kv, "check=sha"))
			check = kv[6] == 'n' ? 0 : kv[6] == 'c' ? 1 : 2;
		else if (!strncmp(kv, "level=", 6) && atoi(kv + 6) >= 1 && atoi(kv + 6) <= 9)
			level = atoi(kv + 6);
		else if (!strncmp(kv, "threads=", 8) && atoi(kv + 8) >= 1 &&
			 atoi(kv + 8) <= 16)
			threads = atoi(kv + 8);
		else if (!strcmp(kv, "delta=0") || !strcmp(kv, "delta=1"))
			use_delta = kv[6] == '1';
		else
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t tid[16];
	const char *path = getenv("PIPELINE_TRUTH");
	char *s = argc > 1 ? strdup(argv[1]) : NULL;
	int b, k;

	if (s && parse(s)) {
		fprintf(stderr, "pipeline: options are check=none|crc|sha, level=1..9, "
			"threads=1..16, delta=0|1: '%s'\n", argv[1]);
		return 2;
	}
	free(s);
	if (argc > 2)
		unit_ns = atol(argv[2]) * 1000;
	spin(20, -1);	/* outside regions */
	for (b = 0; b < BLOCKS; b++) {
		FP_BEGIN(read, "Core");
		spin(4, R_READ);
		FP_END(read);
		if (check == 1) {
			FP_BEGIN(crc, "crc");
			spin(2, R_CRC);
			FP_END(crc);
		} else if (check == 2) {
			FP_BEGIN(sha, "sha");
			spin(6, R_SHA);
			FP_END(sha);
		}
		if (use_delta) {
			FP_BEGIN(delta, "delta");
			spin(1, R_DELTA);
			FP_END(delta);
		}
	}
	for (long t = 0; t < threads; t++)
		pthread_create(&tid[t], NULL, worker, (void *)t);
	for (int t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	if (path) {
		FILE *f = fopen(path, "ae");

		if (f) {
			fprintf(f, "{\"pid\": %d", (int)getpid());
			for (k = 0; k < R_N; k++)
				fprintf(f, ", \"%s\": %lld", names[k], truth[k]);
			fprintf(f, "}\n");
			fclose(f);
		}
	}
	return 0;
}
