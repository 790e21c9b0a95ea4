/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * owner-stress: throws bad messages and a crowd of clients at a running
 * mshare-owner and checks that it answers each as docs/protocol.md says and
 * stays up with its regions. For the in-guest tests (against the real
 * daemon under systemd) and for tests/test-daemon.py (against the daemon on
 * the fake libmshare). Prints TAP, ending with "N passed, N failed".
 *
 *   owner-stress [--socket=PATH] [--clients=N] [--region=NAME]
 *
 * With --region, every other client of the crowd also gets a read-only
 * descriptor of NAME at the same time (the caller must be granted it).
 */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "mshare-common/fd-pass.h"
#include "mshare-common/protocol.h"
#include "mshare-common/tap.h"
#include "util.h"

static const char *socket_path = MSHARE_SOCKET_PATH;

static int connect_owner(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	strncpy(sa.sun_path, socket_path, sizeof(sa.sun_path) - 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int k = -errno;

		close(fd);
		return k;
	}
	return fd;
}

static int send_text(int fd, const void *buf, size_t len)
{
	return send(fd, buf, len, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

/* Waits up to timeout_ms for one reply; returns its errno (0 for "ok"),
 * -ETIMEDOUT, -ECONNRESET on hang-up, -EBADMSG if it cannot be decoded. */
static int receive_reply(int fd, int timeout_ms, int *ret_fd)
{
	static char buf[MSHARE_PROTOCOL_MAX_MESSAGE];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct proto_reply reply = {};
	char *error = NULL;
	int fds[1];
	size_t n_fds = 0;
	ssize_t n;
	int k;

	if (ret_fd)
		*ret_fd = -1;
	k = poll(&p, 1, timeout_ms);
	if (k <= 0)
		return k < 0 ? -errno : -ETIMEDOUT;
	n = recv_fds(fd, buf, sizeof(buf), fds, 1, &n_fds, 0);
	if (n <= 0)
		return -ECONNRESET;
	if (n_fds == 1) {
		if (ret_fd)
			*ret_fd = fds[0];
		else
			close(fds[0]);
	}
	/* Only the status counts here: decoded as the reply to unregister,
	 * which has no other members. */
	k = proto_reply_decode(PROTO_OP_UNREGISTER, buf, (size_t)n, &reply, &error);
	if (k == 0)
		k = reply.error;
	proto_reply_done(&reply);
	free(error);
	return k;
}

/* Whether the daemon closed the connection (within timeout_ms). */
static bool closed(int fd, int timeout_ms)
{
	char c;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, timeout_ms) <= 0)
		return false;
	return recv(fd, &c, 1, MSG_DONTWAIT) <= 0;
}

static void bad_message(const char *what, const void *msg, size_t len, int expected)
{
	int fd = connect_owner(), k = -EBADF;
	bool hung_up = false;

	if (fd >= 0 && send_text(fd, msg, len) == 0) {
		k = receive_reply(fd, 5000, NULL);
		hung_up = closed(fd, 5000);
	}
	ok(k == expected && hung_up, "%s: %s, then the daemon hangs up (got %s)", what,
	   errno_to_name(expected), k < 0 ? strerror(-k) : errno_to_name(k));
	if (fd >= 0)
		close(fd);
}

static void test_bad_messages(void)
{
	static const char garbage[] = { 0x00, 0xff, 0x7b, 0x22, 0x01, 0x80, 0x7d };
	static const char *const one = "{\"version\":1,\"op\":\"hello\"}";
	size_t big_len = MSHARE_PROTOCOL_MAX_MESSAGE + 4096;
	char *big = malloc(big_len);
	int fd, k = -EBADF, p[2];

	bad_message("not JSON", "hello", 5, EBADMSG);
	bad_message("binary garbage", garbage, sizeof(garbage), EBADMSG);
	bad_message("truncated JSON", "{\"version\":1,\"op\":\"ge", 21, EBADMSG);
	bad_message("not an object", "[1,2,3]", 7, EBADMSG);
	bad_message("version 2", "{\"version\":2,\"op\":\"hello\"}", 26, EPROTONOSUPPORT);
	bad_message("no version", "{\"op\":\"hello\"}", 14, EBADMSG);
	bad_message("unknown op", "{\"version\":1,\"op\":\"mkfs\"}", 25, EOPNOTSUPP);
	bad_message("get without region", "{\"version\":1,\"op\":\"get\",\"mode\":\"ro\"}", 36, EBADMSG);
	bad_message("region of the wrong type", "{\"version\":1,\"op\":\"show\",\"region\":[]}", 37, EBADMSG);
	bad_message("a path for a region", "{\"version\":1,\"op\":\"show\",\"region\":\"../x\"}", 41, EINVAL);
	if (big) {
		memset(big, ' ', big_len);
		memcpy(big, one, strlen(one));
		bad_message("oversized message", big, big_len, EMSGSIZE);
		free(big);
	}

	/* File descriptors sent along are refused. */
	fd = connect_owner();
	if (fd >= 0 && pipe2(p, O_CLOEXEC) == 0) {
		if (send_fds(fd, one, strlen(one), p, 2, 0) == 0)
			k = receive_reply(fd, 5000, NULL);
		close(p[0]);
		close(p[1]);
	}
	ok(k == EBADMSG, "descriptors sent to the daemon are refused");
	if (fd >= 0)
		close(fd);

	/* Clients that go away before their descriptor or reply arrives. */
	for (int i = 0; i < 200; i++) {
		fd = connect_owner();
		if (fd < 0)
			break;
		send_text(fd, "{\"version\":1,\"op\":\"list\"}", 25);
		close(fd);
	}
	/* The 200 are served first; a slow machine (an emulated guest) needs a
	 * while for that, and only the answer counts here, not its delay. */
	fd = connect_owner();
	k = fd >= 0 && send_text(fd, one, strlen(one)) == 0 ? receive_reply(fd, 60000, NULL) : -EBADF;
	ok(k == 0, "200 clients that vanished mid-request left the daemon serving (%s)",
	   k == 0 ? "answered" : k < 0 ? strerror(-k) : errno_to_name(k));
	if (fd >= 0)
		close(fd);
}

static void test_crowd(unsigned n, const char *region)
{
	static const char hello[] = "{\"version\":1,\"op\":\"hello\",\"client\":\"owner-stress\"}";
	char get[256];
	struct rlimit rl;
	int *fds = calloc(n, sizeof(int));
	unsigned connected = 0, answered = 0, wanted = 0, got = 0, refused = 0, timed_out = 0, reset = 0;
	usec_t start = now_usec();

	if (!fds) {
		ok(false, "memory for %u clients", n);
		return;
	}
	/* Two descriptors per client at most: its socket and a region. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 2 * n + 64) {
		rl.rlim_cur = rl.rlim_max < 2 * n + 64 ? rl.rlim_max : 2 * n + 64;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (region)
		snprintf(get, sizeof(get), "{\"version\":1,\"op\":\"get\",\"region\":\"%s\",\"mode\":\"ro\"}",
			 region);
	/*
	 * Everyone connects and speaks (hello, and every other client also
	 * get) before anyone listens, and every connection stays open until
	 * all have been answered. Each sends at once after connecting: the
	 * daemon closes a connection on which no request arrives within its
	 * deadline, and connecting a thousand clients takes longer than that
	 * on a slow (emulated) machine.
	 */
	for (unsigned i = 0; i < n; i++) {
		fds[i] = connect_owner();
		if (fds[i] < 0)
			continue;
		connected++;
		send_text(fds[i], hello, sizeof(hello) - 1);
		if (region && i % 2 == 0) {
			send_text(fds[i], get, strlen(get));
			wanted++;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		int k = fds[i] >= 0 ? receive_reply(fds[i], 60000, NULL) : -EBADF;

		answered += k == 0;
		refused += k == EAGAIN;
		timed_out += k == ETIMEDOUT || k == -ETIMEDOUT;
		reset += k == -ECONNRESET;
		if (k == 0 && region && i % 2 == 0) {
			int region_fd = -1;
			struct stat st;

			k = receive_reply(fds[i], 60000, &region_fd);
			if (k == 0 && region_fd >= 0 && fstat(region_fd, &st) == 0 &&
			    (fcntl(region_fd, F_GETFL) & O_ACCMODE) == O_RDONLY)
				got++;
			if (region_fd >= 0)
				close(region_fd);
		}
	}
	ok(connected == n && answered == n,
	   "%u concurrent clients: %u connected, %u answered, %u refused, %u timed out, %u hung up on (%" PRIu64 " ms)",
	   n, connected, answered, refused, timed_out, reset, (now_usec() - start) / USEC_PER_MSEC);
	if (region)
		ok(got == wanted, "%u of %u clients got a read-only descriptor of '%s' at once", got, wanted,
		   region);
	for (unsigned i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
}

static void test_alive(const char *region)
{
	char show[256];
	int fd = connect_owner(), k = -EBADF;

	snprintf(show, sizeof(show), "{\"version\":1,\"op\":\"show\",\"region\":\"%s\"}",
		 region ?: "x");
	if (fd >= 0 && send_text(fd, "{\"version\":1,\"op\":\"list\"}", 25) == 0)
		k = receive_reply(fd, 5000, NULL);
	ok(k == 0, "the daemon still answers");
	if (region) {
		k = fd >= 0 && send_text(fd, show, strlen(show)) == 0 ? receive_reply(fd, 5000, NULL) : -EBADF;
		ok(k == 0, "region '%s' is still there", region);
	}
	if (fd >= 0)
		close(fd);
}

int main(int argc, char *argv[])
{
	static const struct option options[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "clients", required_argument, NULL, 'n' },
		{ "region", required_argument, NULL, 'r' },
		{}
	};
	const char *region = NULL;
	uint32_t clients = 1000;
	int c;

	while ((c = getopt_long(argc, argv, "s:n:r:", options, NULL)) >= 0)
		switch (c) {
		case 's':
			socket_path = optarg;
			break;
		case 'n':
			if (parse_u32(optarg, &clients) < 0 || clients == 0) {
				fprintf(stderr, "owner-stress: invalid --clients: %s\n", optarg);
				return 2;
			}
			break;
		case 'r':
			region = optarg;
			break;
		default:
			fprintf(stderr, "Usage: owner-stress [--socket=PATH] [--clients=N] [--region=NAME]\n");
			return 2;
		}

	test_bad_messages();
	test_crowd(clients, region);
	test_alive(region);
	return tap_finish();
}
