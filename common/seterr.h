/* SPDX-License-Identifier: GPL-2.0 */
/* The one-line error of the note and definition parsers (err may be NULL). */
#ifndef FP_SETERR_H
#define FP_SETERR_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

static inline void seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

#endif
