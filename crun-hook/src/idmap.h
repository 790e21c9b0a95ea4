/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Who the container's root is on the host: the ids that a process's
 * /proc/PID/uid_map and gid_map map its user namespace's 0 to. The hook
 * creates the container's channel with those ids as its file-system ids,
 * because a file system mounted inside a user namespace (a tmpfs on /run in
 * a user-namespaced container) takes no new files from ids it does not map
 * (EOVERFLOW), not even from the host's root.
 */

#include <sys/types.h>

/*
 * Parses the text of a uid_map or gid_map ("INSIDE OUTSIDE COUNT" lines)
 * and returns in *ret the outside id of inside id 0. -ENOENT if 0 is not
 * mapped, -EBADMSG if the text is not a map.
 */
int idmap_parse_root(const char *text, unsigned long *ret);

/* The host uid and gid of root in the user namespace of process pid. */
int idmap_container_root(pid_t pid, uid_t *ret_uid, gid_t *ret_gid);
