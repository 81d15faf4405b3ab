#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The daemon's layers (docs/ARCHITECTURE.md, "Layers"): a file may include the header
of, and call, only rooms below its own; no daemon file is over 900 lines, no function
over 100. Prints each breach and exits 1. usage: scripts/layers.py [DIR] (default daemon)"""
import os, re, sys

D = sys.argv[1] if len(sys.argv) > 1 else "daemon"
RANK = {"main": 7, "server": 6, "verbs": 5, "subs": 4, "record": 4, "groups": 3,
        "groups_cursor": 3, "groups_impl": 3, "groups_run": 3, "registry": 2, "client": 1}  # every other file: 0, the objects
ROOMS = [r for r in RANK if r != "main"]


def rank(path):
    return RANK.get(os.path.splitext(os.path.basename(path))[0], 0)


def text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


# what each room's header declares: fp_* names followed by "("
exports = {}
for room in ROOMS:
    h = os.path.join(D, room + ".h")
    if os.path.exists(h):
        exports[room] = set(re.findall(r"\b(fp_[a-z0-9_]+)\(", text(h)))

bad = []
files = sorted(f for f in os.listdir(D) if f.endswith((".c", ".h")))
for name in files:
    path, r = os.path.join(D, name), rank(name)
    src = text(path)
    words = set(re.findall(r"\b(fp_[a-z0-9_]+)\b", src))
    for room, names in exports.items():
        if RANK[room] <= r or os.path.splitext(name)[0] == room:
            continue
        if re.search(r'^#include "%s\.h"' % room, src, re.M):
            bad.append("%s: includes %s.h (a room above it)" % (path, room))
        for fn in sorted(words & names):
            bad.append("%s: calls %s (%s.h, a room above it)" % (path, fn, room))
    if not name.endswith(".c"):
        continue
    lines = src.split("\n")
    if len(lines) - 1 > 900:
        bad.append("%s: %d lines (at most 900)" % (path, len(lines) - 1))
    # a function: from its signature's first line to the "}" in column 0 closing its
    # body, which opens with "{" in column 0
    sig = start = None
    for i, ln in enumerate(lines, 1):
        if re.match(r"[a-z].*\(", ln) and not ln.rstrip().endswith(";"):
            sig, fname = i, re.split(r"[ *]+", ln.split("(")[0])[-1]
        elif ln.startswith("{"):
            start = sig or i
        elif ln.startswith("}") and start:
            if i - start + 1 > 100:
                bad.append("%s:%d: %s is %d lines (at most 100)" % (path, start, fname,
                                                                    i - start + 1))
            sig = start = None
for b in bad:
    print(b)
if not bad:
    print("layers: %d files, calls and includes run downward; files <= 900 lines, "
          "functions <= 100" % len(files))
sys.exit(1 if bad else 0)
