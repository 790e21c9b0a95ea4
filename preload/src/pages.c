// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Page sizes: the base page, the huge page a mapping asks for.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mshare-common/macro.h"
#include "pages.h"

uint64_t page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);

	return p > 0 ? (uint64_t)p : 4096;
}

/* "Hugepagesize:       2048 kB" of /proc/meminfo, in bytes. */
static int default_huge_page_size(uint64_t *ret)
{
	static const char key[] = "\nHugepagesize:";
	_cleanup_close_ int fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
	char buf[8192];
	unsigned long long kb;
	const char *p;
	char *end;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	p = strstr(buf, key);
	if (!p)
		return -ENOENT;
	kb = strtoull(p + strlen(key), &end, 10);
	if (!kb || strncmp(end, " kB", 3) || kb > (UINT64_MAX >> 10))
		return -EPROTO;
	*ret = (uint64_t)kb << 10;
	return 0;
}

int huge_page_size(int flags, uint64_t *ret)
{
	unsigned shift = ((unsigned)flags >> MAP_HUGE_SHIFT) & MAP_HUGE_MASK;

	if (!shift)
		return default_huge_page_size(ret);
	if (shift < 12 || shift > 40)
		return -EINVAL;
	*ret = UINT64_C(1) << shift;
	return 0;
}

int round_up(uint64_t v, uint64_t to, uint64_t *ret)
{
	uint64_t r = v % to;

	if (!r) {
		*ret = v;
		return 0;
	}
	if (v > UINT64_MAX - (to - r))
		return -EOVERFLOW;
	*ret = v + (to - r);
	return 0;
}
