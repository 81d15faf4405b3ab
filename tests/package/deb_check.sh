#!/bin/bash
# The Debian package as a user gets it (make deb-check, after make deb):
#  1. lintian: no errors (the warnings and notes printed);
#  2. a clean Debian 12 root by debootstrap (minbase), where `apt install ./featprof_*.deb`
#     pulls what the package depends on from the archive;
#  3. the package's files and its group: featprof(1), featprofd(8), featprof.h(3),
#     completion, the units (the socket root:featprof 0660), the pkg-config files;
#  4. the README's quick start by a member of group featprof, without root: a program
#     with a region built by pkg-config, then `featprof run` through featprofd (started
#     by root as the README's non-systemd line does: `featprofd --group featprof`); the
#     in-process build by pkg-config featprof-inprocess; a user outside the group refused.
# usage: deb_check.sh DEB_DIR   (root; the network for debootstrap and apt).
# FP_DEB_BASE=DIR: copy a debootstrapped root from DIR instead of making one (reruns).
set -u
DEB_DIR=$(cd "${1:?usage: deb_check.sh DEB_DIR}" && pwd)
MIRROR=${FP_DEB_MIRROR:-http://deb.debian.org/debian}
deb=$(ls "$DEB_DIR"/featprof_*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || { echo "deb_check: no featprof_*.deb in $DEB_DIR (make deb)"; exit 1; }
fail() { echo "deb_check: FAILED: $*"; exit 1; }

echo "== lintian $(lintian --version | awk '{print $2}') on ${deb##*/}"
lintian --info "$deb" > "$DEB_DIR/lintian.txt" 2>&1
grep -E '^[EWI]: ' "$DEB_DIR/lintian.txt" | sed 's/^/   /'
errors=$(grep -c '^E: ' "$DEB_DIR/lintian.txt")
echo "   $errors errors, $(grep -c '^W: ' "$DEB_DIR/lintian.txt") warnings"
[ "$errors" = 0 ] || fail "lintian reports $errors errors"

R=$DEB_DIR/root
featprofd_pid=""
cleanup() {
	[ -n "$featprofd_pid" ] && kill "$featprofd_pid" 2>/dev/null && sleep 1
	for m in dev/pts dev sys proc; do umount -l "$R/$m" 2>/dev/null; done
	rm -rf "$R"
}
trap cleanup EXIT
rm -rf "$R"
start=$(date +%s)
if [ -n "${FP_DEB_BASE:-}" ]; then
	cp -a "$FP_DEB_BASE" "$R" || fail "copy of $FP_DEB_BASE"
else
	debootstrap --variant=minbase bookworm "$R" "$MIRROR" > "$DEB_DIR/debootstrap.log" 2>&1 ||
		{ tail -20 "$DEB_DIR/debootstrap.log"; fail "debootstrap bookworm from $MIRROR"; }
fi
echo "== a clean Debian 12 root ($(du -sm "$R" | cut -f1) MiB, $(( $(date +%s) - start )) s)"
mount -t proc proc "$R/proc" && mount --rbind /sys "$R/sys" && mount --bind /dev "$R/dev" &&
	mount --bind /dev/pts "$R/dev/pts" || fail "mounts in the root"
cp /etc/resolv.conf "$R/etc/resolv.conf"
cp "$deb" "$R/tmp/"
in_root() { chroot "$R" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
	LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }

# the package and what a user builds with (the quick start's cc; pkg-config is the
# package's Recommends)
start=$(date +%s)
in_root apt-get update -q > "$DEB_DIR/apt.log" 2>&1 &&
	in_root apt-get install -y -q "/tmp/${deb##*/}" gcc libc6-dev >> "$DEB_DIR/apt.log" 2>&1 ||
	{ tail -20 "$DEB_DIR/apt.log"; fail "apt install ./${deb##*/} in the clean root"; }
echo "== apt install ./${deb##*/}: $(in_root dpkg-query -W -f='${Version}' featprof)," \
	"$(( $(date +%s) - start )) s"

for f in /usr/bin/featprof /usr/sbin/featprofd /usr/include/featprof.h \
	/usr/share/man/man1/featprof.1.gz /usr/share/man/man8/featprofd.8.gz \
	/usr/share/man/man3/featprof.h.3.gz /usr/share/bash-completion/completions/featprof \
	/lib/systemd/system/featprofd.socket /lib/systemd/system/featprofd.service; do
	[ -e "$R$f" ] || fail "$f not installed"
done
grep -q '^SocketGroup=featprof$' "$R/lib/systemd/system/featprofd.socket" ||
	fail "featprofd.socket's group is not featprof"
in_root getent group featprof > /dev/null || fail "no group featprof after install"
for pc in featprof featprof-inprocess; do
	in_root pkg-config --exists "$pc" || fail "pkg-config $pc"
done
pkgver=$(in_root dpkg-query -W -f='${Version}' featprof)
in_root featprof --version | grep -q "featprof ${pkgver%%-*}\b" ||
	fail "the package's version $pkgver is not featprof's ($(in_root featprof --version))"
echo "== files, units and group featprof: ok ($(in_root featprof --version))"

in_root useradd -m -G featprof alice || fail "useradd alice"
in_root useradd -m bob || fail "useradd bob"
chroot "$R" /usr/sbin/featprofd --group featprof > "$DEB_DIR/featprofd.log" 2>&1 &
featprofd_pid=$!
for _ in $(seq 120); do
	[ -S "$R/run/featprof/featprofd.sock" ] && break
	kill -0 $featprofd_pid 2>/dev/null || { cat "$DEB_DIR/featprofd.log"; fail "featprofd exited"; }
	sleep 0.5
done
[ -S "$R/run/featprof/featprofd.sock" ] || fail "featprofd did not listen in 60 s"
echo "== featprofd --group featprof: $(stat -c '%U:%G %a' "$R/run/featprof/featprofd.sock")"

# the README's quick start, as alice (group featprof, not root)
cat > "$R/home/alice/prog.c" <<'EOF'
#include <featprof.h>
#include <stdio.h>

static volatile unsigned long sink;

static void parse(int n)
{
	FP_BEGIN(parse, "Parser");
	for (int i = 0; i < n * 1000; i++)
		sink += (unsigned long)i * i;
	FP_END(parse);
}

int main(void)
{
	for (int i = 0; i < 2000; i++)
		parse(100);
	printf("done %lu\n", sink);
	return 0;
}
EOF
chmod 644 "$R/home/alice/prog.c"
as_alice() { in_root runuser -u alice -- sh -c "cd /home/alice && $1"; }
out=$(as_alice 'cc -O2 -o prog prog.c $(pkg-config --cflags featprof) && featprof run -- ./prog' 2>&1)
rc=$?
echo "$out" | sed 's/^/   alice$ /'
[ $rc = 0 ] || fail "featprof run as a member of featprof: exit $rc"
grep -q '^done ' <<< "$out" || fail "the program's own output missing"
grep -qE '^ *parse .*[0-9]' <<< "$out" || fail "no time for region parse in featprof run's table"
grep -q 'Parser' <<< "$out" || fail "no feature Parser in featprof run's table"

out=$(as_alice 'cc -O2 -o prog_ip prog.c $(pkg-config --cflags --libs featprof-inprocess) &&
	featprof run -- ./prog_ip' 2>&1)
rc=$?
echo "$out" | tail -n 4 | sed 's/^/   alice$ /'
[ $rc = 0 ] || fail "the in-process build (pkg-config featprof-inprocess) and its run: exit $rc"
grep -qE '^ *parse .*[0-9]' <<< "$out" || fail "no time for parse in the in-process build's run"

out=$(in_root runuser -u bob -- featprof status 2>&1)
rc=$?
echo "   bob$ featprof status: exit $rc: $(head -1 <<< "$out")"
[ $rc != 0 ] && grep -qi 'permission' <<< "$out" || fail "a user outside group featprof was not refused"
echo "deb_check: ok"
