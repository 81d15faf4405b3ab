#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Scale figures for docs/TRACING.md ("Scale"): N separate pid targets enabled one after
another (time per enable, descriptors, RSS, a status afterwards), or N processes of one
executable enabled with --exe (the reply's time, a status while members get targets of
their own, the sum of their work). Needs root.
usage: scale.py BUILD_DIR pid|exe N"""
import json
import os
import subprocess
import sys
import time

B = os.path.abspath(sys.argv[1])
MODE, N = sys.argv[2], int(sys.argv[3])
sys.argv = [sys.argv[0], B]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                "integration"))
import harness as h  # noqa: E402


def status_ms(d):
    t = time.time()
    r = h.cli(d, "status", "--json")
    return (time.time() - t) * 1000, r.returncode


def main():
    exe = os.path.join(h.TMP, "service-scale")
    subprocess.run(["cp", B + "/tests/targets/service", exe], check=True)
    d = h.Daemon("scale", "--state-dir", os.path.join(h.TMP, "state"))
    procs = []
    try:
        for _ in range(N):
            p = subprocess.Popen([exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 text=True)
            p.stdout.readline()
            procs.append(p)
        lim = [x for x in open("/proc/%d/limits" % d.p.pid) if x.startswith("Max open files")]
        print("%d processes; featprofd's descriptor limit %s" % (N, lim[0].split()[3]))
        t0 = time.time()
        if MODE == "pid":
            lat = []
            for p in procs:
                t = time.time()
                r = h.cli(d, "enable", p.pid, "--all")
                lat.append((time.time() - t) * 1000)
                if r.returncode:
                    print("enable failed: " + r.stderr.strip())
                    break
            lat.sort()
            print("%d pid targets: enable median %.0f ms, max %.0f ms, %.1f s in all"
                  % (len(lat), lat[len(lat) // 2], lat[-1], time.time() - t0))
        else:
            r = h.cli(d, "enable", "--exe", exe, "--all", timeout=600)
            print("enable --exe: %.2f s: %s" % (time.time() - t0, r.stdout.strip()))
            ms, _ = status_ms(d)
            print("a status right after: %.0f ms" % ms)
            for p in procs:
                p.stdin.write("work 2\n")
                p.stdin.flush()
            for p in procs:
                p.stdout.readline()
            while True:
                g = json.loads(h.cli(d, "stats", "--exe", exe, "--json").stdout)
                if not g["processes_pending"]:
                    break
                time.sleep(0.5)
            n = sum(x["count"] for x in g["regions"] if x["name"] == "service_work")
            print("all members settled %.1f s after the enable: %d with targets of their own, "
                  "%d in the sum only; service_work %d (sent %d)" %
                  (time.time() - t0, g["processes_live"], g["processes_summed"], n, 2 * N))
        ms, rc = status_ms(d)
        objs = json.loads(h.cli(d, "status", "--json").stdout)["bpf_objects"]
        print("featprofd: %d descriptors, %s; status %.0f ms; %d BPF objects hold %d "
              "targets" % (len(os.listdir("/proc/%d/fd" % d.p.pid)),
                           [x for x in open("/proc/%d/status" % d.p.pid)
                            if x.startswith("VmRSS")][0].split(None, 1)[1].strip(), ms,
                           objs["objects"], objs["targets"]))
    finally:
        for p in procs:
            p.kill()
            p.wait()
        d.stop()


if __name__ == "__main__":
    main()
