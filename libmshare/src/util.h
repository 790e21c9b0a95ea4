/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private helpers of libmshare: cleanup attributes and the step from the
 * internal convention (0 or a value on success, -errno on error) to the
 * public one (-1 and errno).
 */

#ifndef MSHARE_UTIL_H
#define MSHARE_UTIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Functions shared between the files of the library, never exported. */
#define MSHARE_HIDDEN __attribute__((visibility("hidden")))

#define _cleanup_(f) __attribute__((cleanup(f)))

static inline void mshare_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;

		close(*fd);
		errno = saved;
	}
}

static inline void mshare_fclosep(FILE **f)
{
	if (*f) {
		int saved = errno;

		fclose(*f);
		errno = saved;
	}
}

static inline void mshare_freep(void *p)
{
	free(*(void **)p);
}

#define _cleanup_close_		_cleanup_(mshare_closep)
#define _cleanup_fclose_	_cleanup_(mshare_fclosep)
#define _cleanup_free_		_cleanup_(mshare_freep)

/* *fd, leaving -1 behind for the cleanup. */
static inline int mshare_take_fd(int *fd)
{
	int r = *fd;

	*fd = -1;
	return r;
}

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
