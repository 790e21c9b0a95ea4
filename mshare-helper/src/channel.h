/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Container channels. An OCI runtime hook (root) registers a container: it
 * passes a listening socket that it bound inside the container's root
 * filesystem and a pidfd of the container's process, and names the regions
 * the container asks for. A connection accepted on that socket is served
 * only if its peer is a process of the container: in the container's cgroup
 * or a cgroup below it (the socket may be reachable from the host, through
 * a writable root file system, and its place proves nothing). Such a peer
 * is the container's, whatever credentials it shows, and may get only the
 * registered regions, in at most the mode registered and as the grants
 * still allow. A container that has no cgroup of its own (its process sits
 * in the root cgroup, or in a cgroup that holds the hook or the daemon) is
 * not registered: its processes could not be told from others.
 * The channel ends when the hook unregisters the container or when its
 * process exits (the pidfd turns readable). Its socket and pidfd are kept
 * in the fd store, so that a restarted daemon goes on serving it
 * (channel_adopt()); when the daemon stops it closes only its copies.
 *
 * A channel that ends is closed at once (its sockets leave the epoll set)
 * and freed after the event batch that ended it, once no connection refers
 * to it any more: events already fetched for it find it marked dead.
 */

#include <stdbool.h>
#include <stddef.h>

#include "mshare-common/protocol.h"
#include "policy.h"
#include "watch.h"

/* Containers registered at once, at most (fewer if descriptors are short:
 * each channel holds two). */
#define CHANNELS_MAX 4096

struct server;

struct channel {
	struct watch listen;		/* the container's socket */
	uint64_t serial;		/* names its descriptors in the fd store */
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
	char *cgroup;			/* its process's at registration */
};

/*
 * Takes the container and region list out of req (register), and the two
 * descriptors (closed on failure too), and starts serving the channel.
 * registrar_cgroup is the cgroup of the registering hook (required). Returns -EEXIST
 * if the id is registered, -ESRCH if the process is gone, -EBADF if
 * listen_fd is not a listening AF_UNIX SOCK_SEQPACKET socket or pidfd not
 * a pidfd, -ENOSPC past the server's max_channels (and, with *ret_error,
 * past the room in the fd store: fdstore_reserve()), -EPERM if the
 * container has no cgroup of its own and -EOPNOTSUPP without cgroup v2
 * (these two with *ret_error, to be freed, saying why).
 */
int channel_register(struct server *s, struct proto_request *req, int listen_fd, int pidfd,
		     const char *registrar_cgroup, struct channel **ret, char **ret_error);
/*
 * Serves again, after a restart, container c (its strings are taken) on
 * listen_fd with pidfd from the fd store (both taken, closed on failure).
 * -ESRCH if the container's process has exited meanwhile, -EBADF if the
 * descriptors are not what they should be.
 */
struct state_container;
int channel_adopt(struct server *s, struct state_container *c, int listen_fd, int pidfd,
		  struct channel **ret);
/*
 * A container's channel socket and pidfd from the fd store that no saved
 * state names: its registration (id, regions, cgroup), which lives only
 * in the state, was lost (systemd refused two saves in a row) or never
 * confirmed (a crash before the state named it). Without it nothing can
 * be served on the socket safely, and only the process's exit proves the
 * container gone: the channel is held, in the store but not served (its
 * connections wait in the queue), and leaves the store once the pidfd
 * says the process exited.
 */
struct held_channel {
	struct watch process;		/* pidfd: readable once the process exits */
	int listen_fd;
	uint64_t serial;
	pid_t pid;			/* for the log; 0 if it cannot be told */
	struct server *server;
	struct held_channel *next;	/* in server->held_channels */
};

/* Holds the channel of serial (see above; logged); listen_fd and pidfd
 * are taken, and closed on failure, which the store survives. */
int channel_hold(struct server *s, uint64_t serial, int listen_fd, int pidfd);

/* Whether a peer in cgroup is a process of the container (see above). */
bool channel_admits(const struct channel *ch, const char *cgroup);
/* Ends the channel (see above), out of the fd store too; why goes to the log. */
void channel_close(struct channel *ch, const char *why);
struct channel *channel_find(struct server *s, const char *id);
/* The mode region was registered with, or ACCESS_NONE. */
enum access_mode channel_registered_mode(const struct channel *ch, const char *region);
struct container_identity channel_identity(const struct channel *ch);
/* Frees the dead channels no connection refers to; after each event batch. */
void channel_collect(struct server *s);
/* Closes and frees every channel, held ones too (the daemon is stopping):
 * the fd store keeps them for the next daemon. */
void channel_close_all(struct server *s);
