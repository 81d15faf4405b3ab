#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Function-level influence models of real programs nobody here wrote (issue 44;
docs/MODELS.md, "Functions: real programs"): Debian 12's lz4 1.9.4 and zstd 1.5.4, from
their source packages without a line changed (-O2 -g, symbols kept, no featprof.h),
measured by featprof run --stacks, modelled by featprof model --functions, refined by
--refine, and checked on held-out configurations (the median of 3 runs each).

usage: explain_real.py BUILD_DIR [lz4|zstd ...]   (root: it starts a featprofd)
Prints the tables docs/MODELS.md keeps."""
import itertools
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import harness as h  # noqa: E402
from test_real_models import corpus  # noqa: E402

B = h.B
TMP = os.environ.get("EXPLAIN_KEEP") or tempfile.mkdtemp(prefix="featprof-explain-real-")
os.makedirs(TMP, exist_ok=True)
HZ = "4999"         # samples a second of CPU time: runs of 0.1-2 s give enough
SIZE = 48 << 20     # the corpus (test_real_models' generator)
# the output to /dev/null: the page cache's writeback is the machine's, not the program's
# (a file's write() CPU time moved by 30-55% between runs of one configuration here)
OUT = {"lz4": ["/dev/null"], "zstd": ["-o", "/dev/null"]}
APT = ["-o", "Dir::Etc::SourceList=/dev/null"]


def fetch(cache, pkg, ver, orig):
    """The source package pkg=ver into cache (Debian's mirror, a deb-src list of its own)."""
    if os.path.exists(os.path.join(cache, orig)):
        return
    os.makedirs(os.path.join(cache, "apt", "lists", "partial"), exist_ok=True)
    with open(os.path.join(cache, "apt", "src.sources"), "w") as f:
        f.write("Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\n"
                "Components: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n")
    opts = APT + ["-o", "Dir::Etc::SourceParts=" + cache + "/apt", "-o",
                  "Dir::State::Lists=" + cache + "/apt/lists", "-o", "APT::Sandbox::User=root"]
    subprocess.run(["apt-get", "-q"] + opts + ["update"], check=True, capture_output=True)
    subprocess.run(["apt-get", "-q"] + opts + ["source", "--download-only", pkg + "=" + ver],
                   check=True, capture_output=True, cwd=cache)


def build_lz4():
    out = os.path.join(B, "real", "lz4-plain")
    if os.path.exists(out):
        return out
    cache = os.path.join(B, "lz4-cache")
    fetch(cache, "lz4", "1.9.4-1", "lz4_1.9.4.orig.tar.gz")
    w = tempfile.mkdtemp()
    subprocess.run(["tar", "-C", w, "-xzf", cache + "/lz4_1.9.4.orig.tar.gz"], check=True)
    s = w + "/lz4-1.9.4"
    srcs = [s + "/lib/" + f for f in ("lz4.c", "lz4hc.c", "lz4frame.c", "xxhash.c")] + \
        [s + "/programs/" + f for f in ("lz4cli.c", "lz4io.c", "bench.c", "datagen.c")]
    os.makedirs(os.path.dirname(out), exist_ok=True)
    subprocess.run(["cc", "-O2", "-g", "-I" + s + "/lib"] + srcs + ["-o", out, "-lpthread"],
                   check=True)
    shutil.rmtree(w)
    return out


def build_zstd():
    out = os.path.join(B, "real", "zstd-plain")
    if os.path.exists(out):
        return out
    cache = os.path.join(B, "zstd-cache")
    fetch(cache, "zstd", "1.5.4+dfsg2-5", "libzstd_1.5.4+dfsg2.orig.tar.xz")
    w = tempfile.mkdtemp()
    subprocess.run(["tar", "-C", w, "-xJf", cache + "/libzstd_1.5.4+dfsg2.orig.tar.xz"],
                   check=True)
    s = os.path.join(w, os.listdir(w)[0])
    # the upstream Makefile, its own flags but -g and -O2 (Debian's), one thread
    subprocess.run(["make", "-C", s + "/programs", "-j2", "zstd", "MOREFLAGS=-g",
                    "CFLAGS=-O2", "HAVE_ZLIB=0", "HAVE_LZMA=0", "HAVE_LZ4=0"],
                   check=True, capture_output=True)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    shutil.copy(s + "/programs/zstd", out)
    shutil.rmtree(w)
    return out


# each program: its options' values, how a configuration runs it
PROGRAMS = {
    "lz4": {
        "build": build_lz4,
        "options": {"level": ["l1", "l4", "l9"], "bsize": ["4", "7"], "crc": ["on", "off"],
                    "bcrc": ["off", "on"]},
        "choices": ["--choices", "level=l1|l4|l9", "--choices", "bsize=4|7"],
        "args": lambda c: ["-q", "-f", "-" + c["level"][1:], "-B" + c["bsize"]] +
        ([] if c["crc"] == "on" else ["--no-frame-crc"]) +
        (["-BX"] if c["bcrc"] == "on" else []),
    },
    "zstd": {
        "build": build_zstd,
        "options": {"level": ["l1", "l3", "l9"], "long": ["off", "on"],
                    "check": ["on", "off"], "wlog": ["18", "22"]},
        "choices": ["--choices", "level=l1|l3|l9", "--choices", "wlog=18|22"],
        "args": lambda c: ["-q", "-f", "-T1", "-" + c["level"][1:],
                           "--zstd=wlog=" + c["wlog"]] +
        (["--long=" + c["wlog"]] if c["long"] == "on" else []) +
        ([] if c["check"] == "on" else ["--no-check"]),
    },
}


def cfg_text(c):
    return ",".join("%s=%s" % kv for kv in sorted(c.items()))


def run(d, prog, exe, c, inp, out, extra=()):
    r = subprocess.run([B + "/featprof", "--socket", d.sock, "run", "--stacks", "--hz", HZ,
                        "--config", cfg_text(c), "-o", out] + list(extra) +
                       ["--", exe] + PROGRAMS[prog]["args"](c) + [inp] + OUT[prog],
                       capture_output=True, text=True, timeout=600)
    if r.returncode:
        sys.exit("%s %s: %s" % (prog, cfg_text(c), r.stderr[-400:]))


def fn_times(f, refined=()):
    """{function: its time} of a run file: self_ns sampled, or exclusive CPU where timed."""
    with open(f) as fh:
        doc = json.load(fh)
    t = {x["name"]: x["self_ns"] for x in doc["sampling"]["functions"]}
    for r in doc.get("regions", []):
        if "refine" in r.get("features", []):
            t[r["name"]] = r.get("exclusive_cpu_ns", r["exclusive_ns"])
    return t


def model(d, files, prog, *extra):
    r = subprocess.run([B + "/featprof", "--socket", d.sock, "model", "--functions",
                        "--json"] + PROGRAMS[prog]["choices"] + list(extra) + files,
                       capture_output=True, text=True, timeout=1800)
    if r.returncode:
        sys.exit("model: " + r.stderr[-400:])
    return json.loads(r.stdout)


def held_out_errors(d, prog, train, held_files, fns):
    """Per function of fns: sum |predicted - median measured| / sum median over the
    held-out configurations, and the replicates' own spread (median absolute deviation
    over median, the same sums); in %."""
    err, tot, spread = {}, {}, {}
    for c, files in held_files:
        m = model(d, train, prog, "--predict", cfg_text(c))
        pred = {f["name"]: f["predicted_ns"] for f in m["functions"]}
        times = [fn_times(f) for f in files]
        for fn in fns:
            v = [t.get(fn, 0) for t in times]
            med = statistics.median(v)
            err[fn] = err.get(fn, 0) + abs(pred.get(fn, 0) - med)
            tot[fn] = tot.get(fn, 0) + med
            spread[fn] = spread.get(fn, 0) + statistics.median([abs(x - med) for x in v])
    return ({fn: 100 * err[fn] / tot[fn] if tot[fn] else -1 for fn in fns},
            {fn: 100 * spread[fn] / tot[fn] if tot[fn] else -1 for fn in fns})


def pair_spread(files, fns):
    """Per function of fns: the runs' own spread, from runs of one configuration in pairs
    (the training runs, two a configuration): the median over configurations of
    |a - b| / ((a + b) / 2), in % (configurations where it has time)."""
    by_cfg = {}
    for f in files:
        with open(f) as fh:
            c = json.dumps(json.load(fh)["run"]["config"], sort_keys=True)
        by_cfg.setdefault(c, []).append(fn_times(f))
    out = {}
    for fn in fns:
        rel = [abs(t[0].get(fn, 0) - t[1].get(fn, 0)) /
               ((t[0].get(fn, 0) + t[1].get(fn, 0)) / 2)
               for t in by_cfg.values() if len(t) >= 2 and t[0].get(fn, 0) + t[1].get(fn, 0)]
        out[fn] = 100 * statistics.median(rel) if rel else -1
    return out


def table(title, fns, errs, spreads, loo, pairs):
    print("\n%s" % title)
    print("| function | LOO % | held-out MAPE % | held-out triples' spread % | "
          "training pairs' spread % | within |")
    print("|---|---:|---:|---:|---:|---|")
    within = n = 0
    for fn in fns:
        if errs[fn] < 0:    # in no held-out configuration: nothing to check
            print("| %s | %.1f | (in no held-out run) | | | |" % (fn, loo.get(fn, -1)))
            continue
        ok = errs[fn] <= max(5, pairs[fn])
        within += ok
        n += 1
        print("| %s | %.1f | %.1f | %.1f | %.1f | %s |" % (
            fn, loo.get(fn, -1), errs[fn], spreads[fn], pairs[fn], "yes" if ok else "no"))
    print("%d of %d functions within 5%% (or the training pairs' spread where that is "
          "larger): %.0f%%" % (within, n, 100 * within / max(1, n)))
    return within


def one(d, prog):
    p = PROGRAMS[prog]
    exe = p["build"]()
    inp = TMP + "/in"
    corpus(inp, SIZE)
    names = sorted(p["options"])
    configs = [dict(zip(names, v)) for v in itertools.product(*[p["options"][n]
                                                                for n in names])]
    rnd = random.Random(44)
    held = rnd.sample(configs, 4)
    train_cfg = [c for c in configs if c not in held]
    print("## %s: %d configurations, %d trained on (2 runs each), %d held out (3 runs "
          "each); %s" % (prog, len(configs), len(train_cfg), len(held), exe))
    train = []
    for k in range(2):
        for i, c in enumerate(train_cfg):
            f = "%s/%s-t%d-%d.json" % (TMP, prog, i, k)
            run(d, prog, exe, c, inp, f)
            train.append(f)
    held_files = []
    for i, c in enumerate(held):
        fs = ["%s/%s-h%d-%d.json" % (TMP, prog, i, k) for k in range(3)]
        for f in fs:
            run(d, prog, exe, c, inp, f)
        held_files.append((c, fs))
    m = model(d, train, prog)
    fns = [f["name"] for f in m["functions"] if "+0x" not in f["name"]]
    loo = {f["name"]: f["loo_error_pct"] for f in m["functions"]}
    print("coarse model: %d relevant functions; by option:" % len(fns))
    for opt, a in m["by_option"].items():
        print("  %s: %s" % (opt, ", ".join("%s %+.1f ms" % (x["function"],
                                                            x["influence_ns"] / 1e6)
                                           for x in a[:4])))
    errs, spreads = held_out_errors(d, prog, train, held_files, fns)
    pairs = pair_spread(train, fns)
    table("coarse step (sampled, %s Hz)" % HZ, fns, errs, spreads, loo, pairs)
    if os.environ.get("EXPLAIN_COARSE"):    # the coarse step alone
        return
    # the precise step: the hard functions timed in the same runs again
    ref = TMP + "/" + prog + "-refined"
    mr = model(d, train, prog, "--refine", ref)
    hard = [x["name"] for x in mr["refined"]]
    print("\nrefined: %s" % ", ".join("%s %.1f%% -> %.1f%%" % (
        x["name"], x["loo_before_pct"], x["loo_after_pct"]) for x in mr["refined"]))
    if hard:
        spec = "refine=" + ",".join("%s:%s" % (x["object"], x["name"]) for x in mr["refined"])
        held_ref = []
        for i, (c, fs) in enumerate(held_files):
            rf = ["%s/%s-hr%d-%d.json" % (TMP, prog, i, k) for k in range(3)]
            for f in rf:
                run(d, prog, exe, c, inp, f, ["--function", spec])
            held_ref.append((c, rf))
        rfiles = sorted(os.path.join(ref, x) for x in os.listdir(ref))
        errs_r, spreads_r = {}, {}
        for fn in fns:
            src = (rfiles, held_ref) if fn in hard else (train, held_files)
            e, s = held_out_errors(d, prog, src[0], src[1], [fn])
            errs_r[fn], spreads_r[fn] = e[fn], s[fn]
        loo_r = {f["name"]: f["loo_error_pct"] for f in mr["functions"]}
        table("after the precise step (hard functions timed)", fns, errs_r, spreads_r,
              {fn: loo_r.get(fn, loo[fn]) if fn in hard else loo[fn] for fn in fns},
              {fn: pair_spread(rfiles, [fn])[fn] if fn in hard else pairs[fn] for fn in fns})


def main():
    if os.geteuid() != 0:
        sys.exit("explain_real.py needs root (BPF)")
    progs = sys.argv[2:] or ["lz4", "zstd"]
    d = h.Daemon("explain-real")
    try:
        for prog in progs:
            one(d, prog)
    finally:
        d.stop()
        if not os.environ.get("EXPLAIN_KEEP"):  # EXPLAIN_KEEP=DIR: the run files kept
            shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    main()
