#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Soak and faults (issue 19, not in make check's time): for MINUTES, clients ask
featprofd for status, list, stats and enable/disable in a loop; others stream and
record; demo targets are killed and restarted; featprofd itself is SIGKILLed every
~2 minutes (half the time while an enable attaches) and started again on the same
socket and state directory. Reported: requests sent, answered, refused while the
daemon was down, unanswered while it was up; the daemon's RSS each minute of each
life; breakpoints left in the targets after each restart and at the end.
Needs root. usage: soak.py BUILD_DIR [MINUTES]"""
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

B = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
MINUTES = float(sys.argv[2]) if len(sys.argv) > 2 else 30
TMP = tempfile.mkdtemp(prefix="featprof-soak-")
SOCK = os.path.join(TMP, "soak.sock")
STATE = os.path.join(TMP, "state")
END = time.time() + MINUTES * 60
lock = threading.Lock()
stats = {"sent": 0, "answered": 0, "down": 0, "unanswered": 0, "errors": {}}
daemon = {"p": None, "up": False, "gen": 0, "lives": [], "restarts": 0, "killed_in_enable": 0}
running = threading.Event()  # cleared while a kill is checked: clients wait
running.set()
targets = []


def start_daemon():
    if os.path.exists(SOCK):
        os.unlink(SOCK)
    p = subprocess.Popen([B + "/featprofd", "--socket", SOCK, "--state-dir", STATE, "-q"],
                         stderr=open(os.path.join(TMP, "featprofd.log"), "a"))
    for _ in range(400):
        if os.path.exists(SOCK):
            break
        time.sleep(0.05)
    daemon["p"] = p
    daemon["gen"] += 1
    daemon["lives"].append({"pid": p.pid, "start": time.time(), "rss": []})
    daemon["up"] = True


def request(verb, timeout=30, **args):
    """One request on its own connection: the reply, or None."""
    up, gen = daemon["up"], daemon["gen"]
    with lock:
        stats["sent"] += 1
    try:
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(timeout)
        s.connect(SOCK)
        s.sendall((json.dumps(dict(args, id=1, verb=verb)) + "\n").encode())
        line = s.makefile("rb").readline()
        s.close()
    except OSError as e:
        line = b""
        err = repr(e)
    else:
        err = "closed without a reply"
    with lock:
        if line:
            stats["answered"] += 1
            r = json.loads(line)
            if "error" in r:
                c = r["error"]["code"]
                stats["errors"][c] = stats["errors"].get(c, 0) + 1
            return r
        if up and daemon["up"] and gen == daemon["gen"]:
            stats["unanswered"] += 1
            stats.setdefault("why", []).append((verb, err))
        else:
            stats["down"] += 1
    time.sleep(0.05)  # the daemon is down: ask again soon, not in a spin
    return None


def start_target():
    p = subprocess.Popen([B + "/featprof-demo", "-t", "2", "-q"])
    return p


def client_loop(seed):
    rnd = random.Random(seed)
    while time.time() < END:
        running.wait()
        t = rnd.choice(targets) if targets else None
        verb = rnd.choice(["status", "list", "stats", "enable", "disable", "stats"])
        if verb == "status" or not t:
            request("status")
        elif verb == "enable":
            request("enable", pid=t.pid, features=[rnd.choice(["Compression", "Cache",
                                                               "Encryption", "Checksum"])])
        elif verb == "disable":
            request("disable", pid=t.pid, all=True)
        else:
            request(verb, pid=t.pid)
        time.sleep(rnd.uniform(0, 0.05))


def stream_loop(seed):
    """Subscribes and reads pushes for a while; or records for 2 s."""
    rnd = random.Random(seed)
    while time.time() < END:
        running.wait()
        if not targets:
            time.sleep(0.5)
            continue
        t = rnd.choice(targets)
        verb = rnd.choice(["subscribe", "record"])
        args = {"interval_ms": 100} if verb == "subscribe" else {"duration_ms": 2000}
        up, gen = daemon["up"], daemon["gen"]
        with lock:
            stats["sent"] += 1
        first, err, ended = b"", "", None
        try:
            s = socket.socket(socket.AF_UNIX)
            s.settimeout(30)
            s.connect(SOCK)
            s.sendall((json.dumps(dict(args, id=1, verb=verb, pid=t.pid)) + "\n").encode())
            f = s.makefile("rb")
            first = f.readline()
            t0 = time.time()
            ok = first and b'"result"' in first
            while ok and time.time() - t0 < 3:
                line = f.readline()
                if not line or b'"done"' in line or b'"event"' in line:
                    ended = line
                    break
            s.close()
            err = "closed without a reply"
        except OSError as e:
            err = repr(e)
            if first and verb == "record" and daemon["up"] and gen == daemon["gen"]:
                with lock:  # a recording that never ended while its daemon lived
                    stats["unanswered"] += 1
                    stats.setdefault("why", []).append((verb, "no end: " + err, t.poll()))
        with lock:
            if first:
                stats["answered"] += 1
            elif up and daemon["up"] and gen == daemon["gen"]:
                stats["unanswered"] += 1
                stats.setdefault("why", []).append((verb, err, t.poll()))
            else:
                stats["down"] += 1
        if not first:
            time.sleep(0.05)


def breakpoints():
    n = 0
    for t in list(targets):
        r = subprocess.run([B + "/featprof", "list", str(t.pid), "--json"],
                           capture_output=True, text=True)
        if r.returncode == 0:
            n += json.loads(r.stdout).get("breakpoints", 0)
    return n


def main():
    if os.geteuid() != 0:
        print("soak: needs root")
        return 77
    start_daemon()
    for _ in range(3):
        targets.append(start_target())
    threads = [threading.Thread(target=client_loop, args=(i,)) for i in range(12)]
    threads += [threading.Thread(target=stream_loop, args=(100 + i,)) for i in range(4)]
    for th in threads:
        th.start()
    next_kill = time.time() + 120
    next_minute = time.time() + 60
    left_after_restart = []
    rnd = random.Random(7)
    while time.time() < END:
        time.sleep(1)
        if rnd.random() < 0.05:  # a target dies and another starts
            t = targets.pop(rnd.randrange(len(targets)))
            t.kill()
            t.wait()
            targets.append(start_target())
        if time.time() >= next_minute:
            life = daemon["lives"][-1]
            try:
                life["rss"].append(int([x for x in open("/proc/%d/status" % daemon["p"].pid)
                                        if x.startswith("VmRSS")][0].split()[1]))
            except (OSError, IndexError):
                pass
            next_minute += 60
        if time.time() >= next_kill:
            next_kill += 120
            in_enable = rnd.random() < 0.5
            if in_enable:  # SIGKILL while an enable of every region attaches
                t = targets[0]
                e = subprocess.Popen([B + "/featprof", "--socket", SOCK, "enable", str(t.pid),
                                      "--all"], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
                time.sleep(rnd.uniform(0.05, 0.3))
                daemon["killed_in_enable"] += 1
            running.clear()  # the clients pause: what the new daemon finds is strays
            daemon["up"] = False
            daemon["p"].kill()
            daemon["p"].wait()
            if in_enable:
                e.wait()
            time.sleep(1)
            held = breakpoints()
            start_daemon()
            daemon["restarts"] += 1
            time.sleep(1)
            left_after_restart.append((held, breakpoints()))
            running.set()
    for th in threads:
        th.join()
    for t in targets:  # what the clients left enabled, off: every int3 left is a stray
        request("detach", pid=t.pid)
    time.sleep(0.5)
    final = breakpoints()
    for t in targets:
        t.kill()
        t.wait()
    daemon["p"].send_signal(signal.SIGTERM)
    daemon["p"].wait(10)
    print("soak: %.0f minutes, %d clients + %d streaming/recording, %d targets at a time"
          % (MINUTES, 12, 4, 3))
    print("requests: %d sent, %d answered, %d while featprofd was down, %d unanswered while "
          "it was up; error codes %s" % (stats["sent"], stats["answered"], stats["down"],
                                         stats["unanswered"], stats["errors"]))
    print("unanswered: %s" % stats.get("why", [])[:10])
    print("featprofd SIGKILLed %d times (%d during an enable --all)" %
          (daemon["restarts"], daemon["killed_in_enable"]))
    print("breakpoints after each kill -> after the restart: %s; at the end: %d" %
          (left_after_restart, final))
    for i, life in enumerate(daemon["lives"]):
        print("life %d: RSS per minute (kB) %s" % (i, life["rss"]))
    ok = stats["unanswered"] == 0 and final == 0 and all(a == 0 for _, a in left_after_restart)
    print("soak: %s" % ("ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
