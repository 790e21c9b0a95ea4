/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Who is at the other end of a unix socket: SO_PEERCRED (credentials at
 * connect() time), SO_PEERGROUPS (its supplementary groups) and, where the
 * kernel has it (Linux 6.5+), SO_PEERPIDFD, which pins the peer process so
 * that its name is read from the right process even if its pid is reused.
 */

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
