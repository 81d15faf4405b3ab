#!/usr/bin/env python3
"""Sampling accuracy (issue 11): sampled per-feature CPU shares against traced ones on
targets where tracing is exact, at 97 and 997 Hz, traced and sampled at once.

Targets (all built with FEATPROF_SAMPLING): regress_sampled (a region that begins and
ends in different functions), demo_sampled (2 threads, nested and interaction regions),
truth_sampled accuracy mode (2 threads; recursion, several exits, longjmp and a C++
exception across open regions). Per feature: sampled share (samples / all samples of
the target's threads, sampling alone) minus traced share (traced CPU ns / the process's
CPU time from /proc/PID/stat less the probes' calibrated cost, tracing alone, the D
seconds before), in points, and in standard errors (the sampled share's, combined with the traced
figure's reported uncertainty).

--remote: sampled by featprofd's sampler thread (featprof sample --remote) instead of
a cpu-clock event per thread.

usage: sample_accuracy.py BUILD [--duration S] [--remote] [--out FILE.md]   (root)"""
import argparse, json, os, signal, socket, subprocess, tempfile, time

ap = argparse.ArgumentParser()
ap.add_argument("build")
ap.add_argument("--duration", type=float, default=10)
ap.add_argument("--out")
ap.add_argument("--remote", action="store_true")
a = ap.parse_args()
B = a.build
TMP = tempfile.mkdtemp(prefix="fp-sacc-")
SOCK = os.path.join(TMP, "d.sock")
PHASES = 5


def call(verb, **args):
    s = socket.socket(socket.AF_UNIX)
    s.connect(SOCK)
    f = s.makefile("rwb")
    f.write((json.dumps(dict(args, id=1, verb=verb)) + "\n").encode())
    f.flush()
    r = json.loads(f.readline())
    s.close()
    if "result" not in r:
        raise RuntimeError("%s: %s" % (verb, r))
    return r["result"]


def start(name):
    if name == "regress":
        p = subprocess.Popen([B + "/tests/targets/regress_sampled"], stdout=subprocess.PIPE,
                             text=True)
        p.stdout.readline()
    elif name == "demo":
        p = subprocess.Popen([B + "/tests/targets/demo_sampled", "-t", "2", "-q"])
        time.sleep(0.2)
    else:  # truth: warm up, then a long measured phase
        p = subprocess.Popen([B + "/tests/targets/truth_sampled", "accuracy", "100000", "2"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        p.stdout.readline()
    return p


def cpu_ns(pid):
    """utime + stime of the whole process (/proc/PID/stat), ns."""
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) * 1e9 / os.sysconf("SC_CLK_TCK")


def go(name, p):
    if name == "truth":
        for _ in range(2):
            p.stdin.write("go\n")
            p.stdin.flush()
            if _ == 0:
                assert p.stdout.readline().strip() == "warm"


rows = []
d = subprocess.Popen([B + "/featprofd", "--socket", SOCK, "-q"], stderr=subprocess.DEVNULL)
for _ in range(200):
    if os.path.exists(SOCK):
        break
    time.sleep(0.05)
try:
    for name in ("regress", "demo", "truth"):
        for hz in (97, 997):
            p = start(name)
            cpu = {}    # feature -> traced CPU ns, summed over the traced phases
            unc = {}    # feature -> its reported uncertainty, summed likewise
            total = 0.0  # the threads' CPU in the traced phases, less the probes' cost
            smp = {}    # feature -> samples, summed over the sampled phases
            n = 0
            an = {}
            try:
                go(name, p)
                # Traced and sampled phases alternate (PHASES of each, D/PHASES seconds):
                # the workload drifts (the demo's cache warms), and tracing's probes run
                # inside the regions they measure, so a sampler running alongside would
                # count their cost there.
                for k in range(PHASES):
                    call("enable", pid=p.pid, all=True)
                    time.sleep(0.3)  # first hits of the sites (the nop5 rewrite) stay out
                    call("reset", pid=p.pid)
                    c0 = cpu_ns(p.pid)
                    time.sleep(a.duration / PHASES)
                    tr = call("stats", pid=p.pid)
                    c1 = cpu_ns(p.pid)
                    call("disable", pid=p.pid, all=True)
                    probes = sum(r["count"] for r in tr["regions"]) * \
                        tr["compensation"]["pair_ns"]
                    total += (c1 - c0) - probes
                    for f in tr["features"]:
                        cpu[f["name"]] = cpu.get(f["name"], 0) + f["cpu_ns"]
                        unc[f["name"]] = unc.get(f["name"], 0) + f["uncertainty_ns"]
                    call("sample", pid=p.pid, hz=hz, remote=a.remote)
                    time.sleep(a.duration / PHASES)
                    st = call("stats", pid=p.pid)
                    call("sample", pid=p.pid, hz=hz, on=False)
                    sm = st["sampling"]
                    n += sm["samples"]
                    for f in sm["features"]:
                        smp[f["name"]] = smp.get(f["name"], 0) + f["samples"]
                    for key, v in sm["anomalies"].items():
                        if v:
                            an[key] = an.get(key, 0) + v
            finally:
                p.kill()
                p.wait()
                call("detach", pid=p.pid)
            traced = {f: v / total for f, v in cpu.items()}
            for fname in sorted(smp):
                if not smp[fname] and not traced[fname]:
                    continue  # a feature the workload never enters
                p_s = smp[fname] / n if n else 0
                # the sampled share's standard error and the traced figure's own
                # uncertainty (compensation: calibration spread x instances)
                se = ((p_s * (1 - p_s) / n if n else 0) + (unc[fname] / total) ** 2) ** 0.5
                pts = 100 * (p_s - traced[fname])
                rows.append((name, hz, n, fname, 100 * p_s, 100 * traced[fname], pts,
                             abs(pts) / 100 / se if se else 0.0, an))
                print("%-8s %4d Hz %6d samples  %-12s sampled %6.2f%% traced %6.2f%%  %+5.2f "
                      "points  %4.1f SE" % rows[-1][:8] + ("  anomalies %s" % an if an else ""),
                      flush=True)
finally:
    d.send_signal(signal.SIGTERM)
    d.wait(10)
worst = max(abs(r[6]) for r in rows)
worst_se = max(r[7] for r in rows)
print("worst: %.2f points, %.1f SE (%s)" % (worst, worst_se,
                                          "remote" if a.remote else "cpu-clock"))
if a.out:
    L = ["| target | Hz | samples | feature | sampled share | traced share | difference | in SE |",
         "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        L.append("| %s | %d | %d | %s | %.2f%% | %.2f%% | %+.2f pt | %.1f |" % r[:8])
    L.append("\nWorst: %.2f points, %.1f standard errors." % (worst, worst_se))
    open(a.out, "w").write("\n".join(L) + "\n")
