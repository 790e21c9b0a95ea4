/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hook-probe: the workload side of the in-guest tests of mshare-oci-hook,
 * linked statically so that it runs in a container whose root holds nothing
 * but busybox. It talks to the container's channel ($MSHARE_SOCKET, else
 * /run/mshare/mshare.sock) as a workload would.
 *
 *   hook-probe get [--ro] REGION [PROGRAM ARGS...]
 *       mshare_request(); prints "ok" or "error ENAME" (status 0 or 1). With
 *       PROGRAM, runs it with the descriptor open and named in $MSHARE_FD
 *       (as `mshare-ctl run` does for region-probe).
 *   hook-probe control REGION
 *       gets REGION read-write and tries what only the region's owner may:
 *       mshare_map(), mshare_unmap(), mshare_protect(); prints each result;
 *       status 0 if every one failed with EPERM.
 *   hook-probe connect PATH
 *       connects a SOCK_SEQPACKET socket to PATH; prints "connected" or
 *       "error ENAME" (status 0 or 1).
 *   hook-probe list
 *       the regions the channel lists, by name, on one line; or
 *       "error ENAME" (status 1).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <mshare.h>

#include "mshare-common/errno-name.h"
#include "mshare-common/fd-pass.h"
#include "mshare-common/macro.h"
#include "mshare-common/protocol.h"
#include "mshare-common/strv.h"

static int usage(void)
{
	fprintf(stderr, "usage: hook-probe get [--ro] REGION [PROGRAM ARGS...] | control REGION | "
			"connect PATH | list\n");
	return 2;
}

static int cmd_get(int argc, char **argv)
{
	unsigned int flags = 0;
	char fdname[16];
	int fd;

	if (argc > 0 && strcmp(argv[0], "--ro") == 0) {
		flags = MSHARE_REQUEST_RDONLY;
		argc--, argv++;
	}
	if (argc < 1)
		return usage();
	fd = mshare_request(argv[0], flags);
	if (fd < 0) {
		printf("error %s\n", errno_to_name(errno));
		return 1;
	}
	if (argc == 1) {
		printf("ok\n");
		return 0;
	}
	/* The descriptor is close-on-exec; the program gets a copy. */
	fd = dup(fd);
	snprintf(fdname, sizeof(fdname), "%d", fd);
	setenv("MSHARE_FD", fdname, 1);
	fflush(stdout);
	execv(argv[1], argv + 1);
	printf("error exec %s: %s\n", argv[1], errno_to_name(errno));
	return 1;
}

static int cmd_control(const char *region)
{
	int fd = mshare_request(region, 0), bad = 0;
	long align;

	if (fd < 0) {
		printf("error %s\n", errno_to_name(errno));
		return 1;
	}
	align = mshare_alignment(fd);
#define TRY(what, call)                                                            \
	do {                                                                       \
		int r_ = (call);                                                   \
		printf("%s: %s\n", what, r_ < 0 ? errno_to_name(errno) : "allowed");       \
		bad += !(r_ < 0 && errno == EPERM);                                \
	} while (0)
	TRY("mshare_map", mshare_map_object(fd, align > 0 ? 0 : 0, 4096, PROT_READ | PROT_WRITE,
					    MAP_ANONYMOUS, -1, 0));
	TRY("mshare_unmap", mshare_unmap(fd, 0, (size_t)(align > 0 ? align : 4096)));
	TRY("mshare_protect", mshare_protect(fd, 0, 4096, PROT_READ));
#undef TRY
	return bad ? 1 : 0;
}

static int cmd_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (strlen(path) >= sizeof(sa.sun_path))
		return usage();
	strcpy(sa.sun_path, path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		printf("error %s\n", errno_to_name(errno));
		return 1;
	}
	printf("connected\n");
	return 0;
}

/* A connection to the channel, as mshare_request() makes it. */
static int connect_channel(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -1;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	return TAKE_FD(fd);
}

/*
 * One page of the list, from start: the names go to *names, the start of
 * the next page to *ret_next (0: this was the last). The request and the
 * reply are the protocol library's, as the daemon's and mshare_request()'s
 * are: this probe must not be a copy of the protocol of its own.
 */
static int list_page(int fd, uint32_t start, char ***names, uint32_t *ret_next)
{
	const struct proto_request req = { .op = PROTO_OP_LIST, .start = start };
	_cleanup_(proto_reply_done) struct proto_reply reply = {};
	_cleanup_free_ char *text = NULL, *error = NULL, *buf = NULL;
	size_t len, n_fds;
	ssize_t n;
	int k;

	k = proto_request_encode(&req, &text, &len);
	if (k < 0)
		return k;
	k = send_fds(fd, text, len, NULL, 0, 0);
	if (k < 0)
		return k;
	buf = malloc(MSHARE_PROTOCOL_MAX_MESSAGE);
	if (!buf)
		return -ENOMEM;
	n = recv_fds(fd, buf, MSHARE_PROTOCOL_MAX_MESSAGE, NULL, 0, &n_fds, 0);
	if (n <= 0)
		return n < 0 ? (int)n : -ECONNRESET;
	/* A reply the library cannot read is a protocol error, as
	 * mshare_request() has it. */
	if ((size_t)n > MSHARE_PROTOCOL_MAX_MESSAGE ||
	    proto_reply_decode(PROTO_OP_LIST, buf, (size_t)n, &reply, &error) < 0)
		return -EPROTO;
	if (reply.error)
		return -reply.error;
	for (size_t i = 0; i < reply.list.n_regions; i++) {
		k = strv_extend(names, reply.list.regions[i].name);
		if (k < 0)
			return k;
	}
	*ret_next = reply.list.has_next ? reply.list.next : 0;
	return 0;
}

/* The regions the channel lists, every page of them. */
static int cmd_list(void)
{
	const char *path = getenv("MSHARE_SOCKET");
	_cleanup_strv_free_ char **names = NULL;
	_cleanup_close_ int fd = -1;
	uint32_t start = 0, next = 0;
	int k;

	k = fd = connect_channel(path && *path ? path : MSHARE_REQUEST_SOCKET);
	while (k >= 0) {
		k = list_page(fd, start, &names, &next);
		/* Pages only go forward (a daemon that says otherwise would
		 * keep the probe here); 0 is the end. */
		if (next <= start)
			break;
		start = next;
	}
	if (k < 0) {
		printf("error %s\n", errno_to_name(-k));
		return 1;
	}
	for (size_t i = 0; names && names[i]; i++)
		printf("%s%s", i ? " " : "", names[i]);
	printf("\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	if (strcmp(argv[1], "get") == 0)
		return cmd_get(argc - 2, argv + 2);
	if (strcmp(argv[1], "control") == 0 && argc == 3)
		return cmd_control(argv[2]);
	if (strcmp(argv[1], "connect") == 0 && argc == 3)
		return cmd_connect(argv[2]);
	if (strcmp(argv[1], "list") == 0 && argc == 2)
		return cmd_list();
	return usage();
}
