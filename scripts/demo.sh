#!/bin/bash
# make demo: start the demo target and show what featprof sees in it.
set -eu
B=${1:-build}
"$B/featprof-demo" -t 4 -s 0 -q &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
sleep 0.3
echo "== featprof-demo running as pid $pid; featprof list $pid:"
"$B/featprof" list "$pid"
