/* SPDX-License-Identifier: GPL-2.0 */
/* featprofd's socket and loop (daemon/serve/server.c), the top of its rooms. */
#ifndef FP_SERVER_H
#define FP_SERVER_H

#include "opts.h"

/* Serves until SIGTERM or SIGINT; 0, or -errno when the socket or loop failed. */
int fp_server_run(const struct fp_server_opts *opts);

#endif
