/* SPDX-License-Identifier: GPL-2.0 */
/*
 * featprofd's requests (daemon/serve/verbs.c): one request line in, exactly one reply out.
 * Parsing and admission happen here; the work is the rooms' below (registry, groups,
 * subscriptions, client connection).
 */
#ifndef FP_VERBS_H
#define FP_VERBS_H

#include <stddef.h>

#include "opts.h"

struct fp_client;

void fp_verbs_init(const struct fp_server_opts *opts);
void fp_verbs_handle_line(struct fp_client *c, const char *line, size_t len);

#endif
