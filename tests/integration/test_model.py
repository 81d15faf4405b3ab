#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Integration tests of featprof run and featprof model (issue 25; cli/commands/run.c, cli/model/model.c,
daemon/groups/groups.c's runs): whole runs measured from their exec, as root and as nobody, and
performance-influence models of tests/targets/configurable, whose influences are known.
The real featprofd on a temporary socket, as in test_daemon.py. Needs root.
usage: test_model.py BUILD_DIR [TEST...]"""
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from harness import check, cli, region  # noqa: E402

TG = h.B + "/tests/targets/"
OPTS = "ABCDE"
UNIT_MS = 2.0
PROG = "configurable"
# configurable's known influences, in units (its header comment)
TRUTH = {(): 25, ("A",): 30, ("B",): 15, ("A", "B"): 10, ("C",): 20, ("D",): 12, ("E",): 0}
INSTANCES = {"compress": 300, "encrypt": 150, "seal": 100, "cache": 200}


def tmpdir():
    t = tempfile.mkdtemp(prefix="featprof-model-")
    os.chmod(t, 0o777)
    return t


def config(bits):
    return ",".join("%s=%d" % (o, b) for o, b in zip(OPTS, bits))


def run(d, out, bits, user=None, prog=PROG, *extra):
    """featprof run of configurable under the configuration bits, -o out."""
    c = config(bits)
    exe = h.for_user(TG + prog) if user else TG + prog
    return cli(d, "run", "--config", c, "-o", out, "--", exe, c,
               int(UNIT_MS * 1000), *extra, user=user, timeout=60)


def counts(f):
    with open(f) as fh:
        st = json.load(fh)
    return {r["name"]: r["count"] for r in st["regions"]}, st


def t_run_counts(d):
    """featprof run: every region of the run counted from the first event, the forked
    child's included; the file has the run's configuration, wall time, exit status."""
    t = tmpdir()
    r = run(d, t + "/ab.json", (1, 1, 0, 0, 0))
    check(r.returncode == 0, "run ok: %r" % r.stderr)
    n, st = counts(t + "/ab.json")
    print("    A=1,B=1: %s; wall %.1f ms" % (n, st["run"]["wall_ns"] / 1e6))
    check(n.get("load") == 200 and n.get("compress") == 300 and n.get("seal") == 100,
          "the parent's regions exact: %s" % n)
    check(n.get("encrypt") == 150, "the forked child's 150 encrypt: %s" % n)
    check(st["run"]["config"] == {"A": "1", "B": "1", "C": "0", "D": "0", "E": "0"},
          "configuration in the file")
    check(st["run"]["exit_status"] == 0 and st["run"]["wall_ns"] > 75e6,
          "exit status, wall time >= the 75 units spun: %s" % st["run"])
    check("featprof run:" in r.stderr and "compress" in r.stderr, "the table on stderr")
    check("featprof run:" not in r.stdout, "nothing of featprof's on stdout: %r"
          % r.stdout[:200])
    # the program's stdout is its own (prog > file gets no table in the file)
    r = cli(d, "run", "--", "/bin/sh", "-c", "echo out; echo err >&2")
    check(r.returncode == 0 and r.stdout == "out\n", "the program's stdout alone: %r"
          % r.stdout)
    check("err" in r.stderr and "featprof run:" in r.stderr, "its stderr, then the table")
    r = cli(d, "run", "--json", "--", "/bin/sh", "-c", "echo out")
    check(r.stdout == "out\n" and json.loads(r.stderr.splitlines()[-1]).get("run"),
          "--json on stderr too: %r" % r.stdout)


def t_run_status(d):
    """The exit status is the command's; a command that cannot run says so in one line."""
    r = cli(d, "run", "--", "/bin/sh", "-c", "exit 3")
    check(r.returncode == 3, "exit 3 passed through: %d %r" % (r.returncode, r.stderr))
    r = cli(d, "run", "--", "/nonexistent/prog")
    check(r.returncode != 0 and r.stderr.count("\n") == 1 and "nonexistent" in r.stderr,
          "a missing command: one line: %r" % r.stderr)
    r = cli(d, "run", "--config", "A", "--", "/bin/true")
    check(r.returncode == 2 and "NAME=VALUE" in r.stderr, "a bad --config: %r" % r.stderr)


def t_run_equals_stats(d):
    """A run's totals equal stats of the same process: a service run whose parent is
    read by stats while it waits, then forks three children of five instances each."""
    t = tmpdir()
    p = subprocess.Popen([h.B + "/featprof", "--socket", d.sock, "run", "-o", t + "/s.json",
                          "--", TG + "service"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    pid = int(line.split()[1])

    def cmd(c):
        p.stdin.write(c + "\n")
        p.stdin.flush()
        return p.stdout.readline().strip()

    cmd("work 10")
    st = json.loads(cli(d, "stats", pid, "--json").stdout)
    during = region(st, "service_work")["count"]
    check(cmd("fork 3 5 200") == "forked 3", "forked")
    cmd("exit")
    p.stdin.close()
    p.stdout.read()
    rc = p.wait(timeout=30)
    n, st = counts(t + "/s.json")
    mine = [x for x in st.get("processes", []) if x.get("pid") == pid]
    own = region(mine[0], "service_work")["count"] if mine else None
    print("    stats of the parent during the run: %d; the run: %s, its parent's own: %s"
          % (during, n, own))
    check(rc == 0, "run exit 0")
    check(during == 10 and n.get("service_work") == 25,
          "stats 10 before the forks, the run 10 + 3 x 5 = 25: %d, %s" % (during, n))
    check(own == during, "the run's figures of its first process equal stats of it")


def t_run_user(d):
    """As nobody: its own command is measured; a set-user-ID program is refused before it
    runs (the run would follow a process nobody may not trace)."""
    t = tmpdir()
    r = run(d, t + "/u.json", (1, 0, 1, 0, 0), user="nobody")
    check(r.returncode == 0, "nobody's run: %r" % r.stderr)
    n, _ = counts(t + "/u.json")
    check(n.get("compress") == 300 and n.get("cache") == 200, "nobody's run exact: %s" % n)
    su = "/usr/bin/passwd"
    if os.path.exists(su) and os.stat(su).st_mode & 0o4000:
        r = cli(d, "run", "--", su, "--help", user="nobody")
        check(r.returncode == 1 and "set-user-ID" in r.stderr and
              r.stderr.count("\n") == 1, "a set-user-ID program refused: %r" % r.stderr)
    else:
        check(False, "no set-user-ID /usr/bin/passwd to try")


def busy_ns(out):
    """busyloop's ns_per_iteration from its output."""
    return [json.loads(x)["ns_per_iteration"] for x in out.splitlines()
            if x.startswith("{")][0]


def t_run_inprocess(d):
    """featprof run of a FEATPROF_INPROCESS build: its regions timed in the process alone
    (no trap: the loop costs what the runtime adds, not a trap), no false breakpoint
    report, no wait after the exit, the figures those of enable; a forked child's regions
    counted, and one that _exits before featprofd reads it said (issue 31, part 1)."""
    bl = h.B + "/bench/busyloop_fp_inproc"
    n = 2000000
    cal = h.Client(d).call("status")["result"]["attach"]["nop1"]
    bare = busy_ns(subprocess.run([bl, str(n), "100"], capture_output=True, text=True).stdout)
    p = subprocess.Popen([h.B + "/featprof", "--socket", d.sock, "run", "--json", "--", bl,
                          str(n), "100", "--wait"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pid = int(p.stdout.readline().split()[1])
    st = json.loads(cli(d, "status", "--json").stdout)
    mine = [x for x in st.get("targets", []) if x.get("pid") == pid]
    strays = mine[0].get("stray_breakpoints") if mine else None
    t0 = time.time()
    out, err = p.communicate("go\n", timeout=120)
    took = time.time() - t0
    res = json.loads(err.splitlines()[-1])
    wall = res["run"]["wall_ns"] / 1e9
    ran = busy_ns(out)
    busy = region(res, "busy")
    how = {r["measured"] for x in res["processes"] for r in x["regions"]
           if r["name"] == "busy" and r["count"]}
    print("    %d iterations: %.1f ns each alone, %.1f under the run (a trap pair costs "
          "%.0f ns here); busy %d, measured %s; strays %s; %.2f s from go to the table, "
          "%.2f s of it the program" % (n, bare, ran, cal["pair_ns"], busy["count"], how,
                                        strays, took, wall))
    check(busy["count"] == n and how == {"in-process"}, "every instance, timed in-process")
    check(ran < bare + cal["pair_ns"] / 2, "no trap at the sites: %.1f ns an iteration, "
          "%.1f alone, a trap pair %.0f" % (ran, bare, cal["pair_ns"]))
    check(strays == 0, "status counts no stray breakpoint during the run: %s" % mine)
    check(took - wall < 2, "the table within 2 s of the exit (%.2f s)" % (took - wall))
    # the same program under enable: the same figure an instance
    q = subprocess.Popen([bl, str(n), "100", "--wait"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    qpid = int(q.stdout.readline().split()[1])
    check(cli(d, "enable", qpid, "--all").returncode == 0, "enable")
    q.stdin.write("go\n")
    q.stdin.flush()
    q.stdout.readline()
    en = region(json.loads(cli(d, "stats", qpid, "--json").stdout), "busy")
    q.stdin.close()
    q.wait()
    print("    busy's mean: %.1f ns under run, %.1f under enable" % (
        busy["mean_ns"], en["mean_ns"]))
    check(en["count"] == n and abs(busy["mean_ns"] - en["mean_ns"]) <
          0.2 * en["mean_ns"] + 10, "run's figure an instance is enable's")
    # a forked child that lives (150 ms of encrypt) is read; one that _exits at once is
    # said to be unread
    t = tmpdir()
    r = cli(d, "run", "-o", t + "/slow.json", "--", TG + "configurable_ip", "A=1,B=1",
            "10000", timeout=60)
    k, st = counts(t + "/slow.json")
    check(r.returncode == 0 and k.get("encrypt") == 150 and k.get("compress") == 300,
          "the forked child's 150 encrypt, in-process: %s" % k)
    r = cli(d, "run", "--json", "--", TG + "configurable_ip", "A=1,B=1", "10")
    fast = json.loads(r.stderr.splitlines()[-1])
    print("    a child of 0.15 ms: %d encrypt, %d process(es) unread" % (
        region(fast, "encrypt")["count"], fast["processes_inprocess_unread"]))
    check(region(fast, "encrypt")["count"] == 150 or
          fast["processes_inprocess_unread"] == 1, "a child lost is said")


def terms(m):
    return {tuple(sorted(x["options"])): x for x in m["terms"]}


def t_model(d):
    """From the planned configurations (each run twice): the known influences within 5%
    (plus, where a term has a part outside regions, that part's interval: the runs' wall
    times move with the machine), their intervals covering them, E ~0, the interaction
    A*B named; held-out configurations predicted within 5%, a black-box linear model
    beside. The program is the FEATPROF_INPROCESS build (its regions timed in the
    process: ~30 ns an event)."""
    t = tmpdir()
    os.environ["CONFIGURABLE_TRUTH"] = t + "/truth.jsonl"  # the program's own clock
    # timed in the process (~30 ns an event, no trap), encrypt too: a forked child of
    # such a build is measured by the file's link, by traps, whose error there (~0.6 us
    # an instance) is beyond their stated uncertainty (docs/MODELS.md)
    ip = "configurable_ip"
    check(run(d, t + "/first.json", (0,) * 5, None, ip, "nofork").returncode == 0, "first run")
    r = cli(d, "model", "--plan", t + "/first.json", "--json")
    check(r.returncode == 0, "plan: %r" % r.stderr)
    plan = [tuple(int(c[o]) for o in OPTS) for c in json.loads(r.stdout)["configurations"]]
    print("    plan: %d configurations of 32: %s" % (len(plan), [config(p) for p in plan]))
    check(len(plan) <= 8, "at most 8 configurations")
    check({(a, b) for a, b, *_ in plan} == {(0, 0), (0, 1), (1, 0), (1, 1)},
          "the plan gives seal (A, B) all four combinations")
    files = []
    for i, bits in enumerate(plan * 2):
        f = "%s/p%d.json" % (t, i)
        check(run(d, f, bits, None, ip, "nofork").returncode == 0, "run " + config(bits))
        files.append(f)
    del os.environ["CONFIGURABLE_TRUTH"]
    own = {}  # per region: the mean of what the program measured inside it, where it ran
    reads = []  # its clock read's cost: an instance's own figure may miss two
    with open(t + "/truth.jsonl") as f:
        for line in f:
            for k, v in json.loads(line).items():
                if k == "read_ns":
                    reads.append(v)
                elif k != "pid" and v > 0:
                    own.setdefault(k, []).append(v)
    own = {k: sum(v) / len(v) for k, v in own.items()}
    read_ns = sorted(reads)[len(reads) // 2] if reads else 0  # the median run's
    print("    the program's clock read: %d ns (median of %d runs)" % (read_ns, len(reads)))
    r = cli(d, "model", *files, "--json")
    check(r.returncode == 0, "model: %r" % r.stderr)
    m = json.loads(r.stdout)
    tm = terms(m)
    # Each known influence is spent where configurable spends it: in its region, or
    # outside regions for D (and nowhere for E). The term sums every model's part; the
    # total must be within 5% of the known influence (the outside model also sees what
    # an option changes there: start-up, the fork, the daemon's work while the run is
    # longer), and the part where the time is spent must cover what the program measured
    # there itself (its spins end a little past their deadlines: interrupts, the
    # hypervisor), D's and E's their known influence.
    home = {("A",): "compress", ("B",): "encrypt", ("A", "B"): "seal", ("C",): "cache",
            ("D",): "(outside regions)", ("E",): "(outside regions)"}
    for opts, units in TRUTH.items():
        if not opts:
            continue
        x = tm.get(opts)
        want = units * UNIT_MS * 1e6
        got = x["influence_ns"] if x else 0
        part = [p for p in (x or {}).get("parts", []) if p["where"] == home[opts]]
        lo, hi = part[0]["ci95_ns"] if part else (0, 0)
        spent = own.get(home[opts], want)
        slack = 2 * read_ns * INSTANCES.get(home[opts], 0)  # the reference's own error
        print("    %-4s truth %6.2f ms  model %7.3f ms (%s %7.3f, measured inside %7.3f, "
              "95%% [%7.3f, %7.3f])  %s" % (
                  "*".join(opts), want / 1e6, got / 1e6, home[opts],
                  part[0]["influence_ns"] / 1e6 if part else 0, spent / 1e6, lo / 1e6,
                  hi / 1e6, x["where"] if x else "-"))
        # the outside model's part of a term moves with the runs' wall times, which this
        # machine measures: its own 95% interval (from the replicates' spread) is added
        out = [p for p in (x or {}).get("parts", []) if p["where"] == "(outside regions)"]
        noise = (out[0]["ci95_ns"][1] - out[0]["ci95_ns"][0]) / 2 if out else 0
        if units:
            check(x is not None and abs(got - want) <= 0.05 * want + noise,
                  "%s within 5%% + the outside part's interval (%.3f ms)"
                  % ("*".join(opts), noise / 1e6))
        else:
            check(x is not None and abs(got) <= 0.01 * 100 * UNIT_MS * 1e6 + noise,
                  "E ~0 (under 1% of a run + the outside part's interval)")
        check(bool(part) and lo - slack <= spent <= hi + slack,
              "%s: the interval of its part in %s covers it (+- %.1f us for the program's "
              "own clock reads)" % ("*".join(opts), home[opts], slack / 1e3))
    check(("A", "B") in tm and "seal" in tm[("A", "B")]["where"],
          "the interaction A*B named, from region seal")
    check("(outside regions)" in tm.get(("D",), {}).get("where", ""),
          "D acts outside regions")
    print("    leave-one-out MAPE: white-box %.2f%%, black-box linear %.2f%%" % (
        m["loo_mape_pct"]["white_box"], m["loo_mape_pct"]["black_box_linear"]))
    # the next runs for the chosen model: configurations of the 32, the error falling
    r = cli(d, "model", "--plan", "--next", "3", *files, "--json")
    nx = json.loads(r.stdout) if r.returncode == 0 else {"next": []}
    print("    plan --next 3 (%s): %s; mean SE %.3f -> %.3f ms" % (
        nx.get("chosen"), [config([int(x["config"][o]) for o in OPTS]) for x in nx["next"]],
        nx.get("mean_se_ns_before", 0) / 1e6, nx.get("mean_se_ns_after", 0) / 1e6))
    check(r.returncode == 0 and len(nx["next"]) == 3 and nx["candidates"] == 32 and
          nx["chosen"] == m["model_choice"]["chosen"] and
          0 < nx["mean_se_ns_after"] < nx["mean_se_ns_before"],
          "plan --next: three runs of the 32 configurations for the chosen model, its "
          "error falling: %s" % r.stderr)
    held = [b for b in itertools.product((0, 1), repeat=5) if b not in plan][::7][:4]
    print("    %-24s %10s %10s %7s %10s %7s %s" % ("held out", "measured", "white-box", "err",
                                                  "black-box", "err", "95% prediction"))
    covered = chosen_covered = 0
    check(all(x["fits"] for x in m["fit"]), "every region fits its runs: %s" % [
        x["unit"] for x in m["fit"] if not x["fits"]])
    for bits in held:
        f = "%s/h%s.json" % (t, "".join(map(str, bits)))
        check(run(d, f, bits, None, ip, "nofork").returncode == 0, "held-out run")
        with open(f) as fh:
            wall = json.load(fh)["run"]["wall_ns"]
        r = cli(d, "model", *files, "--predict", config(bits), "--json")
        p = json.loads(r.stdout)["prediction"]
        e, eb = (p["wall_ns"] - wall) / wall, (p["black_box_wall_ns"] - wall) / wall
        lo, hi = p["wall_pi95_ns"]
        covered += lo <= wall <= hi
        print("    %-24s %8.2f ms %7.2f ms %+6.2f%% %7.2f ms %+6.2f%% [%.2f, %.2f]" % (
            config(bits), wall / 1e6, p["wall_ns"] / 1e6, 100 * e,
            p["black_box_wall_ns"] / 1e6, 100 * eb, lo / 1e6, hi / 1e6))
        chosen_covered += check_chosen(p, wall)
        check(abs(e) <= 0.05, "%s predicted within 5%%" % config(bits))
        fa = {x["name"]: x["ns"] for x in p["features"]}
        want_a = (30 * bits[0] + 10 * bits[0] * bits[1]) * UNIT_MS * 1e6
        check(abs(fa.get("A", 0) - want_a) <= 0.05 * max(want_a, 1e6),
              "feature A predicted: %.3f ms (truth %.3f)" % (fa.get("A", 0) / 1e6,
                                                             want_a / 1e6))
    # 95% each: all four covered about 4 times in 5; three of four nearly always
    check(covered >= len(held) - 1, "the prediction interval covers %d of %d held-out "
          "runs" % (covered, len(held)))
    check(chosen_covered >= len(held) - 1, "the chosen model's interval covers %d of %d "
          "held-out runs" % (chosen_covered, len(held)))


def check_chosen(p, wall):
    """The model chosen by leave-one-out error (issue 44): no worse than the black box on a
    held-out run by more than its stated interval; whether its interval covers the run."""
    lo, hi = p["chosen_wall_pi95_ns"]
    e, eb = abs(p["chosen_wall_ns"] - wall), abs(p["black_box_wall_ns"] - wall)
    print("    %24s chosen %s: %7.2f ms %+6.2f%% [%.2f, %.2f]" % (
        "", p["chosen"], p["chosen_wall_ns"] / 1e6, 100 * (p["chosen_wall_ns"] - wall) / wall,
        lo / 1e6, hi / 1e6))
    check(e <= eb + (hi - lo) / 2, "the chosen model (%s) no worse than the black box by "
          "more than its interval: %.0f against %.0f ns" % (p["chosen"], e, eb))
    return lo <= wall <= hi


# pipeline's known influences on CPU time, in units of PIPE_US (its header comment)
PIPE_US = 500
PIPE_CHOICES = ["--choices", "check=none|crc|sha", "--choices", "level=1|9",
                "--choices", "threads=1|2"]


def pipe_config(c):
    return "check=%s,level=%d,threads=%d,delta=%d" % (c["check"], int(c["level"]),
                                                      int(c["threads"]), int(c["delta"]))


def pipe_truth(c):
    """(CPU, wall) in ns of a configuration, from pipeline's header comment."""
    chk = {"none": 0, "crc": 20, "sha": 60}[c["check"]]
    lv, th, dl = int(c["level"]), int(c["threads"]), int(c["delta"])
    cpu = 65 + chk + 10 * lv + 30 * dl
    wall = 45 + chk + 10 * dl + (20 + 10 * lv + 20 * dl) / th
    return cpu * PIPE_US * 1e3, wall * PIPE_US * 1e3


def pipe_run(d, out, c):
    k = pipe_config(c)
    return cli(d, "run", "--config", k, "-o", out, "--", TG + "pipeline_ip", k, PIPE_US,
               timeout=60)


def t_model_threads(d):
    """A multi-threaded configurable program (pipeline_ip: match on 1 or 2 worker threads
    at once, a one-of check, a numeric level, delta slowing match, which does not name
    it): the plan runs every configuration it proposes (one check each); the model
    predicts wall time as CPU time less a learned overlap; each known influence on
    CPU time within 5% (check=crc, check=sha, level, delta with match's part found as an
    influence match's features do not name, threads ~0); held-out configurations' wall
    and CPU time within 5%, never negative. Wall time as regions plus outside, which
    breaks with threads, fails it."""
    if (os.cpu_count() or 1) < 2:
        check(False, "two CPUs needed for two worker threads at once")
        return
    t = tmpdir()
    first = {"check": "none", "level": "1", "threads": "1", "delta": "0"}
    check(pipe_run(d, t + "/first.json", first).returncode == 0, "first run")
    r = cli(d, "model", "--plan", t + "/first.json", "--json", *PIPE_CHOICES,
            "--parallel", "threads")
    check(r.returncode == 0, "plan: %r" % r.stderr)
    plan = json.loads(r.stdout)["configurations"] if r.returncode == 0 else []
    print("    plan: %d configurations of 24: %s" % (len(plan),
                                                    [pipe_config(c) for c in plan]))
    check({c["check"] for c in plan} == {"none", "crc", "sha"}, "every check planned")
    os.environ["PIPELINE_TRUTH"] = t + "/truth.jsonl"
    files = []
    for i, c in enumerate(plan * 2):
        f = "%s/p%d.json" % (t, i)
        check(pipe_run(d, f, c).returncode == 0, "run " + pipe_config(c))
        files.append(f)
    del os.environ["PIPELINE_TRUTH"]
    r = cli(d, "model", *files, "--json", *PIPE_CHOICES[:2])
    check(r.returncode == 0, "model: %r" % r.stderr)
    if r.returncode:
        return
    m = json.loads(r.stdout)
    check(m["wall_model"] == "cpu_less_overlap", "wall from CPU less the overlap "
          "(regions up to %.2fx the wall)" % m["regions_over_wall_max"])
    tm = {tuple(sorted(x["options"])): x for x in m["terms"]}
    unit = PIPE_US * 1e3
    for opts, want in ((("check=crc",), 20), (("check=sha",), 60), (("level",), 10),
                       (("delta",), 30), (("threads",), 0)):
        got = tm.get(opts, {}).get("influence_ns", 0)
        # as t_model: the outside model's part of a term (CPU time outside regions:
        # start-up, the exit, the runtime) moves with the machine: its own interval
        out = [p for p in tm.get(opts, {}).get("parts", [])
               if p["where"] == "(outside regions, CPU)"]
        noise = (out[0]["ci95_ns"][1] - out[0]["ci95_ns"][0]) / 2 if out else 0
        ok = abs(got - want * unit) <= (0.05 * want * unit if want else 0.02 * 65 * unit) + noise
        print("    %-10s truth %6.2f ms  model %7.3f ms  (%s; outside part's interval "
              "%.3f ms)" % ("*".join(opts), want * unit / 1e6, got / 1e6,
                            tm.get(opts, {}).get("where"), noise / 1e6))
        check(ok, "%s within 5%% + the outside part's interval: %.3f ms (truth %.3f)" % (
            "*".join(opts), got / 1e6, want * unit / 1e6))
    un = {(x["unit"], x["option"]): x for x in m["unnamed_influences"]}
    md = un.get(("match", "delta"), {}).get("influence_ns", 0)
    print("    unnamed: %s" % ["%s<-%s %.2f ms" % (k[0], k[1], v["influence_ns"] / 1e6)
                               for k, v in un.items()])
    check(abs(md - 20 * unit) <= 0.05 * 20 * unit,
          "match depends on delta: %.3f ms (truth %.3f)" % (md / 1e6, 20 * unit / 1e6))
    held = [c for c in ({"check": "sha", "level": "5", "threads": "2", "delta": "1"},
                        {"check": "crc", "level": "3", "threads": "1", "delta": "1"},
                        {"check": "none", "level": "9", "threads": "2", "delta": "0"})
            if c not in plan]
    # the wall time of 2 threads on a shared 2-CPU machine moves with what else runs
    noise = h.replicate_spread(files)
    print("    %-40s %10s %10s %7s %10s %7s" % ("held out", "wall", "predicted", "err",
                                               "CPU", "err"))
    for i, c in enumerate(held):	# each run twice, as the trained ones: their mean
        run = {"wall_ns": 0, "cpu_ns": 0}
        for k in range(2):
            f = "%s/h%d_%d.json" % (t, i, k)
            check(pipe_run(d, f, c).returncode == 0, "held-out run")
            with open(f) as fh:
                got = json.load(fh)["run"]
            run = {x: run[x] + got[x] / 2 for x in run}
        r = cli(d, "model", *files, "--json", *PIPE_CHOICES[:2], "--predict",
                pipe_config(c))
        p = json.loads(r.stdout)["prediction"]
        ew = (p["wall_ns"] - run["wall_ns"]) / run["wall_ns"]
        ec = (p["cpu_ns"] - run["cpu_ns"]) / run["cpu_ns"]
        print("    %-40s %8.2f ms %7.2f ms %+6.2f%% %7.2f ms %+6.2f%%" % (
            pipe_config(c), run["wall_ns"] / 1e6, p["wall_ns"] / 1e6, 100 * ew,
            run["cpu_ns"] / 1e6, 100 * ec))
        check_chosen(p, run["wall_ns"])
        check(abs(ew) <= 0.05 + 2 * noise and abs(ec) <= 0.05 and p["wall_ns"] > 0,
              "%s predicted within 5%% (wall: plus twice the replicates' spread)"
              % pipe_config(c))


def t_model_input(d):
    """Bad input: one line, no model."""
    t = tmpdir()
    with open(t + "/x.json", "w") as f:
        f.write("{\"regions\": []}")
    r = cli(d, "model", t + "/x.json", t + "/x.json")
    check(r.returncode != 0 and r.stderr.count("\n") == 1, "not a run file: %r" % r.stderr)
    r = cli(d, "model", t + "/x.json")
    check(r.returncode == 2 and r.stderr.count("\n") == 1, "one file: %r" % r.stderr)


TESTS = h.discover(globals())


if __name__ == "__main__":
    # t_model compares measured times with known ones: measured once or twice more after
    # a pause where it fails (the "outside regions" part of a 150 ms run moved by 0.6 ms
    # between configurations in 2 of ~8 runs on this shared machine in one afternoon,
    # beyond its replicates' interval)
    sys.exit(h.run_file("model", TESTS, {t_model, t_model_threads}))
