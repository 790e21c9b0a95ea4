/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/stat.h>

#include "barrier.h"
#include "mshare-common/log.h"

int barrier_prepare(struct barrier *b)
{
	struct stat st;
	int fd;

	if (!b->go_path)
		return 0;
	fd = open(b->go_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return log_error_errno(negative_errno(), "--go=%s: open: %m", b->go_path);
	if (fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode)) {
		safe_close(fd);
		log_error("--go=%s: not a FIFO (make it with mkfifo)", b->go_path);
		return -EINVAL;
	}
	b->go_fd = fd;
	b->go_fd_ours = true;
	return 0;
}

int barrier_ready(struct barrier *b, const char *line)
{
	size_t len = strlen(line);
	_cleanup_free_ char *buf = NULL;
	int fd = b->ready_fd;
	ssize_t n;

	if (fd < 0 && !b->ready_path)
		return 0;
	if (len + 1 > PIPE_BUF) {
		log_error("ready line of %zu bytes is longer than PIPE_BUF", len);
		return -E2BIG;
	}
	buf = malloc(len + 2);
	if (!buf)
		return log_error_errno(-ENOMEM, "ready line: %m");
	memcpy(buf, line, len);
	buf[len] = '\n';
	if (fd < 0) {
		/* A FIFO blocks here until the driver has it open for reading. */
		fd = open(b->ready_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
		if (fd < 0)
			return log_error_errno(negative_errno(), "--ready=%s: open: %m", b->ready_path);
	}
	do
		n = write(fd, buf, len + 1);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		int r = negative_errno();

		safe_close(fd);
		b->ready_fd = -1;
		return log_error_errno(r, "writing the ready line: %m");
	}
	safe_close(fd);
	b->ready_fd = -1;
	if (n != (ssize_t)len + 1) {
		log_error("short write of the ready line");
		return -EIO;
	}
	return 0;
}

int barrier_wait_go(struct barrier *b)
{
	struct pollfd pfd = { .fd = b->go_fd, .events = POLLIN };
	int r;

	if (b->go_fd < 0)
		return 0;
	for (;;) {
		r = poll(&pfd, 1, -1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return log_error_errno(negative_errno(), "waiting for go: %m");
		if (pfd.revents & POLLNVAL) {
			log_error("--go-fd=%d is not an open file descriptor", b->go_fd);
			return -EBADF;
		}
		if (pfd.revents & (POLLIN | POLLHUP | POLLERR))
			return 0;
	}
}

void barrier_close(struct barrier *b)
{
	if (b->go_fd_ours)
		safe_close(b->go_fd);
	b->go_fd = -1;
	b->go_fd_ours = false;
}
