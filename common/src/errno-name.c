// SPDX-License-Identifier: LGPL-2.1-or-later
#include <string.h>

#include "mshare-common/errno-name.h"

/* Linux errno values are below 4096 (MAX_ERRNO). */
#define ERRNO_MAX 4096

const char *errno_to_name(int error)
{
	const char *n;

	if (error < 0)
		error = -error;
	n = strerrorname_np(error);
	return n ? n : "EIO";
}

int errno_from_name(const char *name)
{
	for (int e = 1; name && e < ERRNO_MAX; e++) {
		const char *n = strerrorname_np(e);

		if (n && strcmp(n, name) == 0)
			return e;
	}
	return 0;
}
