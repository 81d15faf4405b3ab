#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The layers of the C tree (docs/ARCHITECTURE.md, "Layers"), checked.

Modules: every folder of daemon/ (included as "sample/sample.h" from the include root
daemon/), common/ (included as "common/err.h"), cli/'s own files and every folder of cli/
("cli/core/core.h"). A file depends on another module
when it includes one of its headers or calls a function one of them declares; a header
included without a folder is the file's own module's. The modules' dependencies must form
no cycle: their ranks are derived from them (one more than the highest of those a module
depends on), so there is no table to keep in step, and an include or a call that goes up a
layer closes a cycle and is refused, with the files that close it.

Also refused:
- a header named *_impl.h (its module's own: the fields of its structs) included from
  another module;
- a method fp_<object>__<verb> (or fpm_, cli_) defined outside the module that defines
  struct fp_<object> (or where no module does), and a free function fp_<word>_... defined
  where another module defines struct fp_<word> or other fp_<word>_ functions: a name
  leads to one folder;
- a file over 800 lines, a function over 80.

--map prints one row per module (path, rank, public headers, the prefixes of the names it
defines, and the first sentence of its head comment): docs/ARCHITECTURE.md's map, which
make check compares.
Prints each breach and exits 1.
usage: scripts/layers.py [--map] [ROOT] (default: the tree this script is in)"""
import os
import re
import sys

MAX_LINES, MAX_FN = 800, 80
args = [a for a in sys.argv[1:] if not a.startswith("--")]
ROOT = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
D = os.path.join(ROOT, "daemon")


def text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def code(src):
    """src without its comments and string literals (names there are no calls)."""
    return re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"', " ", src, flags=re.S)


def c_files(folder):
    return sorted(f for f in os.listdir(folder) if f.endswith((".c", ".h")))


# module name -> (folder, the prefix its headers are included by): daemon/'s folders (from
# the include root daemon/), common/, cli/'s own files and each folder of cli/ (from the
# tree's root)
where = {m: (os.path.join(D, m), m + "/") for m in sorted(os.listdir(D))
         if os.path.isdir(os.path.join(D, m))}
for side in ("common", "cli"):
    if os.path.isdir(os.path.join(ROOT, side)):
        where[side] = (os.path.join(ROOT, side), side + "/")
if os.path.isdir(os.path.join(ROOT, "cli")):
    for sub in sorted(os.listdir(os.path.join(ROOT, "cli"))):
        if os.path.isdir(os.path.join(ROOT, "cli", sub)):
            where["cli/" + sub] = (os.path.join(ROOT, "cli", sub), "cli/%s/" % sub)
NAME = r"(?:fp|fpm|cli)_[a-z0-9_]+"  # the names the rules below read
mods = sorted(where)
files = {m: c_files(where[m][0]) for m in mods}
bad = ["daemon/%s: a file outside every module (folder)" % f for f in c_files(D)]
rel = {m: os.path.relpath(where[m][0], ROOT) for m in mods}

exports = {}  # function -> module: fp_* names followed by "(" in a module's headers
for m in mods:
    for h in files[m]:
        if h.endswith(".h"):
            for fn in re.findall(r"^[a-z].*?\b(%s)\(" % NAME,
                                 code(text(os.path.join(where[m][0], h))), re.M):
                exports.setdefault(fn, m)


def sizes(path, src):
    """No file over MAX_LINES; no function over MAX_FN, from its signature's first line to
    the "}" in column 0 closing its body, which opens with "{" in column 0."""
    lines = src.split("\n")
    if len(lines) - 1 > MAX_LINES:
        bad.append("%s: %d lines (at most %d)" % (path, len(lines) - 1, MAX_LINES))
    sig = start = None
    for i, ln in enumerate(lines, 1):
        if re.match(r"[a-z].*\(", ln) and not ln.rstrip().endswith(";"):
            sig, fname = i, re.split(r"[ *]+", ln.split("(")[0])[-1]
        elif ln.startswith("{"):
            start = sig or i
        elif ln.startswith("}") and start:
            if i - start + 1 > MAX_FN:
                bad.append("%s:%d: %s is %d lines (at most %d)" % (
                    path, start, fname, i - start + 1, MAX_FN))
            sig = start = None


structs = {}  # fp_<object> -> the module defining "struct fp_<object> {"
defined = []  # (module, path, function) of every non-static fp_ function defined
why = {}  # (from, to) -> the first reason seen
for m in mods:
    for name in files[m]:
        path = os.path.join(rel[m], name)
        src = text(os.path.join(where[m][0], name))
        for s in re.findall(r"^(?:static |typedef )?struct (%s) \{" % NAME, src, re.M):
            structs.setdefault(s, m)
        for fn in re.findall(r"^(?!static)[a-z][a-z0-9_ *]*?\b(%s)\([^;]*$" % NAME, src,
                             re.M):
            if name.endswith(".c"):
                defined.append((m, path, fn))
        for inc in re.findall(r'^#include "([a-z0-9_/]+\.h)"', src, re.M):
            if "/" not in inc:
                continue  # its own module's
            folder = max((k for k in where if inc.startswith(where[k][1]) and
                          "/" not in inc[len(where[k][1]):]), key=len, default=None)
            h = inc.rsplit("/", 1)[1]
            if folder is None or folder == m:
                continue  # bpf/, usdt/: ABI headers, below everything
            if h.endswith("_impl.h"):
                bad.append("%s: includes %s, private to %s/" % (path, inc, rel[folder]))
            why.setdefault((m, folder), "%s: includes %s" % (path, inc))
        for fn in sorted(set(re.findall(r"\b(%s)\b" % NAME, code(src)))):
            if exports.get(fn, m) != m:
                why.setdefault((m, exports[fn]), "%s: calls %s (%s)" % (path, fn, exports[fn]))
        if name.endswith(".c"):
            sizes(path, src)

words = {}  # fp_<word> of free functions -> the modules defining some
for m, path, fn in defined:
    if "__" in fn:
        obj = fn.split("__")[0]
        if structs.get(obj) != m:
            bad.append("%s: defines %s, a method of struct %s, which %s" % (
                path, fn, obj, "%s/ defines" % rel[structs[obj]] if obj in structs
                else "no module defines"))
    else:
        words.setdefault("_".join(fn.split("_")[:2]), {}).setdefault(m, path)
for w, ms in sorted(words.items()):
    owner = structs.get(w)
    if owner and any(m != owner for m in ms):
        bad.extend("%s: defines %s_..., a name of struct %s's module %s/" % (
            p, w, w, rel[owner]) for m, p in sorted(ms.items()) if m != owner)
    elif len(ms) > 1:
        bad.append("%s_... defined in %s: a prefix leads to one folder" % (
            w, ", ".join(sorted(ms.values()))))

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


def purpose(m):
    """The public headers (all but *_impl.h) and the first sentence of the folder's head
    comment: the first comment of <folder>.h (or its singular), else of <folder>_impl.h,
    else of main.c."""
    pub = [h for h in files[m] if h.endswith(".h") and not h.endswith("_impl.h")]
    b = os.path.basename(m)
    head = [h for h in (b + ".h", b[:-1] + ".h", b + "_impl.h", "main.c") if h in files[m]]
    head += [h for h in pub if h.startswith(b)]
    what = ""
    if head:
        src = text(os.path.join(where[m][0], head[0])).split("#ifndef")[0].split("#include")[0]
        mo = re.search(r"/\*(?! SPDX)(.*?)\*/", src, re.S)
        if mo:
            what = re.sub(r"\s*\n\s*\*?\s*", " ", mo.group(1)).strip(" *")
            what = re.split(r"(?<=\.)\s", what)[0].rstrip(".")
    return ", ".join(pub) or "-", what or "(its headers say)"


if "--map" in sys.argv:  # the breaches are the plain check's to print
    names = {}  # module -> the prefixes of the names it defines: a name leads to its folder
    for m, path, fn in defined:
        w = "_".join(fn.split("_")[:2])
        names.setdefault(m, set()).add(fn.split("__")[0] + "__" if "__" in fn else
                                       w + "_" if len(fn) > len(w) else w)
    print("| folder | rank | public headers | names | what it is |")
    print("|---|---|---|---|---|")
    for m in sorted(mods, key=lambda m: (rank[m], m)):
        h, what = purpose(m)
        print("| %s/ | %d | %s | %s | %s |" % (rel[m], rank[m], h,
                                             " ".join(sorted(names.get(m, ()))) or "-", what))
    sys.exit(0)
for b in bad:
    print(b)
if not bad:
    order = sorted(mods, key=lambda m: (rank[m], m))
    print("layers: %d modules, %d files; ranks from their dependencies: %s; names lead to "
          "their folders; files <= %d lines, functions <= %d" % (
              len(mods), sum(len(f) for f in files.values()),
              ", ".join("%s %d" % (m, rank[m]) for m in order), MAX_LINES, MAX_FN))
sys.exit(1 if bad else 0)
