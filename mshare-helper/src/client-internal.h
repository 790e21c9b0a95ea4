/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What mshare-ctl uses of the client beyond the public API. */

#include <mshare-client.h>

#include "mshare-common/protocol.h"

/*
 * Sends req and reads the reply. A refusal is returned as -errno (its
 * message kept for mshare_client_error_message()); on success *ret gets the
 * reply and, if ret_fd is not NULL, *ret_fd a descriptor sent with it
 * (or -1). Descriptors nobody asked for are closed.
 */
int mshare_client_call(struct mshare_client *c, const struct proto_request *req,
		       struct proto_reply *ret, int *ret_fd);
/* The same, sending the n_fds descriptors fds along with req. */
int mshare_client_call_fds(struct mshare_client *c, const struct proto_request *req,
			   const int *fds, size_t n_fds, struct proto_reply *ret, int *ret_fd);
