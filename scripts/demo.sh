#!/bin/bash
# make demo: the main job on the built-in demo target. Starts featprofd on a private
# socket, starts featprof-demo (4 threads: compression, checksums, encryption, a
# cache), enables its features one at a time and shows the live table after each.
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
"$B/featprof-demo" -t 4 -q & demo=$!
sleep 0.3
if [ -t 1 ]; then bold=$'\033[1m' off=$'\033[0m'; else bold='' off=''; fi
step() { printf '\n%s$ %s%s\n' "$bold" "$*" "$off"; "$@"; }
step "$B/featprof" list "$demo"
for f in Compression Checksum Encryption Cache; do
	step "$B/featprof" enable "$demo" "$f"
	step "$B/featprof" top "$demo" --interval 1500 --count 1
done
step "$B/featprof" status
step "$B/featprof" disable "$demo" --all
echo
echo "featprofd log:"; sed 's/^/  /' "$run/featprofd.log"
