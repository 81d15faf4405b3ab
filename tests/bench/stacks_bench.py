#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What a call-stack sample costs (sample --stacks; issue 35 part 4), beside perf record
at the same rate on the same loop: tests/targets/stacks_sampled --chunks (one thread,
frame pointers, its region stack in TLS) runs windows of a fixed amount of work, and each
sampler is switched on and off between windows (featprofd's sample verb with on true or
false; perf record -D -1 --control through its fifos; a bare cpu-clock event by
tests/bench/event_cost.c), on and off in turn, ROUNDS windows each. This machine's speed
drifts by tens of % within minutes, far more than samples cost, so whole runs compared
with whole runs measure the drift; neighbouring windows do not. Per sample: the median
over rounds of (window sampled - window not) / the samples the window had (its unsampled
time x the rate); slowdown at 997 Hz: that cost x 997 a second. featprofd's own unwinding
(its CPU time, which the loop does not pay: it runs on the other CPU) and its resident
memory before and after the DWARF sessions (the unwind tables libdwfl keeps) are reported
apart; perf unwinds its dumps later, in perf report, not counted here.
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sections import write_section  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("build")
ap.add_argument("--rounds", type=int, default=31)
ap.add_argument("--iters", type=int, default=80)	# a window: ~0.1 s of work
ap.add_argument("--out")
A = ap.parse_args()
B = os.path.abspath(A.build)
TMP = tempfile.mkdtemp(prefix="featprof-stacks-bench-")
PROG = B + "/tests/targets/stacks_sampled"
US, HZ, HZ_COST = 1000, 997, 9973   # the cost per sample measured at ~10 kHz


def start(prefix=()):
    """stacks_sampled --chunks (under prefix): the process, its pid."""
    p = subprocess.Popen(list(prefix) + [PROG, str(US), "0", "1", "--chunks"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    line = p.stdout.readline()
    assert line.startswith("ready"), line
    return p, int(line.split()[1])


def window(p):
    """One window of A.iters iterations: its wall time in s."""
    p.stdin.write("%d\n" % A.iters)
    p.stdin.flush()
    return int(p.stdout.readline()) / 1e9


def pair(p, on, off, first):
    """Two windows of p, one sampled (after on()) and one not (after off()), the sampled
    first if first: (sampled s, unsampled s)."""
    w = {}
    for state in ((True, False) if first else (False, True)):
        (on if state else off)()
        w[state] = window(p)
    off()
    return w[True], w[False]


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


def bpf_progs():
    """The sampler's perf-event programs (named fp_sample, one per target object) as
    bpftool shows them with kernel.bpf_stats_enabled: {id: (run_time_ns, run_cnt)}."""
    r = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True)
    return {x["id"]: (x.get("run_time_ns", 0), x.get("run_cnt", 0))
            for x in json.loads(r.stdout or "[]") if x.get("name") == "fp_sample"}


def bpf_mean_ns(before, after):
    """The programs' mean run time between two bpf_progs() (one sampler on meanwhile)."""
    t = sum(v[0] - before.get(k, (0, 0))[0] for k, v in after.items())
    n = sum(v[1] - before.get(k, (0, 0))[1] for k, v in after.items())
    return t / n if n > 0 else 0


class Sampler:
    """A target process and how to switch its sampler: on(), off(), finish() (its
    figures, after the process is stopped)."""
    def __init__(self, p, on, off, finish=dict):
        self.p, self.on, self.off, self.finish = p, on, off, finish

    def end(self):
        self.p.stdin.close()
        self.p.wait(60)
        return self.finish()


def featprof(unwind):
    """featprof sample at HZ_COST, switched on and off through featprofd's sample verb (a
    session each time); the unwinding figures (the unwinder's totals: it lives as long as
    the target) read before each session ends."""
    def make(d):
        p, pid = start()
        args = dict(stacks=True, unwind=unwind) if unwind else {}
        extra = {"unwind_cpu_ns": 0, "copies_unwound": 0, "unwind_frames": 0,
                 "copies_by_rules": 0}
        copy = [0]
        live, bpf, snap = [False], [], [{}]

        def on():
            snap[0] = bpf_progs()
            d.call("sample", pid=pid, hz=HZ_COST, **args)
            live[0] = True

        def off():
            if live[0]:
                st = d.call("stats", pid=pid)["sampling"].get("stacks", {})
                for k in extra:     # the unwinder lives as long as the target: totals
                    extra[k] = st.get(k, 0)
                copy[0] = st.get("copy_bytes", 0)   # what a copy takes now
                bpf.append(bpf_mean_ns(snap[0], bpf_progs()))
            d.call("sample", pid=pid, on=False)
            live[0] = False

        def finish():
            d.call("detach", pid=pid)
            return dict(extra, bpf_ns=statistics.median(bpf) if bpf else 0,
                        copy_bytes=copy[0])
        return Sampler(p, on, off, finish)
    return make


def bare(inherit):
    """A cpu-clock event alone on the thread (tests/bench/event_cost.c: no program, no
    ring), inherited by new threads as featprofd's are, or not."""
    def make(_d):
        p, pid = start()
        ev = subprocess.Popen([B + "/bench/event_cost", str(pid), str(HZ_COST),
                               "inherit" if inherit else "noinherit"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

        def say(w):
            ev.stdin.write(w + "\n")
            ev.stdin.flush()
            assert ev.stdout.readline().strip() == "ok"

        def finish():
            ev.stdin.close()
            ev.wait(10)
            return {}
        return Sampler(p, lambda: say("on"), lambda: say("off"), finish)
    return make


def perf(mode):
    """perf record -e cpu-clock at a fixed period, started disabled (-D -1), switched
    through its control fifos."""
    def make(_d):
        data = os.path.join(TMP, "perf-%s.data" % mode)
        ctl, ack = os.path.join(TMP, "ctl-" + mode), os.path.join(TMP, "ack-" + mode)
        for f in (ctl, ack):
            os.mkfifo(f)
        p, _ = start(["perf", "record", "-q", "-e", "cpu-clock", "-c",
                      str(10**9 // HZ_COST), "--call-graph", mode, "-D", "-1",
                      "--control", "fifo:%s,%s" % (ctl, ack), "-o", data, "--"])
        cf, af = open(ctl, "w"), open(ack)

        def say(w):
            cf.write(w + "\n")
            cf.flush()
            assert af.readline().strip("\0\n ") == "ack"	# perf writes "ack\n\0"

        def finish():
            cf.close()
            af.close()
            return {"bytes": os.path.getsize(data)}
        return Sampler(p, lambda: say("enable"), lambda: say("disable"), finish)
    return make


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
    configs = [("a bare cpu-clock event, inherited", bare(True)),
               ("a bare cpu-clock event, not inherited", bare(False)),
               ("featprof, no stacks", featprof(None)),
               ("featprof --unwind fp", featprof("fp")),
               ("featprof --unwind dwarf", featprof("dwarf")),
               ("perf record -g", perf("fp")),
               ("perf record --call-graph dwarf", perf("dwarf"))]
    rss0 = d.rss_kib()
    samplers = [(name, make(d)) for name, make in configs]
    # per round, a pair of windows for each sampler in turn: the machine's drift over a
    # round is what each comparison between them sees
    cost = {name: [] for name, _ in configs}
    unsampled = []
    for r in range(A.rounds):
        for name, smp in samplers:
            on, off = pair(smp.p, smp.on, smp.off, r % 2)
            cost[name].append((on - off) / (off * HZ_COST))
            unsampled.append(off)
        print("round %d: %s" % (r + 1, ", ".join("%.1f" % (1e6 * cost[n][-1])
                                                 for n, _ in configs)), flush=True)
    extra = {name: smp.end() for name, smp in samplers}
    rss1 = d.rss_kib()
    d.stop()
    base = cost["a bare cpu-clock event, inherited"]
    med = {name: statistics.median(cost[name]) for name, _ in configs}
    L = ["## Call stacks\n",
         "`sudo python3 tests/bench/stacks_bench.py build` (in `make bench`), %s: "
         "tests/targets/stacks_sampled --chunks (one thread, frame pointers, its region stack "
         "in TLS), one process per sampler below, each running windows of %d iterations "
         "(median %.3f s unsampled). Each sampler, at %d Hz on the thread's CPU clock, is "
         "switched on and off between its process's windows, in turn which first; a round "
         "is a pair of windows of each sampler, %d rounds. Per sample: the median over rounds "
         "of (sampled window - unsampled window) / (unsampled window x %d), what the loop "
         "pays (featprofd and perf run on the other CPU); above the bare event: the median "
         "over rounds of that less the same round's figure of a bare cpu-clock event "
         "(tests/bench/event_cost.c: no program, no ring), which is what the timer costs "
         "every sampler on this machine; slowdown at %d Hz: per sample x %d a second. BPF: "
         "the sampler program's own mean run time (kernel.bpf_stats_enabled) in the "
         "sampled windows. Runs compared with runs (this bench before) measured this "
         "machine's drift (tens of %% within minutes), not the samples: they put perf at "
         "-7 us a sample and an inherited event 13 us above a non-inherited one, which "
         "these windows do not find.\n"
         % (time.strftime("%Y-%m-%d"), A.iters, statistics.median(unsampled), HZ_COST,
            A.rounds, HZ_COST, HZ, HZ),
         "| configuration | per sample | above the bare event | of it, BPF | "
         "slowdown at %d Hz |" % HZ, "|---|---|---|---|---|"]
    def above_of(name):
        return statistics.median(c - b for c, b in zip(cost[name], base))
    for name, _ in configs:
        bpf = extra[name].get("bpf_ns", 0) / 1e3
        above = above_of(name)
        L.append("| %s | %.1f us | %s | %s | %.2f%% |" % (
            name, 1e6 * med[name], "-" if cost[name] is base else "%+.1f us" % (1e6 * above),
            "%.1f us" % bpf if bpf else "-", 100 * med[name] * HZ))
    dw = extra["featprof --unwind dwarf"]
    copies = max(1, dw["copies_unwound"])
    pd = extra["perf record --call-graph dwarf"]
    L += ["", "- featprofd's unwinding (`--unwind dwarf`: the CFI's rules kept by address, "
          "libdwfl for the copies they do not cover, %d of %d here): %.1f us of its CPU a copy, "
          "%.1f frames a copy: %.1f ms of its CPU a second at %d Hz on one thread (it "
          "scales with the threads sampled and the rate: 8 threads at %d Hz, computed from "
          "this per-copy cost, %.1f%% of one CPU; the issue's bound 3%%); featprofd's resident "
          "memory %d KiB before the sessions, %d KiB after (the objects' CFI libdwfl keeps, "
          "and the named stacks)." % (
              copies - dw["copies_by_rules"], copies,
              dw["unwind_cpu_ns"] / 1e3 / copies, dw["unwind_frames"] / copies,
              dw["unwind_cpu_ns"] / 1e3 / copies * HZ / 1e3, HZ, HZ,
              100 * dw["unwind_cpu_ns"] / 1e9 / copies * HZ * 8, rss0, rss1),
          "- perf record --call-graph dwarf wrote %.1f MB in its %d windows, unwound later "
          "by perf report (not counted here); featprof keeps only the named stacks. A "
          "featprof copy took %d bytes of the stack at the end (what its unwinds use, "
          "doubled: daemon/stacks/dwarf.c), perf's 8192." % (
              pd["bytes"] / 1e6, A.rounds, dw.get("copy_bytes", 0)),
          "- The issue's targets (a sample <= 5 us with frame pointers, <= 20 us with a stack "
          "copy; the loop's slowdown at %d Hz <= 2%% and <= 5%%): what featprof adds to the "
          "timer's sample is %.1f us with frame pointers and %.1f us with the copy; with "
          "the timer, %.1f and %.1f us, %.2f%% and %.2f%% at %d Hz, of which the bare "
          "event alone is %.2f%%: on this machine (a KVM guest) a timer sample costs every "
          "sampler ~%.0f us, perf record -g %.1f us in all." % (
              HZ, 1e6 * above_of("featprof --unwind fp"),
              1e6 * above_of("featprof --unwind dwarf"), 1e6 * med["featprof --unwind fp"],
              1e6 * med["featprof --unwind dwarf"], 100 * med["featprof --unwind fp"] * HZ,
              100 * med["featprof --unwind dwarf"] * HZ, HZ, 100 * statistics.median(base) * HZ,
              1e6 * statistics.median(base), 1e6 * med["perf record -g"]), ""]
    text = "\n".join(L)
    print("\n" + text)
    if A.out:
        write_section(A.out, "## Call stacks\n", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
