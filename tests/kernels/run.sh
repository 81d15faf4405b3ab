#!/bin/bash
# The kernel matrix: tests/kernels/suite.sh on this machine's kernel, on this kernel
# again with featprofd told to act as if it lacked every mechanism that Linux 5.10 lacks
# (host-compat: FEATPROF_KERNEL_WITHOUT=all, the fallbacks at full speed) and, in QEMU
# (../shared/kernels/run-kernel, software emulation: function, not time), on every
# Debian kernel fetched into its cache (`fetch-kernels`; `fetch-kernels --bullseye` for
# 5.10). One line per kernel and feature; exit 1 when a feature fails on any of them.
# usage: run.sh BUILD_DIR [KERNEL...]   (root; `make kernel-check`; KERNEL: host,
# host-compat or a cached kernel)
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}; shift
RK=${FEATPROF_KERNELS:-../shared/kernels}
kernels=("$@")
if [ ${#kernels[@]} = 0 ]; then
	kernels=(host host-compat)
	while read -r k; do kernels+=("$k"); done < <("$RK/fetch-kernels" --list 2>/dev/null |
		grep -oE '^[0-9]+\.[0-9]+[^ ]*' | sort -u)
fi
fail=0
for k in "${kernels[@]}"; do
	start=$(date +%s)
	if [ "$k" = host ]; then
		tests/kernels/suite.sh "$B"; rc=$?
	elif [ "$k" = host-compat ]; then
		FEATPROF_KERNEL_WITHOUT=all FP_SUITE_NAME="$(uname -r)/compat" \
			tests/kernels/suite.sh "$B"; rc=$?
	else
		# single-threaded TCG: with a host thread per vCPU (multi), 6.12 guests died
		# in 3 of 6 runs with an int3 Oops in __schedule while a tracepoint's static
		# key was patched (attaching or detaching sched_switch: cross-modified code
		# the emulator's other vCPU still ran); one thread takes as long here (~48 s)
		"$RK/run-kernel" --tcg single --timeout 900 "$k" -- \
			"cd $PWD && tests/kernels/suite.sh $B"; rc=$?
		# 125: the guest kernel itself died: run it once more; a second death fails
		# as any other exit
		if [ $rc = 125 ]; then
			echo "-- $k: the guest died (its console above); once more"
			"$RK/run-kernel" --tcg single --timeout 900 "$k" -- \
				"cd $PWD && tests/kernels/suite.sh $B"; rc=$?
		fi
	fi
	echo "-- $k: exit $rc, $(( $(date +%s) - start )) s"
	[ $rc = 0 ] || fail=1
done
exit $fail
