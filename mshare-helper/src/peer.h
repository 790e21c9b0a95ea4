/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Who is at the other end of a unix socket: SO_PEERCRED (credentials at
 * connect() time), SO_PEERGROUPS (its supplementary groups) and, where the
 * kernel has it (Linux 6.5+), SO_PEERPIDFD, which pins the peer process so
 * that its name is read from the right process even if its pid is reused.
 */

#include <stdbool.h>
#include <sys/types.h>

#include "policy.h"

#define PEER_COMM_MAX 16

struct peer {
	pid_t pid;
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	size_t n_groups;
	char comm[PEER_COMM_MAX + 2]; /* "?" when it cannot be told */
};

int peer_from_socket(int fd, struct peer *ret);

/*
 * Whether the process of pidfd has not exited: 1, 0 or -errno. Unlike
 * pidfd_send_signal(0) it needs no permission to signal the process (the
 * daemon has no CAP_KILL). A pid is not reused before its process has
 * exited, so what was read by pid before a 1 was that process's.
 */
int pidfd_is_alive(int pidfd);

/*
 * The cgroup (v2, as /proc/PID/cgroup shows it to us, "/system.slice/...")
 * of the process pidfd refers to, pid being its pid in our pid namespace.
 * The pidfd is what makes this sound: the file is read by pid, and the
 * answer counts only if the process is still alive afterwards, so a pid
 * reused in between is never mistaken for it. -ESRCH if it exited,
 * -EOPNOTSUPP without a cgroup v2 line or for a cgroup outside our cgroup
 * namespace (a path with ".." components).
 */
int pidfd_cgroup(int pidfd, pid_t pid, char **ret);
/* The cgroup of the process at the other end of fd (SO_PEERPIDFD, Linux
 * 6.5+); -EOPNOTSUPP where the kernel cannot pin the peer. */
int peer_cgroup(int fd, char **ret);
/* Whether cgroup is ancestor or the same as, or below it. */
bool cgroup_is_below(const char *cgroup, const char *ancestor);
void peer_done(struct peer *p);

static inline struct peer_identity peer_identity(const struct peer *p)
{
	return (struct peer_identity){
		.uid = p->uid,
		.gid = p->gid,
		.groups = p->groups,
		.n_groups = p->n_groups,
	};
}
