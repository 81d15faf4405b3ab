#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What a process of an --exe group pays for being on two links (its own target's and the
file's, whose program looks the process up and returns): `work N` timed in a service
process untraced, as a pid target, and as a group member with a target of its own.
Wall time per instance, median of 5 runs each (figures: docs/SERVICES.md).
usage: sudo tests/bench/exe_two_links.py BUILD_DIR [--n 20000]"""
import argparse
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
ap = argparse.ArgumentParser()
ap.add_argument("build")
ap.add_argument("--n", type=int, default=20000)
args = ap.parse_args()
sys.argv = [sys.argv[0], args.build]
import harness as h  # noqa: E402
import test_processes as ts  # noqa: E402


def per_instance(svc):
    runs = []
    for _ in range(5):
        t0 = time.perf_counter()
        assert svc.cmd("work %d" % args.n) == "worked"
        runs.append((time.perf_counter() - t0) / args.n * 1e9)
    return sorted(runs)[2]


def main():
    d = h.Daemon("links")
    exe = os.path.join(h.TMP, "links-service")
    shutil.copy(h.B + "/tests/targets/service", exe)
    a = ts.Service(exe)
    b = None
    try:
        base = per_instance(a)
        assert h.cli(d, "enable", str(a.pid), "--all").returncode == 0
        one = per_instance(a)
        a.end()
        assert h.cli(d, "enable", "--exe", exe, "--all").returncode == 0
        b = ts.Service(exe)
        assert ts.wait_member(d, exe, b.pid) is not None
        time.sleep(0.3)  # its links attached and handed over
        two = per_instance(b)
        print("exe_two_links: per instance, median of 5 x %d: untraced %.0f ns, pid target "
              "%.0f ns, --exe member on both links %.0f ns (%+.0f ns)" %
              (args.n, base, one, two, two - one))
    finally:
        a.end()
        if b:
            b.end()
        d.stop()


if __name__ == "__main__":
    main()
