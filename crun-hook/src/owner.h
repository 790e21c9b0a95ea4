/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The hook's conversation with mshare-owner over its main socket
 * (docs/protocol.md: register, unregister), through libmshare-client, within
 * a deadline.
 */

#include <jansson.h>

#include "mshare-common/clock.h"
#include "regions.h"

struct owner {
	const char *socket;	/* NULL: the default, /run/mshare/owner.sock */
	usec_t timeout;		/* for the whole conversation, from connect() on */
	usec_t deadline;	/* CLOCK_MONOTONIC (now_usec()); set when it starts */
};

/*
 * Registers container id (name may be NULL; annotations: all of the
 * container's) with the regions it asks for, handing over its channel's
 * listening socket and a pidfd of its process. Returns 0 or -errno, with
 * *ret_error as "WHAT: REASON": "mshare-owner is not running: ...",
 * "mshare-owner did not answer within 5 s", "mshare-owner refused the
 * registration: REASON (ENAME)".
 */
int owner_register(struct owner *o, const char *id, const char *name, json_t *annotations,
		   const struct region_list *regions, int listen_fd, int pidfd, char **ret_error);

/*
 * Drops the registration of container id. A daemon that is not running or
 * does not know the container is not an error: nothing is registered.
 */
int owner_unregister(struct owner *o, const char *id, char **ret_error);
