// SPDX-License-Identifier: GPL-2.0
/*
 * featprofd's client connections (daemon/clients/client.h): the table of clients, each one's
 * input and output, the reply and push envelopes.
 *
 * A client's input is cut into lines of at most FP_MAX_LINE bytes (a longer one gets
 * "too_long" and is discarded up to its newline); output is queued and written as the
 * socket takes it. A client that stops reading is dropped when its backlog passes
 * FP_MAX_BACKLOG (or its uid's clients together pass FP_USER_BACKLOG), so it cannot make
 * the daemon grow without bound.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client.h"
#include "util/log.h"
#include "common/request.h"

static struct {
	int epfd, tag;
	fp_line_fn on_line;
	int spare_fd;		/* /dev/null, given up to refuse a client at EMFILE */
	struct fp_client *slots[FP_MAX_CLIENTS];
} cl = { .epfd = -1, .spare_fd = -1 };

static uint64_t ev_data(int slot)
{
	return ((uint64_t)slot << 8) | (uint64_t)cl.tag;
}

void fp_clients_init(int epfd, int tag, fp_line_fn on_line)
{
	cl.epfd = epfd;
	cl.tag = tag;
	cl.on_line = on_line;
	cl.spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/* --- output ------------------------------------------------------------------------ */

static void client_kill(struct fp_client *c)
{
	c->dead = true;
}

size_t fp_client_queued(const struct fp_client *c)
{
	return c->outlen;
}

/* The queue's storage once it is empty: a buffer grown by a burst (a recording, a
 * reader that fell behind) goes back to the allocator instead of staying with the client. */
#define OUT_KEEP (64u << 10)

static void flush_client(struct fp_client *c)
{
	struct epoll_event ev = { .data.u64 = ev_data(c->slot) };
	ssize_t n;

	while (c->outlen && !c->dead) {
		n = send(c->fd, c->out + c->outoff, c->outlen, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR)
				client_kill(c);
			break;
		}
		c->outoff += (size_t)n;	/* no memmove per write: a long queue drains in
					 * time linear in its length */
		c->outlen -= (size_t)n;
	}
	if (!c->outlen) {
		c->outoff = 0;
		if (c->outcap > OUT_KEEP) {
			free(c->out);
			c->out = NULL;
			c->outcap = 0;
		}
		if (c->eof)	/* a half-closed client has had all its replies */
			client_kill(c);
	}
	if (!c->dead && !c->eof && (c->outlen != 0) != c->want_out) {
		ev.events = EPOLLIN | (c->outlen ? EPOLLOUT : 0);
		if (epoll_ctl(cl.epfd, EPOLL_CTL_MOD, c->fd, &ev))
			client_kill(c);	/* could never be written to again */
		else
			c->want_out = c->outlen != 0;
	}
}

/* Replaces each byte that is not part of valid UTF-8 with '?': names from ELF notes,
 * /proc/PID/comm and target memory are bytes, and every line out must be valid JSON
 * text. Only inside strings can such bytes be (json-c writes the rest), and '?' needs
 * no escaping there. */
static void utf8_mend(char *txt, size_t len)
{
	size_t i = 0, k;

	while (i < len) {
		for (k = 1; k <= 4 && i + k <= len; k++)
			if (fp_utf8_valid(txt + i, k))
				break;
		if (k > 4 || i + k > len)
			txt[i++] = '?';
		else
			i += k;
	}
}

/* Output queued to all clients of uid: one user's readers that do not read share
 * FP_USER_BACKLOG, whatever the number of their connections. */
static size_t user_queued(uid_t uid)
{
	size_t n = 0;
	int i;

	for (i = 0; i < FP_MAX_CLIENTS; i++)
		if (cl.slots[i] && !cl.slots[i]->dead && cl.slots[i]->peer.cred.uid == uid)
			n += cl.slots[i]->outlen;
	return n;
}

/* Room for len more bytes in c's queue: 0, or -1 (c is dropped). */
static int make_room(struct fp_client *c, size_t len)
{
	if (c->outlen + len > FP_MAX_BACKLOG ||
	    (c->outlen > (1u << 20) && !fp_peer_privileged(&c->peer) &&
	     user_queued(c->peer.cred.uid) + len > FP_USER_BACKLOG)) {
		fp_log(FP_LOG_WARN, "client pid %d (uid %u): not reading, %zu bytes queued: "
		       "disconnected", (int)c->peer.cred.pid, (unsigned)c->peer.cred.uid,
		       c->outlen);
		client_kill(c);
		return -1;
	}
	if (c->outoff && c->outoff + c->outlen + len > c->outcap) {
		memmove(c->out, c->out + c->outoff, c->outlen);	/* once per refill */
		c->outoff = 0;
	}
	if (c->outlen + len > c->outcap) {
		size_t cap = (c->outlen + len) * 2;
		char *p = realloc(c->out, cap);

		if (!p) {
			client_kill(c);
			return -1;
		}
		c->out = p;
		c->outcap = cap;
	}
	return 0;
}

void fp_client_send(struct fp_client *c, struct json_object *obj)
{
	const char *txt = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN);
	size_t len = strlen(txt);
	char *at;

	if (!c->dead && !make_room(c, len + 1)) {
		at = c->out + c->outoff + c->outlen;
		memcpy(at, txt, len);
		if (!fp_utf8_valid(txt, len))
			utf8_mend(at, len);
		at[len] = '\n';
		c->outlen += len + 1;
		flush_client(c);
	}
	json_object_put(obj);
}

void fp_client_reply(struct fp_client *c, struct json_object *id, const struct fp_err *err,
		     struct json_object *result)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "id", id ? json_object_get(id) : NULL);
	if (!err || !err->code) {
		json_object_object_add(o, "result", result ? result : json_object_new_object());
	} else {	/* the one place a failure's code becomes the protocol's */
		struct json_object *e = json_object_new_object();
		enum fp_status st = fp_status_of(err->code);

		json_object_put(result);
		json_object_object_add(e, "code", json_object_new_string(fp_status_name(st)));
		json_object_object_add(e, "message", json_object_new_string(err->msg));
		json_object_object_add(o, "error", e);
	}
	fp_client_send(c, o);
}

void fp_client_push(struct fp_client *c, int sub, int pid, const char *exe, const char *key,
		    struct json_object *val)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "subscription", json_object_new_int(sub));
	if (pid)
		json_object_object_add(o, "pid", json_object_new_int(pid));
	if (exe)
		json_object_object_add(o, "exe", json_object_new_string(exe));
	json_object_object_add(o, key, val);
	fp_client_send(c, o);
}

/* --- connections ------------------------------------------------------------------- */

static void free_client(int slot)
{
	struct fp_client *c = cl.slots[slot];

	epoll_ctl(cl.epfd, EPOLL_CTL_DEL, c->fd, NULL);	/* closing removes it anyway */
	close(c->fd);
	free(c->in);
	free(c->out);
	free(c);
	cl.slots[slot] = NULL;
}

int fp_clients_reap(void)
{
	int i, freed = 0;

	for (i = 0; i < FP_MAX_CLIENTS; i++)
		if (cl.slots[i] && cl.slots[i]->dead) {
			free_client(i);
			freed++;
		}
	return freed;
}

void fp_clients_kill_all(void)
{
	int i;

	for (i = 0; i < FP_MAX_CLIENTS; i++)
		if (cl.slots[i])
			client_kill(cl.slots[i]);
	if (cl.spare_fd >= 0)
		close(cl.spare_fd);
	cl.spare_fd = -1;
}

int fp_clients_count(void)
{
	int i, n = 0;

	for (i = 0; i < FP_MAX_CLIENTS; i++)
		n += cl.slots[i] && !cl.slots[i]->dead;
	return n;
}

static void refuse(int fd, const struct fp_err *e)
{
	char line[256];
	int n = snprintf(line, sizeof(line), "{\"id\":null,\"error\":{\"code\":\"%s\","
			 "\"message\":\"%s\"}}\n", fp_status_name(fp_status_of(e->code)), e->msg);

	if (send(fd, line, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		fp_log(FP_LOG_DEBUG, "refused client: %s", strerror(errno));
	close(fd);
}

/*
 * Out of descriptors, a pending connection would keep the listening socket readable and
 * the loop spinning without ever answering it. The spare descriptor is given up for the
 * moment it takes to accept the connection, tell the client why, and close it.
 */
static bool out_of_fds(int lfd)
{
	int fd;

	if (cl.spare_fd < 0) {	/* nothing to give up (it could not be reopened) */
		cl.spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		return false;
	}
	close(cl.spare_fd);
	fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd >= 0) {
		struct fp_err e = { 0 };

		fp_fail(&e, EBUSY, "out of file descriptors: featprofd serves too many targets");
		refuse(fd, &e);
		fp_log(FP_LOG_WARN, "out of file descriptors: a client was refused");
	}
	cl.spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return fd >= 0;
}

/*
 * Room for an unprivileged client: at most FP_USER_CLIENTS per uid, and never the last
 * FP_ROOT_CLIENTS slots, which are root's (and CAP_SYS_PTRACE's): no user can lock the
 * administrator out. 0, or -EBUSY with e filled.
 */
static int client_limit(const struct fp_client *c, struct fp_err *e)
{
	int i, same = 0, used = 0;

	for (i = 0; i < FP_MAX_CLIENTS; i++)
		if (cl.slots[i]) {
			used++;
			same += cl.slots[i]->peer.cred.uid == c->peer.cred.uid;
		}
	if (same >= FP_USER_CLIENTS)
		return fp_fail(e, EBUSY, "too many clients for uid %u (%d)",
			       (unsigned)c->peer.cred.uid, FP_USER_CLIENTS);
	if (used >= FP_MAX_CLIENTS - FP_ROOT_CLIENTS)
		return fp_fail(e, EBUSY, "too many clients");
	return 0;
}

/* A new client on fd in slot, or NULL with e filled (fd still open). */
static struct fp_client *new_client(int fd, int slot, struct fp_err *e)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = ev_data(slot) };
	struct fp_client *c = calloc(1, sizeof(*c));

	if (c)
		c->in = malloc(FP_MAX_LINE);
	if (!c || !c->in || fp_peer_read(fd, &c->peer))
		goto fail;
	if (!fp_peer_privileged(&c->peer) && client_limit(c, e))
		goto fail;
	c->fd = fd;
	c->slot = slot;
	if (epoll_ctl(cl.epfd, EPOLL_CTL_ADD, fd, &ev))
		goto fail;
	return c;
fail:
	fp_fail(e, EBUSY, "cannot serve a client now");	/* unless the limit said why */
	if (c)
		free(c->in);
	free(c);
	return NULL;
}

void fp_clients_accept(int lfd)
{
	for (;;) {
		struct fp_err e = { 0 };
		int fd, i, slot = -1;

		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
			if (out_of_fds(lfd))
				continue;
			return;
		}
		if (fd < 0)
			return;
		for (i = 0; i < FP_MAX_CLIENTS && slot < 0; i++)
			if (!cl.slots[i])
				slot = i;
		if (slot < 0) {
			fp_fail(&e, EBUSY, "too many clients");
			refuse(fd, &e);
			continue;
		}
		cl.slots[slot] = new_client(fd, slot, &e);
		if (!cl.slots[slot])
			refuse(fd, &e);
	}
}

/*
 * The complete lines a client has sent, at most FP_LINES_PER_ROUND of them: a client that
 * pipelines thousands of requests gets the same turn as the others, and the rest waits
 * in its buffer (and, past it, in its socket) for the next round. true while lines remain.
 */
#define FP_LINES_PER_ROUND 16

static bool handle_lines(struct fp_client *c)
{
	char *nl = NULL;
	int k;

	for (k = 0; !c->dead && k < FP_LINES_PER_ROUND &&
		    (nl = memchr(c->in, '\n', c->inlen)); k++) {
		size_t len = (size_t)(nl - c->in);

		if (c->discarding)
			c->discarding = false;
		else if (len)
			cl.on_line(c, c->in, len);
		memmove(c->in, nl + 1, c->inlen - len - 1);
		c->inlen -= len + 1;
	}
	c->more = !c->dead && memchr(c->in, '\n', c->inlen) != NULL;
	return c->more;
}

static void read_client(struct fp_client *c)
{
	ssize_t n;

	while (!c->dead && !handle_lines(c)) {
		if (c->inlen == FP_MAX_LINE) {	/* no newline in a full buffer */
			if (!c->discarding) {
				struct fp_err e = { 0 };

				fp_fail(&e, EMSGSIZE, "request longer than %d bytes", FP_MAX_LINE);
				fp_client_reply(c, NULL, &e, NULL);
			}
			c->discarding = true;
			c->inlen = 0;
		}
		n = recv(c->fd, c->in + c->inlen, FP_MAX_LINE - c->inlen, MSG_DONTWAIT);
		if (n == 0 && c->outlen) {	/* half-closed: its replies still go out */
			struct epoll_event ev = { .events = EPOLLOUT,
						  .data.u64 = ev_data(c->slot) };

			c->eof = true;
			if (epoll_ctl(cl.epfd, EPOLL_CTL_MOD, c->fd, &ev))
				client_kill(c);
			c->want_out = true;
			return;
		}
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			client_kill(c);
			return;
		}
		if (n < 0)
			return;
		c->inlen += (size_t)n;
	}
}

void fp_clients_event(int slot, uint32_t events)
{
	struct fp_client *c = slot >= 0 && slot < FP_MAX_CLIENTS ? cl.slots[slot] : NULL;

	if (!c || c->dead)
		return;
	if (events & (EPOLLERR | EPOLLHUP) && !(events & EPOLLIN)) {
		client_kill(c);
		return;
	}
	if (events & EPOLLIN)
		read_client(c);
	if (!c->dead && (events & EPOLLOUT))
		flush_client(c);
}

bool fp_clients_serve_waiting(void)
{
	bool more = false;
	int i;

	for (i = 0; i < FP_MAX_CLIENTS; i++)
		if (cl.slots[i] && cl.slots[i]->more && !cl.slots[i]->dead) {
			read_client(cl.slots[i]);	/* its lines first, then its socket */
			more |= cl.slots[i]->more;
		}
	return more;
}
