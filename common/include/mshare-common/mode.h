/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* How a region is handed out: read-only or read-write descriptors. */

#include <errno.h>
#include <string.h>

enum access_mode {
	ACCESS_NONE = 0,
	ACCESS_RO = 1,
	ACCESS_RW = 2,
};

static inline const char *access_mode_to_string(enum access_mode m)
{
	return m == ACCESS_RW ? "rw" : m == ACCESS_RO ? "ro" : "none";
}

/* Only "ro" and "rw": nobody asks for "none". */
static inline int access_mode_from_string(const char *s)
{
	if (strcmp(s, "ro") == 0)
		return ACCESS_RO;
	if (strcmp(s, "rw") == 0)
		return ACCESS_RW;
	return -EINVAL;
}
