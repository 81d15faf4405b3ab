#!/bin/bash
# The build from clean under make -jN (N = 2, 4, 8): every generated header is ordered
# before the objects that include it. Then `make install` into a temporary PREFIX (and a
# DESTDIR): the installed CLI reads the region definitions from that PREFIX, and DESTDIR
# appears in no installed path.
set -u
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
for n in 2 4 8; do
	start=$(date +%s)
	if ! make --no-print-directory -j$n O="$tmp/j$n" all > "$tmp/log$n" 2>&1; then
		echo "  FAILED make -j$n from clean:"; grep -E 'error|Error' "$tmp/log$n" | head -5
		fail=1
	else
		echo "make -j$n from clean: ok ($(( $(date +%s) - start )) s)"
	fi
	rm -rf "$tmp/j$n"
done

# As a user does: `make`, then `make install PREFIX=...` (the data path must follow).
prefix="$tmp/prefix"
if ! make --no-print-directory -j2 O="$tmp/inst" all > "$tmp/inst.log" 2>&1 ||
	! make --no-print-directory O="$tmp/inst" PREFIX="$prefix" install >> "$tmp/inst.log" 2>&1; then
	echo "  FAILED make install PREFIX=$prefix"; tail -5 "$tmp/inst.log"; exit 1
fi
py=/usr/bin/python3.11; [ -x "$py" ] || py=
if [ -z "$py" ]; then echo "  FAILED python3.11 is not installed (install-deps.sh installs it)"; exit 1; fi
out=$(FEATPROF_REGIONS_DIR= "$prefix/bin/featprof" list "$py" 2>&1)
if ! grep -q 'PythonGC' <<< "$out"; then
	echo "  FAILED installed featprof list $py found no CPython regions:"; echo "$out" | head -5
	fail=1
else
	echo "installed featprof list $py: $(grep -c . <<< "$out") lines, PythonGC present"
fi
# an in-process program from the installed files alone, as featprof.h's usage says: the
# runtime (pkg-config's ipsource) compiled once into the object
printf '#include "featprof.h"\nint main(void)\n{\n\tFP_BEGIN(r, "F");\n\tFP_END(r);\n\treturn 0;\n}\n' \
	> "$tmp/ip.c"
pc="env PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config"
if ! gcc -DFEATPROF_INPROCESS $($pc --cflags featprof) "$tmp/ip.c" \
	"$($pc --variable=ipsource featprof)" -o "$tmp/ip" -lpthread 2> "$tmp/ip.log" ||
	! "$tmp/ip" || ! readelf -n "$tmp/ip" | grep -q 'featprof'; then
	echo "  FAILED an in-process program from the installed header and runtime:"
	head -5 "$tmp/ip.log"; fail=1
else
	echo "installed: an in-process program built with pkg-config featprof's ipsource runs"
fi
# ... and by the in-process package: pkg-config featprof-inprocess, CMake's
# find_package(featprof) with featprof::inprocess (the runtime, libfeatprof_ip.a)
if ! gcc $($pc --cflags featprof-inprocess) "$tmp/ip.c" -o "$tmp/ip_pc" \
	$($pc --libs featprof-inprocess) 2> "$tmp/ip_pc.log" || ! "$tmp/ip_pc" ||
	! "$prefix/bin/featprof" list "$tmp/ip_pc" | grep -q 'in-process'; then
	echo "  FAILED pkg-config featprof-inprocess:"; head -5 "$tmp/ip_pc.log"; fail=1
else
	echo "installed: pkg-config --cflags --libs featprof-inprocess builds an in-process program"
fi
mkdir -p "$tmp/cm"
cp "$tmp/ip.c" "$tmp/cm/ip.c"
printf 'cmake_minimum_required(VERSION 3.13)\nproject(ip C)\nfind_package(featprof 0.1 REQUIRED)\n%s\n%s\n%s\n%s\n' \
	'add_executable(ip ip.c)' 'target_link_libraries(ip featprof::inprocess)' \
	'add_executable(plain ip.c)' 'target_link_libraries(plain featprof::featprof)' \
	> "$tmp/cm/CMakeLists.txt"
if ! (cmake -S "$tmp/cm" -B "$tmp/cm/b" -DCMAKE_PREFIX_PATH="$prefix" &&
	cmake --build "$tmp/cm/b") > "$tmp/cm.log" 2>&1 || ! "$tmp/cm/b/ip" ||
	! "$prefix/bin/featprof" list "$tmp/cm/b/ip" | grep -q 'in-process' ||
	"$prefix/bin/featprof" list "$tmp/cm/b/plain" | grep -q 'in-process'; then
	echo "  FAILED CMake find_package(featprof):"; tail -5 "$tmp/cm.log"; fail=1
else
	echo "installed: CMake find_package(featprof): featprof::inprocess and featprof::featprof"
fi
if ! strings "$prefix/bin/featprof" | grep -qx "$prefix/share/featprof/regions.d"; then
	echo "  FAILED the installed CLI does not name $prefix/share/featprof/regions.d"; fail=1
fi
# A staged install (a package build): DESTDIR prefixes the files, never the paths in them.
make --no-print-directory O="$tmp/inst" PREFIX=/usr DESTDIR="$tmp/stage" install > "$tmp/stage.log" 2>&1 ||
	{ echo "  FAILED make install DESTDIR=$tmp/stage PREFIX=/usr"; tail -5 "$tmp/stage.log"; exit 1; }
if grep -rlF "$tmp/stage" "$tmp/stage" > "$tmp/leaks"; then
	echo "  FAILED DESTDIR inside installed files:"; cat "$tmp/leaks"; fail=1
fi
if ! strings "$tmp/stage/usr/bin/featprof" | grep -qx /usr/share/featprof/regions.d; then
	echo "  FAILED PREFIX=/usr: the CLI does not read /usr/share/featprof/regions.d"; fail=1
fi
[ $fail = 0 ] && echo "build_install: -j2/-j4/-j8 from clean, PREFIX and DESTDIR installs ok"
exit $fail
