// SPDX-License-Identifier: GPL-2.0
/*
 * featprofd's loop: one epoll set serves the listening socket, every client, every
 * target's pidfd (readable when the process exits), a signalfd, the process watcher and
 * the subscriptions' timer. The top of the daemon's rooms (docs/ARCHITECTURE.md,
 * "Layers"): it opens the socket, starts the rooms, registers the hooks by which a
 * lower room tells a higher one of an event (a request line, a target's exit, exec or
 * drop, the watcher's events), and runs each room's work once per round.
 *
 * epoll data: a tag in the low 8 bits (EV_*), the room's slot index above.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "calibrate/calibrate.h"
#include "clients/client.h"
#include "util/clock.h"
#include "util/closer.h"
#include "groups/groups.h"
#include "targets/target.h"
#include "util/log.h"
#include "registry/registry.h"
#include "serve_impl.h"
#include "streams/subs.h"
#include "kern/watch.h"

#define SD_LISTEN_FDS_START 3	/* sd_listen_fds(3): the first socket systemd passes */

enum { EV_LISTEN = 1, EV_SIGNAL, EV_CLIENT, EV_TARGET, EV_WATCH };

/* While targets are live, the probe cost's drift is followed this often (calibrate.c). */
#define FP_TRACK_MS 10000

struct server {
	int epfd, lfd, sigfd;
	uint64_t track_due;		/* next drift measurement (fp_calibrate_track) */
	struct fp_watch *watch;		/* process events (NULL: not available here) */
	bool groups_busy;		/* members wait for targets of their own */
	bool clients_busy;		/* clients have lines waiting */
	bool stop;
};

/* --- hooks: what a lower room tells the higher ones --------------------------------- */

static void target_exit(struct fp_target *t)
{
	fp_subs_target_exit(t);
}

static void target_retired(struct fp_target *t)
{
	fp_group_member_retired(t);
}

static void target_exec(struct fp_target *t)
{
	fp_subs_target_exec(t);
}

static void target_drop(struct fp_target *t)
{
	fp_subs_target_drop(t);
}

/*
 * The watcher's events. A mapping refreshes the target's catalog; a fork or exec into
 * an executable group (other: the group) joins it; an exec of a target: a group's
 * member leaves as at an exit (and joins again when it runs the group's file), a pid
 * target gets the new program's catalog. An exec from before the target was made is
 * the program the target already read (a run's first process is attached stopped at
 * its exec, and the event can be read after that on a loaded machine): nothing to do.
 */
static void watch_event(void *ctx, uint32_t kind, uint32_t tgid, uint32_t other,
			uint64_t ts)
{
	struct fp_target *t = fp_registry_find((pid_t)tgid);

	(void)ctx;
	if (kind == FP_WATCH_EXEC && t && ts < fp_target__made_ns(t)) {
		fp_log(FP_LOG_DEBUG, "pid %d: its exec came before its target: already read",
		       (int)tgid);
		return;
	}
	if (kind == FP_WATCH_ARENA) {
		fp_registry_arena((pid_t)tgid);
		return;
	}
	if (kind == FP_WATCH_MMAP)
		fp_registry_mapped((pid_t)tgid);
	if ((kind == FP_WATCH_FORK || kind == FP_WATCH_EXEC) && other && !t) {
		fp_group_join((int)other, (pid_t)tgid);
	} else if (kind == FP_WATCH_EXEC && t && !fp_target__exited(t)) {
		if (!other && !fp_target__group(t)) {
			fp_registry_exec(t);
			return;
		}
		fp_registry_exit(t);
		if (other)
			fp_group_join((int)other, (pid_t)tgid);
	}
}

/* --- the socket and the loop --------------------------------------------------------- */

/* The --group's members reach the socket only through a folder they may search: said at
 * start where the folder is older than this featprofd and closed (0700, as an earlier
 * featprofd made /run/featprof for its journal) */
static void warn_unreachable(const char *dir, gid_t gid)
{
	struct stat st;

	if (gid && !stat(dir, &st) && !(st.st_mode & 0011))
		fp_log(FP_LOG_WARN, "%s is mode %03o: members of --group cannot reach the socket "
		       "in it (chmod 0755 %s)", dir, st.st_mode & 0777, dir);
}

static int listen_socket(const struct fp_server_opts *o)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *e = getenv("LISTEN_FDS"), *p = getenv("LISTEN_PID");
	char dir[sizeof(sa.sun_path)], *slash;
	int fd;

	if (e && p && atoi(p) == getpid() && atoi(e) >= 1) {
		int fl = fcntl(SD_LISTEN_FDS_START, F_GETFL);

		if (fl < 0 || fcntl(SD_LISTEN_FDS_START, F_SETFD, FD_CLOEXEC) ||
		    fcntl(SD_LISTEN_FDS_START, F_SETFL, fl | O_NONBLOCK)) {
			fp_log(FP_LOG_ERR, "the socket passed by systemd: %s", strerror(errno));
			return -errno;
		}
		fp_log(FP_LOG_INFO, "using the socket passed by systemd");
		return SD_LISTEN_FDS_START;
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
	if (slash && slash != dir)
		warn_unreachable(dir, o->gid);
	fp_log(FP_LOG_INFO, "listening on %s", o->socket_path);
	return fd;
}


static int add_fd(struct server *s, int fd, int tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = (uint64_t)tag };

	return epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

static void open_watch(struct server *s)
{
	struct fp_err e = { 0 };

	s->watch = fp_watch__open(watch_event, s, &e);
	if (!s->watch) {
		fp_log(FP_LOG_WARN, "%s: libraries mapped after an enable join their target at "
		       "its next enable or list only", e.msg);
		return;
	}
	if (add_fd(s, fp_watch__fd(s->watch), EV_WATCH))
		fp_log(FP_LOG_WARN, "cannot poll the watcher: %s", strerror(errno));
	/* membership of executable groups, checked in BPF */
	fp_target__use_members_maps(fp_watch__map_fd(s->watch, "watched"),
				    fp_watch__map_fd(s->watch, "held"));
	fp_target__use_watch_ring(fp_watch__map_fd(s->watch, "events"));
}

static int start(struct server *s, const struct fp_server_opts *opts)
{
	static const struct fp_registry_hooks hooks = {
		.exit = target_exit,
		.retired = target_retired,
		.exec = target_exec,
		.drop = target_drop,
	};
	sigset_t mask;
	int ret;

	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	s->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	s->lfd = listen_socket(opts);
	if (s->lfd < 0 || s->epfd < 0 || s->sigfd < 0)
		return s->lfd < 0 ? s->lfd : -EIO;
	ret = add_fd(s, s->lfd, EV_LISTEN);
	if (!ret)
		ret = add_fd(s, s->sigfd, EV_SIGNAL);
	if (ret)
		return ret;
	open_watch(s);
	fp_clients_init(s->epfd, EV_CLIENT, fp_verbs_handle_line);
	fp_registry_init(s->epfd, EV_TARGET, opts, s->watch, &hooks);
	fp_verbs_init(opts);
	return 0;
}

/* The probe cost's drift, measured every FP_TRACK_MS while a target is live. */
static void track_drift(struct server *s, const struct fp_server_opts *opts)
{
	uint64_t now = fp_mono_ns();
	struct fp_err e = { 0 };

	if (!fp_registry_any_live()) {
		s->track_due = 0;
		return;
	}
	if (!s->track_due)	/* the first target: its first figures use the last start's */
		s->track_due = now + FP_TRACK_MS * 1000000ULL;
	if (now < s->track_due)
		return;
	if (fp_calibrate_track(opts->cal, &e)) {
		fp_log(FP_LOG_DEBUG, "%s", e.msg);
	} else {	/* from now on events are charged the followed costs */
		fp_target__costs_changed();
	}
	s->track_due = fp_mono_ns() + FP_TRACK_MS * 1000000ULL;
}

static int next_timeout_ms(const struct server *s)
{
	uint64_t now = fp_mono_ns(), due = fp_subs_next_due(),
		 names = fp_registry_name_samples(now);

	if (names < due)
		due = names;
	if (s->track_due && s->track_due < due)
		due = s->track_due;
	if (due == UINT64_MAX)
		return -1;
	return due <= now ? 0 : (int)((due - now) / 1000000ULL) + 1;
}

static void dispatch(struct server *s, const struct epoll_event *e)
{
	int tag = (int)(e->data.u64 & 0xff), idx = (int)(e->data.u64 >> 8);
	struct signalfd_siginfo si;

	switch (tag) {
	case EV_LISTEN:
		fp_clients_accept(s->lfd);
		break;
	case EV_SIGNAL:
		if (read(s->sigfd, &si, sizeof(si)) == sizeof(si))
			fp_log(FP_LOG_INFO, "signal %u: detaching and stopping", si.ssi_signo);
		s->stop = true;
		break;
	case EV_CLIENT:
		fp_clients_event(idx, e->events);
		break;
	case EV_TARGET:
		fp_registry_pidfd_ready(idx);
		break;
	case EV_WATCH:
		fp_watch__consume(s->watch);
		break;
	}
}

/* What is left when the loop ends: a clean exit detaches every target. */
static void stop(struct server *s, const struct fp_server_opts *opts)
{
	uint64_t t0 = fp_mono_ns();

	/* every uprobe closed at once by the pool, the journal kept until they all are */
	fp_closer_defer_all();
	fp_journal__hold();
	fp_clients_kill_all();
	fp_leases_reap();	/* as if each client closed (targets are detached next) */
	fp_subs_reap();		/* every client is dead: drops all subscriptions */
	fp_group_runs_reap();	/* ... and their runs */
	fp_clients_reap();
	fp_groups_free();
	fp_registry_free();
	fp_calibrate_track_free();
	fp_watch__free(s->watch);
	fp_closer_wait();
	fp_journal__let_go();
	fp_log(FP_LOG_INFO, "detached in %.0f ms", (double)(fp_mono_ns() - t0) / 1e6);
	if (s->lfd > SD_LISTEN_FDS_START || (s->lfd >= 0 && !getenv("LISTEN_FDS"))) {
		close(s->lfd);
		unlink(opts->socket_path);
	}
	if (s->sigfd >= 0)
		close(s->sigfd);
	if (s->epfd >= 0)
		close(s->epfd);
}

int fp_server_run(const struct fp_server_opts *opts)
{
	struct server s = { .epfd = -1, .lfd = -1, .sigfd = -1 };
	int i, n, ret = start(&s, opts);

	if (!ret && opts->ready)
		opts->ready();
	while (!ret && !s.stop) {
		struct epoll_event evs[64];

		n = epoll_wait(s.epfd, evs, 64, s.groups_busy || s.clients_busy
							? 0 : next_timeout_ms(&s));
		if (n < 0 && errno != EINTR) {
			ret = -errno;
			break;
		}
		for (i = 0; i < n; i++)
			dispatch(&s, &evs[i]);
		s.clients_busy = fp_clients_serve_waiting();
		fp_registry_run_refreshes();
		fp_registry_collect_exited();
		s.groups_busy = fp_groups_run();
		track_drift(&s, opts);
		fp_subs_run();
		/* what a burst of output or a recording took goes back to the system */
		fp_group_runs_reap();	/* before their clients go */
		fp_leases_reap();	/* what closed clients leased, undone */
		if (fp_subs_reap() + fp_clients_reap())
			malloc_trim(0);
	}
	stop(&s, opts);
	return ret;
}
