#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The CLI's one-line errors, no daemon needed: an unknown option of a command said once
# (stats --bogus said it twice), an unknown global option named, an ambiguous prefix with
# its candidates (none were listed), each exit 2; times with units (--duration 2m,
# --interval 500ms) and without, bad ones refused; -V the version; featprof help VERB.
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
expect "-Q" "unknown option '-Q'" 1 "$B/featprof" -Q
expect "--duration 1.5s" "takes whole seconds" 1 "$B/featprof" save 1 --duration 1.5s -o x
expect "--duration 1500ms" "takes whole seconds" 1 "$B/featprof" save 1 --duration 1500ms -o x
expect "--interval 2x" "takes 50 ms to 3600 s" 1 "$B/featprof" top 1 --interval 2x
expect "st" "ambiguous command 'st': status, stats, stream" 1 "$B/featprof" st
expect "frobnicate" "unknown command 'frobnicate'" 1 "$B/featprof" frobnicate
# accepted: the same options with units reach the command (no socket here: it says so)
for args in "save 1 --duration 2m --interval 500ms -o /dev/null" "top 1 --interval 2s --count 1" \
	"record 1 --duration 90s -o /dev/null"; do
	# shellcheck disable=SC2086
	err=$(FEATPROF_SOCKET=/nonexistent "$B/featprof" $args 2>&1 >/dev/null)
	if ! grep -q "cannot connect to featprofd" <<< "$err"; then
		echo "  FAILED featprof $args: $err"; fail=1
	fi
done
v=$("$B/featprof" -V)
[[ $v == "featprof "[0-9]* ]] || { echo "  FAILED -V: $v"; fail=1; }
h=$("$B/featprof" help drill)
[[ $h == *"usage: featprof drill"* ]] || { echo "  FAILED help drill: $h"; fail=1; }
[ $fail = 0 ] && echo "cli_errors: 7 one-line errors, each said once; times with units; -V; help VERB"
exit $fail
