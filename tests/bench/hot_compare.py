#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# usage: hot_compare.py OLD_BUILD NEW_BUILD (an older build from a git worktree)
# marked-region event cost, before (26db4ad) and after (HEAD), interleaved: busyloop_fp
# with Busy enabled through each featprofd, and the nop1 floor, 1M iterations, 3 rounds
import json, os, signal, statistics, subprocess, sys, time
def daemon(b, name):
    sock = "/tmp/hot-%s.sock" % name
    p = subprocess.Popen([b + "/featprofd", "--socket", sock, "-q", "--site", "nop1",
                          "--state-dir", "/tmp/hot-" + name], stderr=subprocess.DEVNULL)
    while not os.path.exists(sock): time.sleep(0.1)
    return p, sock
def run(b, sock=None, extra=()):
    args = [b + "/bench/busyloop_fp", "1000000", "3000"] + list(extra)
    if not sock:
        return json.loads(subprocess.run(args, capture_output=True, text=True).stdout)["ns_per_iteration"]
    p = subprocess.Popen(args + ["--wait"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    pid = p.stdout.readline().split()[1]
    subprocess.run([b + "/featprof", "--socket", sock, "enable", pid, "Busy"], capture_output=True)
    p.stdin.write("go\n"); p.stdin.flush()
    out = json.loads(p.stdout.read().strip().splitlines()[-1]); p.wait()
    return out["ns_per_iteration"]
B = {"before": os.path.abspath(sys.argv[1]), "after": os.path.abspath(sys.argv[2])}
D = {k: daemon(v, k) for k, v in B.items()}
res = {k: [] for k in ("dry", "floor", "before", "after")}
for r in range(3):
    res["dry"].append(json.loads(subprocess.run([B["after"] + "/bench/busyloop_dry", "1000000",
                                                 "3000"], capture_output=True,
                                                text=True).stdout)["ns_per_iteration"])
    res["floor"].append(run(B["after"], extra=["--floor", "nop1"]))
    for k in ("before", "after"):
        res[k].append(run(B[k], D[k][1]))
    print(r, {k: v[-1] for k, v in res.items()}, flush=True)
for p, s in D.values(): p.send_signal(signal.SIGTERM); p.wait()
m = {k: statistics.median(v) for k, v in res.items()}
per = {k: (m[k] - m["dry"]) / 2 for k in m}
print("per event (ns): " + ", ".join("%s %.0f" % (k, per[k]) for k in ("floor", "before", "after")))
print("to the floor: before %.2fx, after %.2fx" % (per["before"] / per["floor"], per["after"] / per["floor"]))
