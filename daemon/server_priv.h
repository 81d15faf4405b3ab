/* SPDX-License-Identifier: GPL-2.0 */
/*
 * featprofd's server, private to daemon/server.c (transport, client lifetime, the
 * loop) and daemon/verbs.c (requests, targets, subscriptions).
 *
 * Lifetime rule: nothing frees a client or reorders subs[] while a caller may hold a
 * pointer into them. A client that must go (peer closed, write error, backlog over the
 * limit) is marked dead; fp_server_reap() frees dead clients and drops their
 * subscriptions once per loop iteration, after every handler and push of that round.
 */
#ifndef FP_SERVER_PRIV_H
#define FP_SERVER_PRIV_H

#include <stdint.h>

#include "access.h"
#include "clock.h"
#include "protocol.h"
#include "server.h"
#include "target.h"

#define FP_MAX_BACKLOG (16u << 20)
/* What one unprivileged uid may hold: a quarter of each (docs/TRACING.md, "Security"). */
#define FP_USER_CLIENTS (FP_MAX_CLIENTS / 4)
#define FP_ROOT_CLIENTS 8		/* client slots only root may take */
#define FP_USER_BACKLOG (FP_MAX_BACKLOG * 2)	/* queued output, all its clients */
#define FP_MAX_TARGETS 256
#define FP_MAX_SUBS 1024

struct client {
	int fd;
	struct fp_peer peer;
	char *in;
	size_t inlen;
	int discarding;		/* inside an over-long line, up to its newline */
	char *out;		/* queued output: out[outoff .. outoff + outlen) */
	size_t outoff, outlen, outcap;
	int want_out;
	int more;		/* complete lines wait in in[] for the next round */
	int eof;		/* the peer shut its side: no more requests; what is queued
				 * still goes out, then the client is dropped */
	int dead;		/* freed by fp_server_reap */
};

struct sub {
	int id;
	struct client *c;
	pid_t pid;
	unsigned interval_ms;
	uint64_t due_ns;
	struct fp_snapshot *prev;
	struct recording *rec;	/* a featprof record, else NULL (see verbs.c) */
	int dead;		/* removed by fp_server_reap */
	/* an --exe subscription (daemon/groups.c): the group's index + 1, else 0; each
	 * member's figures at the last push; members gone since, summed */
	int group;
	struct member_prev {
		pid_t pid;
		struct fp_snapshot *snap;
	} *mprev;
	int nmprev;
	struct json_object *pending;
	uint64_t last_ns;
};

#define FP_MAX_GROUPS 16
#define FP_GROUP_KEEP_EXITED 32	/* exited processes whose own figures a group keeps */
/* Members with a target of their own (per-process figures, ~30 descriptors and a BPF
 * load each); the others are measured by the file's one link, in the group's sum. */
#define FP_GROUP_OWN_MAX 64

/* An executable profiled as a whole (featprof enable --exe, daemon/groups.c). */
struct group {
	char *path;
	uint64_t dev, ino;		/* stat(2) of path at enable */
	int fd;				/* the file, open since the enable (-1: none) */
	struct fp_target *file;		/* the file's target: one link per file, measuring
					 * members without a target of their own */
	struct json_object *file_gone;	/* figures of earlier file targets (followed again) */
	int want_all;
	char **features, **regions;
	int nfeatures, nregions;
	pid_t *live;			/* members attached now (their targets) */
	int nlive;
	pid_t *pending;			/* members waiting for a target of their own, one
					 * per loop round; measured by the file's meanwhile */
	int npending;
	uint64_t summed;		/* members beyond FP_GROUP_OWN_MAX or the daemon's
					 * room: measured by the file's target, in the sum only */
	struct json_object *exited;	/* summed figures of members gone */
	struct json_object *exited_procs;	/* the last ones' own figures */
	uint64_t joined, missed, gone;	/* processes attached, gone before, exited */
	int ended;			/* disabled: not followed, figures kept */
	int sample_hz;			/* sampling every member at this rate, else 0 */
	int sample_remote;		/* ... by the sampler thread (--remote) */
};

struct server {
	int epfd, lfd, sigfd;
	int spare_fd;			/* /dev/null, given up to refuse a client at EMFILE */
	struct client *clients[FP_MAX_CLIENTS];
	struct fp_target *targets[FP_MAX_TARGETS];
	struct sub subs[FP_MAX_SUBS];
	int nsubs, next_sub;
	uint64_t sample_due_ns;		/* next naming of sampled ids */
	struct fp_watch *watch;		/* process events (NULL: not available here) */
	uint8_t refresh_due[FP_MAX_TARGETS];	/* ld.so changed its object list */
	struct bpf_link *dl_links[FP_MAX_TARGETS];	/* per target: its ld.so hook */
	struct group *groups[FP_MAX_GROUPS];		/* id = index + 1 */
	const struct fp_server_opts *opts;
	int groups_busy;		/* members wait for targets of their own */
	int clients_busy;		/* clients have lines waiting (handle_lines) */
	int stop;
};

/* epoll data: tag in the low bits, index above */
enum { EV_LISTEN = 1, EV_SIGNAL, EV_CLIENT, EV_TARGET, EV_WATCH };
#define EV(tag, idx) (((uint64_t)(idx) << 8) | (tag))

/* server.c: queues one JSON line to c (consumes obj); a dead client drops it. */
void fp_send(struct server *s, struct client *c, struct json_object *obj);
void fp_client_kill(struct client *c);
/* Bytes queued to c and not yet taken by its socket. */
size_t fp_client_queued(const struct client *c);
void fp_server_reap(struct server *s);

/* verbs.c */
int fp_find_target(struct server *s, pid_t pid);
/* The target's ld.so hook (dlopen) attached while it has sites attached, else removed. */
void fp_sync_dl_hook(struct server *s, int ti);
enum fp_status fp_new_target(struct server *s, pid_t pid, int *ti, struct fp_regdefs *more,
			     char *msg, size_t msglen);
/* A target's stats reply (NULL: out of memory). */
struct json_object *fp_target_stats(struct server *s, struct fp_target *t);
/* Its figures since prev (NULL: since its enable), with pid and comm; *cur gets the
 * snapshot taken (the caller frees it). NULL: none could be taken. */
struct json_object *fp_target_interval(struct server *s, struct fp_target *t,
				       const struct fp_snapshot *prev, struct fp_snapshot **cur);
/* Frees a target and its slot (detach). */
void fp_drop_target(struct server *s, int ti);
void fp_handle_line(struct server *s, struct client *c, const char *line, size_t len);
void fp_reply_error(struct server *s, struct client *c, enum fp_status st, const char *msg);
void fp_run_subscriptions(struct server *s);
int fp_next_timeout_ms(struct server *s);
void fp_target_exited(struct server *s, int ti);
/* The watcher's callback (ctx: the server), and the refreshes it asked for. */
void fp_watch_event(void *ctx, uint32_t kind, uint32_t tgid, uint32_t other);
void fp_run_refreshes(struct server *s);
void fp_free_targets(struct server *s);
/* Drops exited targets whose figures have been kept long enough. */
void fp_collect_exited(struct server *s);
/* groups.c: the exe_* verbs' work, and the events that grow a group */
enum fp_status fp_group_enable(struct server *s, struct json_object *req, int on,
			       struct json_object **res, char *msg, size_t msglen);
enum fp_status fp_group_stats(struct server *s, struct json_object *req,
			      struct json_object **res, char *msg, size_t msglen);
void fp_group_join(struct server *s, int group, pid_t pid);
/* Gives one waiting member of each group its own target; 1 while more wait. */
int fp_run_groups(struct server *s);
/* A member target exited: its figures join the group's exited sum; its slot is freed. */
int fp_group_member_exited(struct server *s, int ti);
/* --exe subscriptions (top, stream): the group named in req (its index; with msg, -1:
 * not profiled, -2: a bad request),
 * the members' figures at the start, one push per interval, freeing. */
int fp_group_find(struct server *s, struct json_object *req, char *msg, size_t msglen);
/* featprof sample --exe: sampling on or off in every member, and in those that join. */
enum fp_status fp_group_sample(struct server *s, struct json_object *req,
			       struct json_object **res, char *msg, size_t msglen);
/* The sample verb's hz, on and remote (defaults 997, true, false). */
enum fp_status fp_sample_args(struct json_object *req, int64_t *hz, int *on, int *remote,
			      char *msg, size_t msglen);
void fp_group_sub_start(struct server *s, struct sub *sb);
struct json_object *fp_group_sub_tick(struct server *s, struct sub *sb);
void fp_group_sub_free(struct sub *sb);
void fp_free_groups(struct server *s);
struct json_object *fp_groups_status(struct server *s);
/* A dead subscription's recording: stop it on its target, free it. */
void fp_record_end(struct server *s, struct sub *sb);

#endif
