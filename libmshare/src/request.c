// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mshare_request(): a region descriptor from mshare-owner, asked for on the
 * socket the daemon serves a container on (docs/protocol.md: a "get"
 * request on a container channel). The one part of libmshare that is not a
 * system call wrapper, and the only one that needs libjansson.
 */

#include <jansson.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include "mshare.h"
#include "util.h"

/* The protocol's limits: one JSON object per packet, at most this long. */
#define REQUEST_MAX_MESSAGE	(64 * 1024)
#define REQUEST_MAX_FDS		4
#define REQUEST_TIMEOUT_SEC	30

/* errno of a symbolic name such as "EACCES"; EPROTO if unknown. */
static int errno_from_name(const char *name)
{
	for (int e = 1; name && e < 4096; e++) {
		const char *n = strerrorname_np(e);

		if (n && strcmp(n, name) == 0)
			return e;
	}
	return EPROTO;
}

static int connect_daemon(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = REQUEST_TIMEOUT_SEC };
	const char *path = secure_getenv("MSHARE_SOCKET");
	_cleanup_close_ int fd = -1;

	if (!path || !*path)
		path = MSHARE_REQUEST_SOCKET;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	return mshare_take_fd(&fd);
}

static int send_get(int fd, const char *name, unsigned int flags)
{
	_cleanup_(json_decrefp) json_t *req = NULL;
	_cleanup_free_ char *text = NULL;
	ssize_t n;

	req = json_pack("{s:i, s:s, s:s, s:s}", "version", 1, "op", "get", "region", name,
			"mode", (flags & MSHARE_REQUEST_RDONLY) ? "ro" : "rw");
	text = req ? json_dumps(req, JSON_COMPACT) : NULL;
	if (!text)
		return -ENOMEM;
	n = send(fd, text, strlen(text), MSG_NOSIGNAL);
	if (n < 0)
		return errno == EAGAIN ? -ETIMEDOUT : -errno;
	return (size_t)n == strlen(text) ? 0 : -EIO;
}

/* The reply: the region's descriptor, or the daemon's errno. */
static int receive_reply(int fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * REQUEST_MAX_FDS)];
	} control;
	_cleanup_free_ char *buf = malloc(REQUEST_MAX_MESSAGE);
	_cleanup_(json_decrefp) json_t *reply = NULL;
	struct iovec iov = { .iov_base = buf, .iov_len = REQUEST_MAX_MESSAGE };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
			     .msg_controllen = sizeof(control.buf) };
	int fds[REQUEST_MAX_FDS], region_fd = -1, r;
	size_t n_fds = 0;
	const char *status;
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	do
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_TRUNC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN ? -ETIMEDOUT : -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int) && n_fds < REQUEST_MAX_FDS; i++)
			memcpy(&fds[n_fds++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
	}

	if (n == 0)
		r = -ECONNRESET;
	else if ((mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || n > REQUEST_MAX_MESSAGE)
		r = -EPROTO;
	else if (!(reply = json_loadb(buf, (size_t)n, JSON_REJECT_DUPLICATES, NULL)) ||
		 !json_is_object(reply))
		r = -EPROTO;
	else if (!(status = json_string_value(json_object_get(reply, "status"))))
		r = -EPROTO;
	else if (strcmp(status, "ok") != 0)
		r = -errno_from_name(json_string_value(json_object_get(reply, "errno")));
	else if (n_fds != 1)
		r = -EPROTO;
	else
		r = region_fd = fds[0];

	for (size_t i = 0; i < n_fds; i++)
		if (fds[i] != region_fd)
			close(fds[i]);
	return r;
}

int mshare_request(const char *name, unsigned int flags)
{
	_cleanup_close_ int fd = -1;
	int r, send_error;

	if (!name || !*name || (flags & ~MSHARE_REQUEST_RDONLY))
		return (int)mshare_ret(-EINVAL);
	fd = connect_daemon();
	if (fd < 0)
		return (int)mshare_ret(fd);
	r = send_get(fd, name, flags);
	/* A daemon that refused the connection has answered and hung up,
	 * perhaps before the request arrived: its answer is still queued,
	 * behind the reset of the hang-up. */
	if (r < 0 && r != -EPIPE && r != -ECONNRESET)
		return (int)mshare_ret(r);
	send_error = r;
	r = receive_reply(fd);
	if (r == -ECONNRESET)
		r = receive_reply(fd);
	if (r == -ECONNRESET && send_error < 0)
		r = send_error;
	return (int)mshare_ret(r);
}
