#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What a hot in-process region's runtime costs a real program, against what featprof
subtracts for it (issue 31, part 5; docs/REAL-PROGRAMS.md "A hot region"). Needs root;
starts its own featprofd.

usage: zstd_hot.py FEATPROF_BUILD ZSTD_IP INPUT [ROUNDS]
  ZSTD_IP: the in-process zstd of `ZSTD_HOT=1 tests/bench/zstd_build.sh` (count [Count]
  around every ZSTD_count call, inside match_finder); INPUT: a file to compress.

Each round compresses INPUT twice with the same binary (zstd -q --single-thread -6,
reading a FIFO, so that the regions are enabled before its first byte): once with Count
enabled beside Frontend, MatchFinder and Entropy, once with Count's gates down. The
difference of match_finder's raw inclusive time is what count's runtime cost the program
(its sites' gate tests, ~1 ns, are in both); featprof's compensated inclusive time with
Count up should equal the raw one with it down."""
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

B, ZSTD, INPUT = sys.argv[1], sys.argv[2], sys.argv[3]
ROUNDS = int(sys.argv[4]) if len(sys.argv) > 4 else 3
tmp = tempfile.mkdtemp()
sock = os.path.join(tmp, "fp.sock")
d = subprocess.Popen([B + "/featprofd", "--socket", sock, "--group", "nogroup"],
                     stderr=open(os.path.join(tmp, "featprofd.log"), "w"))
while not os.path.exists(sock):
    time.sleep(0.1)
time.sleep(0.3)


def fp(*a):
    return subprocess.run([B + "/featprof", "--socket", sock] + [str(x) for x in a],
                          capture_output=True, text=True)


def one(features):
    """One compression with these features enabled: match_finder's and count's figures."""
    fifo = os.path.join(tmp, "in.fifo")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    z = subprocess.Popen([ZSTD, "-q", "-f", "--single-thread", "-6", "-", "-o",
                          os.path.join(tmp, "out.zst")], stdin=subprocess.PIPE)
    time.sleep(0.2)  # its regions' objects mapped
    r = fp("enable", z.pid, *features)
    assert r.returncode == 0, r.stderr

    def feed():
        with open(INPUT, "rb") as f:
            z.stdin.write(f.read())
        z.stdin.close()
    t = threading.Thread(target=feed)
    t.start()
    t.join()
    assert z.wait() == 0
    st = json.loads(fp("stats", z.pid, "--json").stdout)
    regs = {x["name"]: x for x in st["regions"]}
    return regs["match_finder"], regs["count"]


try:
    ups, downs = [], []
    for rnd in range(ROUNDS):
        m_up, c_up = one(["Frontend", "MatchFinder", "Count", "Entropy"])
        m_down, _ = one(["Frontend", "MatchFinder", "Entropy"])
        n = c_up["count"]
        cost = m_up["raw_inclusive_ns"] - m_down["raw_inclusive_ns"]
        taken = m_up["raw_inclusive_ns"] - m_up["inclusive_ns"]
        print("round %d: count %d instances; match_finder inclusive raw %.1f ms with Count "
              "up, %.1f ms down: count's runtime cost %.1f ns a pair; featprof subtracted "
              "%.1f ns a pair; compensated %.1f ms +- %.1f against %.1f ms (%+.1f%%); "
              "count exclusive %.1f ms +- %.1f (raw %.1f)" % (
                  rnd + 1, n, m_up["raw_inclusive_ns"] / 1e6, m_down["raw_inclusive_ns"] / 1e6,
                  cost / n, taken / n, m_up["inclusive_ns"] / 1e6,
                  m_up["inclusive_uncertainty_ns"] / 1e6, m_down["raw_inclusive_ns"] / 1e6,
                  100 * (m_up["inclusive_ns"] / m_down["raw_inclusive_ns"] - 1),
                  c_up["exclusive_ns"] / 1e6, c_up["exclusive_uncertainty_ns"] / 1e6,
                  c_up["raw_exclusive_ns"] / 1e6), flush=True)
finally:
    d.terminate()
    d.wait()
    for line in open(os.path.join(tmp, "featprofd.log")):
        if "in-process runtime" in line:
            print(line.rstrip())
