// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The in-process runtime (usdt/featprof_inprocess.h) of a FEATPROF_INPROCESS build: add
 * this file to the sources of each object that has regions (the executable, each shared
 * library), once. Every other translation unit, whatever header brings featprof.h in,
 * then carries only its sites and calls this object's copy. Without it the link fails
 * with "undefined reference to featprof_ip_begin".
 */
#ifndef FEATPROF_INPROCESS
#define FEATPROF_INPROCESS
#endif
#define FEATPROF_IP_RUNTIME
#include "featprof.h"
