// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Whether a descriptor is an mshare region: a regular file of msharefs,
 * the filesystem behind both mshare_create() and /sys/fs/mshare.
 */

#include <errno.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "region.h"

#if defined(__has_include)
# if __has_include(<linux/magic.h>)
#  include <linux/magic.h>
# endif
#endif
#ifndef MSHARE_MAGIC
# define MSHARE_MAGIC	0x4d534852	/* "MSHR", statfs(2) f_type of msharefs */
#endif

int mshare__region_stat(int fd, struct stat *st)
{
	struct statfs sfs;

	if (fstatfs(fd, &sfs) < 0)
		return -errno;
	if (sfs.f_type != MSHARE_MAGIC)
		return -EBADF;
	if (fstat(fd, st) < 0)
		return -errno;
	if (!S_ISREG(st->st_mode))
		return -EBADF;
	return 0;
}
