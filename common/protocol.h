/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The featprofd control protocol, shared by the daemon and the CLI.
 *
 * Transport: a Unix stream socket; one JSON object per line (UTF-8, '\n'-terminated),
 * at most FP_MAX_LINE bytes including the newline. A longer line is answered with
 * error "too_long" and discarded up to its newline.
 *
 * Request:  {"id": <int>, "verb": "<verb>", ...arguments}
 * Reply:    {"id": <same>, "result": {...}}
 *        or {"id": <same>, "error": {"code": "<code>", "message": "<one line>"}}
 * Push:     {"subscription": <int>, "pid": <int>, "stats": {...}}    (deltas)
 *           {"subscription": <int>, "pid": <int>, "event": "exit"}
 *
 * Verbs and arguments:
 *   hello                         -> {"version", "calibration", "optimized_uprobes"}
 *   list      pid                 -> catalog: {"objects","features","regions",...}
 *   attach    pid                 -> {"pid","regions","features"}
 *   detach    pid                 drops the target and its figures
 *   enable    pid, features[], regions[], all, definitions {name, text} or [{..}, ..]
 *             (attach is implicit; definitions: a client's region definitions,
 *             common/regdefs.h, function regions among them)
 *             temporary: the regions this request turns on are disabled again when the
 *             connection closes, however the client ends (daemon/serve/leases.c)
 *   disable   pid, features[], regions[], all   -> {"enabled_regions","attached_sites"}
 *   status                        -> {"targets":[...], "calibration", "clients"}
 *   stats     pid                 -> {"regions","features","feature_sets","anomalies",...}
 *   reset     pid                 zeroes the figures
 *   subscribe pid, interval_ms    -> {"subscription"}; then pushes every interval
 *   unsubscribe subscription
 *   record    pid, duration_ms    -> {"record","ring_bytes","regions":[names]}; then
 *             {"record","events":[[tid,region,start_ns,end_ns,depth,ndesc,cstart_ns,
 *             cend_ns],...]} (c*: the thread's probe cost so far at start and end) and
 *             {"record","done":true,"events","dropped","probe_parts_ns","stats"}, or
 *             an "event" (exit, detached) that voids it (daemon/streams/record.c)
 *   sample    pid, hz, on, remote, stacks -> starts/stops sampling (daemon/sample/sample.c);
 *             stats then carries "sampling" and per region/feature "samples","sampled_ns",...;
 *             subscription pushes carry "sampling" only (cumulative since its start;
 *             without its call stacks); split_clones (with stacks): a compiler's clones
 *             named apart, "f [clone .constprop.0]"; temporary: stopped when the connection closes
 *             (unless sampling was started or stopped again meanwhile)
 *
 * Error codes: bad_request, unknown_verb, too_long, no_such_process, permission_denied,
 * no_probes, unknown_name, not_attached, busy, internal, unsupported (the running
 * kernel lacks what the request needs; the message names it and the kernel it came in).
 *
 * Who may do what: the peer's SO_PEERCRED credentials. Any verb naming a pid requires
 * that the peer could ptrace it: root, CAP_SYS_PTRACE, or the same uid as the target's
 * real, effective and saved uids with the target dumpable.
 *
 *   calibrate                     -> measures the probe cost again (root); "previous"
 *   repair    pid, check          probe sites of pid holding an int3 the file does not
 *             have get a uprobe registered and unregistered, which clears those no live
 *             consumer wants (root) -> {"pid","breakpoints","removed","held"}; check:
 *             count only
 *   exe_enable  exe, features[], regions[], all   every process running the file exe,
 *             now and later, and their forked children (root: they may be anyone's);
 *             -> {"exe","processes":[pids]}
 *   exe_disable exe, features[], regions[], all   (all: the group ends, figures stay)
 *   exe_stats   exe -> the stats keys summed over the group's processes, exited ones
 *             included, and "processes": [{pid, ...per-pid stats keys}]; "shared": the
 *             figures of the file's link (members before their own target: short-lived
 *             processes, a fork's first moments), also in the sum
 *   exe_subscribe exe, interval_ms -> {"subscription"}; then one push per interval,
 *             {"subscription","exe","stats"}: the interval's figures summed over the
 *             group's processes (those that exited in it included), "processes" beside
 *   exe_sample  exe, hz, on -> sampling in every member and those that join; the figures
 *             in exe_stats ("sampling" summed, shares figured again from the sums)
 *   run_start  pid, exe, features|all[, stops_at_exec] -> run: a group for pid (the
 *             client's child, not yet exec'd) and what it forks, measured from its exec
 *             of exe on; it ends with the connection. stops_at_exec (default false): the
 *             child stops at its exec for run_attach, so regions its processes time
 *             in-process are left to them (the file's link does not trap them)
 *   run_attach run -> own_target: the run's first process, stopped by the client at its
 *             exec (ptrace), gets a target of its own before it runs on
 *   run_finish run -> exe_stats' figures of the run (members detached), run_pid; it ends
 *
 * Changelog:
 *   1 (featprof 0.1.0) first version. Later additions that change no existing key:
 *     per-region/feature cpu, off-CPU and uncertainty keys, base_ns, "attach" in
 *     hello/status, the calibrate verb, region paths, elapsed_ns in pushes, the
 *     record and sample verbs, definitions, attach_points, begin_twice, the exe_*
 *     verbs; sampling.stack and sampling.anomalies.unmatched_ends; exe_stats
 *     "shared", status executables[].shared_sites, attach.nop5_fork_crashes_child;
 *     the repair verb, status breakpoints_repaired_at_start, status kernel (release,
 *     mechanisms: the mechanism of each part; unavailable: what the kernel lacks).
 *     Stricter input, no new keys: requests are strict JSON (RFC 8259) in valid UTF-8
 *     with no NUL in a string, "id" an integer of magnitude below 2^53 (echoed
 *     exactly; otherwise bad_request with id null); every line out is valid UTF-8
 *     (bytes of names that are not become '?'); a client that half-closes gets its
 *     queued replies before it is dropped (common/request.c).
 *     One name per figure: status executables[] gives a group's counts under exe_stats'
 *     keys (processes_live, _joined, _exited, _missed, _pending, _summed; "joined",
 *     "exited", "missed", "summed" are gone). exe_disable with all: true forgets the
 *     features and regions named before, as disable does for a pid.
 *     probe_cost_dominates (and exclusive_probe_cost_dominates) beside every compensated
 *     time: true where the figure is not above its uncertainty (its own time is
 *     somewhere below it); off-CPU keys are capped at the compensated wall time, so
 *     cpu_ns + offcpu_ns = the wall time and neither is negative.
 *     Error code "unsupported": sample --remote, record on a kernel without what they
 *     need (status kernel.unavailable says the same). status kernel.pretend_without:
 *     FEATPROF_KERNEL_WITHOUT as featprofd was started with (tests).
 *     Probe costs by gap bucket: record events carry two more elements (the thread's
 *     cumulative probe cost at the instance's start and end: compensated duration =
 *     end - start - (cend - cstart)); calibration gap_points; per region "children"
 *     (direct nested instances, of "nested").
 *     The run_start, run_attach and run_finish verbs (featprof run); run_start's
 *     stops_at_exec, exe_stats' processes_inprocess_unread (members gone before their
 *     in-process figures were read).
 *     status bpf_objects (privileged clients): objects, the BPF objects loaded for
 *     targets, and targets, how many targets they hold (daemon/targets/pool.c).
 *     Function regions (docs/REGIONS.md "Functions"): definitions may hold "region NAME
 *     function [OBJECT:]SYMBOL[,...]" lines, and "definitions" may be an array of 1-4
 *     {name, text} (a file's and --function's), also in exe_enable and run_start (kept
 *     for each member, applied where they match); stats "measured": "function" ("calls":
 *     C++ code's, counted at the entry, not timed: no return probe); anomaly
 *     no_return; list sites of provider "function"; status attach.function (the cost of
 *     a function's entry and return probes), pair_ns_function and
 *     kernel.mechanisms.function_regions.
 *     sample's "stacks" (sample --stacks): sampling.regions_from ("tls": the program's
 *     TLS stack; "kernel": the regions traced, so a default build with regions enabled
 *     can be sampled), per region, feature and base "functions" (its top 100 by
 *     total samples: name, object, self_/total_ samples, share, stderr; "inlined": true
 *     for a call the compiler inlined, from the object's DWARF: total only) and
 *     "functions_more", sampling.stacks (unwind, frames_max, with_stack, lost,
 *     truncated, functions, objects with build ids, samples: every distinct regions +
 *     features + stack with its count), anomalies.call_stack_lost.
 *     enable's and sample's "temporary" (the CLI's drill and sample hold their changes
 *     to their connection); sampling.stacks.objects[].symbols and debug_file (where the
 *     names came from: symtab, build-id, debuglink, debuginfod, minidebuginfo, dynsym,
 *     perf-map for the [jit] object). sampling.threads (with stacks): per thread
 *     sampled, the most sampled first (64 at most), name ("comm (tid N)"), tid, comm,
 *     samples and its top 20 "functions" (shares of its own samples).
 */
#ifndef FP_PROTOCOL_H
#define FP_PROTOCOL_H

#include <errno.h>

#define FP_PROTO_VERSION 1
#define FP_MAX_LINE 65536
#define FP_DEFAULT_SOCKET "/run/featprof/featprofd.sock"
#define FP_MAX_CLIENTS 256
/* Argument ranges the daemon checks and the CLI checks before sending. */
#define FP_MAX_PID 0x3fffffff		/* the kernel's PID_MAX_LIMIT is 4M; 2^30 - 1 */
#define FP_MIN_INTERVAL_MS 50		/* subscribe, exe_subscribe: interval_ms */
#define FP_MAX_INTERVAL_MS 3600000
#define FP_DEFAULT_INTERVAL_MS 1000
#define FP_MIN_RECORD_MS 100		/* record: duration_ms */
#define FP_MAX_RECORD_MS 3600000
#define FP_MIN_HZ 1			/* sample, exe_sample: hz */
#define FP_MAX_HZ 10000
#define FP_DEFAULT_HZ 997

/* Reply status: FP_OK, or the error code a reply carries ("code"). */
enum fp_status {
	FP_OK,
	FP_E_BAD_REQUEST,
	FP_E_UNKNOWN_VERB,
	FP_E_TOO_LONG,
	FP_E_NO_SUCH_PROCESS,
	FP_E_PERMISSION_DENIED,
	FP_E_NO_PROBES,
	FP_E_UNKNOWN_NAME,
	FP_E_NOT_ATTACHED,
	FP_E_BUSY,
	FP_E_INTERNAL,
	FP_E_UNSUPPORTED,
	FP_E_MAX,
};

static inline const char *fp_status_name(enum fp_status st)
{
	static const char *const names[FP_E_MAX] = {
		[FP_OK] = "ok",
		[FP_E_BAD_REQUEST] = "bad_request",
		[FP_E_UNKNOWN_VERB] = "unknown_verb",
		[FP_E_TOO_LONG] = "too_long",
		[FP_E_NO_SUCH_PROCESS] = "no_such_process",
		[FP_E_PERMISSION_DENIED] = "permission_denied",
		[FP_E_NO_PROBES] = "no_probes",
		[FP_E_UNKNOWN_NAME] = "unknown_name",
		[FP_E_NOT_ATTACHED] = "not_attached",
		[FP_E_BUSY] = "busy",
		[FP_E_INTERNAL] = "internal",
		[FP_E_UNSUPPORTED] = "unsupported",
	};

	return (unsigned)st < FP_E_MAX ? names[st] : "internal";
}

/* The status of a failure's code (common/err.h, which says what each code means): the
 * one place an errno becomes a protocol error. */
static inline enum fp_status fp_status_of(int code)
{
	switch (code < 0 ? -code : code) {
	case 0:
		return FP_OK;
	case EINVAL:
		return FP_E_BAD_REQUEST;
	case EBADRQC:
		return FP_E_UNKNOWN_VERB;
	case EMSGSIZE:
		return FP_E_TOO_LONG;
	case ESRCH:
		return FP_E_NO_SUCH_PROCESS;
	case EPERM:
	case EACCES:
		return FP_E_PERMISSION_DENIED;
	case ENODATA:
		return FP_E_NO_PROBES;
	case ENOENT:
		return FP_E_UNKNOWN_NAME;
	case ENOTCONN:
		return FP_E_NOT_ATTACHED;
	case EBUSY:
	case EUSERS:
		return FP_E_BUSY;
	case EOPNOTSUPP:
		return FP_E_UNSUPPORTED;
	default:
		return FP_E_INTERNAL;
	}
}

#endif
