/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Container channels. An OCI runtime hook (root) registers a container: it
 * passes a listening socket that it bound inside the container's root
 * filesystem and a pidfd of the container's process, and names the regions
 * the container asks for. Every connection accepted on that socket is the
 * container's, whatever credentials its peer shows, and may get only those
 * regions, in at most the mode registered and as the grants still allow.
 * The channel ends when the hook unregisters the container, when its
 * process exits (the pidfd turns readable) or when the daemon stops.
 *
 * A channel that ends is closed at once (its sockets leave the epoll set)
 * and freed after the event batch that ended it, once no connection refers
 * to it any more: events already fetched for it find it marked dead.
 */

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"
#include "protocol.h"
#include "watch.h"

/* Containers registered at once, at most. */
#define CHANNELS_MAX 4096

struct server;

struct channel {
	struct watch listen;		/* the container's socket */
	struct watch process;		/* pidfd: readable once the process exits */
	struct server *server;
	struct channel *prev, *next;	/* in server->channels */
	bool dead;			/* closed; freed once n_connections is 0 */
	size_t n_connections;
	char *id;
	char *name;			/* or NULL */
	struct container_annotation *annotations; /* owned strings */
	size_t n_annotations;
	struct proto_region_request *regions;
	size_t n_regions;
	pid_t pid;			/* for the log */
};

/*
 * Takes the container and region list out of req (register), and the two
 * descriptors (closed on failure too), and starts serving the channel.
 * Returns -EEXIST if the id is registered, -ESRCH if the process is gone,
 * -EBADF if listen_fd is not a listening AF_UNIX SOCK_SEQPACKET socket or
 * pidfd not a pidfd, -ENOSPC past CHANNELS_MAX.
 */
int channel_register(struct server *s, struct proto_request *req, int listen_fd, int pidfd,
		     struct channel **ret);
/* Ends the channel (see above); why goes to the log. */
void channel_close(struct channel *ch, const char *why);
struct channel *channel_find(struct server *s, const char *id);
/* The mode region was registered with, or ACCESS_NONE. */
enum access_mode channel_registered_mode(const struct channel *ch, const char *region);
struct container_identity channel_identity(const struct channel *ch);
/* Frees the dead channels no connection refers to; after each event batch. */
void channel_collect(struct server *s);
/* Closes and frees every channel (the daemon is stopping). */
void channel_close_all(struct server *s);
