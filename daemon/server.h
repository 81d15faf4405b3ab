/* SPDX-License-Identifier: GPL-2.0 */
#ifndef FP_SERVER_H
#define FP_SERVER_H

#include <sys/types.h>

#include "stats.h"

struct fp_daemon_cal {
	struct fp_calibration cal;
	int kernel_optimizes;	/* the kernel rewrites nop5 uprobes into calls */
	int optimized;		/* targets are attached at the shielded nop5 */
	double nop1_pair_ns;	/* measured pair cost at each attach point (0: not) */
	double nop5_pair_ns;
};

struct fp_server_opts {
	const char *socket_path;
	gid_t gid;		/* group allowed to connect (0: root only) */
	struct fp_daemon_cal *cal;
	void (*ready)(void);	/* called once the socket listens */
};

int fp_server_run(const struct fp_server_opts *opts);

#endif
