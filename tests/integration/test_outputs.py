#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Integration tests: the real featprofd (real BPF) on a temporary socket, real
instrumented targets, figures checked through the real CLI and the protocol:
export (folded, pprof, JSON), the Prometheus endpoint, the HTML report, recordings.
Needs root. usage: test_outputs.py BUILD_DIR [TEST...]"""
import json
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (B, TMP, Target, as_user, check, cli, demo, discover, run_file,  # noqa: E402
                     stats)


def t_export(d):
    """export: folded stacks add up to the regions' exclusive times; the JSON envelope;
    bad input and a target exiting mid-export change nothing."""
    t = Target("accuracy", 4, 2)
    check(cli(d, "enable", t.pid, "--all").returncode == 0, "enable")
    t.go()
    t.warm().go_on()
    t.result()
    st = stats(d, t.pid)
    r = cli(d, "export", t.pid, "--format", "folded")
    check(r.returncode == 0, "export folded: " + r.stderr)
    leaf = {}
    for line in r.stdout.splitlines():
        stack, value = line.rsplit(" ", 1)
        leaf[stack.split(";")[-1]] = leaf.get(stack.split(";")[-1], 0) + int(value)
    for reg in st["regions"]:
        if reg["count"]:
            check(abs(leaf.get(reg["name"], 0) - reg["exclusive_ns"]) <= 16,
                  "folded %s: %d vs exclusive %d" % (reg["name"], leaf.get(reg["name"], 0),
                                                     reg["exclusive_ns"]))
    check("outer;inner " in r.stdout and "rec;rec;rec " in r.stdout, "nested stacks folded")
    # pprof, read back by the real go tool pprof: the same totals as stats
    prof = os.path.join(TMP, "export.pb.gz")
    r = cli(d, "export", t.pid, "--format", "pprof", "-o", prof)
    check(r.returncode == 0, "export pprof: " + r.stderr)
    want = {"wall": sum(p["ns"] for p in st["paths"]),
            "count": sum(p["count"] for p in st["paths"])}
    for index, total in want.items():
        top = subprocess.run(["go", "tool", "pprof", "-top", "-unit=ns" if index == "wall"
                              else "-unit=count", "-sample_index=" + index, prof],
                             capture_output=True, text=True, timeout=120)
        m = [l for l in top.stdout.splitlines() if "% of " in l and " total" in l]
        got = int(m[0].split("% of ")[1].split()[0].rstrip("ns")) if m else -1
        print("    go tool pprof -top -sample_index=%s: total %d, featprof stats %d" % (
            index, got, total))
        check(got == total, "pprof %s total %d != %d: %s" % (index, got, total, top.stderr))
    tr = subprocess.run(["go", "tool", "pprof", "-traces", prof], capture_output=True,
                        text=True, timeout=120).stdout
    check("inner [A,B]\n" in tr and "outer [B]" in tr and "exe:" in tr and "pid:" in tr,
          "pprof traces show nested regions with their features and labels")
    out = os.path.join(TMP, "export.json")
    r = cli(d, "export", t.pid, "--format", "json", "-o", out)
    env = json.load(open(out)) if r.returncode == 0 else {}
    check(env.get("format") == "featprof-export" and env.get("version") == 1 and
          env["stats"]["paths"], "json envelope: %s" % r.stderr)
    check(not os.path.exists(out + ".tmp"), "no temporary file left")
    r = cli(d, "export", t.pid, "--format", "pdf")
    check(r.returncode == 2 and r.stderr.count("\n") == 1, "unknown format: %r" % r.stderr)
    r = cli(d, "export", t.pid, "--format", "folded", "-o", "/nonexistent/dir/f")
    check(r.returncode == 1 and "cannot write" in r.stderr, "unwritable: %r" % r.stderr)
    # a target that exits during --duration: one line, no file
    exit_midway(d, "export", "--format", "folded")
    exit_midway(d, "save")
    r = cli(d, "save", "1", "--duration", "1", "-o", "/proc/nope/x")
    check(r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1,
          "save of an unknown pid: one line %r" % r.stderr.strip())


def exit_midway(d, verb, *args):
    """featprof VERB PID --duration 30 -o FILE [args] on a target that exits meanwhile: exit
    1, one line saying so, neither FILE nor FILE.tmp left."""
    sp = Target("exit")
    check(cli(d, "enable", sp.pid, "--all").returncode == 0, "enable exit target")
    gone = os.path.join(TMP, "gone." + verb)
    p = subprocess.Popen([B + "/featprof", "--socket", d.sock, verb, str(sp.pid),
                          "--duration", "30", "-o", gone] + list(args),
                         stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    sp.go()
    sp.result()
    err = p.communicate(timeout=20)[1]
    check(p.returncode == 1 and "exited" in err and len(err.strip().splitlines()) == 1 and
          not os.path.exists(gone) and not os.path.exists(gone + ".tmp"),
          "exit mid-%s: rc %s %r" % (verb, p.returncode, err.strip()))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def http_get(url, timeout=5):
    import urllib.request
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def http_status(port, req):
    """The status code of the answer to the raw request req (0: none)."""
    import socket
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(req)
        line = c.recv(64).split(b"\r\n")[0].split()
    return int(line[1]) if len(line) > 1 else 0


def t_metrics(d):
    """featprof metrics as nobody, scraped by a real Prometheus: only nobody's targets;
    PromQL values equal featprof stats."""
    import urllib.parse
    mine = Target("accuracy", 3, 1, user="nobody")   # exits: its figures stay fixed
    live = Target("spin", user="nobody")
    other = demo()                                   # root's: must not show
    port, pport = free_port(), free_port()
    mp = prom = None
    try:
        for t in (mine, live):
            check(cli(d, "enable", t.pid, "--all", user="nobody").returncode == 0, "enable")
        mine.go()
        mine.warm().go_on()
        mine.result()
        live.go()
        check(cli(d, "enable", other.pid, "Cache").returncode == 0, "root enables its own")
        mp = subprocess.Popen(as_user("nobody", [B + "/featprof", "--socket", d.sock,
                                                 "metrics", "--listen", "127.0.0.1:%d" % port]),
                              stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        body = http_get("http://127.0.0.1:%d/metrics" % port)
        check('pid="%d"' % mine.pid in body and 'pid="%d"' % other.pid not in body,
              "nobody's endpoint shows its targets only")
        check("# TYPE featprof_region_duration_seconds histogram" in body and
              'le="+Inf"' in body, "histograms from the kernel's buckets")
        r = subprocess.run([B + "/featprof", "--socket", d.sock, "metrics", "--listen",
                            "127.0.0.1:%d" % port], capture_output=True, text=True, timeout=10)
        check(r.returncode == 1 and "cannot listen" in r.stderr, "port in use: %r" % r.stderr)
        # HTTP by libmicrohttpd: what is not a GET of /metrics, and oversized headers
        got = {what: http_status(port, req) for what, req in (
            ("other path", b"GET /x HTTP/1.1\r\nHost: a\r\n\r\n"),
            ("POST", b"POST /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\nx"),
            ("HEAD", b"HEAD /metrics HTTP/1.1\r\nHost: a\r\n\r\n"),
            ("40 KB header", b"GET /metrics HTTP/1.1\r\nHost: a\r\nX: " + b"a" * 40000 +
             b"\r\n\r\n"),
            ("not HTTP", b"garbage\r\n\r\n"))}
        print("    %s" % got)
        check(got["other path"] == 404 and got["POST"] == 405 and got["HEAD"] == 200 and
              got["40 KB header"] in (413, 431) and got["not HTTP"] in (0, 400),
              "404, 405, HEAD, oversized headers refused, garbage closed or 400")
        check('pid="%d"' % mine.pid in http_get("http://127.0.0.1:%d/metrics" % port),
              "still serving after them")
        cfg = os.path.join(TMP, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: 1s\nscrape_configs:\n"
                    "  - job_name: featprof\n    static_configs:\n"
                    "      - targets: ['127.0.0.1:%d']\n" % port)
        prom = subprocess.Popen(["prometheus", "--config.file=" + cfg,
                                 "--storage.tsdb.path=" + os.path.join(TMP, "tsdb"),
                                 "--web.listen-address=127.0.0.1:%d" % pport],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        api = "http://127.0.0.1:%d/api/v1/query?query=" % pport
        for _ in range(100):
            try:
                http_get("http://127.0.0.1:%d/-/ready" % pport, 1)
                break
            except OSError:
                time.sleep(0.2)
        time.sleep(6)  # a few scrapes
        tg = json.loads(http_get("http://127.0.0.1:%d/api/v1/targets" % pport))
        for t in tg["data"]["activeTargets"]:
            print("    Prometheus target %s: health %s, last scrape %.1f ms %s"
                  % (t["scrapeUrl"], t["health"], 1e3 * t["lastScrapeDuration"],
                     t["lastError"]))
        st = stats(d, mine.pid)
        res = json.loads(http_get(api + urllib.parse.quote(
            'featprof_feature_seconds_total{pid="%d"}' % mine.pid)))["data"]["result"]
        got = {x["metric"]["feature"]: float(x["value"][1]) for x in res}
        for f in st["features"]:
            print("    PromQL featprof_feature_seconds_total{feature=%r}: %.9f s, stats %.9f s"
                  % (f["name"], got.get(f["name"], -1), f["ns"] / 1e9))
            check(abs(got.get(f["name"], -1) - f["ns"] / 1e9) <= 1e-6,
                  "feature %s in Prometheus equals stats" % f["name"])
        # the same 6 s window through both: stats' difference, Prometheus' rate() ending
        # when the second stats was taken
        a = stats(d, live.pid)
        time.sleep(6)
        b = stats(d, live.pid)
        t1 = time.time()
        time.sleep(1.5)  # the scrape after t1 is stored
        q = 'rate(featprof_feature_seconds_total{pid="%d",feature="S"}[6s])' % live.pid
        res = json.loads(http_get(api + urllib.parse.quote(q) + "&time=%.3f" % t1))
        res = res["data"]["result"]
        fs = lambda s: next(f["ns"] for f in s["features"] if f["name"] == "S")
        want = (fs(b) - fs(a)) / 1e9 / ((b["elapsed_ns"] - a["elapsed_ns"]) / 1e9)
        got = float(res[0]["value"][1]) if res else -1
        print("    PromQL %s = %.5f s/s; stats over the same 6 s: %.5f s/s" % (q, got, want))
        check(res and want > 0 and abs(got - want) <= 0.25 * want,
              "rate of a live feature agrees with stats")
    finally:
        for p in (mp, prom):
            if p and p.poll() is None:
                p.terminate()
                p.wait(10)
        live.kill()
        other.kill()
        other.wait()


def t_report(d):
    """featprof report: one self-contained HTML page, rendered by headless Chromium; its DOM
    has every section and one element per feature, region path and histogram."""
    import re
    p = demo()
    html = os.path.join(TMP, "report.html")
    shot = os.path.join(TMP, "report.png")
    try:
        check(cli(d, "enable", p.pid, "--all").returncode == 0, "enable demo")
        time.sleep(1.5)
        r = cli(d, "report", p.pid, "-o", html)
        check(r.returncode == 0, "report PID: %r" % r.stderr)
        st = stats(d, p.pid)
    finally:
        p.kill()
        p.wait()
    text = open(html).read()
    check(not re.search(r"<script|<link|https?://|src=|@import|url\(", text),
          "self-contained: no script, link, URL or external source")
    chrome = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    dom = subprocess.run(chrome + ["--dump-dom", "file://" + html], capture_output=True,
                         text=True, timeout=120).stdout
    ids = re.findall(r'<section id="(\w+)"', dom)
    print("    Chromium DOM: sections %s, %d feature bars, %d flame frames, %d histograms, "
          "%d region rows" % (ids, dom.count('class="feature"'), dom.count('class="frame"'),
                              dom.count('class="hist"'), dom.count('class="region"')))
    check(ids == ["features", "flamegraph", "histograms", "regions", "sets", "anomalies",
                  "calibration"], "every section rendered")
    check(dom.count('class="feature"') == len(st["features"]), "one bar per feature")
    check(dom.count('class="region"') == len(st["regions"]), "one row per region")
    # frames: the root and every path prefix at least half a pixel wide of 960
    tot = {}
    for x in st["paths"]:
        for i in range(1, len(x["path"]) + 1):
            tot[tuple(x["path"][:i])] = tot.get(tuple(x["path"][:i]), 0) + x["ns"]
    alln = sum(x["ns"] for x in st["paths"] if x["path"])
    # (the page and st are two reads of a running target: a prefix within 20% of the
    # half-pixel threshold may fall on either side in the page)
    sure = [k for k, v in tot.items() if v * 960 / alln >= 0.6]
    maybe = [k for k, v in tot.items() if v * 960 / alln >= 0.4]
    frames = dom.count('class="frame"')
    check(len(sure) + 1 <= frames <= len(maybe) + 1,
          "flame graph frames: %d for %d to %d path prefixes" % (frames, len(sure), len(maybe)))
    check(dom.count('class="hist"') == sum(1 for x in st["regions"] if x["count"]),
          "one histogram per region with instances")
    r = subprocess.run(chrome + ["--window-size=1100,1400", "--screenshot=" + shot,
                                 "file://" + html], capture_output=True, text=True, timeout=120)
    check(os.path.exists(shot) and os.path.getsize(shot) > 10000,
          "screenshot %s" % (os.path.getsize(shot) if os.path.exists(shot) else r.stderr[-200:]))
    # bad input: one line, exit 2, nothing written
    bad = os.path.join(TMP, "bad.json")
    for content in ("{", '{"format":"featprof-save","version":7}', '{"a":1}'):
        with open(bad, "w") as f:
            f.write(content)
        out = os.path.join(TMP, "bad.html")
        r = cli(d, "report", bad, "-o", out)
        check(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and
              not os.path.exists(out) and not os.path.exists(out + ".tmp"),
              "report of %r: %r" % (content, r.stderr.strip()))


def t_record(d):
    """featprof record: a Chrome trace of every instance; per region, counts equal stats over
    the window and summed durations equal stats' compensated inclusive times; children
    stay inside their parents; a target exiting mid-record voids it."""
    os.environ["TRUTH_HOLD"] = "1"
    try:
        t = Target("accuracy", 4, 2)
    finally:
        del os.environ["TRUTH_HOLD"]
    out = os.path.join(TMP, "trace.json")
    try:
        check(cli(d, "enable", t.pid, "--all").returncode == 0, "enable")
        t.go()
        t.warm()
        check(cli(d, "reset", t.pid).returncode == 0, "reset after warm-up")
        p = subprocess.Popen([B + "/featprof", "--socket", d.sock, "record", str(t.pid),
                              "--duration", "4", "-o", out], stderr=subprocess.PIPE, text=True)
        time.sleep(1)
        t.go_on()
        t.p.stdout.readline()  # the truth: the measured iterations are done
        err = p.communicate(timeout=30)[1]
        check(p.returncode == 0, "record: rc %s %r" % (p.returncode, err))
        st = stats(d, t.pid)
    finally:
        t.kill()
    tr = json.load(open(out))
    xs = [e for e in tr["traceEvents"] if e["ph"] == "X"]
    other = tr["otherData"]
    threads = {e["tid"] for e in tr["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
    print("    trace: %d complete events on %d threads, %d dropped, ring %d bytes"
          % (len(xs), len(threads), other["dropped"], other["ring_bytes"]))
    check(other["dropped"] == 0 and other["events"] == len(xs), "no drops; events counted")
    for r in st["regions"]:
        mine = [e for e in xs if e["name"] == r["name"]]
        dur = sum(e["args"]["compensated_ns"] for e in mine)
        ok = len(mine) == r["count"] and abs(dur - r["inclusive_ns"]) <= 1 + 1e-6 * dur
        if r["count"] or mine:
            print("    %-12s trace %5d instances %14.0f ns; stats %5d %14.0f ns"
                  % (r["name"], len(mine), dur, r["count"], r["inclusive_ns"]))
        check(ok, "region %s: trace equals stats" % r["name"])
    # nesting: each event with depth > 0 lies within an enclosing event on its thread
    bad = 0
    by_tid = {}
    for e in xs:
        by_tid.setdefault(e["tid"], []).append(e)
    for evs in by_tid.values():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in evs:
            while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"] + 1e-3:
                stack.pop()
            if e["args"]["depth"] > 0 and stack and e["ts"] + e["dur"] > \
                    stack[-1]["ts"] + stack[-1]["dur"] + 0.005:
                bad += 1
                if bad <= 3:
                    print("    outside: %s %.3f+%.3f %s in %s %.3f+%.3f %s" % (
                        e["name"], e["ts"], e["dur"], e["args"], stack[-1]["name"],
                        stack[-1]["ts"], stack[-1]["dur"], stack[-1]["args"]))
            stack.append(e)
    cut = sum(1 for e in xs if abs(e["dur"] * 1000 - e["args"]["compensated_ns"]) > 2)
    print("    %d of %d shown durations cut at their parent's end (probes cheaper than "
          "calibrated there)" % (cut, len(xs)))
    check(bad == 0, "children inside their parents (%d outside)" % bad)
    check(all(e["cat"] and e["args"]["features"] for e in xs), "features on every event")
    exit_midway(d, "record")


TESTS = discover(globals())


def main():
    # FP_TEST_SITE=nop1|nop5 runs the suite at one attach point (default: the daemon's
    # choice by measurement)
    site = os.environ.get("FP_TEST_SITE")
    return run_file("outputs", TESTS, (), ["--site", site] if site else [])


if __name__ == "__main__":
    sys.exit(main())
