#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What `featprof run --stacks` costs over `featprof run` (issue 44 part 1: <= 3% at 997 Hz):
tests/targets/funcmodel (every option on, one thread, no frame pointers: DWARF stacks)
run under both in pairs, in turn which first, each run's CPU time as the run file gives it
(the program's own, from its exit: run.cpu_ns). This machine's speed drifts by tens of %
within minutes, so a pair's two runs, seconds apart, are compared, not the two sets: per
pair the ratio --stacks / plain; the median over pairs and its 95% interval (order
statistics of the pairs' ratios, a sign-test interval: no assumption on their spread).
The samples taken per run are said too: (run time x 997) is what the rate asks for.
usage: run_stacks_cost.py BUILD_DIR [--pairs N] [--unit N] [--out FILE]   (root; make bench
runs it: --out puts its section, "## run --stacks", into FILE in place of an earlier one)"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sections import sign_interval, write_section  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("build")
ap.add_argument("--pairs", type=int, default=21)
ap.add_argument("--unit", type=int, default=2000000)     # a run: ~0.4 s of CPU here
ap.add_argument("--out")
A = ap.parse_args()
B = os.path.abspath(A.build)
TMP = tempfile.mkdtemp(prefix="featprof-run-stacks-")
SOCK = os.path.join(TMP, "d.sock")
HZ = 997
PROG = [B + "/tests/targets/funcmodel", "Compress=1,Checksum=1,Window=1,Verbose=1",
        str(A.unit)]
SECTION = "## run --stacks\n"


def one(stacks):
    """One featprof run of PROG (with --stacks at HZ if stacks): (CPU s, samples)."""
    out = os.path.join(TMP, "r.json")
    cmd = [B + "/featprof", "--socket", SOCK, "run", "-o", out]
    cmd += ["--stacks", "--hz", str(HZ)] if stacks else []
    subprocess.run(cmd + ["--"] + PROG, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    doc = json.load(open(out))
    return doc["run"]["cpu_ns"] / 1e9, (doc.get("sampling") or {}).get("samples", 0)


def main():
    d = subprocess.Popen([B + "/featprofd", "--socket", SOCK, "-q"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            if os.path.exists(SOCK):
                break
            time.sleep(0.05)
        one(False)  # the first run opens the program's files: not counted
        ratios, plain, sampled, samples = [], [], [], []
        for i in range(A.pairs):
            first = i % 2 == 0
            a = one(first)
            b = one(not first)
            s, p = (a, b) if first else (b, a)
            ratios.append(s[0] / p[0])
            plain.append(p[0])
            sampled.append(s[0])
            samples.append(s[1])
    finally:
        d.send_signal(signal.SIGTERM)
        d.wait(30)
    med = statistics.median(ratios)
    lo, hi = sign_interval(ratios)
    cpu = statistics.median(plain)
    text = "\n".join([
        SECTION.rstrip("\n"),
        "",
        "`sudo python3 tests/bench/run_stacks_cost.py build` (in `make bench`), %s: "
        "tests/targets/funcmodel (every option on, unit %d: median %.3f s of CPU under "
        "`featprof run`; one thread, no frame pointers, so DWARF stacks) run %d times under "
        "`featprof run` and %d under `featprof run --stacks --hz %d`, in pairs, in turn "
        "which first; per pair the ratio of the two runs' CPU times (run.cpu_ns, the "
        "program's own), since this machine's speed drifts by tens of %% within minutes. "
        "The issue's bound: <= 3%% at %d Hz." % (
            time.strftime("%Y-%m-%d"), A.unit, cpu, A.pairs, A.pairs, HZ, HZ),
        "",
        "| figure | value |",
        "|---|---|",
        "| run --stacks / run, median of %d pairs | %.4f (%+.2f%%) |" % (
            A.pairs, med, 100 * (med - 1)),
        "| its 95%% interval (sign test) | %.4f to %.4f (%+.2f%% to %+.2f%%) |" % (
            lo, hi, 100 * (lo - 1), 100 * (hi - 1)),
        "| samples a run (median; the rate asks for %.0f) | %d |" % (
            cpu * HZ, statistics.median(samples)),
        "| CPU a run: run, run --stacks (medians) | %.3f s, %.3f s |" % (
            cpu, statistics.median(sampled)),
        ""])
    print(text)
    if A.out:
        write_section(A.out, SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
