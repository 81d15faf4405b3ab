#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Integration tests of Ctrl-C (issue 46, part 1): SIGINT at random moments of the
commands that wait (top, stream of a live and of an exited target, drill, save, record,
sample) and SIGKILL of those that change a target: each ends within 1 s, leaves no region
enabled and no sampling running that it started (featprofd undoes a connection's
temporary changes when it closes: daemon/serve/leases.c) and no FILE.tmp. The real
featprofd on a temporary socket, tests/targets/stacks as the target. Needs root.
usage: test_interrupt.py BUILD_DIR [TEST...]"""
import json
import os
import random
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from harness import check, cli  # noqa: E402

TG = h.B + "/tests/targets/"
MOMENTS = 20


class Target:
    """tests/targets/stacks working on two threads (region work) until killed."""

    def __init__(self):
        self.p = subprocess.Popen([TG + "stacks", "200", "100000000", "2", "--wait"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.pid = int(self.p.stdout.readline().split()[1])
        self.p.stdin.write("go\n")
        self.p.stdin.flush()

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


def state(d, pid):
    """(the enabled regions, whether sampling runs) of pid, as featprofd has them."""
    r = cli(d, "stats", pid, "--json")
    if r.returncode:
        return set(), False
    st = json.loads(r.stdout)
    return ({x["name"] for x in st.get("regions", []) if x.get("enabled")},
            bool(st.get("sampling", {}).get("active")))


def settled(d, pid, want, timeout=1.0):
    """Polls until pid's state is want (within timeout): the state last seen."""
    end = time.monotonic() + timeout
    while True:
        got = state(d, pid)
        if got == want or time.monotonic() > end:
            return got
        time.sleep(0.05)


def interrupt(d, argv, at, sig=signal.SIGINT):
    """featprof argv started, sig sent at (s) after: seconds it took to end after the
    signal (None: it ended before), its stderr."""
    # SIGINT as at a terminal: a shell that starts the suite in the background (`cmd &`
    # without job control) hands its children SIGINT ignored, which a command rightly keeps
    c = subprocess.Popen([h.B + "/featprof", "--socket", d.sock] + [str(a) for a in argv],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        c.wait(at)
        return None, c.stderr.read()
    except subprocess.TimeoutExpired:
        pass
    t0 = time.monotonic()
    c.send_signal(sig)
    try:
        c.wait(5)
    except subprocess.TimeoutExpired:
        c.kill()
        c.wait()
    return time.monotonic() - t0, c.stderr.read()


def moments(d, t, name, argv, span, out=None, sig=signal.SIGINT):
    """MOMENTS runs of argv, each signalled at a random moment of span (s): every one
    ends within 1 s, leaves t as it found it, and no out.tmp."""
    rnd = random.Random(name)
    before = settled(d, t.pid, state(d, t.pid))
    worst, ended = 0, 0
    for _ in range(MOMENTS):
        took, err = interrupt(d, argv, rnd.uniform(0.05, span), sig)
        after = settled(d, t.pid, before)
        if took is None:
            ended += 1
            check(not err.strip(), "%s failed before the signal: %s" % (name, err.strip()))
        else:
            worst = max(worst, took)
        ok = check(took is None or took < 1, "%s ended %.3f s after the signal: %s" % (
            name, took or 0, err.strip()[-200:]))
        ok &= check(after == before, "%s: after it, regions and sampling %s, before %s" % (
            name, after, before))
        if out:
            ok &= check(not os.path.exists(out + ".tmp"), "%s left %s.tmp" % (name, out))
            if os.path.exists(out):
                os.remove(out)
        if not ok:
            break
    print("    %-22s ended within %.3f s of the signal (%d of %d had ended before it)"
          % (name, worst, ended, MOMENTS))


def t_interrupt_commands(d):
    """SIGINT at 20 random moments of top, stream, drill, save, record and sample: each
    ends within 1 s, leaves no region or sampling it started and no .tmp file"""
    t = Target()
    try:
        time.sleep(0.3)
        check(cli(d, "enable", t.pid, "Work").returncode == 0, "enable work")
        out = os.path.join(h.TMP, "out.json")
        moments(d, t, "top", ["top", t.pid, "--interval", "10000"], 1.5)
        moments(d, t, "stream", ["stream", t.pid, "--interval", "10000"], 1.5)
        moments(d, t, "save", ["save", t.pid, "--duration", "3", "--interval", "200", "-o",
                               out], 3, out)
        moments(d, t, "record", ["record", t.pid, "--duration", "3", "-o", out], 3, out)
        moments(d, t, "sample", ["sample", t.pid, "--duration", "3"], 3)
        check(cli(d, "disable", t.pid, "Work").returncode == 0, "disable work")
        moments(d, t, "drill", ["drill", t.pid, "work", "--top", "2", "--duration", "1"], 4)
    finally:
        t.kill()


def t_killed_commands(d):
    """SIGKILL at random moments of drill and sample (no handler runs): featprofd undoes
    the regions and the sampling they started when their connection closes"""
    global MOMENTS
    t = Target()
    keep, MOMENTS = MOMENTS, 10
    try:
        time.sleep(0.3)
        check(cli(d, "enable", t.pid, "Work").returncode == 0, "enable Work")
        moments(d, t, "sample (SIGKILL)", ["sample", t.pid, "--duration", "3"], 3,
                sig=signal.SIGKILL)
        check(cli(d, "disable", t.pid, "Work").returncode == 0, "disable Work")
        moments(d, t, "drill (SIGKILL)", ["drill", t.pid, "work", "--top", "2",
                                          "--duration", "1"], 4, sig=signal.SIGKILL)
    finally:
        MOMENTS = keep
        t.kill()


def t_stream_exited(d):
    """A stream of a target that exits ends by itself, with a final line, within 1 s of
    featprofd seeing the exit"""
    t = Target()
    try:
        check(cli(d, "enable", t.pid, "Work").returncode == 0, "enable work")
        c = subprocess.Popen([h.B + "/featprof", "--socket", d.sock, "stream", str(t.pid),
                              "--interval", "10000"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        t.kill()
        t0 = time.monotonic()
        try:
            out, err = c.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            c.kill()
            out, err = c.communicate()
        took = time.monotonic() - t0
        print("    stream ended %.3f s after its target was killed: %s" % (
            took, (err.strip() or out.strip()[-200:])))
        check(took < 1.5 and c.returncode is not None, "the stream of an exited target ends")
    finally:
        t.kill()


TESTS = h.discover(globals())

if __name__ == "__main__":
    sys.exit(h.run_file("interrupt", TESTS))
