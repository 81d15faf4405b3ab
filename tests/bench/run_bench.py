#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""featprof benchmarks: SimpleBusyLoop overhead against dry, sys/sdt.h, a static tracer,
bare uprobes, bpftrace (and bcc where it runs), accuracy against in-target truth, and
throughput. Runs are interleaved and repeated in one invocation; results are medians
with min-max. Needs root.

usage: run_bench.py BUILD_DIR [--out FILE] [--smoke] [--rounds N] [--hot-only]
                    [--functions-only]
--smoke: tiny runs that only check the harness works and its output parses."""
import argparse
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ap = argparse.ArgumentParser()
ap.add_argument("build")
ap.add_argument("--out")
ap.add_argument("--smoke", action="store_true")
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--hot-only", action="store_true", help="only the hot-region benchmark")
ap.add_argument("--functions-only", action="store_true",
                help="only the function-region benchmark (prints its section)")
A = ap.parse_args()
B = os.path.abspath(A.build)
TMP = tempfile.mkdtemp(prefix="featprof-bench-")
ITERS = 2000 if A.smoke else 1000000
BODY = 3000  # ~3.2 us of busy-counting body here
ROUNDS = 1 if A.smoke else A.rounds
BL = {v: "%s/bench/busyloop_%s" % (B, v)
      for v in ("dry", "sdt", "fp", "fp_nop1", "static", "fp_sampling", "fp_gated",
                "fp_inproc")}
FP = B + "/featprof"


DAEMONS = []
RES = {}


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


class Daemon:
    def __init__(self, name, *args, env=None):
        self.sock = os.path.join(TMP, name + ".sock")
        self.p = subprocess.Popen([B + "/featprofd", "--socket", self.sock, "-q"] + list(args),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  env=dict(os.environ, **(env or {})))
        DAEMONS.append(self)
        for _ in range(300):
            if os.path.exists(self.sock):
                return
            time.sleep(0.05)
        raise RuntimeError("featprofd did not start")

    def status(self):
        return json.loads(sh([FP, "--socket", self.sock, "status", "--json"]).stdout)

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        self.p.wait(20)


def request(daemon, verb, **args):
    """One request on featprofd's socket (for verbs the CLI runs only for a while)."""
    import socket
    s = socket.socket(socket.AF_UNIX)
    s.connect(daemon.sock)
    f = s.makefile("rwb")
    f.write((json.dumps(dict(args, id=1, verb=verb)) + "\n").encode())
    f.flush()
    r = json.loads(f.readline())
    s.close()
    assert "result" in r, r
    return r["result"]


def waiting(binary, *args):
    p = subprocess.Popen([binary] + [str(a) for a in args] + ["--wait"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    assert line.startswith("ready"), line
    return p, int(line.split()[1])


def finish(p):
    p.stdin.write("go\n")
    p.stdin.flush()
    out = p.stdout.read()
    p.wait(600)
    return json.loads(out.strip().splitlines()[-1])


# --- configurations: each returns the busyloop's JSON ----------------------------------

def plain(variant, *extra):
    def run():
        return json.loads(sh([BL[variant], str(ITERS), str(BODY)] + list(extra)).stdout)
    return run


def via_daemon(daemon, variant="fp", inproc=False):
    def run():
        p, pid = waiting(BL[variant], ITERS, BODY)
        r = sh([FP, "--socket", daemon.sock, "enable", str(pid), "Busy"])
        assert r.returncode == 0, r.stderr
        assert ("timed in the process" in r.stdout) == inproc, r.stdout
        out = finish(p)
        st = json.loads(sh([FP, "--socket", daemon.sock, "stats", str(pid), "--json"]).stdout)
        reg = next(x for x in st["regions"] if x["name"] == "busy")
        assert reg["count"] == ITERS, reg["count"]
        out["traced_regions"] = reg["count"]
        sh([FP, "--socket", daemon.sock, "detach", str(pid)])
        return out
    return run


def via_daemon_trap(daemon):
    """The in-process build traced by uprobes (enable --trap): its gates stay down."""
    def run():
        p, pid = waiting(BL["fp_inproc"], ITERS, BODY)
        r = sh([FP, "--socket", daemon.sock, "enable", str(pid), "--trap", "Busy"])
        assert r.returncode == 0 and "timed in the process" not in r.stdout, r.stdout
        out = finish(p)
        sh([FP, "--socket", daemon.sock, "detach", str(pid)])
        return out
    return run


BT_SUM = ('usdt:%s:featprof:busy__begin { @s[tid] = nsecs; } '
          'usdt:%s:featprof:busy__end /@s[tid]/ { @sum = sum(nsecs - @s[tid]); '
          '@n = count(); delete(@s[tid]); }')
BT_STREAM = ('usdt:%s:featprof:busy__begin { printf("b %%d %%d\\n", tid, nsecs); } '
             'usdt:%s:featprof:busy__end { printf("e %%d %%d\\n", tid, nsecs); }')


def bpftrace_on(pid, prog):
    """bpftrace running prog on pid, attached (its output past "Attaching")."""
    bt = subprocess.Popen(["bpftrace", "-p", str(pid), "-e", prog], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    first = ""
    while "Attaching" not in first:  # past a warning about RLIMIT_MEMLOCK
        first = bt.stdout.readline()
        assert first, "bpftrace did not attach"
    time.sleep(0.5)
    return bt


def via_bpftrace(script):
    def run():
        p, pid = waiting(BL["fp"], ITERS, BODY)
        bt = bpftrace_on(pid, script % (BL["fp"], BL["fp"]))
        out = finish(p)
        rest = bt.stdout.read()
        bt.wait(60)
        if "@n" in rest:
            n = int(rest.split("@n:")[1].split()[0])
            assert n == ITERS, n
            out["traced_regions"] = n
        else:  # streamed: how many events reached user space
            out["delivered_events"] = sum(1 for l in rest.splitlines()
                                          if l.startswith("b ") or l.startswith("e "))
            out["lost_note"] = [l for l in rest.splitlines() if "lost" in l.lower()][:1]
        return out
    return run


# --- function regions: the body in busy_fn (a push first) or busy_fn_step (single-stepped)

BT_FN = ("uprobe:%s:%s { @s[tid] = nsecs; } "
         "uretprobe:%s:%s /@s[tid]/ { @sum = sum(nsecs - @s[tid]); @n = count(); "
         "delete(@s[tid]); }")
FN_NAME = {"": "busy_fn", "step": "busy_fn_step"}


def fn_args(kind):
    return ["--function"] + ([kind] if kind else [])


def fn_daemon(daemon, kind=""):
    def run():
        p, pid = waiting(BL["fp"], ITERS, BODY, *fn_args(kind))
        r = sh([FP, "--socket", daemon.sock, "enable", str(pid), "--function",
                "Busy=" + FN_NAME[kind]])
        assert r.returncode == 0, r.stderr
        out = finish(p)
        st = json.loads(sh([FP, "--socket", daemon.sock, "stats", str(pid), "--json"]).stdout)
        reg = next(x for x in st["regions"] if x["name"] == FN_NAME[kind])
        assert reg["count"] == ITERS and reg["measured"] == "function", reg
        sh([FP, "--socket", daemon.sock, "detach", str(pid)])
        return out
    return run


def fn_bpftrace(kind=""):
    def run():
        p, pid = waiting(BL["fp"], ITERS, BODY, *fn_args(kind))
        exe, fn = BL["fp"], FN_NAME[kind]
        bt = bpftrace_on(pid, BT_FN % (exe, fn, exe, fn))
        out = finish(p)
        rest = bt.stdout.read()
        bt.wait(60)
        n = int(rest.split("@n:")[1].split()[0])
        assert n == ITERS, n
        return out
    return run


def function_configs(d_session, d_multi, d_perf):
    """Configurations of the function-region benchmark (both entry kinds, the three
    mechanisms, the floors, bpftrace)."""
    c = [("function dry", "the body in busy_fn, no probes", plain("fp", "--function"))]
    for kind, what in (("", "push first (emulated)"), ("step", "sub first (single-stepped)")):
        sfx = " stepped" if kind else ""
        c += [("function floor" + sfx, "empty BPF program at entry and return, the two "
               "multi-uprobe links; " + what, plain("fp", *fn_args(kind), "--floor",
                                                    "function")),
              ("featprof function" + sfx, "featprofd, its choice here (%s); %s" % (
                  d_session.status()["kernel"]["mechanisms"]["function_regions"].split(
                      " (")[0].split(":")[0], what), fn_daemon(d_session, kind)),
              ("featprof function multi" + sfx, "featprofd, a multi-uprobe link of entries "
               "and one of returns (FEATPROF_KERNEL_WITHOUT=uprobe_session, as before "
               "6.13); " + what, fn_daemon(d_multi, kind)),
              ("featprof function perf" + sfx, "featprofd, a perf uprobe and uretprobe "
               "(FEATPROF_KERNEL_WITHOUT=uprobe_multi, as before 6.6); " + what,
               fn_daemon(d_perf, kind))]
        if shutil.which("bpftrace"):
            c.append(("bpftrace function sum" + sfx, "uprobe + uretprobe, a tid-keyed "
                      "duration sum; " + what, fn_bpftrace(kind)))
    return c


def function_section(fres):
    """The report's section on function regions from their rows {name: (median, lo, hi)}."""
    dry = fres["function dry"][0]

    def per(name):
        return (fres[name][0] - dry) / 2
    L = ["## Function regions\n",
         "The same body in a plain function called from the loop (`busyloop --function`); a "
         "region from its entry (a uprobe) to its return (a return probe), %d iterations, "
         "%d rounds, interleaved. Added per event: (median - function dry) / 2.\n" % (ITERS,
                                                                                      ROUNDS),
         "| configuration | what | ns/iter | min-max | added per event |",
         "|---|---|---|---|---|"]
    for name, (m, lo, hi, what) in fres.items():
        L.append("| %s | %s | %.1f | %.1f-%.1f | %.0f ns |" % (name, what, m, lo, hi,
                                                              per(name)))
    L.append("")
    for sfx, label in (("", "push first"), (" stepped", "single-stepped first instruction")):
        f, fl = per("featprof function" + sfx), per("function floor" + sfx)
        fm = per("featprof function multi" + sfx)
        line = ("- %s: featprof %.0f ns per event; with a link of entries and one of returns "
                "%.0f ns, against the floor (an empty program on those links) %.0f ns: "
                "%.2fx the floor (target <= 1.15x); one perf uprobe and uretprobe per "
                "function %.0f ns" % (label, f, fm, fl, fm / fl,
                                      per("featprof function perf" + sfx)))
        if "bpftrace function sum" + sfx in fres:
            b = per("bpftrace function sum" + sfx)
            line += "; bpftrace's uprobe/uretprobe sum %.0f ns, %.2fx featprof" % (b, b / f)
        L.append(line + ".")
    L.append("")
    return "\n".join(L)


def run_functions():
    """The function-region benchmark alone: its section, printed."""
    ds = Daemon("fn-default")
    dm = Daemon("fn-multi", env={"FEATPROF_KERNEL_WITHOUT": "uprobe_session"})
    dp = Daemon("fn-perf", env={"FEATPROF_KERNEL_WITHOUT": "uprobe_multi"})
    configs = function_configs(ds, dm, dp)
    res = {name: [] for name, _, _ in configs}
    for rnd in range(ROUNDS):
        for name, _, fn in configs:
            out = fn()
            res[name].append(out["ns_per_iteration"])
            print("round %d %-32s %8.1f ns/iteration" % (rnd + 1, name,
                                                        out["ns_per_iteration"]), flush=True)
    ds.stop()
    dm.stop()
    dp.stop()
    return {name: (statistics.median(res[name]), min(res[name]), max(res[name]), what)
            for name, what, _ in configs}


def bcc_reason():
    if sh(["/usr/bin/python3", "-c", "import bcc"]).returncode != 0:
        return "python3-bpfcc not installed"
    r = sh(["/usr/bin/python3", "-c", "from bcc import BPF; BPF(text='int f(void *c){return 0;}')"])
    if r.returncode != 0:
        line = [x for x in r.stderr.splitlines() if "header" in x.lower()] or r.stderr.splitlines()[-1:]
        return "bcc cannot compile a program here: " + (line[0] if line else "unknown error")
    return None


def main():
    if os.geteuid() != 0:
        print("SKIP: benchmarks need root")
        return 77
    for b in list(BL.values()) + [FP, B + "/featprofd"]:
        assert os.path.exists(b), b + " missing (make bench builds it)"
    if A.functions_only:
        print(function_section(run_functions()))
        return 0
    if A.hot_only:
        d = Daemon("hot")
        for row in hot_region(d):
            print("| %s | %.2f ns/iter (%.2f-%.2f) | %s |" % (row[0], row[2], row[3], row[4],
                                                            row[5]))
        d.stop()
        return 0
    d1 = Daemon("auto")  # the default: the attach point measured cheaper
    dn1 = Daemon("nop1", "--site", "nop1")
    d5 = Daemon("nop5", "--site", "nop5")
    chosen = d1.status()["attach"]["attach_point"]
    at = "nop5" if chosen == "shielded-nop5" else "nop1"
    have_bt = shutil.which("bpftrace") is not None
    configs = [
        ("dry", "no probes", plain("dry")),
        ("sdt inactive", "sys/sdt.h probes, nothing attached", plain("sdt")),
        ("featprof inactive", "shielded sites, nothing attached", plain("fp")),
        ("featprof-nop1 inactive", "FEATPROF_SHAPE_NOP1 sites, nothing attached", plain("fp_nop1")),
        ("static tracer", "2 clock_gettime into a preallocated buffer", plain("static")),
        ("bare uprobe nop1", "perf uprobe, no program, on the nop1 (perf's sample work)",
         plain("fp", "--bare", "nop1")),
        ("bare uprobe nop5", "perf uprobe, no program, on the shielded nop5",
         plain("fp", "--bare", "nop5")),
        ("floor nop1", "empty BPF program, multi-uprobe link, on the nop1",
         plain("fp", "--floor", "nop1")),
        ("floor nop5", "empty BPF program, multi-uprobe link, on the shielded nop5",
         plain("fp", "--floor", "nop5")),
        ("featprof active", "featprofd default: attach point by measurement (%s here)" % at,
         via_daemon(d1)),
        ("featprof active nop1", "featprofd --site nop1", via_daemon(dn1)),
        ("featprof active nop5", "featprofd --site nop5", via_daemon(d5)),
        ("in-process inactive", "FEATPROF_INPROCESS build, gates down", plain("fp_inproc")),
        ("in-process active", "FEATPROF_INPROCESS build, featprofd default: timed in the "
         "process", via_daemon(d1, "fp_inproc", True)),
        ("in-process build, trapped", "FEATPROF_INPROCESS build, featprofd enable --trap",
         via_daemon_trap(d1)),
    ]
    if have_bt:
        configs += [
            ("bpftrace sum", "per-region duration sum in a tid-keyed map", via_bpftrace(BT_SUM)),
            ("bpftrace stream", "printf of every event to user space (the thesis's script)",
             via_bpftrace(BT_STREAM)),
        ]
    res = {name: [] for name, _, _ in configs}
    RES.update(res)
    for rnd in range(ROUNDS):
        for name, _, fn in configs:
            out = fn()
            res[name].append(out)
            print("round %d %-24s %8.1f ns/iteration" % (rnd + 1, name, out["ns_per_iteration"]),
                  flush=True)

    def med(name):
        return statistics.median(x["ns_per_iteration"] for x in res[name])

    dry = med("dry")
    rows = []
    for name, what, _ in configs:
        v = [x["ns_per_iteration"] for x in res[name]]
        m = med(name)
        rows.append((name, what, m, min(v), max(v), (m - dry) / dry * 100, (m - dry) / 2))
    bcc = bcc_reason()

    # accuracy and throughput (featprof default daemon)
    acc = []
    for ns, n in ((1000, 40000), (10000, 10000), (1000000, 200)):
        if A.smoke:
            n = 20
        for nested in (False, True):
            extra = ["--truth", str(ns)] + (["--nested"] if nested else [])
            p, pid = waiting(BL["fp"], n, 0, *extra)
            sh([FP, "--socket", d1.sock, "enable", str(pid), "Accuracy"])
            out = finish(p)
            st = json.loads(sh([FP, "--socket", d1.sock, "stats", str(pid), "--json"]).stdout)
            sh([FP, "--socket", d1.sock, "detach", str(pid)])
            regs = {r["name"]: r for r in st["regions"]}
            o, i = regs["acc_outer"], regs["acc_inner"]
            t_o, t_i = out["truth_outer_ns"], out["truth_inner_ns"]

            def e(a, b):
                return (a - b) / b * 100 if b else 0.0
            row = {"len_ns": ns, "nested": nested, "n": n,
                   "outer_incl_raw": e(o["raw_inclusive_ns"], t_o),
                   "outer_incl": e(o["inclusive_ns"], t_o)}
            if nested:
                row.update(outer_excl_raw=e(o["raw_exclusive_ns"], t_o - t_i),
                           outer_excl=e(o["exclusive_ns"], t_o - t_i),
                           inner_incl_raw=e(i["raw_inclusive_ns"], t_i),
                           inner_incl=e(i["inclusive_ns"], t_i))
            acc.append(row)
            print("accuracy %s" % row, flush=True)
    thr = []
    for threads in (1, 2):
        n = 2000 if A.smoke else 300000
        p, pid = waiting(BL["fp"], n, 0, "--threads", threads)
        sh([FP, "--socket", d1.sock, "enable", str(pid), "Busy"])
        out = finish(p)
        sh([FP, "--socket", d1.sock, "detach", str(pid)])
        ev = 2 * n * threads / (out["loop_ns"] / 1e9)
        thr.append((threads, ev))
        print("throughput %d thread(s): %.0f events/s" % (threads, ev), flush=True)
    hot = hot_region(d1)
    minute = hot_minute(d1)
    fres = run_functions()
    cal = d1.status()
    d1.stop()
    dn1.stop()
    d5.stop()
    # calibration across daemon starts: its stability is part of the accuracy
    starts = []
    for k in range(2 if A.smoke else 5):
        dk = Daemon("start%d" % k)
        starts.append(dk.status()["attach"])
        dk.stop()
    cal["starts"] = starts

    # instruction counts (callgrind), inactive sites
    ir = {}
    if shutil.which("valgrind"):
        for v in ("dry", "sdt", "fp", "fp_nop1", "fp_sampling", "fp_gated", "fp_inproc"):
            counts = []
            for n in (1000, 2000):
                f = os.path.join(TMP, "cg.%s.%d" % (v, n))
                sh(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + f, BL[v], str(n), "10"])
                tot = [l for l in open(f) if l.startswith("summary:") or l.startswith("totals:")]
                counts.append(int(tot[-1].split()[1]))
            ir[v] = (counts[1] - counts[0]) / 1000.0  # per iteration, start-up cancels out
        print("instructions per iteration:", ir, flush=True)

    text = report(rows, dry, bcc, acc, thr, ir, cal, hot, minute) + "\n" + function_section(fres)
    if A.out:
        open(A.out, "w").write(text)
    else:
        print(text)
    if A.smoke:
        assert all(len(v) == ROUNDS for v in res.values())
        print("bench smoke: %d configurations, accuracy %d rows, parsed" % (len(rows), len(acc)))
    return 0


HOT_BODY = 20  # a region entered at well over 10 M/s when nothing is attached


def cpu_clock_events(pid, hz):
    """perf_event_open(2) of a cpu-clock event (inherited, sampling every 1e9/hz ns) on
    each thread of pid, nothing attached: the fds."""
    import ctypes
    import struct
    libc = ctypes.CDLL(None, use_errno=True)
    fds = []
    for tid in os.listdir("/proc/%d/task" % pid):
        attr = bytearray(136)  # struct perf_event_attr, PERF_ATTR_SIZE_VER8
        # type PERF_TYPE_SOFTWARE, size, config PERF_COUNT_SW_CPU_CLOCK, sample_period
        struct.pack_into("IIQQ", attr, 0, 1, 136, 0, 1000000000 // hz)
        struct.pack_into("Q", attr, 40, 1 << 1)  # flags: inherit
        buf = (ctypes.c_char * 136).from_buffer(attr)
        fd = libc.syscall(298, buf, int(tid), -1, -1, 8)  # SYS_perf_event_open, CLOEXEC
        assert fd >= 0, os.strerror(ctypes.get_errno())
        fds.append(fd)
    return fds


def hot_region(d):
    """The hot-region benchmark (issue 11): one region around a 20-step body, built with
    FEATPROF_SAMPLING; dry, the sampling build idle, sampled at 97 and 997 Hz, and traced
    (fewer iterations: each costs a kernel entry) for contrast. Interleaved rounds."""
    n = 2000 if A.smoke else 50000000
    n_traced = 2000 if A.smoke else 200000

    def idle(variant):
        return lambda: json.loads(sh([BL[variant], str(n), str(HOT_BODY)]).stdout)

    def sampled(hz, variant="fp_sampling", remote=False):
        def run():
            p, pid = waiting(BL[variant], n, HOT_BODY)
            request(d, "sample", pid=pid, hz=hz, remote=remote)
            out = finish(p)
            st = json.loads(sh([FP, "--socket", d.sock, "stats", str(pid), "--json"]).stdout)
            out["samples"] = st["sampling"]["samples"]
            out["busy_share"] = next(x["samples"] for x in st["sampling"]["regions"]
                                     if x["name"] == "busy") / max(out["samples"], 1)
            sh([FP, "--socket", d.sock, "detach", str(pid)])
            return out
        return run

    def bare(hz):
        """A cpu-clock event per thread with no program: what the interrupt itself costs
        (the floor of any sampler built on it)."""
        def run():
            p, pid = waiting(BL["fp_sampling"], n, HOT_BODY)
            fds = cpu_clock_events(pid, hz)
            out = finish(p)
            for fd in fds:
                os.close(fd)
            return out
        return run

    def traced():
        p, pid = waiting(BL["fp_sampling"], n_traced, HOT_BODY)
        sh([FP, "--socket", d.sock, "enable", str(pid), "Busy"])
        out = finish(p)
        sh([FP, "--socket", d.sock, "detach", str(pid)])
        return out

    configs = [("dry", "no probes", idle("dry")),
               ("featprof inactive", "shielded sites, nothing attached", idle("fp")),
               ("sampling build, idle", "FEATPROF_SAMPLING, nothing attached",
                idle("fp_sampling")),
               ("sampled 97 Hz", "featprof sample, 97 Hz", sampled(97)),
               ("cpu-clock event, 997 Hz", "a cpu-clock event per thread, no program",
                bare(997)),
               ("sampled 997 Hz", "featprof sample, 997 Hz", sampled(997)),
               ("sampled 997 Hz, remote", "featprof sample --remote, 997 Hz",
                sampled(997, remote=True)),
               ("cpu-clock event, 9973 Hz", "a cpu-clock event per thread, no program",
                bare(9973)),
               ("sampled 9973 Hz", "featprof sample, 9973 Hz", sampled(9973)),
               ("sampled 9973 Hz, remote", "featprof sample --remote, 9973 Hz",
                sampled(9973, remote=True)),
               ("gated build, idle", "FEATPROF_SAMPLING_GATED, nothing attached",
                idle("fp_gated")),
               ("gated, sampled 997 Hz", "FEATPROF_SAMPLING_GATED, featprof sample, 997 Hz",
                sampled(997, "fp_gated")),
               ("traced", "featprof enable (each boundary a kernel entry)", traced)]
    res = {c[0]: [] for c in configs}
    for rnd in range(ROUNDS):
        for name, _, fn in configs:
            out = fn()
            res[name].append(out)
            print("hot round %d %-22s %8.2f ns/iteration" % (rnd + 1, name,
                                                            out["ns_per_iteration"]), flush=True)
    rows = []
    for name, what, _ in configs:
        v = [x["ns_per_iteration"] for x in res[name]]
        extra = ""
        if "samples" in res[name][0]:
            extra = "%d samples, busy %.1f%%" % (statistics.median(
                x["samples"] for x in res[name]), 100 * statistics.median(
                x["busy_share"] for x in res[name]))
        rows.append((name, what, statistics.median(v), min(v), max(v), extra))
    return rows


def hot_minute(d):
    """A region entered 10 M times a second (its body sized here to 100 ns idle) timed
    in-process for a minute: the FEATPROF_INPROCESS build idle, then enabled; its count
    must be exact. Twice: iterations independent (the CPU overlaps one's chain with the
    next's while idle) and --carried (each waits for the previous one)."""
    bl = BL["fp_inproc"]
    out = []
    for extra in ([], ["--carried"]):
        body = 90
        for _ in range(3):  # to 100 ns idle
            ns = json.loads(sh([bl, "1000000", str(body)] + extra).stdout)["ns_per_iteration"]
            body = max(1, int(round(body * 100.0 / ns)))
        n = 20000 if A.smoke else 600000000
        idle = json.loads(sh([bl, str(n), str(body)] + extra).stdout)
        p, pid = waiting(bl, n, body, *extra)
        r = sh([FP, "--socket", d.sock, "enable", str(pid), "Busy"])
        assert "timed in the process" in r.stdout, r.stdout
        timed = finish(p)
        st = json.loads(sh([FP, "--socket", d.sock, "stats", str(pid), "--json"]).stdout)
        sh([FP, "--socket", d.sock, "detach", str(pid)])
        reg = next(x for x in st["regions"] if x["name"] == "busy")
        o = {"carried": bool(extra), "body": body, "n": n, "idle": idle["ns_per_iteration"],
             "timed": timed["ns_per_iteration"], "count": reg["count"]}
        print("in-process minute: %s" % o, flush=True)
        assert reg["count"] == n, "in-process count %d, %d expected" % (reg["count"], n)
        out.append(o)
    return out


def report(rows, dry, bcc, acc, thr, ir, cal, hot=None, minute=None):
    r = {x[0]: x for x in rows}
    L = []
    L.append("# Benchmarks\n")
    L.append("Produced by `sudo make bench` (`tests/bench/run_bench.py build --out "
             "docs/BENCHMARKS.md`), %s.\n" % time.strftime("%Y-%m-%d"))
    L.append("Machine: %s, %d CPUs, kernel %s, %s. Shared and virtualised: read ratios "
             "within one run, not absolute times.\n" % (platform.machine(), os.cpu_count(),
                                                       platform.release(), "Debian 12"))
    L.append("## SimpleBusyLoop\n")
    L.append("One region around a busy-counting body (a register-only multiply-add chain, "
             "%d steps), %d iterations per run, every configuration run %d times, "
             "interleaved (rounds of all configurations). `ns/iter`: median, min-max. "
             "Added per event: (median - dry) / 2 (a begin and an end per iteration).\n" %
             (BODY, ITERS, ROUNDS))
    L.append("| configuration | what | ns/iter | min-max | over dry | added per event |")
    L.append("|---|---|---|---|---|---|")
    for name, what, m, lo, hi, pct, per in rows:
        L.append("| %s | %s | %.1f | %.1f-%.1f | %+.2f%% | %.0f ns |" % (name, what, m, lo, hi,
                                                                         pct, per))
    L.append("")
    L.append("bcc: %s.\n" % (bcc or "ran"))
    at = "nop5" if cal["attach"]["attach_point"] == "shielded-nop5" else "nop1"
    floor = r["floor " + at][6]
    fa = r["featprof active"][6]
    L.append("### Against the targets\n")
    L.append("- Inactive: featprof %+.2f%% over dry (target <= 0.5%%); sys/sdt.h %+.2f%%." % (
        r["featprof inactive"][5], r["sdt inactive"][5]))
    L.append("- Attach point chosen by featprofd: %s (%s)." % (at, cal["attach"]["why"]))
    L.append("- Active: featprof adds %.0f ns per event at its chosen point; an empty BPF "
             "program on the same link type at the same point (the floor) %.0f ns: %.2fx the "
             "floor (target <= 1.15x). At the other point: featprof %.0f ns, floor %.0f ns." % (
                 fa, floor, fa / floor, r["featprof active " + ("nop1" if at == "nop5" else
                                                                "nop5")][6],
                 r["floor " + ("nop1" if at == "nop5" else "nop5")][6]))
    if "bpftrace sum" in r:
        bs, bst = r["bpftrace sum"][6], r["bpftrace stream"][6]
        L.append("- bpftrace as its users get it (the note's nop1) computing the same "
                 "per-region sum: %.0f ns per event; bpftrace costs %.2fx featprof (target "
                 ">= 3x where the kernel optimizes the nop5 and it is cheaper)." % (bs, bs / fa))
        if at == "nop1" and cal["attach"].get("nop5_fork_crashes_child"):
            f5 = r["featprof active nop5"][6]
            L.append("- The nop5 is not the default here because this kernel crashes a child "
                     "forked after a site was optimized (docs/TRACING.md); with `--site nop5` "
                     "(targets that never fork) featprof adds %.0f ns per event and bpftrace "
                     "costs %.2fx featprof." % (f5, bs / f5))
        dl = [x.get("delivered_events", 0) for x in RES["bpftrace stream"]]
        L.append("- bpftrace streaming every event to user space: %.0f ns per event; it costs "
                 "%.2fx featprof (target >= 3x). Events delivered to user space per run: "
                 "%s of %d." % (bst, bst / fa, ", ".join(str(x) for x in dl), 2 * ITERS))
    L.append("- Static in-process tracer: %.0f ns per event." % r["static tracer"][6])
    ipa = r["in-process active"][6]
    L.append("- In-process timing (FEATPROF_INPROCESS, gates raised by featprofd): %.0f ns per "
             "event (target <= 30 ns); featprof's trap mode at its chosen point costs %.1fx "
             "that (target >= 15x where a trap costs ~0.5 us, >= 100x at ~5 us)%s; the static "
             "in-process tracer %.0f ns, in-process %.2fx it (target <= 1.5x). The same build "
             "with its gates down: %+.0f ns per event against the plain featprof build; traced "
             "by uprobes (`enable --trap`): %.0f ns per event." % (
                 ipa, fa / ipa if ipa > 0 else float("inf"),
                 ", bpftrace %.1fx" % (r["bpftrace sum"][6] / ipa) if "bpftrace sum" in r and
                 ipa > 0 else "", r["static tracer"][6], ipa / r["static tracer"][6],
                 r["in-process inactive"][6] - r["featprof inactive"][6],
                 r["in-process build, trapped"][6]))
    L.append("- A perf uprobe without a program (perf's sample work, not a floor): nop1 %.0f ns, "
             "nop5 %.0f ns per event." % (r["bare uprobe nop1"][6], r["bare uprobe nop5"][6]))
    L.append("")
    L.append("### Calibration across daemon starts\n")
    L.append("| start | attach point | nop1 pair (sd) | nop5 pair (sd) | bias at chosen (sd) |")
    L.append("|---|---|---|---|---|")
    for k, st in enumerate(cal["starts"]):
        ch = st["nop5"] if st["attach_point"] == "shielded-nop5" else st["nop1"]
        L.append("| %d | %s | %.0f (%.0f) ns | %.0f (%.0f) ns | %.0f (%.0f) ns |" % (
            k + 1, st["attach_point"], st["nop1"]["pair_ns"], st["nop1"].get("pair_sd_ns", 0),
            st["nop5"]["pair_ns"], st["nop5"].get("pair_sd_ns", 0), ch["bias_ns"],
            ch.get("bias_sd_ns", 0)))
    L.append("")
    if ir:
        L.append("### Instructions (callgrind), inactive\n")
        L.append("`valgrind --tool=callgrind BIN N 10` for N = 1000 and 2000; per iteration = "
                 "difference / 1000 (start-up cancels out).\n")
        L.append("| variant | instructions per iteration | beyond dry |")
        L.append("|---|---|---|")
        for v in ("dry", "sdt", "fp", "fp_nop1", "fp_sampling", "fp_gated", "fp_inproc"):
            L.append("| %s | %.1f | %+.1f |" % (v, ir[v], ir[v] - ir["dry"]))
        L.append("\nA featprof site is 4 instructions (nop, lea, nop5, lea), a sys/sdt.h site "
                 "1 (nop), a FEATPROF_SHAPE_NOP1 site 1: two sites per iteration. fp_sampling: "
                 "shielded sites built with FEATPROF_SAMPLING (the region stack kept in "
                 "TLS at every begin and end, sampled or not). fp_gated: built with "
                 "FEATPROF_SAMPLING_GATED (the stack kept only while a sampler raises the "
                 "gate; idle, a begin tests the gate, an end the depth and the gate). "
                 "fp_inproc: built with FEATPROF_INPROCESS, gates down (each site's nops, a "
                 "compare of its region's gate and a branch).\n")
        L.append("- Idle in-process site: %.1f instructions per site beyond the plain "
                 "featprof build's, the gated sampling build's %.1f (target: within it).\n" % (
                     (ir["fp_inproc"] - ir["fp"]) / 2, (ir["fp_gated"] - ir["fp"]) / 2))
    if hot:
        base = {r[0]: r[2] for r in hot}
        L.append("## Hot region: sampling against tracing\n")
        L.append("One region around a %d-step body, entered once per iteration "
                 "(`busyloop N %d`), built with FEATPROF_SAMPLING unless said; median of %d "
                 "interleaved rounds. Sampling: `featprof sample` (cpu-clock, one event per "
                 "thread). Overhead against the same build idle, and against dry.\n" % (
                     HOT_BODY, HOT_BODY, ROUNDS))
        L.append("| configuration | what | ns/iter | min-max | regions/s | over idle build "
                 "| over dry | per sample | samples |")
        L.append("|---|---|---|---|---|---|---|---|---|")
        idle = base["sampling build, idle"]
        for name, what, m, lo, hi, extra in hot:
            hz = int(name.split(" Hz")[0].split()[-1]) if " Hz" in name else 0
            # the loop's time per second of its CPU that each sample took
            per = "%.1f us" % ((m - idle) / idle / hz * 1e6) if hz else ""
            L.append("| %s | %s | %.2f | %.2f-%.2f | %.1f M | %+.2f%% | %+.2f%% | %s | %s |" % (
                name, what, m, lo, hi, 1e3 / m, (m - idle) / idle * 100,
                (m - base["dry"]) / base["dry"] * 100, per, extra))
        L.append("")
        o = {k: (base[k] - idle) / idle * 100 for k in base}
        L.append("At 997 Hz: a cpu-clock event with no program attached costs the loop "
                 "%+.2f%%, featprof sample %+.2f%% (its program %+.2f points beyond the "
                 "event), featprof sample --remote %+.2f%%. At 9973 Hz: %+.2f%%, %+.2f%%, "
                 "%+.2f%%. An interrupting sampler pays the interrupt, whatever its program; "
                 "--remote reads the stack from the daemon's CPU and the loop's thread is "
                 "not interrupted (on this 2-CPU machine the sampler thread runs on the "
                 "other CPU).\n" % (
                     o["cpu-clock event, 997 Hz"], o["sampled 997 Hz"],
                     o["sampled 997 Hz"] - o["cpu-clock event, 997 Hz"],
                     o["sampled 997 Hz, remote"], o["cpu-clock event, 9973 Hz"],
                     o["sampled 9973 Hz"], o["sampled 9973 Hz, remote"]))
    if minute:
        L.append("## A region at 10 M a second, timed in-process for a minute\n")
        L.append("`busyloop_fp_inproc N BODY [--carried]`, BODY sized to 100 ns per iteration "
                 "idle, N = 600 M; idle (gates down), then enabled (timed in the process). "
                 "Target: <= +50%, exact counts.\n")
        L.append("| iterations | body | idle ns/iter | regions/s | timed ns/iter | slowdown | "
                 "added per region | counted |")
        L.append("|---|---|---|---|---|---|---|---|")
        for m in minute:
            L.append("| %s | %d | %.1f | %.1f M | %.1f | %+.1f%% | %.1f ns | %d of %d |" % (
                "each after the previous (--carried)" if m["carried"] else
                "independent (overlapped while idle)", m["body"], m["idle"], 1e3 / m["idle"],
                m["timed"], (m["timed"] - m["idle"]) / m["idle"] * 100,
                m["timed"] - m["idle"], m["count"], m["n"]))
        L.append("\nThe runtime's clock read (rdtsc) keeps the CPU from starting the next "
                 "iteration's independent chain before it, which the idle loop does: there "
                 "the slowdown is the runtime's cost plus the overlap lost; where an "
                 "iteration waits for the previous one anyway (--carried), it is the "
                 "runtime's cost alone.\n")
    L.append("## Accuracy\n")
    L.append("Regions busy-wait to a clock deadline and measure their own time inside "
             "(`busyloop --truth NS [--nested]`); featprof default daemon (%s), compensation "
             "bias %.0f ns, pair %.0f ns. Error of the sums, raw / compensated.\n" % (
                 cal["attach"]["attach_point"], cal["calibration"]["bias_ns"],
                 cal["calibration"]["pair_ns"]))
    L.append("| region length | shape | instances | outer incl raw | outer incl | outer excl raw"
             " | outer excl | inner incl raw | inner incl |")
    L.append("|---|---|---|---|---|---|---|---|---|")
    for a in acc:
        def f(k):
            return "%+.2f%%" % a[k] if k in a else "-"
        L.append("| %s | %s | %d | %s | %s | %s | %s | %s | %s |" % (
            "%g us" % (a["len_ns"] / 1000), "nested" if a["nested"] else "flat", a["n"],
            f("outer_incl_raw"), f("outer_incl"), f("outer_excl_raw"), f("outer_excl"),
            f("inner_incl_raw"), f("inner_incl")))
    L.append("")
    L.append("## Throughput\n")
    L.append("Empty regions in a tight loop, traced (featprof default daemon):\n")
    for t, ev in thr:
        L.append("- %d thread(s): %.0f events/s" % (t, ev))
    L.append("\nAttach and enable time for 10 to 10,000 sites: docs/TRACING.md "
             "(`tests/bench/daemon_scale.sh`).\n")
    return "\n".join(L) + "\n"


if __name__ == "__main__":
    try:
        rc = main()
    finally:
        for d in DAEMONS:
            if d.p.poll() is None:
                d.p.kill()
    sys.exit(rc)
