// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Five of the six mshare system calls, through syscall(2): -1 and errno on
 * error. mshare_attach() is in attach.c.
 * Every argument is passed as a long, the width the kernel reads.
 */

#include <unistd.h>

#include "mshare.h"
#include "mshare_sysnum.h"

/* The kernel takes loff_t offsets; they are passed in one register. */
_Static_assert(sizeof(off_t) == sizeof(long), "off_t must be 64-bit");

int mshare_create(unsigned int flags)
{
	return (int)syscall(__NR_mshare_create, (unsigned long)flags);
}

int mshare_map(int fd, const struct mshare_map_args *args, size_t size)
{
	return (int)syscall(__NR_mshare_map, (long)fd, args,
			    (unsigned long)size);
}

int mshare_unmap(int fd, off_t region_offset, size_t len)
{
	return (int)syscall(__NR_mshare_unmap, (long)fd, (long)region_offset,
			    (unsigned long)len);
}

int mshare_protect(int fd, off_t region_offset, size_t len,
		   unsigned int prot)
{
	return (int)syscall(__NR_mshare_protect, (long)fd,
			    (long)region_offset, (unsigned long)len,
			    (unsigned long)prot);
}

int mshare_advise(int fd, off_t region_offset, size_t len, int advice)
{
	return (int)syscall(__NR_mshare_advise, (long)fd,
			    (long)region_offset, (unsigned long)len,
			    (long)advice);
}
