// SPDX-License-Identifier: GPL-2.0
/*
 * Access: a client may profile only a process it could ptrace itself.
 *
 * Root and CAP_SYS_PTRACE (from SO_PEERCRED and the peer's /proc/PID/status) may profile
 * anything. For everyone else the kernel decides: a thread of featprofd takes the
 * client's uid and gid as its file-system identity, drops every capability from its
 * effective set and opens /proc/PID/mem, which the kernel allows only if
 * ptrace_may_access(PTRACE_MODE_ATTACH_FSCREDS) does: the uids and gids, dumpability
 * (prctl(PR_SET_DUMPABLE, 0), setuid programs), capabilities, Yama and any other LSM —
 * the question ptrace(PTRACE_ATTACH) asks, with the file-system uid for the uid.
 * Credentials belong to a thread in Linux (setfsuid and capset are not broadcast), and
 * the thread ends with the check. A pidfd taken before and polled after makes the answer
 * the process's, not its pid's: a pid reused in between fails.
 *
 * Yama's relational mode (ptrace_scope 1) lets a process attach only to its descendants;
 * featprofd's thread is nobody's ancestor, so with Yama at 1 or above only root and
 * CAP_SYS_PTRACE clients may profile (a non-root `gdb -p` there is limited the same way).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/procfs.h"
#include "access.h"
#include "common/err.h"

#ifndef CAP_SYS_PTRACE
#define CAP_SYS_PTRACE 19
#endif

int fp_peer_read(int fd, struct fp_peer *p)
{
	socklen_t len = sizeof(p->cred);
	struct fp_procfs_status st;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &p->cred, &len))
		return -errno;
	p->cap_ptrace = !fp_procfs_status(p->cred.pid, &st) && st.have_cap &&
			(st.cap_eff & (1ULL << CAP_SYS_PTRACE));
	return 0;
}

int fp_peer_privileged(const struct fp_peer *p)
{
	return p->cred.uid == 0 || p->cap_ptrace;
}

uid_t fp_owner(pid_t pid)
{
	struct fp_procfs_status st;
	char path[64];
	struct stat sb;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (fp_procfs_status(pid, &st) || st.ruid != st.euid || st.euid != st.suid ||
	    stat(path, &sb) || sb.st_uid != st.ruid)
		return (uid_t)-1;
	return st.ruid;
}

struct ask {
	pid_t pid;
	uid_t uid;
	gid_t gid;
	int err;		/* 0: the kernel allowed it, else its errno */
};

static void *ask_kernel(void *arg)
{
	struct ask *a = arg;
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	char path[64];
	int fd;

	a->err = EPERM;
	/* the group first, while this thread may still change it */
	setfsgid(a->gid);
	setfsuid(a->uid);
	if ((gid_t)setfsgid((gid_t)-1) != a->gid || (uid_t)setfsuid((uid_t)-1) != a->uid)
		return NULL;	/* cannot take the client's identity: refuse */
	if (syscall(SYS_capget, &h, d))
		return NULL;
	d[0].effective = d[1].effective = 0;
	if (syscall(SYS_capset, &h, d))
		return NULL;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)a->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	a->err = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* Yama's ptrace_scope, 0 where Yama is not there. */
static int yama_scope(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int v = 0;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

int fp_may_trace(const struct fp_peer *p, pid_t pid, struct fp_err *e)
{
	struct ask a = { .pid = pid, .uid = p->cred.uid, .gid = p->cred.gid, .err = EPERM };
	struct fp_procfs_status st;
	pthread_t th;
	int pidfd, alive;

	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0 || fp_procfs_status(pid, &st)) {
		if (pidfd >= 0)
			close(pidfd);
		return fp_fail(e, ESRCH, "pid %d: no such process", (int)pid);
	}
	if (fp_peer_privileged(p)) {
		close(pidfd);
		return 0;
	}
	if (pthread_create(&th, NULL, ask_kernel, &a) == 0)
		pthread_join(th, NULL);
	alive = !syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0);
	close(pidfd);
	if (!alive)
		return fp_fail(e, ESRCH, "pid %d: no such process", (int)pid);
	if (!a.err)
		return 0;
	return fp_fail(e, EPERM, "pid %d: permission denied: you may profile only processes you "
		       "could ptrace (%s%s)", (int)pid, strerror(a.err),
		       yama_scope() ? "; Yama ptrace_scope allows root only" : "");
}
