#!/usr/bin/env python3
"""featprof diff on crafted save files: Welch's t against textbook values, the exit codes
(0 none, 1 regression, 2 bad input) and one-line errors for corrupt or foreign files."""
import json, os, subprocess, sys, tempfile

B = sys.argv[1] if len(sys.argv) > 1 else "build"
fails = 0


def check(cond, what):
    global fails
    print("  %s: %s" % ("ok" if cond else "FAILED", what))
    fails += not cond


def save(path, excl_per_instance, feat_share, preempted=None):
    ivs = [{"elapsed_ns": 1000000000,
            "regions": {"r": {"count": 10, "inclusive_ns": 10 * v, "exclusive_ns": 10 * v}},
            "features": {"F": {"ns": s * 1e9}}}
           for v, s in zip(excl_per_instance, feat_share)]
    for iv, p in zip(ivs, preempted or []):
        iv["regions"]["r"]["exclusive_preempted_ns"] = 10 * p
    with open(path, "w") as f:
        json.dump({"format": "featprof-save", "version": 1, "pid": 1, "comm": "x",
                   "taken": 0, "interval_ms": 1000, "intervals": ivs, "stats": {}}, f)


def diff(*args):
    return subprocess.run([B + "/featprof", "diff"] + list(args), capture_output=True,
                          text=True)


d = tempfile.mkdtemp()
A, Bf, C = (os.path.join(d, n) for n in ("a.json", "b.json", "c.json"))
# A = 1..5, B = 3..7: means 3 and 5, variances 2.5, se 1, t = 2, df = 8.
# Two-sided p(t=2, df=8) = 0.0805; t(0.975, 8) = 2.306: CI [-0.306, 4.306].
save(A, [1, 2, 3, 4, 5], [.1, .1, .1, .1, .1])
save(Bf, [3, 4, 5, 6, 7], [.1, .1, .1, .1, .1])
r = diff(A, Bf, "--json")
out = json.loads(r.stdout)
fig = {x["name"]: x for x in out["figures"]}["r"]
print("    t=2 df=8: p %.5f (textbook 0.0805), CI [%.4f, %.4f] (textbook [-0.306, 4.306])"
      % (fig["p"], fig["ci95"][0], fig["ci95"][1]))
check(abs(fig["p"] - 0.0805) < 5e-4 and abs(fig["df"] - 8) < 1e-9, "Welch p and df")
check(abs(fig["ci95"][0] + 0.306) < 2e-3 and abs(fig["ci95"][1] - 4.306) < 2e-3, "95% CI")
check(r.returncode == 0 and out["regressions"] == 0, "not significant at 0.01: exit 0")
# Unequal variances: A = 1..5 (var 2.5), B = 10,10.1,..: Welch df < 8.
save(C, [10, 10.1, 9.9, 10.05, 9.95], [.2, .21, .19, .2, .2])
r = diff(A, C, "--json")
out = json.loads(r.stdout)
figs = {x["name"]: x for x in out["figures"]}
print("    unequal variances: df %.3f, p %.2g; feature share +%.0f%%"
      % (figs["r"]["df"], figs["r"]["p"], 100 * figs["F"]["relative"]))
check(r.returncode == 1 and figs["r"]["regression"] and figs["F"]["regression"]
      and 4 <= figs["r"]["df"] < 4.1, "regression flagged: exit 1, df near 4")
r = diff(C, A)
check(r.returncode == 0 and "0 regressions flagged" in r.stdout, "an improvement is no regression")
r = diff(A, C, "--threshold", "1000")
check(r.returncode == 0, "threshold above the change: exit 0")
# D: A's work plus 5 per instance of waiting for a CPU (preempted): the machine's load,
# not a regression; E: the same plus 5 of the program's own: a regression.
D, E = os.path.join(d, "d.json"), os.path.join(d, "e.json")
save(D, [6, 7, 8, 9, 10], [.1] * 5, preempted=[5] * 5)
save(E, [11, 12, 13, 14, 15], [.1] * 5, preempted=[5] * 5)
r = diff(A, D, "--json")
fig = {x["name"]: x for x in json.loads(r.stdout)["figures"]}["r"]
check(r.returncode == 0 and abs(fig["change"]) < 1e-9,
      "preempted time left out: change %g, exit %d" % (fig["change"], r.returncode))
r = diff(A, E, "--json")
fig = {x["name"]: x for x in json.loads(r.stdout)["figures"]}["r"]
check(r.returncode == 1 and abs(fig["change"] - 5) < 1e-9,
      "the program's own time counts: change %g, exit %d" % (fig["change"], r.returncode))
# Feature shares without preemption. G0: F 0.5 s and base 0.5 s of the measured time:
# share 0.5. G1: the same work, with F preempted 0.2 s more: (0.7-0.2)/(0.5+0.7-0.2) =
# 0.5, no change. H: F's own time grows to 0.6 s of 1.0: share 0.6, a regression.
def save_f(path, f_ns, f_pre, base):
    ivs = [{"elapsed_ns": 1000000000, "regions": {},
            "features": {"F": {"ns": f * 1e9, "preempted_ns": p * 1e9}},
            "measured_ns": (b + f - p) * 1e9}
           for f, p, b in zip(f_ns, f_pre, base)]
    with open(path, "w") as fh:
        json.dump({"format": "featprof-save", "version": 1, "pid": 1, "comm": "x",
                   "taken": 0, "interval_ms": 1000, "intervals": ivs, "stats": {}}, fh)


G0, G1, H = (os.path.join(d, n) for n in ("g0.json", "g1.json", "h.json"))
save_f(G0, [.5, .51, .49, .5, .5], [0] * 5, [.5, .49, .51, .5, .5])
save_f(G1, [.7, .71, .69, .7, .7], [.2] * 5, [.5, .49, .51, .5, .5])  # F preempted 0.2 s
save_f(H, [.6, .61, .59, .6, .6], [0] * 5, [.4, .39, .41, .4, .4])
r = diff(G0, G1, "--json")
fig = {x["name"]: x for x in json.loads(r.stdout)["figures"]}["F"]
check(r.returncode == 0 and abs(fig["change"]) < 1e-9,
      "a feature's preempted time is not its cost: share change %g" % fig["change"])
r = diff(G0, H, "--json")
fig = {x["name"]: x for x in json.loads(r.stdout)["figures"]}["F"]
check(r.returncode == 1 and abs(fig["change"] - 0.1) < 1e-9,
      "a feature's own time is: share change %g" % fig["change"])
for content, what in (("{", "corrupt"), ('{"format":"featprof-export","version":1}', "foreign"),
                      ('{"format":"featprof-save","version":1,"intervals":[]}', "too short")):
    bad = os.path.join(d, "bad.json")
    with open(bad, "w") as f:
        f.write(content)
    r = diff(A, bad)
    check(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and bad in r.stderr,
          "%s file: exit 2, one line: %r" % (what, r.stderr.strip()))
r = diff(A, os.path.join(d, "missing.json"))
check(r.returncode == 2 and "cannot read" in r.stderr, "missing file: exit 2")
r = diff(A, Bf, "--threshold", "x")
check(r.returncode == 2, "bad threshold: exit 2")
print("cli_diff: %d failed" % fails)
sys.exit(1 if fails else 0)
