// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Moving the library's descriptors to high numbers.
 */

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fdplace.h"

static int fd_base(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= PRELOAD_FD_BASE + 16)
		return PRELOAD_FD_BASE;
	return (int)(rl.rlim_cur - rl.rlim_cur / 4);
}

int fd_move_high(int fd)
{
	int base = fd_base(), high;

	if (fd < 0 || fd >= base)
		return fd;
	high = fcntl(fd, F_DUPFD_CLOEXEC, base);
	if (high < 0)
		return fd;
	close(fd);
	return high;
}
