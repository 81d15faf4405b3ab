#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# pigz (https://github.com/madler/pigz, a real multi-threaded gzip nobody here wrote;
# snapshot 2.8) with feature regions, built FEATPROF_INPROCESS, for featprof model
# (docs/MODELS.md, tests/bench/real_model.py). Regions, by wrapping pigz's own statements:
#   compress [Compress]     each deflate() call: in the compress threads (-p 2 and more)
#                           and in single_compress (-p 1); the level, --independent
#                           and --zlib act on it, no feature names them
#   check [Check]           the check value of the input: crc32 (gzip) or adler32
#                           (--zlib), per block in a compress thread or per chunk in
#                           single_compress
#   read_input [IO]         readn(): every read of the input
#   write_output [IO]       writen(): every write of the output
# usage: pigz_build.sh PIGZ_SOURCE_DIR OUT   (OUT/pigz)
set -eu
src=$(realpath "$1"); out=$(mkdir -p "$(dirname "$2")" && realpath "$2")
usdt=$(realpath "$(dirname "$0")/../../usdt")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$src"/. "$work"/
python3 - "$work/pigz.c" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
def sub(old, new, n=1):
    global s
    assert s.count(old) == n, (old[:50], s.count(old))
    s = s.replace(old, new)
# the compress threads' deflate (deflate_engine) and single_compress's (DEFLATE_WRITE)
sub("        (void)deflate(strm, flush);\n        out->len",
    "        FP_BEGIN(compress, \"Compress\");\n        (void)deflate(strm, flush);\n"
    "        FP_END(compress);\n        out->len")
sub("            (void)deflate(strm, flush); \\\n",
    "            FP_BEGIN(compress, \"Compress\"); \\\n"
    "            (void)deflate(strm, flush); \\\n"
    "            FP_END(compress); \\\n")
# the check value: a compress thread's, of its block
chk = """            check = CHECK(0L, Z_NULL, 0);
            while (len > MAXP2) {
                check = CHECK(check, next, MAXP2);
                len -= MAXP2;
                next += MAXP2;
            }
            check = CHECK(check, next, (unsigned)len);
"""
sub(chk, "            FP_BEGIN(check, \"Check\");\n" + chk + "            FP_END(check);\n")
# single_compress's, of each chunk it deflates
one = "                check = CHECK(check, strm->next_in, strm->avail_in);\n"
sub(one, "                FP_BEGIN(check, \"Check\");\n" + one +
    "                FP_END(check);\n")
one = "            got = left;\n            check = CHECK(check, strm->next_in, strm->avail_in);\n"
sub(one, one.replace("            check", "            FP_BEGIN(check, \"Check\");\n"
                     "            check") + "            FP_END(check);\n")
# every read and write
sub("local size_t readn(int desc, unsigned char *buf, size_t len) {\n",
    "local size_t readn_(int desc, unsigned char *buf, size_t len);\n"
    "local size_t readn(int desc, unsigned char *buf, size_t len) {\n"
    "    size_t got;\n\n"
    "    FP_BEGIN(read_input, \"IO\");\n"
    "    got = readn_(desc, buf, len);\n"
    "    FP_END(read_input);\n"
    "    return got;\n"
    "}\n"
    "local size_t readn_(int desc, unsigned char *buf, size_t len) {\n")
sub("local size_t writen(int desc, void const *buf, size_t len) {\n",
    "local size_t writen_(int desc, void const *buf, size_t len);\n"
    "local size_t writen(int desc, void const *buf, size_t len) {\n"
    "    size_t put;\n\n"
    "    FP_BEGIN(write_output, \"IO\");\n"
    "    put = writen_(desc, buf, len);\n"
    "    FP_END(write_output);\n"
    "    return put;\n"
    "}\n"
    "local size_t writen_(int desc, void const *buf, size_t len) {\n")
open(p, "w").write('#include "featprof.h"\n' + s)
PY
cp "$usdt/featprof_ip.c" "$work/featprof_ip.c"
cc -O3 -DFEATPROF_INPROCESS -DNOZOPFLI -I"$usdt" "$work"/pigz.c "$work"/yarn.c \
	"$work"/try.c "$work"/featprof_ip.c -o "$out" -lz -lpthread -lm
echo "pigz: $out ($(readelf -n "$out" | grep -c "Provider: featprof") featprof notes)"
