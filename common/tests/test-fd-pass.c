/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* send_fds() and recv_fds() over a SOCK_SEQPACKET pair. */
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "mshare-common/fd-pass.h"
#include "mshare-common/macro.h"
#include "mshare-common/tap.h"

static int count_open_fds(void)
{
	int n = 0;

	for (int fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

static bool same_file(int a, int b)
{
	struct stat sa, sb;

	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

int main(void)
{
	int sp[2], p[2], fds[FD_PASS_MAX], before;
	char buf[16];
	size_t n_fds = 99;
	ssize_t n;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0 ||
	    pipe2(p, O_CLOEXEC) < 0) {
		ok(false, "socketpair, pipe: %m");
		return tap_finish();
	}
	before = count_open_fds();

	ok(send_fds(sp[0], "hello", 5, NULL, 0, 0) == 0, "a message without descriptors goes");
	n = recv_fds(sp[1], buf, sizeof(buf), fds, 2, &n_fds, 0);
	ok(n == 5 && memcmp(buf, "hello", 5) == 0 && n_fds == 0, "and arrives alone (%zd)", n);

	ok(send_fds(sp[0], "two", 3, p, 2, 0) == 0, "two descriptors go");
	n = recv_fds(sp[1], buf, sizeof(buf), fds, 2, &n_fds, 0);
	ok(n == 3 && n_fds == 2 && same_file(fds[0], p[0]) && same_file(fds[1], p[1]),
	   "and arrive, the same open files");
	ok(n_fds == 2 && (fcntl(fds[0], F_GETFD) & FD_CLOEXEC) &&
	   (fcntl(fds[1], F_GETFD) & FD_CLOEXEC), "close-on-exec");
	close_fds(fds, n_fds);
	ok(fds[0] == -1 && fds[1] == -1 && count_open_fds() == before, "close_fds() closes them");

	ok(send_fds(sp[0], "three", 5, (int[]){ p[0], p[1], p[0] }, 3, 0) == 0,
	   "three descriptors go");
	n = recv_fds(sp[1], buf, sizeof(buf), fds, 2, &n_fds, 0);
	ok(n == -EBADMSG && n_fds == 0, "to a receiver of two: -EBADMSG (%zd)", n);
	ok(count_open_fds() == before, "and none is left open in the receiver");

	ok(send_fds(sp[0], "0123456789abcdefXYZ", 19, NULL, 0, 0) == 0, "a long message goes");
	n = recv_fds(sp[1], buf, sizeof(buf), fds, 0, &n_fds, 0);
	ok(n == 19, "its length shows that it was cut (%zd)", n);

	ok(send_fds(sp[0], "x", 1, fds, FD_PASS_MAX + 1, 0) == -EINVAL,
	   "more than FD_PASS_MAX: -EINVAL");
	n = recv_fds(sp[1], buf, sizeof(buf), fds, 1, &n_fds, MSG_DONTWAIT);
	ok(n == -EAGAIN, "nothing queued: -EAGAIN with MSG_DONTWAIT (%zd)", n);

	close(sp[0]);
	n = recv_fds(sp[1], buf, sizeof(buf), fds, 1, &n_fds, 0);
	ok(n == 0 && n_fds == 0, "the peer hung up: 0 (%zd)", n);
	ok(send_fds(sp[1], "x", 1, NULL, 0, 0) == -EPIPE, "sending to it: -EPIPE, no SIGPIPE");
	return tap_finish();
}
