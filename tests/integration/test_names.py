#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Integration tests of the names people read and of call stacks of any process (issue 45,
parts 1 to 3; common/demangle.c, common/symbols.c, daemon/stacks/): tests/targets/shipped,
a C++ program without featprof.h (a class template's static member function, a lambda, an
exception), tests/targets/shipped_c.c (static functions), each installed stripped five
ways, and tests/targets/stacks (two threads: libc's thread start). The real featprofd on a
temporary socket, with DEBUGINFOD_URLS naming a debuginfod (elfutils') that a test starts
on a folder. Needs root.
usage: test_names.py BUILD_DIR [TEST...]"""
import json
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from harness import check, cli  # noqa: E402

TG = h.B + "/tests/targets/"
K2 = "shipped::Kernel<2>::run(unsigned long)"
K1 = "shipped::Kernel<1>::run(unsigned long)"


def t_cxx_list(d):
    """list --functions of a C++ program: demangled names, the symbol kept in JSON, a
    pattern matching either"""
    r = cli(d, "list", TG + "shipped", "--functions", "shipped*")
    check(K2 in r.stdout and K1 in r.stdout, "demangled in the table: %s" % r.stdout[:400])
    for pat in ("shipped::Kernel<2>*", "_ZN7shipped6KernelILi2EE*"):
        r = cli(d, "list", TG + "shipped", "--functions", pat, "--json")
        fns = [f for o in json.loads(r.stdout or "{}").get("objects", [])
               for f in o["functions"]]
        check([f["name"] for f in fns] == [K2] and
              fns[0].get("symbol", "").startswith("_ZN7shipped6KernelILi2EE3run"),
              "pattern %s: %s" % (pat, fns))


def t_any_process_stacks(d):
    """sample --stacks of a process without featprof probes: its samples all outside
    regions, its C++ functions by their names (shares as the program splits its work:
    Kernel<2> twice Kernel<1>), the mangled symbol in JSON"""
    p = subprocess.Popen([TG + "shipped", "6"], stdout=subprocess.PIPE, text=True)
    try:
        pid = int(p.stdout.readline().split()[1])
        r = cli(d, "sample", pid, "--stacks", "--duration", "3", "--json", timeout=60)
        t = cli(d, "sample", pid, "--stacks", "--duration", "1", "--top", "3")
    finally:
        p.kill()
        p.wait()
    check(r.returncode == 0, "sample --stacks of a process without probes: %s" % r.stderr)
    if r.returncode:
        return
    sm = json.loads(r.stdout)["sampling"]
    check(sm["base"]["samples"] == sm["samples"] and sm["samples"] > 100,
          "all %d samples outside regions (%d)" % (sm["samples"], sm["base"]["samples"]))
    fns = {f["name"]: f for f in sm["functions"]}
    k2, k1 = fns.get(K2, {}), fns.get(K1, {})
    # Kernel<2> does twice Kernel<1>'s iterations: 2/3 of the two's time
    both = k2.get("self_share", 0) + k1.get("self_share", 0)
    share = k2.get("self_share", 0) / both if both else 0
    se = k2.get("self_stderr", 0) / both if both else 1
    print("    %s %.1f%% ± %.1f, %s %.1f%%; of the two %.3f (2/3 by the program)" % (
        K2, 100 * k2.get("self_share", 0), 100 * k2.get("self_stderr", 0), K1,
        100 * k1.get("self_share", 0), share))
    check(abs(share - 2 / 3) <= 3 * se + 0.02, "Kernel<2>'s part %.3f, 2/3 by the program"
          % share)
    check(k2.get("symbol", "").startswith("_ZN7shipped6KernelILi2EE3run"),
          "its symbol kept: %s" % k2)
    check(K2 in t.stdout, "the table names it: %s" % t.stdout[-600:])


def t_global_names(d):
    """a function's global name before a local alias at the same address (glibc's
    __GI___clone3), a symbol version left out (clock_gettime@@GLIBC_2.17)"""
    p = subprocess.Popen([TG + "stacks", "3000", "600", "2"], stdout=subprocess.DEVNULL)
    try:
        r = cli(d, "sample", p.pid, "--stacks", "--duration", "1", "--json", timeout=60)
    finally:
        p.kill()
        p.wait()
    names = [f["name"] for f in
             json.loads(r.stdout or "{}").get("sampling", {}).get("stacks", {}).get(
                 "functions", [])]
    print("    %s" % names)
    check("start_thread" in names and not [n for n in names if n.startswith("__GI_")],
          "no __GI_ alias: %s" % names)
    check(not [n for n in names if "@" in n], "no symbol version: %s" % names)
    # the global name though it has more underscores (static spin, global __alias_spin_v2
    # at its address): the one perf report chooses too
    exe = os.path.join(h.TMP, "alias")
    subprocess.run(["gcc", "-O2", "-g", os.path.join(SRC, "alias.c"), "-o", exe], check=True)
    p = subprocess.Popen([exe, "3"])
    try:
        r = cli(d, "sample", p.pid, "--stacks", "--duration", "1", "--json", timeout=60)
    finally:
        p.kill()
        p.wait()
    top = (json.loads(r.stdout or "{}").get("sampling", {}).get("functions") or [{}])[0]
    check(top.get("name") == "__alias_spin_v2", "alias: its global name: %s" % top)


SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "targets")
# the programs' own functions, and the share of the two's time each takes by the program
PROGRAMS = (("c", "gcc", "shipped_c.c", {"shuffle": 2 / 3, "mix": 1 / 3}),
            ("c++", "g++", "shipped.cc", {K2: 2 / 3, K1: 1 / 3}))
LAYOUTS = ("symtab", "build-id", "debuglink", "minidebuginfo", "debuginfod")
SERVED = os.path.join(h.TMP, "debuginfod-folder")
CACHE = os.path.join(h.TMP, "debuginfod-cache")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


PORT = free_port()
URL = "http://127.0.0.1:%d" % PORT


def minidebuginfo(full, out):
    """gdb's recipe (as Fedora ships binaries): stripped, the functions .dynsym lacks in an
    xz-compressed .symtab in .gnu_debugdata."""
    def names(*a):
        o = subprocess.run(["nm", *a, "--format=posix", "--defined-only", full],
                           capture_output=True, text=True).stdout
        return {l.split()[0] for l in o.splitlines() if len(l.split()) > 1 and
                (a or l.split()[1] in "TtWw")}
    keep = out + ".keep"
    with open(keep, "w") as f:
        f.write("\n".join(sorted(names() - names("-D"))) + "\n")
    subprocess.run(["objcopy", "--only-keep-debug", full, out + ".dbg"], check=True)
    subprocess.run(["objcopy", "-S", "--remove-section", ".gdb_index", "--remove-section",
                    ".comment", "--keep-symbols=" + keep, out + ".dbg", out + ".mini"],
                   check=True)
    subprocess.run(["xz", "-f", out + ".mini"], check=True)
    subprocess.run(["objcopy", "--strip-all", "--add-section",
                    ".gnu_debugdata=" + out + ".mini.xz", full, out], check=True)


def install(cc, src, layout, installed):
    """src built with -g under a build id of its own, then installed as layout says: its
    path. Debug files put under /usr/lib/debug are listed in installed (removed after)."""
    d = os.path.join(h.TMP, "shipped", layout)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, os.path.splitext(src)[0])
    bid = os.urandom(12).hex()
    full = path + ".full"
    subprocess.run([cc, "-O2", "-g", "-Wl,--build-id=0x" + bid, os.path.join(SRC, src),
                    "-o", full], check=True)
    dbg = os.path.join(d, os.path.basename(path) + ".debug")
    subprocess.run(["objcopy", "--only-keep-debug", full, dbg], check=True)
    if layout == "symtab":
        shutil.copy(full, path)
    elif layout == "debuglink":
        subprocess.run(["objcopy", "--strip-all", "--add-gnu-debuglink=" + dbg, full, path],
                       check=True)
    elif layout == "minidebuginfo":
        minidebuginfo(full, path)
    else:
        subprocess.run(["objcopy", "--strip-all", full, path], check=True)
        to = ("/usr/lib/debug/.build-id/%s/%s.debug" % (bid[:2], bid[2:])
              if layout == "build-id" else os.path.join(SERVED, bid + ".debug"))
        os.makedirs(os.path.dirname(to), exist_ok=True)
        shutil.copy(dbg, to)
        if layout == "build-id":
            installed.append(to)
    if layout != "debuglink":
        os.remove(dbg)
    return path, bid


def served(bids, timeout=60):
    """Waits until the server answers every build id: whether it did."""
    end = time.time() + timeout
    for b in bids:
        while True:
            try:
                urllib.request.urlopen("%s/buildid/%s/debuginfo" % (URL, b), timeout=5)
                break
            except Exception:
                if time.time() > end:
                    return False
                time.sleep(0.3)
    return True


def requests():
    """The server's count of HTTP requests so far (its /metrics)."""
    text = urllib.request.urlopen(URL + "/metrics", timeout=5).read().decode()
    return sum(float(l.split()[-1]) for l in text.splitlines()
               if l.startswith("http_requests_total") and 'type="metrics"' not in l)


CLONE = re.compile(r"(\.(constprop|isra|part|cold)(\.[0-9]+)?)+$")


PERF_IDS = os.path.join(h.TMP, "perf-buildids")  # perf's build-id cache, not ~/.debug


def perf_debug(path, layout, bid):
    """Where Debian 12's perf (6.1) finds no symbols, what a perf that reads them does:
    built with debuginfod (Debian's is not), the server's file; with MiniDebugInfo support
    (perf 6.1 names nothing of such a binary: [unknown]), the .gnu_debugdata section's
    decompressed ELF. Either put as "debug" in perf's build-id cache, where perf reads it."""
    got = os.path.join(h.TMP, "perf-debug")
    if layout == "debuginfod":
        env = dict(os.environ, DEBUGINFOD_URLS=URL,
                   DEBUGINFOD_CACHE_PATH=os.path.join(h.TMP, "perf-debuginfod-cache"))
        got = subprocess.run(["debuginfod-find", "debuginfo", bid], capture_output=True,
                             text=True, env=env).stdout.strip()
    elif layout == "minidebuginfo":
        subprocess.run(["objcopy", "--dump-section", ".gnu_debugdata=" + got + ".xz", path,
                        got + ".bin"], check=True)
        subprocess.run(["xz", "-df", got + ".xz"], check=True)
    else:
        return
    entry = os.path.join(PERF_IDS, ".build-id", bid[:2], bid[2:])
    if got and os.path.isdir(entry):
        shutil.copy(got, os.path.join(os.path.realpath(entry), "debug"))


def sampled(d, path, perf=None, lay=None, bid=None):
    """path run and sampled (2 s at 1999 Hz): {function: self share} of its own, the
    samples, its object's symbol source; perf's shares of the same window where perf is
    a file to record into (lay, bid: the layout and build id, for perf_debug)."""
    p = subprocess.Popen([path, "5"], stdout=subprocess.PIPE, text=True)
    try:
        pid = int(p.stdout.readline().split()[1])
        pf = perf and subprocess.Popen(
            ["perf", "--buildid-dir", PERF_IDS, "record", "-q", "-e", "cpu-clock", "-F",
             "1999", "-p", str(pid), "-o", perf, "--", "sleep", "2"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        r = cli(d, "sample", pid, "--stacks", "--duration", "2", "--hz", "1999", "--json",
                timeout=60)
        if pf:
            pf.wait(60)
    finally:
        p.kill()
        p.wait()
    if not check(r.returncode == 0, "%s: sample --stacks: %s" % (path, r.stderr.strip())):
        return None
    sm = json.loads(r.stdout)["sampling"]
    objs = sm["stacks"]["objects"]
    own = [i for i, o in enumerate(objs) if o["path"] == path]
    ours = {f["name"]: f["self_share"] for f in sm["functions"]
            if objs[f["object_index"]]["path"] == path} if "object_index" in (
                sm["functions"] or [{}])[0] else {f["name"]: f["self_share"]
                                                   for f in sm["functions"]}
    theirs = {}
    if perf:
        perf_debug(path, lay, bid)
        out = subprocess.run(["perf", "--buildid-dir", PERF_IDS, "script", "-F", "ip,sym",
                              "-i", perf],
                             capture_output=True, text=True, errors="replace").stdout
        out = [l.split(None, 1) for l in out.splitlines() if l.strip()]
        for l in out:
            # perf names a function without its parameters, a clone apart
            k = CLONE.sub("", l[1].strip() if len(l) > 1 else "?")
            theirs[k] = theirs.get(k, 0) + 1 / len(out)
    return ours, sm["samples"], objs[own[0]] if own else {}, theirs


def t_shipped_five_ways(d):
    """A C and a C++ program built with -g, installed stripped five ways (symbols kept;
    a build-id debug directory; .gnu_debuglink; MiniDebugInfo; a debuginfod server on a
    folder): sample --stacks names the same functions with the same shares (within 1 point
    beyond the sampling error) as the unstripped build, and as perf on the same layout in
    the same window; each object says
    where its symbols came from; debuginfod's answer cached, and nothing asked of it where
    DEBUGINFOD_URLS is not set"""
    installed, srv = [], None
    os.makedirs(SERVED, exist_ok=True)
    try:
        built = {(n, lay): install(cc, src, lay, installed)
                 for n, cc, src, _ in PROGRAMS for lay in LAYOUTS}
        srv = subprocess.Popen(["debuginfod", "-F", "-p", str(PORT), "-d",
                                os.path.join(h.TMP, "debuginfod.sqlite"), "-t", "1", SERVED],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env={k: v for k, v in os.environ.items()  # not itself upstream
                                    if not k.startswith("DEBUGINFOD_")})
        if not check(served([built[(n, "debuginfod")][1] for n, *_ in PROGRAMS]),
                     "debuginfod serves the debug files"):
            return
        for n, _, _, truth in PROGRAMS:
            base = None
            for lay in LAYOUTS:
                path = built[(n, lay)][0]
                got = sampled(d, path, os.path.join(h.TMP, "shipped.perf"), lay,
                              built[(n, lay)][1])
                if not got:
                    continue
                ours, samples, obj, theirs = got
                print("    %-4s %-14s symbols %-14s %s" % (n, lay, obj.get("symbols"), ", ".join(
                    "%s %.1f%%" % (f, 100 * ours.get(f, 0)) for f in truth)))
                print("    %-4s %-14s perf record on the same window: %s" % (
                    n, "", ", ".join("%s %.1f%%" % (f, 100 * theirs.get(unparam(f), 0))
                                     for f in truth)))
                check(obj.get("symbols") == lay, "%s %s: symbols from %s" % (
                    n, lay, obj.get("symbols")))
                compare_to(n, "perf on " + lay, {unparam(k): v for k, v in ours.items()},
                           samples, theirs, samples, {unparam(k): v for k, v in truth.items()})
                if base is None:
                    base = (ours, samples)
                else:
                    compare_to(n, lay, ours, samples, base[0], base[1], truth)
        # the cached answer serves with the server asked nothing; no server, no question
        before = requests()
        env = dict(os.environ)
        env.pop("DEBUGINFOD_URLS", None)
        r = subprocess.run([h.B + "/featprof", "list", built[("c", "debuginfod")][0],
                            "--functions", "*", "--json"], capture_output=True, text=True,
                           env=env)
        src = json.loads(r.stdout or "{}").get("objects", [{}])[0].get("symbols")
        check(src != "debuginfod" and requests() == before,
              "no DEBUGINFOD_URLS: symbols from %s, the server asked nothing" % src)
        srv.terminate()
        srv.wait(10)
        srv = None
        r = subprocess.run([h.B + "/featprof", "list", built[("c", "debuginfod")][0],
                            "--functions", "*", "--json"], capture_output=True, text=True)
        o = json.loads(r.stdout or "{}").get("objects", [{}])[0]
        check(o.get("symbols") == "debuginfod" and o.get("debug_file", "").startswith(CACHE),
              "the server gone, the cached answer: %s %s" % (o.get("symbols"),
                                                             o.get("debug_file")))
    finally:
        if srv:
            srv.kill()
            srv.wait()
        for f in installed:
            os.remove(f)


def t_cxx_member_calls(d):
    """A --function region on a static C++ member function of a stripped program (its
    symbols from its .gnu_debuglink file) counts every call: the program's own count. So
    does one on a function an exception unwinds through, every 64th call, and the program
    lives (a return probe there would end it in std::terminate); both named as people
    read them in the table, the symbol in JSON."""
    path, _ = install("g++", "shipped.cc", "debuglink", [])
    out = os.path.join(h.TMP, "member.json")
    r = cli(d, "run", "--function", "K=shipped::Kernel<2>::run*", "--function",
            "F=shipped::fail*", "-o", out, "--", path, "2", timeout=60)
    if not check(r.returncode == 0, "run: exit %d: %s" % (r.returncode, r.stderr.strip())):
        return
    truth = json.loads(next(l for l in r.stdout.splitlines() if l.startswith("{")))
    regs = {x["name"]: x for x in json.load(open(out))["regions"]}
    k = regs.get("_ZN7shipped6KernelILi2EE3runEm", {})
    f = regs.get("_ZN7shipped4failEm", {})
    print("    %d calls of Kernel<2>::run counted (the program: %d), %d of fail (%d, %d "
          "thrown)" % (k.get("count", -1), truth["run_calls"], f.get("count", -1),
                       truth["run_calls"], truth["throws"]))
    check(k.get("count") == truth["run_calls"] and k.get("measured") == "calls",
          "Kernel<2>::run: every call counted: %s" % k)
    check(f.get("count") == truth["run_calls"] and truth["throws"] > 0,
          "fail: every call counted, %d exceptions through it: %s" % (truth["throws"], f))
    r = cli(d, "run", "--function", "K=shipped::Kernel<2>::run*", "--function",
            "F=shipped::fail*", "--", path, "1", timeout=60)
    table = r.stderr    # the program's own output is stdout
    check(re.search(r"^shipped::Kernel<2>::run~ +[0-9]+ +calls", table, re.M) and
          re.search(r"^shipped::fail\(unsigned ~ +[0-9]+ +calls", table, re.M),
          "the table names them demangled:\n%s" % table)


def unparam(name):
    """A C++ function's name without its parameter list, as perf script prints it."""
    return re.sub(r"\(.*\)( const)?$", "", name)


def compare_to(n, what, ours, n1, theirs, n2, truth):
    """Each of the program's functions: its share in ours and in theirs, within 1 point
    beyond 3 standard errors of the difference of two samplings (n1 and n2 samples)."""
    for f in truth:
        a, b = ours.get(f, 0), theirs.get(f, 0)
        p = (a + b) / 2
        tol = 0.01 + 3 * math.sqrt(p * (1 - p) * (1 / max(n1, 1) + 1 / max(n2, 1)))
        check(abs(a - b) <= tol, "%s, %s: %s %.1f%% against %.1f%% (allowed %.1f points)" % (
            n, what, f, 100 * a, 100 * b, 100 * tol))


def sample_of(d, argv, secs="2"):
    """argv (a program that prints "ready PID" first) run and sampled with stacks for secs
    seconds: the sampling JSON, or None (a failed check)."""
    # in the test's folder: node writes isolate-*-v8.log files into its working directory
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, cwd=h.TMP)
    try:
        pid = int(p.stdout.readline().split()[1])
        time.sleep(0.5)     # past its start (a JIT compiles its loops first)
        r = cli(d, "sample", pid, "--stacks", "--duration", secs, "--json", timeout=60)
    finally:
        p.kill()
        p.wait()
    if not check(r.returncode == 0, "%s: sample --stacks: %s" % (argv[0], r.stderr.strip())):
        return None
    return json.loads(r.stdout)["sampling"], pid


def t_split_clones(d):
    """A compiler's clones folded into their function by default (mix.constprop.0 is mix),
    named apart with --split-clones ("mix [clone .constprop.0]", as c++filt writes it),
    the symbol kept in JSON either way"""
    out = os.path.join(h.TMP, "clones")
    r = subprocess.run(["gcc", "-O2", "-g", os.path.join(SRC, "shipped_c.c"), "-o", out],
                       capture_output=True, text=True)
    syms = subprocess.run(["nm", out], capture_output=True, text=True).stdout
    if not check(r.returncode == 0 and "mix.constprop" in syms, "gcc -O2 made clones: %s"
                 % [l.split()[-1] for l in syms.splitlines() if "mix" in l]):
        return
    clone = next(l.split()[-1] for l in syms.splitlines() if "mix.constprop" in l)
    for split in (False, True):
        p = subprocess.Popen([out, "4"], stdout=subprocess.PIPE, text=True)
        try:
            pid = int(p.stdout.readline().split()[1])
            r = cli(d, "sample", pid, "--stacks", "--duration", "1", "--json",
                    *(["--split-clones"] if split else []), timeout=60)
        finally:
            p.kill()
            p.wait()
        fns = {f["name"]: f for f in json.loads(r.stdout or "{}").get("sampling", {}).get(
            "functions", [])}
        want = "mix [clone %s]" % clone[len("mix"):] if split else "mix"
        print("    %s: %s" % ("split" if split else "folded", sorted(
            n for n in fns if "mix" in n or "shuffle" in n)))
        check(want in fns and fns[want].get("symbol") == clone and
              ("mix" not in fns if split else not any("clone" in n for n in fns)),
              "%s: %s named %r" % ("--split-clones" if split else "default", clone, want))


def t_rust_names(d):
    """A Rust program built by rustc with legacy and with v0 symbols: its functions
    demangled (a const generic's instances apart under v0, as its mangling keeps them),
    the mangled symbol kept in JSON"""
    for scheme in ("legacy", "v0"):
        out = os.path.join(h.TMP, "shipped_rs_" + scheme)
        r = subprocess.run(["rustc", "-O", "-g", "--crate-name", "shipped_rs", "-o", out,
                            os.path.join(SRC, "shipped.rs")] +
                           (["-C", "symbol-mangling-version=v0"] if scheme == "v0" else []),
                           capture_output=True, text=True)
        if not check(r.returncode == 0, "rustc (%s): %s" % (scheme, r.stderr[-400:])):
            continue
        got = sample_of(d, [out, "4"])
        if not got:
            continue
        fns = {f["name"]: f for f in got[0]["functions"]}
        print("    %s: %s" % (scheme, ", ".join("%s %.1f%% (%s)" % (
            n, 100 * f["self_share"], f.get("symbol", "")[:30]) for n, f in fns.items()
            if f["self_share"] > 0.05)))
        if scheme == "legacy":  # the hash left out: both instances one name, as perf's
            f = fns.get("shipped_rs::spin", {})
            check(f.get("self_share", 0) > 0.9 and
                  f.get("symbol", "").startswith("_ZN10shipped_rs4spin17h"),
                  "legacy: shipped_rs::spin: %s" % f)
        else:
            two, one = fns.get("shipped_rs::spin::<2>", {}), fns.get("shipped_rs::spin::<1>", {})
            both = two.get("self_share", 0) + one.get("self_share", 0)
            share = two.get("self_share", 0) / both if both else 0
            se = two.get("self_stderr", 0) / both if both else 1
            check(both > 0.9 and abs(share - 2 / 3) <= 3 * se + 0.02 and
                  two.get("symbol", "").startswith("_R"),
                  "v0: spin::<2> %.3f of the two (2/3 by the program): %s" % (share, two))


def t_jit_frames(d):
    """node --perf-basic-prof: the functions V8 compiled named from its /tmp/perf-PID.map,
    as functions of the object [jit], the map named as their source"""
    got = sample_of(d, ["node", "--perf-basic-prof", os.path.join(SRC, "jit.js"), "5"], "3")
    if not got:
        return
    sm, pid = got
    try:
        objs = sm["stacks"]["objects"]
        jit = [i for i, o in enumerate(objs) if o["name"] == "[jit]"]
        fns = [f for f in sm["functions"] if jit and f.get("object_index") == jit[0]]
        hot = sum(f["self_share"] for f in fns if "hotLoop" in f["name"])
        cold = sum(f["self_share"] for f in fns if "coldLoop" in f["name"])
        print("    [jit]: %s" % ", ".join("%s %.1f%%" % (f["name"], 100 * f["self_share"])
                                         for f in fns if f["self_share"] > 0.01))
        check(jit and objs[jit[0]].get("symbols") == "perf-map" and
              objs[jit[0]].get("debug_file") == "/tmp/perf-%d.map" % pid,
              "the [jit] object and its map: %s" % (objs[jit[0]] if jit else objs))
        # hotLoop does twice coldLoop's iterations; V8's code for the two need not be
        # equally fast, so only that both hold the time, hotLoop the more
        check(hot + cold > 0.8 and hot > cold > 0.1,
              "hotLoop %.1f%%, coldLoop %.1f%% of the samples" % (100 * hot, 100 * cold))
    finally:
        if os.path.exists("/tmp/perf-%d.map" % pid):
            os.remove("/tmp/perf-%d.map" % pid)
    # without the map: the JIT's code one object, [anon] (an object per sample once)
    got = sample_of(d, ["node", os.path.join(SRC, "jit.js"), "5"], "1")
    if got:
        objs = got[0]["stacks"]["objects"]
        anon = [o for o in objs if o["name"] == "[anon]"]
        check(len(anon) == 1 and len(objs) < 20, "no map: %d objects, %d of them [anon]" % (
            len(objs), len(anon)))


def t_jit_map_trusted(d):
    """A perf map is read only as a regular file of the process's owner: a link to a file,
    or a file of another user's, names nothing (featprofd reads as root)"""
    import pwd
    fake = os.path.join(h.TMP, "fake.map")
    with open(fake, "w") as f:   # one entry over all user space: names every JIT frame
        f.write("1000 7ffffffff000 FAKE_ENTRY\n")
    for how in ("link", "another user's", "the owner's"):
        p = subprocess.Popen(["node", os.path.join(SRC, "jit.js"), "4"], stdout=subprocess.PIPE,
                             text=True)
        m = None
        try:
            pid = int(p.stdout.readline().split()[1])
            m = "/tmp/perf-%d.map" % pid
            if how == "link":
                os.symlink(fake, m)
            else:
                shutil.copy(fake, m)
                if how == "another user's":
                    os.chown(m, pwd.getpwnam("nobody").pw_uid, -1)
            time.sleep(0.5)
            r = cli(d, "sample", pid, "--stacks", "--duration", "1", "--json", timeout=60)
        finally:
            p.kill()
            p.wait()
            if m and os.path.lexists(m):
                os.remove(m)
        names = [f["name"] for f in json.loads(r.stdout or "{}").get("sampling", {}).get(
            "functions", [])]
        check(("FAKE_ENTRY" in names) == (how == "the owner's"),
              "a map that is %s: %s" % (how, "used" if "FAKE_ENTRY" in names else "not used"))


TESTS = h.discover(globals())

if __name__ == "__main__":
    # the daemon asks the test's debuginfod (up from t_shipped_five_ways on) and caches
    # its answers in the run's folder
    os.environ["DEBUGINFOD_URLS"] = URL
    os.environ["DEBUGINFOD_CACHE_PATH"] = CACHE
    sys.exit(h.run_file("names", TESTS))
