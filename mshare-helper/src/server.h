/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The owner socket: accepts connections, reads one request per message,
 * answers it, and hands region descriptors out with SCM_RIGHTS. No client
 * can stall or kill it: every socket is non-blocking, every connection has
 * a deadline, the number of connections is capped (those past the cap get
 * a refusal), and a client that vanishes is just forgotten.
 */

#include <stdbool.h>
#include <stddef.h>

#include "manager.h"
#include "watch.h"

#define SERVER_TIMEOUT_DEFAULT_USEC (5 * USEC_PER_SEC)
#define SERVER_MAX_CONNECTIONS_DEFAULT 4096

struct conn;
struct channel;

struct server {
	struct watch listen;
	int epoll_fd;
	struct manager *manager;
	usec_t timeout;			/* a connection's deadline: idle this long */
	size_t max_connections;
	size_t n_connections;
	struct conn *head, *tail;	/* by deadline, earliest first */
	usec_t listen_paused_until;	/* after EMFILE and friends; 0 if not */
	usec_t refusals_logged;		/* rate limit for "too many connections" */
	uint64_t n_refused;
	char *buf;			/* receive buffer, shared by all connections */
	struct channel *channels;	/* registered containers (channel.h) */
	size_t n_channels;		/* of them not dead */
	/* "reload" requests, from root peers only */
	int (*reload)(void *userdata, char **ret_message);
	void *userdata;
};

int server_init(struct server *s, int epoll_fd, int listen_fd, struct manager *m);
/* When server_process_timeouts() wants to run next; USEC_INFINITY if never. */
usec_t server_next_wakeup(const struct server *s);
void server_process_timeouts(struct server *s, usec_t now);
/* Accepts a burst of connections on listen: the owner socket (ch NULL) or
 * the socket of container channel ch. */
void server_accept(struct server *s, struct watch *listen, struct channel *ch);
/* Closes every connection and channel; the listening socket belongs to the
 * caller. */
void server_done(struct server *s);
