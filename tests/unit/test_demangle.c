// SPDX-License-Identifier: GPL-2.0
/* common/demangle.c alone: clone suffixes folded, versions left out, C++ and Rust (legacy
 * and v0) demangled, C names and dotted names that are not clones kept. */
#include <stdio.h>
#include <string.h>

#include "common/demangle.h"

static int fails;

static void want(const char *sym, const char *name)
{
	char buf[512];
	const char *got = fp_demangle(sym, buf, sizeof(buf));

	if (strcmp(got, name)) {
		printf("FAIL: %s -> '%s', want '%s'\n", sym, got, name);
		fails++;
	}
}

int main(void)
{
	want("main", "main");
	want("crc32_block.constprop.0", "crc32_block");
	want("ZSTD_compressBlock_internal.isra.0.constprop.0", "ZSTD_compressBlock_internal");
	want("deflate_slow.part.0.cold", "deflate_slow");
	want("foo.lto_priv.3", "foo");
	want("bar.llvm.12345", "bar");
	want("__libc_start_main@@GLIBC_2.34", "__libc_start_main");
	want("memcpy@GLIBC_2.2.5", "memcpy");
	want("a.b", "a.b");		/* a dot that is no clone's */
	want("x.coldish", "x.coldish");
	want("_ZN7shipped6KernelILi2EE3runEm", "shipped::Kernel<2>::run(unsigned long)");
	want("_ZN7shipped6KernelILi2EE3runEm.cold", "shipped::Kernel<2>::run(unsigned long)");
	want("_ZZ4mainENKUlvE_clEv", "main::{lambda()#1}::operator()() const");
	want("_ZN4core3fmt9Formatter3pad17h8b2cd54d0ba2f5e6E", "core::fmt::Formatter::pad");
	want("_RNvCs1234_7mycrate4main", "mycrate::main");
	want("_Zinvalid", "_Zinvalid");	/* not a mangling: kept */
	if (fp_clone_base("f.isra.0") != 1 || fp_clone_base("g") != 1) {
		printf("FAIL: fp_clone_base\n");
		fails++;
	}
	printf("test_demangle: %s\n", fails ? "FAILED" : "ok");
	return fails != 0;
}
