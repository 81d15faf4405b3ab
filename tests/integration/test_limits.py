#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What one user may take and what many targets share: a pid reused, per-user limits on
targets, clients and unread output, executables with many processes and their handover,
the BPF objects targets share. Needs root. usage: test_limits.py BUILD_DIR [TEST...]"""
import json
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

from harness import B, TMP, busyloop, check, cli, rss_kb  # noqa: E402


def t_pid_reuse(d):
    """A pid reused by a new process is a new target: enable works, stats are the new
    process's, not the exited one's."""
    for attempt in range(5):
        a = busyloop(1)
        pid = a.pid
        check(cli(d, "enable", pid, "--all").returncode == 0, "enable the first process")
        a.stdin.write("go\n")
        a.stdin.flush()
        time.sleep(0.3)
        a.kill()
        a.wait()
        time.sleep(0.3)
        st = json.loads(cli(d, "stats", pid, "--json").stdout)
        check(st.get("exited"), "the first process's target is exited")
        try:  # the next pid handed out is pid (root, this pid namespace)
            with open("/proc/sys/kernel/ns_last_pid", "w") as f:
                f.write(str(pid - 1))
        except OSError as e:
            check(False, "ns_last_pid: %s" % e)
            return
        b = busyloop(1)
        if b.pid != pid:
            b.kill()
            b.wait()
            cli(d, "detach", pid)
            continue
        try:
            r = cli(d, "enable", pid, "--all")
            print("    pid %d reused (attempt %d): enable -> rc %d %s" % (
                pid, attempt, r.returncode, (r.stdout + r.stderr).strip()))
            check(r.returncode == 0, "enable on the reused pid: %r" % r.stderr)
            st = json.loads(cli(d, "stats", pid, "--json").stdout)
            check(not st.get("exited") and all(x["count"] == 0 for x in st["regions"]),
                  "stats are the new process's (exited %s)" % st.get("exited"))
        finally:
            b.kill()
            b.wait()
            cli(d, "detach", pid)
        return
    check(False, "pid reuse could not be arranged in 5 attempts")


HOG = r"""
import json, socket, sys, time
sock, n = sys.argv[1], int(sys.argv[2])
conns, refused = [], []
for i in range(n):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock)
    s.settimeout(5)
    try:
        s.sendall(b'{"id":1,"verb":"hello"}\n')
    except OSError:
        pass
    try:
        line = s.makefile("rb").readline()
    except OSError:
        line = b""
    if b'"result"' in line:
        conns.append(s)
    else:
        refused.append(line.decode(errors="replace").strip())
print(json.dumps({"held": len(conns), "refused": refused[:2], "nrefused": len(refused)}),
      flush=True)
sys.stdin.readline()
"""


def t_user_limits(d):
    """One unprivileged user cannot lock root out: a quarter of the client slots per uid,
    slots kept for root, a quarter of the subscriptions, and a client that pipelines
    10,000 requests does not delay another's."""
    hog = subprocess.Popen(h.as_user("nobody", [h.USER_PY, "-c", HOG, d.sock, "80"]),
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        got = json.loads(hog.stdout.readline())
        print("    nobody opened 80 connections: %d held, %d refused: %s"
              % (got["held"], got["nrefused"], got["refused"][:1]))
        check(got["held"] == 64 and got["nrefused"] == 16 and
              "too many clients for uid" in got["refused"][0], "64 per uid")
        r = cli(d, "status")
        check(r.returncode == 0, "root still served: %r" % r.stderr)
    finally:
        hog.stdin.write("\n")
        hog.stdin.flush()
        hog.wait(10)
    # subscriptions: a quarter per uid
    t = subprocess.Popen(h.as_user("nobody", [B + "/tests/targets/truth", "spin"]),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    t.stdout.readline()
    try:
        check(cli(d, "enable", t.pid, "--all", user="nobody").returncode == 0, "enable")
        sub = r"""
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile("rwb")
codes = {}
for i in range(300):
    f.write(b'{"id":%d,"verb":"subscribe","pid":%s,"interval_ms":3600000}\n' % (i, sys.argv[2].encode()))
    f.flush()
    while True:
        r = json.loads(f.readline())
        if r.get("id") == i:
            break
    c = r["error"]["message"] if "error" in r else "ok"
    codes[c] = codes.get(c, 0) + 1
print(json.dumps(codes))
"""
        r = subprocess.run(h.as_user("nobody", [h.USER_PY, "-c", sub, d.sock, str(t.pid)]),
                           capture_output=True, text=True, timeout=60)
        codes = json.loads(r.stdout) if r.returncode == 0 else {}
        print("    nobody asked for 300 subscriptions: %s" % codes)
        check(codes.get("ok") == 256 and any("for uid" in k for k in codes),
              "a quarter of the subscriptions per uid: %s" % codes)
    finally:
        t.kill()
        t.wait()
    # fairness: 10,000 pipelined requests against one status of another client
    import threading
    s = socket.socket(socket.AF_UNIX)
    s.connect(d.sock)
    drain = threading.Thread(target=lambda: s.makefile("rb").read(), daemon=True)
    drain.start()  # it reads its replies, as fast as they come
    t_send = time.time()
    s.sendall(b"".join(b'{"id":%d,"verb":"status"}\n' % i for i in range(10000)))
    time.sleep(0.05)
    t0 = time.time()
    r = cli(d, "status")
    took = time.time() - t0
    s.shutdown(socket.SHUT_WR)
    drain.join(60)
    print("    the pipeliner's 10,000 status replies took %.1f s" % (time.time() - t_send))
    s.close()
    print("    a status while another client pipelines 10,000: %.3f s" % took)
    check(r.returncode == 0 and took < 1.0, "not delayed by the pipeliner (%.2f s)" % took)


NOREAD = r"""
import socket, sys, time
sock, n, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
conns = []
for i in range(n):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock)
    s.setblocking(False)
    conns.append(s)
req = b'{"id":1,"verb":"status"}\n' * 500
sent = [0] * n
t0 = time.time()
while time.time() - t0 < 8 and min(sent) < k:
    for i, s in enumerate(conns):
        try:
            if sent[i] < k:
                s.send(req)
                sent[i] += 500
        except OSError:
            pass
    time.sleep(0.01)
print(sum(sent), flush=True)
sys.stdin.readline()
"""


def t_user_output(d):
    """Clients of one user that send and never read share a bounded queue: the daemon's
    memory stays bounded, root is answered meanwhile, and it comes back afterwards."""
    import threading
    idle = rss_kb(d.p.pid)
    peaks, done = [idle], threading.Event()

    def watch():  # the daemon's RSS every 20 ms while the clients send
        while not done.is_set():
            peaks.append(rss_kb(d.p.pid))
            time.sleep(0.02)
    w = threading.Thread(target=watch)
    w.start()
    log0 = len(d.logtext())
    hog = subprocess.Popen(h.as_user("nobody", [h.USER_PY, "-c", NOREAD, d.sock, "8",
                                                 "20000"]),
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(2)
        t0 = time.time()
        r = cli(d, "status")
        took = time.time() - t0
        sent = int(hog.stdout.readline())
        done.set()
        w.join()
        peak = max(peaks)
        dropped = d.logtext()[log0:].count("not reading")
        print("    %d of nobody's clients dropped as not reading" % dropped)
        print("    8 clients of nobody sent %d status requests and read nothing: daemon RSS "
              "%d kB (idle %d kB); root's status took %.2f s" % (sent, peak, idle, took))
        # the user's 32 MiB of queued replies, up to 1 MiB more for each client under the
        # per-client check (daemon/clients/client.c make_room), and buffers of dropped clients
        # the allocator has not given back yet: 50-66 MB above idle measured here (one
        # run at +64 MB failed the older bound of 64); without the per-user limit each
        # client may queue its own 16 MiB, 128 MiB for these 8
        check(peak < idle + 80 * 1024, "memory bounded (%d kB)" % peak)
        check(r.returncode == 0 and took < 2, "root answered meanwhile (%.2f s)" % took)
    finally:
        hog.stdin.write("\n")
        hog.stdin.flush()
        hog.wait(10)
    time.sleep(0.5)
    after = rss_kb(d.p.pid)
    print("    after they went: %d kB" % after)
    check(after <= 2 * idle + 4096, "memory returned (%d kB, idle %d kB)" % (after, idle))


def t_exe_many(d):
    """--exe over 100 processes: the reply comes at once, other clients are answered
    while members get targets of their own (one per loop round, at most 64), the rest
    are measured in the sum only, and the sum is exact."""
    exe = os.path.join(TMP, "service-many")
    subprocess.run(["cp", B + "/tests/targets/service", exe], check=True)
    procs = []
    try:
        for _ in range(100):
            p = subprocess.Popen([exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 text=True)
            p.stdout.readline()
            procs.append(p)
        t0 = time.time()
        r = cli(d, "enable", "--exe", exe, "--all", timeout=120)
        took = time.time() - t0
        t0 = time.time()
        st = cli(d, "status")
        status_s = time.time() - t0
        print("    enable --exe: %.2f s: %s; a status meanwhile took %.2f s"
              % (took, r.stdout.strip(), status_s))
        check(r.returncode == 0 and "and 36 measured in the sum only" in r.stdout,
              "64 with targets of their own, 36 in the sum only: %r" % r.stdout)
        check(took < 10, "the reply does not wait for 64 BPF loads (%.1f s)" % took)
        check(st.returncode == 0 and status_s < 3, "another client answered meanwhile "
              "(%.2f s)" % status_s)
        for p in procs:
            p.stdin.write("work 2\n")
            p.stdin.flush()
        for p in procs:
            p.stdout.readline()
        for _ in range(100):
            g = json.loads(cli(d, "stats", "--exe", exe, "--json").stdout)
            if not g["processes_pending"]:
                break
            time.sleep(0.2)
        n = sum(x["count"] for x in g["regions"] if x["name"] == "service_work")
        print("    service_work in the sum: %d (200 sent); own %d, pending %d, summed %d"
              % (n, g["processes_live"], g["processes_pending"], g["processes_summed"]))
        check(n == 200, "the sum counts every process's work exactly: %d" % n)
        check(g["processes_live"] == 64 and g["processes_summed"] == 36,
              "64 own targets, 36 in the sum only")
        cli(d, "disable", "--exe", exe, "--all")
    finally:
        for p in procs:
            p.kill()
            p.wait()


def held_map(d):
    """The entries of the daemon's map of held threads (the watcher's 'held'): its id
    among the maps the daemon holds (fdinfo), its name from bpftool."""
    ids = set()
    for f in os.listdir("/proc/%d/fdinfo" % d.p.pid):
        try:
            for line in open("/proc/%d/fdinfo/%s" % (d.p.pid, f)):
                if line.startswith("map_id:"):
                    ids.add(int(line.split()[1]))
        except OSError:
            pass
    maps = json.loads(subprocess.run(["bpftool", "-j", "map", "show"], capture_output=True,
                                     text=True).stdout or "[]")
    mid = [m["id"] for m in maps if m["id"] in ids and m.get("name") == "held"
           and m.get("max_entries", 0) > 1]
    if len(mid) != 1:
        return None
    return json.loads(subprocess.run(["bpftool", "-j", "map", "dump", "id", str(mid[0])],
                                     capture_output=True, text=True).stdout or "[]")


def t_exe_handover(d):
    """--exe over processes that are always inside a region, started at once: the file's
    link measures each from its exec, and each member is handed over to a target of its
    own while a nap is open. Every instance is counted exactly once (the open one
    measured by the file's link to its end), with no anomaly on either side."""
    exe = os.path.join(TMP, "service-naps")
    subprocess.run(["cp", B + "/tests/targets/service", exe], check=True)
    nproc, naps, ms = 40, 40, 50
    r = cli(d, "enable", "--exe", exe, "--all")
    check(r.returncode == 0, "enable --exe: %r" % r.stderr)
    procs = [subprocess.Popen([exe, "naps", str(naps), str(ms)]) for _ in range(nproc)]
    rcs = [p.wait(60) for p in procs]
    check(rcs == [0] * nproc, "every process exited 0: %s" % rcs)
    for _ in range(100):
        g = json.loads(cli(d, "stats", "--exe", exe, "--json").stdout)
        if not g["processes_live"] and not g["processes_pending"]:
            break
        time.sleep(0.1)
    n = sum(x["count"] for x in g["regions"] if x["name"] == "service_nap")
    an = {k: v for k, v in g.get("anomalies", {}).items() if v}
    print("    %d processes x %d naps: %d counted; joined %d, summed %d, missed %d; "
          "anomalies %s" % (nproc, naps, n, g["processes_joined"], g["processes_summed"],
                            g["processes_missed"], an or "none"))
    check(g["processes_joined"] > 0, "some members got targets of their own (%d)"
          % g["processes_joined"])
    check(n == nproc * naps, "every instance counted once: %d of %d" % (n, nproc * naps))
    check(not an, "no anomaly: %s" % an)
    # a group that ends while the file's link holds threads (their 2 s naps begun under
    # it, their own targets attached since) lets them go: the watcher's map is empty
    slow = [subprocess.Popen([exe, "naps", "2", "2000"]) for _ in range(3)]
    try:
        for _ in range(50):
            g = json.loads(cli(d, "stats", "--exe", exe, "--json").stdout)
            if g["processes_live"] == 3:
                break
            time.sleep(0.1)
        for _ in range(15):	# each begins its first nap right after it starts
            held = held_map(d)
            if held is not None and len(held) == 3:
                break
            time.sleep(0.1)
        cli(d, "disable", "--exe", exe, "--all")
        after = held_map(d)
        print("    held threads while their naps ran: %s; after disable --exe: %s"
              % (held if held is None else len(held), after if after is None else len(after)))
        # a member whose own target came before its first nap began is not held: the
        # check needs one held at least (a fresh clone's make check once saw 2 of 3)
        check(held is not None and len(held) >= 1,
              "the file's link held sleepers: %s" % held)
        check(after == [], "disable --exe let them go: %s" % after)
    finally:
        for p in slow:
            p.kill()
            p.wait()


def t_shared_objects(d):
    """Process targets share BPF objects (daemon/targets/pool.c): a target costs a few descriptors
    and no BPF load; each target's figures are its own, also in a slot another target
    left (its counts start at zero, the leaver's stay as they were)."""
    def start():
        p = subprocess.Popen([B + "/tests/targets/service"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
        p.stdout.readline()
        return p

    def fds(kind=""):
        n = 0
        for f in os.listdir("/proc/%d/fd" % d.p.pid):
            try:
                n += kind in os.readlink("/proc/%d/fd/%s" % (d.p.pid, f))
            except OSError:
                pass
        return n

    def objects():
        return json.loads(cli(d, "status", "--json").stdout)["bpf_objects"]

    def work(ps, base):
        for i, p in enumerate(ps):
            p.stdin.write("work %d\n" % (base + i))
            p.stdin.flush()
        for p in ps:
            p.stdout.readline()

    def counts(ps, paths=False):
        out = []
        for p in ps:
            s = h.stats(d, p.pid)
            if paths:   # the path maps at the slot: a former occupant's paths gone
                out.append(sum(x["count"] for x in s["paths"]
                               if x["path"] == ["service_work"]))
            else:
                out.append(next(r["count"] for r in s["regions"]
                                if r["name"] == "service_work"))
        return out

    procs = [start() for _ in range(12)]
    later = []
    try:
        b0, p_before = objects(), fds("bpf-prog")
        check(cli(d, "enable", procs[0].pid, "--all").returncode == 0, "enable the first")
        o0, f0, p0 = objects(), fds(), fds("bpf-prog")
        for p in procs[1:]:
            check(cli(d, "enable", p.pid, "--all").returncode == 0, "enable %d" % p.pid)
        o1, f1, p1 = objects(), fds(), fds("bpf-prog")
        per = (f1 - f0) / 11.0
        new = o1["objects"] - b0["objects"]
        print("    12 targets: BPF objects %d -> %d, their targets %d -> %d; programs loaded "
              "%d -> %d; %.1f descriptors a target after the first, objects included"
              % (b0["objects"], o1["objects"], b0["targets"], o1["targets"], p_before, p1,
                 per))
        # an object of each target's own: ~35 descriptors and a load of its programs each
        check(o1["targets"] - b0["targets"] == 12 and new < 12, "objects are shared")
        check(p1 - p_before == 0 if new == 0 else (p1 - p_before) % new == 0,
              "programs are loaded per object, not per target")
        check(per < 20, "a target costs its links and maps, not an object (%.1f)" % per)
        work(procs, 10)
        want = [10 + i for i in range(12)]
        got = counts(procs)
        print("    service_work per target: %s (sent %s)" % (got, want))
        check(got == want, "each target counts its own process's work exactly")
        for p in procs[:6]:   # their slots and ranges are given back
            p.kill()
            p.wait()
        time.sleep(0.5)
        later = [start() for _ in range(6)]
        for p in later:
            check(cli(d, "enable", p.pid, "--all").returncode == 0, "enable %d" % p.pid)
        work(later + procs[6:], 100)
        got_new = counts(later)
        got_old = counts(procs[6:])
        got_gone = counts(procs[:6])
        print("    in the slots given again: %s (sent 100..105); the others %s; the exited "
              "ones %s" % (got_new, got_old, got_gone))
        check(got_new == [100 + i for i in range(6)],
              "a target in a slot another left starts from zero")
        paths_new = counts(later, paths=True)
        print("    their region paths' counts: %s" % paths_new)
        check(paths_new == got_new, "and so do its region paths")
        check(got_old == [16 + i + 106 + i for i in range(6)], "the others go on exactly")
        check(got_gone == want[:6], "the exited targets keep their figures")
        for p in later + procs[6:]:
            cli(d, "detach", p.pid)
        o2 = objects()
        print("    after every target left: %s" % o2)
        check(o2["targets"] <= o0["targets"] - 1, "the slots are given back")
    finally:
        for p in procs + later:
            p.kill()
            p.wait()


TESTS = h.discover(globals())


if __name__ == "__main__":
    sys.exit(h.run_state_file("limits", TESTS))
