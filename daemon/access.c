// SPDX-License-Identifier: GPL-2.0
/*
 * Access: a client may profile only a process it could ptrace itself. Decided from the
 * peer's SO_PEERCRED credentials and /proc/PID/status of both sides; /proc/PID belongs
 * to root while a process is not dumpable, which is how dumpability is seen.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include "access.h"

struct proc_status {
	unsigned ruid, euid, suid;
	unsigned long long cap_eff;
	int have_uid, have_cap;
};

static int proc_status(pid_t pid, struct proc_status *st)
{
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	st->have_uid = st->have_cap = 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Uid: %u %u %u", &st->ruid, &st->euid, &st->suid) == 3)
			st->have_uid = 1;
		else if (sscanf(line, "CapEff: %llx", &st->cap_eff) == 1)
			st->have_cap = 1;
	}
	fclose(f);
	return st->have_uid ? 0 : -ESRCH;
}

int fp_peer_read(int fd, struct fp_peer *p)
{
	socklen_t len = sizeof(p->cred);
	struct proc_status st;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &p->cred, &len))
		return -errno;
	p->cap_ptrace = !proc_status(p->cred.pid, &st) && st.have_cap &&
			(st.cap_eff & (1ULL << 19));	/* CAP_SYS_PTRACE */
	return 0;
}

int fp_peer_privileged(const struct fp_peer *p)
{
	return p->cred.uid == 0 || p->cap_ptrace;
}

uid_t fp_owner(pid_t pid)
{
	struct proc_status st;
	char path[64];
	struct stat sb;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (proc_status(pid, &st) || st.ruid != st.euid || st.euid != st.suid ||
	    stat(path, &sb) || sb.st_uid != st.ruid)
		return (uid_t)-1;
	return st.ruid;
}

int fp_may_trace(const struct fp_peer *p, pid_t pid, char *why, size_t whylen)
{
	struct proc_status st;
	char path[64];
	struct stat sb;
	uid_t u = p->cred.uid;

	if (proc_status(pid, &st)) {
		snprintf(why, whylen, "pid %d: no such process", (int)pid);
		return -ESRCH;
	}
	if (fp_peer_privileged(p))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (st.ruid == u && st.euid == u && st.suid == u && !stat(path, &sb) && sb.st_uid == u)
		return 0;
	snprintf(why, whylen, "pid %d: permission denied: you may profile only processes you "
		 "could ptrace", (int)pid);
	return -EPERM;
}
