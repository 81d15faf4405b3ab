#!/bin/bash
# The header builds warning-free with gcc and clang, C and C++, -O0 to -O3, PIE, non-PIE,
# shared and static, and every build keeps all its probe sites (readelf counts them).
set -u
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
W="-Wall -Wextra -Werror -pedantic -Iusdt"
fail=0; n=0
check_notes() { # file minimum
	local got; got=$(readelf -n -W "$1" 2>/dev/null | grep -c 'Provider: featprof')
	if [ "$got" -lt "$2" ]; then echo "  FAILED $1: $got featprof notes, expected >= $2"; fail=1; fi
}
for cc in gcc clang; do
	for std in c99 c11 gnu17; do
		for opt in -O0 -O1 -O2 -O3; do
			for link in "-fPIE -pie" "-fno-pie -no-pie" "-static"; do
				n=$((n + 1))
				$cc -std=$std $opt $link $W tests/targets/site.c -o "$tmp/a" 2> "$tmp/err" ||
					{ echo "  FAILED $cc -std=$std $opt $link"; cat "$tmp/err"; fail=1; continue; }
				check_notes "$tmp/a" 8
			done
			n=$((n + 1))
			$cc -std=$std $opt -fPIC -shared $W tests/targets/libsite.c -o "$tmp/l.so" 2> "$tmp/err" ||
				{ echo "  FAILED $cc -std=$std $opt -shared"; cat "$tmp/err"; fail=1; continue; }
			check_notes "$tmp/l.so" 3
		done
	done
done
for cxx in g++ clang++; do
	for std in c++11 c++17 c++20; do
		for opt in -O0 -O2 -O3; do
			for link in "-fPIE -pie" "-fno-pie -no-pie" "-fPIC -shared"; do
				n=$((n + 1))
				$cxx -std=$std $opt $link $W tests/targets/site_cxx.cc -o "$tmp/x" 2> "$tmp/err" ||
					{ echo "  FAILED $cxx -std=$std $opt $link"; cat "$tmp/err"; fail=1; continue; }
				check_notes "$tmp/x" 4
			done
		done
	done
done
# the sampling stack, always kept and gated (x86-64 executables): one gate note per file
for mode in FEATPROF_SAMPLING FEATPROF_SAMPLING_GATED; do
	for cc in gcc clang g++ clang++; do
		for opt in -O0 -O2; do
			for link in "-fPIE -pie" "-fno-pie -no-pie"; do
				n=$((n + 1))
				case $cc in *++) src=tests/targets/site_cxx.cc std=c++11 min=4 ;;
					*) src=tests/targets/site.c std=c11 min=8 ;; esac
				$cc -std=$std $opt $link $W -D$mode $src -o "$tmp/s" 2> "$tmp/err" ||
					{ echo "  FAILED $cc -D$mode $opt $link"; cat "$tmp/err"; fail=1; continue; }
				check_notes "$tmp/s" $min
				gates=$(readelf -n -W "$tmp/s" | grep -c 'Name: sample__gate')
				want=0; [ $mode = FEATPROF_SAMPLING_GATED ] && want=1
				if [ "$gates" != $want ]; then
					echo "  FAILED $cc -D$mode $opt $link: $gates gate notes"; fail=1
				fi
			done
		done
	done
done
# the in-process runtime in strict ISO C and C++ (no POSIX declarations: it makes its
# system calls itself; GNU extensions it needs stay, so no -pedantic)
for cc in gcc clang g++; do
	for std in c99 c11; do
		case $cc in g++) [ $std = c11 ] || continue; src=tests/targets/site_cxx.cc std=c++11 ;;
			*) src=tests/targets/site.c ;; esac
		n=$((n + 1))
		$cc -std=$std -O2 -Wall -Wextra -Werror -Iusdt -DFEATPROF_INPROCESS $src \
			usdt/featprof_ip.c -o "$tmp/ip" -lpthread 2> "$tmp/err" ||
			{ echo "  FAILED $cc -std=$std -DFEATPROF_INPROCESS"; cat "$tmp/err"; fail=1; }
	done
done
# featprof.h in a project-wide header of an in-process build (issue 31, part 4): ten
# units with a region each, one with none; the runtime is the object's once (one copy of
# its code, one thread site, one exit handler), the units' code stays small; without
# usdt/featprof_ip.c the link says what is missing
for i in 0 1 2 3 4 5 6 7 8 9; do
	printf '#include "featprof.h"\nint f%d(int x) { FP_BEGIN(r%d, "F"); x = x * 3 + %d; ' \
		"$i" "$i" "$i" > "$tmp/tu$i.c"
	printf 'FP_END(r%d); return x; }\n' "$i" >> "$tmp/tu$i.c"
done
printf '#include "featprof.h"\nint f0(int), f9(int);\nint main(void) { return f0(f9(1)) < 0; }\n' \
	> "$tmp/main.c"
for cc in gcc clang; do
	n=$((n + 1))
	if ! $cc -O2 -Wall -Wextra -Werror -Iusdt -DFEATPROF_INPROCESS "$tmp"/tu*.c "$tmp/main.c" \
		usdt/featprof_ip.c -o "$tmp/proj" -lpthread 2> "$tmp/err"; then
		echo "  FAILED $cc: ten units and featprof_ip.c"; cat "$tmp/err"; fail=1; continue
	fi
	$cc -O2 -Iusdt "$tmp"/tu*.c "$tmp/main.c" -o "$tmp/plain" 2> /dev/null
	text=$(size -A "$tmp/proj" | awk '$1 == ".text" { print $2 }')
	plain=$(size -A "$tmp/plain" | awk '$1 == ".text" { print $2 }')
	threads=$(readelf -n -W "$tmp/proj" | grep -c 'Name: ip__thread')
	copies=$(nm "$tmp/proj" | grep -c ' featprof_ip_begin$')
	fini=$(size -A "$tmp/proj" | awk '$1 == ".fini_array" { print $2 / 8 }')
	echo "  $cc, ten units with regions: .text $text bytes ($plain without the runtime)," \
		"$threads thread site(s), $copies runtime copy, $fini exit handlers"
	if [ "$threads" != 1 ] || [ "$copies" != 1 ] || [ "$fini" -gt 2 ] ||
		[ $((text - plain)) -gt 12000 ]; then
		echo "  FAILED $cc: the runtime more than once in the object"; fail=1
	fi
	n=$((n + 1))
	if $cc -O2 -Iusdt -DFEATPROF_INPROCESS "$tmp"/tu*.c "$tmp/main.c" -o "$tmp/miss" \
		-lpthread > "$tmp/err" 2>&1 || ! grep -q 'undefined reference to .*featprof_ip\|__fp_ip' "$tmp/err"; then
		echo "  FAILED $cc: no featprof_ip.c should fail the link naming the runtime"
		head -3 "$tmp/err"; fail=1
	fi
done
# the nop1 shape and FEATPROF_DISABLE build too, by their names and their earlier ones
# (FP_SITE_SHAPE=FP_SHAPE_NOP1, FP_DISABLE); the disabled build leaves no note
for shape in FEATPROF_SITE_SHAPE=FEATPROF_SHAPE_NOP1 FP_SITE_SHAPE=FP_SHAPE_NOP1; do
	n=$((n + 1))
	gcc $W -D$shape tests/targets/site.c -o "$tmp/n1" && check_notes "$tmp/n1" 8 || fail=1
	if objdump -d "$tmp/n1" | grep -q 'lea *-0x80(%rsp)'; then
		echo "  FAILED -D$shape: a shielded site"; fail=1
	fi
done
for off in FEATPROF_DISABLE FP_DISABLE; do
	n=$((n + 1)); gcc $W -D$off tests/targets/site.c -o "$tmp/d" || fail=1
	if [ "$(readelf -n "$tmp/d" | grep -c featprof)" != 0 ]; then
		echo "  FAILED $off left notes"; fail=1
	fi
done
# a plain build sees none of featprofd's ABI constants (usdt/featprof_abi.h names them)
n=$((n + 1))
printf '#include "featprof.h"\n#if defined(FP_KIND_BEGIN) || defined(FP_IP_IDS) || defined(FP_TLS_DEPTH)\n#error ABI\n#endif\nint main(void) { return 0; }\n' \
	> "$tmp/abi.c"
gcc $W -Iusdt "$tmp/abi.c" -o "$tmp/abi" || { echo "  FAILED a plain build sees featprofd's FP_ constants"; fail=1; }
# a C scope marked before its FP_SCOPE_DEFINE (issue 46, part 2): the first error says
# what to do (before: "cleanup argument not a function"), in every build mode
printf '#include "featprof.h"\nint w(int n)\n{\n\tFP_SCOPE(parse, "P");\n\treturn n;\n}\n' \
	> "$tmp/misuse.c"
for cc in gcc clang; do
	for mode in "" -DFEATPROF_SAMPLING -DFEATPROF_INPROCESS; do
		n=$((n + 1))
		if $cc -c $mode -Iusdt "$tmp/misuse.c" -o "$tmp/m.o" 2> "$tmp/err"; then
			echo "  FAILED $cc $mode: a scope before its FP_SCOPE_DEFINE compiled"; fail=1
		elif ! grep -m1 'error' "$tmp/err" | grep -q 'FP_SCOPE_DEFINE__parse__at_file_scope'; then
			echo "  FAILED $cc $mode: the first error does not say what to do:"
			grep -m1 error "$tmp/err"; fail=1
		fi
	done
done
echo "build_matrix: $n builds"
exit $fail
