/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one error channel. A function that can fail returns 0 (or a count) on success and
 * -errno on failure, and fills the caller's error record once, where the failure is
 * known: the errno it returns and a one-line message. The first failure recorded stays,
 * so a caller that fails because a callee did returns the callee's code and keeps its
 * message; a caller that handles a failure and goes on another way clears the record
 * (fp_err_clear). featprofd turns the code into the protocol's status in one place
 * (fp_status_of, common/protocol.h), so each code below means one thing:
 *   EINVAL a malformed or out-of-range request (or input file); EBADRQC an unknown
 *   verb; EMSGSIZE a line too long; ESRCH no such process (or it exited); EPERM/EACCES
 *   not allowed; ENODATA a process or file without featprof probes; ENOENT a name (a
 *   region, feature, function) the target does not have; ENOTCONN nothing attached by
 *   that name; EBUSY/EUSERS a limit reached or a resource taken; EOPNOTSUPP something
 *   this kernel or build cannot do; anything else is internal (ENOMEM, EIO, ...).
 * A record may be NULL: the failure is then only returned.
 */
#ifndef FP_ERR_H
#define FP_ERR_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#define FP_ERR_MSG 512

struct fp_err {
	int code;		/* errno of the first failure recorded, 0: none */
	char msg[FP_ERR_MSG];	/* its one line */
};

/* Records a failure (code: a positive errno) unless one is recorded already; returns
 * -code, for "return fp_fail(e, EINVAL, ...)". */
static inline int fp_fail(struct fp_err *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline int fp_fail(struct fp_err *e, int code, const char *fmt, ...)
{
	va_list ap;

	if (e && !e->code) {
		e->code = code > 0 ? code : EIO;
		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
		va_end(ap);
	}
	return code > 0 ? -code : -EIO;
}

/* Forgets a recorded failure (one the caller handled: it tries another way). */
static inline void fp_err_clear(struct fp_err *e)
{
	if (e) {
		e->code = 0;
		e->msg[0] = 0;
	}
}

#endif
