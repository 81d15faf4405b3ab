#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Integration tests of the CLI as people drive it (issue 46, parts 2 and 5): the bash
completion (scripts/featprof.bash-completion) offers a target's feature names; every
JSON output says its format and version; the table marks partly enabled features, says
an exited target is one and explains its marks, and says featprof's own cost apart. The real featprofd on a temporary
socket. Needs root.
usage: test_cli.py BUILD_DIR [TEST...]"""
import json
import os
import pty
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from harness import check, cli  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def complete(*words):
    """What the completion offers for the last of words."""
    r = subprocess.run(["bash", "-c", 'source "$0"; COMP_WORDS=("$@"); '
                        'COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); _featprof; '
                        'echo "${COMPREPLY[*]}"',
                        os.path.join(ROOT, "scripts", "featprof.bash-completion")] +
                       list(words), capture_output=True, text=True,
                       env=dict(os.environ, PATH=h.B + ":" + os.environ["PATH"]))
    return r.stdout.split()


def t_features(d):
    """featprof enable PID <TAB>: the target's features; a prefix narrows them; a pid
    position offers the running pids"""
    p = h.demo()
    try:
        got = complete("featprof", "--socket", d.sock, "enable", str(p.pid), "")
        print("    enable %d <TAB>: %s" % (p.pid, got))
        check({"Compression", "Encryption", "Cache"} <= set(got), "the demo's features")
        got = complete("featprof", "--socket", d.sock, "enable", str(p.pid), "Enc")
        check(got == ["Encryption"], "a prefix: %s" % got)
        got = complete("featprof", "--socket", d.sock, "enable", str(p.pid)[:-1])
        check(str(p.pid) in got, "pids: %s" % got[:5])
    finally:
        p.kill()
        p.wait()


def t_json_formats(d):
    """stats, status and list --json, stream's lines and a run file carry
    "format": "featprof-COMMAND" and a format_version"""
    p = h.demo()
    try:
        cli(d, "enable", p.pid, "Compression")
        outs = {"stats": cli(d, "stats", p.pid, "--json").stdout,
                "status": cli(d, "status", "--json").stdout,
                "list": cli(d, "list", p.pid, "--json").stdout,
                "stream": cli(d, "stream", p.pid, "--interval", "100ms", "--count", "1")
                .stdout.splitlines()[0]}
    finally:
        p.kill()
        p.wait()
    run = os.path.join(h.TMP, "run.json")
    cli(d, "run", "-o", run, "--", h.B + "/featprof-demo", "-t", "1", "-q", "-s", "1",
        timeout=60)
    with open(run) as f:
        outs["run"] = f.read()
    for cmd, text in outs.items():
        try:
            j = json.loads(text)
        except ValueError:
            j = {}
        check(j.get("format") == "featprof-" + cmd and j.get("format_version") == 1,
              "%s: format %s, version %s" % (cmd, j.get("format"), j.get("format_version")))


def t_table_marks(d):
    """After enabling only Compression, the features its interaction regions reach are
    marked partial (*), the legend says what ±, ?, SHARE and * mean, and a target that
    exited is said to have"""
    p = h.demo()
    try:
        cli(d, "enable", p.pid, "Compression")
        time.sleep(0.5)
        t = cli(d, "stats", p.pid).stdout
    finally:
        p.kill()
        p.wait()
    time.sleep(0.5)
    gone = cli(d, "stats", p.pid).stdout.splitlines()[:2]
    rows = {l.split()[0]: l for l in t.splitlines() if l[:1].isalpha()}
    print("    %s" % [k for k in rows if k.endswith("*")])
    check("Compression" in rows and "Checksum*" in rows and "Encryption*" in rows,
          "partial features marked: %s" % list(rows)[:8])
    check("about one standard error" in t and "SHARE: of the measured threads'" in t and
          max(len(l) for l in t.splitlines()) <= 80 and
          "*: a feature some of whose regions are not enabled" in t, "the legend")
    check(len(gone) == 2 and "has exited" in gone[1], "an exited target said: %s" % gone)


TINY = r"""
#include <featprof.h>
static volatile unsigned long sink;
static void a(void) { FP_BEGIN(tiny_a, "A"); sink++; FP_END(tiny_a); }
static void b(void) { FP_BEGIN(tiny_b, "B"); sink++; FP_END(tiny_b); }
int main(void) { for (int i = 0; i < 100000; i++) { a(); b(); } return 0; }
"""


def t_own_cost(d):
    """featprof run of a program whose 200,000 regions are a few ns each (issue 46, part 5):
    the probes' cost (what compensation took out of the times) on a line of its own,
    within a factor 2.5 of the instances times the calibrated pair cost, and not in
    "(outside regions)", which holds what the program did outside them: its start and the
    time it was off the CPU there (the table's CPU and off-CPU figures); the in-process
    build said"""
    src, exe, out = (os.path.join(h.TMP, "tiny" + x) for x in (".c", "", ".json"))
    with open(src, "w") as f:
        f.write(TINY)
    r = subprocess.run(["gcc", "-O2", "-I", os.path.join(ROOT, "usdt"), src, "-o", exe],
                       capture_output=True, text=True)
    check(r.returncode == 0, "gcc: %s" % r.stderr)
    r = cli(d, "run", "-o", out, "--", exe, timeout=120)
    check(r.returncode == 0, "run: %s" % r.stderr.strip())
    with open(out) as f:
        st = json.load(f)
    regs = st["regions"]
    pairs = sum(x["count"] for x in regs)
    pair = st["compensation"]["pair_ns"]
    wall, cpu = st["run"]["wall_ns"], st["run"]["cpu_ns"]
    off_outside = max(0, (wall - cpu) - sum(x["exclusive_offcpu_ns"] for x in regs))
    print("    %d pairs, pair cost %.0f ns: probes %.1f ms (%.2fx pairs x pair), outside %.1f "
          "ms, of it off the CPU %.1f ms; wall %.1f ms" % (
              pairs, pair, st["probes_ns"] / 1e6, st["probes_ns"] / max(1, pairs * pair),
              st["base_ns"] / 1e6, off_outside / 1e6, wall / 1e6))
    check(pairs == 200000, "every instance: %d" % pairs)
    check(0.4 < st["probes_ns"] / (pairs * pair) < 2.5, "probes_ns near pairs x pair cost")
    # before: outside held the probes' cost whole (1.046 s beside two "<100 ms ?")
    check(st["base_ns"] < off_outside + 0.25 * st["probes_ns"] + 20e6,
          "(outside regions) without featprof's own cost")
    check("(featprof's probes)" in r.stderr and "featprof-inprocess" in r.stderr,
          "the probes' line and the in-process build in the table: %s" % r.stderr[-600:])


def t_inline_self(d):
    """An inlined function shows where the time is spent (issue 46, part 5): the demo's
    seal region runs the code of encrypt, which gcc inlines into worker: sample --stacks
    gives encrypt the region's samples as its own (inline_self, about the region's whole
    time, as the report's exclusive time of seal says), where before it had 0 % self; the
    table shows it and says what an inlined function's self is"""
    p = h.demo()
    try:
        cli(d, "enable", p.pid, "--all")
        r = cli(d, "sample", p.pid, "--stacks", "--duration", "2", "--json", timeout=60)
        t = cli(d, "sample", p.pid, "--stacks", "--duration", "2", timeout=60).stdout
    finally:
        p.kill()
        p.wait()
    check(r.returncode == 0, "sample: %s" % r.stderr.strip())
    sm = json.loads(r.stdout)["sampling"]
    seal = next((x for x in sm["regions"] if x["name"] == "seal"), {})
    enc = next((f for f in seal.get("functions", []) if f["name"] == "encrypt"), {})
    own = enc.get("inline_self_share", 0) if enc.get("inlined") else enc.get("self_share", 0)
    print("    region seal: %d samples; encrypt %s, its own %.1f%%" % (
        seal.get("samples", 0), "inlined" if enc.get("inlined") else "not inlined", 100 * own))
    check(seal.get("samples", 0) > 20 and own >= 0.9, "encrypt holds seal's samples")
    row = [l for l in t.split("region seal:")[-1].splitlines() if " encrypt (" in l][:1]
    check(row and float(row[0].split("%")[1].split()[-1]) >= 90.0,
          "the table gives encrypt its self: %s" % row)
    check(not enc.get("inlined") or "inlined: a function the compiler inlined" in t,
          "the table says what an inlined function's self is")


def t_progress(d):
    """A long command shows its progress on a terminal (sample: "1 of 2 s", rewritten in
    place and cleared before the result) and nothing of it in a pipe (issue 46, part 1)"""
    p = h.demo()
    try:
        cmd = [h.B + "/featprof", "--socket", d.sock, "sample", str(p.pid), "--stacks",
               "--duration", "2"]
        master, slave = pty.openpty()
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=slave, timeout=60)
        os.close(slave)
        tty = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:     # EIO: the slave's last holder closed it
                break
            if not chunk:
                break
            tty += chunk
        os.close(master)
        piped = cli(d, "sample", p.pid, "--stacks", "--duration", "2", timeout=60)
    finally:
        p.kill()
        p.wait()
    tty = tty.decode(errors="replace")
    print("    on a terminal: %r" % tty[:120])
    check(r.returncode == 0 and "featprof sample: 1 of 2 s" in tty and "\r" in tty,
          "progress on the terminal")
    check(tty.endswith("\r\033[K"), "the line cleared before the result")
    check(piped.returncode == 0 and " of 2 s" not in piped.stderr,
          "nothing of it in a pipe: %r" % piped.stderr[:200])


TESTS = h.discover(globals())

if __name__ == "__main__":
    sys.exit(h.run_file("cli", TESTS))
