/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A stand-in for libmshare on kernels without the mshare system calls (the
 * host): a "region" is a memfd. Only for tests/test-daemon.py, which runs
 * the daemon's socket, policy, reload and robustness logic on the host;
 * the real thing runs in the guest. $FAKE_MSHARE_ATTACHED names a file
 * holding the number of processes mshare_info() reports attached.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mshare.h>

#define FAKE_ALIGNMENT (2L << 20)

int mshare_create(unsigned int flags)
{
	if (flags & ~(unsigned)O_CLOEXEC) {
		errno = EINVAL;
		return -1;
	}
	return memfd_create("fake-mshare", (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0);
}

long mshare_alignment(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -1;
	return FAKE_ALIGNMENT;
}

int mshare_map_object(int fd, off_t region_offset, size_t len, unsigned int prot,
		      unsigned int flags, int backing_fd, off_t backing_offset)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -1;
	if (region_offset != 0 || len == 0 || (off_t)len > st.st_size || (prot & ~7u) ||
	    !(flags & MAP_SHARED) || (flags & MAP_PRIVATE) || backing_offset < 0 ||
	    ((flags & MAP_ANONYMOUS) != 0) != (backing_fd < 0)) {
		errno = EINVAL;
		return -1;
	}
	if (backing_fd >= 0 && fstat(backing_fd, &st) < 0)
		return -1;
	return 0;
}

int mshare_advise(int fd, off_t region_offset, size_t len, int advice)
{
	struct stat st;

	(void)advice;
	if (fstat(fd, &st) < 0)
		return -1;
	if (region_offset < 0 || region_offset + (off_t)len > st.st_size) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int mshare_fd_rdonly(int fd)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return open(path, O_RDONLY | O_CLOEXEC);
}

int mshare_info(int fd, struct mshare_fdinfo *out)
{
	const char *p = getenv("FAKE_MSHARE_ATTACHED");
	struct stat st;
	unsigned attached = 0;

	if (fstat(fd, &st) < 0)
		return -1;
	if (p) {
		FILE *f = fopen(p, "re");

		if (f) {
			if (fscanf(f, "%u", &attached) != 1)
				attached = 0;
			fclose(f);
		}
	}
	*out = (struct mshare_fdinfo){
		.size = (uint64_t)st.st_size,
		.align = FAKE_ALIGNMENT,
		.owner = getpid(),
		.attached = attached,
		.windows = attached,
		.rss_pages = (uint64_t)st.st_blocks / 8,
		.pgtables_bytes = attached ? 4096 : 0,
	};
	return 0;
}
