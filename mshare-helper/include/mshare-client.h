/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libmshare-client: ask mshare-owner(8) for region descriptors over its
 * socket (protocol version 1, docs/protocol.md). Used by mshare-ctl(1) and
 * meant for other clients of the daemon, such as an OCI runtime hook.
 *
 * Every function returns 0 or a positive value on success and a negative
 * errno-style value on failure. When the daemon refused a request, the
 * error is the one it named, and mshare_client_error_message() tells its
 * reason. Not thread-safe: one client per thread.
 */
#ifndef MSHARE_CLIENT_H
#define MSHARE_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MSHARE_CLIENT_SOCKET_DEFAULT "/run/mshare/owner.sock"
#define MSHARE_CLIENT_TIMEOUT_DEFAULT_USEC (30ULL * 1000000ULL)

struct mshare_client;

/* A container a trusted (root) client asks for, as an OCI hook would. */
struct mshare_container {
	const char *name;			/* or NULL */
	const char *id;				/* or NULL */
	const char *const *annotations;		/* "KEY=VALUE", NULL-terminated, or NULL */
};

/* A client, not connected yet. */
int mshare_client_new(struct mshare_client **ret);
void mshare_client_free(struct mshare_client *c);

/*
 * Connects to the daemon at path (NULL: MSHARE_CLIENT_SOCKET_DEFAULT) and
 * greets it, which checks that it speaks our protocol version (else
 * -EPROTONOSUPPORT). client_name (may be NULL) only shows in the daemon's
 * debug log. A daemon at its connection limit refuses with -EAGAIN.
 */
int mshare_client_connect(struct mshare_client *c, const char *path,
			  const char *client_name);

/* How long to wait for each reply (default 30 s); 0 waits for ever. */
int mshare_client_set_timeout(struct mshare_client *c, uint64_t usec);

/* The daemon's explanation of the last refused request, or NULL. */
const char *mshare_client_error_message(const struct mshare_client *c);

/*
 * Gets a descriptor of region name: read-only if rdonly, else read-write.
 * With container set (root only), the container grants decide instead of
 * the caller's own. The descriptor is close-on-exec and the caller's; its
 * region's size (a multiple of the sharing alignment) goes to
 * *ret_region_size if that is not NULL.
 */
int mshare_client_get(struct mshare_client *c, const char *name, bool rdonly,
		      const struct mshare_container *container, int *ret_fd,
		      uint64_t *ret_region_size);

/* A region a container asks for when it is registered. */
struct mshare_region_request {
	const char *name;
	bool rdonly;
};

/*
 * Registers a container (root only; what an OCI runtime hook does): from
 * now on the daemon accepts connections on listen_fd, a listening AF_UNIX
 * SOCK_SEQPACKET socket that only the container can reach, and answers them
 * as the container's: with the regions asked for here, in at most the mode
 * asked, as long as the grants for the container allow. container->id is
 * required. pidfd is a pidfd of the container's process: when it exits,
 * the daemon drops the registration by itself. Both descriptors stay the
 * caller's (the daemon gets copies). Fails with -ENOENT (a region is not
 * configured), -EACCES (a region is not granted to the container in the
 * mode asked), -EEXIST (the id is registered already) or -ESRCH (the
 * process has exited); the daemon's reason names the region.
 */
int mshare_client_register(struct mshare_client *c, const struct mshare_container *container,
			   const struct mshare_region_request *regions, size_t n_regions,
			   int listen_fd, int pidfd);

/* Drops the registration of container id (root only); -ENOENT if it is not
 * registered. */
int mshare_client_unregister(struct mshare_client *c, const char *id);

/* Reloads the daemon's configuration (root only); *ret_message (may be
 * NULL), to be freed, says what became of the regions. */
int mshare_client_reload(struct mshare_client *c, char **ret_message);

#ifdef __cplusplus
}
#endif

#endif
