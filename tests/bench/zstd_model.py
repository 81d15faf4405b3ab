#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""featprof model on zstd, a real multi-threaded compressor (issue 33 part 5;
docs/MODELS.md): the plan (level one of l1|l3|l9, --check or not, -T1 or -T2 with
--parallel threads), each configuration twice, a second plan from what those runs found;
then each configuration held out in turn (its runs left out, the rest fitted): wall and
CPU predicted against measured, white-box against black-box. Needs root; starts its own
featprofd.

usage: zstd_model.py FEATPROF_BUILD ZSTD INPUT [REPLICATES]
  ZSTD: the zstd of `ZSTD_MODEL=1 ZSTD_VARIANTS=ip tests/bench/zstd_build.sh SRC OUT`
  (OUT/ip/programs/zstd); INPUT: a file to compress (32 MiB: a few seconds a run);
  REPLICATES: runs of each planned configuration (default 2), in rounds over all of them,
  so that the machine's drift over minutes falls on every configuration alike."""
import json
import os
import subprocess
import sys
import tempfile
import time

B, ZSTD, INPUT = sys.argv[1], sys.argv[2], sys.argv[3]
REPS = int(sys.argv[4]) if len(sys.argv) > 4 else 2
T = tempfile.mkdtemp(prefix="featprof-zstd-model-")
sock = os.path.join(T, "fp.sock")
d = subprocess.Popen([B + "/featprofd", "--socket", sock, "--group", "nogroup"],
                     stderr=subprocess.DEVNULL)
while not os.path.exists(sock):
    time.sleep(0.1)
time.sleep(0.5)
CHOICES = ["--choices", "level=l1|l3|l9", "--choices", "threads=1|2"]


def fp(*a):
    return subprocess.run([B + "/featprof", "--socket", sock] + [str(x) for x in a],
                          capture_output=True, text=True)


def cfg(c):
    return "level=%s,check=%s,threads=%s" % (c["level"], c["check"], c["threads"])


def run(out, c):
    flags = ["-" + c["level"][1:], "-T" + c["threads"],
             "--check" if c["check"] == "on" else "--no-check"]
    r = fp("run", "--config", cfg(c), "-o", out, "--", ZSTD, "-q", "-f", *flags, INPUT,
           "-o", T + "/out.zst")
    assert r.returncode == 0, r.stderr
    with open(out) as f:
        return json.load(f)["run"]


def plan(*files):
    r = fp("model", "--plan", *files, "--json", *CHOICES, "--parallel", "threads")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["configurations"]


try:
    first = {"level": "l1", "check": "on", "threads": "1"}
    run(T + "/first.json", first)
    p1 = plan(T + "/first.json")
    print("plan: %d configurations: %s" % (len(p1), [cfg(c) for c in p1]))
    files = []
    for i, c in enumerate(p1 * REPS):
        files.append("%s/p%d.json" % (T, i))
        run(files[-1], c)
    p2 = plan(*files)
    print("second plan: %d more: %s" % (len(p2), [cfg(c) for c in p2]))
    for i, c in enumerate(p2 * REPS):
        files.append("%s/q%d.json" % (T, i))
        run(files[-1], c)
    r = fp("model", *files, "--json", *CHOICES, "--parallel", "threads")
    assert r.returncode == 0, r.stderr
    m = json.loads(r.stdout)
    print(fp("model", *files, *CHOICES, "--parallel", "threads").stdout)
    # every configuration held out in turn (all of its runs left out, the rest fitted):
    # what a configuration nobody measured gets, where no configuration is left unrun
    runs = {}
    for f in files:
        with open(f) as fh:
            got = json.load(fh)["run"]
        runs.setdefault(cfg(got["config"]), []).append((f, got["wall_ns"], got["cpu_ns"]))
    print("runs: %d (%d configurations), wall model %s, LOO white-box %.2f%% black-box "
          "%.2f%% CPU %.2f%%" % (len(files), len(runs), m["wall_model"],
                                 m["loo_mape_pct"]["white_box"],
                                 m["loo_mape_pct"]["black_box_linear"],
                                 m["loo_mape_pct"].get("cpu", -1)))
    pairs = sorted(abs(rs[0][1] - rs[1][1]) / min(rs[0][1], rs[1][1])
                   for rs in runs.values() if len(rs) >= 2)
    cpairs = sorted(abs(rs[0][2] - rs[1][2]) / min(rs[0][2], rs[1][2])
                    for rs in runs.values() if len(rs) >= 2)
    print("replicates' spread (median of %d pairs): wall %.2f%%, CPU %.2f%%; largest "
          "%.2f%%, %.2f%%" % (len(pairs), 100 * pairs[len(pairs) // 2],
                             100 * cpairs[len(cpairs) // 2], 100 * pairs[-1],
                             100 * cpairs[-1]))
    print("| held-out configuration | wall | white-box | error | black-box | error | CPU "
          "| predicted | error |")
    print("|---|---|---|---|---|---|---|---|---|")
    errs = []
    for k, rs in sorted(runs.items()):
        rest = [f for f in files if f not in [x[0] for x in rs]]
        r = fp("model", *rest, "--json", *CHOICES, "--parallel", "threads", "--predict", k)
        if r.returncode:
            print("| %s | (%s) |" % (k, r.stderr.strip()))
            continue
        p = json.loads(r.stdout)["prediction"]
        w = sum(x[1] for x in rs) / len(rs)
        cpu = sum(x[2] for x in rs) / len(rs)
        e, eb, ec = [(a - b) / b for a, b in ((p["wall_ns"], w),
                                            (p["black_box_wall_ns"], w), (p["cpu_ns"], cpu))]
        errs.append((abs(e), abs(eb), abs(ec)))
        print("| %s | %.1f ms | %.1f ms | %+.2f%% | %.1f ms | %+.2f%% | %.1f ms | %.1f ms "
              "| %+.2f%% |" % (k, w / 1e6, p["wall_ns"] / 1e6, 100 * e,
                               p["black_box_wall_ns"] / 1e6, 100 * eb, cpu / 1e6,
                               p["cpu_ns"] / 1e6, 100 * ec))
    n = len(errs) or 1
    print("held out, mean absolute error: wall white-box %.2f%%, black-box %.2f%%; CPU "
          "%.2f%%; within 5%% (wall, white-box): %d of %d" % (
              100 * sum(e[0] for e in errs) / n, 100 * sum(e[1] for e in errs) / n,
              100 * sum(e[2] for e in errs) / n, sum(e[0] <= 0.05 for e in errs), len(errs)))
finally:
    d.terminate()
    d.wait()
