/* SPDX-License-Identifier: GPL-2.0 */
/* featprofd's top (daemon/serve/): the command line, the socket and its loop, the verb
 * table. Its one private header: what main.c, server.c and verbs.c call of each other. */
#ifndef FP_SERVE_IMPL_H
#define FP_SERVE_IMPL_H

#include <stddef.h>

#include "registry/opts.h"

/* --- server.c --- */
/* featprofd's socket and loop (daemon/serve/server.c), the top of its rooms. */
/* Serves until SIGTERM or SIGINT; 0, or -errno when the socket or loop failed. */
int fp_server_run(const struct fp_server_opts *opts);

/* --- verbs.c --- */
/*
 * featprofd's requests (daemon/serve/verbs.c): one request line in, exactly one reply out.
 * Parsing and admission happen here; the work is the rooms' below (registry, groups,
 * subscriptions, client connection).
 */
struct fp_client;

void fp_verbs_init(const struct fp_server_opts *opts);
void fp_verbs_handle_line(struct fp_client *c, const char *line, size_t len);

#endif
