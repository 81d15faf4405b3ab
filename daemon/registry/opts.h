/* SPDX-License-Identifier: GPL-2.0 */
/* featprofd's settings, read at start (daemon/serve/main.c) and used by the rooms. */
#ifndef FP_OPTS_H
#define FP_OPTS_H

#include <sys/types.h>

#include "util/stats.h"
#include "common/regdefs.h"

struct fp_server_opts {
	const char *socket_path;
	gid_t gid;		/* group allowed to connect (0: root only) */
	struct fp_daemon_cal *cal;
	enum fp_site_choice site;	/* --site, for recalibration */
	void (*ready)(void);	/* called once the socket listens */
	struct fp_regdefs defs;	/* installed region definitions (--regions-dir) */
};

#endif
