#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Integration tests: the real featprofd (real BPF) on a temporary socket, real
instrumented targets, figures checked through the real CLI and the protocol:
compensated figures against each target's own truth, where probes attach, off-CPU time.
Needs root. usage: test_accuracy.py BUILD_DIR [TEST...]"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (FAILS, Client, Target, check, cli, discover, region, run_file,  # noqa: E402
                     stats)


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


TESTS = discover(globals())

# Tests that compare measured times with a truth (the others check exact counts, errors
# and states): on failure, measured once more after a fresh calibration.
TIMED = {t_accuracy, t_offcpu}


def main():
    # FP_TEST_SITE=nop1|nop5 runs the suite at one attach point (default: the daemon's
    # choice by measurement)
    site = os.environ.get("FP_TEST_SITE")
    return run_file("accuracy", TESTS, TIMED, ["--site", site] if site else [])


if __name__ == "__main__":
    sys.exit(main())
