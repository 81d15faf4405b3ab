#!/bin/bash
# featprof list: human and JSON output on a binary and a running process, and the
# one-line errors (no such pid, not ELF, no featprof notes, no permission).
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}; FP="$B/featprof"
fail=0
ok() { echo "  ok: $1"; }
bad() { echo "  FAILED: $1"; fail=1; }

out=$("$FP" list --json "$B/tests/targets/site_c") || bad "list --json exit $?"
python3 - "$out" <<'PY' && ok "json shape" || bad "json shape"
import json, sys
d = json.loads(sys.argv[1])
regs = {r["name"]: r for r in d["regions"]}
assert set(regs) == {"checksum", "compress", "compress_enc", "hot_inline"}, regs.keys()
assert regs["compress_enc"]["features"] == ["Compression", "Encryption"]
for r in d["regions"]:
    for s in r["sites"]:
        assert s["kind"] in ("begin", "end") and s["file"].endswith("site.c") and s["line"] > 0
        assert s["object"].endswith("site_c") and s["offset"] > 0
        assert s["optimizable_offset"] == s["offset"] + 6
assert sorted(f["name"] for f in d["features"]) == ["Cache", "Checksum", "Compression", "Encryption"]
assert d["objects"][0]["featprof_sites"] == 11
# the FP_SCOPE's sites say so (its end's note line is FP_SCOPE_DEFINE's)
assert all(s.get("scope") for s in regs["checksum"]["sites"]), regs["checksum"]["sites"]
assert not any(s.get("scope") for s in regs["compress"]["sites"])
PY
# the FP_SCOPE's end at its scope's exits, not at FP_SCOPE_DEFINE's line (site.c:8)
scope_line=$(grep -n 'FP_SCOPE(checksum' tests/targets/site.c | cut -d: -f1)
out=$("$FP" list "$B/tests/targets/site_c")
grep -qE "^    end +exits of site.c:$scope_line " <<< "$out" && ok "FP_SCOPE's end: exits of line $scope_line" ||
	bad "FP_SCOPE's end: $(grep -A2 '^  checksum' <<< "$out")"

"$B/tests/targets/site_shlib" 4000000000 > /dev/null & pid=$!
sleep 0.3
out=$("$FP" list "$pid") || bad "list PID exit $?"
grep -q 'export_fmt  \[Export\]' <<< "$out" && grep -q 'libsite.so' <<< "$out" && ok "list PID" || bad "list PID: $out"
if [ "$(id -u)" = 0 ] && id nobody > /dev/null 2>&1; then
	err=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$FP" list "$pid" 2>&1); rc=$?
	[ $rc -ne 0 ] && grep -q 'permission denied' <<< "$err" && [ "$(wc -l <<< "$err")" = 1 ] &&
		ok "nobody denied on root's process" || bad "nobody: rc=$rc $err"
fi
kill "$pid"; wait "$pid" 2> /dev/null

expect_err() { # description expected-text args...
	local what=$1 want=$2; shift 2
	local err rc
	err=$("$FP" "$@" 2>&1 > /dev/null); rc=$?
	if [ $rc -ne 0 ] && grep -q -- "$want" <<< "$err" && [ "$(wc -l <<< "$err")" = 1 ]; then
		ok "$what: $err"
	else
		bad "$what: rc=$rc '$err'"
	fi
}
expect_err "no such pid" "no such process" list 999999999
expect_err "not ELF" "not an ELF file" list /etc/passwd
expect_err "missing file" "cannot open" list /nonexistent
expect_err "no featprof notes" "no featprof probes and no defined regions (other stapsdt providers: libstdcxx)" \
	list "$(readlink -f "$(g++ -print-file-name=libstdc++.so.6)")"
# Debian's CPython has python:* probes, and usdt/regions.d defines regions of them
if "$FP" list /usr/bin/python3.11 | grep -q "python.gc  \[PythonGC\]"; then
	ok "python3.11: regions from the installed definitions"
else
	bad "python3.11: no python.gc region"
fi
expect_err "unknown command" "unknown command" frobnicate
expect_err "missing argument" "missing PID" list
echo "cli_list: done"
exit $fail
