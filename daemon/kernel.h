/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the running kernel offers featprofd, found from its BTF (daemon/kernel.c): the
 * mechanism used for each part, or why a part is unavailable.
 */
#ifndef FP_KERNEL_H
#define FP_KERNEL_H

#include <stddef.h>

struct json_object;

/* The kernel's mechanisms as a JSON object for status ({"release", "mechanisms":
 * {part: "what is used", ...}, "unavailable": {part: "why", ...}}); NULL: out of
 * memory. Read once, then the same object (a new reference each call). */
struct json_object *fp_kernel_mechanisms(int nop5_optimized);
/* What featprofd cannot run without that this kernel lacks, as one line in msg (the
 * parts and the kernel each arrived in). 0: nothing missing. */
int fp_kernel_missing(char *msg, size_t msglen);

#endif
