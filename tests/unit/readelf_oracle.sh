#!/bin/bash
# The catalog reader against an oracle nobody here wrote: for every ELF file below that
# carries stapsdt notes, provider, name, location, base, semaphore and argument string
# must be what `readelf -n` prints, note for note, in order.
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
files=( /usr/bin/python3.11 /usr/lib/x86_64-linux-gnu/libstdc++.so.6
	"$B"/tests/targets/site_c "$B"/tests/targets/site_nopie "$B"/tests/targets/site_cxx
	"$B"/tests/targets/libsite.so "$B"/tests/targets/site_shlib "$B"/tests/targets/redzone_bare )
# every other ELF file on the usual paths that has a .note.stapsdt section
for f in /usr/bin/* /usr/sbin/* /usr/lib/x86_64-linux-gnu/*.so*; do
	[ -f "$f" ] && [ ! -L "$f" ] || continue
	readelf -S -W "$f" 2>/dev/null | grep -q '\.note\.stapsdt' && files+=("$f")
done
fail=0; checked=0; notes=0; seen=" "
for f in "${files[@]}"; do
	real=$(readlink -f "$f")
	case "$seen" in *" $real "*) continue;; esac
	seen="$seen$real "
	readelf -n -W "$real" 2>/dev/null | grep -oE '(Provider|Name|Location|Arguments): .*' |
		sed 's/[[:space:]]*$//' > "$tmp/want"
	if ! [ -s "$tmp/want" ]; then
		echo "  FAILED $real: readelf shows no stapsdt notes (expected some)"; fail=1; continue
	fi
	if ! "$B"/tests/unit/notes_dump "$real" | sed 's/[[:space:]]*$//' > "$tmp/got"; then
		echo "  FAILED $real: reader failed"; fail=1; continue
	fi
	if ! diff -u "$tmp/want" "$tmp/got" > "$tmp/diff"; then
		echo "  FAILED $real differs from readelf:"; head -20 "$tmp/diff"; fail=1; continue
	fi
	checked=$((checked + 1)); notes=$((notes + $(grep -c '^Provider' "$tmp/want")))
	echo "  same as readelf: $real ($(grep -c '^Provider' "$tmp/want") notes)"
done
echo "readelf_oracle: $checked files, $notes notes identical"
exit $fail
