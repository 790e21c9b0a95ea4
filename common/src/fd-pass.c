// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>

#include "mshare-common/fd-pass.h"
#include "mshare-common/macro.h"

/* Control buffer for FD_PASS_MAX descriptors, aligned for struct cmsghdr. */
union fd_control {
	struct cmsghdr h;
	char buf[CMSG_SPACE(sizeof(int) * FD_PASS_MAX)];
};

int send_fds(int sock, const void *buf, size_t len, const int *fds, size_t n_fds, int flags)
{
	union fd_control control = {};
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (n_fds > FD_PASS_MAX)
		return -EINVAL;
	if (n_fds > 0) {
		struct cmsghdr *cmsg;

		mh.msg_control = control.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
		cmsg = CMSG_FIRSTHDR(&mh);
		cmsg->cmsg_level = SOL_SOCKET;
		cmsg->cmsg_type = SCM_RIGHTS;
		cmsg->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
		memcpy(CMSG_DATA(cmsg), fds, sizeof(int) * n_fds);
	}
	n = sendmsg(sock, &mh, flags | MSG_NOSIGNAL);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

void close_fds(int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fds[i] = safe_close(fds[i]);
}

ssize_t recv_fds(int sock, void *buf, size_t len, int *fds, size_t max_fds, size_t *ret_n_fds,
		 int flags)
{
	union fd_control control;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	bool foreign = false;
	size_t n_fds = 0;
	ssize_t n;

	*ret_n_fds = 0;
	if (max_fds > FD_PASS_MAX)
		return -EINVAL;
	/* Room for max_fds and no more: the kernel cuts the rest off
	 * (MSG_CTRUNC) and closes it. */
	if (max_fds > 0) {
		mh.msg_control = control.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * max_fds);
	}
	do
		n = recvmsg(sock, &mh, flags | MSG_TRUNC | MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;

	for (struct cmsghdr *cmsg = CMSG_FIRSTHDR(&mh); cmsg; cmsg = CMSG_NXTHDR(&mh, cmsg)) {
		size_t k;

		if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS) {
			foreign = true;
			continue;
		}
		k = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cmsg) + i * sizeof(int), sizeof(int));
			if (n_fds < max_fds)
				fds[n_fds++] = fd;
			else {
				/* Not reached with the control buffer sized as it is;
				 * never leak what a peer sent all the same. */
				safe_close(fd);
				foreign = true;
			}
		}
	}
	if (n == 0 || foreign || (mh.msg_flags & MSG_CTRUNC)) {
		close_fds(fds, n_fds);
		return n == 0 ? 0 : -EBADMSG;
	}
	*ret_n_fds = n_fds;
	return n;
}
