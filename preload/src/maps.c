// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Looking a mapping up in /proc/self/maps. See maps.h.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "maps.h"
#include "mshare-common/macro.h"

struct wanted {
	uintptr_t start, end;
	unsigned int major, minor;
	unsigned long ino;
};

/* "START-END PERMS OFFSET MAJOR:MINOR INODE [PATH]": the fields before the
 * path, which is all of a line that is kept. */
static bool line_is(const char *line, const struct wanted *x)
{
	uintptr_t start, end;
	unsigned long long offset;
	unsigned int major, minor;
	unsigned long ino;

	return sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %*s %llx %x:%x %lu", &start, &end, &offset,
		      &major, &minor, &ino) == 6 &&
	       start == x->start && end == x->end && offset == 0 && major == x->major &&
	       minor == x->minor && ino == x->ino;
}

/* Reads the list line by line (each cut to its head): 1 at the line that is
 * x, 0 at the end, -errno. */
static int find_line(int maps, const struct wanted *x)
{
	char buf[4096], line[128];
	size_t n = 0;
	ssize_t k;

	while ((k = read(maps, buf, sizeof(buf))) != 0) {
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		for (ssize_t i = 0; i < k; i++) {
			if (buf[i] != '\n') {
				if (n < sizeof(line) - 1)
					line[n++] = buf[i];
				continue;
			}
			line[n] = '\0';
			n = 0;
			if (line_is(line, x))
				return 1;
		}
	}
	return 0;
}

int maps_shows(uintptr_t start, uintptr_t end, int fd)
{
	_cleanup_close_ int maps = -1;
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	maps = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (maps < 0)
		return -errno;
	return find_line(maps, &(struct wanted){ .start = start, .end = end, .major = major(st.st_dev),
						 .minor = minor(st.st_dev), .ino = st.st_ino });
}
