#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Integration test of the bash completion (scripts/featprof.bash-completion, issue 46
part 2): after `featprof enable PID` it offers that target's feature names, as featprofd
lists them. The real featprofd on a temporary socket. Needs root.
usage: test_completion.py BUILD_DIR [TEST...]"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from harness import check  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def complete(*words):
    """What the completion offers for the last of words."""
    r = subprocess.run(["bash", "-c", 'source "$0"; COMP_WORDS=("$@"); '
                        'COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); _featprof; '
                        'echo "${COMPREPLY[*]}"',
                        os.path.join(ROOT, "scripts", "featprof.bash-completion")] +
                       list(words), capture_output=True, text=True,
                       env=dict(os.environ, PATH=h.B + ":" + os.environ["PATH"]))
    return r.stdout.split()


def t_features(d):
    """featprof enable PID <TAB>: the target's features; a prefix narrows them; a pid
    position offers the running pids"""
    p = h.demo()
    try:
        got = complete("featprof", "--socket", d.sock, "enable", str(p.pid), "")
        print("    enable %d <TAB>: %s" % (p.pid, got))
        check({"Compression", "Encryption", "Cache"} <= set(got), "the demo's features")
        got = complete("featprof", "--socket", d.sock, "enable", str(p.pid), "Enc")
        check(got == ["Encryption"], "a prefix: %s" % got)
        got = complete("featprof", "--socket", d.sock, "enable", str(p.pid)[:-1])
        check(str(p.pid) in got, "pids: %s" % got[:5])
    finally:
        p.kill()
        p.wait()


TESTS = h.discover(globals())

if __name__ == "__main__":
    sys.exit(h.run_file("completion", TESTS))
