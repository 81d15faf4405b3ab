/* SPDX-License-Identifier: GPL-2.0 */
/* featprofd's top (daemon/serve/): the command line, the socket and its loop, the verb
 * table. Its one private header: what main.c, server.c and verbs.c call of each other. */
#ifndef FP_SERVE_IMPL_H
#define FP_SERVE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* --- args.c: the requests' plain arguments, a bad one one line in e --- */
struct fp_err;
struct json_object;

/* An integer argument in [lo, hi], def when absent. */
int fp_verbs_arg_int(struct json_object *req, const char *key, int64_t lo, int64_t hi,
		     int64_t def, int64_t *out, struct fp_err *e);
/* A boolean argument, def when absent. */
int fp_verbs_arg_bool(struct json_object *req, const char *key, bool def, bool *out,
		      struct fp_err *e);
/* "exe": an absolute path. */
int fp_verbs_arg_exe(struct json_object *req, const char **path, struct fp_err *e);
/* The sample verbs' hz, on and remote. */
int fp_verbs_arg_sample(struct json_object *req, int *hz, bool *on, bool *remote,
			struct fp_err *e);
/* sample's stacks and unwind: how each sample's call stack is taken, FP_UNWIND_*. */
int fp_verbs_arg_unwind(struct json_object *req, int *unwind, struct fp_err *e);

/* --- leases.c --- */
/*
 * What a client changed for as long as its connection lasts ("temporary": true), undone
 * when it closes (daemon/serve/leases.c).
 */
struct fp_target;
struct json_object;

/* Which of t's regions are enabled now (the caller frees it); NULL: no memory. */
uint8_t *fp_leases_before(struct fp_target *t);
/* An enable by c of the regions sel (per region of t's catalog) is done; before: which
 * were enabled before it. temporary: those it turned on are c's lease (req's names with
 * them); else they are permanent, whoever leased them. 0 or -ENOMEM. */
int fp_leases_enabled(struct fp_client *c, struct fp_target *t, const uint8_t *before,
		      const uint8_t *sel, struct json_object *req, bool temporary);
/* Sampling of t started or stopped by c: any earlier lease of it ends; temporary (a
 * start): c's now. 0 or -ENOMEM. */
int fp_leases_sampling(struct fp_client *c, struct fp_target *t, bool temporary);
/* The leases of clients that are dead (before they are freed) undone and dropped. */
void fp_leases_reap(void);

#endif
