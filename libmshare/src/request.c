// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mshare_request(): a region descriptor from mshare-owner, asked for on the
 * socket the daemon serves a container on (docs/protocol.md: a "get"
 * request on a container channel). The one part of libmshare that is not a
 * system call wrapper, and the only one that needs libjansson: the request
 * and the reply are the common protocol library's (mshare-common/protocol.h),
 * compiled into libmshare.
 */

#include <jansson.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include "mshare-common/fd-pass.h"
#include "mshare-common/protocol.h"
#include "mshare.h"
#include "util.h"

/* Descriptors taken with a reply; more are a protocol error. */
#define REQUEST_MAX_FDS		4
#define REQUEST_TIMEOUT_SEC	30

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
	return TAKE_FD(fd);
}

static int send_get(int fd, const char *name, unsigned int flags)
{
	struct proto_request req = {
		.op = PROTO_OP_GET,
		.region = (char *)name,
		.mode = (flags & MSHARE_REQUEST_RDONLY) ? ACCESS_RO : ACCESS_RW,
	};
	_cleanup_free_ char *text = NULL;
	size_t len;
	int r;

	r = proto_request_encode(&req, &text, &len);
	if (r < 0)
		return r == -EMSGSIZE ? -EINVAL : r;
	r = send_fds(fd, text, len, NULL, 0, 0);
	return r == -EAGAIN ? -ETIMEDOUT : r;
}

/* The reply: the region's descriptor, or the daemon's errno. Whatever the
 * protocol's decoder refuses (another version among it) is EPROTO. */
static int receive_reply(int fd)
{
	_cleanup_free_ char *buf = malloc(MSHARE_PROTOCOL_MAX_MESSAGE), *error = NULL;
	_cleanup_(proto_reply_done) struct proto_reply reply = {};
	int fds[REQUEST_MAX_FDS], r;
	size_t n_fds = 0;
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	n = recv_fds(fd, buf, MSHARE_PROTOCOL_MAX_MESSAGE, fds, REQUEST_MAX_FDS, &n_fds, 0);
	if (n == -EAGAIN)
		return -ETIMEDOUT;
	if (n == -EBADMSG)
		return -EPROTO;
	if (n < 0)
		return (int)n;
	if (n == 0)
		return -ECONNRESET;

	r = proto_reply_decode(PROTO_OP_GET, buf, (size_t)n, &reply, &error);
	if (r == 0)
		r = reply.error ? -reply.error : n_fds == 1 ? 0 : -EPROTO;
	else if (r != -ENOMEM)
		r = -EPROTO;
	if (r == 0)
		return fds[0];
	close_fds(fds, n_fds);
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
