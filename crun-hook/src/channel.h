/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The container's channel to mshare-owner: a listening AF_UNIX
 * SOCK_SEQPACKET socket bound inside the container's root file system, so
 * that the container's processes can connect to it and nothing outside the
 * container can reach it except the host's root.
 */

#include <sys/stat.h>
#include <sys/types.h>

#include "oci.h"

struct channel {
	int listen_fd;		/* the listening socket, close-on-exec */
	int dir_fd;		/* O_PATH descriptor of the directory it is bound in */
	char *name;		/* its name in there */
	dev_t dev;		/* the inode bound, which channel_remove() removes */
	ino_t ino;
	uid_t uid;		/* the container root's ids on the host */
	gid_t gid;
};

#define CHANNEL_NULL ((struct channel){ .listen_fd = -1, .dir_fd = -1 })

void channel_done(struct channel *ch);

/*
 * Binds and listens on the channel at path (absolute, as the container
 * sees it; see channel_path_check()) in the container of process pid,
 * whose config.json is config (root.path: absolute, as the runtime sees
 * it).
 *
 * The container's file system is reached through /proc/PID/root: while the
 * runtime has not moved the container into its root yet (crun and runc run
 * createRuntime hooks then), root.path under it; once it has,
 * /proc/PID/root itself.
 *
 * The channel goes only where the container itself will be able to write:
 * its directory must not be on a read-only root (root.readonly) or
 * read-only mount ("ro" or "rro") of config.json, nor under
 * linux.readonlyPaths (all of which the runtime makes read-only only after
 * createRuntime), or -EROFS. The directory is walked one component at a
 * time from the root file system, never through a symbolic link (-ELOOP)
 * and into a mount only where config.json has one (else -EXDEV); missing
 * directories (mode 0755) and the socket (mode 0666) are made with the
 * file-system ids of the container's root, so the hook can do nothing
 * there that the container's root could not. A stale socket left at path
 * by an earlier run is replaced; a live one is not (-EADDRINUSE).
 *
 * pidfd refers to the same process; it proves that /proc/PID was that
 * process and not a new one with a recycled pid. Returns 0 with *ret the
 * channel (free it with channel_done()), or -errno with *ret_error saying
 * what failed and nothing made but, perhaps, directories.
 */
int channel_create(pid_t pid, int pidfd, const struct oci_config *config, const char *path,
		   struct channel *ret, char **ret_error);

/*
 * Removes the channel's socket, if its name is still the socket that
 * channel_create() bound: after a failed registration, so that no socket
 * nobody serves stays in the container. Returns 1 if removed, 0 if the name
 * is gone or is something else now, -errno.
 */
int channel_remove(struct channel *ch);

/*
 * Whether something listens on the socket name in directory dirfd. The
 * probe connects through a descriptor of the name opened without following
 * a symbolic link, never to the name itself, which could be replaced by a
 * symbolic link to a socket elsewhere. Returns 1 if something listens (or
 * it cannot be told: a socket in use must not be replaced), 0 if nothing
 * does (a stale socket; *ret_st tells which one), -ELOOP if name is a
 * symbolic link, -ENOTSOCK if it is something else than a socket, -errno.
 */
int channel_probe(int dirfd, const char *name, struct stat *ret_st);
