/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names people read (common/demangle.c): a C++ or Rust symbol demangled, a compiler's
 * clone of a function (.constprop.N, .isra.N, .part.N, .cold, ...) named as the function.
 */
#ifndef FP_DEMANGLE_H
#define FP_DEMANGLE_H

#include <stddef.h>

/* Symbol sym as people read it, into buf (len bytes): its clone suffixes left out, then
 * demangled where it is a C++ (Itanium ABI) or Rust (legacy or v0) symbol. Returns buf,
 * or sym itself where nothing changes (a C name). */
const char *fp_demangle(const char *sym, char *buf, size_t len);
/* The length of sym without its clone suffixes (strlen(sym) where it has none). */
size_t fp_clone_base(const char *sym);

#endif
