#!/bin/bash
# The unit files pass systemd-analyze verify; print the offline security exposure.
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for u in featprofd.service featprofd.socket; do
	sed "s|@SBINDIR@|$(pwd)/$B|" systemd/$u > "$tmp/$u"
done
out=$(systemd-analyze verify "$tmp/featprofd.socket" "$tmp/featprofd.service" 2>&1)
rc=$?
bad=$(grep -v -e '^$' <<< "$out")
if [ $rc -ne 0 ] || [ -n "$bad" ]; then echo "systemd-analyze verify:"; echo "$out"; exit 1; fi
score=$(systemd-analyze security --offline=yes "$tmp/featprofd.service" 2>/dev/null | tail -1)
echo "systemd_units: verify ok; $score"
