#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The daemon's layers (docs/ARCHITECTURE.md, "Layers"). Each folder of DIR is a module;
a file depends on another module when it includes one of that module's headers or calls
a function one of them declares. The modules' dependencies must form no cycle: their
ranks are derived from it (a module's rank is one more than the highest of those it
depends on), so there is no table to keep in step, and an include or a call that goes
up a layer closes a cycle and is refused, with the files that close it. A header named
*_impl.h is its module's own (the fields of its structs): included from another module,
it is a breach. Also: no file over 900 lines, no function over 100, in DIR and in the
cli/ and common/ beside it. Prints each breach and exits 1.
usage: scripts/layers.py [DIR] (default daemon)"""
import os
import re
import sys

D = sys.argv[1] if len(sys.argv) > 1 else "daemon"


def text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


mods = sorted(m for m in os.listdir(D) if os.path.isdir(os.path.join(D, m)))
files = {m: sorted(f for f in os.listdir(os.path.join(D, m)) if f.endswith((".c", ".h")))
         for m in mods}
stray = sorted(f for f in os.listdir(D) if f.endswith((".c", ".h")))
headers = {h: m for m in mods for h in files[m] if h.endswith(".h")}
exports = {}  # function -> its module: fp_* names followed by "(" in a module's headers
for h, m in headers.items():
    for fn in re.findall(r"\b(fp_[a-z0-9_]+)\(", text(os.path.join(D, m, h))):
        exports[fn] = m

bad = ["%s/%s: a file outside every module (folder)" % (D, f) for f in stray]


def sizes(path, src):
    """No file over 900 lines; no function over 100, from its signature's first line to
    the "}" in column 0 closing its body, which opens with "{" in column 0."""
    lines = src.split("\n")
    if len(lines) - 1 > 900:
        bad.append("%s: %d lines (at most 900)" % (path, len(lines) - 1))
    sig = start = None
    for i, ln in enumerate(lines, 1):
        if re.match(r"[a-z].*\(", ln) and not ln.rstrip().endswith(";"):
            sig, fname = i, re.split(r"[ *]+", ln.split("(")[0])[-1]
        elif ln.startswith("{"):
            start = sig or i
        elif ln.startswith("}") and start:
            if i - start + 1 > 100:
                bad.append("%s:%d: %s is %d lines (at most 100)" % (
                    path, start, fname, i - start + 1))
            sig = start = None


why = {}  # (from, to) -> the first reason seen
for m in mods:
    for name in files[m]:
        path = os.path.join(D, m, name)
        src = text(path)
        for h in re.findall(r'^#include "([a-z0-9_]+\.h)"', src, re.M):
            if h.endswith("_impl.h") and headers.get(h, m) != m:
                bad.append("%s: includes %s, private to %s/" % (path, h, headers[h]))
            if headers.get(h, m) != m:
                why.setdefault((m, headers[h]), "%s: includes %s" % (path, h))
        for fn in sorted(set(re.findall(r"\b(fp_[a-z0-9_]+)\b", src))):
            if exports.get(fn, m) != m:
                why.setdefault((m, exports[fn]), "%s: calls %s (%s)" % (path, fn, exports[fn]))
        if name.endswith(".c"):
            sizes(path, src)

for side in ("cli", "common"):  # the other C folders: sizes only
    there = os.path.join(os.path.dirname(os.path.abspath(D)), side)
    for name in sorted(os.listdir(there)) if os.path.isdir(there) else []:
        if name.endswith(".c"):
            sizes(os.path.join(side, name), text(os.path.join(there, name)))

deps = {m: sorted({b for (a, b) in why if a == m}) for m in mods}
rank, state = {}, {}


def visit(m, path):
    """Ranks m after what it depends on; a cycle is a breach, named by its edges."""
    if state.get(m) == "done":
        return rank[m]
    if state.get(m) == "open":
        cyc = path[path.index(m):] + [m]
        bad.append("a cycle between modules %s: %s" % (" -> ".join(cyc), "; ".join(
            why[(a, b)] for a, b in zip(cyc, cyc[1:]))))
        return 0
    state[m] = "open"
    rank[m] = 1 + max([visit(d, path + [m]) for d in deps[m]], default=-1)
    state[m] = "done"
    return rank[m]


for m in mods:
    visit(m, [])
for b in bad:
    print(b)
if not bad:
    order = sorted(mods, key=lambda m: (rank[m], m))
    print("layers: %d modules, %d files; ranks from their dependencies: %s; files <= 900 "
          "lines, functions <= 100 (and in cli/, common/)" % (len(mods), sum(len(f) for f in files.values()),
                                       ", ".join("%s %d" % (m, rank[m]) for m in order)))
sys.exit(1 if bad else 0)
