/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private helpers of libmshare: the step from the internal convention (0 or
 * a value on success, -errno on error) to the public one (-1 and errno).
 * The cleanup attributes are the common ones (mshare-common/macro.h).
 */

#ifndef MSHARE_UTIL_H
#define MSHARE_UTIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "mshare-common/macro.h"

/* Functions shared between the files of the library, never exported. */
#define MSHARE_HIDDEN __attribute__((visibility("hidden")))

/* r if r >= 0; otherwise errno = -r and -1. */
static inline long mshare_ret(long r)
{
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/* Room for "/proc/thread-self/fdinfo/" and any int. */
#define MSHARE_PROC_PATH_MAX	64

#endif /* MSHARE_UTIL_H */
