#!/usr/bin/env python3
"""Validates featprof diff the way shared/BACKGROUND.md's "Evaluation ideas" ask: a target
with synthetic regressions (busy-waits of 0.1, 1 and 10 ms in chosen regions, under a flag),
measured before and after, repeated. Reports precision and recall of the flagged regions and
features, the error of the measured change, and false alarms in the no-change case.

usage: regress_eval.py BUILD [--repeats N] [--duration S] [--out FILE.md] [--check]
--check exits 1 when a 1 ms or 10 ms regression is missed or the no-change case alarms.
Needs root (starts its own featprofd). Before and after run side by side (see measure)."""
import argparse, json, os, signal, subprocess, sys, tempfile, time

ap = argparse.ArgumentParser()
ap.add_argument("build")
ap.add_argument("--repeats", type=int, default=3)
ap.add_argument("--duration", type=int, default=3)
ap.add_argument("--out")
ap.add_argument("--check", action="store_true")
a = ap.parse_args()
B = a.build
FEATURE = {"parse": "Query", "plan": "Query", "execute": "Exec", "scan": "Exec",
           "store": "Storage", "log": "Logging"}
# (label, region, added microseconds); None = no change (two runs of the same build)
CASES = [("no change", None, 0), ("+0.1 ms in plan", "plan", 100),
         ("+0.1 ms in log", "log", 100), ("+1 ms in store", "store", 1000),
         ("+1 ms in scan", "scan", 1000), ("+10 ms in parse", "parse", 10000)]
TMP = tempfile.mkdtemp(prefix="fp-regress-")
SOCK = os.path.join(TMP, "d.sock")


def fp(*args, check=True):
    r = subprocess.run([B + "/featprof", "--socket", SOCK] + list(args), capture_output=True,
                       text=True)
    if check and r.returncode not in (0, 1):
        raise RuntimeError("featprof %s: %s" % (" ".join(args), r.stderr.strip()))
    return r


def measure(flags_a, flags_b, out_a, out_b):
    """Before and after at the same time, one process each: the machine's speed drifts
    between runs (other tenants, frequency) by more than the threshold at times, and a
    drift common to both is then no difference."""
    ps = [subprocess.Popen([B + "/tests/targets/regress"] + f, stdout=subprocess.PIPE,
                           text=True) for f in (flags_a, flags_b)]
    try:
        for p in ps:
            p.stdout.readline()
            fp("enable", str(p.pid), "--all")
        time.sleep(0.5)  # first hits of the sites (the nop5 rewrite) stay out
        saves = [subprocess.Popen([B + "/featprof", "--socket", SOCK, "save", str(p.pid),
                                   "--duration", str(a.duration), "--interval", "200",
                                   "-o", o], stderr=subprocess.PIPE, text=True)
                 for p, o in zip(ps, (out_a, out_b))]
        for s in saves:
            if s.wait() != 0:
                raise RuntimeError("featprof save: " + s.stderr.read().strip())
    finally:
        for p in ps:
            p.kill()
            p.wait()
            fp("detach", str(p.pid), check=False)


def truth_mean(save, region):
    n = sum(iv["regions"][region]["count"] for iv in save["intervals"])
    x = sum(iv["regions"][region]["exclusive_ns"] for iv in save["intervals"])
    return x / n


d = subprocess.Popen([B + "/featprofd", "--socket", SOCK, "-q"], stderr=subprocess.DEVNULL)
for _ in range(200):
    if os.path.exists(SOCK):
        break
    time.sleep(0.05)
rows, tp, fpos, fn, errs, alarms_nochange, missed_big = [], 0, 0, 0, [], 0, 0
try:
    for rep in range(a.repeats):
        for label, region, us in CASES:
            fa, fb = os.path.join(TMP, "a.json"), os.path.join(TMP, "b.json")
            measure([], ["%s=%d" % (region, us)] if region else [], fa, fb)
            r = fp("diff", fa, fb, "--json")
            res = json.loads(r.stdout)
            flagged = {(x["kind"], x["name"]) for x in res["figures"] if x["regression"]}
            want = {("region", region), ("feature", FEATURE[region])} if region else set()
            t, f_, n_ = len(flagged & want), len(flagged - want), len(want - flagged)
            tp, fpos, fn = tp + t, fpos + f_, fn + n_
            err = None
            if region:
                fig = next(x for x in res["figures"] if x["name"] == region)
                err = fig["change"] / 1000.0 - us  # measured minus inserted, in us
                errs.append((label, abs(err) / us))
                missed_big += us >= 1000 and ("region", region) not in flagged
            else:
                alarms_nochange += len(flagged)
            rows.append((rep + 1, label, sorted("%s %s" % k for k in flagged), t, f_, n_,
                         None if err is None else err, r.returncode))
            print("run %d %-16s flagged %-40s exit %d%s" % (
                rep + 1, label, ", ".join(sorted("%s %s" % k for k in flagged)) or "-",
                r.returncode, "" if err is None else "  change error %+.1f us" % err),
                flush=True)
finally:
    d.send_signal(signal.SIGTERM)
    d.wait(10)
prec = tp / (tp + fpos) if tp + fpos else 1.0
rec = tp / (tp + fn) if tp + fn else 1.0
print("precision %.3f (%d of %d flagged), recall %.3f (%d of %d inserted); no-change alarms %d"
      % (prec, tp, tp + fpos, rec, tp, tp + fn, alarms_nochange))
if a.out:
    L = ["| run | case | flagged (region/feature) | TP | FP | FN | measured − inserted (µs) | exit |",
         "|---|---|---|---|---|---|---|---|"]
    for rep, label, fl, t, f_, n_, err, rc in rows:
        L.append("| %d | %s | %s | %d | %d | %d | %s | %d |" % (
            rep, label, ", ".join(fl) or "—", t, f_, n_,
            "—" if err is None else "%+.1f" % err, rc))
    L.append("")
    L.append("Precision %.3f (%d of %d flagged figures were inserted regressions), recall %.3f "
             "(%d of %d inserted regressions flagged, region and its feature counted apart); "
             "false alarms in the no-change case: %d." % (prec, tp, tp + fpos, rec, tp, tp + fn,
                                                          alarms_nochange))
    with open(a.out, "w") as f:
        f.write("\n".join(L) + "\n")
if a.check and (missed_big or alarms_nochange):
    sys.exit(1)
