#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Integration tests: the real featprofd (real BPF) on a temporary socket, real
instrumented targets, figures checked through the real CLI and the protocol.
Needs root. usage: test_daemon.py BUILD_DIR [TEST...]"""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

B = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
ONLY = sys.argv[2:]
TMP = tempfile.mkdtemp(prefix="featprof-it-")
os.chmod(TMP, 0o755)
FAILS = []
CHECKS = [0]


def check(cond, what):
    CHECKS[0] += 1
    if not cond:
        FAILS.append(what)
        print("    FAILED:", what, flush=True)
    return cond


class Daemon:
    def __init__(self, name, *args):
        self.sock = os.path.join(TMP, name + ".sock")
        self.log = open(os.path.join(TMP, name + ".log"), "w+")
        self.p = subprocess.Popen([B + "/featprofd", "--socket", self.sock, "--group", "nogroup"]
                                  + list(args), stderr=self.log)
        for _ in range(200):
            if os.path.exists(self.sock):
                break
            if self.p.poll() is not None:
                raise RuntimeError("featprofd exited: " + self.logtext())
            time.sleep(0.05)
        else:
            raise RuntimeError("featprofd did not listen: " + self.logtext())

    def logtext(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                self.p.kill()
        return self.p.returncode


class Client:
    def __init__(self, d, user=None):
        self.s = socket.socket(socket.AF_UNIX)
        if user:  # connect as another user: a child process holds the credentials
            raise NotImplementedError
        self.s.connect(d.sock)
        self.f = self.s.makefile("rwb")
        self.id = 0
        self.pushes = []

    def send_raw(self, data):
        self.f.write(data)
        self.f.flush()

    def read(self, timeout=10):
        self.s.settimeout(timeout)
        line = self.f.readline()
        return json.loads(line) if line else None

    def call(self, verb, **args):
        self.id += 1
        req = dict(args, id=self.id, verb=verb)
        self.send_raw((json.dumps(req) + "\n").encode())
        while True:
            r = self.read()
            if r is None or r.get("id") == self.id or ("id" in r and r["id"] is None):
                return r
            self.pushes.append(r)

    def close(self):
        self.s.close()


def cli(d, *args, user=None, timeout=30):
    cmd = [B + "/featprof", "--socket", d.sock] + [str(a) for a in args]
    if user:
        cmd = ["setpriv", "--reuid", user, "--regid", "nogroup", "--clear-groups"] + cmd
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


class Target:
    def __init__(self, mode, *args, user=None):
        cmd = [B + "/tests/targets/truth", mode] + [str(a) for a in args]
        if user:
            cmd = ["setpriv", "--reuid", user, "--regid", "nogroup", "--clear-groups"] + cmd
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.p.stdout.readline()
        assert line.startswith("ready "), line
        self.pid = int(line.split()[1])

    def go(self):
        self.p.stdin.write("go\n")
        self.p.stdin.flush()

    def result(self, timeout=120):
        out = self.p.stdout.read()
        self.p.wait(timeout)
        return out

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


def stats(d, pid):
    r = cli(d, "stats", pid, "--json")
    if not check(r.returncode == 0, "stats %d: %s" % (pid, r.stderr.strip())):
        return None
    return json.loads(r.stdout)


def region(st, name):
    return next(r for r in st["regions"] if r["name"] == name)


def uprobe_links(pid):
    """BPF links of a uprobe kind among the fds of a process (the daemon)."""
    n = 0
    for fd in os.listdir("/proc/%d/fdinfo" % pid):
        try:
            info = open("/proc/%d/fdinfo/%s" % (pid, fd)).read()
        except OSError:
            continue
        if "link_type:" in info and ("uprobe" in info or "perf" in info):
            n += 1
    return n


SHIELD = bytes.fromhex("90488d6424800f1f440000488da42480000000")


def site_bytes(pid):
    """The 19 code bytes at every featprof site of a process, read from its memory."""
    cat = json.loads(subprocess.run([B + "/featprof", "list", str(pid), "--json"],
                                    capture_output=True, text=True, check=True).stdout)
    maps = []
    for line in open("/proc/%d/maps" % pid):
        f = line.split()
        if len(f) >= 6:
            lo, hi = (int(x, 16) for x in f[0].split("-"))
            maps.append((f[5], lo, hi, int(f[2], 16)))
    out = []
    with open("/proc/%d/mem" % pid, "rb") as mem:
        for r in cat["regions"]:
            for st in r["sites"]:
                for path, lo, hi, off in maps:
                    if path == st["object"] and off <= st["offset"] < off + (hi - lo):
                        mem.seek(lo + st["offset"] - off)
                        out.append(mem.read(len(SHIELD)))
                        break
    return out


# --- tests ---------------------------------------------------------------------------------

def t_accuracy(d):
    """Counts exact, inclusive/exclusive within 2% of the truth, 4 threads."""
    t = Target("accuracy", 12, 4)
    r = cli(d, "enable", t.pid, "--all")
    check(r.returncode == 0, "enable --all: " + r.stderr)
    t.go()
    truth = json.loads(t.result())["truth"]
    st = stats(d, t.pid)  # the target has exited: last figures stay
    check(st["exited"], "exited target still queryable")
    for name, tr in truth.items():
        r = region(st, name)
        check(r["count"] == tr["count"], "%s count %d != %d" % (name, r["count"], tr["count"]))
        for k in ("inclusive_ns", "exclusive_ns"):
            err = (r[k] - tr[k]) / tr[k] * 100
            print("    %-10s %-12s truth %11d featprof %11d raw %11d error %+.2f%%" % (
                name, k, tr[k], r[k], r["raw_" + k], err))
            check(abs(err) <= 2.0, "%s %s error %.2f%% > 2%%" % (name, k, err))
    for k, v in st["anomalies"].items():
        check(v == 0, "anomaly %s = %d" % (k, v))
    check(region(st, "rec")["recursion"] == 2 * 12 * 4, "recursion counted: %d" %
          region(st, "rec")["recursion"])


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
    """Enabled while a thread is inside: end without begin, counted, not attributed."""
    t = Target("inside")
    t.go()
    time.sleep(0.5)
    check(cli(d, "enable", t.pid, "--all").returncode == 0, "enable")
    t.result()
    st = stats(d, t.pid)
    check(st["anomalies"]["end_without_begin"] == 1, "end_without_begin %d" %
          st["anomalies"]["end_without_begin"])
    check(region(st, "long_region")["count"] == 0, "long_region not attributed")
    check(region(st, "tick")["count"] == 1, "tick measured after enable")


def t_disable_open(d):
    """A region disabled while a thread is inside is dropped, never ended late."""
    t = Target("open")
    check(cli(d, "enable", t.pid, "--all").returncode == 0, "enable")
    t.go()
    time.sleep(0.5)
    r = cli(d, "disable", t.pid, "--regions", "long_region")
    check(r.returncode == 0, "disable long_region: " + r.stderr)
    t.result()
    st = stats(d, t.pid)
    check(region(st, "long_region")["count"] == 0, "long_region count %d" %
          region(st, "long_region")["count"])
    check(region(st, "tick")["count"] == 1, "tick count %d" % region(st, "tick")["count"])
    check(st["anomalies"]["disabled_while_open"] == 1, "disabled_while_open %d" %
          st["anomalies"]["disabled_while_open"])
    check(st["anomalies"]["thread_exit_inside"] == 0, "no exit inside")


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


def demo():
    return subprocess.Popen([B + "/featprof-demo", "-t", "2", "-q"])


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
        a.close()  # the subscriber goes away
        st = b.call("stats", pid=p.pid)["result"]
        check(region(st, "cache_lookup")["count"] > 0, "other client still gets figures")
        r = b.call("disable", pid=p.pid, all=True)
        check(r["result"]["attached_sites"] == 0, "disable --all: no site attached")
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


TESTS = [t_accuracy, t_redzone, t_enable_inside, t_disable_open, t_thread_exit,
         t_enable_midrun_two_clients_detach, t_unprivileged, t_bad_input, t_sigkill]


def main():
    if os.geteuid() != 0:
        print("SKIP: integration tests need root (BPF)")
        return 77
    d = Daemon("main")
    passed = failed = 0
    try:
        for t in TESTS:
            if ONLY and t.__name__ not in ONLY:
                continue
            before = len(FAILS)
            print("  %s: %s" % (t.__name__, t.__doc__.splitlines()[0]), flush=True)
            try:
                t(d)
            except Exception as e:  # a crash of the test is a failure, not a skip
                import traceback
                traceback.print_exc()
                FAILS.append("%s raised %r" % (t.__name__, e))
            if len(FAILS) == before:
                passed += 1
            else:
                failed += 1
        rc = d.stop()
        check(rc == 0, "featprofd stopped cleanly on SIGTERM (exit %s)" % rc)
    finally:
        d.stop()
        if FAILS:
            print("---- featprofd log ----\n" + d.logtext()[-3000:])
    print("daemon: %d passed, %d failed (%d checks)" % (passed, failed, CHECKS[0]))
    return 1 if failed or FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
