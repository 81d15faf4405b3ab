#!/bin/bash
# Daemon figures for docs/TRACING.md: attach + enable time for targets of 10 to
# 10,000 sites, enable/disable latency of one feature, daemon RSS idle and with a
# 1,000-region (2,000-site) target. Needs root. usage: daemon_scale.sh BUILD_DIR
set -eu
B=${1:-build}
tmp=$(mktemp -d)
sock=$tmp/fp.sock
"$B/featprofd" --socket "$sock" -q & d=$!
cleanup() { kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
rss() { awk '/VmRSS/ {print $2}' /proc/$d/status; }
ms() { python3 -c 'import sys,time; t=time.time(); import subprocess; subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); print("%.1f" % ((time.time()-t)*1000))' "$@"; }
echo "daemon RSS idle: $(rss) KiB"
echo "| regions | sites | attach+enable --all (ms) | disable --all (ms) | daemon RSS after enable (KiB) |"
echo "|---|---|---|---|---|"
for n in 5 50 500 1000 5000; do
	python3 tests/bench/gen_regions.py $n > "$tmp/many$n.c"
	cc -O1 -Iusdt "$tmp/many$n.c" -o "$tmp/many$n"
	"$tmp/many$n" > "$tmp/out$n" & t=$!
	sleep 0.3
	a=$(ms "$B/featprof" --socket "$sock" enable $t --all)
	r=$(rss)
	dd=$(ms "$B/featprof" --socket "$sock" disable $t --all)
	echo "| $n | $((2 * n)) | $a | $dd | $r |"
	"$B/featprof" --socket "$sock" detach $t
	kill $t
done
"$B/featprof-demo" -t 2 -q & t=$!
sleep 0.3
"$B/featprof" --socket "$sock" enable $t Cache > /dev/null
for i in 1 2 3; do
	e=$(ms "$B/featprof" --socket "$sock" enable $t Compression)
	x=$(ms "$B/featprof" --socket "$sock" disable $t Compression)
	echo "demo, feature Compression (3 regions, 6 sites): enable $e ms, disable $x ms"
done
