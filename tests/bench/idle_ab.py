#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What an idle site costs a program built for in-process timing (issue 47 part 2: gates
down <= 1 ns an event over the plain build, shown by a paired, interleaved A/B whose
interval is under 1 ns): bench/busyloop_fp_inproc (FEATPROF_INPROCESS, nothing enabled:
its gates down) against bench/busyloop_fp (the plain featprof build), the same loop and
body, run as whole processes in pairs, in turn which first. Per pair: the difference of
the two runs' ns per iteration / 2 (two sites, a begin and an end, an iteration); the
median over pairs and its 95% interval (order statistics of the pairs' differences, a
sign-test interval). The dry build (no sites) is run in each pair too, as the floor. The
instructions (callgrind) beside them: tests/unit/idle_site.sh checks them in make check.
usage: idle_ab.py BUILD_DIR [--pairs N] [--iters N] [--out FILE]   (make bench runs it:
--out puts its section, "## Idle in-process sites", into FILE in place of an earlier one)"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sections import sign_interval, write_section  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("build")
ap.add_argument("--pairs", type=int, default=41)
ap.add_argument("--iters", type=int, default=20000000)   # ~90 ms a run here
ap.add_argument("--out")
A = ap.parse_args()
B = os.path.abspath(A.build)
BODY = 10
SECTION = "## Idle in-process sites\n"


def ns_per_iter(variant):
    r = subprocess.run([B + "/bench/busyloop_" + variant, str(A.iters), str(BODY)],
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout)["ns_per_iteration"]


def instructions():
    """tests/unit/idle_site.sh's line (callgrind), or why not."""
    r = subprocess.run(["tests/unit/idle_site.sh", B], capture_output=True, text=True,
                       cwd=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    return (r.stdout or r.stderr).strip().replace("idle_site: ", "")


def main():
    for v in ("fp", "fp_inproc", "dry"):    # warm the page cache
        ns_per_iter(v)
    diffs, plain, gated, dry = [], [], [], []
    for i in range(A.pairs):
        order = ("fp", "fp_inproc") if i % 2 == 0 else ("fp_inproc", "fp")
        got = {v: ns_per_iter(v) for v in order}
        got["dry"] = ns_per_iter("dry")
        diffs.append((got["fp_inproc"] - got["fp"]) / 2)
        plain.append(got["fp"])
        gated.append(got["fp_inproc"])
        dry.append(got["dry"])
    med = statistics.median(diffs)
    lo, hi = sign_interval(diffs)
    text = "\n".join([
        SECTION.rstrip("\n"), "",
        "`python3 tests/bench/idle_ab.py build` (in `make bench`), %s: `busyloop_fp_inproc "
        "%d %d` (FEATPROF_INPROCESS, nothing enabled: gates down) against `busyloop_fp` (the "
        "plain featprof build: nops only) and `busyloop_dry` (no sites), one process each, "
        "%d pairs, in turn which first; per pair the difference of ns per iteration / 2 "
        "(a begin and an end an iteration). The two builds are two binaries: their loops' "
        "code is laid out apart, which a difference this small also measures." % (
            time.strftime("%Y-%m-%d"), A.iters, BODY, A.pairs), "",
        "| figure | value |", "|---|---|",
        "| gates down over plain, per event (median of %d pairs) | %+.3f ns |" % (A.pairs, med),
        "| its 95%% interval (sign test) | %+.3f to %+.3f ns (width %.3f ns) |" % (
            lo, hi, hi - lo),
        "| ns per iteration: dry, plain, gates down (medians) | %.2f, %.2f, %.2f |" % (
            statistics.median(dry), statistics.median(plain), statistics.median(gated)),
        "| instructions (callgrind) | %s |" % instructions(), ""])
    print(text)
    if A.out:
        write_section(A.out, SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
