#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lz4 (Debian 12's source package, lz4 1.9.4: a real configurable compressor nobody here
# wrote) with feature regions named by the options that switch them on, built
# FEATPROF_INPROCESS, for featprof model (docs/MODELS.md, tests/integration/
# test_real_models.py). Regions, by wrapping lz4's own statements:
#   compress_block [Compress]   the block compressor call in LZ4F_makeBlock (fast or HC:
#                               the level, a one-of option no feature names)
#   block_check [bcrc]          XXH32 of each compressed block (-BX: block checksums)
#   content_check [crc]         XXH32_update of the content (on by default;
#                               --no-frame-crc switches it off)
#   read_input [IO]             each fread of the compress loop
# usage: lz4_build.sh CACHE_DIR OUT   (CACHE_DIR keeps the source package; OUT/lz4)
# The source comes from Debian's mirror through apt (a deb-src list of its own in
# CACHE_DIR, so the system's sources stay as they are).
set -eu
cache=$(mkdir -p "$1" && realpath "$1"); out=$(mkdir -p "$(dirname "$2")" && realpath "$2")
usdt=$(realpath "$(dirname "$0")/../../usdt")
if [ ! -f "$cache/lz4_1.9.4.orig.tar.gz" ]; then
	mkdir -p "$cache/apt/lists/partial"
	printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\n%s\n%s\n' \
		'Components: main' 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' \
		> "$cache/apt/src.sources"
	aptopts=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$cache/apt"
		 -o "Dir::State::Lists=$cache/apt/lists" -o APT::Sandbox::User=root)
	apt-get -q "${aptopts[@]}" update >/dev/null
	(cd "$cache" && apt-get -q "${aptopts[@]}" source --download-only lz4=1.9.4-1 >/dev/null)
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -C "$work" -xzf "$cache/lz4_1.9.4.orig.tar.gz"
src="$work/lz4-1.9.4"
python3 - "$src" <<'PY'
import sys
d = sys.argv[1]
def edit(path, pairs):
    p = d + "/" + path
    s = open(p).read()
    for old, new in pairs:
        assert s.count(old) == 1, (path, old[:50], s.count(old))
        s = s.replace(old, new)
    open(p, "w").write('#include "featprof.h"\n' + s)
comp = """    cSize = (U32)compress(lz4ctx, (const char*)src, (char*)(cSizePtr+BHSize),
                          (int)(srcSize), (int)(srcSize-1),
                          level, cdict);
"""
bchk = """        U32 const crc32 = XXH32(cSizePtr+BHSize, cSize, 0);  /* checksum of compressed data */
"""
cchk = """        (void)XXH32_update(&(cctxPtr->xxh), srcBuffer, srcSize);
"""
edit("lib/lz4frame.c", [
    (comp, "    FP_BEGIN(compress_block, \"Compress\");\n" + comp +
     "    FP_END(compress_block);\n"),
    (bchk, "        U32 crc32;\n        FP_BEGIN(block_check, \"bcrc\");\n" +
     bchk.replace("U32 const crc32 =", "crc32 =") + "        FP_END(block_check);\n"),
    (cchk, "    {\n        FP_BEGIN(content_check, \"crc\");\n" + cchk +
     "        FP_END(content_check);\n    }\n")])
rd = """            readSize  = fread(srcBuffer, (size_t)1, (size_t)blockSize, srcFile);
            filesize += readSize;
"""
edit("programs/lz4io.c", [
    (rd, "            FP_BEGIN(read_input, \"IO\");\n" + rd.split("\n")[0] + "\n" +
     "            FP_END(read_input);\n            filesize += readSize;\n")])
PY
cp "$usdt/featprof_ip.c" "$src/programs/featprof_ip.c"
cc -O2 -DFEATPROF_INPROCESS -I"$usdt" -I"$src/lib" "$src"/lib/lz4.c "$src"/lib/lz4hc.c \
	"$src"/lib/lz4frame.c "$src"/lib/xxhash.c "$src"/programs/lz4cli.c \
	"$src"/programs/lz4io.c "$src"/programs/bench.c "$src"/programs/datagen.c \
	"$src"/programs/featprof_ip.c -o "$out" -lpthread
