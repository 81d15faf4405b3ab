// SPDX-License-Identifier: GPL-2.0
/*
 * What a bare cpu-clock event costs the thread it samples (docs/BENCHMARKS.md "Call
 * stacks"): opens one on thread TID with a period of 1e9/HZ ns, no program and no ring,
 * inherited by the threads it creates (as featprofd's sampler opens them) or not,
 * disabled; then for each line it reads, "on" or "off", enables or disables it and
 * answers "ok", until its input ends.
 *
 *	event_cost TID HZ inherit|noinherit
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.disabled = 1,
	};
	char line[16];
	int fd;

	if (argc != 4 || atoi(argv[2]) <= 0) {
		fprintf(stderr, "usage: event_cost TID HZ inherit|noinherit\n");
		return 2;
	}
	a.sample_period = 1000000000ULL / (unsigned)atoi(argv[2]);
	a.inherit = !strcmp(argv[3], "inherit");
	fd = (int)syscall(SYS_perf_event_open, &a, atoi(argv[1]), -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		perror("perf_event_open");
		return 1;
	}
	while (fgets(line, sizeof(line), stdin)) {
		if (ioctl(fd, strncmp(line, "on", 2) ? PERF_EVENT_IOC_DISABLE
						     : PERF_EVENT_IOC_ENABLE, 0)) {
			perror("ioctl");
			return 1;
		}
		printf("ok\n");
		fflush(stdout);
	}
	close(fd);
	return 0;
}
