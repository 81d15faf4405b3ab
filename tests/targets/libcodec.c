// SPDX-License-Identifier: GPL-2.0
/*
 * The codec of tests/targets/codec.c, a shared library with regions of its own (built
 * with -fvisibility=hidden, as libraries are, its API exported by name):
 *	codec_block [Codec]   a block's work: 3/4 of its time its own,
 *	codec_check [Check]   nested in it: the other 1/4 (a checksum)
 * Times spin on the clock, so that they hold under load.
 */
#include <time.h>

#include "featprof.h"

#define CODEC_API __attribute__((visibility("default")))

CODEC_API void codec_block(long us);

static void spin_ns(long ns)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

void codec_block(long us)
{
	FP_BEGIN(codec_block, "Codec");
	spin_ns(us * 750);
	FP_BEGIN(codec_check, "Check");
	spin_ns(us * 250);
	FP_END(codec_check);
	FP_END(codec_block);
}
