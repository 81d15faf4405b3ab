// SPDX-License-Identifier: GPL-2.0
/*
 * What a bare cpu-clock event costs the thread it samples (docs/BENCHMARKS.md "Call
 * stacks"): opens one on thread TID with a period of 1e9/HZ ns, no program and no ring,
 * inherited by the threads it creates (as featprofd's sampler opens them) or not, and
 * holds it for SECS seconds.
 *
 *	event_cost TID HZ SECS inherit|noinherit
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_CPU_CLOCK,
	};
	int fd;

	if (argc != 5 || atoi(argv[2]) <= 0) {
		fprintf(stderr, "usage: event_cost TID HZ SECS inherit|noinherit\n");
		return 2;
	}
	a.sample_period = 1000000000ULL / (unsigned)atoi(argv[2]);
	a.inherit = !strcmp(argv[4], "inherit");
	fd = (int)syscall(SYS_perf_event_open, &a, atoi(argv[1]), -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		perror("perf_event_open");
		return 1;
	}
	sleep((unsigned)atoi(argv[3]));
	close(fd);
	return 0;
}
