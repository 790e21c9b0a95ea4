/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include "client-internal.h"
#include "mshare-common/fd-pass.h"

/* Descriptors accepted with one reply; more are a protocol error. */
#define CLIENT_MAX_FDS 4

struct mshare_client {
	int fd;
	char *message;		/* the daemon's reason for the last refusal */
	char *buf;		/* MSHARE_PROTOCOL_MAX_MESSAGE bytes */
};

void mshare_client_free(struct mshare_client *c)
{
	if (!c)
		return;
	safe_close(c->fd);
	free(c->message);
	free(c->buf);
	free(c);
}

static void client_freep(struct mshare_client **c)
{
	mshare_client_free(*c);
}

const char *mshare_client_error_message(const struct mshare_client *c)
{
	return c->message;
}

int mshare_client_set_timeout(struct mshare_client *c, uint64_t usec)
{
	struct timeval tv = {
		.tv_sec = (time_t)(usec / 1000000),
		.tv_usec = (suseconds_t)(usec % 1000000),
	};

	if (setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
		return -errno;
	return 0;
}

static void set_message(struct mshare_client *c, char *message)
{
	free(c->message);
	c->message = message;
}

static int client_send(struct mshare_client *c, const struct proto_request *req, const int *fds,
		       size_t n_fds)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	int k;

	k = proto_request_encode(req, &text, &len);
	if (k < 0)
		return k;
	k = send_fds(c->fd, text, len, fds, n_fds, 0);
	return k == -EAGAIN ? -ETIMEDOUT : k;
}

/* One message, and the descriptors that came with it. */
static int client_receive(struct mshare_client *c, size_t *ret_len, int fds[CLIENT_MAX_FDS],
			  size_t *ret_n_fds)
{
	ssize_t n;

	n = recv_fds(c->fd, c->buf, MSHARE_PROTOCOL_MAX_MESSAGE, fds, CLIENT_MAX_FDS, ret_n_fds, 0);
	if (n == -EAGAIN)
		return -ETIMEDOUT;
	if (n == -EBADMSG)
		return -EMSGSIZE; /* more descriptors than a reply carries */
	if (n < 0)
		return (int)n;
	if (n == 0)
		return -ECONNRESET; /* the daemon hung up */
	if ((size_t)n > MSHARE_PROTOCOL_MAX_MESSAGE) {
		close_fds(fds, *ret_n_fds);
		*ret_n_fds = 0;
		return -EMSGSIZE;
	}
	*ret_len = (size_t)n;
	return 0;
}

int mshare_client_call(struct mshare_client *c, const struct proto_request *req,
		       struct proto_reply *ret, int *ret_fd)
{
	return mshare_client_call_fds(c, req, NULL, 0, ret, ret_fd);
}

int mshare_client_call_fds(struct mshare_client *c, const struct proto_request *req,
			   const int *fds_out, size_t n_fds_out, struct proto_reply *ret, int *ret_fd)
{
	_cleanup_(proto_reply_done) struct proto_reply reply = {};
	_cleanup_free_ char *error = NULL;
	int fds[CLIENT_MAX_FDS];
	size_t len = 0, n_fds = 0;
	int k, send_error;

	set_message(c, NULL);
	k = client_send(c, req, fds_out, n_fds_out);
	/* A daemon that refused the connection (at a connection cap, or a
	 * peer not of the channel's container) has answered and hung up,
	 * perhaps before the request arrived: its answer is still queued. */
	if (k < 0 && k != -EPIPE && k != -ECONNRESET)
		return k;
	send_error = k;
	k = client_receive(c, &len, fds, &n_fds);
	/* The reset of a hang-up is reported once, before what is queued. */
	if (k == -ECONNRESET)
		k = client_receive(c, &len, fds, &n_fds);
	if (k < 0 && send_error < 0)
		k = send_error;
	if (k == 0) {
		k = proto_reply_decode(req->op, c->buf, len, &reply, &error);
		if (k < 0)
			set_message(c, TAKE_PTR(error));
		else if (reply.error) {
			k = -reply.error;
			set_message(c, TAKE_PTR(reply.message));
		} else if (n_fds > 1 || (n_fds == 1 && !ret_fd)) {
			k = -EPROTO;
			set_message(c, strdup("the daemon sent unexpected file descriptors"));
		}
	}
	if (k < 0 || n_fds == 0 || !ret_fd) {
		for (size_t i = 0; i < n_fds; i++)
			safe_close(fds[i]);
		if (k < 0)
			return k;
		if (ret_fd)
			*ret_fd = -1;
	} else
		*ret_fd = fds[0];
	*ret = reply;
	reply = (struct proto_reply){};
	return 0;
}

int mshare_client_new(struct mshare_client **ret)
{
	_cleanup_(client_freep) struct mshare_client *c = NULL;
	int k;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -errno;
	c->buf = malloc(MSHARE_PROTOCOL_MAX_MESSAGE);
	if (!c->buf)
		return -ENOMEM;
	k = mshare_client_set_timeout(c, MSHARE_CLIENT_TIMEOUT_DEFAULT_USEC);
	if (k < 0)
		return k;
	*ret = TAKE_PTR(c);
	return 0;
}

int mshare_client_connect(struct mshare_client *c, const char *path, const char *client_name)
{
	_cleanup_(proto_reply_done) struct proto_reply reply = {};
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct proto_request req = {
		.op = PROTO_OP_HELLO,
		.client = (char *)client_name,
	};

	if (!path)
		path = MSHARE_CLIENT_SOCKET_DEFAULT;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	/* A daemon at its connection cap answers this with its refusal. */
	return mshare_client_call(c, &req, &reply, NULL);
}

/* Copies container into req (get, register, unregister). */
static int request_set_container(struct proto_request *req, const struct mshare_container *container)
{
	req->has_container = true;
	req->container_name = container->name ? strdup(container->name) : NULL;
	req->container_id = container->id ? strdup(container->id) : NULL;
	if ((container->name && !req->container_name) || (container->id && !req->container_id))
		return -ENOMEM;
	for (const char *const *a = container->annotations; a && *a; a++) {
		const char *eq = strchr(*a, '=');
		struct proto_annotation *t;

		if (!eq || eq == *a)
			return -EINVAL;
		t = reallocarray(req->annotations, req->n_annotations + 1, sizeof(*t));
		if (!t)
			return -ENOMEM;
		req->annotations = t;
		t[req->n_annotations++] = (struct proto_annotation){
			.key = strndup(*a, (size_t)(eq - *a)),
			.value = strdup(eq + 1),
		};
		if (!t[req->n_annotations - 1].key || !t[req->n_annotations - 1].value)
			return -ENOMEM;
	}
	return 0;
}

int mshare_client_get(struct mshare_client *c, const char *name, bool rdonly,
		      const struct mshare_container *container, int *ret_fd,
		      uint64_t *ret_region_size)
{
	_cleanup_(proto_request_done) struct proto_request req = {
		.op = PROTO_OP_GET,
		.mode = rdonly ? ACCESS_RO : ACCESS_RW,
	};
	_cleanup_(proto_reply_done) struct proto_reply reply = {};
	_cleanup_close_ int fd = -1;
	int k;

	if (!region_name_is_valid(name))
		return -EINVAL;
	req.region = strdup(name);
	if (!req.region)
		return -ENOMEM;
	if (container) {
		k = request_set_container(&req, container);
		if (k < 0)
			return k;
	}

	k = mshare_client_call(c, &req, &reply, &fd);
	if (k < 0)
		return k;
	if (fd < 0) {
		set_message(c, strdup("the daemon sent no descriptor"));
		return -EPROTO;
	}
	/* The decoder lets it be absent, for mshare_request(), which needs
	 * only the descriptor. */
	if (!reply.has_region) {
		set_message(c, strdup("member \"region\" is missing"));
		return -EBADMSG;
	}
	if (ret_region_size)
		*ret_region_size = reply.region.region_size;
	*ret_fd = TAKE_FD(fd);
	return 0;
}

int mshare_client_reload(struct mshare_client *c, char **ret_message)
{
	_cleanup_(proto_reply_done) struct proto_reply reply = {};
	struct proto_request req = { .op = PROTO_OP_RELOAD };
	int k;

	k = mshare_client_call(c, &req, &reply, NULL);
	if (k < 0)
		return k;
	if (ret_message)
		*ret_message = TAKE_PTR(reply.message);
	return 0;
}

int mshare_client_register(struct mshare_client *c, const struct mshare_container *container,
			   const struct mshare_region_request *regions, size_t n_regions,
			   int listen_fd, int pidfd)
{
	_cleanup_(proto_request_done) struct proto_request req = { .op = PROTO_OP_REGISTER };
	_cleanup_(proto_reply_done) struct proto_reply reply = {};
	int fds[2] = { listen_fd, pidfd };
	int k;

	if (!container || !container->id || !*container->id || n_regions == 0 ||
	    n_regions > PROTO_REGISTER_REGIONS_MAX || listen_fd < 0 || pidfd < 0)
		return -EINVAL;
	k = request_set_container(&req, container);
	if (k < 0)
		return k;
	req.regions = calloc(n_regions, sizeof(*req.regions));
	if (!req.regions)
		return -ENOMEM;
	for (size_t i = 0; i < n_regions; i++) {
		if (!region_name_is_valid(regions[i].name))
			return -EINVAL;
		req.regions[i].region = strdup(regions[i].name);
		req.regions[i].mode = regions[i].rdonly ? ACCESS_RO : ACCESS_RW;
		req.n_regions++;
		if (!req.regions[i].region)
			return -ENOMEM;
	}
	return mshare_client_call_fds(c, &req, fds, 2, &reply, NULL);
}

int mshare_client_unregister(struct mshare_client *c, const char *id)
{
	_cleanup_(proto_reply_done) struct proto_reply reply = {};
	struct mshare_container container = { .id = id };
	_cleanup_(proto_request_done) struct proto_request req = { .op = PROTO_OP_UNREGISTER };
	int k;

	if (!id || !*id)
		return -EINVAL;
	k = request_set_container(&req, &container);
	if (k < 0)
		return k;
	return mshare_client_call(c, &req, &reply, NULL);
}
