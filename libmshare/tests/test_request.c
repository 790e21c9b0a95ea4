// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Host unit test of mshare_request(): a fake mshare-owner, forked, serves a
 * container socket in a temporary directory and answers each request by the
 * region name asked for, so that every reply the daemon can give (a
 * descriptor, a refusal, garbage, nothing) is met. TAP output, then a
 * summary line; exit status 1 if anything failed.
 */

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mshare-common/fd-pass.h"
#include "mshare-common/tap.h"
#include "mshare.h"

static void send_reply(int fd, const char *text, int pass_fd)
{
	send_fds(fd, text, strlen(text), &pass_fd, pass_fd >= 0 ? 1 : 0, 0);
}

/* The fake daemon: one request per connection, answered by region name. */
static void serve(int listen_fd)
{
	char buf[4096];

	for (;;) {
		int fd = accept(listen_fd, NULL, NULL), memfd;
		json_t *req;
		const char *region, *mode, *op;
		ssize_t n;

		if (fd < 0)
			_exit(1);
		n = recv(fd, buf, sizeof(buf), 0);
		req = n > 0 ? json_loadb(buf, (size_t)n, 0, NULL) : NULL;
		op = json_string_value(json_object_get(req, "op"));
		region = json_string_value(json_object_get(req, "region"));
		mode = json_string_value(json_object_get(req, "mode"));
		if (!req || json_integer_value(json_object_get(req, "version")) != 1 || !op ||
		    strcmp(op, "get") || !region || !mode) {
			send_reply(fd, "{\"version\":1,\"status\":\"error\",\"errno\":\"EBADMSG\",\"message\":\"bad\"}", -1);
		} else if (!strcmp(region, "pool")) {
			/* The mode asked for comes back as the memfd's contents. */
			memfd = memfd_create("pool", 0);
			if (write(memfd, mode, strlen(mode)) < 0)
				_exit(1);
			send_reply(fd, "{\"version\":1,\"status\":\"ok\",\"mode\":\"rw\"}", memfd);
			close(memfd);
		} else if (!strcmp(region, "refused")) {
			send_reply(fd, "{\"version\":1,\"status\":\"error\",\"errno\":\"EACCES\","
				   "\"message\":\"region 'refused' is not granted to container c1\"}", -1);
		} else if (!strcmp(region, "oddname")) {
			send_reply(fd, "{\"version\":1,\"status\":\"error\",\"errno\":\"ENOTANERRNO\",\"message\":\"?\"}", -1);
		} else if (!strcmp(region, "nofd")) {
			send_reply(fd, "{\"version\":1,\"status\":\"ok\"}", -1);
		} else if (!strcmp(region, "newer")) {
			/* A descriptor with it: it must not stay open in the client. */
			memfd = memfd_create("newer", 0);
			send_reply(fd, "{\"version\":2,\"status\":\"ok\"}", memfd);
			close(memfd);
		} else if (!strcmp(region, "garbage")) {
			memfd = memfd_create("garbage", 0);
			send_reply(fd, "this is not json", memfd);
			close(memfd);
		}
		/* "hangup": no reply at all */
		json_decref(req);
		close(fd);
	}
}

static bool fd_says(int fd, const char *what)
{
	char buf[16] = {};

	return pread(fd, buf, sizeof(buf) - 1, 0) == (ssize_t)strlen(what) && !strcmp(buf, what);
}

static int open_fds(void)
{
	int n = 0;

	for (int fd = 0; fd < 256; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			n++;
	return n;
}

int main(void)
{
	char dir[] = "/tmp/mshare-request.XXXXXX", path[128];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int listen_fd, fd, fds_before, status;
	pid_t server;

	if (!mkdtemp(dir))
		return perror("mkdtemp"), 1;
	snprintf(path, sizeof(path), "%s/mshare.sock", dir);
	strcpy(sa.sun_path, path);
	listen_fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(listen_fd, 8) < 0)
		return perror("fake daemon socket"), 1;
	server = fork();
	if (server == 0)
		serve(listen_fd);
	close(listen_fd);

	setenv("MSHARE_SOCKET", path, 1);
	fds_before = open_fds();

	fd = mshare_request("pool", 0);
	ok(fd >= 0 && fd_says(fd, "rw"), "a granted region comes back as a descriptor, asked read-write");
	ok(fd >= 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC), "the descriptor is close-on-exec");
	if (fd >= 0)
		close(fd);
	fd = mshare_request("pool", MSHARE_REQUEST_RDONLY);
	ok(fd >= 0 && fd_says(fd, "ro"), "MSHARE_REQUEST_RDONLY asks for mode \"ro\"");
	if (fd >= 0)
		close(fd);

	errno = 0;
	ok(mshare_request("refused", 0) == -1 && errno == EACCES, "a refusal gives the daemon's errno (EACCES)");
	errno = 0;
	ok(mshare_request("oddname", 0) == -1 && errno == EPROTO, "an errno name we do not know gives EPROTO");
	errno = 0;
	ok(mshare_request("nofd", 0) == -1 && errno == EPROTO, "\"ok\" without a descriptor gives EPROTO");
	errno = 0;
	ok(mshare_request("newer", 0) == -1 && errno == EPROTO,
	   "a reply of another protocol version gives EPROTO");
	errno = 0;
	ok(mshare_request("garbage", 0) == -1 && errno == EPROTO, "a reply that is not JSON gives EPROTO");
	errno = 0;
	ok(mshare_request("hangup", 0) == -1 && errno == ECONNRESET, "a daemon that hangs up gives ECONNRESET");
	ok(open_fds() == fds_before, "no descriptor is left open by the failures (%d before, %d after)",
	       fds_before, open_fds());

	errno = 0;
	ok(mshare_request(NULL, 0) == -1 && errno == EINVAL, "no name: EINVAL");
	errno = 0;
	ok(mshare_request("pool", 0x80) == -1 && errno == EINVAL, "unknown flags: EINVAL");

	kill(server, SIGKILL);
	waitpid(server, &status, 0);
	errno = 0;
	ok(mshare_request("pool", 0) == -1 && errno == ECONNREFUSED,
	       "a socket nobody serves gives ECONNREFUSED");
	unlink(path);
	rmdir(dir);
	errno = 0;
	ok(mshare_request("pool", 0) == -1 && errno == ENOENT, "no socket at all gives ENOENT");

	return tap_finish();
}
