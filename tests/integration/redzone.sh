#!/bin/bash
# Red zone: a leaf function keeps all 128 bytes of its red zone live across a begin and
# an end site while uprobes are attached to its own sites (on Linux 6.18 a uprobe on a
# nop5 becomes a CALL into [uprobes-trampoline]). featprof's shielded site: no value
# corrupted. The control, a bare nop5 site, must show corruption - else this test
# proves nothing on this kernel. Needs root (perf uprobes).
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
if [ "$(id -u)" != 0 ]; then echo "SKIP: redzone needs root"; exit 77; fi
out=$("$B/tests/targets/redzone" 1000000 attach); rc=$?
echo "  shielded: $out"
fail=0
[ $rc = 0 ] && grep -q 'sites_attached=2 hits=2000000 calls=1000000 corrupted=0' <<< "$out" || fail=1
out=$("$B/tests/targets/redzone_bare" 200000 attach); rc=$?
echo "  bare nop5 (control): $out"
c=$(grep -oE 'corrupted=[0-9]+' <<< "$out" | cut -d= -f2)
if [ "${c:-0}" -eq 0 ]; then
	if grep -qw arch_uprobe_optimize /proc/kallsyms 2>/dev/null || [ "$(uname -r | cut -d. -f1)" -ge 7 ]; then
		echo "  FAILED: the bare nop5 control was not corrupted although the kernel optimizes uprobes"; fail=1
	else
		echo "  note: this kernel does not optimize nop5 uprobes; the control cannot corrupt"
	fi
fi
exit $fail
