#!/bin/bash
# The unit files pass systemd-analyze verify (their man pages are not installed here:
# --man=no; deb_check.sh checks the package installs them); print the security exposure.
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for u in featprofd.service featprofd.socket; do
	sed -e "s|@SBINDIR@|$(pwd)/$B|" -e "s|@SOCKET_GROUP@|root|" systemd/$u > "$tmp/$u"
done
out=$(systemd-analyze verify --man=no "$tmp/featprofd.socket" "$tmp/featprofd.service" 2>&1)
rc=$?
bad=$(grep -v -e '^$' <<< "$out")
if [ $rc -ne 0 ] || [ -n "$bad" ]; then echo "systemd-analyze verify:"; echo "$out"; exit 1; fi
score=$(systemd-analyze security --offline=yes "$tmp/featprofd.service" 2>/dev/null | tail -1)
echo "systemd_units: verify ok; $score"
