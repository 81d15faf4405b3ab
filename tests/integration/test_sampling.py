#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Integration tests: the real featprofd (real BPF) on a temporary socket, real
instrumented targets, figures checked through the real CLI and the protocol:
featprof sample (a thread's cpu-clock events, --remote, the gated stack) against
tracing. Needs root. usage: test_sampling.py BUILD_DIR [TEST...]"""
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import B, TMP, Client, check, cli, discover, run_file  # noqa: E402


def proc_cpu_ns(pid):
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) * 1e9 / os.sysconf("SC_CLK_TCK")


def t_sample(d):
    """featprof sample: at 997 Hz, per-feature and per-region sampled CPU time agree with
    traced CPU time within 2 points of the thread's samples and 3 standard errors, also
    for a region whose code is not contiguous (store ends in another function); a build
    without FEATPROF_SAMPLING gets one line."""
    p = subprocess.Popen([B + "/tests/targets/regress_sampled"], stdout=subprocess.PIPE)
    q = subprocess.Popen([B + "/tests/targets/regress"], stdout=subprocess.PIPE)
    try:
        p.stdout.readline()
        q.stdout.readline()
        c = Client(d)
        check("result" in c.call("enable", pid=p.pid, all=True), "enable")
        time.sleep(0.5)
        r = c.call("sample", pid=p.pid, hz=997)
        check("result" in r, "sample on: %s" % r)
        c.call("reset", pid=p.pid)
        c0 = proc_cpu_ns(p.pid)
        time.sleep(5)
        st = c.call("stats", pid=p.pid)["result"]
        c1 = proc_cpu_ns(p.pid)
        c.call("sample", pid=p.pid, hz=997, on=False)
        sm = st["sampling"]
        n, period = sm["samples"], sm["period_ns"]
        an = sm["anomalies"]
        print("    %d samples at %d Hz (the process ran %.2f s of CPU: %.0f periods); "
              "anomalies %s" % (n, sm["hz"], (c1 - c0) / 1e9, (c1 - c0) / period, an))
        # one sample per period of the threads' CPU time (per-thread events); /proc's
        # clock ticks are 10 ms, and the two windows differ by a call or two
        check(abs(n * period - (c1 - c0)) <= 0.05 * (c1 - c0) + 0.05e9 and
              not any(an.values()), "one sample per period of CPU time, no anomaly")
        for kind in ("features", "regions"):
            for x in st[kind]:
                if x.get("measured") != "traced+sampled":
                    continue
                diff = x["sampled_ns"] - x["cpu_ns"]
                pts = 100 * abs(diff) / (n * period)
                print("    %-8s %-8s sampled %8.1f ms ± %5.1f, traced CPU %8.1f ms: %+.2f "
                      "points, %.1f SE" % (kind[:-1], x["name"], x["sampled_ns"] / 1e6,
                                          x["sampled_stderr_ns"] / 1e6, x["cpu_ns"] / 1e6,
                                          100 * diff / (n * period),
                                          abs(diff) / max(x["sampled_stderr_ns"], 1)))
                check(pts <= 2 and abs(diff) <= 3 * x["sampled_stderr_ns"] + 0.01 * x["cpu_ns"],
                      "%s %s: sampled agrees with traced" % (kind[:-1], x["name"]))
        # the sampler's stacks in the exports: folded and pprof (go tool pprof) agree
        sm = c.call("stats", pid=p.pid)["result"]["sampling"]  # stopped: fixed now
        want = sum(int(x["sampled_ns"]) for x in sm["paths"])
        r = cli(d, "export", p.pid, "--format", "folded", "--value", "sampled")
        got = sum(int(l.rsplit(" ", 1)[1]) for l in r.stdout.splitlines() if l)
        check(r.returncode == 0 and "execute;scan " in r.stdout and got == want,
              "folded --value sampled: %d vs %d" % (got, want))
        prof = os.path.join(TMP, "sampled.pb.gz")
        r = cli(d, "export", p.pid, "--format", "pprof", "-o", prof)
        top = subprocess.run(["go", "tool", "pprof", "-top", "-unit=ns",
                              "-sample_index=sampled_cpu", prof], capture_output=True,
                             text=True, timeout=120)
        m = [l for l in top.stdout.splitlines() if "% of " in l and " total" in l]
        got = int(m[0].split("% of ")[1].split()[0].rstrip("ns")) if m else -1
        print("    go tool pprof -sample_index=sampled_cpu: total %d ns, sampled paths %d ns"
              % (got, want))
        check(abs(got - want) <= len(sm["paths"]), "pprof sampled_cpu total")
        html = os.path.join(TMP, "sampled.html")
        r = cli(d, "report", p.pid, "-o", html)
        check(r.returncode == 0 and open(html).read().count("sampled CPU") == len(st["features"]),
              "the report shows the sampled CPU of every feature")
        r = cli(d, "sample", q.pid, "--duration", "1")
        check(r.returncode == 1 and "FEATPROF_SAMPLING" in r.stderr and
              len(r.stderr.strip().splitlines()) == 1, "no TLS symbol: %r" % r.stderr.strip())
        # a build whose TLS ABI note says version 2: refused before anything is read
        src = os.path.join(TMP, "abi2.c")
        with open(src, "w") as f:
            f.write('#include "featprof.h"\n#include <unistd.h>\n'
                    '__thread struct featprof_tls featprof_tls;\n'
                    '__asm__(".pushsection .note.featprof,\\"a\\",\\"note\\"\\n.balign 4\\n'
                    '.4byte 9,12,2\\n.asciz \\"featprof\\"\\n.balign 4\\n'
                    '.4byte 3,16,0x33545046\\n.popsection\\n");\n'
                    'int main(void) { for (;;) { FP_BEGIN(r, "F"); FP_END(r); usleep(1000); } }\n')
        exe = os.path.join(TMP, "abi2")
        subprocess.run(["cc", "-O2", "-Iusdt", src, "-o", exe], check=True)
        v2 = subprocess.Popen([exe])
        try:
            time.sleep(0.2)
            r = cli(d, "sample", v2.pid, "--duration", "1")
            check(r.returncode == 1 and "ABI version 3" in r.stderr and
                  len(r.stderr.strip().splitlines()) == 1, "TLS ABI 3 refused: %r"
                  % r.stderr.strip())
        finally:
            v2.kill()
            v2.wait()
        r = c.call("sample", pid=p.pid, hz=0)
        check(r.get("error", {}).get("code") == "bad_request", "hz 0 refused")
        c.close()
    finally:
        for x in (p, q):
            x.kill()
            x.wait()


def t_sample_window(d):
    """featprof sample's traced column is over the sampled window (issue 46, part 5): with
    regions traced 3 s before a 2 s sample, each traced region's window_cpu_ns agrees with
    its sampled time (3 SE and 2 points of the samples) where its cpu_ns since enable is
    about 2.5 times larger; the table shows the window's figure"""
    p = subprocess.Popen([B + "/tests/targets/regress_sampled"], stdout=subprocess.PIPE)
    try:
        p.stdout.readline()
        check(cli(d, "enable", p.pid, "--all").returncode == 0, "enable")
        time.sleep(3)
        r = cli(d, "sample", p.pid, "--duration", "2", "--json", timeout=60)
        t = cli(d, "sample", p.pid, "--duration", "2", timeout=60).stdout
    finally:
        p.kill()
        p.wait()
    check(r.returncode == 0, "sample: %s" % r.stderr.strip())
    st = json.loads(r.stdout)
    sm = st["sampling"]
    total = sm["samples"] * sm["period_ns"]
    n = 0
    for x in st["regions"]:
        if x.get("measured") != "traced+sampled" or x["sampled_ns"] < 0.05 * total:
            continue
        n += 1
        w, diff = x["window_cpu_ns"], x["sampled_ns"] - x["window_cpu_ns"]
        print("    %-8s sampled %7.1f ms ± %4.1f, traced over the window %7.1f ms, since "
              "enable %7.1f ms" % (x["name"], x["sampled_ns"] / 1e6,
                                   x["sampled_stderr_ns"] / 1e6, w / 1e6, x["cpu_ns"] / 1e6))
        check(abs(diff) <= 3 * x["sampled_stderr_ns"] + 0.02 * total,
              "%s: the window's traced time agrees with the sampled" % x["name"])
        check(x["cpu_ns"] > 1.8 * w, "%s: since enable is the longer time" % x["name"])
        row = [l for l in t.splitlines() if l.startswith("region ") and " %s " % x["name"] in l]
        check(row and float(row[0].split()[-1]) < 0.6 * x["cpu_ns"] / 1e6,
              "%s: the table's traced column is the window's: %s" % (x["name"], row))
    check(n >= 2, "regions traced and sampled: %d" % n)


def t_sample_remote(d):
    """featprof sample --remote: the sampler thread reads the running threads' stacks from
    its own CPU; sampled agrees with traced as with cpu-clock (the region whose code is
    not contiguous included); ticks are reported; bad 'remote' refused."""
    p = subprocess.Popen([B + "/tests/targets/regress_sampled"], stdout=subprocess.PIPE)
    try:
        p.stdout.readline()
        c = Client(d)
        check("result" in c.call("enable", pid=p.pid, all=True), "enable")
        r = c.call("sample", pid=p.pid, hz=997, remote="yes")
        check(r.get("error", {}).get("code") == "bad_request", "remote must be a boolean")
        time.sleep(0.5)
        r = c.call("sample", pid=p.pid, hz=997, remote=True)
        check(r.get("result", {}).get("clock") == "remote", "sample --remote on: %s" % r)
        c.call("reset", pid=p.pid)
        c0 = proc_cpu_ns(p.pid)
        time.sleep(5)
        st = c.call("stats", pid=p.pid)["result"]
        c1 = proc_cpu_ns(p.pid)
        c.call("sample", pid=p.pid, on=False)
        sm = st["sampling"]
        n, period = sm["samples"], sm["period_ns"]
        print("    remote: %d samples, %d ticks (%d passed over) at %d Hz, sampler realtime "
              "%s; the process ran %.2f s of CPU in %.2f s; anomalies %s" % (
                  n, sm["ticks"], sm["ticks_missed"], sm["hz"], sm["sampler_realtime"],
                  (c1 - c0) / 1e9, sm["duration_ns"] / 1e9, sm["anomalies"]))
        check(sm["clock"] == "remote" and not any(sm["anomalies"].values()),
              "clock remote, no anomaly")
        # a sample per tick that finds the (single, busy) thread running: samples x
        # period is its CPU time, within what passed-over ticks and /proc's 10 ms allow
        check(abs(n * period - (c1 - c0)) <= 0.1 * (c1 - c0) + 0.05e9 +
              sm["ticks_missed"] * period, "samples x period = CPU time")
        for kind in ("features", "regions"):
            for x in st[kind]:
                if x.get("measured") != "traced+sampled":
                    continue
                diff = x["sampled_ns"] - x["cpu_ns"]
                print("    %-8s %-8s sampled %8.1f ms ± %5.1f, traced CPU %8.1f ms: %+.2f "
                      "points, %.1f SE" % (kind[:-1], x["name"], x["sampled_ns"] / 1e6,
                                          x["sampled_stderr_ns"] / 1e6, x["cpu_ns"] / 1e6,
                                          100 * diff / (n * period),
                                          abs(diff) / max(x["sampled_stderr_ns"], 1)))
                check(100 * abs(diff) / (n * period) <= 2 and
                      abs(diff) <= 3 * x["sampled_stderr_ns"] + 0.01 * x["cpu_ns"],
                      "%s %s: sampled agrees with traced" % (kind[:-1], x["name"]))
        r = cli(d, "sample", p.pid, "--duration", "1", "--remote")
        check(r.returncode == 0 and "(remote, " in r.stdout and " ticks, " in r.stdout,
              "featprof sample --remote: %r" % r.stdout[:200])
        c.close()
    finally:
        p.kill()
        p.wait()


def t_sample_gated(d):
    """FEATPROF_SAMPLING_GATED: the gate is up only while sampled (the program sees it),
    the stack drains after; a region open when sampling began is not in the stack and its
    end is counted; the always build has it. Inner's sampled share agrees with tracing."""
    for exe, gated in (("gated", True), ("gated_always", False)):
        p = subprocess.Popen([B + "/tests/targets/" + exe], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
        try:
            check(p.stdout.readline().strip() == "ready", "%s started" % exe)

            def gate():
                p.stdin.write("gate\n")
                p.stdin.flush()
                return tuple(int(x) for x in p.stdout.readline().split()[1::2])

            c = Client(d)
            before = gate()
            check("result" in c.call("enable", pid=p.pid, all=True), "enable")
            r = c.call("sample", pid=p.pid, hz=997)
            check("result" in r, "sample on: %s" % r)
            # the traced figures count from the enable, the sampled ones from the start of
            # sampling (its object's load took 90 ms of a 3 s window on a loaded machine:
            # traced 103% against sampled 100%): one reset starts both again together
            check("result" in c.call("reset", pid=p.pid), "reset")
            time.sleep(2)
            during = gate()
            os.kill(p.pid, signal.SIGUSR1)
            check(p.stdout.readline().strip() == "ended", "outer ended")
            time.sleep(1)
            st = c.call("stats", pid=p.pid)["result"]
            c.call("sample", pid=p.pid, hz=997, on=False)
            after = gate()
            sm = st["sampling"]
            n, an = sm["samples"], sm["anomalies"]
            reg = {x["name"]: x for x in sm["regions"]}
            inner = [x for x in st["regions"] if x["name"] == "inner"][0]
            tr_share = inner["cpu_ns"] / (n * sm["period_ns"])
            print("    %s: stack %s; gate,depth before %s, while sampled %s, after %s; %d "
                  "samples: inner %.1f%% (traced %.1f%%), outer %.1f%%; unmatched ends %d" %
                  (exe, sm["stack"], before, during, after, n, 100 * reg["inner"]["share"],
                   100 * tr_share, 100 * reg["outer"]["share"], an["unmatched_ends"]),
                  flush=True)
            check(sm["stack"] == ("gated" if gated else "always"), "stack mode")
            check(abs(reg["inner"]["share"] - tr_share) <= 0.02 + 3 * reg["inner"]["sampled_stderr_ns"]
                  / (n * sm["period_ns"]), "inner: sampled share agrees with traced")
            if gated:
                check(before == (0, 0) and during[0] == 1 and after[0] == 0,
                      "the gate is up only while sampled: %s %s %s" % (before, during, after))
                check(reg["outer"]["samples"] == 0, "outer, open before the gate rose, is "
                      "not in the stack: %d samples" % reg["outer"]["samples"])
                # outer's end, and an inner open at the moment the gate rose
                check(1 <= an["unmatched_ends"] <= 2, "unmatched ends %d" % an["unmatched_ends"])
            else:
                check(before == (0, 1) and after == (0, 0), "the always build's stack: outer "
                      "open from the start")
                check(reg["outer"]["samples"] > 0.5 * n, "outer sampled while open")
                check(an["unmatched_ends"] == 0, "no unmatched end")
            c.close()
        finally:
            p.kill()
            p.wait()


TESTS = discover(globals())


def main():
    # FP_TEST_SITE=nop1|nop5 runs the suite at one attach point (default: the daemon's
    # choice by measurement)
    site = os.environ.get("FP_TEST_SITE")
    # every test here holds sampled figures to compensated traced times (within 3 SE, a
    # dozen figures a test): timing checks, measured again after a fresh calibration
    # where they fail (harness.py RETRIES; a clean-clone run once had log and store 6 and
    # 5 SE apart, then 0.1 and 0.3 in the next five runs)
    return run_file("sampling", TESTS, set(TESTS), ["--site", site] if site else [])


if __name__ == "__main__":
    sys.exit(main())
