#!/bin/sh
# Install the Debian 12 packages that building and the demo need (--demo), or those and
# everything the tests use (the default: make check). Idempotent: installs only what is
# missing, and runs apt-get update only then. Extra package names may be given as
# arguments (make bench adds bcc, make kernel-check QEMU). --list prints the names only.
set -eu

# build (clang for the BPF objects, bpftool for skeletons, linux-libc-dev for the BPF UAPI) and the demo
DEMO_PKGS="make gcc clang llvm libc6-dev libbpf-dev bpftool libelf-dev zlib1g-dev
liblzma-dev libdw-dev libjson-c-dev libiberty-dev libdebuginfod-dev libmicrohttpd-dev pkg-config
binutils
procps"
# the tests: C++ and fuzzer targets, third-party programs and tools compared against;
# dpkg-dev for apt-get source (lz4's source package, tests/bench/lz4_build.sh); linux-perf
# the oracle for call stacks (tests/integration/test_stacks.py); debuginfod the server
# that tests/integration/test_names.py serves debug files from, nodejs (JIT frames) and
# rustc (Rust names) its programs
TEST_PKGS="g++ libclang-rt-14-dev bpftrace systemd util-linux iproute2 python3
systemtap-sdt-dev valgrind golang-go tmux prometheus curl chromium fonts-liberation
postgresql-15 openjdk-17-jre-headless dpkg-dev xz-utils linux-perf debuginfod nodejs rustc man-db cmake"

PKGS="$DEMO_PKGS $TEST_PKGS"
list=""
while [ $# -gt 0 ]; do
	case "$1" in
	--demo) PKGS="$DEMO_PKGS" ;;
	--list) list=1 ;;
	*) PKGS="$PKGS $1" ;;
	esac
	shift
done
if [ -n "$list" ]; then
	echo $PKGS
	exit 0
fi

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages:$missing; run as root (sudo make ...)" >&2
	exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
