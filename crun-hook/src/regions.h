/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What a container asks for, from its annotations:
 *
 *   io.mshare.regions=NAME[:MODE][,NAME[:MODE]...]   MODE "ro" (default) or "rw"
 *   io.mshare.socket=/ABSOLUTE/PATH                 where its channel goes
 *
 * Pure parsing, no I/O, unit-tested on the host.
 */

#include <stddef.h>

#include "mshare-common/mode.h"

#define ANNOTATION_REGIONS "io.mshare.regions"
#define ANNOTATION_SOCKET "io.mshare.socket"
#define CHANNEL_PATH_DEFAULT "/run/mshare/mshare.sock"
/* As many as mshare-owner accepts in one register request. */
#define REGIONS_MAX 64
/* The workload connects to the path from inside the container: it must
 * fit sockaddr_un's sun_path with its terminating NUL. */
#define CHANNEL_PATH_MAX 107

struct region_request {
	char *name;
	enum access_mode mode;
};

struct region_list {
	struct region_request *items;
	size_t n;
};

void region_list_done(struct region_list *l);

/*
 * Parses the value of io.mshare.regions. Entries are separated by commas;
 * blanks around an entry are ignored. Returns 0, or -EINVAL with
 * *ret_error telling what is wrong (-ENOMEM leaves it NULL).
 */
int regions_parse(const char *s, struct region_list *ret, char **ret_error);

/* "pool:rw,catalog:ro", for messages; NULL if memory ran out. */
char *regions_format(const struct region_list *l);

/*
 * Checks the value of io.mshare.socket: an absolute path of at most
 * CHANNEL_PATH_MAX bytes, with no empty, "." or ".." components and a
 * file name after the last slash. Returns 0 or -EINVAL with *ret_error.
 */
int channel_path_check(const char *path, char **ret_error);
