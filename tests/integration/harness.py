#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The integration tests' harness: the build, a featprofd of the tests' own on a
temporary socket (Daemon), the protocol (Client) and the CLI (cli), programs run as
another user, the checks and the runner. A test file's tests are its functions named t_*
(discover); run_file runs them against one daemon. usage of a test file: test_X.py
BUILD_DIR [TEST...]"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

B = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
ONLY = sys.argv[2:]
TMP = tempfile.mkdtemp(prefix="featprof-it-")
os.chmod(TMP, 0o755)
FAILS = []
CHECKS = [0]


def check(cond, what):
    CHECKS[0] += 1
    if not cond:
        FAILS.append(what)
        print("    FAILED:", what, flush=True)
    return cond


def discover(g):
    """A test file's tests: its functions named t_*, in the order they are defined (a
    test is found by its name; no list to keep)."""
    return sorted((f for n, f in g.items() if n.startswith("t_") and callable(f) and
                   getattr(f, "__module__", None) == g["__name__"]),
                  key=lambda f: f.__code__.co_firstlineno)


class Daemon:
    def __init__(self, name, *args):
        self.sock = os.path.join(TMP, name + ".sock")
        self.log = open(os.path.join(TMP, name + ".log"), "w+")
        self.p = subprocess.Popen([B + "/featprofd", "--socket", self.sock, "--group", "nogroup"]
                                  + list(args), stderr=self.log)
        for _ in range(200):
            if os.path.exists(self.sock):
                break
            if self.p.poll() is not None:
                raise RuntimeError("featprofd exited: " + self.logtext())
            time.sleep(0.05)
        else:
            raise RuntimeError("featprofd did not listen: " + self.logtext())

    def logtext(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                self.p.kill()
        return self.p.returncode


class Client:
    def __init__(self, d, user=None):
        self.s = socket.socket(socket.AF_UNIX)
        if user:  # connect as another user: a child process holds the credentials
            raise NotImplementedError
        self.s.connect(d.sock)
        self.f = self.s.makefile("rwb")
        self.id = 0
        self.pushes = []

    def send_raw(self, data):
        self.f.write(data)
        self.f.flush()

    def read(self, timeout=10):
        self.s.settimeout(timeout)
        line = self.f.readline()
        return json.loads(line) if line else None

    def call(self, verb, **args):
        self.id += 1
        req = dict(args, id=self.id, verb=verb)
        self.send_raw((json.dumps(req) + "\n").encode())
        while True:
            r = self.read()
            if r is None or r.get("id") == self.id or ("id" in r and r["id"] is None):
                return r
            self.pushes.append(r)

    def close(self):
        self.s.close()


# Programs run as another user: copies in a folder anyone may read. A checkout in a
# private directory (0700, as Debian's adduser makes every home, and /root) is out of
# that user's reach; so is a Python under /root (pyenv): Debian's, which make check
# installs.
USER_BIN = tempfile.mkdtemp(prefix="featprof-bin-")
os.chmod(USER_BIN, 0o755)
USER_PY = "/usr/bin/python3"
_user_copies = {}


def reachable(path):
    """Whether any user may run the program at path (every folder above it searchable)."""
    path = os.path.realpath(path)
    if os.stat(path).st_mode & 0o005 != 0o005:
        return False
    while path != "/":
        path = os.path.dirname(path)
        if not os.stat(path).st_mode & 0o001:
            return False
    return True


def for_user(path):
    """path, or a copy of the program that any user can run (made once)."""
    if path not in _user_copies and reachable(path):
        _user_copies[path] = path
    if path not in _user_copies:
        dst = os.path.join(USER_BIN, "%d-%s" % (len(_user_copies), os.path.basename(path)))
        shutil.copy2(path, dst)
        os.chmod(dst, 0o755)
        _user_copies[path] = dst
    return _user_copies[path]


def as_user(user, cmd):
    """cmd run as user (its program a copy that user can run)."""
    return (["setpriv", "--reuid", user, "--regid", "nogroup", "--clear-groups",
             for_user(cmd[0])] + cmd[1:])


def cli(d, *args, user=None, timeout=30):
    cmd = [B + "/featprof", "--socket", d.sock] + [str(a) for a in args]
    if user:
        cmd = as_user(user, cmd)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


# the demos and truth targets started, so that run_file ends those a failed test left
# running (a test that raised before its finally once left two busy demos on both CPUs)
STARTED = []


class Target:
    def __init__(self, mode, *args, user=None):
        cmd = [B + "/tests/targets/truth", mode] + [str(a) for a in args]
        if user:
            cmd = as_user(user, cmd)
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        STARTED.append(self.p)
        line = self.p.stdout.readline()
        assert line.startswith("ready "), line
        self.pid = int(line.split()[1])

    def go(self):
        self.p.stdin.write("go\n")
        self.p.stdin.flush()

    def warm(self):
        """accuracy/offcpu modes: after go(), wait until every thread ran its warm-up
        iteration (first hits of optimized sites rewrite them), then let them go on."""
        line = self.p.stdout.readline()
        assert line.strip() == "warm", line
        return self

    def go_on(self):
        self.go()

    def result(self, timeout=120):
        out = self.p.stdout.read()
        self.p.wait(timeout)
        return out

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


def stats(d, pid):
    r = cli(d, "stats", pid, "--json")
    if not check(r.returncode == 0, "stats %d: %s" % (pid, r.stderr.strip())):
        return None
    return json.loads(r.stdout)


def region(st, name):
    return next(r for r in st["regions"] if r["name"] == name)


def uprobe_links(pid):
    """BPF links of a uprobe kind among the fds of a process (the daemon)."""
    n = 0
    for fd in os.listdir("/proc/%d/fdinfo" % pid):
        try:
            info = open("/proc/%d/fdinfo/%s" % (pid, fd)).read()
        except OSError:
            continue
        if "link_type:" in info and ("uprobe" in info or "perf" in info):
            n += 1
    return n


def demo():
    """The demo target, two threads, quiet."""
    p = subprocess.Popen([B + "/featprof-demo", "-t", "2", "-q"])
    STARTED.append(p)
    return p


def rss_kb(pid):
    """A process's resident memory, KiB."""
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def busyloop(threads=2):
    """A small region in a tight loop on `threads` threads (started by go())."""
    p = subprocess.Popen([B + "/bench/busyloop_fp", "4000000000", "20", "--wait",
                          "--threads", str(threads)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    assert line.startswith("ready "), line
    return p


def wait_member(d, exe, pid, timeout=10):
    """Seconds until pid is a live member of exe's group (it is measured from then)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        r = cli(d, "status", "--json")
        if r.returncode == 0:
            for g in json.loads(r.stdout).get("executables", []):
                if g["exe"] == exe and pid in g["processes"]:
                    return time.monotonic() - t0
        time.sleep(0.01)
    return None


SHIELD = bytes.fromhex("90488d6424800f1f440000488da42480000000")


def site_addrs(pid):
    """The address of every featprof site of a process (its note location), in the
    order of `featprof list`."""
    cat = json.loads(subprocess.run([B + "/featprof", "list", str(pid), "--json"],
                                    capture_output=True, text=True, check=True).stdout)
    maps = []
    for line in open("/proc/%d/maps" % pid):
        f = line.split()
        if len(f) >= 6:
            lo, hi = (int(x, 16) for x in f[0].split("-"))
            maps.append((f[5], lo, hi, int(f[2], 16)))
    out = []
    for r in cat["regions"]:
        for st in r["sites"]:
            for path, lo, hi, off in maps:
                if path == st["object"] and off <= st["offset"] < off + (hi - lo):
                    out.append(lo + st["offset"] - off)
                    break
    return out


def site_bytes(pid):
    """The 19 code bytes at every featprof site of a process, read from its memory."""
    with open("/proc/%d/mem" % pid, "rb") as mem:
        return [os.pread(mem.fileno(), len(SHIELD), a) for a in site_addrs(pid)]


def run_one(d, t):
    """One test; an exception is a failure, not a skip."""
    try:
        t(d)
    except Exception as e:
        import traceback
        traceback.print_exc()
        FAILS.append("%s raised %r" % (t.__name__, e))


# The one retry policy of the tests (tests/run.sh takes it from here too): a check that
# compares a measurement with a truth is measured again, at most RETRIES times, each time
# after a fresh calibration, because on a shared 2-CPU machine the probe cost drifts
# between a calibration and the test (docs/BENCHMARKS.md: 2.8 to 4.6 us between starts; a
# clean clone here once failed t_accuracy twice in a row and passed minutes later). The
# earlier attempts' failures stay printed; a failure of the last attempt fails. Nothing
# else is retried: a check of counts, states or errors fails at once.
RETRIES = 2


def retried(attempt, again):
    """attempt() until it passes (True), RETRIES more times at most, again(k) before the
    k-th repeat (1..RETRIES); whether it passed."""
    ok = attempt()
    for k in range(1, RETRIES + 1):
        if ok:
            break
        again(k)
        ok = attempt()
    return ok


def run_tests(d, tests, timed=()):
    """Runs tests (all, or those named after the build dir) against daemon d: (passed,
    failed). A test in timed is retried by the policy above, the daemon calibrating again
    after a pause before each repeat."""
    passed = failed = 0
    for t in tests:
        if ONLY and t.__name__ not in ONLY:
            continue
        before = len(FAILS)
        if not (t.__doc__ or "").strip():  # what it checks is said, or it fails
            check(False, "%s has no docstring (what it checks)" % t.__name__)
            failed += 1
            continue
        print("  %s: %s" % (t.__name__, t.__doc__.strip().splitlines()[0]), flush=True)

        def attempt():
            run_one(d, t)
            return len(FAILS) == before

        def again(k):
            print("    %d timing check(s) failed: recalibrating and measuring once more"
                  % (len(FAILS) - before), flush=True)
            del FAILS[before:]
            time.sleep(5)
            r = cli(d, "calibrate")
            print("    " + (r.stdout.strip().splitlines() or
                            ["calibrate: " + r.stderr.strip()])[0], flush=True)

        if retried(attempt, again) if t in timed else attempt():
            passed += 1
        else:
            failed += 1
    return passed, failed


def replicate_spread(files):
    """The machine's own run-to-run spread, from featprof run files of configurations
    each run twice or more: the median over configurations of how far their first two
    runs' wall times are apart, relative to the smaller; printed. Tests of programs that
    run for real allow it beyond their own tolerance."""
    walls = {}
    for f in files:
        with open(f) as fh:
            run = json.load(fh)["run"]
        walls.setdefault(json.dumps(run["config"], sort_keys=True), []).append(run["wall_ns"])
    spread = sorted(abs(v[0] - v[1]) / min(v[:2]) for v in walls.values() if len(v) >= 2)
    noise = spread[len(spread) // 2] if spread else 0
    print("    replicates' wall spread (median of %d pairs): %.2f%%" % (len(spread),
                                                                       100 * noise))
    return noise


def run_state_file(name, tests):
    """run_file for the files whose tests kill and restart featprofds (test_robust.py,
    test_limits.py, test_left_behind.py): no core files, and the daemon's attach journal in
    a state folder of the run's own."""
    import resource
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return run_file(name, tests, (), ["--state-dir", os.path.join(TMP, "state-main")])


def run_file(name, tests, timed=(), daemon_args=(), stop_check=False):
    """A test file's main: its tests against one featprofd started with daemon_args
    (stop_check: it must stop cleanly on SIGTERM); the exit status."""
    if os.geteuid() != 0:
        print("SKIP: integration tests need root (BPF)")
        return 77
    d = Daemon(name, *daemon_args)
    passed = failed = 0
    try:
        passed, failed = run_tests(d, tests, timed)
        if stop_check:
            rc = d.stop()
            check(rc == 0, "featprofd stopped cleanly on SIGTERM (exit %s)" % rc)
    finally:
        d.stop()
        for p in STARTED:
            if p.poll() is None:
                p.kill()
                p.wait()
        if FAILS:
            print("---- featprofd log ----\n" + d.logtext()[-3000:])
    print("%s: %d passed, %d failed (%d checks)" % (name, passed, failed, CHECKS[0]))
    return 1 if failed or FAILS else 0


if __name__ == "__main__":
    # harness.py --retry CMD...: CMD (which starts a featprofd of its own, so each run is
    # freshly calibrated) under the retry policy; its exit status
    if len(sys.argv) < 3 or sys.argv[1] != "--retry":
        sys.exit("usage: harness.py --retry CMD...")
    shutil.rmtree(TMP, ignore_errors=True)
    sys.exit(0 if retried(lambda: subprocess.run(sys.argv[2:]).returncode == 0,
                          lambda k: print("%s: failed; measured once more (%d of %d)" % (
                              os.path.basename(sys.argv[2]) if len(sys.argv) < 4 else
                              os.path.basename(sys.argv[3]), k, RETRIES), flush=True))
             else 1)
