#!/bin/bash
# What an idle site costs a program built for in-process timing, for ever (issue 47 part 2:
# <= 3 instructions a site over the plain featprof build): valgrind's callgrind counts the
# instructions of bench/busyloop_fp_inproc (gates down: nothing enabled) and busyloop_fp
# (the plain build) for 1000 and 2000 iterations of two sites each; per site: the
# difference of the two builds' increments / 2000 (start-up cancels out). The gated
# sampling build's idle site is said beside it.
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
command -v valgrind > /dev/null || scripts/install-deps.sh valgrind > /dev/null
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# the instructions of N iterations of variant v
ir() {
	valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$B/bench/busyloop_$1" "$2" 10 \
		> /dev/null 2>&1 || { echo "idle_site: callgrind of busyloop_$1 failed" >&2; exit 1; }
	awk '/^(summary|totals):/ { n = $2 } END { print n }' "$tmp/cg"
}
declare -A per
for v in fp fp_inproc fp_gated; do
	a=$(ir $v 1000); b=$(ir $v 2000)
	per[$v]=$((b - a))	# instructions of 1000 iterations
done
site=$(awk -v a="${per[fp_inproc]}" -v b="${per[fp]}" 'BEGIN { printf "%.2f", (a - b) / 2000 }')
gated=$(awk -v a="${per[fp_gated]}" -v b="${per[fp]}" 'BEGIN { printf "%.2f", (a - b) / 2000 }')
if awk -v s="$site" 'BEGIN { exit !(s <= 3) }'; then
	echo "idle_site: an idle in-process site $site instructions over the plain build's" \
	     "(bound 3; the gated sampling build's $gated)"
else
	echo "idle_site: FAILED: an idle in-process site $site instructions over the plain" \
	     "build's, over the bound of 3 (the gated sampling build's $gated)"
	exit 1
fi
