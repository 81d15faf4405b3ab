#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Integration tests: the real featprofd (real BPF) on a temporary socket, real
instrumented targets, figures checked through the real CLI and the protocol:
enabling and disabling around running code, thread exits, several clients, who may
profile what, bad input, a killed daemon. Needs root. usage: test_daemon.py BUILD_DIR
[TEST...]"""
import json
import os
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (B, SHIELD, USER_PY, Client, Daemon, Target, check, cli, demo,  # noqa: E402
                     discover, region, run_file, site_bytes, stats, uprobe_links)


def t_redzone(d):
    """Live red-zone data across both sites, a million calls traced at the nop5."""
    dn = Daemon("nop5", "--site", "nop5")
    try:
        st = Client(dn).call("status")["result"]
        check(st["optimized_uprobes"], "the nop5 daemon attaches at the nop5")
        t = Target("redzone", 1000000)
        r = cli(dn, "enable", t.pid, "RedZone")
        check(r.returncode == 0, "enable RedZone: " + r.stderr)
        t.go()
        out = json.loads(t.result())
        check(out["corrupted"] == 0, "red zone corrupted %d times" % out["corrupted"])
        s = stats(dn, t.pid)
        check(region(s, "redzone")["count"] == 1000000,
              "redzone count %d" % region(s, "redzone")["count"])
        print("    1,000,000 calls, 2,000,000 hits at the shielded nop5: %d corrupted" %
              out["corrupted"])
    finally:
        dn.stop()


def t_enable_inside(d):
    """Enabled while a thread is inside: end without begin, counted, not attributed, and
    said apart as an event of the enable, not an anomaly (issue 46, part 5)."""
    t = Target("inside")
    t.go()
    time.sleep(0.5)
    check(cli(d, "enable", t.pid, "--all").returncode == 0, "enable")
    t.result()
    st = stats(d, t.pid)
    table = cli(d, "stats", t.pid).stdout
    check(st["anomalies"]["end_without_begin"] == 1, "end_without_begin %d" %
          st["anomalies"]["end_without_begin"])
    check(st.get("anomalies_expected", {}).get("end_without_begin") == 1,
          "expected at the enable: %s" % st.get("anomalies_expected"))
    check("anomalies: none" in table and "at enable and disable (expected: a thread was "
          "inside): end_without_begin=1" in table, "the table says it apart: %s" %
          [l for l in table.splitlines() if "anomal" in l or "expected" in l])
    check(region(st, "long_region")["count"] == 0, "long_region not attributed")
    check(region(st, "tick")["count"] == 1, "tick measured after enable")


def t_disable_open(d):
    """A region disabled while a thread is inside is dropped, never ended late."""
    t = Target("open")
    check(cli(d, "enable", t.pid, "--all").returncode == 0, "enable")
    t.go()
    time.sleep(0.5)
    r = cli(d, "disable", t.pid, "--by-region", "long_region")
    check(r.returncode == 0, "disable long_region: " + r.stderr)
    t.result()
    st = stats(d, t.pid)
    check(region(st, "long_region")["count"] == 0, "long_region count %d" %
          region(st, "long_region")["count"])
    check(region(st, "tick")["count"] == 1, "tick count %d" % region(st, "tick")["count"])
    check(st["anomalies"]["disabled_while_open"] == 1, "disabled_while_open %d" %
          st["anomalies"]["disabled_while_open"])
    check(st["anomalies"]["thread_exit_inside"] == 0, "no exit inside")
    check(st.get("anomalies_expected", {}).get("disabled_while_open") == 1,
          "expected at the disable: %s" % st.get("anomalies_expected"))


def t_thread_exit(d):
    """A thread exiting inside a region is counted."""
    t = Target("exit")
    check(cli(d, "enable", t.pid, "--all").returncode == 0, "enable")
    t.go()
    t.result()
    st = stats(d, t.pid)
    check(st["anomalies"]["thread_exit_inside"] == 1, "thread_exit_inside %d" %
          st["anomalies"]["thread_exit_inside"])
    check(region(st, "long_region")["count"] == 0, "not attributed")


def t_enable_midrun_two_clients_detach(d):
    """Enable mid-run; a streaming client and a second client at once; disable leaves
    no uprobe; a client disconnecting loses nothing for the other; target exit."""
    p = demo()
    try:
        time.sleep(0.3)
        a = Client(d)
        r = a.call("enable", pid=p.pid, features=["Compression"])
        check("result" in r and r["result"]["attached_sites"] > 0, "enable mid-run: %s" % r)
        sub = a.call("subscribe", pid=p.pid, interval_ms=200)
        check("result" in sub, "subscribe: %s" % sub)
        b = Client(d)
        r = b.call("enable", pid=p.pid, features=["Cache"])
        check("result" in r, "second client enables: %s" % r)
        pushes = [a.read() for _ in range(3)]
        check(all(x and "stats" in x for x in pushes), "three pushes to the subscriber")
        check(any(region(x["stats"], "compress")["count"] > 0 for x in pushes),
              "pushes carry compress figures")
        links = uprobe_links(d.p.pid)
        check(links > 0, "uprobe links present while enabled (%d)" % links)
        # the human table fits an 80-column terminal (over SSH), one line per region
        os.environ["COLUMNS"] = "80"
        r = cli(d, "stats", p.pid)
        del os.environ["COLUMNS"]
        widest = max(len(x) for x in r.stdout.splitlines())
        check(r.returncode == 0 and widest <= 80 and "compress_verify" in r.stdout,
              "stats table within 80 columns (widest line %d)" % widest)
        # ... with every region name of up to 24 characters whole, enabled or not
        names = [x["name"] for x in stats(d, p.pid)["regions"]]
        cut = [n for n in names if len(n) <= 24 and
               not any(ln.startswith(n + " ") for ln in r.stdout.splitlines())]
        check(names and not cut, "region names whole at 80 columns (cut: %s)" % cut)
        a.close()  # the subscriber goes away
        st = b.call("stats", pid=p.pid)["result"]
        check(region(st, "cache_lookup")["count"] > 0, "other client still gets figures")
        r = b.call("disable", pid=p.pid, all=True)
        check(r["result"]["attached_sites"] == 0, "disable --all: no site attached")
        # the daemon's own drift measurement holds a link for ~60 ms every 10 s
        # (daemon/calibrate/calibrate.c, "drift"): wait that out, never longer than a second
        for _ in range(20):
            if uprobe_links(d.p.pid) == 0:
                break
            time.sleep(0.05)
        check(uprobe_links(d.p.pid) == 0, "no uprobe link left: %d" % uprobe_links(d.p.pid))
        time.sleep(0.2)
        check(all(b == SHIELD for b in site_bytes(p.pid)), "disabled: all sites bare nops")
        p.send_signal(signal.SIGTERM)
        p.wait(10)
        time.sleep(0.3)
        st = b.call("stats", pid=p.pid)
        check("result" in st and st["result"]["exited"], "exited target queryable")
        r = b.call("detach", pid=p.pid)
        check("result" in r, "detach")
        r = b.call("stats", pid=p.pid)
        check(r.get("error", {}).get("code") in ("not_attached", "no_such_process"),
              "stats after detach: %s" % r)
    finally:
        p.kill()
        p.wait()


def t_interrupt(d):
    """SIGINT at a random moment of top and stream (pushes 10 s apart): each ends within
    1 s (a handler without SA_RESTART: the read it waits in returns at once), exit 0."""
    import random
    p = demo()
    try:
        time.sleep(0.3)
        check(cli(d, "enable", p.pid, "--all").returncode == 0, "enable demo")
        worst = {}
        for verb in ("top", "stream"):
            for _ in range(5):
                c = subprocess.Popen([B + "/featprof", "--socket", d.sock, verb, str(p.pid),
                                      "--interval", "10000"], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
                time.sleep(random.uniform(0.2, 1.5))
                t0 = time.monotonic()
                c.send_signal(signal.SIGINT)
                try:
                    rc = c.wait(5)
                except subprocess.TimeoutExpired:
                    c.kill()
                    rc = c.wait()
                took = time.monotonic() - t0
                worst[verb] = max(worst.get(verb, 0), took)
                check(rc == 0 and took < 1, "%s ended %.3f s after SIGINT, exit %s: %s" % (
                    verb, took, rc, c.stderr.read().strip()))
        print("    after SIGINT: top ended within %.3f s, stream within %.3f s (5 moments each)"
              % (worst.get("top", -1), worst.get("stream", -1)))
    finally:
        p.kill()
        p.wait()


def t_unprivileged(d):
    """nobody: denied on root's process, allowed on its own, sees only its own."""
    p = demo()
    t = Target("spin", user="nobody")
    try:
        time.sleep(0.3)
        r = cli(d, "enable", p.pid, "Compression", user="nobody")
        check(r.returncode != 0 and "permission denied" in r.stderr and
              r.stderr.count("\n") == 1, "nobody on root's process: %r" % r.stderr)
        r = cli(d, "enable", t.pid, "S", user="nobody")
        check(r.returncode == 0, "nobody on its own process: %r" % r.stderr)
        t.go()
        time.sleep(0.5)
        r = cli(d, "stats", t.pid, "--json", user="nobody")
        check(r.returncode == 0 and region(json.loads(r.stdout), "spin")["count"] > 0,
              "nobody reads its figures")
        check(cli(d, "enable", p.pid, "Cache").returncode == 0, "root enables root's")
        r = cli(d, "status", "--json", user="nobody")
        pids = [x["pid"] for x in json.loads(r.stdout)["targets"]]
        check(p.pid not in pids and t.pid in pids, "nobody's status shows only its own")
        # the kernel decides: a process of nobody's that made itself non-dumpable (what
        # setuid helpers and agents holding secrets do) is refused, root still allowed
        nd = subprocess.Popen(["setpriv", "--reuid", "nobody", "--regid", "nogroup",
                               "--clear-groups", USER_PY, "-c",
                               "import ctypes,sys,time; ctypes.CDLL(None).prctl(4,0,0,0,0); "
                               "print('ready', flush=True); time.sleep(60)"],
                              stdout=subprocess.PIPE, text=True)
        nd.stdout.readline()
        try:
            for verb in (["list", nd.pid], ["enable", nd.pid, "--all"],
                         ["sample", nd.pid, "--duration", "1"]):
                r = cli(d, *verb, user="nobody")
                check(r.returncode != 0 and "permission denied" in r.stderr,
                      "nobody %s on its non-dumpable process refused: %r"
                      % (verb[0], r.stderr.strip()))
            r = cli(d, "status", "--json", user="nobody")
            check(r.returncode == 0, "status as nobody")
            r = cli(d, "enable", nd.pid, "PythonGC")
            check(r.returncode == 0, "root may profile it: %r" % r.stderr.strip())
            cli(d, "detach", nd.pid)
        finally:
            nd.kill()
            nd.wait()
    finally:
        t.kill()
        p.kill()
        p.wait()


def t_bad_input(d):
    """Every bad input gets an error; a subscriber keeps receiving data meanwhile."""
    p = demo()
    try:
        time.sleep(0.3)
        sub = Client(d)
        check("result" in sub.call("enable", pid=p.pid, features=["Checksum"]), "enable")
        check("result" in sub.call("subscribe", pid=p.pid, interval_ms=100), "subscribe")
        c = Client(d)

        def expect(raw, code, what):
            c.send_raw(raw)
            r = c.read()
            ok = r is not None and r.get("error", {}).get("code") == code
            check(ok, "%s: %s" % (what, r))
            if ok:
                print("    %-24s -> %s: %s" % (what, code, r["error"]["message"]))

        expect(b"{not json\n", "bad_request", "malformed JSON")
        expect(b"[1,2]\n", "bad_request", "not an object")
        expect(b'{"verb":"status"}\n', "bad_request", "no id")
        expect(b'{"id":1,"verb":"frobnicate"}\n', "unknown_verb", "unknown verb")
        expect(b'{"id":2,"verb":"enable","pid":"x","all":true}\n', "bad_request", "pid type")
        expect(b'{"id":3,"verb":"enable","pid":%d,"features":"Cache"}\n' % p.pid,
               "bad_request", "features type")
        expect(b'{"id":4,"verb":"enable","pid":%d,"features":["Nope"]}\n' % p.pid,
               "unknown_name", "unknown feature")
        expect(b'{"id":5,"verb":"enable","pid":999999999,"all":true}\n', "no_such_process",
               "no such pid")
        sl = subprocess.Popen(["sleep", "30"])
        expect(b'{"id":6,"verb":"enable","pid":%d,"all":true}\n' % sl.pid, "no_probes",
               "process without notes")
        sl.kill()
        sl.wait()
        expect(b'{"id":7,"verb":"subscribe","pid":%d,"interval_ms":1}\n' % p.pid,
               "bad_request", "interval too short")
        expect(b'{"id":8,"verb":"stats","pid":' + b"9" * 70000 + b"}\n", "too_long",
               "oversized line")
        r = c.call("status")  # the connection survives the oversized line
        check(r is not None and "result" in r, "connection usable after too_long")
        st = c.call("status")["result"]
        t = next(x for x in st["targets"] if x["pid"] == p.pid)
        check(t["enabled_regions"] == ["compress_verify", "crc"],
              "bad requests changed nothing: %s" % t["enabled_regions"])
        # a flood of connections
        flood = []
        for _ in range(300):
            s = socket.socket(socket.AF_UNIX)
            try:
                s.connect(d.sock)
                flood.append(s)
            except OSError:
                s.close()
        time.sleep(0.3)
        for s in flood:
            s.close()
        time.sleep(0.3)
        got = 0
        deadline = time.time() + 3
        while time.time() < deadline and got < 5:
            x = sub.read()
            if x and "stats" in x:
                got += 1
        check(got >= 5, "subscriber kept receiving during the bad input (%d)" % got)
        r = Client(d).call("status")
        check(r is not None and "result" in r, "daemon serves after the flood")
    finally:
        p.kill()
        p.wait()


def t_sigkill(d):
    """A killed daemon leaves the target running unharmed, without uprobes."""
    dk = Daemon("killed")
    sp = Target("spin")
    check(cli(dk, "enable", sp.pid, "--all").returncode == 0, "enable spin")
    sp.go()
    time.sleep(0.3)
    check(any(b != SHIELD for b in site_bytes(sp.pid)), "probed sites are rewritten")
    t = Target("accuracy", 6, 2)
    check(cli(dk, "enable", t.pid, "--all").returncode == 0, "enable")
    t.go()
    t.warm().go_on()
    time.sleep(0.3)
    dk.p.kill()
    dk.p.wait()
    time.sleep(0.3)
    check(all(b == SHIELD for b in site_bytes(sp.pid)),
          "after SIGKILL of the daemon every site is the original nops again")
    check(sp.p.poll() is None, "spin target still running")
    sp.kill()
    out = t.result()
    check(t.p.returncode == 0 and json.loads(out)["truth"]["flat"]["count"] == 12,
          "target finished normally after the daemon was killed")


TESTS = discover(globals())


def main():
    # FP_TEST_SITE=nop1|nop5 runs the suite at one attach point (default: the daemon's
    # choice by measurement)
    site = os.environ.get("FP_TEST_SITE")
    return run_file("daemon", TESTS, (), ["--site", site] if site else [], stop_check=True)


if __name__ == "__main__":
    sys.exit(main())
