#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Issue 31's figures on zstd with regions (tests/bench/zstd_build.sh), for a before/after
(docs/REAL-PROGRAMS.md). Needs root; starts its own featprofd.

usage: zstd_figures.py FEATPROF_BUILD ZSTD_BUILDS INPUT
  FEATPROF_BUILD: a featprof build directory (featprofd, featprof); ZSTD_BUILDS: the
  zstd_build.sh output made with that build's featprof.h; INPUT: a file to compress."""
import json
import os
import subprocess
import sys
import tempfile
import time

B, Z, INPUT = sys.argv[1], sys.argv[2], sys.argv[3]
sock = os.path.join(tempfile.mkdtemp(), "fp.sock")
d = subprocess.Popen([B + "/featprofd", "--socket", sock, "--group", "nogroup"],
                     stderr=subprocess.DEVNULL)
while not os.path.exists(sock):
    time.sleep(0.1)
time.sleep(0.5)


def fp(*a, **kw):
    return subprocess.run([B + "/featprof", "--socket", sock] + [str(x) for x in a],
                          capture_output=True, text=True, **kw)


def zstd(build):
    return Z + "/" + build + "/programs/zstd"


def last_json(text):
    for line in reversed(text.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return {}


def stats_of(pid):
    return json.loads(fp("stats", pid, "--json").stdout or "{}")


out = {}
# 1. run of each build: counts, the mode, the time after the program's exit, outside
for build in ("default", "ip", "sampled"):
    t0 = time.time()
    subprocess.run([zstd(build), "-q", "-T2", "-3", "-c", INPUT], stdout=subprocess.DEVNULL)
    alone = time.time() - t0
    t0 = time.time()
    r = fp("run", "--json", "--", zstd(build), "-q", "-f", "-T2", "-3", "-o", "/dev/null", INPUT)
    took = time.time() - t0
    res = last_json(r.stderr) or last_json(r.stdout)
    regs = {x["name"]: x for x in res.get("regions", [])}
    modes = sorted({x["measured"] for p in res.get("processes", []) for x in p["regions"]
                    if x["count"]})
    wall = res.get("run", {}).get("wall_ns", 0) / 1e9
    out["run_" + build] = {
        "alone_s": round(alone, 3), "run_wall_s": round(wall, 3),
        "after_exit_s": round(took - wall, 3), "modes": modes,
        "counts": {k: v["count"] for k, v in regs.items()},
        "excl_ms": {k: round(v["exclusive_ns"] / 1e6, 2) for k, v in regs.items()},
        "outside_ms": round(res.get("base_ns", 0) / 1e6, 2)}
# 2. strays while a run of the in-process build goes on (a longer level)
p = subprocess.Popen([B + "/featprof", "--socket", sock, "run", "--", zstd("ip"), "-q", "-T2",
                      "-12", "-c", INPUT], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
strays = None
for _ in range(100):
    time.sleep(0.05)
    st = json.loads(fp("status", "--json").stdout or "{}")
    ts = [t for t in st.get("targets", []) if t.get("comm") == "zstd" and not t.get("exited")]
    if ts:
        strays = ts[0].get("stray_breakpoints")
        break
p.wait()
out["run_ip_stray_breakpoints"] = strays


# 3. sampling the sampled build (alone, then beside tracing): the library's shares
def sample(traced):
    z = subprocess.Popen([zstd("sampled"), "-q", "-T2", "-12", "-c", INPUT],
                         stdout=subprocess.DEVNULL)
    time.sleep(0.3)
    if traced:
        fp("enable", z.pid, "--all")
    r = fp("sample", z.pid, "--duration", "1", "--json")
    z.wait()
    sm = json.loads(r.stdout).get("sampling", {}) if r.returncode == 0 else {}
    n = sm.get("samples", 0) or 1
    paths = {"/".join(x["path"]): round(x["samples"] / n, 4) for x in sm.get("paths", [])}
    return {"samples": sm.get("samples"), "probe_samples": sm.get("probe_samples"),
            "regions": {x["name"]: round(x["samples"] / n, 4) for x in sm.get("regions", [])},
            "frontend_own": paths.get("frontend_compress", 0),
            "error": r.stderr.strip() if r.returncode else None}


out["sample_alone"] = sample(False)
out["sample_traced"] = sample(True)
# 4. SIGTERM holding 40 in-process zstd processes (each waiting on its input)
zs = [subprocess.Popen([zstd("ip"), "-q", "-c"], stdin=subprocess.PIPE,
                       stdout=subprocess.DEVNULL) for _ in range(40)]
time.sleep(0.5)
for z in zs:
    fp("enable", z.pid, "--all")
held = 0
for f in os.listdir("/proc/%d/fd" % d.pid):
    try:
        held += os.readlink("/proc/%d/fd/%s" % (d.pid, f)) in ("anon_inode:[perf_event]",
                                                               "anon_inode:bpf_link")
    except OSError:
        pass
t0 = time.time()
d.terminate()
d.wait()
out["sigterm_40_ip"] = {"uprobe_descriptors": held, "exit_s": round(time.time() - t0, 2)}
for z in zs:
    z.kill()
print(json.dumps(out, indent=1))
