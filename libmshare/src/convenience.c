// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Conveniences over the system calls: mshare_map() with its arguments
 * spelled out, the sharing alignment, sharers' descriptors (read-only and
 * read-write) that carry no ownership.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

#include "fdinfo.h"
#include "mshare.h"
#include "region.h"
#include "util.h"

int mshare_map_object(int fd, off_t region_offset, size_t len,
		      unsigned int prot, unsigned int flags, int backing_fd,
		      off_t backing_offset)
{
	struct mshare_map_args args = {
		.region_offset	= (__u64)region_offset,
		.size		= len,
		.backing_offset	= (__u64)backing_offset,
		.prot		= prot,
		.flags		= flags,
		.backing_fd	= backing_fd,
	};

	/* A negative offset would reach the kernel as a huge one. */
	if (region_offset < 0 || backing_offset < 0) {
		errno = EINVAL;
		return -1;
	}
	return mshare_map(fd, &args, sizeof(args));
}

/*
 * The kernel shows the sharing alignment as mshare-align in the fdinfo of
 * a region (st_blksize, 32 bits wide, cannot hold it).
 */
static long alignment(int fd)
{
	struct mshare_fdinfo info;
	struct stat st;
	int r = mshare__region_stat(fd, &st);

	if (r < 0)
		return r;
	r = mshare__info(fd, &info);
	if (r < 0)
		return r;
	if (!info.align)
		return -EPROTO;
	if (info.align > LONG_MAX)
		return -EOVERFLOW;
	return (long)info.align;
}

long mshare_alignment(int fd)
{
	return mshare_ret(alignment(fd));
}

/*
 * Opening the region again through /proc gives a new file with the mode of
 * the open and no ownership; for a region of mshare_create() the kernel
 * allows it only to a process that holds an owner file of the region.
 * thread-self, not self: a thread may have a file table of its own.
 */
static int fd_reopen(int fd, int mode)
{
	char path[MSHARE_PROC_PATH_MAX];
	struct stat st;
	int r = mshare__region_stat(fd, &st);

	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "/proc/thread-self/fd/%d", fd);
	r = open(path, mode | O_CLOEXEC);
	return r < 0 ? -errno : r;
}

int mshare_fd_rdonly(int fd)
{
	return (int)mshare_ret(fd_reopen(fd, O_RDONLY));
}

int mshare_fd_rdwr(int fd)
{
	return (int)mshare_ret(fd_reopen(fd, O_RDWR));
}
