// SPDX-License-Identifier: GPL-2.0
/*
 * featprofd's transport: one epoll loop serves the listening socket, every client,
 * every target's pidfd (readable when the process exits), a signalfd, and the
 * subscription timer. Requests and everything they act on: daemon/verbs.c.
 *
 * A client's input is cut into lines of at most FP_MAX_LINE bytes (a longer one gets
 * "too_long" and is discarded up to its newline); output is queued and written as the
 * socket takes it. A client that stops reading is dropped when its backlog passes
 * FP_MAX_BACKLOG, so it cannot make the daemon grow without bound. Clients are marked
 * dead and freed at the end of a loop round (daemon/server_priv.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "request.h"
#include "server_priv.h"
#include "target.h"
#include "watch.h"

/* --- output ------------------------------------------------------------------------ */

void fp_client_kill(struct client *c)
{
	c->dead = 1;
}

size_t fp_client_queued(const struct client *c)
{
	return c->outlen;
}

/* The queue's storage once it is empty: a buffer grown by a burst (a recording, a
 * reader that fell behind) goes back to the allocator instead of staying with the client. */
#define OUT_KEEP (64u << 10)

static void flush_client(struct server *s, int idx)
{
	struct client *c = s->clients[idx];
	struct epoll_event ev = { .data.u64 = EV(EV_CLIENT, idx) };
	ssize_t n;

	while (c->outlen && !c->dead) {
		n = send(c->fd, c->out + c->outoff, c->outlen, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR)
				fp_client_kill(c);
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
			fp_client_kill(c);
	}
	if (!c->dead && !c->eof && !!c->outlen != c->want_out) {
		ev.events = EPOLLIN | (c->outlen ? EPOLLOUT : 0);
		if (epoll_ctl(s->epfd, EPOLL_CTL_MOD, c->fd, &ev))
			fp_client_kill(c);	/* could never be written to again */
		else
			c->want_out = !!c->outlen;
	}
}

static int client_index(struct server *s, const struct client *c)
{
	int i;

	for (i = 0; i < FP_MAX_CLIENTS; i++)
		if (s->clients[i] == c)
			return i;
	return -1;
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
static size_t user_queued(struct server *s, uid_t uid)
{
	size_t n = 0;
	int i;

	for (i = 0; i < FP_MAX_CLIENTS; i++)
		if (s->clients[i] && !s->clients[i]->dead && s->clients[i]->peer.cred.uid == uid)
			n += s->clients[i]->outlen;
	return n;
}

void fp_send(struct server *s, struct client *c, struct json_object *obj)
{
	const char *txt = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN);
	size_t len = strlen(txt);
	int mend = !fp_utf8_valid(txt, len);

	if (c->dead)
		goto out;
	if (c->outlen + len + 1 > FP_MAX_BACKLOG ||
	    (c->outlen > (1u << 20) && !fp_peer_privileged(&c->peer) &&
	     user_queued(s, c->peer.cred.uid) + len > FP_USER_BACKLOG)) {
		fp_log(FP_LOG_WARN, "client pid %d (uid %u): not reading, %zu bytes queued: "
		       "disconnected", (int)c->peer.cred.pid, (unsigned)c->peer.cred.uid,
		       c->outlen);
		fp_client_kill(c);
		goto out;
	}
	if (c->outoff && c->outoff + c->outlen + len + 1 > c->outcap) {
		memmove(c->out, c->out + c->outoff, c->outlen);	/* once per refill */
		c->outoff = 0;
	}
	if (c->outlen + len + 1 > c->outcap) {
		size_t cap = (c->outlen + len + 1) * 2;
		char *p = realloc(c->out, cap);

		if (!p) {
			fp_client_kill(c);
			goto out;
		}
		c->out = p;
		c->outcap = cap;
	}
	memcpy(c->out + c->outoff + c->outlen, txt, len);
	if (mend)
		utf8_mend(c->out + c->outoff + c->outlen, len);
	c->out[c->outoff + c->outlen + len] = '\n';
	c->outlen += len + 1;
	flush_client(s, client_index(s, c));
out:
	json_object_put(obj);
}

/* --- connections ------------------------------------------------------------------- */

static void free_client(struct server *s, int idx)
{
	struct client *c = s->clients[idx];

	epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);	/* closing removes it anyway */
	close(c->fd);
	free(c->in);
	free(c->out);
	free(c);
	s->clients[idx] = NULL;
}

void fp_server_reap(struct server *s)
{
	int i, k = 0, freed;

	for (i = 0; i < s->nsubs; i++)
		if (s->subs[i].c->dead)
			s->subs[i].dead = 1;
	for (i = 0; i < s->nsubs; i++) {
		if (s->subs[i].dead) {
			fp_record_end(s, &s->subs[i]);
			fp_snapshot__free(s->subs[i].prev);
			fp_group_sub_free(&s->subs[i]);
			continue;
		}
		s->subs[k++] = s->subs[i];
	}
	freed = s->nsubs - k;
	s->nsubs = k;
	for (i = 0; i < FP_MAX_CLIENTS; i++)
		if (s->clients[i] && s->clients[i]->dead) {
			free_client(s, i);
			freed++;
		}
	if (freed)	/* what a burst of output or a recording took goes back to the system */
		malloc_trim(0);
}

static void refuse(int fd, const char *why)
{
	char line[256];
	int n = snprintf(line, sizeof(line), "{\"id\":null,\"error\":{\"code\":\"busy\","
			 "\"message\":\"%s\"}}\n", why);

	if (send(fd, line, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		fp_log(FP_LOG_DEBUG, "refused client: %s", strerror(errno));
	close(fd);
}

/*
 * Out of descriptors, a pending connection would keep the listening socket readable and
 * the loop spinning without ever answering it. The spare descriptor is given up for the
 * moment it takes to accept the connection, tell the client why, and close it.
 */
static int out_of_fds(struct server *s)
{
	int fd;

	if (s->spare_fd < 0) {	/* nothing to give up (it could not be reopened) */
		s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		return 0;
	}
	close(s->spare_fd);
	fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd >= 0) {
		refuse(fd, "out of file descriptors: featprofd serves too many targets");
		fp_log(FP_LOG_WARN, "out of file descriptors: a client was refused");
	}
	s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return fd >= 0;
}

/*
 * Room for an unprivileged client: at most FP_USER_CLIENTS per uid, and never the last
 * FP_ROOT_CLIENTS slots, which are root's (and CAP_SYS_PTRACE's): no user can lock the
 * administrator out. 0, or -1 with why.
 */
static int client_limit(struct server *s, const struct client *c, char *why, size_t len)
{
	int i, same = 0, used = 0;

	for (i = 0; i < FP_MAX_CLIENTS; i++)
		if (s->clients[i]) {
			used++;
			same += s->clients[i]->peer.cred.uid == c->peer.cred.uid;
		}
	if (same >= FP_USER_CLIENTS) {
		snprintf(why, len, "too many clients for uid %u (%d)", (unsigned)c->peer.cred.uid,
			 FP_USER_CLIENTS);
		return -1;
	}
	if (used >= FP_MAX_CLIENTS - FP_ROOT_CLIENTS) {
		snprintf(why, len, "too many clients");
		return -1;
	}
	return 0;
}

static void accept_clients(struct server *s)
{
	char why[128];

	for (;;) {
		struct epoll_event ev = { .events = EPOLLIN };
		struct client *c;
		int fd, i, slot = -1;

		fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
			if (out_of_fds(s))
				continue;
			return;
		}
		if (fd < 0)
			return;
		for (i = 0; i < FP_MAX_CLIENTS && slot < 0; i++)
			if (!s->clients[i])
				slot = i;
		if (slot < 0) {
			refuse(fd, "too many clients");
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (c)
			c->in = malloc(FP_MAX_LINE);
		if (!c || !c->in || fp_peer_read(fd, &c->peer)) {
			refuse(fd, "cannot serve a client now");
			if (c)
				free(c->in);
			free(c);
			continue;
		}
		if (!fp_peer_privileged(&c->peer) && client_limit(s, c, why, sizeof(why))) {
			refuse(fd, why);
			free(c->in);
			free(c);
			continue;
		}
		c->fd = fd;
		ev.data.u64 = EV(EV_CLIENT, slot);
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev)) {
			refuse(fd, "cannot serve a client now");
			free(c->in);
			free(c);
			continue;
		}
		s->clients[slot] = c;
	}
}

/*
 * The complete lines a client has sent, at most FP_LINES_PER_ROUND of them: a client that
 * pipelines thousands of requests gets the same turn as the others, and the rest waits
 * in its buffer (and, past it, in its socket) for the next round. 1 while lines remain.
 */
#define FP_LINES_PER_ROUND 16

static int handle_lines(struct server *s, struct client *c)
{
	char *nl = NULL;
	int k;

	for (k = 0; !c->dead && k < FP_LINES_PER_ROUND &&
		    (nl = memchr(c->in, '\n', c->inlen)); k++) {
		size_t len = (size_t)(nl - c->in);

		if (c->discarding)
			c->discarding = 0;
		else if (len)
			fp_handle_line(s, c, c->in, len);
		memmove(c->in, nl + 1, c->inlen - len - 1);
		c->inlen -= len + 1;
	}
	c->more = !c->dead && memchr(c->in, '\n', c->inlen) != NULL;
	return c->more;
}

static void read_client(struct server *s, int idx)
{
	struct client *c = s->clients[idx];
	ssize_t n;

	while (!c->dead && !handle_lines(s, c)) {
		if (c->inlen == FP_MAX_LINE) {	/* no newline in a full buffer */
			if (!c->discarding) {
				char msg[64];

				snprintf(msg, sizeof(msg), "request longer than %d bytes",
					 FP_MAX_LINE);
				fp_reply_error(s, c, FP_E_TOO_LONG, msg);
			}
			c->discarding = 1;
			c->inlen = 0;
		}
		n = recv(c->fd, c->in + c->inlen, FP_MAX_LINE - c->inlen, MSG_DONTWAIT);
		if (n == 0 && c->outlen) {	/* half-closed: its replies still go out */
			struct epoll_event ev = { .events = EPOLLOUT,
						  .data.u64 = EV(EV_CLIENT, idx) };

			c->eof = 1;
			if (epoll_ctl(s->epfd, EPOLL_CTL_MOD, c->fd, &ev))
				fp_client_kill(c);
			c->want_out = 1;
			return;
		}
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			fp_client_kill(c);
			return;
		}
		if (n < 0)
			return;
		c->inlen += (size_t)n;
	}
}

/* One more turn for every client with lines waiting; 1 while any still has some. */
static int serve_waiting(struct server *s)
{
	int i, more = 0;

	for (i = 0; i < FP_MAX_CLIENTS; i++)
		if (s->clients[i] && s->clients[i]->more && !s->clients[i]->dead) {
			read_client(s, i);	/* its lines first, then its socket */
			more |= s->clients[i]->more;
		}
	return more;
}

static int listen_socket(const struct fp_server_opts *o)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *e = getenv("LISTEN_FDS"), *p = getenv("LISTEN_PID");
	char dir[sizeof(sa.sun_path)], *slash;
	int fd;

	if (e && p && atoi(p) == getpid() && atoi(e) >= 1) {
		fcntl(3, F_SETFD, FD_CLOEXEC);
		fcntl(3, F_SETFL, fcntl(3, F_GETFL) | O_NONBLOCK);
		fp_log(FP_LOG_INFO, "using the socket passed by systemd");
		return 3;
	}
	if (strlen(o->socket_path) >= sizeof(sa.sun_path)) {
		fp_log(FP_LOG_ERR, "socket path too long: %s", o->socket_path);
		return -ENAMETOOLONG;
	}
	snprintf(dir, sizeof(dir), "%s", o->socket_path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		mkdir(dir, 0755);
	}
	strcpy(sa.sun_path, o->socket_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	unlink(o->socket_path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 128)) {
		int e2 = errno;

		fp_log(FP_LOG_ERR, "cannot listen on %s: %s", o->socket_path, strerror(e2));
		close(fd);
		return -e2;
	}
	/* not world-writable: root, and the group given with --group */
	if (chown(o->socket_path, 0, o->gid) || chmod(o->socket_path, o->gid ? 0660 : 0600)) {
		int e2 = errno;

		fp_log(FP_LOG_ERR, "cannot set owner/mode of %s: %s", o->socket_path, strerror(e2));
		close(fd);
		return -e2;
	}
	fp_log(FP_LOG_INFO, "listening on %s", o->socket_path);
	return fd;
}

int fp_server_run(const struct fp_server_opts *opts)
{
	struct server *s = calloc(1, sizeof(*s));
	struct epoll_event ev;
	sigset_t mask;
	int i, ret = 0;

	if (!s)
		return -ENOMEM;
	s->opts = opts;
	s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	s->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	s->lfd = listen_socket(opts);
	if (s->lfd < 0 || s->epfd < 0 || s->sigfd < 0) {
		ret = s->lfd < 0 ? s->lfd : -EIO;
		goto out;
	}
	ev.events = EPOLLIN;
	ev.data.u64 = EV(EV_LISTEN, 0);
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->lfd, &ev)) {
		ret = -errno;
		goto out;
	}
	ev.data.u64 = EV(EV_SIGNAL, 0);
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->sigfd, &ev)) {
		ret = -errno;
		goto out;
	}
	{
		char err[256];

		s->watch = fp_watch__open(fp_watch_event, s, err, sizeof(err));
		ev.data.u64 = EV(EV_WATCH, 0);
		if (!s->watch)
			fp_log(FP_LOG_WARN, "%s: libraries mapped after an enable join their "
			       "target at its next enable or list only", err);
		else if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fp_watch__fd(s->watch), &ev))
			fp_log(FP_LOG_WARN, "cannot poll the watcher: %s", strerror(errno));
		if (s->watch)	/* membership of executable groups, checked in BPF */
			fp_target__use_members_map(fp_watch__map_fd(s->watch, "watched"));
	}
	if (opts->ready)
		opts->ready();

	while (!s->stop) {
		struct epoll_event evs[64];
		int n = epoll_wait(s->epfd, evs, 64, s->groups_busy || s->clients_busy
							       ? 0 : fp_next_timeout_ms(s));

		if (n < 0 && errno != EINTR) {
			ret = -errno;
			break;
		}
		for (i = 0; i < n; i++) {
			int tag = (int)(evs[i].data.u64 & 0xff), idx = (int)(evs[i].data.u64 >> 8);

			switch (tag) {
			case EV_LISTEN:
				accept_clients(s);
				break;
			case EV_SIGNAL: {
				struct signalfd_siginfo si;

				if (read(s->sigfd, &si, sizeof(si)) == sizeof(si))
					fp_log(FP_LOG_INFO, "signal %u: detaching and stopping",
					       si.ssi_signo);
				s->stop = 1;
				break;
			}
			case EV_CLIENT: {
				struct client *c = s->clients[idx];

				if (!c || c->dead)
					break;
				if (evs[i].events & (EPOLLERR | EPOLLHUP) &&
				    !(evs[i].events & EPOLLIN)) {
					fp_client_kill(c);
					break;
				}
				if (evs[i].events & EPOLLIN)
					read_client(s, idx);
				if (!c->dead && (evs[i].events & EPOLLOUT))
					flush_client(s, idx);
				break;
			}
			case EV_TARGET:
				if (s->targets[idx])
					fp_target_exited(s, idx);
				break;
			case EV_WATCH:
				fp_watch__consume(s->watch);
				break;
			}
		}
		s->clients_busy = serve_waiting(s);
		fp_run_refreshes(s);
		fp_collect_exited(s);
		s->groups_busy = fp_run_groups(s);
		fp_run_subscriptions(s);
		fp_server_reap(s);
	}
out:
	for (i = 0; i < FP_MAX_CLIENTS; i++)
		if (s->clients[i])
			fp_client_kill(s->clients[i]);
	fp_server_reap(s);	/* drops their subscriptions */
	fp_free_targets(s);
	fp_watch__free(s->watch);
	if (s->lfd > 3 || (s->lfd >= 0 && !getenv("LISTEN_FDS"))) {
		close(s->lfd);
		unlink(opts->socket_path);
	}
	if (s->sigfd >= 0)
		close(s->sigfd);
	if (s->spare_fd >= 0)
		close(s->spare_fd);
	if (s->epfd >= 0)
		close(s->epfd);
	free(s);
	return ret;
}
