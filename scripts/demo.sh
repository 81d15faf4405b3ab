#!/bin/bash
# make demo: the main job on the built-in demo target. Starts featprofd on a private
# socket, starts featprof-demo (a thread per CPU: compression, checksums, encryption, a
# cache that saves them for ~70% of the blocks), enables its features one at a time and shows the live table after each, then
# writes folded stacks, a timeline and an HTML report to $DEMO_OUT (/tmp/featprof-demo).
set -eu
B=${1:-build}
if [ "$(id -u)" != 0 ]; then echo "demo: featprofd needs root (sudo make demo)" >&2; exit 1; fi
run=$(mktemp -d)
export FEATPROF_SOCKET=$run/featprofd.sock
cleanup() {
	[ -n "${demo:-}" ] && kill "$demo" 2>/dev/null
	[ -n "${daemon:-}" ] && kill "$daemon" 2>/dev/null
	wait 2>/dev/null || true
	rm -rf "$run"
}
trap cleanup EXIT
"$B/featprofd" --socket "$FEATPROF_SOCKET" 2> "$run/featprofd.log" & daemon=$!
for _ in $(seq 100); do [ -S "$FEATPROF_SOCKET" ] && break; sleep 0.1; done
[ -S "$FEATPROF_SOCKET" ] || { cat "$run/featprofd.log"; exit 1; }
"$B/featprof-demo" -q & demo=$!
sleep 0.3
if [ -t 1 ]; then bold=$'\033[1m' off=$'\033[0m'; else bold='' off=''; fi
step() { printf '\n%s$ %s%s\n' "$bold" "$*" "$off"; "$@"; }
step "$B/featprof" list "$demo"
for f in Compression Checksum Encryption Cache; do
	step "$B/featprof" enable "$demo" "$f"
	step "$B/featprof" top "$demo" --interval 1500 --count 1
done
step "$B/featprof" status
# the ways out: folded stacks (flame graphs), a timeline, one HTML page
out=${DEMO_OUT:-/tmp/featprof-demo}
mkdir -p "$out"
step "$B/featprof" export "$demo" --format folded -o "$out/demo.folded"
sort -k2 -n -r "$out/demo.folded" | head -5
step "$B/featprof" record "$demo" --duration 1 -o "$out/trace.json"
step "$B/featprof" report "$demo" -o "$out/report.html"
echo "(open $out/trace.json in ui.perfetto.dev, $out/report.html in a browser)"
step "$B/featprof" disable "$demo" --all
echo
echo "featprofd log:"; sed 's/^/  /' "$run/featprofd.log"
