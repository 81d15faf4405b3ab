/* SPDX-License-Identifier: GPL-2.0 */
#ifndef FP_LOG_H
#define FP_LOG_H

enum { FP_LOG_ERR = 3, FP_LOG_WARN = 4, FP_LOG_INFO = 6, FP_LOG_DEBUG = 7 };

#include <stdarg.h>

extern int fp_log_level;
void fp_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
