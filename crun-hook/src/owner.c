/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <mshare-client.h>
#include <string.h>

#include "mshare-common/errno-name.h"
#include "mshare-common/macro.h"
#include "mshare-common/strprintf.h"
#include "mshare-common/strv.h"
#include "oci.h"
#include "owner.h"

static void client_freep(struct mshare_client **c)
{
	mshare_client_free(*c);
}

static const char *socket_path(const struct owner *o)
{
	return o->socket ?: MSHARE_CLIENT_SOCKET_DEFAULT;
}

/* "5 s", "0.5 s" */
static char *format_timeout(usec_t t)
{
	if (t % USEC_PER_SEC == 0)
		return strprintf("%llu s", (unsigned long long)(t / USEC_PER_SEC));
	return strprintf("%.3g s", (double)t / (double)USEC_PER_SEC);
}

/* Sets the client's timeout to what is left of the deadline. */
static int arm(struct mshare_client *c, const struct owner *o)
{
	usec_t now = now_usec();

	/* A timeout of 0 would wait for ever; less than a millisecond is late. */
	if (now + USEC_PER_MSEC >= o->deadline)
		return -ETIMEDOUT;
	return mshare_client_set_timeout(c, o->deadline - now);
}

/*
 * The error message for a failed step: doing is "connecting" or what the
 * request was for. A refusal by the daemon has its reason; otherwise the
 * errno tells whether it is missing or slow.
 */
static int failed(struct mshare_client *c, const struct owner *o, const char *doing, int r,
		  char **ret_error)
{
	const char *reason = c ? mshare_client_error_message(c) : NULL;
	_cleanup_free_ char *t = NULL;

	if (reason)
		*ret_error = strprintf("mshare-owner refused %s: %s (%s)", doing, reason, errno_to_name(r));
	else if (r == -ENOENT || r == -ECONNREFUSED)
		*ret_error = strprintf("mshare-owner is not running: cannot connect to %s: %s",
				       socket_path(o), strerror(-r));
	else if (r == -ETIMEDOUT || r == -EAGAIN) {
		/* EAGAIN without a reason: connect() found the daemon's
		 * backlog full until the deadline. */
		t = format_timeout(o->timeout);
		*ret_error = strprintf("mshare-owner did not answer within %s (at %s, for %s)", t ?: "the timeout",
				       socket_path(o), doing);
		r = -ETIMEDOUT;
	} else
		*ret_error = strprintf("cannot talk to mshare-owner at %s (%s): %s", socket_path(o), doing,
				       strerror(-r));
	return r;
}

static int owner_connect(const struct owner *o, struct mshare_client **ret, char **ret_error)
{
	_cleanup_(client_freep) struct mshare_client *c = NULL;
	int r;

	r = mshare_client_new(&c);
	if (r < 0)
		return r;
	r = arm(c, o);
	if (r >= 0)
		r = mshare_client_connect(c, o->socket, "mshare-oci-hook " MSHARE_HOOK_VERSION);
	if (r < 0)
		return failed(c, o, "the connection", r, ret_error);
	*ret = TAKE_PTR(c);
	return 0;
}

int owner_register(struct owner *o, const char *id, const char *name, json_t *annotations,
		   const struct region_list *regions, int listen_fd, int pidfd, char **ret_error)
{
	_cleanup_(client_freep) struct mshare_client *c = NULL;
	_cleanup_strv_free_ char **strv = NULL;
	_cleanup_free_ struct mshare_region_request *req = NULL;
	struct mshare_container container = { .id = id, .name = name };
	int r;

	*ret_error = NULL;
	if (annotations) {
		strv = oci_annotations_strv(annotations);
		if (!strv)
			return -ENOMEM;
		container.annotations = (const char *const *)strv;
	}
	req = calloc(regions->n, sizeof(*req));
	if (!req)
		return -ENOMEM;
	for (size_t i = 0; i < regions->n; i++)
		req[i] = (struct mshare_region_request){
			.name = regions->items[i].name,
			.rdonly = regions->items[i].mode != ACCESS_RW,
		};

	o->deadline = now_usec() + o->timeout;
	r = owner_connect(o, &c, ret_error);
	if (r < 0)
		return r;
	r = arm(c, o);
	if (r >= 0)
		r = mshare_client_register(c, &container, req, regions->n, listen_fd, pidfd);
	if (r < 0)
		return failed(c, o, "the registration", r, ret_error);
	return 0;
}

int owner_unregister(struct owner *o, const char *id, char **ret_error)
{
	_cleanup_(client_freep) struct mshare_client *c = NULL;
	int r;

	*ret_error = NULL;
	o->deadline = now_usec() + o->timeout;
	r = owner_connect(o, &c, ret_error);
	if (r == -ENOENT || r == -ECONNREFUSED) {
		/* No daemon, no registration. */
		free(*ret_error);
		*ret_error = NULL;
		return 0;
	}
	if (r < 0)
		return r;
	r = arm(c, o);
	if (r >= 0)
		r = mshare_client_unregister(c, id);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return failed(c, o, "the unregistration", r, ret_error);
	return 0;
}
