#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What a call-stack sample costs (sample --stacks; issue 35 part 4), beside perf record
at the same rate on the same loop: tests/targets/stacks_sampled (one thread, frame
pointers, its region stack in TLS) computing for a fixed amount of work, its wall time
from "go" to its end, with no sampling, featprof sample --stacks --unwind fp and --unwind
dwarf, perf record -e cpu-clock -F 997 -g (frame pointers) and --call-graph dwarf (8 KiB
stack dumps, perf's default, as featprof's copies). Rounds interleaved; medians. Per
sample: (wall - unsampled wall) / samples; slowdown: wall / unsampled - 1. featprofd's
own unwinding (its CPU time, which the loop does not pay: it runs on the other CPU) and
its resident memory before and after the DWARF sessions (the unwind tables libdwfl keeps)
are reported apart; perf unwinds its dumps later, in perf report, not counted here.
usage: stacks_bench.py BUILD_DIR [--rounds N] [--iters N] [--out FILE]   (root; make bench
runs it: --out puts its section, "## Call stacks", into FILE in place of an earlier one)"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ap = argparse.ArgumentParser()
ap.add_argument("build")
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--iters", type=int, default=4000)
ap.add_argument("--out")
A = ap.parse_args()
B = os.path.abspath(A.build)
TMP = tempfile.mkdtemp(prefix="featprof-stacks-bench-")
PROG = B + "/tests/targets/stacks_sampled"
US, HZ, HZ_COST = 1000, 997, 9973   # the cost per sample measured at ~10 kHz


def start(prefix=()):
    p = subprocess.Popen(list(prefix) + [PROG, str(US), str(A.iters), "1", "--wait"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    assert line.startswith("ready"), line
    return p, int(line.split()[1])


def go(p, during=None):
    """Lets p work (calling during() 2 s in); its wall time (s) from go to its result."""
    t0 = time.monotonic()
    p.stdin.write("go\n")
    p.stdin.flush()
    if during:
        time.sleep(2)
        during()
    p.stdout.readline()
    wall = time.monotonic() - t0
    p.stdin.close()
    return wall


class Daemon:
    def __init__(self):
        self.sock = os.path.join(TMP, "d.sock")
        self.p = subprocess.Popen([B + "/featprofd", "--socket", self.sock, "-q"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(600):
            if os.path.exists(self.sock):
                return
            time.sleep(0.05)
        raise RuntimeError("featprofd did not start")

    def call(self, verb, **args):
        import socket
        s = socket.socket(socket.AF_UNIX)
        s.connect(self.sock)
        f = s.makefile("rwb")
        f.write((json.dumps(dict(args, id=1, verb=verb)) + "\n").encode())
        f.flush()
        r = json.loads(f.readline())
        s.close()
        assert "result" in r, r
        return r["result"]

    def rss_kib(self):
        with open("/proc/%d/status" % self.p.pid) as f:
            return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        self.p.wait(30)


def none(_d):
    p, _ = start()
    wall = go(p)
    p.wait(60)
    return wall, 0, {}


def bpf_run_ns():
    """The sampler's perf-event program's mean run time (kernel.bpf_stats_enabled): the
    one named fp_sample that ran the most, as bpftool shows it."""
    r = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True)
    progs = [x for x in json.loads(r.stdout or "[]") if x.get("name") == "fp_sample" and
             x.get("run_cnt")]
    best = max(progs, key=lambda x: x["run_cnt"], default=None)
    return best["run_time_ns"] / best["run_cnt"] if best else 0


def featprof(unwind):
    def run(d):
        p, pid = start()
        if unwind:
            d.call("sample", pid=pid, hz=HZ_COST, stacks=True, unwind=unwind)
        else:
            d.call("sample", pid=pid, hz=HZ_COST)
        bpf = []
        wall = go(p, lambda: bpf.append(bpf_run_ns()))
        p.wait(60)
        st = d.call("stats", pid=pid)	# its exit stopped the sampling
        sm = st["sampling"]
        sm.setdefault("stacks", {})["bpf_ns"] = bpf[0] if bpf else 0
        d.call("detach", pid=pid)
        return wall, sm["samples"], sm["stacks"]
    return run


def bare(inherit):
    """A cpu-clock event alone on the thread (tests/bench/event_cost.c: no program, no
    ring), inherited by new threads as featprofd's are, or not."""
    def run(_d):
        p, pid = start()
        ev = subprocess.Popen([B + "/bench/event_cost", str(pid), str(HZ_COST), "120",
                               "inherit" if inherit else "noinherit"])
        time.sleep(0.3)
        wall = go(p)
        p.wait(60)
        ev.kill()
        ev.wait()
        return wall, int(wall * HZ_COST), {}
    return run


def perf(mode):
    def run(_d):
        data = os.path.join(TMP, "perf.data")
        p, _ = start(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(HZ_COST),
                      "--call-graph", mode, "-o", data, "--"])
        wall = go(p)
        p.wait(120)
        rep = subprocess.run(["perf", "report", "-D", "-i", data], capture_output=True,
                             text=True, errors="replace")
        n = sum(1 for l in rep.stdout.splitlines() if "PERF_RECORD_SAMPLE" in l)
        return wall, n, {"bytes": os.path.getsize(data)}
    return run


def main():
    if os.geteuid() != 0:
        print("SKIP: benchmarks need root")
        return 77
    stats_was = open("/proc/sys/kernel/bpf_stats_enabled").read().strip()
    open("/proc/sys/kernel/bpf_stats_enabled", "w").write("1")
    try:
        return measure()
    finally:
        open("/proc/sys/kernel/bpf_stats_enabled", "w").write(stats_was)


def measure():
    d = Daemon()
    configs = [("no sampling", none), ("featprof, no stacks", featprof(None)),
               ("featprof --unwind fp", featprof("fp")),
               ("featprof --unwind dwarf", featprof("dwarf")),
               ("perf record -g", perf("fp")), ("perf record --call-graph dwarf",
                                                perf("dwarf")),
               ("a bare cpu-clock event, inherited", bare(True)),
               ("a bare cpu-clock event, not inherited", bare(False))]
    res = {name: [] for name, _ in configs}
    rss0 = d.rss_kib()
    for rnd in range(A.rounds):
        for name, fn in configs:
            wall, n, extra = fn(d)
            res[name].append((wall, n, extra))
            print("round %d  %-32s %7.3f s  %6d samples" % (rnd + 1, name, wall, n),
                  flush=True)
    rss1 = d.rss_kib()
    d.stop()
    base = statistics.median(w for w, _, _ in res["no sampling"])
    L = ["## Call stacks\n",
         "`sudo python3 tests/bench/stacks_bench.py build` (in `make bench`), %s: "
         "tests/targets/stacks_sampled (one thread, frame pointers, its region stack in TLS) "
         "doing a fixed amount of work, its wall time with each sampler on its thread's CPU "
         "clock, %d rounds interleaved, medians. The cost of a sample is measured at %d Hz, "
         "where it is well above this machine's noise (a few %% of wall time between runs): "
         "(wall - unsampled wall) / samples, what the loop pays (featprofd and perf run on "
         "the other CPU); the slowdown at %d Hz is that cost x %d a second. BPF: the "
         "sampler program's own mean run time (kernel.bpf_stats_enabled), part of the "
         "former; the bare events: tests/bench/event_cost.c, a cpu-clock event alone on "
         "the thread, inherited by its new threads as featprofd's are, or not.\n"
         % (time.strftime("%Y-%m-%d"), A.rounds, HZ_COST, HZ, HZ),
         "| configuration | wall | samples | per sample | of it, BPF | slowdown at %d Hz |"
         % HZ, "|---|---|---|---|---|---|"]
    for name, _ in configs:
        wall = statistics.median(w for w, _, _ in res[name])
        n = statistics.median(x for _, x, _ in res[name])
        per = (wall - base) / n if n else 0
        bpf = statistics.median(x.get("bpf_ns", 0) for _, _, x in res[name]) / 1e3
        L.append("| %s | %.3f s | %d | %s | %s | %s |" % (
            name, wall, n, "%.1f us" % (1e6 * per) if n else "-",
            "%.1f us" % bpf if bpf else "-", "%.2f%%" % (100 * per * HZ) if n else "-"))
    dw = [x for _, _, x in res["featprof --unwind dwarf"]]
    cpu = sum(x["unwind_cpu_ns"] for x in dw)
    copies = sum(x["copies_unwound"] for x in dw)
    walls = sum(w for w, _, _ in res["featprof --unwind dwarf"])
    pd = [x for _, _, x in res["perf record --call-graph dwarf"]]
    L += ["", "- featprofd's unwinding (`--unwind dwarf`, libdwfl): %.1f us of its CPU a copy, "
          "%.1f frames a copy: %.1f ms of its CPU a second at %d Hz on one thread (it "
          "scales with the threads sampled and the rate); its resident memory %d KiB before the "
          "sessions, %d KiB after (the objects' CFI libdwfl keeps, and the named stacks)." % (
              cpu / 1e3 / max(1, copies), sum(x["unwind_frames"] for x in dw) / max(1, copies),
              cpu / 1e6 / max(1e-9, walls) * HZ / HZ_COST, HZ, rss0, rss1),
          "- perf record --call-graph dwarf wrote %.1f MB a run, unwound later by perf "
          "report (not counted here); featprof keeps only the named stacks." % (
              statistics.median(x["bytes"] for x in pd) / 1e6), ""]
    text = "\n".join(L)
    print("\n" + text)
    if A.out:
        doc = open(A.out).read() if os.path.exists(A.out) else ""
        head, _, rest = doc.partition("## Call stacks\n")
        tail = rest[rest.index("\n## ") + 1:] if "\n## " in rest else ""
        doc = head.rstrip("\n") + "\n\n" + text + ("\n" + tail if tail else "")
        open(A.out, "w").write(doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
