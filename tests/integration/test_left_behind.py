#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Breakpoints left behind: a featprofd killed mid-attach leaves none past its next start
(the journal) and featprof repair removes those nothing owns; SIGTERM with many targets.
Needs root. usage: test_left_behind.py BUILD_DIR [TEST...]"""
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

from harness import B, TMP, check, cli, Client, Daemon  # noqa: E402


# --- breakpoints left behind ----------------------------------------------------------

def many_target():
    src = os.path.join(TMP, "many.c")
    exe = os.path.join(TMP, "many")
    if not os.path.exists(exe):
        with open(src, "w") as f:
            subprocess.run([sys.executable, "tests/bench/gen_regions.py", "500"], stdout=f,
                           check=True)
        subprocess.run(["gcc", "-O2", "-Iusdt", src, "-o", exe], check=True)
    p = subprocess.Popen([exe], stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    assert line.startswith("ready "), line
    return p


def breakpoints(pid):
    r = subprocess.run([B + "/featprof", "list", str(pid), "--json"], capture_output=True,
                       text=True)
    return json.loads(r.stdout).get("breakpoints", -1) if r.returncode == 0 else -1


def kill_mid_attach(pid, name, state):
    """Starts a featprofd, enables every region of pid and SIGKILLs the daemon the
    moment the first sites read int3. The number of sites left holding one."""
    addrs = h.site_addrs(pid)[:4]
    mem = os.open("/proc/%d/mem" % pid, os.O_RDONLY)
    dk = Daemon(name, "--state-dir", state)
    e = subprocess.Popen([B + "/featprof", "--socket", dk.sock, "enable", str(pid), "--all"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t0 = time.time()
    while time.time() - t0 < 20 and not any(os.pread(mem, 1, a) == b"\xcc" for a in addrs):
        pass
    dk.p.kill()
    dk.p.wait()
    e.wait()
    os.close(mem)
    os.unlink(dk.sock)
    time.sleep(0.3)
    return breakpoints(pid)


def t_left_behind(d):
    """A featprofd SIGKILLed while it attaches leaves breakpoints that nothing owns:
    list shows them, featprof repair removes them, and the next featprofd's start
    removes them from its journal."""
    p = many_target()
    try:
        check(breakpoints(p.pid) == 0, "a fresh target holds no breakpoint")
        # 1. featprof repair (the journal of another state directory knows nothing)
        for attempt in range(8):
            n = kill_mid_attach(p.pid, "left%d" % attempt, os.path.join(TMP, "state-a"))
            print("    attempt %d: %d sites hold a breakpoint after the kill" % (attempt, n))
            if n > 0:
                break
        check(n > 0, "the kill landed inside an attach in 8 attempts")
        out = subprocess.run([B + "/featprof", "list", str(p.pid)], capture_output=True,
                             text=True).stdout
        check(n <= 0 or "hold a breakpoint" in out, "list says sites hold a breakpoint")
        dr = Daemon("repairer", "--state-dir", os.path.join(TMP, "state-b"))
        try:
            r = json.loads(cli(dr, "repair", p.pid, "--check", "--json").stdout)
            check(r["breakpoints"] == n and r["removed"] == 0, "repair --check: %s" % r)
            c = Client(dr)
            check("result" in c.call("attach", pid=p.pid), "attach (nothing enabled)")
            c.close()
            st = json.loads(cli(dr, "status", "--json").stdout)
            strays = [t.get("stray_breakpoints") for t in st["targets"] if t["pid"] == p.pid]
            check(strays == [n], "status: %s stray breakpoints (%d)" % (strays, n))
            out = cli(dr, "status").stdout
            check("featprof repair %d" % p.pid in out, "status says how to repair")
            r = cli(dr, "repair", p.pid)
            print("    " + r.stdout.strip())
            check(r.returncode == 0 and breakpoints(p.pid) == 0,
                  "featprof repair removed them all (%d left)" % breakpoints(p.pid))
            st = json.loads(cli(dr, "status", "--json").stdout)
            strays = [t.get("stray_breakpoints") for t in st["targets"] if t["pid"] == p.pid]
            check(strays == [0], "status after the repair: %s" % strays)
            r = cli(dr, "repair", p.pid, user="nobody")
            check(r.returncode != 0, "repair is refused to an unprivileged client")
        finally:
            dr.stop()
        # 2. the journal: the next featprofd on the same socket and state directory
        for attempt in range(8):
            n = kill_mid_attach(p.pid, "journaled", os.path.join(TMP, "state-j"))
            print("    attempt %d: %d sites hold a breakpoint after the kill" % (attempt, n))
            if n > 0:
                break
        check(n > 0, "the kill landed inside an attach in 8 attempts")
        dj = Daemon("journaled", "--state-dir", os.path.join(TMP, "state-j"))
        try:
            st = json.loads(cli(dj, "status", "--json").stdout)
            left = breakpoints(p.pid)
            print("    restart: %d sites repaired from the journal, %d breakpoints left"
                  % (st.get("breakpoints_repaired_at_start", -1), left))
            check(left == 0, "the restarted featprofd removed them (%d left)" % left)
            check(st.get("breakpoints_repaired_at_start", 0) > 0, "status says so")
        finally:
            dj.stop()
    finally:
        p.kill()
        p.wait()


def uprobe_fds(pid):
    """featprofd's descriptors that hold a uprobe or another BPF attachment: perf events
    and BPF links."""
    n = 0
    for f in os.listdir("/proc/%d/fd" % pid):
        try:
            n += os.readlink("/proc/%d/fd/%s" % (pid, f)) in ("anon_inode:[perf_event]",
                                                             "anon_inode:bpf_link")
        except OSError:
            pass
    return n


def t_sigterm_many(d0):
    """SIGTERM: featprofd detaches 200 targets (trapped and in-process: ~1,000 uprobes,
    each unregistered with a grace-period wait) within 2 s, and leaves every site and gate
    as it was (issue 31, part 6)."""
    from test_inproc import gate_addrs, gate_value
    d = Daemon("term", "--state-dir", os.path.join(TMP, "state-term"))
    procs = []
    try:
        for i in range(200):
            p = subprocess.Popen([B + "/tests/targets/" + ("service_ip" if i % 2 else "service")],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            p.stdout.readline()
            procs.append(p)
        c = Client(d)
        t0 = time.time()
        bad = [p.pid for p in procs
               if c.call("enable", pid=p.pid, all=True).get("error")]
        c.close()
        check(not bad, "200 targets enabled (%d refused)" % len(bad))
        for p in procs:
            p.stdin.write("work 3\n")
            p.stdin.flush()
        for p in procs:
            p.stdout.readline()
        ip = [p for p in procs[1::2]]
        gates = {p.pid: gate_addrs(p.pid, "service_ip", "service_work") for p in ip[:5]}
        up = all(a and all(gate_value(pid, x) for x in a) for pid, a in gates.items())
        held = uprobe_fds(d.p.pid)
        print("    200 targets enabled in %.1f s; featprofd holds %d perf events and BPF "
              "links" % (time.time() - t0, held))
        t0 = time.time()
        d.p.send_signal(signal.SIGTERM)
        try:
            rc = d.p.wait(60)
        except subprocess.TimeoutExpired:
            rc = None
        took = time.time() - t0
        print("    exit %.2f s after SIGTERM (exit status %s); log: %s" % (
            took, rc, [x for x in d.logtext().splitlines() if "detached in" in x]))
        check(rc == 0 and took < 2, "featprofd exited cleanly within 2 s of SIGTERM "
              "(%.2f s, status %s)" % (took, rc))
        check(up and all(gate_value(pid, x) == 0 for pid, a in gates.items() for x in a),
              "in-process gates were up, and are all down after the exit")
        trapped = [p.pid for p in procs[0:10:2]]
        check(all(b == h.SHIELD for pid in trapped for b in h.site_bytes(pid)),
              "every trapped site is the original nops again")
        check(all(p.poll() is None for p in procs), "every target still runs")
    finally:
        for p in procs:
            p.kill()
            p.wait()
        d.stop()


TESTS = h.discover(globals())


if __name__ == "__main__":
    sys.exit(h.run_state_file("left_behind", TESTS))
