/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Small helpers shared by the userspace components: cleanup attributes in
 * the style of systemd, and taking ownership out of them. The cleanups keep
 * errno, so that libmshare can set it on the way out of a function.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _noreturn_ __attribute__((noreturn))
#define _warn_unused_result_ __attribute__((warn_unused_result))

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static inline void freep(void *p)
{
	free(*(void **)p);
}

/* close() keeping errno, so that error paths can still report it. */
static inline int safe_close(int fd)
{
	if (fd >= 0) {
		int saved = errno;
		close(fd);
		errno = saved;
	}
	return -1;
}

static inline void closep(int *fd)
{
	safe_close(*fd);
}

static inline void fclosep(FILE **f)
{
	if (*f) {
		int saved = errno;

		fclose(*f);
		errno = saved;
	}
}

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)

/* Hand a pointer or fd out of a cleanup variable. */
#define TAKE_PTR(p)                          \
	({                                   \
		__typeof__(p) _p_ = (p);     \
		(p) = NULL;                  \
		_p_;                         \
	})
#define TAKE_FD(fd)                  \
	({                           \
		int _fd_ = (fd);     \
		(fd) = -1;           \
		_fd_;                \
	})

static inline int negative_errno(void)
{
	/* For "return -errno" after a libc call that may not have set it. */
	return errno > 0 ? -errno : -EIO;
}

static inline int streq(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

static inline const char *strempty(const char *s)
{
	return s ?: "";
}

static inline const char *strna(const char *s)
{
	return s ? s : "n/a";
}
