#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What a timed in-process event costs beside its floor, one timestamp read (issue 47
part 1: within 2 ns of it). The read: `busyloop_tsc N 0 --reads`, rdtsc back to back.
Three builds of one loop (tests/bench/busyloop.c), the same body, run as whole processes
in interleaved triples, in turn which first:
  dry        no sites;
  tsc        each site one rdtsc, the end's minus the begin's summed (the floor: what any
             in-process timer does at least);
  fp_inproc  the FEATPROF_INPROCESS build, its region enabled through featprofd (timed in
             the process; the count checked exact).
Per triple: (fp_inproc - dry) / 2 and (tsc - dry) / 2 (a begin and an end an iteration), of
the loop threads' own CPU time per iteration (so 4 threads on fewer CPUs read the same);
event - read is the issue's figure; event - tsc the harder one (the loop's own rdtsc
overlaps the body's work, which the runtime's bookkeeping after it does less). Medians
and 95% sign-test intervals. Four loops: the tight loop (body 10 steps, ~3.5 ns) and the
10 M/s region (body sized to 100 ns an iteration idle), each on 1 and on 4 threads.
usage: inproc_event.py BUILD_DIR [--triples N] [--out FILE]   (make bench runs it: --out
puts its section, "## In-process events beside the timestamp read", into FILE)"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sections import sign_interval, write_section  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("build")
ap.add_argument("--triples", type=int, default=11)
ap.add_argument("--events", type=int, default=20000000, help="iterations a thread")
ap.add_argument("--out")
A = ap.parse_args()
B = os.path.abspath(A.build)
FP = B + "/featprof"
TMP = tempfile.mkdtemp(prefix="featprof-ipev-")
SOCK = os.path.join(TMP, "d.sock")
SECTION = "## In-process events beside the timestamp read\n"


def sh(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def loop(variant, n, body, threads):
    r = sh([B + "/bench/busyloop_" + variant, str(n), str(body), "--threads", str(threads)])
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["cpu_ns_per_iteration"]


def read_ns():
    r = sh([B + "/bench/busyloop_tsc", "20000000", "0", "--reads"])
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["ns_per_read"]


def timed(n, body, threads):
    """The FEATPROF_INPROCESS build with its region enabled: CPU ns an iteration."""
    p = subprocess.Popen([B + "/bench/busyloop_fp_inproc", str(n), str(body), "--threads",
                          str(threads), "--wait"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    pid = int(p.stdout.readline().split()[1])
    r = sh([FP, "--socket", SOCK, "enable", str(pid), "Busy"])
    assert "timed in the process" in r.stdout, r.stdout + r.stderr
    p.stdin.write("go\n")
    p.stdin.flush()
    out = json.loads(p.stdout.read().strip().splitlines()[-1])
    p.wait(600)
    st = json.loads(sh([FP, "--socket", SOCK, "stats", str(pid), "--json"]).stdout)
    sh([FP, "--socket", SOCK, "detach", str(pid)])
    reg = next(x for x in st["regions"] if x["name"] == "busy")
    assert reg["count"] == n * threads, (reg["count"], n * threads)
    return out["cpu_ns_per_iteration"]


def body_for(ns):
    """The body (steps) whose idle FEATPROF_INPROCESS loop takes ns an iteration."""
    body = 90
    for _ in range(3):
        got = loop("fp_inproc", 1000000, body, 1)
        body = max(1, int(round(body * ns / got)))
    return body


def measure(name, body, threads):
    n = max(A.events // threads, 1000)
    for v in ("dry", "tsc"):
        loop(v, n // 10, body, threads)     # the page cache warm
    ev, fl, diff, rd = [], [], [], []
    for i in range(A.triples):
        rd.append(read_ns())
        order = ["dry", "tsc", "ip"]
        order = order[i % 3:] + order[:i % 3]
        got = {v: timed(n, body, threads) if v == "ip" else loop(v, n, body, threads)
               for v in order}
        ev.append((got["ip"] - got["dry"]) / 2)
        fl.append((got["tsc"] - got["dry"]) / 2)
        diff.append((got["ip"] - got["tsc"]) / 2)
    lo, hi = sign_interval(diff)
    over = [e - r for e, r in zip(ev, rd)]
    rlo, rhi = sign_interval(over)
    row = (name, threads, statistics.median(rd), statistics.median(fl), statistics.median(ev),
           statistics.median(over), rlo, rhi, statistics.median(diff), lo, hi,
           statistics.median(ev) / statistics.median(rd))
    print("%s, %d thread(s): read %.2f ns, same-loop rdtsc %.2f ns, event %.2f ns; event - "
          "read %+.2f [%+.2f, %+.2f]; event - same-loop rdtsc %+.2f [%+.2f, %+.2f]; event / "
          "read %.2f" % row,
          flush=True)
    return row


def main():
    d = subprocess.Popen([B + "/featprofd", "--socket", SOCK, "-q"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            if os.path.exists(SOCK) and sh([FP, "--socket", SOCK, "status"]).returncode == 0:
                break
            time.sleep(0.05)
        hot = body_for(100.0)
        rows = [measure("tight loop (body 10)", 10, 1), measure("tight loop (body 10)", 10, 4),
                measure("10 M/s region (body %d)" % hot, hot, 1),
                measure("10 M/s region (body %d)" % hot, hot, 4)]
    finally:
        d.terminate()
        d.wait(30)
        shutil.rmtree(TMP, ignore_errors=True)
    L = [SECTION.rstrip("\n"), "",
         "`python3 tests/bench/inproc_event.py build` (in `make bench`), %s, %d CPUs: "
         "`busyloop_fp_inproc` with its region enabled through featprofd (timed in the "
         "process, counts checked exact) against `busyloop_tsc` (each site one rdtsc: the "
         "floor) and `busyloop_dry` (no sites), %d interleaved triples a row, %d "
         "iterations a run; CPU time of the loop's threads per iteration; per event: "
         "(build - dry) / 2; the read: `busyloop_tsc 20000000 0 --reads` (rdtsc back to "
         "back), once a triple. Target: event - read <= 2 ns. make bench's SimpleBusyLoop "
         "(3.2 us a body) cannot resolve 2 ns; the tight loop stands for it." % (
             time.strftime("%Y-%m-%d"), os.cpu_count(), A.triples, A.events), "",
         "| loop | threads | one read (ns) | same-loop rdtsc (ns) | in-process event (ns) "
         "| event - read (ns) [95%] | event - same-loop rdtsc (ns) [95%] | event / read |",
         "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        L.append("| %s | %d | %.2f | %.2f | %.2f | %+.2f [%+.2f, %+.2f] | %+.2f [%+.2f, %+.2f] "
                 "| %.2f |" % r)
    text = "\n".join(L) + "\n"
    print(text)
    if A.out:
        write_section(A.out, SECTION, text)


if __name__ == "__main__":
    main()
