#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Writes a C target with N regions (2N sites) over 10 features, for attach/scale
measurements. usage: gen_regions.py N > many.c"""
import sys

n = int(sys.argv[1])
print('#include <stdio.h>\n#include <unistd.h>\n#include "featprof.h"\n')
print("static volatile unsigned long sink;")
for i in range(n):
    print('__attribute__((noinline)) static void f%d(void) { FP_BEGIN(r%d, "F%d"); sink += %d; '
          'FP_END(r%d); }' % (i, i, i % 10, i, i))
print("int main(void) {\n\tprintf(\"ready %d\\n\", (int)getpid());\n\tfflush(stdout);\n"
      "\tfor (;;) {")
for i in range(n):
    print("\t\tf%d();" % i)
print("\t\tusleep(1000);\n\t}\n}")
