/* SPDX-License-Identifier: GPL-2.0 */
/* Who may profile what: the peer's credentials against the target's (one /proc reader). */
#ifndef FP_ACCESS_H
#define FP_ACCESS_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "common/err.h"

struct fp_peer {
	struct ucred cred;	/* SO_PEERCRED */
	int cap_ptrace;		/* CAP_SYS_PTRACE in the peer's effective set */
};

/* Fills the peer's credentials from a connected socket. 0 or -errno. */
int fp_peer_read(int fd, struct fp_peer *p);
/* Root or CAP_SYS_PTRACE. */
int fp_peer_privileged(const struct fp_peer *p);
/*
 * Whether the peer could ptrace pid: privileged, or the same real, effective and saved
 * uid as the target's with the target dumpable. 0, -ESRCH (no such process) or -EPERM;
 * e gets a one-line reason.
 */
int fp_may_trace(const struct fp_peer *p, pid_t pid, struct fp_err *e);
/* The one unprivileged uid that could ptrace pid now (same real, effective and saved uid,
 * dumpable), or (uid_t)-1 when only the privileged could. */
uid_t fp_owner(pid_t pid);

#endif
