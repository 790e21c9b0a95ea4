/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Descriptors passed over AF_UNIX sockets (SCM_RIGHTS), one message with
 * its descriptors at a time: the one implementation for the daemon, its
 * clients, libmshare's mshare_request() and the test tools.
 */

#include <stddef.h>
#include <sys/types.h>

/* Descriptors one message may carry, at most, either way. */
#define FD_PASS_MAX 8

/*
 * Sends len bytes of buf as one message, with the n_fds descriptors of fds
 * (0 to FD_PASS_MAX; the caller keeps them). flags are sendmsg()'s
 * (MSG_DONTWAIT); MSG_NOSIGNAL is always added, so that a peer that went
 * away is -EPIPE, never SIGPIPE. Returns 0, -EINVAL for too many
 * descriptors, -EIO if only part of the message went (a stream socket),
 * or sendmsg()'s -errno.
 */
int send_fds(int sock, const void *buf, size_t len, const int *fds, size_t n_fds, int flags);

/*
 * Receives one message into buf (len bytes) and the descriptors sent with
 * it into fds (at most max_fds, up to FD_PASS_MAX), close-on-exec;
 * *ret_n_fds tells how many. flags are recvmsg()'s (MSG_DONTWAIT);
 * MSG_TRUNC is always added, so that the return value of a datagram
 * longer than len is its whole length (the rest of it is lost). EINTR is
 * retried.
 *
 * Returns the message's length, 0 when the peer hung up (any descriptors
 * closed), or -errno: -EBADMSG when the control data was cut short (more
 * than max_fds descriptors) or was not descriptors (credentials): what did
 * arrive is closed then and *ret_n_fds is 0, so that a peer cannot make
 * the receiver hold descriptors it did not ask for.
 */
ssize_t recv_fds(int sock, void *buf, size_t len, int *fds, size_t max_fds, size_t *ret_n_fds,
		 int flags);

/* Closes the n descriptors of fds, setting each to -1. */
void close_fds(int *fds, size_t n);
