#!/usr/bin/env python3
"""What a traced probe costs by the time since the thread's previous probe, and with a
second probing thread (tests/bench/gap_cost.c; docs/TRACING.md, "Compensation and its
uncertainty"). Starts its own featprofd, enables the target, prints the target's table
and the daemon's calibration points beside.

usage: gap_cost.py BUILD [N]      (root; N instances per line, default 300)"""
import json, os, signal, subprocess, sys, tempfile, time

B = sys.argv[1] if len(sys.argv) > 1 else "build"
N = sys.argv[2] if len(sys.argv) > 2 else "300"
tmp = tempfile.mkdtemp(prefix="fp-gap-")
sock = os.path.join(tmp, "d.sock")
d = subprocess.Popen([B + "/featprofd", "--socket", sock, "--state-dir", tmp, "-q"])
try:
    for _ in range(600):
        if os.path.exists(sock):
            break
        time.sleep(0.05)
    fp = lambda *a: subprocess.run([B + "/featprof", "--socket", sock] + list(a),
                                   capture_output=True, text=True, check=True).stdout
    cal = json.loads(fp("status", "--json"))["calibration"]
    print("calibration (%s): pair by gap %s" % (
        json.loads(fp("status", "--json"))["attach"]["attach_point"],
        ", ".join("%s %.0f ns" % ("cold" if p["cold"] else "%g us" % (p["gap_ns"] / 1e3),
                                  p["pair_ns"]) for p in cal["gap_points"])))
    t = subprocess.Popen([B + "/bench/gap_cost", N], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    pid = t.stdout.readline().split()[1]
    fp("enable", pid, "--all")
    t.stdin.write("go\n")
    t.stdin.flush()
    sys.stdout.write(t.stdout.read())
    t.wait()
finally:
    d.send_signal(signal.SIGTERM)
    d.wait(10)
