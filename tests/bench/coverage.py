#!/usr/bin/env python3
"""Do featprof's stated uncertainties cover its errors? (docs/TRACING.md, "Coverage")

Truth targets (tests/bench/busyloop.c --truth: each region busy-waits to a clock
deadline and times its own body inside, the probes' time left out; 20 iterations of
warm-up, then featprof's figures reset), flat and nested,
region lengths 1 us to 1 ms, 1 and 4 threads, on a quiet machine and with a CPU-bound
process beside. For each compensated figure (outer inclusive; nested: outer exclusive,
inner inclusive): error = featprof's figure - the truth, stated = its *_uncertainty_ns,
and whether |error| <= 2 x stated. A figure the daemon marks probe_cost_dominates claims
only that its time is below its uncertainty: it is covered when the truth is.

usage: coverage.py BUILD [--repeats N] [--quick] [--min F] [--out FILE.md] [--json FILE]
Needs root (starts its own featprofd). --quick: 1 repeat, quiet only (about 30 s).
--min F: exit 1 when fewer than the share F of the figures are covered (make check runs
--quick --min 0.75: the stated uncertainties must hold what they claim)."""
import argparse, json, os, signal, subprocess, sys, tempfile, time

ap = argparse.ArgumentParser()
ap.add_argument("build")
ap.add_argument("--repeats", type=int, default=2)
ap.add_argument("--quick", action="store_true")
ap.add_argument("--out")
ap.add_argument("--json")
ap.add_argument("--min", type=float, default=0)
a = ap.parse_args()
B = a.build
BL = B + "/bench/busyloop_fp"
TMP = tempfile.mkdtemp(prefix="fp-coverage-")
SOCK = os.path.join(TMP, "d.sock")


def fp(*args):
    r = subprocess.run([B + "/featprof", "--socket", SOCK] + [str(x) for x in args],
                       capture_output=True, text=True, timeout=120)
    if r.returncode:
        raise RuntimeError("featprof %s: %s" % (" ".join(map(str, args)), r.stderr.strip()))
    return r.stdout


def run(ns, nested, threads, pair_ns):
    """One truth run: its figures (name, featprof's, stated, truth, dominated)."""
    per = ns * (2 if nested else 1) + pair_ns * (2 if nested else 1)
    n = max(30, int(0.4e9 / per / threads))
    p = subprocess.Popen([BL, str(n), "0", "--truth", str(ns), "--threads", str(threads),
                          "--wait", "--warm", "20"] + (["--nested"] if nested else []),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    pid = int(p.stdout.readline().split()[1])
    fp("enable", pid, "Accuracy")
    p.stdin.write("go\n")
    p.stdin.flush()
    assert p.stdout.readline().strip() == "warm"
    fp("reset", pid)  # the first hits (the out-of-line area, a rewrite) stay out
    p.stdin.write("go\n")
    p.stdin.flush()
    out = json.loads(p.stdout.read().strip().splitlines()[-1])
    p.wait(120)
    st = json.loads(fp("stats", pid, "--json"))
    fp("detach", pid)
    regs = {r["name"]: r for r in st["regions"]}
    o, i = regs["acc_outer"], regs["acc_inner"]
    t_o, t_i = out["truth_outer_ns"], out["truth_inner_ns"]
    figs = [("outer incl", o["inclusive_ns"], o["inclusive_uncertainty_ns"], t_o,
             o.get("probe_cost_dominates", False), o["count"])]
    if nested:
        figs += [("outer excl", o["exclusive_ns"], o["exclusive_uncertainty_ns"], t_o - t_i,
                  o.get("exclusive_probe_cost_dominates", False), o["count"]),
                 ("inner incl", i["inclusive_ns"], i["inclusive_uncertainty_ns"], t_i,
                  i.get("probe_cost_dominates", False), i["count"])]
    return figs


def covered(got, stated, truth, dominated):
    if dominated:  # claims: somewhere in [0, stated]
        return truth <= 2 * stated
    return abs(got - truth) <= 2 * stated


d = subprocess.Popen([B + "/featprofd", "--socket", SOCK, "-q"] +
                     (["--site", os.environ["FP_SITE"]] if os.environ.get("FP_SITE") else []),
                     stderr=subprocess.DEVNULL)
for _ in range(400):
    if os.path.exists(SOCK):
        break
    time.sleep(0.05)
rows, hog = [], None
try:
    status = json.loads(fp("status", "--json"))
    cal = status["calibration"]
    pair = cal.get("pair_ns", 0) or 1000
    print("calibration: %s, pair %.0f ns (sd %.0f), bias %.0f ns (sd %.0f); pair by gap: %s"
          % (status["attach"]["attach_point"], pair, cal.get("pair_sd_ns", 0),
             cal.get("bias_ns", 0), cal.get("bias_sd_ns", 0),
             ", ".join("%s %.0f" % ("cold" if p["cold"] else "%g us" % (p["gap_ns"] / 1e3),
                                    p["pair_ns"]) for p in cal.get("gap_points", []))),
          flush=True)
    loads = (False,) if a.quick else (False, True)
    for rep in range(1 if a.quick else a.repeats):
        for load in loads:
            if load:
                hog = subprocess.Popen(["sh", "-c", "while :; do :; done"])
            for ns in (1000, 10000, 100000, 1000000):
                for nested in (False, True):
                    for threads in (1, 4):
                        for name, got, stated, truth, dom, count in run(ns, nested, threads,
                                                                       pair):
                            err = got - truth
                            ok = covered(got, stated, truth, dom)
                            rows.append(dict(load=load, ns=ns, nested=nested,
                                             threads=threads, figure=name, count=count,
                                             err_pct=100 * err / truth if truth else 0,
                                             stated_pct=100 * stated / truth if truth else 0,
                                             ratio=abs(err) / stated if stated else None,
                                             dominated=dom, covered=ok))
                            print("%s %7d ns %-6s %dT %-10s err %+8.2f%%  stated ±%7.2f%%"
                                  "%s %s" % ("load " if load else "quiet", ns,
                                             "nested" if nested else "flat", threads, name,
                                             rows[-1]["err_pct"], rows[-1]["stated_pct"],
                                             " dominated" if dom else "",
                                             "ok" if ok else "NOT COVERED"), flush=True)
            if hog:
                hog.kill()
                hog.wait()
                hog = None
finally:
    if hog:
        hog.kill()
    d.send_signal(signal.SIGTERM)
    d.wait(10)

cov = sum(r["covered"] for r in rows) / len(rows)
print("coverage: %d of %d figures (%.1f%%) within 2x their stated uncertainty"
      % (sum(r["covered"] for r in rows), len(rows), 100 * cov))
if a.json:
    with open(a.json, "w") as f:
        json.dump({"pair_ns": pair, "rows": rows, "coverage": cov}, f)
if a.out:
    u = os.uname()
    L = ["# Coverage of the stated uncertainty", "",
         "Produced by `sudo make bench` (`tests/bench/coverage.py BUILD --repeats %d --out "
         "docs/COVERAGE.md`), %s. Machine: %s, %d CPUs, kernel %s. Calibration at the start: "
         "%s, pair %.0f ns. What it measures and what is left: docs/TRACING.md, "
         "\"Coverage\"." % (a.repeats, time.strftime("%Y-%m-%d"), u.machine, os.cpu_count(),
                            u.release, status["attach"]["attach_point"], pair), "",
         "| load | region | threads | figure | error | stated ± | covered |",
         "|---|---|---|---|---|---|---|"]
    for r in rows:
        L.append("| %s | %s %s | %d | %s | %+.2f%% | %s%.2f%% | %s |" % (
            "busy" if r["load"] else "quiet", "%g us" % (r["ns"] / 1000),
            "nested" if r["nested"] else "flat", r["threads"], r["figure"], r["err_pct"],
            "< " if r["dominated"] else "", r["stated_pct"], "yes" if r["covered"] else "**no**"))
    L.append("")
    L.append("Coverage: %d of %d figures (%.1f%%) with |error| <= 2 x stated."
             % (sum(r["covered"] for r in rows), len(rows), 100 * cov))
    with open(a.out, "w") as f:
        f.write("\n".join(L) + "\n")
if cov < a.min:
    print("coverage below %.0f%%: the stated uncertainties do not hold their errors"
          % (100 * a.min))
    sys.exit(1)
