#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Integration tests of whole services (issue 9): other providers' probes as regions
(region definitions), checked against the programs' own accounting; definitions' bad
input. The real featprofd on a temporary socket, as in test_daemon.py, whose helpers
these tests share. Needs root. usage: test_services.py BUILD_DIR [TEST...]"""
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_daemon as td  # noqa: E402  (B, TMP, check, cli, Daemon, stats, region)
from test_daemon import check, cli, stats, region  # noqa: E402

PY = "/usr/bin/python3.11"   # Debian's: built --with-dtrace (a pyenv build has no notes)

GC_SCRIPT = r"""
import gc, sys, time
n = 0; tot = 0; t0 = 0
def cb(phase, info):
    global n, tot, t0
    if phase == "start":
        t0 = time.perf_counter_ns()
    else:
        n += 1; tot += time.perf_counter_ns() - t0
gc.callbacks.append(cb)
print("ready", flush=True)
sys.stdin.readline()
junk = []
for i in range(300):
    for j in range(1000):
        a = []; a.append(a); junk.append(a)
    if i % 10 == 0:
        gc.collect(i % 3)
    junk = junk[-3000:]
print(n, tot, flush=True)
sys.stdin.readline()
"""

IMPORT_SCRIPT = r"""
import sys
sys.path.insert(0, sys.argv[1])
print("ready", flush=True)
sys.stdin.readline()
print("MARK", file=sys.stderr, flush=True)
for i in range(int(sys.argv[2])):
    __import__("m%d" % i)
print("done", flush=True)
sys.stdin.readline()
"""


class Py:
    def __init__(self, script, *args, flags=()):
        path = os.path.join(td.TMP, "script%d.py" % id(self))
        with open(path, "w") as f:
            f.write(script)
        self.p = subprocess.Popen([PY] + list(flags) + [path] + [str(a) for a in args],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        check(self.p.stdout.readline().strip() == "ready", "python started")
        self.pid = self.p.pid

    def go(self):
        self.p.stdin.write("go\n")
        self.p.stdin.flush()
        return self.p.stdout.readline().strip()

    def end(self):
        if self.p.poll() is None:
            self.p.stdin.write("end\n")
            self.p.stdin.flush()
        out, err = self.p.communicate(timeout=30)
        return err


def pair_ns(st):
    return st["compensation"]["pair_ns"], st["compensation"].get("pair_sd_ns", 0)


def t_python_gc(d):
    """python.gc (CPython's gc__start/gc__done, semaphores) against gc.callbacks: the
    same collections, times within the probes' own cost."""
    py = Py(GC_SCRIPT)
    try:
        r = cli(d, "enable", py.pid, "PythonGC")
        check(r.returncode == 0, "enable PythonGC: %s" % r.stderr.strip())
        n, cb_ns = map(int, py.go().split())
        st = stats(d, py.pid)
        g = region(st, "python.gc")
        pair, sd = pair_ns(st)
        check(st["attach_points"] == "nop1", "python's sites are plain nops: %s"
              % st["attach_points"])
        # gc.callbacks' start/stop run outside the probes: their span is the region plus
        # one begin/end pair of probe cost plus the callback's own return and call
        resid = (cb_ns - g["inclusive_ns"] - n * pair) / max(n, 1)
        tol = max(5000.0, 0.5 * pair)
        hi = max(10000.0, pair)  # the callback's own cost is on the high side only
        print("    gc: %d collections by gc.callbacks, %d by featprof; callbacks %.3f ms, "
              "featprof %.3f ms + %d x pair %.0f ns (sd %.0f) -> residual %.0f ns per "
              "collection (allowed -%.0f..%.0f: callback overhead)" %
              (n, g["count"], cb_ns / 1e6, g["inclusive_ns"] / 1e6, n, pair, sd, resid, tol, hi),
              flush=True)
        check(n > 20 and g["count"] == n, "collections %d vs gc.callbacks %d" % (g["count"], n))
        check(-tol < resid < hi, "time residual %.0f ns per collection" % resid)
        check(sum(st["anomalies"].values()) == 0, "no anomaly: %s" % st["anomalies"])
    finally:
        py.end()


def t_python_import(d):
    """python.import against -X importtime: one instance per import line, exclusive
    time = the sum of importtime's self column, nested imports nest."""
    mods = os.path.join(td.TMP, "mods")
    os.makedirs(mods, exist_ok=True)
    nmod = 30
    for i in range(nmod):
        with open(os.path.join(mods, "m%d.py" % i), "w") as f:
            # every third module imports a child of its own: nested instances
            body = "x = sum(range(20000))\n"
            if i % 3 == 0:
                body = "import c%d\n" % i + body
                with open(os.path.join(mods, "c%d.py" % i), "w") as g:
                    g.write("y = sum(range(20000))\n")
            f.write(body)
    py = Py(IMPORT_SCRIPT, mods, nmod, flags=("-X", "importtime"))
    try:
        r = cli(d, "enable", py.pid, "PythonImport")
        check(r.returncode == 0, "enable PythonImport: %s" % r.stderr.strip())
        check(py.go() == "done", "imports done")
        st = stats(d, py.pid)
        err = py.end()
        lines = err.split("MARK", 1)[1].splitlines() if "MARK" in err else []
        rows = [re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", ln) for ln in lines]
        rows = [m for m in rows if m]
        self_us = sum(int(m.group(1)) for m in rows)
        g = region(st, "python.import")
        pair, _ = pair_ns(st)
        n = len(rows)
        # importtime reads its clock outside the probes: each instance's self time holds
        # one pair of probe cost more than featprof's compensated exclusive time (a
        # nested import's pair falls into its parent's self time: the same per line)
        resid = (self_us * 1000 - g["exclusive_ns"] - n * pair) / max(n, 1)
        tol = max(5000.0, 0.5 * pair) + 1000  # + importtime's rounding to 1 us
        hi = max(10000.0, pair) + 1000  # its clock reads and fprintf: the high side only
        print("    import: %d lines of -X importtime, %d instances by featprof (%d nested); "
              "self sum %.3f ms, featprof exclusive %.3f ms + %d x pair %.0f ns -> residual "
              "%.0f ns per import (allowed -%.0f..%.0f)" %
              (n, g["count"], sum(1 for m in rows if len(m.group(3)) > 1),
               self_us / 1e3, g["exclusive_ns"] / 1e6, n, pair, resid, tol, hi), flush=True)
        check(n == nmod + nmod // 3 and g["count"] == n, "imports %d vs importtime %d (expect %d)"
              % (g["count"], n, nmod + nmod // 3))
        nested = sum(1 for m in rows if len(m.group(3)) > 1)
        check(g.get("recursion") == nested == nmod // 3,
              "nested imports seen as nesting: %s vs %d" % (g.get("recursion"), nested))
        check(-tol < resid < hi, "exclusive residual %.0f ns per import" % resid)
    finally:
        if py.p.poll() is None:
            py.end()


def t_definitions_bad_input(d):
    """Bad definitions: one line each, nothing attached or changed."""
    py = Py(GC_SCRIPT)
    try:
        cases = [
            ("region x begin python:gc__start\n", "expected: region NAME"),
            ("region x begin python:gc__start features A\n", "needs a begin and an end"),
            ("region x begin python gc__start end python:gc__done\n", "PROVIDER:NAME"),
            ("regoin x begin a:b end a:c\n", "expected: region NAME"),
            ("region x begin python:gc__start end python:gc__done features A,,B\n",
             "a feature name"),
            ("region x begin python:gc__start end python:gc__done\n"
             "region x begin python:gc__done end python:gc__start\n", "already defined"),
            ("region typo begin python:gc__strat end python:gc__done\n",
             "has no probe python:gc__strat"),
        ]
        for i, (text, want) in enumerate(cases):
            path = os.path.join(td.TMP, "bad%d.regions" % i)
            with open(path, "w") as f:
                f.write(text)
            r = cli(d, "enable", py.pid, "--regions", path, "x")
            lines = r.stderr.strip().splitlines()
            check(r.returncode != 0 and len(lines) == 1 and want in lines[0],
                  "bad definition %d: rc %d %r" % (i, r.returncode, r.stderr))
            st = cli(d, "status", "--json")
            check(st.returncode == 0 and str(py.pid) not in st.stdout,
                  "bad definition %d attached nothing" % i)
        # the protocol: definitions that are not an object, text too large
        c = td.Client(d)
        r = c.call("enable", pid=py.pid, features=["PythonGC"], definitions="x")
        check("error" in r and r["error"]["code"] == "bad_request", "definitions not an object")
        r = c.call("enable", pid=py.pid, features=["PythonGC"],
                   definitions={"name": "big", "text": "#" * (2 << 20)})
        check("error" in r, "oversized definitions refused: %s" % r.get("error"))
        # a good file of one's own joins the installed ones: an end probe as a region
        path = os.path.join(td.TMP, "good.regions")
        with open(path, "w") as f:
            f.write("# mine\nregion my.gc begin python:gc__start end python:gc__done "
                    "features Mine\n")
        r = cli(d, "list", py.pid, "--regions", path, "--json")
        lst = json.loads(r.stdout) if r.returncode == 0 else {}
        sites = [s for rg in lst.get("regions", []) if rg["name"] == "my.gc"
                 for s in rg["sites"]]
        check(len(sites) == 2 and all(s["provider"] == "python" for s in sites) and
              sorted(s["probe"] for s in sites) == ["gc__done", "gc__start"],
              "list shows provider and probe of each site: %s" % sites)
        r = cli(d, "enable", py.pid, "--regions", path, "Mine")
        check(r.returncode == 0, "enable with own definitions: %s" % r.stderr)
        r = cli(d, "list", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6")
        check(r.returncode == 1 and "other stapsdt providers: libstdcxx" in r.stderr,
              "providers without a definition are named: %r" % r.stderr)
        c.close()
        cli(d, "detach", py.pid)
    finally:
        py.end()


class Service:
    """tests/targets/service: commands on stdin, one answer line each."""

    def __init__(self, path=None):
        self.p = subprocess.Popen([path or td.B + "/tests/targets/service"],
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        line = self.p.stdout.readline()
        assert line.startswith("ready "), line
        self.pid = int(line.split()[1])

    def cmd(self, line, timeout=60):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        return self.p.stdout.readline().strip()

    def end(self):
        if self.p.poll() is None:
            self.p.stdin.close()
            self.p.wait(10)


def t_dlopen(d):
    """A library dlopen'ed after enable --all is measured within 100 ms of its mapping
    (kernel event, no polling); one enabled by feature joins at the next enable."""
    lib = td.B + "/tests/targets/libsite.so"
    sv = Service()
    try:
        r = cli(d, "enable", sv.pid, "--all")
        check(r.returncode == 0, "enable --all: %s" % r.stderr.strip())
        check(sv.cmd("work 100") == "worked", "work")
        n, period_ms = 400, 1
        t0 = time.monotonic()
        check(sv.cmd("dlopen %s %d %d" % (lib, n, period_ms)) == "dlopened %d" % n, "dlopen")
        per_call = (time.monotonic() - t0) / n  # the real period: sleep plus the call
        st = stats(d, sv.pid)
        g = region(st, "lib_region") if any(x["name"] == "lib_region"
                                            for x in st["regions"]) else None
        counted = g["count"] if g else 0
        latency_ms = (n - counted) * per_call * 1e3
        print("    dlopen: %d calls of lib_work, one every %.2f ms; %d measured -> the "
              "library was measured %.1f ms after its mapping" %
              (n, per_call * 1e3, counted, latency_ms), flush=True)
        check(g is not None and g["enabled"], "lib_region joined and enabled")
        check(latency_ms < 100, "measured within 100 ms of dlopen: %.1f ms" % latency_ms)
        check(region(st, "service_work")["count"] == 100, "the executable's region kept")
    finally:
        sv.end()
    # enabled by feature: the library's feature can be enabled once it is mapped
    sv = Service()
    try:
        check(cli(d, "enable", sv.pid, "Service").returncode == 0, "enable Service")
        check(sv.cmd("dlopen %s 10 0" % lib) == "dlopened 10", "dlopen")
        r = cli(d, "enable", sv.pid, "Library")
        check(r.returncode == 0, "enable Library after dlopen: %s" % r.stderr.strip())
        sv.cmd("dlopen %s 25 0" % lib)
        st = stats(d, sv.pid)
        check(region(st, "lib_region")["count"] == 25, "Library measured after its enable: %d"
              % region(st, "lib_region")["count"])
    finally:
        sv.end()


def wait_member(d, exe, pid, timeout=10):
    """Seconds until pid is a live member of exe's group (it is measured from then)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        r = cli(d, "status", "--json")
        if r.returncode == 0:
            for g in json.loads(r.stdout).get("executables", []):
                if g["exe"] == exe and pid in g["processes"]:
                    return time.monotonic() - t0
        time.sleep(0.01)
    return None


def t_exe(d):
    """--exe: processes running now, started later and forked children are measured;
    figures summed over them (exited ones kept), per process beside; a restarted service
    keeps its figures; disable ends the group; bad input one line."""
    exe = os.path.join(td.TMP, "service-copy")  # its own inode: no other test's process
    subprocess.run(["cp", td.B + "/tests/targets/service", exe], check=True)
    a = Service(exe)
    later = []
    try:
        r = cli(d, "enable", "--exe", exe, "--all")
        check(r.returncode == 0 and "1 processes now" in r.stdout,
              "enable --exe with one process running: %r %r" % (r.stdout, r.stderr))
        check(a.cmd("work 50") == "worked", "work in the running process")
        b = Service(exe)  # started after the enable: joins by its exec
        later.append(b)
        lat = wait_member(d, exe, b.pid)
        print("    a process started later was attached %.0f ms after it printed ready"
              % (lat * 1e3 if lat is not None else -1), flush=True)
        check(lat is not None, "the later process joined")
        check(b.cmd("work 70") == "worked", "work in a later process")
        check(a.cmd("fork 3 40 400") == "forked 3", "forked children work and exit")
        b.end()           # a "restart": b exits, c starts
        c = Service(exe)
        later.append(c)
        lat = wait_member(d, exe, c.pid)
        print("    the restarted process was attached %.0f ms after it printed ready (the "
              "daemon was releasing the exited children's uprobes)"
              % (lat * 1e3 if lat is not None else -1), flush=True)
        check(c.cmd("work 30") == "worked", "work in the restarted process")
        r = cli(d, "stats", "--exe", exe, "--json")
        st = json.loads(r.stdout) if r.returncode == 0 else {}
        total = region(st, "service_work")["count"] if st.get("regions") else -1
        procs = st.get("processes", [])
        per = {p["pid"]: region(p, "service_work")["count"] for p in procs}
        print("    exe: %d processes joined (%d live, %d exited, %d missed); service_work "
              "%d in all = %s" % (st.get("processes_joined", -1), st.get("processes_live", -1),
                                  st.get("processes_exited", -1), st.get("processes_missed", -1),
                                  total, per), flush=True)
        check(per.get(a.pid) == 50 and per.get(b.pid) == 70 and per.get(c.pid) == 30,
              "per process: running 50, later 70 (exited, kept), restarted 30: %s" % per)
        forked = [n for p, n in per.items() if p not in (a.pid, b.pid, c.pid)]
        check(sorted(forked) == [40, 40, 40], "three forked children, 40 each: %s" % forked)
        check(total == sum(per.values()), "the sum is the sum of the processes: %d vs %d"
              % (total, sum(per.values())))
        r = cli(d, "stats", "--exe", exe)
        check(r.returncode == 0 and "processes" in r.stdout and "service_work" in r.stdout,
              "human table for --exe: %s" % r.stdout[:200])
        # bad input
        r = cli(d, "enable", "--exe", "relative/path", "--all")
        check(r.returncode == 2 and "absolute path" in r.stderr.splitlines()[0],
              "relative path: %r" % r.stderr)
        r = cli(d, "enable", "--exe", "/nonexistent/prog", "--all")
        check(r.returncode == 1 and "No such file" in r.stderr, "missing file: %r" % r.stderr)
        r = cli(d, "stats", "--exe", "/bin/true")
        check(r.returncode == 1 and "not profiled" in r.stderr, "not a group: %r" % r.stderr)
        r = cli(d, "enable", "--exe", exe, "--all", user="nobody")
        check(r.returncode == 1 and "root" in r.stderr, "nobody may not: %r" % r.stderr)
        # the end: figures stay, processes no longer followed
        r = cli(d, "disable", "--exe", exe, "--all")
        check(r.returncode == 0 and "no longer followed" in r.stdout, "disable: %r" % r.stdout)
        e = Service(exe)
        later.append(e)
        e.cmd("work 5")
        st2 = json.loads(cli(d, "stats", "--exe", exe, "--json").stdout)
        check(region(st2, "service_work")["count"] == total and
              all(p["pid"] != e.pid for p in st2["processes"]),
              "after disable: figures kept, a new process not joined")
    finally:
        a.end()
        for x in later:
            x.end()


TESTS = [t_python_gc, t_python_import, t_definitions_bad_input, t_dlopen, t_exe]


def main():
    if os.geteuid() != 0:
        print("SKIP: integration tests need root (BPF)")
        return 77
    d = td.Daemon("services")
    passed = failed = 0
    try:
        for t in TESTS:
            if td.ONLY and t.__name__ not in td.ONLY:
                continue
            before = len(td.FAILS)
            print("  %s: %s" % (t.__name__, t.__doc__.splitlines()[0]), flush=True)
            try:
                t(d)
            except Exception as e:  # a crash of the test is a failure, not a skip
                import traceback
                traceback.print_exc()
                td.FAILS.append("%s raised %r" % (t.__name__, e))
            if len(td.FAILS) == before:
                passed += 1
            else:
                failed += 1
    finally:
        d.stop()
        if td.FAILS:
            print("---- featprofd log ----\n" + d.logtext()[-3000:])
    print("services: %d passed, %d failed (%d checks)" % (passed, failed, td.CHECKS[0]))
    return 1 if failed or td.FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
