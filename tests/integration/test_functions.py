#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Integration tests of function regions (issue 34; common/symbols.c, common/catalog.c,
bpf/featprof.bpf.c "Function regions"): regions from a function's entry to its return in
a program with no featprof.h (tests/targets/funcs.c), built with full symbols, stripped to
.dynsym, and stripped with MiniDebugInfo. The real featprofd on a temporary socket. Needs root.
usage: test_functions.py BUILD_DIR [TEST...]"""
import json
import re
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from harness import check, cli, stats, region  # noqa: E402

TG = h.B + "/tests/targets/"
# work_tail ends in a jmp to work_leaf (a tail call): its instance holds work_leaf's
FUNCS = ("work_leaf", "work_outer", "work_rec", "lib_work", "work_tail")


class Funcs:
    """tests/targets/funcs: "ready PID", then its work on a line, its truth (JSON) after."""

    def __init__(self, binary, threads=2, rounds=200):
        self.p = subprocess.Popen([TG + binary, str(threads), str(rounds)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.p.stdout.readline()
        assert line.startswith("ready "), line
        self.pid = int(line.split()[1])

    def run(self):
        self.p.stdin.write("go\n")
        self.p.stdin.flush()
        return json.loads(self.p.stdout.readline())

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


def measure(d, binary, *enable):
    """Runs binary's work with function regions enabled by enable's arguments; its truth
    and featprof's stats (None where enable failed)."""
    t = Funcs(binary)
    try:
        r = cli(d, "enable", t.pid, *enable)
        if not check(r.returncode == 0, "enable %s: %s" % (" ".join(enable), r.stderr)):
            return None, None
        truth = t.run()
        return truth, stats(d, t.pid)
    finally:
        t.kill()


def check_figures(binary, truth, st, cal, mech):
    """Every call counted; each function's compensated exclusive time within 2% of the
    program's own plus the stated uncertainty; the longjmps as anomalies."""
    print("    %s: function pair cost %.0f ns (sd %.0f) at 4 us, calibrated; %s" % (
        binary, cal["pair_ns"], cal["pair_sd_ns"], mech))
    for f in FUNCS:
        r = region(st, f)
        want = truth[f]
        err = r["exclusive_ns"] - want["excl_ns"]
        unc = r["exclusive_uncertainty_ns"]
        print("    %-10s %5d calls (program %5d)  excl %9.3f ms (raw %9.3f) program %9.3f"
              " ms: %+5.2f%%, stated +-%.2f%%, off CPU %.3f ms" % (
                  f, r["count"], want["calls"], r["exclusive_ns"] / 1e6,
                  r["raw_exclusive_ns"] / 1e6, want["excl_ns"] / 1e6,
                  100 * err / want["excl_ns"], 100 * unc / want["excl_ns"],
                  r.get("exclusive_offcpu_ns", 0) / 1e6))
        check(r["count"] == want["calls"], "%s %s: %d calls counted of %d" % (
            binary, f, r["count"], want["calls"]))
        check(r["measured"] == "function", "%s %s: measured %s" % (binary, f, r["measured"]))
        # time off CPU inside an instance may fall in a window the program's own clock
        # leaves out (between its clock read and the probe's timestamp): featprof counts
        # it there, the program does not; featprof says how much there was
        off = r.get("exclusive_offcpu_ns", 0)
        check(-0.02 * want["excl_ns"] - unc <= err <= 0.02 * want["excl_ns"] + unc + off,
              "%s %s: exclusive %.3f ms against the program's %.3f ms (+-2%% +-%.3f, "
              "off CPU %.3f)" % (binary, f, r["exclusive_ns"] / 1e6, want["excl_ns"] / 1e6,
                                 unc / 1e6, off / 1e6))
    jump = region(st, "work_jump")
    an = st.get("anomalies", {})
    check(jump["count"] == 0 and an.get("no_return") == truth["jumps"],
          "%s: work_jump left by longjmp %d times: %d completed, no_return %s" % (
              binary, truth["jumps"], jump["count"], an.get("no_return")))
    check(region(st, "work_exit")["count"] == 0 and an.get("thread_exit_inside") == 1,
          "%s: a thread that exits inside work_exit: thread_exit_inside %s" % (
              binary, an.get("thread_exit_inside")))


def t_function_cxx(d):
    """C++ code's functions are counted, not timed, and says why: an exception that
    unwinds through a function whose return address the kernel's return probe replaced
    ends in std::terminate (measured on Linux 6.18: the unwinder finds no frame
    information at the trampoline). An entry probe alone counts every call, and the
    program lives and catches its exceptions. A function's cold part is not a function."""
    r = subprocess.run([h.B + "/featprof", "list", TG + "throws", "--functions", "*",
                        "--json"], capture_output=True, text=True)
    f = {x.get("symbol", x["name"]): x for x in json.loads(r.stdout)["objects"][0]["functions"]}
    check(f["middle"]["measurable"] and f["middle"]["measured"] == "calls" and
          "C++" in f["middle"]["calls_only"], "throws: middle counted, C++: %s" % f["middle"])
    check(not f["thrower.cold"]["measurable"] and "cold part" in f["thrower.cold"]["why"],
          "thrower.cold is no function: %s" % f["thrower.cold"])
    p = subprocess.Popen([TG + "throws"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
    try:
        pid = int(p.stdout.readline().split()[1])
        r = cli(d, "enable", pid, "--function", "E=middle,thrower")
        check(r.returncode == 0, "enable: %s" % r.stderr.strip())
        p.stdin.write("go\n")
        p.stdin.flush()
        out = p.stdout.readline().strip()
        check(out == "caught 5", "the program lives and catches its exceptions: %r" % out)
        st = stats(d, pid)
        for name in ("middle", "thrower"):
            reg = region(st, name)
            check(reg["count"] == 10 and reg["measured"] == "calls" and
                  reg["inclusive_ns"] == 0, "%s: 10 calls counted, not timed: %s" % (
                      name, {k: reg[k] for k in ("count", "measured", "inclusive_ns")}))
        check(not [x for x in st["regions"] if "cold" in x["name"]],
              "no region of thrower's cold part: %s" % [x["name"] for x in st["regions"]])
        table = cli(d, "stats", pid).stdout
        check(re.search(r"^middle +10 +calls +(only|off)", table, re.M) and "calls only: C++" in
              table, "the table says calls only:\n%s" % table)
    finally:
        p.kill()
        p.wait()


def t_function_regions(d):
    """Full symbols, .dynsym only, MiniDebugInfo: the same figures."""
    status = json.loads(cli(d, "status", "--json").stdout)
    cal = status["attach"]["function"]
    mech = status["kernel"]["mechanisms"]["function_regions"]
    for binary in ("funcs", "funcs_dyn", "funcs_mini"):
        truth, st = measure(d, binary, "--function", "Work=work_*,lib_work")
        if st:
            check_figures(binary, truth, st, cal, mech)


def t_function_features(d):
    """A function matched for two features is one region in both (an interaction);
    OBJECT:PATTERN picks the object."""
    truth, st = measure(d, "funcs", "--function", "Leaf=work_leaf",
                        "--function", "Both=work_leaf,libfuncs.so:lib_*")
    if not st:
        return
    leaf = region(st, "work_leaf")
    check(sorted(leaf["features"]) == ["Both", "Leaf"] and leaf["count"] == truth["work_leaf"]
          ["calls"], "work_leaf in both features, every call: %s" % leaf)
    check(region(st, "lib_work")["count"] == truth["lib_work"]["calls"], "lib_work by object")
    check(not any(r["name"] == "work_outer" for r in st["regions"]), "only what was asked")


def t_function_list(d):
    """list --functions: where the symbols came from, what a pattern matches and what it
    cannot measure."""
    for binary, src in (("funcs", "symtab"), ("funcs_dyn", "dynsym"),
                        ("funcs_mini", "minidebuginfo")):
        r = subprocess.run([h.B + "/featprof", "list", TG + binary, "--functions", "work_*",
                            "--json"], capture_output=True, text=True)
        j = json.loads(r.stdout)["objects"][0]
        names = sorted(f["name"] for f in j["functions"])
        check(j["symbols"] == src and "work_leaf" in names and
              all(f["measurable"] for f in j["functions"]),
              "%s: symbols from %s, %s" % (binary, j["symbols"], names))
    # a separate debug file found by .gnu_debuglink (next to the file; its CRC checked)
    linked, dbg = os.path.join(h.TMP, "funcs_link"), os.path.join(h.TMP, "funcs_link.debug")
    subprocess.run(["objcopy", "--only-keep-debug", TG + "funcs", dbg], check=True)
    subprocess.run(["objcopy", "--strip-all", "--add-gnu-debuglink=" + dbg, TG + "funcs",
                    linked], check=True)
    r = subprocess.run([h.B + "/featprof", "list", linked, "--functions", "work_*", "--json"],
                       capture_output=True, text=True)
    j = json.loads(r.stdout)["objects"][0]
    check(j["symbols"] == "debuglink" and j.get("debug_file", "").endswith("funcs_link.debug")
          and "work_leaf" in [f["name"] for f in j["functions"]],
          "debuglink: %s, %s" % (j["symbols"], j.get("debug_file")))
    with open(dbg, "r+b") as f:  # another file of that name: its CRC differs, not used
        f.seek(64)
        f.write(b"\0" * 8)
    r = subprocess.run([h.B + "/featprof", "list", linked, "--functions", "work_*", "--json"],
                       capture_output=True, text=True)
    check(json.loads(r.stdout)["objects"][0]["symbols"] != "debuglink", "a debug file whose "
          "CRC differs is not used")
    # static functions are gone from .dynsym: the stripped build says so
    r = subprocess.run([h.B + "/featprof", "list", TG + "funcs_dyn", "--functions", "spin"],
                       capture_output=True, text=True)
    check(r.returncode == 1 and "exported functions only" in r.stdout,
          "funcs_dyn: spin is not there, and why: %s" % r.stdout.strip())


def t_function_go(d):
    """A Go binary is refused with the reason (golang-go is among the test packages)."""
    src = os.path.join(h.TMP, "hello.go")
    with open(src, "w") as f:
        f.write('package main\nimport "fmt"\nfunc main() { fmt.Println("hello") }\n')
    env = dict(os.environ, GOCACHE=os.path.join(h.TMP, "gocache"),
               GOPATH=os.path.join(h.TMP, "gopath"))
    r = subprocess.run(["go", "build", "-o", os.path.join(h.TMP, "hello"), src], env=env,
                       capture_output=True, text=True)
    if not check(r.returncode == 0, "go build: %s" % r.stderr.strip()):
        return
    r = subprocess.run([h.B + "/featprof", "list", os.path.join(h.TMP, "hello"), "--functions",
                        "main.main", "--json"], capture_output=True, text=True)
    f = json.loads(r.stdout)["objects"][0]["functions"]
    check(len(f) == 1 and not f[0]["measurable"] and "Go binary" in f[0]["why"],
          "main.main of a Go binary: %s" % f)


def t_function_refused(d):
    """A pattern that matches nothing, or a malformed one: one line, nothing attached."""
    t = Funcs("funcs")
    try:
        r = cli(d, "enable", t.pid, "--function", "Work=no_such_fn*")
        check(r.returncode != 0 and "no function matching no_such_fn*" in r.stderr and
              r.stderr.count("\n") == 1, "no match: %s" % r.stderr.strip())
        r = cli(d, "enable", t.pid, "--function", "Work")
        check(r.returncode != 0 and r.stderr.count("\n") == 1, "malformed: %s" % r.stderr)
        st = json.loads(cli(d, "status", "--json").stdout)
        mine = [x for x in st.get("targets", []) if x.get("pid") == t.pid]
        check(not mine or not mine[0].get("attached_sites"), "nothing attached: %s" % mine)
    finally:
        t.kill()


LIBLZMA = "/lib/x86_64-linux-gnu/liblzma.so.5"
LIBZ = "/lib/x86_64-linux-gnu/libz.so.1"
# zlib under Debian's Python (not a python3 of another make on PATH): compressobj's
# compress() and flush() call deflate
PY_ZLIB = ("import sys, zlib\n"
           "print('ready', flush=True)\n"
           "sys.stdin.readline()\n"
           "c = zlib.compressobj(6)\n"
           "data = bytes(range(256)) * 64 + b'featprof ' * 4096\n"
           "n = sum(len(c.compress(data[i:] + data[:i])) for i in range(0, 2000, 7))\n"
           "n += len(c.flush())\n"
           "print('compressed', n, flush=True)\n")


def bpftrace_sum(pid, lib, fn):
    """bpftrace on pid counting fn's calls and summing their durations (uprobe and
    uretprobe, a tid-keyed start): started and attached, its process returned."""
    prog = ("uprobe:%s:%s { @s[tid] = nsecs; @n = count(); } "
            "uretprobe:%s:%s /@s[tid]/ { @t = sum(nsecs - @s[tid]); delete(@s[tid]); }"
            % (lib, fn, lib, fn))
    bt = subprocess.Popen(["bpftrace", "-p", str(pid), "-e", prog], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    line = ""
    while "Attaching" not in line:
        line = bt.stdout.readline()
        assert line, "bpftrace did not attach"
    return bt


def bpftrace_result(bt):
    out = bt.stdout.read()
    bt.wait(60)
    n = int(out.split("@n:")[1].split()[0]) if "@n:" in out else -1
    t = int(out.split("@t:")[1].split()[0]) if "@t:" in out else -1
    return n, t


def compare_real(d, what, p, pid, feature, start):
    """featprof's count and time of the function region in pid against bpftrace's,
    both attached before start() lets the program run."""
    lib, fn = feature
    bt = bpftrace_sum(pid, lib, fn)
    r = cli(d, "enable", pid, "--function", "Real=%s:%s" % (os.path.basename(lib), fn))
    if not check(r.returncode == 0, "%s: enable: %s" % (what, r.stderr.strip())):
        bt.kill()
        return
    start()
    p.wait(120)
    n, t = bpftrace_result(bt)
    st = stats(d, pid)
    cal = json.loads(cli(d, "status", "--json").stdout)["attach"]["function"]
    if not st:
        return
    r = region(st, fn)
    # each tool's span holds the other's programs (both at the same entry and return):
    # featprof's own cost in its span is what its compensation removed (by the gaps the
    # calls had), bpftrace's in featprof's span at most as much (a smaller program on
    # the same mechanism), plus a pair a call for the order of the two programs
    comp = r["raw_inclusive_ns"] - r["inclusive_ns"]
    tol = 2 * comp + n * (cal["pair_ns"] + 2 * cal["pair_sd_ns"]) + r["inclusive_uncertainty_ns"]
    print("    %s: %s calls featprof %d, bpftrace %d; time featprof %.3f ms (raw %.3f, +-%.3f),"
          " bpftrace %.3f ms: difference %+.3f ms, allowed +-%.3f (function pair %.0f ns)"
          % (what, fn, r["count"], n, r["inclusive_ns"] / 1e6, r["raw_inclusive_ns"] / 1e6,
             r["inclusive_uncertainty_ns"] / 1e6, t / 1e6,
             (r["inclusive_ns"] - t) / 1e6, tol / 1e6, cal["pair_ns"]))
    check(n > 0 and r["count"] == n, "%s: %s calls: featprof %d, bpftrace %d" % (
        what, fn, r["count"], n))
    check(abs(r["inclusive_ns"] - t) <= tol, "%s: %s time within the probes' costs" % (
        what, fn))


def t_real_binaries(d):
    """Debian's own binaries, stripped to .dynsym: liblzma's lzma_code under xz, zlib's
    deflate under python3.11; counts equal bpftrace's, times within the probes' cost."""
    data = os.path.join(h.TMP, "xz.in")
    with open(data, "wb") as f:
        for i in range(4000):
            f.write(b"featprof function regions %d " % i * 40 + os.urandom(256))
    with open(data, "rb") as src:
        p = subprocess.Popen(["xz", "-T1", "-6", "-c"], stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL)

        def feed():
            p.stdin.write(src.read())
            p.stdin.close()
        compare_real(d, "xz", p, p.pid, (LIBLZMA, "lzma_code"), feed)
    p = subprocess.Popen(["/usr/bin/python3.11", "-c", PY_ZLIB], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"

    def go():
        p.stdin.write("go\n")
        p.stdin.flush()
    compare_real(d, "python3.11 zlib", p, p.pid, (LIBZ, "deflate"), go)


PY_DLOPEN = ("import sys, ctypes\n"
             "print('ready', flush=True); sys.stdin.readline()\n"
             "lz = ctypes.CDLL('liblzma.so.5')\n"
             "print('loaded', flush=True); sys.stdin.readline()\n"
             "out = ctypes.create_string_buffer(1 << 20); pos = ctypes.c_size_t(0)\n"
             "data = b'featprof ' * 10000\n"
             "for i in range(7):\n"
             "    pos.value = 0\n"
             "    lz.lzma_easy_buffer_encode(6, 0, None, data, len(data), out,\n"
             "                               ctypes.byref(pos), len(out))\n"
             "print('done', flush=True)\n")


def t_function_dlopen(d):
    """A function of a library the program loads later (dlopen): enabled before, its
    region joins when the library is mapped, and every call counts."""
    p = subprocess.Popen(["/usr/bin/python3.11", "-c", PY_DLOPEN], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
        r = cli(d, "enable", p.pid, "--function", "Xz=liblzma.so.5:lzma_easy_buffer_encode")
        check(r.returncode == 0, "enabled before the library is there: %s" % r.stderr)
        p.stdin.write("\n")
        p.stdin.flush()
        check(p.stdout.readline().strip() == "loaded", "loaded")
        joined = False
        for _ in range(100):  # the watcher sees the dlopen, featprofd attaches
            st = stats(d, p.pid)
            joined = st and any(x["name"] == "lzma_easy_buffer_encode" and x["enabled"]
                                for x in st["regions"])
            if joined:
                break
            time.sleep(0.05)
        check(joined, "the library's function joined")
        p.stdin.write("\n")
        p.stdin.flush()
        p.stdout.readline()
        st = stats(d, p.pid)
        r = region(st, "lzma_easy_buffer_encode") if st else {"count": -1}
        check(r["count"] == 7, "7 calls after the dlopen: %d" % r["count"])
    finally:
        p.kill()
        p.wait()


def counts_match(what, regions, truth):
    got = {r["name"]: r["count"] for r in regions}
    check(all(got.get(f) == truth[f]["calls"] for f in FUNCS),
          "%s: every call counted: %s against %s" % (
              what, got, {f: truth[f]["calls"] for f in FUNCS}))


def t_function_run(d):
    """featprof run --function: the program's functions measured from its start."""
    out = os.path.join(h.TMP, "run.json")
    r = subprocess.run([h.B + "/featprof", "--socket", d.sock, "run", "--function",
                        "Work=work_*,lib_work", "-o", out, "--", TG + "funcs", "2", "100"],
                       input="go\nq\n", capture_output=True, text=True, timeout=120)
    if not check(r.returncode == 0, "run: %s" % r.stderr.strip()[-300:]):
        return
    truth = json.loads(r.stdout.splitlines()[1])
    counts_match("run", json.load(open(out))["regions"], truth)


def t_function_exe(d):
    """enable --exe FILE --function: every process of the file, its libraries' functions
    joining once they are mapped."""
    exe = TG + "funcs"
    r = cli(d, "enable", "--exe", exe, "--function", "Work=work_*,lib_work")
    if not check(r.returncode == 0, "enable --exe: %s" % r.stderr):
        return
    try:
        t = Funcs("funcs", rounds=100)
        try:
            for _ in range(100):  # featprofd attaches the new process (the watcher)
                r = cli(d, "stats", "--exe", exe, "--json")
                if r.returncode == 0 and json.loads(r.stdout).get("processes_live", 0) >= 1:
                    break
                time.sleep(0.05)
            truth = t.run()
        finally:
            t.p.stdin.write("q\n")
            t.p.stdin.flush()
            t.p.wait(30)
        r = cli(d, "stats", "--exe", exe, "--json")
        if check(r.returncode == 0, "stats --exe: %s" % r.stderr):
            counts_match("--exe", json.loads(r.stdout)["regions"], truth)
    finally:
        cli(d, "disable", "--exe", exe, "--all")


def t_function_nesting(d):
    """Function and marked regions nest both ways: codec's marked frontend calls
    libcodec's codec_block (a function region, named libcodec.so:codec_block beside the
    marked region of that name), which holds the marked codec_block and codec_check."""
    p = subprocess.Popen([TG + "codec", "50", "200", "2", "--wait"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    try:
        pid = int(p.stdout.readline().split()[1])
        r = cli(d, "enable", pid, "Frontend", "Codec", "Check", "--function",
                "Fn=libcodec.so:codec_block")
        if not check(r.returncode == 0, "enable: %s" % r.stderr):
            return
        p.stdin.write("go\n")
        p.stdin.flush()
        p.stdout.readline()
        st = stats(d, pid)
    finally:
        p.kill()
        p.wait()
    if not st:
        return
    fn = region(st, "libcodec.so:codec_block")
    check(fn["count"] == 100 and fn["measured"] == "function" and fn["features"] == ["Fn"],
          "the function region: %d calls of 100, %s" % (fn["count"], fn["measured"]))
    check(region(st, "codec_block")["count"] == 100, "the marked codec_block too")
    chains = [p["path"] for p in st["paths"]]
    want = ["frontend", "libcodec.so:codec_block", "codec_block", "codec_check"]
    check(want in chains, "a path through both kinds: %s" % want)
    # the function's own time is what lies between its entry and the marked begin, and
    # between the marked end and its return: small against the 150 us codec_block. CPU
    # time: a preemption between those probes lands in the function's own wall time (in
    # make check once: 4.1 of 32.2 ms, the calls twice their length on a loaded machine)
    print("    the function's exclusive %.0f ns of %.0f ns inclusive; CPU %.0f of %.0f ns; "
          "stated +-%.0f ns" % (fn["exclusive_ns"], fn["inclusive_ns"], fn["exclusive_cpu_ns"],
                                fn["cpu_ns"], fn.get("exclusive_uncertainty_ns", -1)))
    check(0 <= fn["exclusive_cpu_ns"] < 0.05 * fn["cpu_ns"],
          "the function's exclusive CPU time %.0f ns of %.0f ns inclusive" % (
              fn["exclusive_cpu_ns"], fn["cpu_ns"]))


def t_function_mechanisms(d):
    """Each older mechanism on this kernel too (FEATPROF_KERNEL_WITHOUT: a daemon of its
    own): counts exact, the longjmps and the exiting thread counted, whatever attaches."""
    for without in ("uprobe_session", "uprobe_multi"):
        os.environ["FEATPROF_KERNEL_WITHOUT"] = without
        try:
            dk = h.Daemon("functions-" + without)
        finally:
            del os.environ["FEATPROF_KERNEL_WITHOUT"]
        try:
            mech = json.loads(cli(dk, "status", "--json").stdout)["kernel"]["mechanisms"]
            truth, st = measure(dk, "funcs", "--function", "Work=work_*,lib_work")
            if not st:
                continue
            print("    without %s: %s" % (without, mech["function_regions"]))
            counts_match("without " + without, st["regions"], truth)
            an = st.get("anomalies", {})
            check(an.get("no_return") == truth["jumps"] and an.get("thread_exit_inside") == 1,
                  "without %s: anomalies %s" % (without, an))
        finally:
            dk.stop()


NESTED = ("chain4", "chain3", "chain2", "chain1", "nest_rec")


def t_function_short_nested(d):
    """Function regions of 5 us bodies nested 4 deep, a chain of four functions and one
    recursive (tests/targets/nested.c), on 1 and 2 threads: each function's exclusive time
    and each feature within 2x its stated uncertainty + 2% of the program's own clock for
    it (each level's body less the windows around its call; the window around the
    outermost call holds every nested probe and is no truth) (issue 44, part 6). Runs:
    FEATPROF_NESTED_RUNS (3)."""
    runs = int(os.environ.get("FEATPROF_NESTED_RUNS", "3"))
    cal = json.loads(cli(d, "status", "--json").stdout)["attach"]["function"]
    print("    function pair %.0f ns (sd %.0f), bias %.0f ns" % (
        cal["pair_ns"], cal["pair_sd_ns"], cal["bias_ns"]))
    en = []
    for f in NESTED[:4]:
        en += ["--function", "Chain=nested:" + f]
    en += ["--function", "Rec=nested:nest_rec"]
    for threads in (1, 2):
        for k in range(runs):
            t = Funcs("nested", threads, 2000)
            try:
                r = cli(d, "enable", t.pid, *en)
                if not check(r.returncode == 0, "enable: %s" % r.stderr):
                    return
                truth = t.run()
                st = stats(d, t.pid)
            finally:
                t.kill()
            figs = [(f, region(st, f)["exclusive_ns"], region(st, f)["exclusive_uncertainty_ns"],
                     truth[f]["excl_ns"]) for f in NESTED]
            feats = {x["name"]: x for x in st["features"]}
            figs += [(name, feats[name]["ns"], feats[name]["uncertainty_ns"],
                      sum(truth[f]["excl_ns"] for f in fs))
                     for name, fs in (("Chain", NESTED[:4]), ("Rec", NESTED[4:]))]
            print("    %d thread(s), run %d: " % (threads, k) + "  ".join(
                "%s %+.1f%% (+-%.1f%%)" % (n, 100 * (v - w) / w, 100 * u / w)
                for n, v, u, w in figs))
            for n, v, u, w in figs:     # (on a slow-trap machine +-u may exceed v)
                check(abs(v - w) <= 2 * u + 0.02 * w,
                      "%d thread(s) %s: %.3f ms against the program's %.3f ms, stated +-%.3f" %
                      (threads, n, v / 1e6, w / 1e6, u / 1e6))
            calls = {f: region(st, f)["count"] for f in NESTED}
            check(all(calls[f] == truth[f]["calls"] for f in NESTED),
                  "every call counted: %s" % calls)


TESTS = h.discover(globals())
# Tests that compare compensated times with a truth, under the harness's retry policy.
# t_function_nesting's function region around a marked region (its own time should be
# small) came out at 7% of its inclusive time, 9x its stated uncertainty, in 1 run of 4 on
# a machine whose trap pair costs 10.8 us (at the commit before this one too): a
# compensation that misses about one probe pair a call now and then (issue 44, part 6)
TIMED = {t_function_regions, t_real_binaries, t_function_nesting, t_function_short_nested}


if __name__ == "__main__":
    sys.exit(h.run_file("functions", TESTS, TIMED))
