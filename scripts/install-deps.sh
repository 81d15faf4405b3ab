#!/bin/sh
# Install the Debian 12 packages that building, testing and the demo need.
# Idempotent: installs only what is missing, and runs apt-get update only then.
# Extra package names may be given as arguments (make bench adds bcc).
set -eu

PKGS="make gcc g++ clang llvm libc6-dev libbpf-dev bpftool libelf-dev zlib1g-dev
libjson-c-dev pkg-config binutils libclang-rt-14-dev bpftrace systemd procps
util-linux iproute2 python3 systemtap-sdt-dev valgrind golang-go tmux prometheus curl chromium fonts-liberation
postgresql-15 openjdk-17-jre-headless $*"

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
