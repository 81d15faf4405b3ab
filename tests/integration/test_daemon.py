#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Integration tests: the real featprofd (real BPF) on a temporary socket, real
instrumented targets, figures checked through the real CLI and the protocol.
Needs root. usage: test_daemon.py BUILD_DIR [TEST...]"""
import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (B, CHECKS, FAILS, SHIELD, TMP, USER_PY, Client, Daemon,  # noqa: E402
                     Target, as_user, check, cli, discover, region, run_file, site_bytes,
                     stats, uprobe_links)

# --- tests ---------------------------------------------------------------------------------


def calibration(d):
    """The calibration of the daemon's default attach point, printed for the record."""
    st = Client(d).call("status")["result"]
    at = st["attach"]
    cal = st["calibration"]
    print("    machine: attach point %s (%s); nop1 pair %.0f ns, nop5 pair %.0f ns" % (
        at["attach_point"], at["why"], at["nop1"]["pair_ns"], at["nop5"]["pair_ns"]))
    print("    calibration: bias %.0f ns (sd %.1f), pair %.0f ns (sd %.1f), nested check %.0f ns"
          % (cal["bias_ns"], cal["bias_sd_ns"], cal["pair_ns"], cal["pair_sd_ns"],
             cal["nested_check_ns"]))
    return cal


# A compensated figure must be within 3x its stated uncertainty of the truth, plus an
# allowance for what truth.cc does between probes. The uncertainty holds the calibration's
# spread at each event's gap since the previous probe (bpf/featprof.bpf.c "Cost",
# daemon/util/stats.c fp_cal_step), after another thread's probe, and the preempted time that
# may have fallen in probes; tests/bench/coverage.py measures how often 2x covers the
# error on a program that only spins between probes (docs/COVERAGE.md). truth.cc throws a
# C++ exception, longjmps and walks 13 regions in turn: after such work a probe finds
# caches as cold as after a sleep, whatever its gap (flat, begun right after the
# exception, cost ~0.7 us more than its gap predicts here). So per instance the test
# allows the calibration's cold bias less its warm one, per nested pair the cold pair
# less the warm one: what the stated uncertainty leaves out (docs/TRACING.md, "Error
# bars"). The test can fail: compensation must halve the summed error.
SLACK = {"instance": 0, "nested": 0}


def set_slack(cal):
    pts = cal.get("gap_points", [])
    print("    probe pair by gap: " + ", ".join(
        "%s %.0f ns (sd %.0f)" % ("cold" if p["cold"] else "%.0f us" % (p["gap_ns"] / 1e3),
                                  p["pair_ns"], sum(p["parts_sd_ns"])) for p in pts))
    SLACK["instance"] = max(0, cal["cold_bias_ns"] - cal["bias_ns"])
    SLACK["nested"] = max(0, cal["cold_pair_ns"] - cal["pair_ns"])
    print("    allowed beyond 3x the uncertainty: %.0f ns per instance, %.0f ns per nested "
          "pair" % (SLACK["instance"], SLACK["nested"]))


def within(name, key, got, truth, unc, instances, nested, pair, raw=None, offcpu=0):
    """Within 3x the stated uncertainty and the allowances; returns the raw and the
    compensated figure's absolute errors."""
    drift = DRIFT["instance"] * instances + DRIFT["nested"] * nested
    tol = 3 * unc + SLACK["instance"] * instances + SLACK["nested"] * nested + drift
    err = got - truth
    line = "    %-10s %-13s truth %11d featprof %11d (%+.2f%%) off-CPU %7d tolerance %8d" % (
        name, key, truth, got, err / truth * 100, offcpu, tol)
    if raw is not None:
        line += "  raw %+.2f%%" % ((raw - truth) / truth * 100)
    print(line)
    check(abs(err) <= tol, "%s %s error %d ns (%.2f%%) > 3 x its uncertainty %d ns + %d" % (
        name, key, err, err / truth * 100, unc, tol - 3 * unc))
    return abs(raw - truth) if raw is not None else 0, abs(err)


# What the truth itself misses (set_drift): each truth interval lacks about one clock
# read (the part of the read after the begin probe's stamp and before the end probe's),
# each nested window holds one more; truth.cc measures what a read costs here (~20 ns
# with the TSC in the vDSO, microseconds where the clock is a system call). Its probes'
# windows, against the calibration at their gap, are printed: where a run is out, they
# say whether the target's probes cost more than the daemon calibrated.
DRIFT = {"instance": 0, "nested": 0}


def gap_pair(cal, gap_ns):
    """The calibrated pair cost at a gap: linear in log(gap) between the measured points."""
    pts = sorted((p["gap_ns"], p["pair_ns"]) for p in cal.get("gap_points", [])
                 if not p["cold"] and p["gap_ns"] > 0)
    if not pts:
        return cal["pair_ns"]
    if gap_ns <= pts[0][0]:
        return pts[0][1]
    for (g0, p0), (g1, p1) in zip(pts, pts[1:]):
        if gap_ns <= g1:
            f = (math.log(gap_ns) - math.log(g0)) / (math.log(g1) - math.log(g0))
            return p0 + f * (p1 - p0)
    return pts[-1][1]


def set_drift(cal, probes, scale):
    clock = probes["clock_ns"]
    seen = 2.0 * probes["window_ns"] / max(1, probes["count"]) - 2 * clock
    DRIFT["instance"] = clock
    DRIFT["nested"] = 2 * clock
    # the windowed probes follow 150-600 us of busy time (times scale): 300 us typical
    print("    the target's probes: %.0f ns a pair (mean of %d windows), the calibration "
          "%.0f ns at their gap; one clock read %d ns, allowed per instance and twice per "
          "nested pair" % (seen, probes["count"], gap_pair(cal, 300e3 * scale), clock))


# truth.cc: the regions whose instances are a feature's outermost ones, and which share
# of their instances is (rec: the top one of 3 levels)
FEATURE_OUTERMOST = {"A": [("flat", 1), ("inner", 1), ("multi", 1)], "B": [("outer", 1)],
                     "C": [("jmp_outer", 1), ("rec", 3)], "D": [("jmp_inner", 1), ("scoped", 1)]}


def t_attach_point(d):
    """The daemon attaches new targets at the attach point it measured cheaper, says
    why, and a target's status shows where it is attached."""
    st = Client(d).call("status")["result"]
    at = st["attach"]
    p1, p5 = at["nop1"], at["nop5"]
    print("    kernel optimizes nop5: %s; nop1 pair %.0f ns, nop5 pair %.0f ns -> %s (%s)" % (
        at["kernel_optimizes_nop5"], p1["pair_ns"], p5["pair_ns"], at["attach_point"],
        at["why"]))
    check(p1["valid"], "nop1 measured")
    if os.environ.get("FP_TEST_SITE"):
        return
    print("    a child forked after nop5 sites were optimized crashes at its first site: %s"
          % at["nop5_fork_crashes_child"], flush=True)
    if at["kernel_optimizes_nop5"]:
        check(p5["valid"], "nop5 measured where the kernel optimizes it")
        want = "shielded-nop5" if p5["pair_ns"] < p1["pair_ns"] else "nop1"
    else:
        want = "nop1"
    if at["nop5_fork_crashes_child"]:  # never a hazard to the target
        want = "nop1"
        check("forked child" in at["why"], "the reason says why not nop5: " + at["why"])
    check(at["attach_point"] == want, "attached at %s, measured cheaper: %s" % (
        at["attach_point"], want))
    check(str(round(min(p1["pair_ns"], p5["pair_ns"] or 1e18))) in at["why"] or
          not at["kernel_optimizes_nop5"] or at["nop5_fork_crashes_child"],
          "the reason names the figures: " + at["why"])
    t = Target("spin")
    try:
        check(cli(d, "enable", t.pid, "--all").returncode == 0, "enable")
        tgt = next(x for x in Client(d).call("status")["result"]["targets"]
                   if x["pid"] == t.pid)
        check(tgt["site_address"] == want, "target attached at %s" % tgt["site_address"])
    finally:
        t.kill()


def t_accuracy(d):
    """Counts exact; regions, features within 3x their uncertainty; one thread, then 4
    threads (their probes may cost more after another thread's: a larger uncertainty);
    region length from the machine's pair cost; with one thread the uncompensated figures
    must be out (the test can fail). Measured again once if a figure is out: this shared
    VM stalls a thread now and then in ways no guest event shows (no steal time is
    reported); a wrong compensation fails both runs."""
    for threads in (1, 4):
        before = len(FAILS)
        accuracy_run(d, threads)
        if len(FAILS) > before:
            print("    attempt 1: %d check(s) out; measuring again" % (len(FAILS) - before))
            first = FAILS[before:]
            del FAILS[before:]
            accuracy_run(d, threads)
            if len(FAILS) > before:
                FAILS[before:before] = first


def check_time_split(st):
    """Every compensated time in a stats reply: CPU + off-CPU = wall, neither negative,
    and probe_cost_dominates exactly where the figure is not above its uncertainty."""
    bad = []
    figs = [(r, p) for r in st["regions"] for p in ("", "exclusive_")]
    figs += [(f, "") for f in st["features"] + st["feature_sets"]]
    for o, p in figs:
        wall = o["inclusive_ns" if p == "" and "inclusive_ns" in o else
                 "exclusive_ns" if p else "ns"]
        cpu, off, unc = o[p + "cpu_ns"], o[p + "offcpu_ns"], o[p + "uncertainty_ns"]
        dom = o[p + "probe_cost_dominates"]
        if cpu < 0 or off < 0 or abs(cpu + off - wall) > 2 or dom != (unc > 0 and wall <= unc):
            bad.append("%s %s: wall %d cpu %d off %d unc %d dominated %s" % (
                o.get("name", o.get("features")), p or "incl", wall, cpu, off, unc, dom))
    check(not bad, "CPU + off-CPU = wall, probe_cost_dominates where wall <= uncertainty "
          "(%d figures): %s" % (len(figs), "; ".join(bad[:3])))


def accuracy_run(d, threads):
    cal = calibration(d)
    set_slack(cal)
    pair = cal["pair_ns"]
    # the shortest busy stretch (150 us at scale 1) is 60 pair costs: compensation is
    # then 0.3-2% of a region, well above the tolerance, so a wrong one fails
    scale = 60 * pair / 150000.0
    print("    %d thread(s), scale %.2f: flat region %.0f us" % (threads, scale, 600 * scale))
    # 4 threads with pauses: on 2 CPUs they rarely overlap, and the CPUs idle less than
    # with 2 threads (a probe right after a CPU left idle costs more, docs/TRACING.md)
    t = Target("accuracy", 12, threads, "%.3f" % scale)
    r = cli(d, "enable", t.pid, "--all")
    check(r.returncode == 0, "enable --all: " + r.stderr)
    t.go()
    t.warm()
    check(cli(d, "reset", t.pid).returncode == 0, "reset after warm-up")
    t.go_on()
    out = json.loads(t.result())
    truth = out["truth"]
    set_drift(cal, out["probes"], scale)
    st = stats(d, t.pid)  # the target has exited: last figures stay
    check(st["exited"], "exited target still queryable")
    check_time_split(st)
    errs = []	# (raw, compensated) absolute errors
    for name, tr in truth.items():
        r = region(st, name)
        check(r["count"] == tr["count"], "%s count %d != %d" % (name, r["count"], tr["count"]))
        for k in ("inclusive_ns", "exclusive_ns"):
            unc = r["inclusive_uncertainty_ns" if k == "inclusive_ns" else
                    "exclusive_uncertainty_ns"]
            off = r["offcpu_ns" if k == "inclusive_ns" else "exclusive_offcpu_ns"]
            errs.append(within(name, k, r[k], tr[k], unc, r["count"],
                               r["nested"] if k == "inclusive_ns" else r["children"],
                               pair, r["raw_" + k], off))
    for f in st["features"]:
        if f["name"] in out["features"]:
            tr = out["features"][f["name"]]
            # an outermost instance is one interval more than the nested pairs in it
            sets = [x for x in st["feature_sets"] if f["name"] in x["features"]]
            events = sum(x["events"] for x in sets)
            outermost = sum(region(st, n)["count"] // k for n, k in FEATURE_OUTERMOST[f["name"]])
            errs.append(within("feature " + f["name"], "ns", f["ns"], tr, f["uncertainty_ns"],
                               outermost, max(0, events - outermost) / 2, pair, f["raw_ns"],
                               f["offcpu_ns"]))
    # the test can fail: without compensation the errors are at least twice as large (one
    # thread: with four, a preemption inside a probe can outweigh it in one figure)
    raw_sum, comp_sum = sum(e[0] for e in errs), sum(e[1] for e in errs)
    print("    errors summed: uncompensated %d ns, compensated %d ns" % (raw_sum, comp_sum))
    if threads == 1:
        check(comp_sum * 2 < raw_sum, "compensation halves the error (%d ns uncompensated, "
              "%d ns compensated)" % (raw_sum, comp_sum))
    # region paths: per region, its paths (those ending in it) add up to its exclusive
    # time and count; recursion is not collapsed (rec;rec;rec is its own path)
    for r in st["regions"]:
        mine = [p for p in st["paths"] if p["path"][-1] == r["name"]]
        if not r["count"]:
            continue
        ns, n = sum(p["ns"] for p in mine), sum(p["count"] for p in mine)
        check(abs(ns - r["exclusive_ns"]) <= len(mine) + 1 and n == r["count"],
              "paths of %s: %d ns in %d, region exclusive %d ns in %d" % (
                  r["name"], ns, n, r["exclusive_ns"], r["count"]))
    check(["rec", "rec", "rec"] in [p["path"] for p in st["paths"]], "recursion as a path")
    check(["outer", "inner"] in [p["path"] for p in st["paths"]], "nesting as a path")
    for k, v in st["anomalies"].items():
        check(v == 0, "anomaly %s = %d" % (k, v))
    check(region(st, "rec")["recursion"] == 2 * 12 * threads, "recursion counted: %d" %
          region(st, "rec")["recursion"])


def t_offcpu(d):
    """Wall, CPU, preempted and blocked time of 1 ms regions against the threads' own
    clocks, with more threads than CPUs."""
    cal = calibration(d)
    ncpu = os.cpu_count()
    threads = 2 * ncpu + 1
    t = Target("offcpu", 40, threads)
    check(cli(d, "enable", t.pid, "--all").returncode == 0, "enable")
    t.go()
    t.warm()
    check(cli(d, "reset", t.pid).returncode == 0, "reset after warm-up")
    t.go_on()
    tr = json.loads(t.result())["truth"]["cpu_sleep"]
    st = stats(d, t.pid)
    r = region(st, "cpu_sleep")
    check(r["count"] == tr["count"], "count %d != %d" % (r["count"], tr["count"]))
    wall = tr["inclusive_ns"]
    # the probes' own cost lands in featprof's CPU time only as far as the compensation
    # misses it: as t_accuracy
    set_slack(cal)
    slack = SLACK["instance"] * r["count"] + 3 * r["uncertainty_ns"]
    print("    %d threads on %d CPUs, %d regions of 1 ms CPU + 1 ms sleep" % (
        threads, ncpu, r["count"]))
    for k in ("inclusive_ns", "cpu_ns", "offcpu_preempted_ns", "offcpu_blocked_ns"):
        got, want = r[k], tr[k]
        # 2% of the clock's own figure; the split between preempted and blocked is
        # held to 2% of the wall time (a wake-up is one event, seen from both sides)
        tol = 0.02 * (want if k in ("inclusive_ns", "cpu_ns") else wall) + slack
        print("    %-20s truth %11d featprof %11d (%+.2f%% of wall) tolerance %d" % (
            k, want, got, (got - want) / wall * 100, tol))
        check(abs(got - want) <= tol, "cpu_sleep %s: %d vs truth %d" % (k, got, want))
    check(tr["offcpu_preempted_ns"] > 0.05 * wall, "the CPUs were oversubscribed (truth "
          "runnable %d ns)" % tr["offcpu_preempted_ns"])
    f = next(x for x in st["features"] if x["name"] == "Work")
    check(abs(f["offcpu_blocked_ns"] - r["offcpu_blocked_ns"]) <= 0.01 * wall and
          abs(f["cpu_ns"] - r["cpu_ns"]) <= 0.01 * wall, "feature Work splits as its region")
    check(st["base_ns"] > 0, "base time outside regions: %d" % st["base_ns"])


def t_export(d):
    """export: folded stacks add up to the regions' exclusive times; the JSON envelope;
    bad input and a target exiting mid-export change nothing."""
    t = Target("accuracy", 4, 2)
    check(cli(d, "enable", t.pid, "--all").returncode == 0, "enable")
    t.go()
    t.warm().go_on()
    t.result()
    st = stats(d, t.pid)
    r = cli(d, "export", t.pid, "--format", "folded")
    check(r.returncode == 0, "export folded: " + r.stderr)
    leaf = {}
    for line in r.stdout.splitlines():
        stack, value = line.rsplit(" ", 1)
        leaf[stack.split(";")[-1]] = leaf.get(stack.split(";")[-1], 0) + int(value)
    for reg in st["regions"]:
        if reg["count"]:
            check(abs(leaf.get(reg["name"], 0) - reg["exclusive_ns"]) <= 16,
                  "folded %s: %d vs exclusive %d" % (reg["name"], leaf.get(reg["name"], 0),
                                                     reg["exclusive_ns"]))
    check("outer;inner " in r.stdout and "rec;rec;rec " in r.stdout, "nested stacks folded")
    # pprof, read back by the real go tool pprof: the same totals as stats
    prof = os.path.join(TMP, "export.pb.gz")
    r = cli(d, "export", t.pid, "--format", "pprof", "-o", prof)
    check(r.returncode == 0, "export pprof: " + r.stderr)
    want = {"wall": sum(p["ns"] for p in st["paths"]),
            "count": sum(p["count"] for p in st["paths"])}
    for index, total in want.items():
        top = subprocess.run(["go", "tool", "pprof", "-top", "-unit=ns" if index == "wall"
                              else "-unit=count", "-sample_index=" + index, prof],
                             capture_output=True, text=True, timeout=120)
        m = [l for l in top.stdout.splitlines() if "% of " in l and " total" in l]
        got = int(m[0].split("% of ")[1].split()[0].rstrip("ns")) if m else -1
        print("    go tool pprof -top -sample_index=%s: total %d, featprof stats %d" % (
            index, got, total))
        check(got == total, "pprof %s total %d != %d: %s" % (index, got, total, top.stderr))
    tr = subprocess.run(["go", "tool", "pprof", "-traces", prof], capture_output=True,
                        text=True, timeout=120).stdout
    check("inner [A,B]\n" in tr and "outer [B]" in tr and "exe:" in tr and "pid:" in tr,
          "pprof traces show nested regions with their features and labels")
    out = os.path.join(TMP, "export.json")
    r = cli(d, "export", t.pid, "--format", "json", "-o", out)
    env = json.load(open(out)) if r.returncode == 0 else {}
    check(env.get("format") == "featprof-export" and env.get("version") == 1 and
          env["stats"]["paths"], "json envelope: %s" % r.stderr)
    check(not os.path.exists(out + ".tmp"), "no temporary file left")
    r = cli(d, "export", t.pid, "--format", "pdf")
    check(r.returncode == 2 and r.stderr.count("\n") == 1, "unknown format: %r" % r.stderr)
    r = cli(d, "export", t.pid, "--format", "folded", "-o", "/nonexistent/dir/f")
    check(r.returncode == 1 and "cannot write" in r.stderr, "unwritable: %r" % r.stderr)
    # a target that exits during --duration: one line, no file
    exit_midway(d, "export", "--format", "folded")
    exit_midway(d, "save")
    r = cli(d, "save", "1", "--duration", "1", "-o", "/proc/nope/x")
    check(r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1,
          "save of an unknown pid: one line %r" % r.stderr.strip())


def exit_midway(d, verb, *args):
    """featprof VERB PID --duration 30 -o FILE [args] on a target that exits meanwhile: exit
    1, one line saying so, neither FILE nor FILE.tmp left."""
    sp = Target("exit")
    check(cli(d, "enable", sp.pid, "--all").returncode == 0, "enable exit target")
    gone = os.path.join(TMP, "gone." + verb)
    p = subprocess.Popen([B + "/featprof", "--socket", d.sock, verb, str(sp.pid),
                          "--duration", "30", "-o", gone] + list(args),
                         stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    sp.go()
    sp.result()
    err = p.communicate(timeout=20)[1]
    check(p.returncode == 1 and "exited" in err and len(err.strip().splitlines()) == 1 and
          not os.path.exists(gone) and not os.path.exists(gone + ".tmp"),
          "exit mid-%s: rc %s %r" % (verb, p.returncode, err.strip()))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def http_get(url, timeout=5):
    import urllib.request
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def t_metrics(d):
    """featprof metrics as nobody, scraped by a real Prometheus: only nobody's targets;
    PromQL values equal featprof stats."""
    import urllib.parse
    mine = Target("accuracy", 3, 1, user="nobody")   # exits: its figures stay fixed
    live = Target("spin", user="nobody")
    other = demo()                                   # root's: must not show
    port, pport = free_port(), free_port()
    mp = prom = None
    try:
        for t in (mine, live):
            check(cli(d, "enable", t.pid, "--all", user="nobody").returncode == 0, "enable")
        mine.go()
        mine.warm().go_on()
        mine.result()
        live.go()
        check(cli(d, "enable", other.pid, "Cache").returncode == 0, "root enables its own")
        mp = subprocess.Popen(as_user("nobody", [B + "/featprof", "--socket", d.sock,
                                                 "metrics", "--listen", "127.0.0.1:%d" % port]),
                              stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        body = http_get("http://127.0.0.1:%d/metrics" % port)
        check('pid="%d"' % mine.pid in body and 'pid="%d"' % other.pid not in body,
              "nobody's endpoint shows its targets only")
        check("# TYPE featprof_region_duration_seconds histogram" in body and
              'le="+Inf"' in body, "histograms from the kernel's buckets")
        r = subprocess.run([B + "/featprof", "--socket", d.sock, "metrics", "--listen",
                            "127.0.0.1:%d" % port], capture_output=True, text=True, timeout=10)
        check(r.returncode == 1 and "cannot listen" in r.stderr, "port in use: %r" % r.stderr)
        cfg = os.path.join(TMP, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: 1s\nscrape_configs:\n"
                    "  - job_name: featprof\n    static_configs:\n"
                    "      - targets: ['127.0.0.1:%d']\n" % port)
        prom = subprocess.Popen(["prometheus", "--config.file=" + cfg,
                                 "--storage.tsdb.path=" + os.path.join(TMP, "tsdb"),
                                 "--web.listen-address=127.0.0.1:%d" % pport],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        api = "http://127.0.0.1:%d/api/v1/query?query=" % pport
        for _ in range(100):
            try:
                http_get("http://127.0.0.1:%d/-/ready" % pport, 1)
                break
            except OSError:
                time.sleep(0.2)
        time.sleep(6)  # a few scrapes
        tg = json.loads(http_get("http://127.0.0.1:%d/api/v1/targets" % pport))
        for t in tg["data"]["activeTargets"]:
            print("    Prometheus target %s: health %s, last scrape %.1f ms %s"
                  % (t["scrapeUrl"], t["health"], 1e3 * t["lastScrapeDuration"],
                     t["lastError"]))
        st = stats(d, mine.pid)
        res = json.loads(http_get(api + urllib.parse.quote(
            'featprof_feature_seconds_total{pid="%d"}' % mine.pid)))["data"]["result"]
        got = {x["metric"]["feature"]: float(x["value"][1]) for x in res}
        for f in st["features"]:
            print("    PromQL featprof_feature_seconds_total{feature=%r}: %.9f s, stats %.9f s"
                  % (f["name"], got.get(f["name"], -1), f["ns"] / 1e9))
            check(abs(got.get(f["name"], -1) - f["ns"] / 1e9) <= 1e-6,
                  "feature %s in Prometheus equals stats" % f["name"])
        # the same 6 s window through both: stats' difference, Prometheus' rate() ending
        # when the second stats was taken
        a = stats(d, live.pid)
        time.sleep(6)
        b = stats(d, live.pid)
        t1 = time.time()
        time.sleep(1.5)  # the scrape after t1 is stored
        q = 'rate(featprof_feature_seconds_total{pid="%d",feature="S"}[6s])' % live.pid
        res = json.loads(http_get(api + urllib.parse.quote(q) + "&time=%.3f" % t1))
        res = res["data"]["result"]
        fs = lambda s: next(f["ns"] for f in s["features"] if f["name"] == "S")
        want = (fs(b) - fs(a)) / 1e9 / ((b["elapsed_ns"] - a["elapsed_ns"]) / 1e9)
        got = float(res[0]["value"][1]) if res else -1
        print("    PromQL %s = %.5f s/s; stats over the same 6 s: %.5f s/s" % (q, got, want))
        check(res and want > 0 and abs(got - want) <= 0.25 * want,
              "rate of a live feature agrees with stats")
    finally:
        for p in (mp, prom):
            if p and p.poll() is None:
                p.terminate()
                p.wait(10)
        live.kill()
        other.kill()
        other.wait()


def t_report(d):
    """featprof report: one self-contained HTML page, rendered by headless Chromium; its DOM
    has every section and one element per feature, region path and histogram."""
    import re
    p = demo()
    html = os.path.join(TMP, "report.html")
    shot = os.path.join(TMP, "report.png")
    try:
        check(cli(d, "enable", p.pid, "--all").returncode == 0, "enable demo")
        time.sleep(1.5)
        r = cli(d, "report", p.pid, "-o", html)
        check(r.returncode == 0, "report PID: %r" % r.stderr)
        st = stats(d, p.pid)
    finally:
        p.kill()
        p.wait()
    text = open(html).read()
    check(not re.search(r"<script|<link|https?://|src=|@import|url\(", text),
          "self-contained: no script, link, URL or external source")
    chrome = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    dom = subprocess.run(chrome + ["--dump-dom", "file://" + html], capture_output=True,
                         text=True, timeout=120).stdout
    ids = re.findall(r'<section id="(\w+)"', dom)
    print("    Chromium DOM: sections %s, %d feature bars, %d flame frames, %d histograms, "
          "%d region rows" % (ids, dom.count('class="feature"'), dom.count('class="frame"'),
                              dom.count('class="hist"'), dom.count('class="region"')))
    check(ids == ["features", "flamegraph", "histograms", "regions", "sets", "anomalies",
                  "calibration"], "every section rendered")
    check(dom.count('class="feature"') == len(st["features"]), "one bar per feature")
    check(dom.count('class="region"') == len(st["regions"]), "one row per region")
    # frames: the root and every path prefix at least half a pixel wide of 960
    tot = {}
    for x in st["paths"]:
        for i in range(1, len(x["path"]) + 1):
            tot[tuple(x["path"][:i])] = tot.get(tuple(x["path"][:i]), 0) + x["ns"]
    alln = sum(x["ns"] for x in st["paths"] if x["path"])
    # (the page and st are two reads of a running target: a prefix within 20% of the
    # half-pixel threshold may fall on either side in the page)
    sure = [k for k, v in tot.items() if v * 960 / alln >= 0.6]
    maybe = [k for k, v in tot.items() if v * 960 / alln >= 0.4]
    frames = dom.count('class="frame"')
    check(len(sure) + 1 <= frames <= len(maybe) + 1,
          "flame graph frames: %d for %d to %d path prefixes" % (frames, len(sure), len(maybe)))
    check(dom.count('class="hist"') == sum(1 for x in st["regions"] if x["count"]),
          "one histogram per region with instances")
    r = subprocess.run(chrome + ["--window-size=1100,1400", "--screenshot=" + shot,
                                 "file://" + html], capture_output=True, text=True, timeout=120)
    check(os.path.exists(shot) and os.path.getsize(shot) > 10000,
          "screenshot %s" % (os.path.getsize(shot) if os.path.exists(shot) else r.stderr[-200:]))
    # bad input: one line, exit 2, nothing written
    bad = os.path.join(TMP, "bad.json")
    for content in ("{", '{"format":"featprof-save","version":7}', '{"a":1}'):
        with open(bad, "w") as f:
            f.write(content)
        out = os.path.join(TMP, "bad.html")
        r = cli(d, "report", bad, "-o", out)
        check(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and
              not os.path.exists(out) and not os.path.exists(out + ".tmp"),
              "report of %r: %r" % (content, r.stderr.strip()))


def t_record(d):
    """featprof record: a Chrome trace of every instance; per region, counts equal stats over
    the window and summed durations equal stats' compensated inclusive times; children
    stay inside their parents; a target exiting mid-record voids it."""
    os.environ["TRUTH_HOLD"] = "1"
    try:
        t = Target("accuracy", 4, 2)
    finally:
        del os.environ["TRUTH_HOLD"]
    out = os.path.join(TMP, "trace.json")
    try:
        check(cli(d, "enable", t.pid, "--all").returncode == 0, "enable")
        t.go()
        t.warm()
        check(cli(d, "reset", t.pid).returncode == 0, "reset after warm-up")
        p = subprocess.Popen([B + "/featprof", "--socket", d.sock, "record", str(t.pid),
                              "--duration", "4", "-o", out], stderr=subprocess.PIPE, text=True)
        time.sleep(1)
        t.go_on()
        t.p.stdout.readline()  # the truth: the measured iterations are done
        err = p.communicate(timeout=30)[1]
        check(p.returncode == 0, "record: rc %s %r" % (p.returncode, err))
        st = stats(d, t.pid)
    finally:
        t.kill()
    tr = json.load(open(out))
    xs = [e for e in tr["traceEvents"] if e["ph"] == "X"]
    other = tr["otherData"]
    threads = {e["tid"] for e in tr["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
    print("    trace: %d complete events on %d threads, %d dropped, ring %d bytes"
          % (len(xs), len(threads), other["dropped"], other["ring_bytes"]))
    check(other["dropped"] == 0 and other["events"] == len(xs), "no drops; events counted")
    for r in st["regions"]:
        mine = [e for e in xs if e["name"] == r["name"]]
        dur = sum(e["args"]["compensated_ns"] for e in mine)
        ok = len(mine) == r["count"] and abs(dur - r["inclusive_ns"]) <= 1 + 1e-6 * dur
        if r["count"] or mine:
            print("    %-12s trace %5d instances %14.0f ns; stats %5d %14.0f ns"
                  % (r["name"], len(mine), dur, r["count"], r["inclusive_ns"]))
        check(ok, "region %s: trace equals stats" % r["name"])
    # nesting: each event with depth > 0 lies within an enclosing event on its thread
    bad = 0
    by_tid = {}
    for e in xs:
        by_tid.setdefault(e["tid"], []).append(e)
    for evs in by_tid.values():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in evs:
            while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"] + 1e-3:
                stack.pop()
            if e["args"]["depth"] > 0 and stack and e["ts"] + e["dur"] > \
                    stack[-1]["ts"] + stack[-1]["dur"] + 0.005:
                bad += 1
                if bad <= 3:
                    print("    outside: %s %.3f+%.3f %s in %s %.3f+%.3f %s" % (
                        e["name"], e["ts"], e["dur"], e["args"], stack[-1]["name"],
                        stack[-1]["ts"], stack[-1]["dur"], stack[-1]["args"]))
            stack.append(e)
    cut = sum(1 for e in xs if abs(e["dur"] * 1000 - e["args"]["compensated_ns"]) > 2)
    print("    %d of %d shown durations cut at their parent's end (probes cheaper than "
          "calibrated there)" % (cut, len(xs)))
    check(bad == 0, "children inside their parents (%d outside)" % bad)
    check(all(e["cat"] and e["args"]["features"] for e in xs), "features on every event")
    exit_midway(d, "record")


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


def t_redzone(d):
    """Live red-zone data across both sites, a million calls traced at the nop5."""
    dn = Daemon("nop5", "--site", "nop5")
    try:
        st = Client(dn).call("status")["result"]
        check(st["optimized_uprobes"], "the nop5 daemon attaches at the nop5")
        t = Target("redzone", 1000000)
        r = cli(dn, "enable", t.pid, "RedZone")
        check(r.returncode == 0, "enable RedZone: " + r.stderr)
        t.go()
        out = json.loads(t.result())
        check(out["corrupted"] == 0, "red zone corrupted %d times" % out["corrupted"])
        s = stats(dn, t.pid)
        check(region(s, "redzone")["count"] == 1000000,
              "redzone count %d" % region(s, "redzone")["count"])
        print("    1,000,000 calls, 2,000,000 hits at the shielded nop5: %d corrupted" %
              out["corrupted"])
    finally:
        dn.stop()


def t_enable_inside(d):
    """Enabled while a thread is inside: end without begin, counted, not attributed."""
    t = Target("inside")
    t.go()
    time.sleep(0.5)
    check(cli(d, "enable", t.pid, "--all").returncode == 0, "enable")
    t.result()
    st = stats(d, t.pid)
    check(st["anomalies"]["end_without_begin"] == 1, "end_without_begin %d" %
          st["anomalies"]["end_without_begin"])
    check(region(st, "long_region")["count"] == 0, "long_region not attributed")
    check(region(st, "tick")["count"] == 1, "tick measured after enable")


def t_disable_open(d):
    """A region disabled while a thread is inside is dropped, never ended late."""
    t = Target("open")
    check(cli(d, "enable", t.pid, "--all").returncode == 0, "enable")
    t.go()
    time.sleep(0.5)
    r = cli(d, "disable", t.pid, "--by-region", "long_region")
    check(r.returncode == 0, "disable long_region: " + r.stderr)
    t.result()
    st = stats(d, t.pid)
    check(region(st, "long_region")["count"] == 0, "long_region count %d" %
          region(st, "long_region")["count"])
    check(region(st, "tick")["count"] == 1, "tick count %d" % region(st, "tick")["count"])
    check(st["anomalies"]["disabled_while_open"] == 1, "disabled_while_open %d" %
          st["anomalies"]["disabled_while_open"])
    check(st["anomalies"]["thread_exit_inside"] == 0, "no exit inside")


def t_thread_exit(d):
    """A thread exiting inside a region is counted."""
    t = Target("exit")
    check(cli(d, "enable", t.pid, "--all").returncode == 0, "enable")
    t.go()
    t.result()
    st = stats(d, t.pid)
    check(st["anomalies"]["thread_exit_inside"] == 1, "thread_exit_inside %d" %
          st["anomalies"]["thread_exit_inside"])
    check(region(st, "long_region")["count"] == 0, "not attributed")


def demo():
    return subprocess.Popen([B + "/featprof-demo", "-t", "2", "-q"])


def t_enable_midrun_two_clients_detach(d):
    """Enable mid-run; a streaming client and a second client at once; disable leaves
    no uprobe; a client disconnecting loses nothing for the other; target exit."""
    p = demo()
    try:
        time.sleep(0.3)
        a = Client(d)
        r = a.call("enable", pid=p.pid, features=["Compression"])
        check("result" in r and r["result"]["attached_sites"] > 0, "enable mid-run: %s" % r)
        sub = a.call("subscribe", pid=p.pid, interval_ms=200)
        check("result" in sub, "subscribe: %s" % sub)
        b = Client(d)
        r = b.call("enable", pid=p.pid, features=["Cache"])
        check("result" in r, "second client enables: %s" % r)
        pushes = [a.read() for _ in range(3)]
        check(all(x and "stats" in x for x in pushes), "three pushes to the subscriber")
        check(any(region(x["stats"], "compress")["count"] > 0 for x in pushes),
              "pushes carry compress figures")
        links = uprobe_links(d.p.pid)
        check(links > 0, "uprobe links present while enabled (%d)" % links)
        # the human table fits an 80-column terminal (over SSH), one line per region
        os.environ["COLUMNS"] = "80"
        r = cli(d, "stats", p.pid)
        del os.environ["COLUMNS"]
        widest = max(len(x) for x in r.stdout.splitlines())
        check(r.returncode == 0 and widest <= 80 and "compress_verify" in r.stdout,
              "stats table within 80 columns (widest line %d)" % widest)
        # ... with every region name of up to 24 characters whole, enabled or not
        names = [x["name"] for x in stats(d, p.pid)["regions"]]
        cut = [n for n in names if len(n) <= 24 and
               not any(ln.startswith(n + " ") for ln in r.stdout.splitlines())]
        check(names and not cut, "region names whole at 80 columns (cut: %s)" % cut)
        a.close()  # the subscriber goes away
        st = b.call("stats", pid=p.pid)["result"]
        check(region(st, "cache_lookup")["count"] > 0, "other client still gets figures")
        r = b.call("disable", pid=p.pid, all=True)
        check(r["result"]["attached_sites"] == 0, "disable --all: no site attached")
        # the daemon's own drift measurement holds a link for ~60 ms every 10 s
        # (daemon/calibrate/calibrate.c, "drift"): wait that out, never longer than a second
        for _ in range(20):
            if uprobe_links(d.p.pid) == 0:
                break
            time.sleep(0.05)
        check(uprobe_links(d.p.pid) == 0, "no uprobe link left: %d" % uprobe_links(d.p.pid))
        time.sleep(0.2)
        check(all(b == SHIELD for b in site_bytes(p.pid)), "disabled: all sites bare nops")
        p.send_signal(signal.SIGTERM)
        p.wait(10)
        time.sleep(0.3)
        st = b.call("stats", pid=p.pid)
        check("result" in st and st["result"]["exited"], "exited target queryable")
        r = b.call("detach", pid=p.pid)
        check("result" in r, "detach")
        r = b.call("stats", pid=p.pid)
        check(r.get("error", {}).get("code") in ("not_attached", "no_such_process"),
              "stats after detach: %s" % r)
    finally:
        p.kill()
        p.wait()


def t_unprivileged(d):
    """nobody: denied on root's process, allowed on its own, sees only its own."""
    p = demo()
    t = Target("spin", user="nobody")
    try:
        time.sleep(0.3)
        r = cli(d, "enable", p.pid, "Compression", user="nobody")
        check(r.returncode != 0 and "permission denied" in r.stderr and
              r.stderr.count("\n") == 1, "nobody on root's process: %r" % r.stderr)
        r = cli(d, "enable", t.pid, "S", user="nobody")
        check(r.returncode == 0, "nobody on its own process: %r" % r.stderr)
        t.go()
        time.sleep(0.5)
        r = cli(d, "stats", t.pid, "--json", user="nobody")
        check(r.returncode == 0 and region(json.loads(r.stdout), "spin")["count"] > 0,
              "nobody reads its figures")
        check(cli(d, "enable", p.pid, "Cache").returncode == 0, "root enables root's")
        r = cli(d, "status", "--json", user="nobody")
        pids = [x["pid"] for x in json.loads(r.stdout)["targets"]]
        check(p.pid not in pids and t.pid in pids, "nobody's status shows only its own")
        # the kernel decides: a process of nobody's that made itself non-dumpable (what
        # setuid helpers and agents holding secrets do) is refused, root still allowed
        nd = subprocess.Popen(["setpriv", "--reuid", "nobody", "--regid", "nogroup",
                               "--clear-groups", USER_PY, "-c",
                               "import ctypes,sys,time; ctypes.CDLL(None).prctl(4,0,0,0,0); "
                               "print('ready', flush=True); time.sleep(60)"],
                              stdout=subprocess.PIPE, text=True)
        nd.stdout.readline()
        try:
            for verb in (["list", nd.pid], ["enable", nd.pid, "--all"],
                         ["sample", nd.pid, "--duration", "1"]):
                r = cli(d, *verb, user="nobody")
                check(r.returncode != 0 and "permission denied" in r.stderr,
                      "nobody %s on its non-dumpable process refused: %r"
                      % (verb[0], r.stderr.strip()))
            r = cli(d, "status", "--json", user="nobody")
            check(r.returncode == 0, "status as nobody")
            r = cli(d, "enable", nd.pid, "PythonGC")
            check(r.returncode == 0, "root may profile it: %r" % r.stderr.strip())
            cli(d, "detach", nd.pid)
        finally:
            nd.kill()
            nd.wait()
    finally:
        t.kill()
        p.kill()
        p.wait()


def t_bad_input(d):
    """Every bad input gets an error; a subscriber keeps receiving data meanwhile."""
    p = demo()
    try:
        time.sleep(0.3)
        sub = Client(d)
        check("result" in sub.call("enable", pid=p.pid, features=["Checksum"]), "enable")
        check("result" in sub.call("subscribe", pid=p.pid, interval_ms=100), "subscribe")
        c = Client(d)

        def expect(raw, code, what):
            c.send_raw(raw)
            r = c.read()
            ok = r is not None and r.get("error", {}).get("code") == code
            check(ok, "%s: %s" % (what, r))
            if ok:
                print("    %-24s -> %s: %s" % (what, code, r["error"]["message"]))

        expect(b"{not json\n", "bad_request", "malformed JSON")
        expect(b"[1,2]\n", "bad_request", "not an object")
        expect(b'{"verb":"status"}\n', "bad_request", "no id")
        expect(b'{"id":1,"verb":"frobnicate"}\n', "unknown_verb", "unknown verb")
        expect(b'{"id":2,"verb":"enable","pid":"x","all":true}\n', "bad_request", "pid type")
        expect(b'{"id":3,"verb":"enable","pid":%d,"features":"Cache"}\n' % p.pid,
               "bad_request", "features type")
        expect(b'{"id":4,"verb":"enable","pid":%d,"features":["Nope"]}\n' % p.pid,
               "unknown_name", "unknown feature")
        expect(b'{"id":5,"verb":"enable","pid":999999999,"all":true}\n', "no_such_process",
               "no such pid")
        sl = subprocess.Popen(["sleep", "30"])
        expect(b'{"id":6,"verb":"enable","pid":%d,"all":true}\n' % sl.pid, "no_probes",
               "process without notes")
        sl.kill()
        sl.wait()
        expect(b'{"id":7,"verb":"subscribe","pid":%d,"interval_ms":1}\n' % p.pid,
               "bad_request", "interval too short")
        expect(b'{"id":8,"verb":"stats","pid":' + b"9" * 70000 + b"}\n", "too_long",
               "oversized line")
        r = c.call("status")  # the connection survives the oversized line
        check(r is not None and "result" in r, "connection usable after too_long")
        st = c.call("status")["result"]
        t = next(x for x in st["targets"] if x["pid"] == p.pid)
        check(t["enabled_regions"] == ["compress_verify", "crc"],
              "bad requests changed nothing: %s" % t["enabled_regions"])
        # a flood of connections
        flood = []
        for _ in range(300):
            s = socket.socket(socket.AF_UNIX)
            try:
                s.connect(d.sock)
                flood.append(s)
            except OSError:
                s.close()
        time.sleep(0.3)
        for s in flood:
            s.close()
        time.sleep(0.3)
        got = 0
        deadline = time.time() + 3
        while time.time() < deadline and got < 5:
            x = sub.read()
            if x and "stats" in x:
                got += 1
        check(got >= 5, "subscriber kept receiving during the bad input (%d)" % got)
        r = Client(d).call("status")
        check(r is not None and "result" in r, "daemon serves after the flood")
    finally:
        p.kill()
        p.wait()


def t_sigkill(d):
    """A killed daemon leaves the target running unharmed, without uprobes."""
    dk = Daemon("killed")
    sp = Target("spin")
    check(cli(dk, "enable", sp.pid, "--all").returncode == 0, "enable spin")
    sp.go()
    time.sleep(0.3)
    check(any(b != SHIELD for b in site_bytes(sp.pid)), "probed sites are rewritten")
    t = Target("accuracy", 6, 2)
    check(cli(dk, "enable", t.pid, "--all").returncode == 0, "enable")
    t.go()
    t.warm().go_on()
    time.sleep(0.3)
    dk.p.kill()
    dk.p.wait()
    time.sleep(0.3)
    check(all(b == SHIELD for b in site_bytes(sp.pid)),
          "after SIGKILL of the daemon every site is the original nops again")
    check(sp.p.poll() is None, "spin target still running")
    sp.kill()
    out = t.result()
    check(t.p.returncode == 0 and json.loads(out)["truth"]["flat"]["count"] == 12,
          "target finished normally after the daemon was killed")


TESTS = discover(globals())


# Tests that compare measured times with a truth (the others check exact counts, errors
# and states): on failure, measured once more after a fresh calibration.
TIMED = {t_accuracy, t_offcpu}


def main():
    # FP_TEST_SITE=nop1|nop5 runs the suite at one attach point (default: the daemon's
    # choice by measurement)
    site = os.environ.get("FP_TEST_SITE")
    return run_file("daemon", TESTS, TIMED, ["--site", site] if site else [], stop_check=True)


if __name__ == "__main__":
    sys.exit(main())
