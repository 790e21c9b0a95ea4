/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The owner socket: accepts connections, reads one request per message,
 * answers it, and hands region descriptors out with SCM_RIGHTS. No client
 * can stall or kill it: every socket is non-blocking, every connection has
 * a deadline, and a client that vanishes is just forgotten. Connections are
 * capped in all, per uid on the owner socket and per container channel,
 * and the last max_connections / 8 slots are kept for root on the owner
 * socket (mshare-ctl, the hook's registrations): no user and no container
 * can take every slot. Past a cap a client gets a refusal that says which.
 */

#include <stdbool.h>
#include <stddef.h>

#include "fdstore.h"
#include "manager.h"
#include "watch.h"

#define SERVER_TIMEOUT_DEFAULT_USEC (5 * USEC_PER_SEC)
#define SERVER_MAX_CONNECTIONS_DEFAULT 4096
#define SERVER_MAX_PER_USER_DEFAULT 256
#define SERVER_MAX_PER_CONTAINER_DEFAULT 64

struct conn;
struct channel;
struct held_channel;

/* Connections on the owner socket of one uid. */
struct uid_count {
	uid_t uid;
	size_t n;
};

/* Logs at most one line per interval, and says how many it held back. */
struct ratelimit {
	usec_t last;
	uint64_t suppressed;
};

struct server {
	struct watch listen;
	int epoll_fd;
	struct manager *manager;
	usec_t timeout;			/* a connection's deadline: idle this long */
	size_t max_connections;
	size_t max_per_user;		/* on the owner socket, for each uid but 0 */
	size_t max_per_container;	/* on each container channel */
	size_t max_channels;		/* containers registered at once */
	size_t n_connections;
	struct uid_count *uids;		/* of the owner socket's peers, unordered */
	size_t n_uids;
	struct conn *head, *tail;	/* by deadline, earliest first */
	usec_t listen_paused_until;	/* after EMFILE and friends; 0 if not */
	struct ratelimit refusal_log;	/* connections past a cap */
	struct ratelimit outsider_log;	/* peers of a channel not in its container */
	uint64_t n_refused;
	char *buf;			/* receive buffer, shared by all connections */
	struct channel *channels;	/* registered containers (channel.h) */
	size_t n_channels;		/* of them not dead */
	struct held_channel *held_channels; /* in the store, not served (channel.h) */
	size_t n_held_channels;
	uint64_t next_serial;		/* of the next channel: names its fds in the store */
	struct fdstore *store;		/* never NULL; may be disabled */
	/* "reload" requests, from root peers only */
	int (*reload)(void *userdata, char **ret_message);
	/* writes the state, after a registration and before its reply, and
	 * after a channel ends (may be NULL) */
	void (*save)(void *userdata);
	void *userdata;
};

int server_init(struct server *s, int epoll_fd, int listen_fd, struct manager *m, struct fdstore *store);
/*
 * Sizes max_connections (at most *max_connections) and max_channels for
 * nofile descriptors, of which reserve stay free for everything else: a
 * connection holds two (its socket and a reply's region descriptor waiting
 * to be sent), a channel two (its socket and its pidfd).
 */
void server_size_for_fds(size_t nofile, size_t reserve, size_t *max_connections, size_t *max_channels);
/* When server_process_timeouts() wants to run next; USEC_INFINITY if never. */
usec_t server_next_wakeup(const struct server *s);
void server_process_timeouts(struct server *s, usec_t now);
/* Accepts a burst of connections on listen: the owner socket (ch NULL) or
 * the socket of container channel ch. */
void server_accept(struct server *s, struct watch *listen, struct channel *ch);
/* Closes every connection and channel; the listening socket belongs to the
 * caller. */
void server_done(struct server *s);
