/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The container's channel to mshare-owner: a listening AF_UNIX
 * SOCK_SEQPACKET socket bound inside the container's root file system, so
 * that the container's processes can connect to it and nothing outside the
 * container can reach it except the host's root.
 */

#include <sys/types.h>

/*
 * Binds and listens on the channel at path (absolute, as the container
 * sees it; see channel_path_check()) in the container of process pid,
 * whose root file system is rootfs (absolute, as the runtime sees it).
 *
 * The container's file system is reached through /proc/PID/root: while the
 * runtime has not moved the container into its root yet (crun and runc run
 * createRuntime hooks then), rootfs under it; once it has, /proc/PID/root
 * itself. Every lookup below the root file system stays inside it
 * (openat2() RESOLVE_IN_ROOT: its symlinks cannot lead out), and missing
 * directories (mode 0755) and the socket (mode 0666) are made with the
 * file-system ids of the container's root, so the hook can do nothing
 * there that the container's root could not. A stale socket left at path
 * by an earlier run is replaced; a live one is not (-EADDRINUSE).
 *
 * pidfd refers to the same process; it proves that /proc/PID was that
 * process and not a new one with a recycled pid. Returns the listening
 * socket (close-on-exec) or -errno with *ret_error saying what failed.
 */
int channel_create(pid_t pid, int pidfd, const char *rootfs, const char *path, char **ret_error);
