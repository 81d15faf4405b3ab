#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Integration tests of sample --stacks (issue 35; bpf/sample.bpf.c, daemon/targets/
stacks/stacks.c, cli/writers/stacks.c): which functions a region's time goes to, on a program
whose region spends known shares of its time in known functions (tests/targets/stacks.c:
f1 in the executable, also run outside the region; lib_f2 in a shared library; the
region's own loop), two threads, its regions read from its TLS stack (FEATPROF_SAMPLING)
or from the regions featprof traces. The real featprofd on a temporary socket. Needs root.
usage: test_stacks.py BUILD_DIR [TEST...]"""
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from harness import check, cli  # noqa: E402

TG = h.B + "/tests/targets/"
TMP = tempfile.mkdtemp(prefix="featprof-stacks-")
US, ITERS = 3000, 1200      # 3.75 ms an iteration: ~4.5 s a thread


class Stacks:
    """tests/targets/stacks: "ready PID", then its work on a line, its truth (JSON) after."""

    def __init__(self, binary, iters=ITERS):
        self.p = subprocess.Popen([TG + binary, str(US), str(iters), "2", "--wait"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.p.stdout.readline()
        assert line.startswith("ready "), line
        self.pid = int(line.split()[1])

    def go(self):
        self.p.stdin.write("go\n")
        self.p.stdin.flush()

    def truth(self):
        return json.loads(self.p.stdout.readline())

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


def by_name(arr, name):
    return next((x for x in arr or [] if x.get("name") == name), None)


def fn(x, name):
    return by_name(x.get("functions"), name) or {"total_share": 0, "self_share": 0,
                                                  "total_stderr": 0, "self_stderr": 0}


def check_shares(what, sm, truth, obj, lib):
    """Region work's samples split among f1, lib_f2 and worker's own loop as the program
    measured its parts (2 points); f1 outside the region not in it; the objects named."""
    work = by_name(sm["regions"], "work")
    want = {"f1": truth["f1_in_ns"] / truth["work_ns"],
            "lib_f2": truth["f2_ns"] / truth["work_ns"],
            "worker": truth["own_ns"] / truth["work_ns"]}
    print("    %s: %d samples, %d in work, %d outside regions; stacks %s" % (
        what, sm["samples"], work["samples"], sm["base"]["samples"],
        {k: sm["stacks"][k] for k in ("unwind", "with_stack", "lost", "truncated")}))
    for name, share in want.items():
        f = fn(work, name)
        got = f["self_share"]
        print("    work -> %-7s self %5.1f%% +-%.1f (program %5.1f%%), total %5.1f%%" % (
            name, 100 * got, 100 * f["self_stderr"], 100 * share, 100 * f["total_share"]))
        check(abs(got - share) <= 0.02, "%s: %s's self share of work %.3f, program %.3f" % (
            what, name, got, share))
    # compute(), static inline, folded by the compiler into f1 and into worker's own loop:
    # an inlined frame (DWARF) under both, its total theirs, its self none (self stays
    # with the function it was inlined into, as the symbol table and perf report say)
    c = fn(work, "compute")
    inl = want["f1"] + want["worker"]
    print("    work -> compute (inlined: %s) total %5.1f%% (f1 + worker's own by the program "
          "%5.1f%%), self %.1f%%" % (c.get("inlined"), 100 * c["total_share"], 100 * inl,
                                     100 * c["self_share"]))
    check(c.get("inlined") is True and c["self_share"] == 0 and
          abs(c["total_share"] - inl) <= 0.03,
          "%s: compute inlined in f1 and worker: total %.3f, program %.3f" % (
              what, c["total_share"], inl))
    check(fn(work, "worker")["total_share"] >= 0.97,
          "%s: worker holds every stack of work (%.3f)" % (what, fn(work, "worker")["total_share"]))
    check(fn(work, "f1").get("object") == obj and fn(work, "lib_f2").get("object") == lib,
          "%s: objects named %s, %s" % (what, fn(work, "f1").get("object"),
                                        fn(work, "lib_f2").get("object")))
    base = sm["base"]
    check(fn(base, "f1")["self_share"] >= 0.97 and fn(base, "lib_f2")["total_share"] == 0,
          "%s: outside regions only f1 (%.3f)" % (what, fn(base, "f1")["self_share"]))
    feat = by_name(sm["features"], "Work")
    check(feat and abs(fn(feat, "f1")["self_share"] - fn(work, "f1")["self_share"]) < 1e-9,
          "%s: feature Work as its one region" % what)
    check(sm["stacks"]["lost"] <= 0.01 * sm["samples"],
          "%s: %d of %d stacks lost" % (what, sm["stacks"]["lost"], sm["samples"]))


def in_order(names, want):
    """Whether want's names come in names in that order (others between them)."""
    it = iter(names)
    return all(any(n == w for n in it) for w in want)


def sample(d, t, *extra):
    """sample --stacks for 3 s while t works; the sampling report and the truth."""
    t.go()
    r = cli(d, "sample", t.pid, "--stacks", "--duration", "3", "--json", *extra, timeout=60)
    truth = t.truth()
    if not check(r.returncode == 0, "sample --stacks: " + r.stderr):
        return None, truth
    return json.loads(r.stdout)["sampling"], truth


def t_stacks_sampled(d):
    """A FEATPROF_SAMPLING build with frame pointers, --unwind fp: shares against the
    program's own, folded lines and a pprof profile (go tool pprof) that put regions above
    functions."""
    t = Stacks("stacks_sampled")
    try:
        folded = os.path.join(TMP, "s.folded")
        sm, truth = sample(d, t, "--unwind", "fp")
        if not sm:
            return
        check(sm["regions_from"] == "tls", "regions from %s" % sm["regions_from"])
        check_shares("stacks_sampled", sm, truth, "stacks_sampled", "libstacks_fp.so")
        # the HTML report's drill-down: the feature's icicle graph into its functions
        html = os.path.join(TMP, "r.html")
        r = cli(d, "report", t.pid, "-o", html)
        page = open(html).read() if r.returncode == 0 else ""
        sec = page.split('id="drilldown"', 1)[-1].split("</section>")[0]
        check('id="drilldown"' in page and "<h3>Work</h3>" in sec and ">lib_f2<" in sec and
              ">f1<" in sec and ">work<" in sec,
              "report: #drilldown with Work's regions and functions (%d bytes) %s" % (
                  len(sec), r.stderr))
    finally:
        t.kill()
    t = Stacks("stacks_sampled")
    try:
        prof = os.path.join(TMP, "s.pb.gz")
        t.go()
        r = cli(d, "sample", t.pid, "--stacks", "--unwind", "fp", "--duration", "2", "-o",
                folded, "--format", "folded", timeout=60)
        check(r.returncode == 0 and "region work:" in r.stdout and "lib_f2" in r.stdout,
              "table: %s %s" % (r.stdout[-400:], r.stderr))
        lines = open(folded).read().splitlines() if r.returncode == 0 else []
        total = sum(int(l.rsplit(" ", 1)[1]) for l in lines)
        inside = sum(int(l.rsplit(" ", 1)[1]) for l in lines
                     if l.startswith("Work;work;") and ";worker;f1;compute " in l)
        print("    folded: %d lines, %d samples, %d in work under worker;f1;compute (inlined)" % (
            len(lines), total, inside))
        check(total > 1000 and inside > 0.3 * total, "folded stacks under Work;work")
        t.kill()
        t = Stacks("stacks_sampled")
        t.go()
        r = cli(d, "sample", t.pid, "--stacks", "--duration", "2", "-o", prof,
                "--format", "pprof", timeout=60)
        check(r.returncode == 0, "pprof: " + r.stderr)
        check(gzip.open(prof).read(2) != b"", "pprof file")
        tr = subprocess.run(["go", "tool", "pprof", "-traces", prof], capture_output=True,
                            text=True, timeout=120)
        # leaf first: f1, worker, ..., then the region, then its feature
        want = ["f1", "worker", "work", "Work"]
        ok = any(in_order([w.split()[-1] for w in b.splitlines() if w.strip()], want)
                 for b in tr.stdout.split("-----------+"))
        check(ok, "go tool pprof -traces: f1 under worker under work under Work: %s" %
              (tr.stdout[:600] + tr.stderr[-300:]))
        raw = subprocess.run(["go", "tool", "pprof", "-raw", prof], capture_output=True,
                             text=True, timeout=120).stdout
        bid = subprocess.run(["readelf", "-n", TG + "libstacks_fp.so"], capture_output=True,
                             text=True).stdout.split("Build ID: ")[1].split()[0]
        check(bid in raw, "pprof mappings carry build ids (%s)" % bid)
    finally:
        t.kill()


def t_stacks_traced(d):
    """A default build with frame pointers whose region featprof enable traces, --unwind
    fp: the open regions from the kernel's thread state, the same shares."""
    t = Stacks("stacks_fp")
    try:
        r = cli(d, "enable", t.pid, "Work")
        check(r.returncode == 0, "enable: " + r.stderr)
        sm, truth = sample(d, t, "--unwind", "fp")
        if sm:
            check(sm["regions_from"] == "kernel", "regions from %s" % sm["regions_from"])
            check(sm["stacks"]["unwind"] == "frame pointers", "unwind " + sm["stacks"]["unwind"])
            check_shares("stacks_fp traced", sm, truth, "stacks_fp", "libstacks_fp.so")
    finally:
        t.kill()


def t_stacks_dwarf(d):
    """No frame pointers (GCC -O2, as Debian builds; the library too), the default
    unwinding by CFI from stack copies: traced regions, then a FEATPROF_SAMPLING build,
    the same shares; featprofd's unwinding work printed."""
    t = Stacks("stacks")
    try:
        r = cli(d, "enable", t.pid, "Work")
        check(r.returncode == 0, "enable: " + r.stderr)
        sm, truth = sample(d, t)
        if sm:
            sk = sm["stacks"]
            check(sk["unwind"] == "dwarf", "unwind " + sk["unwind"])
            print("    unwinding: %d copies of %d bytes, %.1f us of featprofd's CPU each, "
                  "%.1f frames each, %d stopped early" % (
                      sk["copies_unwound"], sk["copy_bytes"],
                      sk["unwind_cpu_ns"] / 1e3 / max(1, sk["copies_unwound"]),
                      sk["unwind_frames"] / max(1, sk["copies_unwound"]),
                      sk["copies_truncated"]))
            check_shares("stacks dwarf traced", sm, truth, "stacks", "libstacks.so")
    finally:
        t.kill()
    t = Stacks("stacks_sampled")
    try:
        sm, truth = sample(d, t, "--unwind", "dwarf")
        if sm:
            check_shares("stacks_sampled dwarf", sm, truth, "stacks_sampled",
                         "libstacks_fp.so")
    finally:
        t.kill()


def t_stacks_copy_size(d):
    """--unwind dwarf copies what the unwinds use: a program's shallow first seconds lower
    the copy below 8 KiB; when its stacks deepen past that, the copies cut short (once,
    until the next drain) are marked truncated and the copy is whole again; every other
    sample reaches main"""
    exe = os.path.join(TMP, "deepen")
    subprocess.run(["gcc", "-O2", "-g", os.path.join(os.path.dirname(os.path.abspath(
        __file__)), "..", "targets", "deepen.c"), "-o", exe], check=True)
    p = subprocess.Popen([exe, "6", "2"])
    try:
        time.sleep(0.2)
        low = cli(d, "sample", p.pid, "--stacks", "--duration", "1", "--json", timeout=60)
        r = cli(d, "sample", p.pid, "--stacks", "--duration", "4", "--json", timeout=60)
    finally:
        p.kill()
        p.wait()
    if not check(low.returncode == 0 and r.returncode == 0, "sample: %s %s" % (
            low.stderr.strip(), r.stderr.strip())):
        return
    lk = json.loads(low.stdout)["sampling"]["stacks"]
    sm = json.loads(r.stdout)["sampling"]
    sk = sm["stacks"]
    main = next((f["total_samples"] for f in sm["functions"] if f["name"] == "main"), 0)
    print("    shallow: copy %d bytes; deepened: %d copies cut, %d truncated, copy %d bytes, "
          "main in %d of %d samples" % (lk["copy_bytes"], sk["copies_cut"],
                                        sk["copies_truncated"], sk["copy_bytes"], main,
                                        sm["samples"]))
    check(lk["copy_bytes"] < 8192, "shallow stacks: the copy lowered (%d bytes)" %
          lk["copy_bytes"])
    check(sk["copy_bytes"] == 8192 and sk["copies_truncated"] >= sk["copies_cut"] and
          main >= sm["samples"] - sk["copies_truncated"] - 2,
          "deepened: whole copies again, the cut ones truncated, the rest reach main: %s" % {
              k: sk[k] for k in ("copy_bytes", "copies_cut", "copies_truncated")})


def t_stacks_disable(d):
    """The traced region disabled while sampled: its frames stop counting from then (their
    enable generation is no longer the region's), the report stays whole."""
    t = Stacks("stacks_fp")
    try:
        r = cli(d, "enable", t.pid, "Work")
        check(r.returncode == 0, "enable: " + r.stderr)
        t.go()
        fs = subprocess.Popen([h.B + "/featprof", "--socket", d.sock, "sample", str(t.pid),
                               "--stacks", "--duration", "3", "--json"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1)
        # a subscription's pushes meanwhile: the sampled figures, not the call stacks
        r = cli(d, "stream", t.pid, "--count", "2", "--interval", "200")
        pushes = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]
        sm = [p.get("sampling") or p.get("stats", {}).get("sampling") for p in pushes]
        check(r.returncode == 0 and sm and all(x and "regions" in x and "stacks" not in x and
                                                 not any("functions" in g for g in x["regions"])
                                                 for x in sm),
              "stream while sampling with stacks: %s %s" % (r.stdout[:300], r.stderr))
        r = cli(d, "disable", t.pid, "Work")
        check(r.returncode == 0, "disable: " + r.stderr)
        out, err = fs.communicate(timeout=60)
        if not check(fs.returncode == 0, "sample --stacks: " + err):
            return
        sm = json.loads(out)["sampling"]
        work = by_name(sm["regions"], "work")
        share = work["samples"] / max(1, sm["samples"])
        print("    disabled half-way: work %d of %d samples (%.0f%%; 80%% while enabled)" % (
            work["samples"], sm["samples"], 100 * share))
        check(0.1 < share < 0.65, "work's share %.2f: its frames counted after the disable"
              % share)
        check(cli(d, "status").returncode == 0, "featprofd answers")
    finally:
        t.kill()


def t_stacks_inprocess(d):
    """A FEATPROF_INPROCESS build timing its region itself: the open regions from its
    runtime's thread blocks (DWARF, no frame pointers), the same shares; drill traces the
    region for the time it times its functions."""
    t = Stacks("stacks_ip")
    try:
        r = cli(d, "enable", t.pid, "Work")
        check(r.returncode == 0 and "timed in the process" in r.stdout,
              "enable in-process: %s %s" % (r.stdout, r.stderr))
        sm, truth = sample(d, t)
        if sm:
            check(sm["regions_from"] == "inprocess", "regions from %s" % sm["regions_from"])
            check_shares("stacks_ip", sm, truth, "stacks_ip", "libstacks.so")
    finally:
        t.kill()
    t = Stacks("stacks_ip", 3000)
    try:
        t.go()
        r = cli(d, "drill", t.pid, "work", "--top", "2", "--duration", "3", "--json",
                timeout=60)
        if check(r.returncode == 0, "stacks_ip: drill: " + r.stderr):
            check_drill("stacks_ip", json.loads(r.stdout), t.truth(), h.stats(d, t.pid),
                        entry_pairs(d, "stacks"))
    finally:
        t.kill()


def t_stacks_refused(d):
    """Nothing to attribute (a default build, no region traced, no --stacks) or --remote
    with --stacks: one line, nothing started; --stacks with no region traced samples the
    call stacks alone (issue 45: any process), every sample outside regions."""
    t = Stacks("stacks_fp")
    try:
        r = cli(d, "sample", t.pid, "--duration", "1")
        check(r.returncode != 0 and "featprof enable" in r.stderr and
              len(r.stderr.strip().splitlines()) == 1, "no region: %r" % r.stderr)
        t.go()
        r = cli(d, "sample", t.pid, "--stacks", "--duration", "1", "--json")
        sm = json.loads(r.stdout or "{}").get("sampling", {})
        check(r.returncode == 0 and sm.get("samples", 0) > 0 and
              sm["base"]["samples"] == sm["samples"],
              "--stacks, no region traced: every sample outside regions (%r)" % r.stderr)
        r = cli(d, "sample", t.pid, "--stacks", "--remote", "--duration", "1")
        check(r.returncode != 0 and "--remote" in r.stderr, "--remote: %r" % r.stderr)
        r = cli(d, "sample", t.pid, "--top", "3", "--duration", "1")
        check(r.returncode == 2 and "--stacks" in r.stderr, "--top alone: %r" % r.stderr)
    finally:
        t.kill()


def window(truth, w):
    """The program's own sums over the 100 ms buckets inside window w (CLOCK_MONOTONIC):
    [work, f1_in, f2, own, f1_out, iterations]."""
    tot = [0] * 6
    for i, b in enumerate(truth["buckets"]):
        start = truth["t0_ns"] + i * 100000000
        if start >= w[0] and start + 100000000 <= w[1]:
            tot = [x + y for x, y in zip(tot, b)]
    return tot


def entry_pairs(d, binary):
    """What a function pair costs (calibrated) by each function's entry kind: the
    program's own clock around a call holds all of both probes (featprof's timestamps
    only the parts between them), so that is taken off the program's figure."""
    status = json.loads(cli(d, "status", "--json").stdout)["attach"]
    pair = {"push": status["function"]["pair_ns"],
            "stepped": status["function_stepped"]["pair_ns"]}
    out = {}
    lib = "libstacks.so" if binary == "stacks" else "libstacks_fp.so"
    for name, obj in (("f1", binary), ("lib_f2", lib)):
        r = cli(d, "list", TG + obj, "--functions", name, "--json")
        for o in json.loads(r.stdout)["objects"] if r.returncode == 0 else []:
            for f in o["functions"]:
                if f["name"] == name:
                    out[name] = pair[f["entry"]]
    return out


def check_drill(what, dr, truth, t_stats, pairs):
    """drill's functions: the two REGION spends its time in, called once an instance
    inside it (the calls outside left out), their CPU time a call within 1% of the
    program's own over the same window (less the calibrated probe pair its clock also
    holds) plus their stated uncertainty a call, the remainder its own loop's share;
    nothing left enabled."""
    win = window(truth, dr["window_ns"])
    names = sorted(f["name"] for f in dr["functions"])
    check(names == ["f1", "lib_f2"], "%s: drilled %s" % (what, names))
    check(win[5] > 100, "%s: %d iterations of the program inside drill's window" % (
        what, win[5]))
    for f in dr["functions"]:
        want = win[1 if f["name"] == "f1" else 2] / max(1, win[5]) - pairs.get(f["name"], 0)
        got = f["inclusive_cpu_ns"] / max(1, f["calls"])
        unc = f["uncertainty_ns"] / max(1, f["calls"])
        print("    %s: %-6s %5d calls (region %d), %8.1f us a call CPU (program %8.1f, less "
              "a probe pair %.1f): %+.2f%%, stated +-%.2f%%; share %.1f%%" % (
                  what, f["name"], f["calls"], dr["region_count"], got / 1e3, want / 1e3,
                  pairs.get(f["name"], 0) / 1e3, 100 * (got - want) / want, 100 * unc / want,
                  100 * f["share"]))
        check(abs(f["calls"] - dr["region_count"]) <= 2,
              "%s: %s called %d times inside work, %d instances" % (
                  what, f["name"], f["calls"], dr["region_count"]))
        check(abs(got - want) <= 0.01 * want + unc, "%s: %s %.0f ns a call, program %.0f" % (
            what, f["name"], got, want))
    own = win[3] / max(1, win[0])
    rest = dr["remainder_cpu_ns"] / dr["region_cpu_ns"]  # CPU time: preemptions fall anywhere
    print("    %s: remainder %.1f%% of work's CPU time (program's own loop %.1f%%)" % (
        what, 100 * rest, 100 * own))
    check(abs(rest - own) <= 0.02, "%s: remainder %.3f, own %.3f" % (what, rest, own))
    left = [r["name"] for r in t_stats.get("regions", []) if r.get("enabled")]
    check(not left, "%s: left enabled after drill: %s" % (what, left))


def t_drill(d):
    """featprof drill: a default build without frame pointers (the region traced only
    while drilling) and a FEATPROF_SAMPLING build, exact times against the program's."""
    for binary in ("stacks", "stacks_sampled"):
        t = Stacks(binary, 3000)
        try:
            t.go()
            r = cli(d, "drill", t.pid, "work", "--top", "2", "--duration", "3", "--json",
                    timeout=60)
            if not check(r.returncode == 0, "%s: drill: %s" % (binary, r.stderr)):
                continue
            dr = json.loads(r.stdout)
            st = h.stats(d, t.pid)
            truth = t.truth()
            check_drill(binary, dr, truth, st, entry_pairs(d, binary))
        finally:
            t.kill()


LZ4 = os.path.join(h.B, "real", "lz4")


CLONE = re.compile(r"(\.(constprop|isra|part|cold|lto_priv|llvm|clone)(\.[0-9]+)?)+$")


def leaf_key(name, obj):
    """A function as both tools name it: by name in lz4 itself (its .symtab; a compiler's
    clone, which perf names apart, as its function, as featprof does), by its object
    elsewhere (a system library's function may go by one of several aliases, or by a
    debug file's name where one is installed, and the tools need not pick the same)."""
    return CLONE.sub("", name) if obj == "lz4" else "[%s]" % obj


def perf_shares(data, home):
    """From perf record's samples (perf script): those whose user call chain holds home
    (the function the region begins in; None: all), split by their innermost user frame
    (leaf_key): {key: share}, and how many there were."""
    out = subprocess.run(["perf", "script", "--no-inline", "-F", "ip,sym,dso", "-i", data],
                         capture_output=True, text=True, errors="replace").stdout
    leaf, n = {}, 0
    for block in out.split("\n\n"):
        user = []
        for l in block.splitlines():
            parts = l.split(None, 1)
            if len(parts) != 2 or "[kernel.kallsyms]" in l or " (" not in parts[1]:
                continue
            sym, dso = parts[1].rsplit(" (", 1)
            user.append((sym, os.path.basename(dso.rstrip(")")) or "?"))
        if not user or (home and home not in [u[0] for u in user]):
            continue
        n += 1
        k = leaf_key(*user[0])
        leaf[k] = leaf.get(k, 0) + 1
    return {k: v / n for k, v in leaf.items()} if n else {}, n


def compare(ours, theirs):
    """Prints both tools' shares (those of 0.5% or more) and returns the largest gap."""
    worst = 0
    for name in sorted(set(ours) | set(theirs), key=lambda k: -ours.get(k, 0)):
        a, b = ours.get(name, 0), theirs.get(name, 0)
        if max(a, b) >= 0.005:
            print("      %-44s featprof %5.1f%%  perf %5.1f%%" % (name[:44], 100 * a, 100 * b))
        worst = max(worst, abs(a - b))
    return worst


def t_real_vs_perf(d):
    """A real program nobody here wrote (lz4 1.9.4 from Debian's source, its regions
    placed by tests/bench/lz4_build.sh; no frame pointers): region compress_block's
    functions, sampled by featprof (DWARF) and by perf record --call-graph dwarf on the
    same run, at the same rate: every function's self share within 3 points."""
    if not os.path.exists(LZ4):
        r = subprocess.run(["bash", os.path.join(os.path.dirname(__file__), "..", "bench",
                                                 "lz4_build.sh"),
                            os.path.join(h.B, "lz4-cache"), LZ4], capture_output=True,
                           text=True)
        if not check(r.returncode == 0, "lz4 from Debian's source: " + r.stderr[-400:]):
            return
    import random
    rnd = random.Random(1)
    words = ["".join(rnd.choice("abcdefghijklmnop") for _ in range(rnd.randint(3, 9)))
             for _ in range(3000)]
    text = "".join(" ".join(rnd.choice(words) for _ in range(8)) + "\n"
                   for _ in range(400000)).encode()
    p = subprocess.Popen([LZ4, "-q", "-9", "-f", "-", os.path.join(TMP, "out.lz4")],
                         stdin=subprocess.PIPE)
    try:
        time.sleep(0.5)
        r = cli(d, "enable", p.pid, "Compress", "--trap")
        if not check(r.returncode == 0, "lz4: enable: " + r.stderr):
            return
        data = os.path.join(TMP, "lz4.perf")
        pf = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", "997",
                               "--call-graph", "dwarf", "-p", str(p.pid), "-o", data, "--",
                               "sleep", "4"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
        fs = subprocess.Popen([h.B + "/featprof", "--socket", d.sock, "sample", str(p.pid),
                               "--stacks", "--duration", "4", "--json"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1)
        for _ in range(20):     # ~8 s of work at -9: both windows inside it
            p.stdin.write(text)
        p.stdin.close()
        out, err = fs.communicate(timeout=60)
        pf.wait(60)
        p.wait(120)
        if not check(fs.returncode == 0, "lz4: sample --stacks: " + err):
            return
        sm = json.loads(out)["sampling"]
        reg = by_name(sm["regions"], "compress_block")
        home = reg["begins_in"][0]["name"] if reg and reg.get("begins_in") else "?"
        ours = {leaf_key(f["name"], f["object"]): f["self_share"]
                for f in reg.get("functions", [])} if reg else {}
        theirs, n = perf_shares(data, home)
        print("    lz4 -9: compress_block begins in %s; featprof %d samples in it (%s), "
              "perf %d with %s in the chain" % (home, reg["samples"] if reg else 0,
                                                 sm["stacks"]["unwind"], n, home))
        worst = compare(ours, theirs)
        check(n > 500 and reg and reg["samples"] > 500, "lz4: enough samples (%d, %d)" % (
            reg["samples"] if reg else 0, n))
        check(worst <= 0.03, "lz4: compress_block's self shares differ by up to %.1f "
              "points" % (100 * worst))
        # the whole process: every sample by its innermost frame
        fns, leaf, tot = sm["stacks"]["functions"], {}, 0
        for x in sm["stacks"]["samples"]:
            if x["stack"]:
                fn = fns[x["stack"][-1]]
                k = leaf_key(fn["name"], fn["object"])
                leaf[k] = leaf.get(k, 0) + x["samples"]
                tot += x["samples"]
        ours = {k: v / tot for k, v in leaf.items()}
        theirs, n = perf_shares(data, None)
        print("    the whole process: featprof %d samples, perf %d" % (tot, n))
        worst = compare(ours, theirs)
        check(worst <= 0.03, "lz4: the process's self shares differ by up to %.1f points"
              % (100 * worst))
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


TESTS = h.discover(globals())


if __name__ == "__main__":
    sys.exit(h.run_file("stacks", TESTS))
