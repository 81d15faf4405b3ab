/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * featprof_abi.h - the probe ABI under the names featprofd's code uses; featprofd alone
 * includes this (a program includes featprof.h, which keeps these under the FEATPROF_
 * prefix, or out of a plain build altogether: the in-process layout's FP_IP_*).
 */
#ifndef FEATPROF_ABI_H
#define FEATPROF_ABI_H

#define FEATPROF_ABI 1
#include "featprof.h"

#define FP_NOTE_TYPE_SITE FEATPROF_ABI_NOTE_TYPE_SITE
#define FP_KIND_BEGIN FEATPROF_ABI_KIND_BEGIN
#define FP_KIND_END FEATPROF_ABI_KIND_END
#define FP_SHAPE_NOP1 FEATPROF_SHAPE_NOP1
#define FP_SHAPE_SHIELDED FEATPROF_SHAPE_SHIELDED
#define FP_SHIELD_LEN FEATPROF_ABI_SHIELD_LEN
#define FP_SHIELD_NOP5 FEATPROF_ABI_SHIELD_NOP5
#define FP_TLS_MAGIC FEATPROF_ABI_TLS_MAGIC
#define FP_TLS_DEPTH FEATPROF_ABI_TLS_DEPTH
#define FP_TLS_ABI_VERSION FEATPROF_ABI_TLS_VERSION
#define FP_NOTE_TYPE_TLS FEATPROF_ABI_NOTE_TYPE_TLS
#define FP_GATE_PROBE FEATPROF_ABI_GATE_PROBE

#endif
