#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""featprof model and model --plan on made-up run files whose figures follow a known
formula exactly (no daemon, no root): the fit recovers every coefficient, numeric options
are linear in their value, an interaction comes only from a region that names both
options, the plan gives every region every combination of its options and varies every
option, bad files get one line. usage: cli_model.py BUILD_DIR"""
import itertools
import json
import os
import subprocess
import sys
import tempfile

B = sys.argv[1]
FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAILED: " + what)


def model(*args):
    return subprocess.run([B + "/featprof", "model"] + [str(a) for a in args],
                          capture_output=True, text=True)


def run_file(path, config, regions, outside, wall=None, cpu=None):
    """A run file: regions {name: (features, exclusive_ns)}, the wall time their sum plus
    outside (or wall, and the CPU time cpu where given: threads); one feature set per
    region (regions here do not nest)."""
    regs = [{"name": n, "features": f, "count": 1, "exclusive_ns": ns,
             "exclusive_uncertainty_ns": 0} for n, (f, ns) in regions.items()]
    sets = [{"features": f, "ns": ns, "uncertainty_ns": 0} for f, ns in regions.values()
            if ns]
    doc = {"exe": "/made/up", "regions": regs, "feature_sets": sets,
           "run": {"config": config, "wall_ns": wall or outside + sum(ns for _, ns in
                                                                     regions.values()),
                   "exit_status": 0, "command": ["x"]}}
    if cpu:
        doc["run"]["cpu_ns"] = cpu
    with open(path, "w") as f:
        json.dump(doc, f)


def terms(out):
    return {tuple(sorted(t["options"])): t for t in json.loads(out)["terms"]}


def t_binary(t):
    """Binary options X, Y, Z: r_x = 5 + 3 X, r_xy = 2 X Y (the interaction), outside
    = 10 + 4 Z; each configuration once (no residual): exact, intervals of width 0."""
    files = []
    for x, y, z in itertools.product((0, 1), repeat=3):
        p = os.path.join(t, "b%d%d%d.json" % (x, y, z))
        run_file(p, {"X": "on" if x else "off", "Y": str(y), "Z": "true" if z else "false"},
                 {"rx": (["X"], 5e6 + 3e6 * x), "rxy": (["X", "Y"], 2e6 * x * y)},
                 10e6 + 4e6 * z)
        files.append(p)
    r = model(*files, "--json", "--predict", "X=on,Y=1,Z=false")
    check(r.returncode == 0, "binary model: %r" % r.stderr)
    m = json.loads(r.stdout)
    tm = terms(r.stdout)
    want = {(): 15e6, ("X",): 3e6, ("X", "Y"): 2e6, ("Z",): 4e6}
    for k, v in want.items():
        got = tm.get(k, {}).get("influence_ns")
        check(got is not None and abs(got - v) < 1, "term %s = %s (want %g)" % (k, got, v))
    check(all(abs(tm.get(k, {"influence_ns": 0})["influence_ns"]) < 1
              for k in (("Y",), ("X", "Z"), ("Y", "Z"))), "no influence where none is")
    parts = {p["where"]: p["influence_ns"] for p in tm.get(("X", "Y"), {}).get("parts", [])}
    check(abs(parts.get("rxy", 0) - 2e6) < 1 and abs(parts.get("(outside regions)", 0)) < 1,
          "the interaction in region rxy, none outside: %s" % parts)
    p = m["prediction"]
    check(abs(p["wall_ns"] - (15e6 + 3e6 + 2e6)) < 1, "predicted wall %g" % p["wall_ns"])
    fx = {f["name"]: f["ns"] for f in p["features"]}
    check(abs(fx.get("X", 0) - (8e6 + 2e6)) < 1, "feature X = rx + rxy: %s" % fx)
    check(m["loo_mape_pct"]["white_box"] >= 0, "a LOO figure")
    r = model(*files)
    check(r.returncode == 0 and "3 options, 2 regions, 2 feature sets" in r.stdout,
          "the table counts regions and feature sets apart: %r" % r.stdout[:200])
    print("  binary: %d terms, prediction %.3f ms" % (len(tm), p["wall_ns"] / 1e6))


def t_numeric(t):
    """A numeric option N (threads, say) and a binary one: r = 1 + 0.5 N + 0.25 N B;
    the model is linear in N's value; a replicate with noise gives a random part."""
    files = []
    for i, (n, b) in enumerate(itertools.product((1, 2, 4, 8), (0, 1))):
        for rep, noise in enumerate((-1000, 1000)):
            p = os.path.join(t, "n%d_%d_%d.json" % (n, b, rep))
            run_file(p, {"N": str(n), "B": str(b)},
                     {"r": (["N", "B"], 1e6 + 0.5e6 * n + 0.25e6 * n * b + noise)}, 2e6)
            files.append(p)
    r = model(*files, "--json", "--predict", "N=16,B=1")
    check(r.returncode == 0, "numeric model: %r" % r.stderr)
    m = json.loads(r.stdout)
    kinds = {o["name"]: o["kind"] for o in m["options"]}
    check(kinds == {"N": "numeric", "B": "binary"}, "kinds: %s" % kinds)
    tm = terms(r.stdout)
    check(abs(tm[("N",)]["influence_ns"] - 0.5e6) < 10, "N: per unit %g" %
          tm[("N",)]["influence_ns"])
    check(abs(tm[("B", "N")]["influence_ns"] - 0.25e6) < 10, "B*N %g" %
          tm[("B", "N")]["influence_ns"])
    lo, hi = tm[("N",)]["ci95_ns"]
    check(lo < 0.5e6 < hi and hi - lo > 0, "N's interval from the replicates: %s" % [lo, hi])
    w = m["prediction"]["wall_ns"]
    check(abs(w - (3e6 + 8e6 + 4e6)) < 2000, "N=16 extrapolated linearly: %g" % w)


def t_threads(t):
    """Threads that overlap in regions: work (Core) 200 ms on the main thread, filter (A)
    150 ms spread over T threads at once (T = 1, 2, 4: numeric), 10 ms of CPU outside,
    the main thread waits 5 ms more: wall 215 + 150 A / T, CPU 210 + 150 A. The regions
    sum to up to 1.39x the wall: the wall is the CPU time less the threads' overlap
    (150 A (1 - 1/T) - 5, learned), exact here, never negative; regions plus outside (the
    old sum) would predict the one-thread wall for every T."""
    files = []
    for a, n in itertools.product((0, 1), (1, 2, 4)):
        p = os.path.join(t, "t%d%d.json" % (a, n))
        regs = {"work": (["Core"], 200e6), "filter": (["A"], 150e6 * a)}
        run_file(p, {"A": str(a), "T": str(n)}, regs, 0, wall=215e6 + 150e6 * a / n,
                 cpu=210e6 + 150e6 * a)
        files.append(p)
    r = model(*files, "--json", "--predict", "A=1,T=3")
    check(r.returncode == 0, "threads model: %r" % r.stderr)
    m = json.loads(r.stdout)
    p = m["prediction"]
    cpu, wall = 360e6, 265e6
    check(m["wall_model"] == "cpu_less_overlap", "wall model: %s" % m["wall_model"])
    check(abs(p["cpu_ns"] - cpu) < 1e3, "predicted CPU %g (want %g)" % (p["cpu_ns"], cpu))
    check(abs(p["wall_ns"] - wall) < 1e3, "predicted wall %g (want %g)" % (p["wall_ns"], wall))
    check(m["loo_mape_pct"]["white_box"] < 1, "LOO %.2f%%" % m["loo_mape_pct"]["white_box"])
    r = model(*files, "--json", "--predict", "A=1,T=0")
    p = json.loads(r.stdout)["prediction"] if r.returncode == 0 else {"wall_ns": -1}
    check(p["wall_ns"] > 0 and p["black_box_wall_ns"] >= 0,
          "never negative: wall %g, black-box %g" % (p["wall_ns"], p.get("black_box_wall_ns", -1)))
    # without CPU times the runs cannot say: a warning, the additive model
    for f in files:
        d = json.load(open(f))
        del d["run"]["cpu_ns"]
        json.dump(d, open(f, "w"))
    r = model(*files, "--json")
    check(r.returncode == 0 and "overlap on threads" in r.stderr and
          json.loads(r.stdout)["wall_model"] == "regions_plus_outside",
          "no CPU time: warned, additive: %r" % r.stderr)
    print("  threads: wall %.1f ms (want %.1f), CPU %.1f ms, LOO %.3f%%" % (
        m["prediction"]["wall_ns"] / 1e6, wall / 1e6, m["prediction"]["cpu_ns"] / 1e6,
        m["loo_mape_pct"]["white_box"]))


def t_unnamed(t):
    """An option that changes another region's time: enc (feature X) 100 ms + 20 ms with
    X + 19 ms with D, the D filter's own region (D) 7 ms, E nothing; each configuration
    twice with 0.3 ms of noise. enc depends on D, which its features do not name: found,
    reported, in enc's model (so the prediction holds); nothing found for E."""
    files = []
    for x, dd, e, rep in itertools.product((0, 1), (0, 1), (0, 1), (0, 1)):
        p = os.path.join(t, "u%d%d%d%d.json" % (x, dd, e, rep))
        noise = 0.3e6 * (1 if (x + dd + e + rep) % 2 else -1)
        run_file(p, {"X": str(x), "D": str(dd), "E": str(e)},
                 {"enc": (["X"], 100e6 + 20e6 * x + 19e6 * dd + noise),
                  "delta": (["D"], 7e6 * dd)}, 10e6 - noise / 2)
        files.append(p)
    r = model(*files, "--json", "--predict", "X=1,D=1,E=0")
    check(r.returncode == 0, "unnamed model: %r" % r.stderr)
    m = json.loads(r.stdout)
    found = {(u["unit"], u["option"]): u for u in m["unnamed_influences"]}
    enc_d = found.get(("enc", "D"))
    check(enc_d is not None and abs(enc_d["influence_ns"] - 19e6) < 1e6,
          "enc depends on D: %s" % enc_d)
    check(not [k for k in found if k[1] == "E"], "nothing depends on E: %s" % list(found))
    want = 100e6 + 20e6 + 19e6 + 7e6 + 10e6
    got = m["prediction"]["wall_ns"]
    check(abs(got - want) / want < 0.01, "prediction %g (want %g)" % (got, want))
    r = model(*files)
    check("region enc depends on option D, which its features do not name" in r.stdout,
          "said in the table: %r" % r.stdout[-400:])
    print("  unnamed: %s; prediction %.1f ms (want %.1f)" % (
        ", ".join("%s<-%s %.1f ms" % (k[0], k[1], v["influence_ns"] / 1e6)
                  for k, v in found.items()), got / 1e6, want / 1e6))


def t_choices(t):
    """A one-of option (check=none|crc32|sha256; region crc32 names the value, region
    sha256 its NAME=VALUE) and a numeric one (level 1, 5, 9; region match 10 ms + 5 ms a
    level): crc32 30 ms, sha256 60 ms, 20 ms outside. Coded by one indicator a value,
    the baseline (none) left to the intercept; no term multiplies two values of check;
    every coefficient exact; a value no run had is refused in one line."""
    files = []
    for chk, lv in itertools.product(("none", "crc32", "sha256"), (1, 5, 9)):
        p = os.path.join(t, "c-%s-%d.json" % (chk, lv))
        run_file(p, {"check": chk, "level": str(lv)},
                 {"crc32": (["crc32"], 30e6 * (chk == "crc32")),
                  "sha256": (["check=sha256"], 60e6 * (chk == "sha256")),
                  "match": (["level"], 10e6 + 5e6 * lv)}, 20e6)
        files.append(p)
    r = model(*files, "--json", "--predict", "check=sha256,level=3")
    check(r.returncode == 0, "choices model: %r" % r.stderr)
    m = json.loads(r.stdout)
    kinds = {o["name"]: o["kind"] for o in m["options"]}
    check(kinds.get("check=crc32") == "one_of" and kinds.get("level") == "numeric",
          "kinds: %s" % kinds)
    check(not m["not_estimable"], "nothing left out: %s" % m["not_estimable"])
    tm = terms(r.stdout)
    for k, v in {("check=crc32",): 30e6, ("check=sha256",): 60e6, ("level",): 5e6}.items():
        got = tm.get(k, {}).get("influence_ns")
        check(got is not None and abs(got - v) < 1, "term %s = %s (want %g)" % (k, got, v))
    got = m["prediction"]["wall_ns"]
    check(abs(got - 105e6) < 1, "check=sha256,level=3 predicted %g (want 105 ms)" % got)
    r = model(*files, "--predict", "check=md5,level=3")
    check(r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1 and
          "md5" in r.stderr, "an unknown value: one line: %r" % r.stderr)
    print("  choices: %d options coded, check=sha256,level=3 predicted %.1f ms" % (
        len(kinds), got / 1e6))


def t_plan_choices(t):
    """The plan within a one-of group, a numeric option's levels and constraints: check
    is one of none|crc32|sha256, level 1 or 9 (--choices level=1|5|9), mt binary; regions
    crc32 (crc32), sha256 (sha256), match (level), par (mt, crc32); sha256 never with
    level 1, mt only with check=none. Every configuration runs (one check each, the
    constraints hold), every region gets every combination the constraints leave."""
    p = os.path.join(t, "planc.json")
    run_file(p, {"check": "none", "level": "1", "mt": "off"},
             {"crc32": (["crc32"], 1), "sha256": (["sha256"], 1), "match": (["level"], 1),
              "par": (["mt", "crc32"], 1)}, 1)
    args = ["--choices", "check=none|crc32|sha256", "--choices", "level=1|5|9",
            "--constraint", "check=sha256&level=1", "--constraint", "mt=on->check=none"]
    r = model("--plan", p, "--json", *args)
    check(r.returncode == 0, "plan with choices: %r" % r.stderr)
    out = json.loads(r.stdout) if r.returncode == 0 else {"configurations": []}
    confs = out["configurations"]
    check(all(c["check"] in ("none", "crc32", "sha256") and c["level"] in ("1", "9")
              for c in confs), "one check, level 1 or 9: %s" % confs)
    check(not [c for c in confs if c["check"] == "sha256" and c["level"] == "1"],
          "never sha256 with level 1")
    check(not [c for c in confs if c["mt"] == "on" and c["check"] != "none"],
          "mt only with check=none")
    for name, key in (("crc32", lambda c: c["check"] == "crc32"),
                      ("sha256", lambda c: c["check"] == "sha256"),
                      ("match", lambda c: c["level"]),
                      ("par", lambda c: (c["mt"], c["check"] == "crc32"))):
        seen = {key(c) for c in confs}
        want = 3 if name == "par" else 2  # (on, crc32) cannot run
        check(len(seen) == want, "%s: %d of %d combinations: %s" % (name, len(seen), want,
                                                                    seen))
    r = model("--plan", p, "--constraint", "check=md5->nothing")
    check(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1,
          "a bad constraint: one line: %r" % r.stderr)
    print("  plan with choices: %d configurations of %d" % (len(confs),
                                                           out.get("all_combinations", 0)))


def t_misfit(t):
    """Say when the model does not fit: region sq grows with level squared (level 1, 5,
    9, each twice, 0.1 ms of noise) where the model is linear in level; region lin is
    linear in it. sq is said not to fit (its lack of fit far beyond the replicates'
    spread), lin fits; the prediction interval is wider than the fit's own."""
    files = []
    for lv, rep in itertools.product((1, 5, 9), (0, 1)):
        p = os.path.join(t, "m%d%d.json" % (lv, rep))
        noise = 0.1e6 * (1 if rep else -1)
        run_file(p, {"level": str(lv)},
                 {"sq": (["level"], 10e6 + 1e6 * lv * lv + noise),
                  "lin": (["level"], 10e6 + 2e6 * lv - noise)}, 5e6)
        files.append(p)
    r = model(*files, "--json", "--predict", "level=3")
    check(r.returncode == 0, "misfit model: %r" % r.stderr)
    m = json.loads(r.stdout)
    fit = {(f["kind"], f["unit"]): f for f in m["fit"]}
    check(not fit[("region", "sq")]["fits"], "sq does not fit: %s" % fit[("region", "sq")])
    check(fit[("region", "lin")]["fits"], "lin fits: %s" % fit[("region", "lin")])
    p = m["prediction"]
    ci, pi = p["wall_ci95_ns"], p["wall_pi95_ns"]
    check(pi[0] < ci[0] and pi[1] > ci[1], "prediction interval %s wider than %s" % (pi, ci))
    r = model(*files)
    check("region sq does not fit" in r.stdout, "said: %r" % r.stdout[-500:])
    print("  misfit: sq lack of fit %.2f ms RMS against %.2f ms replicates, LOO %.1f%%; "
          "lin %.1f%%" % (fit[("region", "sq")]["lack_of_fit_rms_ns"] / 1e6,
                          fit[("region", "sq")]["pure_error_rms_ns"] / 1e6,
                          fit[("region", "sq")]["loo_error_pct"],
                          fit[("region", "lin")]["loo_error_pct"]))


def t_plan(t):
    """ConfigCrusher-like: 10 options, regions naming at most two: every region gets every
    combination of its options; every option varies independently for the outside model;
    far fewer than 1,024 configurations."""
    opts = ["O%d" % i for i in range(10)]
    regions = {"r01": (["O0", "O1"], 1), "r23": (["O2", "O3"], 1), "r4": (["O4"], 1),
               "r56": (["O5", "O6"], 1), "rbase": (["Core"], 1)}
    p = os.path.join(t, "plan.json")
    run_file(p, {o: "0" for o in opts}, regions, 1)
    r = model("--plan", p, "--json")
    check(r.returncode == 0, "plan: %r" % r.stderr)
    confs = json.loads(r.stdout)["configurations"]
    for name, (feats, _) in regions.items():
        fo = [f for f in feats if f in opts]
        seen = {tuple(c[f] for f in fo) for c in confs}
        check(len(seen) == 2 ** len(fo), "%s: %d of %d combinations" % (name, len(seen),
                                                                       2 ** len(fo)))
    # the outside model: [1, O0..O9] of full rank
    rows = [[1] + [int(c[o]) for o in opts] for c in confs]
    rank, cols = 0, [list(x) for x in zip(*rows)]
    basis = []
    for v in cols:
        for q in basis:
            d = sum(a * b for a, b in zip(q, v))
            v = [a - d * b for a, b in zip(v, q)]
        nv = sum(a * a for a in v) ** 0.5
        if nv > 1e-9:
            basis.append([a / nv for a in v])
            rank += 1
    check(rank == 11, "every option varies independently: rank %d of 11" % rank)
    print("  plan: %d configurations of 1024" % len(confs))
    check(len(confs) <= 12, "at most 12 configurations: %d" % len(confs))


def t_bad(t):
    """Bad input: one line, nonzero."""
    p = os.path.join(t, "bad.json")
    with open(p, "w") as f:
        f.write("{not json")
    good = os.path.join(t, "b000.json")
    for args, what in (([p, good], "not JSON"), ([good], "one file"),
                       ([good, good, "--predict", "Q=1"], "unknown option"),
                       ([good, good, "--predict", "X=on"], "missing values"),
                       (["--plan"], "no file")):
        r = model(*args)
        check(r.returncode != 0 and r.stderr.count("\n") == 1,
              "%s: one line: rc %d %r" % (what, r.returncode, r.stderr))
    q = os.path.join(t, "other.json")
    run_file(q, {"X": "1"}, {"rx": (["X"], 1)}, 1)
    r = model(good, q)
    check(r.returncode != 0 and "options differ" in r.stderr, "different options: %r" %
          r.stderr)


def t_parallel_work(t):
    """The threads' overlap follows the work the threads get, whatever makes it: a region
    (features L and I) of 100 + 300 L - 40 I - 60 L I ms spread over T threads (1 or 2),
    50 ms on the main thread. Fitted without L=1,I=1,T=2 and asked for it: the wall is
    50 + 300 / 2 = 200 ms. An overlap linear in T's products with each option alone
    (T L, T I) says 170 (its L I T is missing); one in the region's work times 1 - 1/T
    is exact."""
    files = []
    for l, i, n in itertools.product((0, 1), (0, 1), (1, 2)):
        if (l, i, n) == (1, 1, 2):
            continue
        p = os.path.join(t, "w%d%d%d.json" % (l, i, n))
        work = 100e6 + 300e6 * l - 40e6 * i - 60e6 * l * i
        run_file(p, {"L": str(l), "I": str(i), "T": str(n)},
                 {"main": (["Core"], 50e6), "compress": (["L", "I"], work)}, 0,
                 wall=50e6 + work / n, cpu=50e6 + work)
        files.append(p)
    r = model(*files, "--json", "--parallel", "T", "--predict", "L=1,I=1,T=2")
    check(r.returncode == 0, "parallel work model: %r" % r.stderr)
    p = json.loads(r.stdout)["prediction"] if r.returncode == 0 else {"wall_ns": -1}
    check(abs(p["wall_ns"] - 200e6) < 2e6, "predicted wall %.1f ms (want 200)" %
          (p["wall_ns"] / 1e6))
    print("  parallel work: wall %.1f ms (want 200.0)" % (p["wall_ns"] / 1e6))


def t_plan_next(t):
    """model --plan --next: runs where A and B always move together and C never moves
    leave the outside model's A, B and C unidentified; the plan's next runs separate A
    from B and vary C within the constraint (never A=on with C=on), and with them (made
    up by the same formula) the model predicts a configuration the first runs could not;
    the mean standard error falls, every configuration predictable."""
    def f(a, b, c, d):
        return ({"ra": (["A"], 5e6 + 3e6 * a), "rb": (["B"], 2e6 + 1e6 * b)},
                10e6 + 4e6 * c + 0.5e6 * d + 2e6 * b)
    files = []
    for i, (a, d) in enumerate(((0, 1), (1, 4), (0, 8), (1, 1), (0, 4))):
        p = os.path.join(t, "n%d.json" % i)
        run_file(p, {"A": "on" if a else "off", "B": "on" if a else "off",
                     "C": "off", "D": str(d)}, *f(a, a, 0, d))
        files.append(p)
    args = ["--constraint", "A=on&C=on", "--choices", "D=1|4|8"]
    r = model("--plan", "--next", "3", *files, "--json", *args)
    check(r.returncode == 0, "plan --next: %r" % r.stderr)
    out = json.loads(r.stdout) if r.returncode == 0 else {"next": []}
    confs = [x["config"] for x in out["next"]]
    print("  plan --next 3: %s; not predictable %s -> %s" % (
        confs, out.get("unpredictable_before"), out.get("unpredictable_after")))
    check(len(confs) == 3 and not [c for c in confs if c["A"] == "on" and c["C"] == "on"],
          "three runs, none with A=on and C=on: %s" % confs)
    check([c for c in confs if c["A"] != c["B"]] and [c for c in confs if c["C"] == "on"],
          "A apart from B, and C on, in the plan: %s" % confs)
    check(out.get("unpredictable_before", 0) > 0 and out.get("unpredictable_after") == 0,
          "every configuration predictable after the plan: %s -> %s" % (
              out.get("unpredictable_before"), out.get("unpredictable_after")))
    check(out.get("candidates") == 24 - 6, "18 configurations keep the constraint: %s" %
          out.get("candidates"))
    for i, c in enumerate(confs):
        p = os.path.join(t, "nx%d.json" % i)
        v = [1 if c[k] == "on" else 0 for k in "ABC"]
        run_file(p, c, *f(v[0], v[1], v[2], float(c["D"])))
        files.append(p)
    r = model(*files, "--predict", "A=off,B=on,C=on,D=8", "--json", *args[2:])
    p = json.loads(r.stdout)["prediction"] if r.returncode == 0 else {"wall_ns": -1}
    want = sum(ns for _, ns in f(0, 1, 1, 8)[0].values()) + f(0, 1, 1, 8)[1]
    check(abs(p["wall_ns"] - want) < 0.01 * want, "predicted %.2f ms, want %.2f (%s)" % (
        p["wall_ns"] / 1e6, want / 1e6, r.stderr.strip()))
    r = model("--plan", "--next", "2", *files[:5], "--json", *args)
    se = json.loads(r.stdout) if r.returncode == 0 else {}
    r = model("--plan", "--next", "0", *files[:5])
    check(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1,
          "--next 0: one line: %r" % r.stderr)
    r = model("--plan", "--next", "2", files[0])
    check(r.returncode == 2 and "two run files" in r.stderr, "--next of one run: %r" %
          r.stderr)
    r = model("--plan", "--next", "2", *files[:5], "--constraint", "E=on&A=on")
    check(r.returncode == 2 and "no option" in r.stderr, "a constraint on no option: %r" %
          r.stderr)
    print("  predicted %.2f ms (want %.2f) from the plan's runs; mean SE %.3f -> %.3f ms" % (
        p["wall_ns"] / 1e6, want / 1e6, se.get("mean_se_ns_before", 0) / 1e6,
        se.get("mean_se_ns_after", 0) / 1e6))


def main():
    t = tempfile.mkdtemp(prefix="featprof-model-unit-")
    for fn in (t_binary, t_numeric, t_threads, t_parallel_work, t_unnamed, t_choices,
               t_misfit, t_plan, t_plan_choices, t_plan_next, t_bad):
        fn(t)
    print("cli_model: %d failed" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
