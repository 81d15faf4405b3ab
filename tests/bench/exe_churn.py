#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What N short-lived processes of an executable profiled with --exe cost featprofd:
CPU time (utime+stime of the daemon), resident memory, and the figures it keeps
(processes joined / missed, instances summed). Each process runs one service_work
instance and exits (tests/targets/service with "work 1" on stdin).
usage: sudo tests/bench/exe_churn.py BUILD_DIR [--n 1000]  (figures: docs/SERVICES.md)"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
ap = argparse.ArgumentParser()
ap.add_argument("build")
ap.add_argument("--n", type=int, default=1000)
args = ap.parse_args()
sys.argv = [sys.argv[0], args.build]
import harness as h  # noqa: E402


def proc_cpu_rss(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / tick
    with open("/proc/%d/status" % pid) as f:
        rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    return cpu, rss


def main():
    d = h.Daemon("churn")
    exe = os.path.join(h.TMP, "churn-service")
    shutil.copy(h.B + "/tests/targets/service", exe)
    try:
        r = h.cli(d, "enable", "--exe", exe, "--all")
        assert r.returncode == 0, r.stderr
        cpu0, rss0 = proc_cpu_rss(d.p.pid)
        t0 = time.monotonic()
        for _ in range(args.n):
            subprocess.run([exe], input="work 1\n", capture_output=True, text=True)
        spawn_s = time.monotonic() - t0
        # let the daemon finish what the events asked for
        for _ in range(600):
            st = json.loads(h.cli(d, "stats", "--exe", exe, "--json").stdout)
            if st["processes_live"] == 0:
                break
            time.sleep(0.1)
        busy_s = time.monotonic() - t0
        cpu1, rss1 = proc_cpu_rss(d.p.pid)
        count = next((x["count"] for x in st.get("regions", []) if x["name"] == "service_work"), 0)
        print("exe_churn: %d processes in %.1f s (%.0f/s); featprofd done after %.1f s" %
              (args.n, spawn_s, args.n / spawn_s, busy_s))
        print("exe_churn: featprofd CPU %.2f s (%.1f ms per process), RSS %d -> %d KiB" %
              (cpu1 - cpu0, (cpu1 - cpu0) * 1e3 / args.n, rss0, rss1))
        shared = next((x["count"] for x in st.get("shared", {}).get("regions", [])
                       if x["name"] == "service_work"), 0)
        print("exe_churn: joined %d, missed %d (gone before a target of their own: measured"
              " by the file's link only), exited %d" %
              (st["processes_joined"], st["processes_missed"], st["processes_exited"]))
        print("exe_churn: service_work instances kept %d of %d (%d by the file's link)" %
              (count, args.n, shared))
    finally:
        d.stop()


if __name__ == "__main__":
    main()
