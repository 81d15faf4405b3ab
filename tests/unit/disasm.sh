#!/bin/bash
# A site adds nothing but its own instructions: nop; lea -0x80(%rsp),%rsp; nopl; lea
# 0x80(%rsp),%rsp. Each function of tests/targets/disasm.c is compiled twice, as is and with
# against a copy of usdt/featprof.h whose four site instruction lines are assembler
# comments (the same asm statement, notes and template length, so the compiler makes
# the same choices, but no instructions); after deleting whole sites from the instrumented
# disassembly, and alignment padding (nops the site's 19 bytes move around) from both,
# the two must be identical (branch targets and addresses normalised). Fails on any
# added load, store, branch, call or argument set-up, or on a site of another shape.
set -u
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/dry"
sed -e 's/\\t\.byte 0x[0-9a-fx,]*\\n/\\t# no site instruction\\n/' usdt/featprof.h > "$tmp/dry/featprof.h"
[ "$(grep -c '# no site instruction' "$tmp/dry/featprof.h")" -ge 5 ] || { echo "disasm: cannot make the dry header"; exit 1; }
fail=0; cases=0

norm() { # objdump of one function -> mnemonics and operands, addresses masked
	objdump -d --no-show-raw-insn --no-addresses -M att "$1" --disassemble="$2" 2>/dev/null |
		sed -n '/^<.*>:$/,$p' | tail -n +2 | sed -e 's/^[[:space:]]*//' -e '/^$/d' \
		-e 's/<[^>]*>//g' -e 's/0x[0-9a-f]\{3,\}/ADDR/g' -e 's/[[:space:]]\+/ /g' -e 's/ $//'
}
nopad() { grep -vE '^(nop[wl]?( |$)|xchg %ax,%ax$|data16|cs nop)'; }
strip_sites() { # deletes exact 4-instruction site sequences; counts them
	awk 'BEGIN{n=0}
	{ l[NR]=$0 }
	END{ i=1
	  while (i<=NR) {
	    if (l[i]=="nop" && l[i+1]=="lea -0x80(%rsp),%rsp" && l[i+2] ~ /^nopl 0x0\(%rax,%rax,1\)$/ &&
	        l[i+3]=="lea 0x80(%rsp),%rsp") { n++; i+=4; continue }
	    print l[i]; i++ }
	  print "SITES " n > "/dev/stderr" }'
}

for cc in gcc clang; do
	for opt in -O0 -O1 -O2 -O3 -Os; do
		for pic in -fPIE -fno-pie -fPIC; do
			extra=""
			# C scopes pass the variable's address to the inlined cleanup: at -O0 that
			# is a stack address computation, so scopes are checked with optimisation.
			[ "$opt" = -O0 ] && extra=-DNO_SCOPE
			$cc $opt $pic $extra -Iusdt -c tests/targets/disasm.c -o "$tmp/on.o" || { fail=1; continue; }
			$cc $opt $pic $extra -I"$tmp/dry" -c tests/targets/disasm.c -o "$tmp/off.o" || { fail=1; continue; }
			fns="leaf_loop nested"; [ -z "$extra" ] && fns="$fns scoped_fn"
			for fn in $fns; do
				cases=$((cases + 1))
				norm "$tmp/on.o" "$fn" | strip_sites 2> "$tmp/sites" | nopad > "$tmp/on.txt"
				norm "$tmp/off.o" "$fn" | nopad > "$tmp/off.txt"
				nsites=$(awk '{print $2}' "$tmp/sites")
				diff -u "$tmp/off.txt" "$tmp/on.txt" > "$tmp/diff"
				if [ "$nsites" -lt 2 ] || [ -s "$tmp/diff" ]; then
					echo "  FAILED $cc $opt $pic $fn: sites=$nsites, instrumented code differs from dry:"
					head -30 "$tmp/diff"
					fail=1
				fi
			done
		done
	done
done
echo "disasm: $cases functions compared, $([ $fail = 0 ] && echo 0 || echo some) differed"
exit $fail
