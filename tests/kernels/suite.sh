#!/bin/bash
# The functional suite run under each kernel (tests/kernels/run.sh): featprofd starts,
# and each feature works or is refused in one line — one line per feature:
#   KERNEL FEATURE ok|FAIL|refused DETAIL
# Function only (the guests are emulated): counts are exact, times are not checked.
# usage: suite.sh BUILD_DIR   (as root, in the repository)
set -u
B=${1:-build}
K=${FP_SUITE_NAME:-$(uname -r)}
tmp=$(mktemp -d)
sock=$tmp/fp.sock
fails=0
say() { printf '%-24s %-14s %s\n' "$K" "$1" "$2"; case $2 in FAIL*) fails=$((fails + 1)) ;; esac; }
fp() { "$B/featprof" --socket "$sock" "$@"; }
cleanup() { kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

"$B/featprofd" --socket "$sock" --group nogroup --state-dir "$tmp/state" > "$tmp/d.log" 2>&1 &
fpd=$!
for _ in $(seq 300); do [ -S "$sock" ] && break; kill -0 $fpd 2>/dev/null || break; sleep 1; done
if [ ! -S "$sock" ]; then
	say daemon "FAIL $(grep -E 'error' "$tmp/d.log" | tail -1 | sed 's/^featprofd: error: //')"
	tail -20 "$tmp/d.log" | sed 's/^/    /'
	exit 1
fi
say daemon "ok $(fp status --json | python3 -c 'import json,sys; k=json.load(sys.stdin)["kernel"]; print("attach: " + k["mechanisms"]["attach"].split(" (")[0] + "; unavailable: " + (", ".join(k["unavailable"]) or "none"))')"

# exact counts: 2 threads x 3,000 iterations of a nested pair, then the process exits
mkfifo "$tmp/go"
"$B/bench/busyloop_fp" 3000 10 --wait --threads 2 < "$tmp/go" > "$tmp/bl.out" &
bl=$!
exec 3> "$tmp/go"
sleep 1
fp enable $bl --all > /dev/null 2> "$tmp/err" || say enable "FAIL $(cat "$tmp/err")"
echo go >&3
exec 3>&-
wait $bl
n=$(fp stats $bl --json | python3 -c 'import json,sys; print(sum(r["count"] for r in json.load(sys.stdin)["regions"] if r["name"] == "busy"))')
[ "$n" = 6000 ] && say exact_counts "ok 6000 instances, 2 threads" || say exact_counts "FAIL $n of 6000"

# threads that exit leave no per-thread state behind: 2 x 4 threads came and went (a
# warm-up round, then the measured one), the process lives on; where the state is in a
# map keyed by thread id, its entries are counted (featprofd's own calibration thread
# may hold one); task storage goes with its task
coproc BL { "$B/bench/busyloop_fp" 300 10 --wait --warm 300 --threads 4 --hold; }
bl_pid=$BL_PID	# bash unsets BL_PID once the coprocess exits
read -r -u "${BL[0]}" line
bl=${line#ready }
if fp enable $bl --all > /dev/null 2> "$tmp/err"; then
	echo go >&"${BL[1]}"; read -r -u "${BL[0]}" line
	echo go >&"${BL[1]}"; read -r -u "${BL[0]}" line
	n=$(fp stats $bl --json | python3 -c 'import json,sys; print(sum(r["count"] for r in json.load(sys.stdin)["regions"] if r["name"] == "busy"))')
	if fp status --json | python3 -c 'import json,sys; sys.exit(not json.load(sys.stdin)["kernel"]["mechanisms"]["thread_state"].startswith("a hash map"))'; then
		left=0
		for id in $(bpftool map show | awk -F'[: ]+' '/ name tstate_map / { print $1 }'); do
			left=$((left + $(bpftool -j map dump id "$id" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')))
		done
		[ "$n" = 2400 ] && [ "$left" -le 1 ] &&
			say thread_exit "ok $n instances; $left thread state(s) left in the map" ||
			say thread_exit "FAIL $n of 2400 instances; $left thread states left in the map"
	else
		[ "$n" = 2400 ] && say thread_exit "ok $n instances; task storage" ||
			say thread_exit "FAIL $n of 2400 instances"
	fi
else
	say thread_exit "FAIL $(cat "$tmp/err")"
fi
echo exit >&"${BL[1]}"
wait "$bl_pid" 2>/dev/null

# enable, off-CPU, record, export and disable on the demo
"$B/featprof-demo" -t 2 -q &
demo=$!
sleep 1
fp enable $demo --all > /dev/null 2> "$tmp/err" && sleep 3
st=$(fp stats $demo --json 2> "$tmp/err")
if [ -n "$st" ]; then
	say enable "ok $(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(sum(r["count"] for r in d["regions"]), "instances in", len(d["regions"]), "regions")' "$st")"
	off=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(sum(r.get("offcpu_ns", 0) for r in d["regions"]))' "$st")
	[ "$off" -gt 0 ] && say off_cpu "ok ${off} ns" || say off_cpu "refused or none: $off"
else
	say enable "FAIL $(cat "$tmp/err")"
fi
if fp record $demo --duration 1 -o "$tmp/trace.json" 2> "$tmp/err"; then
	say record "ok $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["otherData"]["events"], "events")' "$tmp/trace.json")"
else
	say record "FAIL $(tail -1 "$tmp/err")"
fi
if fp export $demo --format folded -o "$tmp/f.folded" 2> "$tmp/err" && [ -s "$tmp/f.folded" ]; then
	say export "ok $(wc -l < "$tmp/f.folded") paths"
else
	say export "FAIL $(tail -1 "$tmp/err")"
fi
fp disable $demo --all > "$tmp/out" 2>&1 && grep -q "0 probe sites attached" "$tmp/out" &&
	say disable "ok" || say disable "FAIL $(cat "$tmp/out")"
kill $demo

# a service: fork (the children live), dlopen (a library's regions join), --exe
cp "$B/tests/targets/service" "$tmp/service"
coproc SVC { "$tmp/service"; }
svc_pid=$SVC_PID	# bash unsets SVC_PID once the coprocess has exited
read -r -u "${SVC[0]}" line
svc=${line#ready }
cmd() { echo "$1" >&"${SVC[1]}"; read -r -u "${SVC[0]}" reply; echo "$reply"; }
if fp enable --exe "$tmp/service" --all > "$tmp/out" 2>&1; then
	cmd "work 10" > /dev/null
	r=$(cmd "fork 3 5 200")
	[ "$r" = "forked 3" ] && say fork "ok children live and exit 0" || say fork "FAIL $r"
	r=$(cmd "dlopen $PWD/$B/tests/targets/libsite.so 4 10")
	# the library's regions join when featprofd has seen the dlopen (its loop may still
	# be releasing the exited children's uprobes: one link per site takes seconds where
	# each waits for the kernel), then call again
	for _ in $(seq 100); do
		fp stats "$svc" --json 2>/dev/null | grep -q lib_region && break
		sleep 0.1
	done
	cmd "dlopen $PWD/$B/tests/targets/libsite.so 4 10" > /dev/null
	n=$(fp stats --exe "$tmp/service" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(r["count"] for r in d["regions"] if r["name"] == "service_work"))')
	[ "$n" = 25 ] && say exe "ok service_work 25 = 10 + 3 x 5 (parent and forked children)" ||
		say exe "FAIL service_work $n, expected 25"
	nl=$(fp stats $svc --json 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(r["count"] for r in d["regions"] if r["name"] != "service_work"))' 2>/dev/null)
	[ "${r%% *}" = dlopened ] && [ "${nl:-0}" -gt 0 ] && say dlopen "ok $nl instances of the library's regions" ||
		say dlopen "FAIL $r; library instances ${nl:-none}"
else
	say exe "FAIL $(cat "$tmp/out")"
fi
echo "exit" >&"${SVC[1]}" 2>/dev/null
kill "$svc_pid" 2>/dev/null
wait "$svc_pid" 2>/dev/null

# featprof run: a whole run from its exec, its forked child included, as nobody
chmod 755 "$tmp"	# nobody reaches the socket (featprofd --group nogroup) ...
mkdir -m 777 "$tmp/nobody"	# ... and writes its file
# copies nobody can run: the checkout may be in a private (0700) directory
cp "$B/featprof" "$B/tests/targets/configurable" "$tmp/nobody/"
if setpriv --reuid nobody --regid nogroup --clear-groups "$tmp/nobody/featprof" --socket "$sock" \
	run --config A=1,B=1 -o "$tmp/nobody/run.json" -- "$tmp/nobody/configurable" A=1,B=1 20 \
	> "$tmp/out" 2>&1; then
	r=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join("%s=%d" % (r["name"], r["count"]) for r in sorted(d["regions"], key=lambda r: r["name"]) if r["count"]))' "$tmp/nobody/run.json")
	[ "$r" = "compress=300 encrypt=150 load=200 seal=100" ] &&
		say run "ok $r (as nobody; encrypt in a forked child)" || say run "FAIL $r"
else
	say run "FAIL $(tail -1 "$tmp/out")"
fi

# in-process timing (a FEATPROF_INPROCESS build): no uprobe per event, so on every kernel;
# exact counts, and off-CPU time from the scheduler programs
coproc IP { "$B/tests/targets/inproc" sleep; }
ip_pid=$IP_PID
read -r -u "${IP[0]}" line
ipp=${line#ready }
echo go >&"${IP[1]}"; read -r -u "${IP[0]}" line
if fp enable "$ipp" --all > "$tmp/out" 2>&1 && grep -q "timed in the process" "$tmp/out"; then
	echo "sleep 5 20" >&"${IP[1]}"; read -r -u "${IP[0]}" line
	echo "spin 100 0" >&"${IP[1]}"; read -r -u "${IP[0]}" line
	r=$(fp stats "$ipp" --json | python3 -c 'import json,sys; g=[r for r in json.load(sys.stdin)["regions"] if r["name"] == "ip_flat"][0]; print(g["count"], g["measured"], int(g["offcpu_blocked_ns"] / 1e6))')
	set -- $r
	[ "$1" = 105 ] && [ "$2" = in-process ] && [ "$3" -ge 90 ] &&
		say inprocess "ok 105 instances timed in the process; ${3} ms blocked of 100" ||
		say inprocess "FAIL $r (105 in-process, >= 90 ms blocked expected)"
else
	say inprocess "FAIL $(tail -1 "$tmp/out")"
fi
kill "$ip_pid" 2>/dev/null
wait "$ip_pid" 2>/dev/null

# sampling (a FEATPROF_SAMPLING build)
"$B/tests/targets/demo_sampled" -t 2 -q &
ds=$!
sleep 1
if fp sample $ds --hz 499 --duration 2 --json > "$tmp/s.json" 2> "$tmp/err"; then
	say sample "ok $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sampling"]["samples"], "samples")' "$tmp/s.json")"
else
	say sample "refused or FAIL: $(tail -1 "$tmp/err")"
	grep -q "needs\|not available\|Linux" "$tmp/err" || fails=$((fails + 1))
fi
# sampling from featprofd's own CPU: 5.18 and later, refused in one line before
if fp sample $ds --remote --hz 499 --duration 2 --json > "$tmp/s.json" 2> "$tmp/err"; then
	say sample_remote "ok $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sampling"]["samples"], "samples")' "$tmp/s.json")"
elif grep -q "needs bpf_copy_from_user_task (Linux 5.18)" "$tmp/err"; then
	say sample_remote "refused: $(tail -1 "$tmp/err")"
else
	say sample_remote "FAIL $(tail -1 "$tmp/err")"
fi
kill $ds
# a library whose version script keeps its region stack its own: read through the DTV
"$B/tests/targets/codec_local" 3000 500 2 > /dev/null &
cl=$!
sleep 1
if fp sample $cl --hz 499 --duration 2 --json > "$tmp/s.json" 2> "$tmp/err"; then
	say sample_lib_stack "$(python3 -c 'import json,sys
r = {x["name"]: x["samples"] for x in json.load(open(sys.argv[1]))["sampling"]["regions"]}
print("ok" if r.get("codec_block", 0) > 0.5 * r.get("frontend", 1) else "FAIL", r)' "$tmp/s.json")"
else
	say sample_lib_stack "FAIL $(tail -1 "$tmp/err")"
fi
kill $cl 2>/dev/null
wait $cl 2>/dev/null

# function regions (no featprof.h): entries and return probes, calls counted exactly,
# the longjmps out of work_jump as no_return, with full symbols and with .dynsym only
for fb in funcs funcs_dyn; do
	coproc FN { "$B/tests/targets/$fb" 2 20; }
	fn_co=$FN_PID
	read -r -u "${FN[0]}" line
	fn_pid=${line#ready }
	if fp enable $fn_pid --function 'Work=work_*,lib_work' > /dev/null 2> "$tmp/err"; then
		echo go >&"${FN[1]}"
		read -r -u "${FN[0]}" truth
		r=$(fp stats $fn_pid --json | python3 -c '
import json, sys
s = json.load(sys.stdin); t = json.loads(sys.argv[1])
got = {r["name"]: r["count"] for r in s["regions"]}
bad = [f for f in ("work_leaf", "work_outer", "work_rec", "lib_work")
       if got.get(f) != t[f]["calls"]]
nr = s.get("anomalies", {}).get("no_return", 0)
print("ok" if not bad and nr == t["jumps"] and got.get("work_jump") == 0 else "FAIL",
      sum(got.values()), "calls,", "no_return", nr, "of", t["jumps"], bad)' "$truth")
		mech=$(fp status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["kernel"]["mechanisms"]["function_regions"].split(" (")[0])')
		case $r in
		ok*) say "functions/$fb" "$r; $mech" ;;
		*) say "functions/$fb" "FAIL $r" ;;
		esac
		echo q >&"${FN[1]}"
	else
		say "functions/$fb" "FAIL $(cat "$tmp/err")"
		kill "$fn_pid" 2>/dev/null
	fi
	wait "$fn_co" 2>/dev/null
done

# C++ functions counted at their entries (no return probe: an exception must not meet
# the kernel's trampoline): every call, and the program catches its 5 exceptions
coproc CX { "$B/tests/targets/throws"; }
cx_co=$CX_PID
read -r -u "${CX[0]}" line
cx_pid=${line#ready }
if fp enable $cx_pid --function 'E=middle,thrower' > /dev/null 2> "$tmp/err"; then
	echo go >&"${CX[1]}"
	read -r -u "${CX[0]}" out
	r=$(fp stats $cx_pid --json | python3 -c '
import json, sys
got = {r["name"]: (r["count"], r["measured"]) for r in json.load(sys.stdin)["regions"]}
ok = got.get("middle") == (10, "calls") and got.get("thrower") == (10, "calls")
print("ok" if ok and sys.argv[1] == "caught 5" else "FAIL", got, sys.argv[1])' "$out")
	case $r in
	ok*) say functions/cxx_calls "$r" ;;
	*) say functions/cxx_calls "FAIL $r" ;;
	esac
else
	say functions/cxx_calls "FAIL $(cat "$tmp/err")"
	kill "$cx_pid" 2>/dev/null
fi
wait "$cx_co" 2>/dev/null

# sample --stacks: under a traced region by frame pointers (clang's build) and by DWARF
# CFI (GCC -O2, none), and in a FEATPROF_SAMPLING build (its TLS region stack) by DWARF:
# region work's samples in f1 and lib_f2, every one under worker
for c in fp:stacks_fp:traced dwarf:stacks:traced dwarf:stacks_sampled:tls; do
	IFS=: read -r u sb src <<< "$c"
	coproc ST { "$B/tests/targets/$sb" 3000 100000 2 --wait; }
	st_co=$ST_PID
	read -r -u "${ST[0]}" line
	st_pid=${line#ready }
	echo go >&"${ST[1]}"
	if { [ $src = tls ] || fp enable "$st_pid" Work > /dev/null 2> "$tmp/err"; } &&
		fp sample "$st_pid" --stacks --unwind $u --hz 499 --duration 2 --json \
			> "$tmp/s.json" 2> "$tmp/err"; then
		r=$(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["sampling"]
w = next(r for r in s["regions"] if r["name"] == "work")
f = {x["name"]: x for x in w.get("functions", [])}
# a sample in the vdso (the clock reads around each part) loses worker under a
# frame-pointer walk (the vdso keeps no frame), more of them where the guest is slow
vdso = f.get("[vdso]", {}).get("self_share", 0)
ok = (f.get("f1", {}).get("self_share", 0) > 0.3 and
      f.get("lib_f2", {}).get("self_share", 0) > 0.15 and
      f.get("worker", {}).get("total_share", 0) + vdso > 0.95)
print("ok" if ok else "FAIL", w["samples"], "samples in work:",
      ", ".join("%s %.0f%%" % (n, 100 * f[n]["self_share"]) for n in ("f1", "lib_f2", "worker")
                if n in f), "self; worker %.0f%% total, vdso %.0f%%;" % (
          100 * f.get("worker", {}).get("total_share", 0), 100 * vdso),
      s["stacks"]["unwind"])' "$tmp/s.json")
		case $r in
		ok*) say "stacks/$u-$src" "$r" ;;
		*) say "stacks/$u-$src" "FAIL $r" ;;
		esac
	elif grep -q "lacks\|needs\|before Linux" "$tmp/err"; then
		say "stacks/$u-$src" "refused: $(tail -1 "$tmp/err")"
	else
		say "stacks/$u-$src" "FAIL $(tail -1 "$tmp/err")"
	fi
	kill -INT "$st_pid" 2>/dev/null	# SIGINT: bash says nothing of it
	wait "$st_co" 2>/dev/null
done
exit $((fails > 0))
