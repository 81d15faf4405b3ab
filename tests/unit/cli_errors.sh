#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The CLI's one-line errors, no daemon needed: an unknown option of a command said once
# (stats --bogus said it twice), an unknown global option named (-V was "unknown option"),
# an ambiguous prefix with its candidates (none were listed), each exit 2.
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
fail=0
expect() {	# WHAT PATTERN COUNT CMD...: exit 2, and stderr has PATTERN on COUNT lines
	local what=$1 pat=$2 n=$3 err rc
	shift 3
	err=$("$@" 2>&1 >/dev/null); rc=$?
	if [ $rc != 2 ] || [ "$(grep -c -- "$pat" <<< "$err")" != "$n" ]; then
		echo "  FAILED $what: exit $rc, stderr: $err"; fail=1
	fi
}
expect "stats --bogus" "unknown option '--bogus'" 1 "$B/featprof" stats --bogus
expect "-V" "unknown option '-V'" 1 "$B/featprof" -V
expect "st" "ambiguous command 'st': status, stats, stream" 1 "$B/featprof" st
expect "frobnicate" "unknown command 'frobnicate'" 1 "$B/featprof" frobnicate
[ $fail = 0 ] && echo "cli_errors: 4 one-line errors, each said once"
exit $fail
