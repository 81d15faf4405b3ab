// SPDX-License-Identifier: GPL-2.0
/*
 * A program made of an executable and a shared library with regions in both
 * (tests/integration/test_services.py t_codec_builds; built default, FEATPROF_INPROCESS
 * and FEATPROF_SAMPLING, each with its own build of libcodec.c):
 *
 *	codec BLOCKS US [THREADS] [--wait]
 *
 * THREADS threads (default 2), each in region frontend [Frontend] for its whole loop of
 * BLOCKS blocks: per block cli_io [Frontend] (US/2 us, in the executable) and
 * codec_block(US) in the library (codec_block US*3/4 us, codec_check nested US/4 us).
 * With --wait it prints "ready PID" and waits for a line first. Prints "done".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "featprof.h"

void codec_block(long us);

static long blocks, us;

static void spin_ns(long ns)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

static void *worker(void *arg)
{
	long i;

	(void)arg;
	FP_BEGIN(frontend, "Frontend");
	for (i = 0; i < blocks; i++) {
		FP_BEGIN(cli_io, "Frontend");
		spin_ns(us * 500);
		FP_END(cli_io);
		codec_block(us);
	}
	FP_END(frontend);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 3 && argv[3][0] != '-' ? atoi(argv[3]) : 2, i;
	pthread_t th[64];
	char line[64];

	if (argc < 3 || threads < 1 || threads > 64) {
		fprintf(stderr, "usage: codec BLOCKS US [THREADS] [--wait]\n");
		return 2;
	}
	blocks = atol(argv[1]);
	us = atol(argv[2]);
	if (!strcmp(argv[argc - 1], "--wait")) {
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 1;
	}
	for (i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	printf("done\n");
	return 0;
}
