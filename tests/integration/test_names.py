#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Integration tests of the names people read and of call stacks of any process (issue 45,
parts 1 and 3; common/demangle.c, common/symbols.c, daemon/stacks/): tests/targets/shipped,
a C++ program without featprof.h (a class template's static member function, a lambda, an
exception), and tests/targets/stacks (two threads: libc's thread start). The real
featprofd on a temporary socket. Needs root.
usage: test_names.py BUILD_DIR [TEST...]"""
import json
import os
import subprocess
import sys

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


TESTS = h.discover(globals())

if __name__ == "__main__":
    sys.exit(h.run_file("names", TESTS))
