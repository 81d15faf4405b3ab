// SPDX-License-Identifier: GPL-2.0
/*
 * Names people read. GCC and clang make copies of a function under names of their own,
 * the function's symbol with a suffix: .constprop.N (constants propagated into it),
 * .isra.N (scalar replacement of its arguments), .part.N (a part split out of it),
 * .cold (its unlikely code moved away), .lto_priv.N and .llvm.N (a local made unique at
 * link time), .clone.N; several may follow one another (.isra.0.constprop.0, .part.0.cold).
 * A symbol's version (__libc_start_main@@GLIBC_2.34, in .dynsym) is left out too.
 * Their time is the function's, so they are named as the function (perf report names
 * them apart; sample --stacks' JSON keeps the symbol, "symbol"). C++ and Rust symbols are
 * demangled by libiberty (the GNU toolchain's own demangler, Debian's libiberty-dev: the
 * Itanium C++ ABI and both Rust manglings, legacy and v0), which perf and gdb also use:
 * a demangler of our own would have to follow both languages' grammars as they change.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "demangle.h"

static const char *const clones[] = { "constprop", "isra", "part", "cold", "lto_priv",
				       "llvm", "clone", "localalias" };

/* The length of one clone suffix at s (".name" and ".N" after it where it takes one), 0
 * if s is none. */
static size_t one_suffix(const char *s)
{
	size_t k, n, d;

	if (s[0] != '.')
		return 0;
	for (k = 0; k < sizeof(clones) / sizeof(clones[0]); k++) {
		n = strlen(clones[k]);
		if (strncmp(s + 1, clones[k], n) || (s[1 + n] && s[1 + n] != '.'))
			continue;
		n++;
		if (s[n] == '.' && (d = strspn(s + n + 1, "0123456789")) > 0)
			n += 1 + d;	/* its number */
		return n;
	}
	return 0;
}

size_t fp_clone_base(const char *sym)
{
	size_t len = strcspn(sym, "@");	/* a symbol version (name@@GLIBC_2.34) left out */
	const char *dot = memchr(sym, '.', len);
	size_t n, at;

	/* the suffixes run to the end, else it is not a clone (a name with a dot) */
	for (; dot; dot = memchr(dot + 1, '.', len - (size_t)(dot + 1 - sym))) {
		for (at = (size_t)(dot - sym); at < len && (n = one_suffix(sym + at)); at += n)
			;
		if (at >= len)
			return (size_t)(dot - sym);
	}
	return len;
}

const char *fp_demangle(const char *sym, char *buf, size_t len)
{
	size_t base = fp_clone_base(sym);
	char *d = NULL, *tmp;

	if ((sym[0] == '_' && (sym[1] == 'Z' || sym[1] == 'R')) && (tmp = strndup(sym, base))) {
		d = cplus_demangle(tmp, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
		free(tmp);
	}
	if (d) {
		snprintf(buf, len, "%s", d);
		free(d);
		return buf;
	}
	if (base == strlen(sym))
		return sym;
	snprintf(buf, len, "%.*s", (int)base, sym);
	return buf;
}
