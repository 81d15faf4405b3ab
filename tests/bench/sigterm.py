#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""How long featprofd takes to exit on SIGTERM while it holds N targets (docs/TRACING.md
"Closing them: a prompt SIGTERM"). Needs root.

usage: sigterm.py BUILD_DIR EXE N pid|exe
  EXE: a target of the line protocol that prints one line at start (tests/targets/service,
  service_ip); N processes of it; pid: each enabled on its own, exe: enable --exe."""
import os
import subprocess
import sys
import tempfile
import time

B, exe, n, mode = sys.argv[1], os.path.abspath(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
sock = os.path.join(tempfile.mkdtemp(), "fp.sock")
d = subprocess.Popen([B + "/featprofd", "--socket", sock, "--group", "nogroup"],
                     stderr=subprocess.DEVNULL)
while not os.path.exists(sock):
    time.sleep(0.1)
ps = []
for _ in range(n):
    p = subprocess.Popen([exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    p.stdout.readline()
    ps.append(p)
cli = [B + "/featprof", "--socket", sock, "enable"]
if mode == "exe":
    subprocess.run(cli + ["--exe", exe, "--all"], capture_output=True)
else:
    for p in ps:
        subprocess.run(cli + [str(p.pid), "--all"], capture_output=True)
time.sleep(2)
kinds = {}
for f in os.listdir("/proc/%d/fd" % d.pid):
    try:
        k = os.readlink("/proc/%d/fd/%s" % (d.pid, f))
    except OSError:
        continue
    if k in ("anon_inode:[perf_event]", "anon_inode:bpf_link"):
        kinds[k] = kinds.get(k, 0) + 1
t0 = time.time()
d.terminate()
d.wait()
print("%d targets (%s): %s; exit %.2f s after SIGTERM" % (n, mode, kinds, time.time() - t0))
for p in ps:
    p.kill()
