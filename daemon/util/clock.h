/* SPDX-License-Identifier: GPL-2.0 */
/* The daemon's one clock: CLOCK_MONOTONIC in ns (the BPF programs' bpf_ktime_get_ns). */
#ifndef FP_CLOCK_H
#define FP_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t fp_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif
