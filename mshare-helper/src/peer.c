/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "peer.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

/* The name of the process, or "?" if it cannot be read or it is gone. */
static void peer_read_comm(struct peer *p, int pidfd)
{
	char path[64];
	_cleanup_fclose_ FILE *f = NULL;
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };

	strcpy(p->comm, "?");
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)p->pid);
	f = fopen(path, "re");
	if (!f || !fgets(p->comm, sizeof(p->comm), f)) {
		strcpy(p->comm, "?");
		return;
	}
	p->comm[strcspn(p->comm, "\n")] = '\0';
	/* A pidfd turns readable when its process exits: then the pid may be
	 * another process's by now, and what was read may not be the peer's. */
	if (pidfd >= 0 && poll(&pfd, 1, 0) != 0)
		strcpy(p->comm, "?");
}

int peer_from_socket(int fd, struct peer *ret)
{
	_cleanup_close_ int pidfd = -1;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	gid_t *groups = NULL;
	struct peer p = {};

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return -errno;
	p.pid = cred.pid;
	p.uid = cred.uid;
	p.gid = cred.gid;

	/* ERANGE tells the size needed. */
	len = 0;
	for (;;) {
		gid_t *t;

		if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) == 0)
			break;
		if (errno != ERANGE) {
			free(groups);
			return -errno;
		}
		t = realloc(groups, len ?: 1);
		if (!t) {
			free(groups);
			return -ENOMEM;
		}
		groups = t;
	}
	p.groups = groups;
	p.n_groups = len / sizeof(gid_t);

	len = sizeof(pidfd);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) < 0)
		pidfd = -1; /* ENOPROTOOPT before Linux 6.5 */
	peer_read_comm(&p, pidfd);

	*ret = p;
	return 0;
}

int pidfd_is_alive(int pidfd)
{
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
	int n;

	do
		n = poll(&pfd, 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (pfd.revents & POLLNVAL)
		return -EBADF;
	return n == 0;
}

int pidfd_cgroup(int pidfd, pid_t pid, char **ret)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL, *path = NULL;
	size_t size = 0;
	char proc[64];
	ssize_t n;
	int k;

	snprintf(proc, sizeof(proc), "/proc/%d/cgroup", (int)pid);
	f = fopen(proc, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((n = getline(&line, &size, f)) > 0) {
		if (strncmp(line, "0::", 3) != 0)
			continue;
		line[strcspn(line, "\n")] = '\0';
		path = strdup(line + 3);
		if (!path)
			return -ENOMEM;
		break;
	}
	/* Only now: the file read was the pidfd's process's if it still lives. */
	k = pidfd_is_alive(pidfd);
	if (k <= 0)
		return k ?: -ESRCH;
	if (!path || path[0] != '/' || strstr(path, "/.."))
		return -EOPNOTSUPP;
	*ret = TAKE_PTR(path);
	return 0;
}

int peer_cgroup(int fd, char **ret)
{
	_cleanup_close_ int pidfd = -1;
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return -errno;
	len = sizeof(pidfd);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) < 0)
		return errno == ENOPROTOOPT ? -EOPNOTSUPP : errno == EINVAL ? -ESRCH : -errno;
	return pidfd_cgroup(pidfd, cred.pid, ret);
}

bool cgroup_is_below(const char *cgroup, const char *ancestor)
{
	size_t n = strlen(ancestor);

	if (streq(ancestor, "/"))
		return true;
	return strncmp(cgroup, ancestor, n) == 0 && (cgroup[n] == '\0' || cgroup[n] == '/');
}

void peer_done(struct peer *p)
{
	free(p->groups);
	p->groups = NULL;
	p->n_groups = 0;
}
