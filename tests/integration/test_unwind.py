#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""featprofd's DWARF unwinding by the CFI's rules kept by address (daemon/stacks/dwarf.c,
issue 47 part 3) against libdwfl's own unwinding of the same copies: the daemon of this
file runs with FEATPROF_DWARF_VERIFY=1, which unwinds every copy both ways and counts
those whose frames differ. Programs of several kinds, none with frame pointers: C with a
shared library, C++ throwing and catching, CPython, threads. Needs root.
usage: test_unwind.py BUILD_DIR [TEST...]"""
import json
import os
import subprocess
import sys
import time

os.environ["FEATPROF_DWARF_VERIFY"] = "1"   # before the harness starts this file's daemon
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from harness import check, cli  # noqa: E402

TG = h.B + "/tests/targets/"
PY = "import time\n" \
     "def f(n):\n" \
     "    return n if n < 2 else f(n - 1) + f(n - 2)\n" \
     "t = time.time()\n" \
     "while time.time() - t < 30:\n" \
     "    f(18)\n"


def unwound(d, cmd, name):
    """Samples cmd's process with DWARF stacks for 2 s: its figures, None on failure."""
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        r = cli(d, "sample", p.pid, "--stacks", "--unwind", "dwarf", "--hz", "4999",
                "--duration", "2", "--json", timeout=60)
    finally:
        p.kill()
        p.wait()
    if not check(r.returncode == 0, "%s: sample --stacks: %s" % (name, r.stderr.strip())):
        return None
    sk = json.loads(r.stdout)["sampling"]["stacks"]
    n = max(1, sk["copies_unwound"])
    print("    %-10s %5d copies, %5.1f%% by the rules, %d differ from libdwfl's; %.1f frames "
          "a copy, %d stopped early" % (name, sk["copies_unwound"],
                                        100 * sk["copies_by_rules"] / n,
                                        sk.get("unwind_mismatches", -1),
                                        sk["unwind_frames"] / n, sk["copies_truncated"]))
    return sk


def t_rules_match_libdwfl(d):
    """Every copy the rules unwound has libdwfl's frames and end (outermost reached or
    stopped early); most copies are unwound by the rules (the rest by libdwfl)."""
    progs = [("C", [TG + "stacks", "3000", "100000", "2"]),
             ("C++", [TG + "shipped", "10"]),
             ("CPython", [sys.executable, "-c", PY]),
             ("threads", [h.B + "/featprof-demo", "-t", "2"])]
    total = rules = 0
    for name, cmd in progs:
        sk = unwound(d, cmd, name)
        if not sk:
            continue
        check(sk.get("unwind_mismatches") == 0 and sk["copies_unwound"] > 500,
              "%s: %s of %d copies unwound otherwise than libdwfl" % (
                  name, sk.get("unwind_mismatches"), sk["copies_unwound"]))
        total += sk["copies_unwound"]
        rules += sk["copies_by_rules"]
    check(total and rules >= 0.9 * total, "%d of %d copies by the rules" % (rules, total))


TESTS = h.discover(globals())


if __name__ == "__main__":
    sys.exit(h.run_file("unwind", TESTS))
