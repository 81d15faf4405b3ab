/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the running kernel offers featprofd, found from its BTF (daemon/kernel.c): the
 * mechanism used for each part, or why a part is unavailable.
 */
#ifndef FP_KERNEL_H
#define FP_KERNEL_H

struct json_object;

/* The kernel's mechanisms as a JSON object for status ({"release", "mechanisms":
 * {part: "what is used", ...}, "unavailable": {part: "why", ...}}); NULL: out of
 * memory. Read once, then the same object (a new reference each call). */
struct json_object *fp_kernel_mechanisms(int nop5_optimized);

#endif
