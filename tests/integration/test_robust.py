#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Never leave a target worse, never lose what the user asked for (issue 19): a quiet
start, a recording of a target faster than its reader, no memory kept per reply, the
descriptor limit, a target that dies during an enable, the protocol's strictness.
Needs root. usage: test_robust.py BUILD_DIR [TEST...]"""
import json
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

from harness import B, TMP, busyloop, check, cli, Client, Daemon, rss_kb  # noqa: E402


def kmsg_lines():
    r = subprocess.run(["dmesg"], capture_output=True, text=True)
    return r.stdout.splitlines() if r.returncode == 0 else None


def t_quiet_start(d):
    """Starting featprofd leaves nothing in the kernel log (its fork self-test's child
    catches its own fault) and raises its descriptor limit."""
    before = kmsg_lines()
    dq = Daemon("quiet")
    try:
        st = json.loads(cli(dq, "status", "--json").stdout)
        after = kmsg_lines()
        hazard = st.get("attach", {}).get("nop5_fork_crashes_child")
        new = [x for x in (after or [])[len(before or []):] if "featprofd" in x]
        print("    fork self-test: child %s; kernel log lines from featprofd: %d"
              % ("faulted (hazard found)" if hazard else "lived", len(new)))
        check(before is not None and after is not None, "dmesg readable (root)")
        check(not new, "no featprofd line in the kernel log: %s" % new[:2])
        # the kernel's mechanisms, from its BTF
        k = st.get("kernel", {})
        parts = set(k.get("mechanisms", {})) | set(k.get("unavailable", {}))
        print("    kernel %s: %s" % (k.get("release"), ", ".join(
            "%s=%s" % (p, "yes" if p in k.get("mechanisms", {}) else "no")
            for p in sorted(parts))))
        check({"attach", "site_identity", "thread_state", "off_cpu", "record",
               "sample_remote"} <= parts, "status names each part's mechanism")
        check("thread_state" in k.get("mechanisms", {}), "task storage found on this kernel")
    finally:
        dq.stop()
    # under systemd's usual soft limit of 1,024 the daemon raises it to the hard one
    log = os.path.join(TMP, "nofile.log")
    p = subprocess.Popen(["prlimit", "--nofile=1024:8192", B + "/featprofd", "--socket",
                          os.path.join(TMP, "nofile.sock"), "--state-dir",
                          os.path.join(TMP, "state-nofile")], stderr=open(log, "w"))
    try:
        for _ in range(200):
            if os.path.exists(os.path.join(TMP, "nofile.sock")):
                break
            time.sleep(0.05)
        lim = [x for x in open("/proc/%d/limits" % p.pid) if x.startswith("Max open files")]
        print("    under prlimit 1024:8192: %s" % " ".join(lim[0].split()[3:5]))
        check(lim and lim[0].split()[3] == "8192", "soft descriptor limit raised to 8192")
    finally:
        p.terminate()
        p.wait(10)


def t_record_fast(d):
    """A recording of a target faster than its reader completes whole: the daemon paces
    the drain by the client's socket, the kernel ring counts what is dropped, the client
    is never disconnected, and the daemon's memory returns afterwards."""
    p = busyloop()
    try:
        check(cli(d, "enable", p.pid, "--all").returncode == 0, "enable busyloop")
        p.stdin.write("go\n")
        p.stdin.flush()
        time.sleep(0.5)
        idle = rss_kb(d.p.pid)
        c = Client(d)
        r = c.call("record", pid=p.pid, duration_ms=4000)
        check(r and "result" in r, "record accepted: %s" % r)
        time.sleep(5)  # the reader reads nothing while the target runs: 4 s of events
        peak = rss_kb(d.p.pid)
        got = done = 0
        t0 = time.time()
        while time.time() - t0 < 120:
            m = c.read(timeout=30)
            if m is None:
                break
            if "events" in m and isinstance(m["events"], list):
                got += len(m["events"])
            if m.get("done"):
                done = m
                break
        c.close()
        check(done, "the summary arrived: the slow client was not disconnected")
        if done:
            rate = (done["events"] + done["dropped"]) / 4.0
            print("    %d events received, %d dropped in the kernel ring (%.0f instances/s); "
                  "daemon RSS %d kB idle, %d kB while behind" % (got, done["dropped"], rate,
                                                                 idle, peak))
            check(got == done["events"], "every event counted was received (%d vs %d)"
                  % (got, done["events"]))
            check(got > 0, "events recorded")
        time.sleep(0.5)
        after = rss_kb(d.p.pid)
        print("    daemon RSS after the recording: %d kB (idle %d kB)" % (after, idle))
        check(after <= 2 * idle + 4096, "memory returned after the recording: %d kB, idle "
              "%d kB" % (after, idle))
        # the CLI on the same target: the file written whole, drops stated
        out = os.path.join(TMP, "fast.json")
        r = cli(d, "record", p.pid, "--duration", "2", "-o", out, timeout=120)
        check(r.returncode == 0, "featprof record on a fast target: rc %d %s"
              % (r.returncode, r.stderr.strip()))
        if r.returncode == 0:
            tr = json.load(open(out))
            xs = sum(1 for e in tr["traceEvents"] if e["ph"] == "X")
            print("    featprof record: %d events written, %d dropped" %
                  (xs, tr["otherData"]["dropped"]))
            check(xs == tr["otherData"]["events"], "the trace holds every event received")
    finally:
        p.kill()
        p.wait()


def t_no_leak(d):
    """10,000 stats requests keep no memory in the daemon."""
    p = busyloop(1)
    try:
        check(cli(d, "enable", p.pid, "--all").returncode == 0, "enable busyloop")
        p.stdin.write("go\n")
        p.stdin.flush()
        c = Client(d)

        def burst(n):
            for i in range(0, n, 100):
                reqs = "".join(json.dumps({"id": i + k, "verb": "stats", "pid": p.pid}) + "\n"
                               for k in range(100))
                c.send_raw(reqs.encode())
                for _ in range(100):
                    r = c.read()
                    assert r and "result" in r, r
        burst(1000)  # warm-up: allocator arenas, json-c's caches
        before = rss_kb(d.p.pid)
        burst(10000)
        after = rss_kb(d.p.pid)
        c.close()
        print("    daemon RSS %d kB before, %d kB after 10,000 stats replies (%+.0f bytes "
              "a reply)" % (before, after, (after - before) * 1024 / 10000))
        check(after - before < 1024, "no memory kept per reply (%+d kB)" % (after - before))
    finally:
        p.kill()
        p.wait()


def t_out_of_fds(d):
    """At the descriptor limit the daemon refuses new clients with a line and keeps
    serving the ones it has, without spinning."""
    sock = os.path.join(TMP, "fds.sock")
    log = open(os.path.join(TMP, "fds.log"), "w")
    p = subprocess.Popen(["prlimit", "--nofile=96:96", B + "/featprofd", "--socket", sock,
                          "--state-dir", os.path.join(TMP, "state-fds")], stderr=log)
    conns = []
    try:
        for _ in range(200):
            if os.path.exists(sock):
                break
            time.sleep(0.05)
        for i in range(120):
            s = socket.socket(socket.AF_UNIX)
            s.connect(sock)
            conns.append(s)
        answered = refused = silent = 0
        for s in conns:
            s.settimeout(3)
            try:  # a refused client was sent its line and closed: the send may fail
                s.sendall(b'{"id":1,"verb":"hello"}\n')
            except OSError:
                pass
            try:
                line = s.makefile("rb").readline()
            except OSError:
                line = b""
            if b'"result"' in line:
                answered += 1
            elif b"out of file descriptors" in line:
                refused += 1
            else:
                silent += 1
        t0 = open("/proc/%d/stat" % p.pid).read().rsplit(")", 1)[1].split()
        time.sleep(1)
        t1 = open("/proc/%d/stat" % p.pid).read().rsplit(")", 1)[1].split()
        busy = (int(t1[11]) + int(t1[12]) - int(t0[11]) - int(t0[12])) / os.sysconf("SC_CLK_TCK")
        print("    120 clients at a limit of 96 descriptors: %d answered, %d refused with a "
              "line, %d silent; daemon CPU %.0f%% while they wait" % (answered, refused,
                                                                      silent, busy * 100))
        check(silent == 0, "every client answered or refused (%d silent)" % silent)
        check(refused > 0, "clients over the limit refused with a line")
        check(busy < 0.2, "no spinning at the limit (%.0f%% CPU)" % (busy * 100))
        # the CLI shows the refusal, and never dies of SIGPIPE
        r = subprocess.run([B + "/featprof", "--socket", sock, "status"], capture_output=True,
                           text=True, timeout=30)
        print("    featprof status at the limit: rc %d, %r" % (r.returncode, r.stderr.strip()))
        check(r.returncode == 1 and "out of file descriptors" in r.stderr,
              "the CLI prints the daemon's refusal (rc %d)" % r.returncode)
    finally:
        for s in conns:
            s.close()
        p.terminate()
        p.wait(10)


def t_dies_during_enable(d):
    """A process killed while it is being enabled gets no_such_process, never no_probes
    or internal."""
    codes = {}
    c = Client(d)
    for i in range(24):
        p = busyloop(1)
        c.id += 1
        if i % 8 == 0:  # dead before the daemon reads it: a fast daemon may finish an
            p.kill()    # enable before any later kill lands, so some must land first
            time.sleep(0.005)
        c.send_raw((json.dumps({"id": c.id, "verb": "enable", "pid": p.pid, "all": True})
                    + "\n").encode())
        time.sleep((i % 8) * 0.0003)  # from at once into the catalog read (~1 ms)
        p.kill()  # not reaped yet: a zombie while the daemon works, as in life
        r = c.read(timeout=30)
        code = "ok" if r and "result" in r else (r or {}).get("error", {}).get("code")
        codes[code] = codes.get(code, 0) + 1
        p.wait()
        c.call("detach", pid=p.pid)
    c.close()
    print("    24 processes killed during their enable: %s" % codes)
    check(set(codes) <= {"ok", "no_such_process"}, "only ok or no_such_process: %s" % codes)
    check(codes.get("no_such_process", 0) > 0, "some kills landed inside the enable (a kill "
          "during the BPF load leaves a zombie that can still be attached: ok)")


def t_nop5_override(d):
    """--site nop5 where the kernel loses the trampoline at fork: a child forked while a
    site was optimized keeps the CALL after the probes are detached (it crashes later),
    and featprofd's reason for the attach point says so."""
    d5 = Daemon("nop5", "--site", "nop5", "--state-dir", os.path.join(TMP, "state-nop5"))
    svc = None
    try:
        st = json.loads(cli(d5, "status", "--json").stdout)["attach"]
        print("    attach point: %s" % st.get("why"))
        if not st.get("nop5_fork_crashes_child"):
            print("    this kernel keeps the trampoline across fork (or does not optimize): "
                  "nothing to check here")
            return
        check("also after" in st.get("why", ""), "the reason says children crash also "
              "after the probes are detached: %s" % st.get("why"))
        svc = subprocess.Popen([B + "/tests/targets/service"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
        pid = int(svc.stdout.readline().split()[1])
        check(cli(d5, "enable", pid, "--all").returncode == 0, "enable at the nop5")
        svc.stdin.write("work 20\n")
        svc.stdin.flush()
        svc.stdout.readline()
        svc.stdin.write("fork 1 1 1500\n")  # the child waits 1.5 s, then runs a site
        svc.stdin.flush()
        time.sleep(0.3)
        check(cli(d5, "disable", pid, "--all").returncode == 0, "disable before the child runs")
        out = svc.stdout.readline().strip()
        print("    a child forked while the site was optimized, run after the disable: %s"
              % out)
        check(out.startswith("forked 1"), "the fork answered: %s" % out)
    finally:
        if svc:
            svc.kill()
            svc.wait()
        d5.stop()


def t_fifo(d):
    """A FIFO named as an executable is refused at once; it never blocks the daemon."""
    fifo = os.path.join(TMP, "x.fifo")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    t0 = time.time()
    r = cli(d, "enable", "--exe", fifo, "--all", timeout=20)
    took = time.time() - t0
    check(r.returncode == 1 and "not a regular file" in r.stderr and took < 5,
          "enable --exe FIFO: rc %d in %.1f s: %r" % (r.returncode, took, r.stderr.strip()))
    check(cli(d, "status").returncode == 0, "the daemon still answers")


def raw_lines(d, payload, n=1, half_close=False, timeout=10):
    """Sends bytes, reads n reply lines (bytes)."""
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(timeout)
    s.connect(d.sock)
    s.sendall(payload)
    if half_close:
        s.shutdown(socket.SHUT_WR)
    f = s.makefile("rb")
    out = []
    try:
        for _ in range(n):
            line = f.readline()
            if not line:
                break
            out.append(line)
    except OSError:
        pass
    s.close()
    return out


def t_strict_protocol(d):
    """Strict JSON, UTF-8 in and out, no NUL in strings, ids exact or refused, and a
    client that pipelines and half-closes gets every reply."""
    p = busyloop(1)
    try:
        cases = [
            ("single quotes", b"{'id':1,'verb':'status'}", "bad_request", None),
            ("trailing comma", b'{"id":1,"verb":"status",}', "bad_request", None),
            ("comment", b'{"id":1,"verb":"status"} /* c */', "bad_request", None),
            ("leading zeros", b'{"id":0010,"verb":"status"}', "bad_request", None),
            ("NaN", b'{"id":1,"verb":"status","x":NaN}', "bad_request", None),
            ("id past int64", b'{"id":99999999999999999999,"verb":"status"}', "bad_request",
             None),
            ("id past 2^53", b'{"id":9007199254740993,"verb":"status"}', "bad_request", None),
            ("id 2^53-1 exact", b'{"id":9007199254740991,"verb":"status"}', None,
             9007199254740991),
            ("NUL in the verb", b'{"id":2,"verb":"status\u0000junk"}', "bad_request", None),
            ("NUL in a feature", ('{"id":3,"verb":"enable","pid":%d,"features":["Busy\\u0000x"]}'
                                  % p.pid).encode(), "bad_request", None),
            ("raw NUL byte", b'{"id":6,"verb":"status' + bytes([0]) + b'"}', "bad_request",
             None),
            ("bad UTF-8", b'{"id":4,"verb":"st' + bytes([0xff, 0xfe]) + b'atus"}',
             "bad_request", None),
            ("long multibyte verb", ('{"id":5,"verb":"%s"}' % ("\u00e9" * 120)).encode(),
             "unknown_verb", 5),
        ]
        for name, line, code, want_id in cases:
            out = raw_lines(d, line + b"\n")
            ok = len(out) == 1
            try:
                r = json.loads(out[0].decode("utf-8", "strict")) if ok else {}
            except (UnicodeDecodeError, ValueError):
                ok, r = False, {}
            got = r.get("error", {}).get("code")
            print("    %-20s -> %s %s" % (name, got or "ok", (r.get("error") or {}).get(
                "message", "")[:70]))
            check(ok, "%s: one reply of valid UTF-8 JSON: %r" % (name, out))
            check(got == code, "%s: %s (got %s)" % (name, code or "ok", got))
            if want_id is not None:
                check(r.get("id") == want_id, "%s: id echoed exactly: %r" % (name, r.get("id")))
        # a thread id is not a process
        import threading
        ev = threading.Event()
        th = threading.Thread(target=ev.wait)
        th.start()
        out = raw_lines(d, b'{"id":8,"verb":"enable","pid":%d,"all":true}\n' % th.native_id)
        ev.set()
        th.join()
        r = json.loads(out[0]) if out else {}
        print("    a thread id: %s" % r.get("error", {}).get("message"))
        check(r.get("error", {}).get("code") == "bad_request" and
              "is a thread of process %d" % os.getpid() in r["error"]["message"],
              "a thread id gets its own message")
        # a malformed enable of a pid not yet attached is refused before the BPF load
        t0 = time.time()
        out = raw_lines(d, b'{"id":7,"verb":"enable","pid":%d,"features":5}\n' % p.pid)
        took = time.time() - t0
        r = json.loads(out[0]) if out else {}
        print("    malformed enable of an unattached pid: %s in %.1f ms" % (
            r.get("error", {}).get("code"), took * 1e3))
        check(r.get("error", {}).get("code") == "bad_request" and
              "attached pid %d " % p.pid not in d.logtext(),
              "refused before a target was made for it")
        # pipelined, then half-closed: every reply arrives
        reqs = b"".join(b'{"id":%d,"verb":"status"}\n' % i for i in range(300))
        out = raw_lines(d, reqs, n=300, half_close=True, timeout=20)
        ids = sorted(json.loads(x)["id"] for x in out)
        print("    300 pipelined requests then a half-close: %d replies" % len(out))
        check(ids == list(range(300)), "every reply to a half-closed client (%d)" % len(out))
    finally:
        p.kill()
        p.wait()


TESTS = h.discover(globals())


if __name__ == "__main__":
    sys.exit(h.run_state_file("robust", TESTS))
