#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The man pages (scripts/mkman.sh, built by make): each renders with man -l and groff
# finds nothing to warn about; featprof(1) has a section for every command featprof has
# (featprof --commands) with its usage; the completion script offers the commands, a
# command's options and featprof help's commands (feature names of a live target:
# tests/integration/test_completion.py).
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
fail=0
for p in "$B/man/featprof.1" "$B/man/featprofd.8" "$B/man/featprof.h.3"; do
	if [ ! -s "$p" ]; then echo "  FAILED $p missing"; fail=1; continue; fi
	out=$(MANWIDTH=100 man -l "$p" 2>&1 >/dev/null)
	warn=$(groff -man -Tutf8 -ww -z "$p" 2>&1)
	if [ -n "$out$warn" ]; then echo "  FAILED $p: $out $warn"; fail=1; fi
done
n=$("$B/featprof" --commands | wc -l)
s=$(grep -c '^\.SS ' "$B/man/featprof.1")
u=$(grep -c 'usage: featprof ' "$B/man/featprof.1")
[ "$n" = "$s" ] && [ "$u" -ge "$n" ] || { echo "  FAILED featprof.1: $s sections, $u usages, $n commands"; fail=1; }
grep -q -- '--max-overhead' "$B/man/featprof.1" || { echo "  FAILED featprof.1 lacks drill's --max-overhead"; fail=1; }
grep -q -- '--state-dir' "$B/man/featprofd.8" || { echo "  FAILED featprofd.8 lacks --state-dir"; fail=1; }
grep -q 'FP_SCOPE_DEFINE' "$B/man/featprof.h.3" || { echo "  FAILED featprof.h.3 lacks FP_SCOPE_DEFINE"; fail=1; }
# every command's help lists its options, each with its meaning (one table: cli/core/
# opts.c), within 80 columns; units and defaults said
for verb in $("$B/featprof" --commands); do
	h=$("$B/featprof" help "$verb" 2>&1)
	opts=$(sed -n '/^options:$/,$p' <<< "$h")
	if ! grep -q -- '-h, --help' <<< "$opts"; then
		echo "  FAILED featprof help $verb: no options list"; fail=1
	elif awk 'length > 80 { bad = 1 } END { exit !bad }' <<< "$opts"; then
		echo "  FAILED featprof help $verb: options past 80 columns"; fail=1
	fi
done
grep -q -- '--hz N .*(default 997)' <<< "$("$B/featprof" help sample)" &&
	grep -q -- '--interval TIME .*ms' <<< "$("$B/featprof" help top)" &&
	grep -q -- '-j, --json' "$B/man/featprof.1" ||
	{ echo "  FAILED options' units, defaults or short flags not said (help, man page)"; fail=1; }
comp() {	# WORDS...: what the completion offers for the last word
	PATH="$PWD/$B:$PATH" bash -c 'source scripts/featprof.bash-completion
		COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); _featprof
		echo "${COMPREPLY[*]}"' _ "$@"
}
[ "$(comp featprof en)" = "enable" ] || { echo "  FAILED completion of 'en': $(comp featprof en)"; fail=1; }
[ "$(comp featprof help dr)" = "drill" ] || { echo "  FAILED completion of 'help dr'"; fail=1; }
[[ " $(comp featprof drill --)" == *" --max-overhead "* ]] ||
	{ echo "  FAILED completion of 'drill --': $(comp featprof drill --)"; fail=1; }
[[ " $(comp featprof sample 1 --unwind '')" == " fp dwarf" ]] ||
	{ echo "  FAILED completion of --unwind: $(comp featprof sample 1 --unwind '')"; fail=1; }
[ $fail = 0 ] && echo "man_pages: 3 pages render cleanly, featprof.1 has all $n commands, each with its options; completion of commands and options"
exit $fail
