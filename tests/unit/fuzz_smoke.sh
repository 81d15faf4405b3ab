#!/bin/bash
# A short libFuzzer run of the note parser (whole ELF images and raw note sections),
# seeded with the test targets. Any crash, sanitizer report or leak fails the test.
# A long run: tests/unit/fuzz_smoke.sh BUILD_DIR SECONDS (figures in docs/PROBE-ABI.md).
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}; SECS=${2:-20}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/corpus"
i=0
for f in "$B"/tests/targets/site_c "$B"/tests/targets/site_cxx "$B"/tests/targets/libsite.so \
	"$B"/tests/targets/redzone_bare; do
	i=$((i + 1))
	{ printf '\001'; cat "$f"; } > "$tmp/corpus/elf$i"
	for sec in .note.stapsdt .note.featprof; do
		objcopy -O binary --only-section="$sec" "$f" "$tmp/sec" 2>/dev/null || continue
		[ -s "$tmp/sec" ] || continue
		if [ $sec = .note.stapsdt ]; then p='\000'; else p='\002'; fi
		{ printf "$p"; cat "$tmp/sec"; } > "$tmp/corpus/sec$i$sec"
	done
done
"$B"/tests/unit/fuzz_notes -max_total_time="$SECS" -max_len=65536 -rss_limit_mb=2048 \
	-print_final_stats=1 -artifact_prefix="$tmp/" "$tmp/corpus" > "$tmp/log" 2>&1
rc=$?
grep -E 'stat::number_of_executed_units|stat::new_units_added|ERROR|SUMMARY' "$tmp/log"
if [ $rc -ne 0 ]; then
	echo "fuzz_smoke: libFuzzer failed (exit $rc):"; tail -40 "$tmp/log"
	exit 1
fi
notes_runs=$(grep -oE 'number_of_executed_units: [0-9]+' "$tmp/log" | grep -oE '[0-9]+')

# the region-definition parser (client input), seeded with the installed definitions
mkdir "$tmp/rcorpus"
cp usdt/regions.d/*.regions "$tmp/rcorpus/"
printf 'region * function work_*,libz.so.1:deflate* features Work\nregion f function a::b<int>,x:y features F\n' \
	> "$tmp/rcorpus/functions.regions"
"$B"/tests/unit/fuzz_regdefs -max_total_time="$(( (SECS + 1) / 2 ))" -max_len=4096 \
	-rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$tmp/" "$tmp/rcorpus" \
	> "$tmp/rlog" 2>&1
rc=$?
grep -E 'stat::number_of_executed_units|ERROR|SUMMARY' "$tmp/rlog"
if [ $rc -ne 0 ]; then
	echo "fuzz_smoke: libFuzzer failed on the definition parser (exit $rc):"; tail -40 "$tmp/rlog"
	exit 1
fi

# the request parser (client input), seeded with requests the tests send
mkdir "$tmp/qcorpus"
printf '%s' '{"id":1,"verb":"status"}' > "$tmp/qcorpus/1"
printf '%s' '{"id":2,"verb":"enable","pid":12,"features":["Cache"],"all":false}' > "$tmp/qcorpus/2"
printf '%s' '{"id":-3,"verb":"record","pid":1,"duration_ms":100,"x":[1.5,null,"\u00e9"]}' \
	> "$tmp/qcorpus/3"
"$B"/tests/unit/fuzz_request -max_total_time="$(( (SECS + 1) / 2 ))" -max_len=4096 \
	-rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$tmp/" "$tmp/qcorpus" \
	> "$tmp/qlog" 2>&1
rc=$?
grep -E 'stat::number_of_executed_units|ERROR|SUMMARY' "$tmp/qlog"
if [ $rc -ne 0 ]; then
	echo "fuzz_smoke: libFuzzer failed on the request parser (exit $rc):"; tail -40 "$tmp/qlog"
	exit 1
fi
echo "fuzz_smoke: notes ${SECS}s, $notes_runs executions; definitions $(( (SECS + 1) / 2 ))s," \
	"$(grep -oE 'number_of_executed_units: [0-9]+' "$tmp/rlog" | grep -oE '[0-9]+') executions;" \
	"requests $(( (SECS + 1) / 2 ))s," \
	"$(grep -oE 'number_of_executed_units: [0-9]+' "$tmp/qlog" | grep -oE '[0-9]+') executions; 0 crashes"
