// SPDX-License-Identifier: GPL-2.0
/* Connection to featprofd: one request, one reply; pushes are read by the caller. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/protocol.h"
#include "core.h"

const char *socket_path;
static int next_id = 1;

int client_connect(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *p = socket_path ? socket_path : getenv("FEATPROF_SOCKET");
	int fd;

	if (!p || !*p)
		p = FP_DEFAULT_SOCKET;
	if (strlen(p) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "featprof: socket path too long: %s\n", p);
		return -1;
	}
	strcpy(sa.sun_path, p);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int e = errno;

		if (e == EACCES || e == EPERM)
			fprintf(
			    stderr,
			    "featprof: cannot connect to featprofd at %s: permission "
			    "denied (run as root, or be in the group given to featprofd --group)\n",
			    p);
		else
			fprintf(
			    stderr,
			    "featprof: cannot connect to featprofd at %s: %s (is it "
			    "running? start it: sudo featprofd, or systemctl start featprofd)\n",
			    p, strerror(e));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Reads one line (a JSON object); NULL at EOF or on a malformed line. */
struct json_object *client_read(int fd)
{
	static char buf[FP_MAX_LINE * 64];
	static size_t len;
	char *nl;

	for (;;) {
		ssize_t n;

		nl = memchr(buf, '\n', len);
		if (nl) {
			struct json_object *o;

			*nl = 0;
			o = json_tokener_parse(buf);
			len -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, len);
			return o;
		}
		if (len == sizeof(buf))
			return NULL;
		n = read(fd, buf + len, sizeof(buf) - len);
		if (n <= 0) {	/* EOF, or a read a signal cut: that connection is done */
			len = 0;
			return NULL;
		}
		len += (size_t)n;
	}
}

/* Sends req (consumed, "id" added) and returns the reply's result, or NULL after
 * printing the daemon's error as one line. Pushes that arrive first are skipped. */
struct json_object *client_call(int fd, const char *what, struct json_object *req)
{
	struct json_object *rep, *v, *res;
	const char *txt;
	int id = next_id++, sent = 0;

	json_object_object_add(req, "id", json_object_new_int(id));
	txt = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	/* no SIGPIPE: a daemon that refused this connection has sent why and closed it,
	 * and that line is still there to read */
	if (send(fd, txt, strlen(txt), MSG_NOSIGNAL) < 0 ||
	    send(fd, "\n", 1, MSG_NOSIGNAL) < 0)
		sent = errno;
	json_object_put(req);
	for (;;) {
		rep = client_read(fd);
		if (!rep) {
			if (sent)
				fprintf(stderr, "featprof: %s: lost the connection to "
					"featprofd: %s\n", what, strerror(sent));
			else
				fprintf(stderr, "featprof: %s: featprofd closed the connection\n",
					what);
			return NULL;
		}
		/* our reply, or a refusal of the connection itself (id null: too many
		 * clients, out of descriptors) */
		if (json_object_object_get_ex(rep, "id", &v) &&
		    (json_object_is_type(v, json_type_null)
			     ? json_object_object_get_ex(rep, "error", NULL)
			     : json_object_get_int(v) == id))
			break;
		json_object_put(rep);
	}
	if (json_object_object_get_ex(rep, "error", &v)) {
		struct json_object *m;

		fprintf(stderr, "featprof: %s: %s\n", what,
			json_object_object_get_ex(v, "message", &m) ? json_object_get_string(m)
								     : "error");
		json_object_put(rep);
		return NULL;
	}
	if (!json_object_object_get_ex(rep, "result", &res)) {
		json_object_put(rep);
		return NULL;
	}
	json_object_get(res);
	json_object_put(rep);
	return res;
}

struct json_object *client_request(const char *what, const char *verb, long pid,
				   struct json_object *req)
{
	struct json_object *res;
	int fd = client_connect();

	if (!req)
		req = json_object_new_object();
	if (fd < 0) {
		json_object_put(req);
		return NULL;
	}
	json_object_object_add(req, "verb", json_object_new_string(verb));
	if (pid)
		json_object_object_add(req, "pid", json_object_new_int64(pid));
	res = client_call(fd, what, req);
	close(fd);
	return res;
}

/* The connection client_request_held keeps for the whole command: featprofd undoes what
 * was asked over it with "temporary" when it closes, however the command ends. */
static int held_fd = -1;

struct json_object *client_request_held(const char *what, const char *verb, long pid,
					struct json_object *req, int temporary)
{
	if (!req)
		req = json_object_new_object();
	if (held_fd < 0 && (held_fd = client_connect()) < 0) {
		json_object_put(req);
		return NULL;
	}
	json_object_object_add(req, "verb", json_object_new_string(verb));
	if (pid)
		json_object_object_add(req, "pid", json_object_new_int64(pid));
	if (temporary)
		json_object_object_add(req, "temporary", json_object_new_boolean(1));
	return client_call(held_fd, what, req);
}
