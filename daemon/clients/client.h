/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The client connection (daemon/clients/client.c): the table of connected clients, each one's
 * input cut into lines and output queue, the reply and push envelopes. The lowest of the
 * daemon's rooms (docs/ARCHITECTURE.md, "Layers"): it calls no other room; a complete
 * request line goes up through the handler registered at start.
 *
 * Lifetime: nothing frees a client while a caller may hold a pointer to it. A client
 * that must go (peer closed, write error, backlog over the limit) is marked dead;
 * fp_clients_reap() frees the dead ones once per loop round, after everything of that
 * round (the subscriptions room first drops what a dead client had).
 */
#ifndef FP_CLIENT_H
#define FP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "access.h"
#include "common/err.h"
#include "common/protocol.h"

#define FP_MAX_BACKLOG (16u << 20)
/* What one unprivileged uid may hold: a quarter of each (docs/TRACING.md, "Security"). */
#define FP_USER_CLIENTS (FP_MAX_CLIENTS / 4)
#define FP_ROOT_CLIENTS 8			/* client slots only root may take */
#define FP_USER_BACKLOG (FP_MAX_BACKLOG * 2)	/* queued output, all its clients */

struct json_object;

struct fp_client {
	int fd, slot;
	struct fp_peer peer;
	char *in;
	size_t inlen;
	bool discarding;	/* inside an over-long line, up to its newline */
	char *out;		/* queued output: out[outoff .. outoff + outlen) */
	size_t outoff, outlen, outcap;
	bool want_out;
	bool more;		/* complete lines wait in in[] for the next round */
	bool eof;		/* the peer shut its side: no more requests; what is queued
				 * still goes out, then the client is dropped */
	bool dead;		/* freed by fp_clients_reap */
};

/* Called for each complete request line of a client (not NUL-terminated). */
typedef void (*fp_line_fn)(struct fp_client *c, const char *line, size_t len);

/* epfd: the loop's; a client's epoll data is (slot << 8) | tag. */
void fp_clients_init(int epfd, int tag, fp_line_fn on_line);
/* Accepts what waits on the listening socket (refusing, with a reason, what is over a
 * limit). */
void fp_clients_accept(int lfd);
/* The loop saw events on the client in slot. */
void fp_clients_event(int slot, uint32_t events);
/* One more turn for every client with lines waiting; true while any still has some. */
bool fp_clients_serve_waiting(void);
/* Frees the dead clients; the number freed. */
int fp_clients_reap(void);
/* Marks every client dead (the daemon stops). */
void fp_clients_kill_all(void);
int fp_clients_count(void);

/* Queues one JSON line to c (consumes obj); a dead client drops it. */
void fp_client_send(struct fp_client *c, struct json_object *obj);
/* The reply envelope: {"id":ID,"result":RESULT}, or where err holds a failure
 * {"id":ID,"error":{"code","message"}}, its code the protocol status of err's
 * (fp_status_of). Consumes result; id is not consumed (NULL: null). */
void fp_client_reply(struct fp_client *c, struct json_object *id, const struct fp_err *err,
		     struct json_object *result);
/* A push: {"subscription":SUB[,"pid":PID][,"exe":EXE],KEY:VAL} (pid 0, exe NULL: none).
 * Consumes val. */
void fp_client_push(struct fp_client *c, int sub, int pid, const char *exe, const char *key,
		    struct json_object *val);
/* Bytes queued to c and not yet taken by its socket. */
size_t fp_client_queued(const struct fp_client *c);

#endif
