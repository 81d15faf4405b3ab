#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""featprof model on a real multi-threaded compressor (issue 33 part 5; docs/MODELS.md):
the plan from a first run and the options' kinds, each configuration REPLICATES times, a
second plan from what those runs found; then each configuration held out in turn (its
runs left out, the rest fitted): wall and CPU predicted against measured, white-box
against black-box. Needs root; starts its own featprofd.

usage: real_model.py PROGRAM FEATPROF_BUILD BINARY INPUT [REPLICATES]
  PROGRAM zstd: BINARY the zstd of `ZSTD_MODEL=1 ZSTD_VARIANTS=ip
    tests/bench/zstd_build.sh SRC OUT` (OUT/ip/programs/zstd); options level one of
    l1|l3|l9, --check or not, -T1 or -T2 (--parallel threads)
  PROGRAM pigz: BINARY the pigz of `tests/bench/pigz_build.sh SRC OUT`; options level one
    of l1|l6|l9, -p1 or -p2 (--parallel threads), --zlib (adler32 for crc32), and
    --independent
  INPUT: a file to compress (32 MiB: a few seconds a run); REPLICATES: runs of each
  planned configuration (default 2), in rounds over all of them, so that the machine's
  drift over minutes falls on every configuration alike."""
import json
import os
import subprocess
import sys
import tempfile
import time

PROG, B, BIN, INPUT = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
REPS = int(sys.argv[5]) if len(sys.argv) > 5 else 2
T = tempfile.mkdtemp(prefix="featprof-%s-model-" % PROG)
OUT = os.path.join(T, "out")


def zstd_args(c):
    return ["-q", "-f", "-" + c["level"][1:], "-T" + c["threads"],
            "--check" if c["check"] == "on" else "--no-check", INPUT, "-o", OUT]


def pigz_args(c):
    return (["-c", "-" + c["level"][1:], "-p", c["threads"]] +
            (["--zlib"] if c["zlib"] == "on" else []) +
            (["--independent"] if c["indep"] == "on" else []) + [INPUT])


# per program: its options in order, their kinds for --plan and model, the first run,
# and the command line of a configuration (a program writing to stdout writes to OUT)
PROGRAMS = {
    "zstd": (["level", "check", "threads"],
             ["--choices", "level=l1|l3|l9", "--choices", "threads=1|2"],
             {"level": "l1", "check": "on", "threads": "1"}, zstd_args, False),
    "pigz": (["level", "zlib", "indep", "threads"],
             ["--choices", "level=l1|l6|l9", "--choices", "threads=1|2"],
             {"level": "l6", "zlib": "off", "indep": "off", "threads": "1"}, pigz_args, True),
}
ORDER, CHOICES, FIRST, ARGS, STDOUT = PROGRAMS[PROG]
CHOICES = CHOICES + ["--parallel", "threads"]
sock = os.path.join(T, "fp.sock")
d = subprocess.Popen([B + "/featprofd", "--socket", sock, "--group", "nogroup"],
                     stderr=subprocess.DEVNULL)
while not os.path.exists(sock):
    time.sleep(0.1)
time.sleep(0.5)


def fp(*a):
    return subprocess.run([B + "/featprof", "--socket", sock] + [str(x) for x in a],
                          capture_output=True, text=True)


def cfg(c):
    return ",".join("%s=%s" % (k, c[k]) for k in ORDER)


def run(out, c):
    with open(OUT, "wb") if STDOUT else open(os.devnull, "wb") as o:
        r = subprocess.run([B + "/featprof", "--socket", sock, "run", "--config", cfg(c),
                            "-o", out, "--", BIN] + ARGS(c), stdout=o,
                           stderr=subprocess.PIPE, text=True)
    assert r.returncode == 0, r.stderr
    with open(out) as f:
        return json.load(f)["run"]


def plan(*files):
    r = fp("model", "--plan", *files, "--json", *CHOICES)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["configurations"]


try:
    run(T + "/first.json", FIRST)
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
    r = fp("model", *files, "--json", *CHOICES)
    assert r.returncode == 0, r.stderr
    m = json.loads(r.stdout)
    print(fp("model", *files, *CHOICES).stdout)
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
        r = fp("model", *rest, "--json", *CHOICES, "--predict", k)
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
