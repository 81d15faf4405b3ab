// SPDX-License-Identifier: GPL-2.0
/*
 * featprof metrics [--listen ADDR:PORT] [PID...]: serves /metrics in the Prometheus
 * text format (version 0.0.4) for a Prometheus to scrape.
 *
 * HTTP stays out of the privileged daemon: this is an ordinary process that asks
 * featprofd over its socket with its caller's rights, so a user's endpoint shows only
 * the targets that user may profile (the daemon's status lists no others). Every scrape
 * asks anew: targets that appear, exit or are detached are followed without a restart.
 * With PIDs, only those. Loopback by default; another address gets a warning, since
 * the figures go to whoever connects.
 *
 * Metrics (labels: pid, comm, and region/feature/state/kind where named; cardinality is
 * targets x regions, bounded by the catalogs; paths are left out: use export):
 *   featprof_up, featprof_targets, featprof_target_exited, featprof_attached_sites,
 *   featprof_calibration_pair_seconds (gauges);
 *   featprof_region_seconds_total (inclusive), featprof_region_exclusive_seconds_total,
 *   featprof_region_cpu_seconds_total, featprof_region_offcpu_seconds_total{state},
 *   featprof_region_events_total, featprof_feature_seconds_total,
 *   featprof_feature_cpu_seconds_total, featprof_feature_offcpu_seconds_total{state},
 *   featprof_feature_sampled_seconds_total (sampled targets only),
 *   featprof_base_seconds_total, featprof_anomalies_total{kind} (counters; a reset or
 *   re-enable makes them start again, which Prometheus treats as a counter reset);
 *   featprof_region_duration_seconds (histogram of instances' raw inclusive time, from
 *   the kernel's log2 buckets: le = 2^(k+1) ns).
 * Times are compensated like stats' (the histogram is raw: per instance, as measured).
 *
 * HTTP by libmicrohttpd (Debian's libmicrohttpd-dev): the parsing that faces the network
 * is a maintained library's, not ours. One thread answers one request at a time; GET and
 * HEAD of /metrics; 16 connections at most, each idle one closed after 5 s, a request's
 * line and headers within 16 KiB.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <json-c/json.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/types.h>

#include "cli/core/core.h"
#include "cli/writers/writers.h"
#include "commands_impl.h"
#include "bpf/featprof_bpf.h"	/* FP_HIST_BUCKETS */

#define MAX_REQUEST 16384	/* a connection's memory, its request line and headers in it */
#define REQUEST_TIMEOUT_S 5
#define MAX_CONNECTIONS 16
#define DEFAULT_LISTEN "127.0.0.1:9478"


/* A label value, escaped as the text format wants (\\, \", \n). */
static void lv(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

struct target {
	long pid;
	const char *comm;
	int exited, sites;
	struct json_object *st;	/* stats reply */
};

static void base_labels(FILE *f, const struct target *t)
{
	fprintf(f, "pid=\"%ld\",comm=\"", t->pid);
	lv(f, t->comm);
	fputc('"', f);
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One sample per region (per feature) of every target: value = key of the object,
 * in seconds (scale 1e-9) or as a count (scale 1). */
static void per_item(FILE *f, struct target *ts, int n, const char *arr, const char *label,
		     const char *name, const char *key, const char *extra, double scale)
{
	int i;
	size_t k;

	for (i = 0; i < n; i++) {
		struct json_object *a = geta(ts[i].st, arr);

		for (k = 0; a && k < json_object_array_length(a); k++) {
			struct json_object *o = json_object_array_get_idx(a, k), *v;

			if (!json_object_object_get_ex(o, key, &v))	/* e.g. not sampled */
				continue;
			fprintf(f, "%s{", name);
			base_labels(f, &ts[i]);
			fprintf(f, ",%s=\"", label);
			lv(f, gets_(o, "name"));
			fprintf(f, "\"%s} %.9g\n", extra, (double)geti(o, key) * scale);
		}
	}
}

/* The kernel's buckets are sparse in stats (bucket k: 2^k <= ns < 2^(k+1)); Prometheus
 * wants the same cumulative le set at every scrape, so every target and region gets the
 * buckets from le = 2^(HIST_FIRST+1) ns (about 1 us: no probed region is shorter) to the
 * kernel's last, plus +Inf. Lower buckets count in the first (cumulative). */
#define HIST_FIRST 9

static void region_labels(FILE *f, const char *metric, const struct target *t,
			  struct json_object *r)
{
	fprintf(f, "%s{", metric);
	base_labels(f, t);
	fprintf(f, ",region=\"");
	lv(f, gets_(r, "name"));
	fputc('"', f);
}

static void histograms(FILE *f, struct target *ts, int n)
{
	int i, b;
	size_t k;

	family(f, "featprof_region_duration_seconds", "histogram",
	       "Raw inclusive time of region instances (log2 buckets).");
	for (i = 0; i < n; i++) {
		struct json_object *regs = geta(ts[i].st, "regions");

		for (k = 0; regs && k < json_object_array_length(regs); k++) {
			struct json_object *r = json_object_array_get_idx(regs, k);
			struct json_object *h = geta(r, "histogram");
			int64_t cnt[FP_HIST_BUCKETS] = { 0 }, cum = 0;
			size_t e;

			for (e = 0; h && e < json_object_array_length(h); e++) {
				struct json_object *x = json_object_array_get_idx(h, e);
				int64_t ge = geti(x, "ge_ns");

				for (b = 0; b < FP_HIST_BUCKETS - 1 && (1LL << (b + 1)) <= ge; b++)
					;
				cnt[b] += geti(x, "count");
			}
			for (b = 0; b < FP_HIST_BUCKETS; b++) {
				cum += cnt[b];
				if (b < HIST_FIRST)
					continue;
				region_labels(f, "featprof_region_duration_seconds_bucket",
					      &ts[i], r);
				fprintf(f, ",le=\"%.9g\"} %lld\n", 1e-9 * (double)(2LL << b),
					(long long)cum);
			}
			region_labels(f, "featprof_region_duration_seconds_bucket", &ts[i], r);
			fprintf(f, ",le=\"+Inf\"} %lld\n", (long long)cum);
			region_labels(f, "featprof_region_duration_seconds_sum", &ts[i], r);
			fprintf(f, "} %.9g\n", 1e-9 * (double)geti(r, "raw_inclusive_ns"));
			region_labels(f, "featprof_region_duration_seconds_count", &ts[i], r);
			fprintf(f, "} %lld\n", (long long)cum);
		}
	}
}

/* The per-region and per-feature counters: one sample per item of stats' array arr
 * ("regions" or "features"), value key x scale. */
struct counter {
	const char *name, *help, *arr, *key, *extra;
	double scale;
};

static const struct counter counters[] = {
	{ "featprof_region_seconds_total", "Inclusive time in the region.", "regions",
	  "inclusive_ns", "", 1e-9 },
	{ "featprof_region_exclusive_seconds_total", "Time in the region outside nested regions.",
	  "regions", "exclusive_ns", "", 1e-9 },
	{ "featprof_region_cpu_seconds_total", "On-CPU time in the region.", "regions", "cpu_ns",
	  "", 1e-9 },
	{ "featprof_region_offcpu_seconds_total",
	  "Off-CPU time in the region: preempted (runnable) or blocked (sleeping).", "regions",
	  "offcpu_preempted_ns", ",state=\"preempted\"", 1e-9 },
	{ "featprof_region_offcpu_seconds_total", NULL, "regions", "offcpu_blocked_ns",
	  ",state=\"blocked\"", 1e-9 },
	{ "featprof_region_events_total", "Completed region instances.", "regions", "count", "",
	  1 },
	{ "featprof_feature_seconds_total", "Time with the feature open (any region of it).",
	  "features", "ns", "", 1e-9 },
	{ "featprof_feature_cpu_seconds_total", "On-CPU time with the feature open.", "features",
	  "cpu_ns", "", 1e-9 },
	{ "featprof_feature_offcpu_seconds_total", "Off-CPU time with the feature open.",
	  "features", "offcpu_preempted_ns", ",state=\"preempted\"", 1e-9 },
	{ "featprof_feature_offcpu_seconds_total", NULL, "features", "offcpu_blocked_ns",
	  ",state=\"blocked\"", 1e-9 },
	{ "featprof_feature_sampled_seconds_total",
	  "CPU time with the feature open, from samples (featprof sample): samples x period; "
	  "only for sampled targets.", "features", "sampled_ns", "", 1e-9 },
};

static int wanted(long pid, char **pids, int npids)
{
	long p;
	int i;

	for (i = 0; i < npids; i++)
		if (!parse_pid(pids[i], &p) && p == pid)
			return 1;
	return !npids;
}

/* The whole /metrics body for this scrape, into f. */
/* The stats of the targets of status (a status reply) that pids names (none: all), at
 * most 256, into ts: how many. */
static int fetch_targets(int fd, struct json_object *status, char **pids, int npids,
			 struct target *ts)
{
	struct json_object *tl = status ? geta(status, "targets") : NULL, *req;
	int n = 0;
	size_t k;

	for (k = 0; tl && k < json_object_array_length(tl) && n < 256; k++) {
		struct json_object *t = json_object_array_get_idx(tl, k), *st;

		if (!wanted((long)geti(t, "pid"), pids, npids))
			continue;
		req = json_object_new_object();
		json_object_object_add(req, "verb", json_object_new_string("stats"));
		json_object_object_add(req, "pid", json_object_new_int64(geti(t, "pid")));
		st = client_call(fd, "metrics", req);	/* a target detached meanwhile: none */
		if (!st)
			continue;
		ts[n].pid = (long)geti(t, "pid");
		ts[n].comm = gets_(t, "comm");
		ts[n].exited = json_object_get_boolean(json_object_object_get(t, "exited"));
		ts[n].sites = (int)geti(t, "attached_sites");
		ts[n++].st = st;
	}
	return n;
}

/* Each target's anomaly counters, one series per kind. */
static void anomalies(FILE *f, const struct target *ts, int n)
{
	struct json_object *an;
	int i;

	family(f, "featprof_anomalies_total", "counter",
	       "Events counted, never attributed (stack overflow, full path map, ...).");
	for (i = 0; i < n; i++) {
		struct json_object_iterator it, end;

		if (!json_object_object_get_ex(ts[i].st, "anomalies", &an))
			continue;
		it = json_object_iter_begin(an);
		end = json_object_iter_end(an);
		for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
			fprintf(f, "featprof_anomalies_total{");
			base_labels(f, &ts[i]);
			fprintf(f, ",kind=\"%s\"} %lld\n", json_object_iter_peek_name(&it),
				(long long)json_object_get_int64(json_object_iter_peek_value(&it)));
		}
	}
}

static void scrape(FILE *f, char **pids, int npids)
{
	struct json_object *req, *status, *cal = NULL;
	struct target ts[256];
	int fd = client_connect(), n, i;

	if (fd < 0) {
		family(f, "featprof_up", "gauge", "Whether featprofd answered this scrape.");
		fprintf(f, "featprof_up 0\n");
		return;
	}
	req = json_object_new_object();
	json_object_object_add(req, "verb", json_object_new_string("status"));
	status = client_call(fd, "metrics", req);
	n = fetch_targets(fd, status, pids, npids, ts);
	close(fd);
	family(f, "featprof_up", "gauge", "Whether featprofd answered this scrape.");
	fprintf(f, "featprof_up %d\n", status ? 1 : 0);
	family(f, "featprof_targets", "gauge", "Targets this user may see.");
	fprintf(f, "featprof_targets %d\n", n);
	if (status && json_object_object_get_ex(status, "calibration", &cal)) {
		family(f, "featprof_calibration_pair_seconds", "gauge",
		       "Measured cost of a begin+end probe pair at the default attach point.");
		fprintf(f, "featprof_calibration_pair_seconds %.9g\n",
			1e-9 * json_object_get_double(json_object_object_get(cal, "pair_ns")));
	}
	family(f, "featprof_target_exited", "gauge", "1 once the process exited.");
	for (i = 0; i < n; i++) {
		fprintf(f, "featprof_target_exited{");
		base_labels(f, &ts[i]);
		fprintf(f, "} %d\n", ts[i].exited);
	}
	family(f, "featprof_attached_sites", "gauge", "Probe sites attached.");
	for (i = 0; i < n; i++) {
		fprintf(f, "featprof_attached_sites{");
		base_labels(f, &ts[i]);
		fprintf(f, "} %d\n", ts[i].sites);
	}
	for (i = 0; i < (int)(sizeof(counters) / sizeof(counters[0])); i++) {
		const struct counter *c = &counters[i];

		if (c->help)	/* a row without help continues the family above */
			family(f, c->name, "counter", c->help);
		per_item(f, ts, n, c->arr, c->arr[0] == 'r' ? "region" : "feature", c->name,
			 c->key, c->extra, c->scale);
		if (!strcmp(c->key, "count"))	/* the histogram goes after the events */
			histograms(f, ts, n);
	}
	family(f, "featprof_base_seconds_total", "counter",
	       "Time of measured threads outside every region.");
	for (i = 0; i < n; i++) {
		fprintf(f, "featprof_base_seconds_total{");
		base_labels(f, &ts[i]);
		fprintf(f, "} %.9g\n", 1e-9 * (double)geti(ts[i].st, "base_ns"));
	}
	anomalies(f, ts, n);
	for (i = 0; i < n; i++)
		json_object_put(ts[i].st);
	json_object_put(status);
}

struct scrape_of {
	char **pids;
	int npids;
};

/*
 * Every request, called by libmicrohttpd's thread (one at a time): GET or HEAD of
 * /metrics (its query ignored) scrapes anew; another path 404, another method 405.
 * Answered at the first call: a request's body, if any, is not read.
 */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **state)
{
	const struct scrape_of *x = cls;
	const char *type = "text/plain", *body = "";
	char *scraped = NULL;
	size_t n = 0;
	unsigned code = MHD_HTTP_OK;
	struct MHD_Response *r;
	enum MHD_Result ret;
	FILE *f;

	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD)) {
		code = MHD_HTTP_METHOD_NOT_ALLOWED;
	} else if (strcmp(url, "/metrics")) {
		code = MHD_HTTP_NOT_FOUND;
		body = "try /metrics\n";
	} else if (!(f = open_memstream(&scraped, &n))) {
		code = MHD_HTTP_INTERNAL_SERVER_ERROR;
	} else {
		scrape(f, x->pids, x->npids);
		fclose(f);
		body = scraped;
		type = "text/plain; version=0.0.4; charset=utf-8";
	}
	if (code != MHD_HTTP_OK || !scraped)
		n = strlen(body);
	r = MHD_create_response_from_buffer(n, (void *)body, MHD_RESPMEM_MUST_COPY);
	free(scraped);
	if (!r)
		return MHD_NO;
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

/* The server on the bound socket fd until SIGINT or SIGTERM: libmicrohttpd's one thread
 * (signals blocked there and waited for here). 0, or 1 after a line. */
static int serve(int fd, char **pids, int npids)
{
	struct scrape_of x = { pids, npids };
	struct MHD_Daemon *d;
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);	/* inherited by the server's thread */
	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, on_request, &x,
			     MHD_OPTION_LISTEN_SOCKET, fd,
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)REQUEST_TIMEOUT_S,
			     MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS,
			     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)MAX_REQUEST,
			     MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "featprof metrics: the HTTP server (libmicrohttpd) did not "
			"start\n");
		close(fd);
		return 1;
	}
	sigwait(&set, &sig);
	MHD_stop_daemon(d);	/* closes fd */
	return 0;
}

int cmd_metrics(int argc, char **argv)
{
	const char *listen_at = DEFAULT_LISTEN, *colon;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct cli_opts o;
	char host[64];
	long port, pid;
	int fd, one = 1, i, rc = cli_parse(argc, argv, O_LISTEN, &o);

	if (!rc && o.listen)
		listen_at = o.listen;
	for (i = 0; !rc && i < o.npos; i++)
		if (parse_pid(o.pos[i], &pid)) {
			fprintf(stderr, "featprof metrics: not a pid: '%s'\n", o.pos[i]);
			rc = -1;
		}
	if (rc) {
		fprintf(rc == 1 ? stdout : stderr, "usage: featprof metrics [--listen ADDR:PORT] "
			"[PID...]   (default %s)\n", DEFAULT_LISTEN);
		return rc == 1 ? 0 : 2;
	}
	colon = strrchr(listen_at, ':');
	if (!colon || (size_t)(colon - listen_at) >= sizeof(host) ||
	    parse_long(colon + 1, 1, 65535, &port)) {
		fprintf(stderr, "featprof metrics: --listen takes ADDR:PORT, e.g. %s\n",
			DEFAULT_LISTEN);
		return 2;
	}
	memcpy(host, listen_at, (size_t)(colon - listen_at));
	host[colon - listen_at] = 0;
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		fprintf(stderr, "featprof metrics: not an IPv4 address: '%s'\n", host);
		return 2;
	}
	sa.sin_port = htons((uint16_t)port);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 16)) {
		fprintf(stderr, "featprof metrics: cannot listen on %s: %s\n", listen_at,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	if ((ntohl(sa.sin_addr.s_addr) >> 24) != 127)
		fprintf(stderr, "featprof metrics: warning: listening on %s, not loopback: anyone "
			"who can reach it reads your figures\n", listen_at);
	fprintf(stderr, "featprof metrics: serving http://%s/metrics\n", listen_at);
	signal(SIGPIPE, SIG_IGN);
	return serve(fd, o.pos, o.npos);
}
