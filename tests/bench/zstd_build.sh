#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# zstd (https://github.com/facebook/zstd, a real multi-threaded compressor whose codec is
# a shared library) with feature regions, built three ways: default, FEATPROF_INPROCESS,
# FEATPROF_SAMPLING (docs/REAL-PROGRAMS.md). Regions:
#   libzstd.so  match_finder [MatchFinder]  the block compressor (ZSTD_buildSeqStore)
#               entropy [Entropy]           ZSTD_entropyCompressSeqStore of a block
#               checksum [Checksum]         XXH64_update of a chunk (--check, the default)
#   zstd        read_input [IO]             AIO_ReadPool_fillBuffer in the compress loop
#               frontend_compress [Frontend] each ZSTD_compressStream2 call
# usage: zstd_build.sh ZSTD_SOURCE_DIR OUT_DIR   (OUT_DIR/{default,ip,sampled}/zstd and
#        libzstd.so.*; the executables find their library through an rpath);
#        FEATPROF_USDT=DIR takes featprof.h from DIR (an older one, for a before/after);
#        ZSTD_HOT=1 adds count [Count] around every ZSTD_count call (the match length of
#        a candidate: tens of millions of instances a run, a hot region);
#        ZSTD_VARIANTS="ip" builds only those of default, ip, sampled;
#        ZSTD_MODEL=1 names checksum's feature check, the option --check/--no-check
#        (tests/bench/real_model.py zstd)
set -eu
src=$(realpath "$1"); out=$(mkdir -p "$2" && realpath "$2")
usdt=$(realpath "${FEATPROF_USDT:-$(dirname "$0")/../../usdt}")	# another featprof.h: before/after
patch_tree() { # DIR: the regions, by line (the source's own statements kept)
	python3 - "$1" <<'PY'
import re, sys
d = sys.argv[1]
def edit(path, pairs, include):
    p = d + "/" + path
    s = open(p).read()
    for old, new, n in pairs:
        assert s.count(old) == n, (path, old[:40], s.count(old))
        s = s.replace(old, new)
    s = include + s
    open(p, "w").write(s)
call = "lastLLSize = blockCompressor(ms, &zc->seqStore, zc->blockState.nextCBlock->rep, src, srcSize);"
ent = """    cSize = ZSTD_entropyCompressSeqStore(&zc->seqStore,
            &zc->blockState.prevCBlock->entropy, &zc->blockState.nextCBlock->entropy,
            &zc->appliedParams,
            dst, dstCapacity,
            srcSize,
            zc->tmpWorkspace, zc->tmpWkspSize /* statically allocated in resetCCtx */,
            zc->bmi2);
"""
xxh = "    if (cctx->appliedParams.fParams.checksumFlag && srcSize)\n        XXH64_update(&cctx->xxhState, src, srcSize);\n"
edit("lib/compress/zstd_compress.c", [
    (call, "{ FP_BEGIN(match_finder, \"MatchFinder\"); " + call + " FP_END(match_finder); }", 2),
    (ent, "    FP_BEGIN(entropy, \"Entropy\");\n" + ent + "    FP_END(entropy);\n", 1),
    (xxh, xxh.replace("srcSize)\n", "srcSize) {\n        FP_BEGIN(checksum, \"Checksum\");\n")
     + "        FP_END(checksum);\n    }\n", 1)], '#include "featprof.h"\n')
rd = "        size_t const inSize = AIO_ReadPool_fillBuffer(ress.readCtx, ZSTD_CStreamInSize());\n"
cs = "            CHECK_V(stillToFlush, ZSTD_compressStream2(ress.cctx, &outBuff, &inBuff, directive));\n"
edit("programs/fileio.c", [
    (rd, "        size_t inSize;\n        FP_BEGIN(read_input, \"IO\");\n" +
     rd.replace("size_t const inSize =", "inSize =") + "        FP_END(read_input);\n", 1),
    (cs, "            FP_BEGIN(frontend_compress, \"Frontend\");\n" + cs +
     "            FP_END(frontend_compress);\n", 1)], '#include "featprof.h"\n')
PY
}
for b in ${ZSTD_VARIANTS:-default ip sampled}; do
	case $b in default) def= ;; ip) def=-DFEATPROF_INPROCESS ;; sampled) def=-DFEATPROF_SAMPLING ;; esac
	t="$out/$b"; rm -rf "$t"; mkdir -p "$t"
	cp -r "$src/lib" "$src/programs" "$t/"
	patch_tree "$t"
	if [ "${ZSTD_MODEL:-}" = 1 ]; then
		sed -i 's/FP_BEGIN(checksum, "Checksum")/FP_BEGIN(checksum, "check")/' \
			"$t/lib/compress/zstd_compress.c"
	fi
	if [ "${ZSTD_HOT:-}" = 1 ]; then
		python3 - "$t/lib/compress/zstd_compress_internal.h" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
old = "MEM_STATIC size_t ZSTD_count(const BYTE* pIn, const BYTE* pMatch, const BYTE* const pInLimit)\n{"
assert s.count(old) == 1
s = s.replace(old, old.replace("ZSTD_count(", "ZSTD_count_body(").replace("\n{", "\n{", 1))
wrap = ("\nMEM_STATIC size_t ZSTD_count(const BYTE* pIn, const BYTE* pMatch, "
        "const BYTE* const pInLimit)\n{\n    size_t r;\n    FP_BEGIN(count, \"Count\");\n"
        "    r = ZSTD_count_body(pIn, pMatch, pInLimit);\n    FP_END(count);\n    return r;\n}\n")
i = s.index("/** ZSTD_count_2segments()")
s = s[:i] + wrap + "\n" + s[i:]
s = '#include "featprof.h"\n' + s
open(p, "w").write(s)
PY
	fi
	if [ $b = ip ] && [ -f "$usdt/featprof_ip.c" ]; then	# the runtime once per object
		cp "$usdt/featprof_ip.c" "$t/lib/common/featprof_ip.c"
		cp "$usdt/featprof_ip.c" "$t/programs/featprof_ip.c"
	fi
	flags="-O2 -g -I$usdt $def -Wno-declaration-after-statement"
	make -s -C "$t/lib" -j2 libzstd MOREFLAGS="$flags" > "$t/build.log" 2>&1
	make -s -C "$t/programs" -j2 zstd-dll MOREFLAGS="$flags" \
		LDFLAGS="-L$t/lib -Wl,-rpath,$t/lib" >> "$t/build.log" 2>&1
	ldd "$t/programs/zstd" | grep -q "$t/lib/libzstd" || { echo "$b: not linked to its libzstd"; exit 1; }
	echo "$b: $t/programs/zstd ($(readelf -n "$t/lib/libzstd.so" | grep -c 'Provider: featprof') sites in libzstd.so)"
done
