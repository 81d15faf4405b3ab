#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Off-CPU figures over many short runs (docs/TRACING.md, "Wall, CPU and off-CPU time"):
featprof run of tests/targets/pipeline_ip (in-process timing; its regions spin on their
own thread's CPU time, so they are hardly ever off CPU) under the 9 configurations
t_model_threads plans, ROUNDS times, against one featprofd. Prints each region whose
off-CPU time passes 20% of its wall time (with its stated uncertainty) and their count:
on a quiet machine a region there is a wrong figure, such as the whole time since a
switch-out charged because the thread's switch-in was never seen. Not in make check:
the rate it finds is a few in a hundred runs on this machine, and a busy machine preempts
for real. usage: offcpu_runs.py BUILD_DIR [--rounds N] [--prog PATH] (root; PATH: another
build of pipeline.c, such as one timed by traps: cc -Iusdt tests/targets/pipeline.c
-lpthread)"""
import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                "integration"))
ap = argparse.ArgumentParser()
ap.add_argument("build")
ap.add_argument("--rounds", type=int, default=10)
ap.add_argument("--prog")
a = ap.parse_args()
sys.argv = [sys.argv[0], a.build]	# the harness reads the build directory there
import harness as h  # noqa: E402

PLAN = ["check=none,level=1,threads=1,delta=0", "check=crc,level=9,threads=1,delta=1",
        "check=none,level=1,threads=2,delta=0", "check=crc,level=9,threads=2,delta=1",
        "check=sha,level=9,threads=1,delta=0", "check=sha,level=9,threads=2,delta=0",
        "check=none,level=1,threads=1,delta=1", "check=sha,level=1,threads=2,delta=0",
        "check=none,level=1,threads=2,delta=1"]


def main():
    d = h.Daemon("offcpu_runs")
    t = tempfile.mkdtemp(prefix="featprof-offcpu-")
    os.chmod(t, 0o777)
    bad = runs = 0
    prog = a.prog or h.B + "/tests/targets/pipeline_ip"
    try:
        for k, c in enumerate(PLAN * a.rounds):
            f = "%s/r%d.json" % (t, k)
            r = h.cli(d, "run", "--config", c, "-o", f, "--",
                      prog, c, "500", timeout=60)
            if r.returncode:
                print("run %d failed: %s" % (k, r.stderr.strip()))
                continue
            runs += 1
            with open(f) as fh:
                regions = json.load(fh)["regions"]
            for x in regions:
                if x["count"] and x["offcpu_ns"] > 0.2 * x["inclusive_ns"]:
                    bad += 1
                    print("run %3d %s: %s wall %.2f ms, off CPU %.2f ms (preempted %.2f), "
                          "uncertainty %.2f ms" % (
                              k, c, x["name"], x["inclusive_ns"] / 1e6, x["offcpu_ns"] / 1e6,
                              x["offcpu_preempted_ns"] / 1e6, x["uncertainty_ns"] / 1e6))
    finally:
        d.stop()
    print("offcpu_runs: %d runs of %s, %d regions off CPU more than 20%% of their wall"
          % (runs, os.path.basename(prog), bad))


main()
