/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A stand-in for the mshare system calls on the host, whose kernel has
 * none, for tests/test-fake.sh: libmshare-preload-fake.so is the library
 * built on it instead of libmshare's wrappers, so that its region path
 * (sizing, windows, fork, munmap, System V, granted regions, their lock and
 * their checks) runs here. It is not the kernel: a "region" is a memfd, and
 * a window a shared mapping of it. What it cannot show (shared page
 * tables, a region that ends with its owner file, holes in a region) is the
 * guest test's (tests/guest-preload.c).
 *
 * As mshare-helper/tests/fake-mshare.c (the daemon's fake, which serves the
 * granted regions of these tests) does, ownership is the open file's: the
 * owner file holds an open file description lock (F_OFD_SETLK, read) on
 * byte 0, which no other open file of the memfd has; byte 0 only, so the
 * library's POSIX lock on PRELOAD_LOCK_BYTE does not meet it.
 *
 * MAP_HUGETLB objects are refused with ENOMEM, as by a kernel with no huge
 * pages in its pool. $FAKE_MSHARE_ATTACHED names a file holding the number
 * of processes mshare_info() reports attached (as for the daemon's fake).
 */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mshare.h>

#define FAKE_ALIGNMENT (2L << 20)
#define FAKE_PAGE 4096L

static struct flock owner_lock(short type)
{
	return (struct flock){ .l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
}

static int fail(int error)
{
	errno = error;
	return -1;
}

int mshare_create(unsigned int flags)
{
	struct flock fl = owner_lock(F_RDLCK);
	int fd;

	if (flags & ~(unsigned)O_CLOEXEC)
		return fail(EINVAL);
	fd = memfd_create("fake-mshare", (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0);
	if (fd >= 0 && fcntl(fd, F_OFD_SETLK, &fl) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Whether an open file other than fd's holds the owner lock: 1, 0, -1. */
static int locked_elsewhere(int fd)
{
	struct flock fl = owner_lock(F_WRLCK);

	if (fcntl(fd, F_OFD_GETLK, &fl) < 0)
		return -1;
	return fl.l_type != F_UNLCK;
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
	if (!st.st_size || region_offset < 0 || region_offset % FAKE_PAGE || !len ||
	    len % FAKE_PAGE || (off_t)len > st.st_size - region_offset || (prot & ~7u) ||
	    (flags & MAP_PRIVATE) || ((flags & MAP_ANONYMOUS) != 0) != (backing_fd < 0) ||
	    backing_offset < 0)
		return fail(EINVAL);
	if (flags & MAP_HUGETLB)
		return fail(ENOMEM);
	if (locked_elsewhere(fd) != 0)
		return fail(EPERM);
	return 0;
}

/* mmap() of the memfd, at an address aligned as a window's is. */
void *mshare_attach(int fd, off_t offset, size_t size, void *addr, unsigned int flags)
{
	int prot = (flags & MSHARE_ATTACH_RDONLY) ? PROT_READ : PROT_READ | PROT_WRITE;
	uintptr_t start;
	struct stat st;
	char *space;
	void *p;

	if (fstat(fd, &st) < 0)
		return MAP_FAILED;
	if ((flags & ~7u) || offset < 0 || offset % FAKE_ALIGNMENT || offset >= st.st_size ||
	    size % FAKE_ALIGNMENT || (off_t)size > st.st_size - offset) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	if (!size)
		size = (size_t)(st.st_size - offset);
	if (flags & MSHARE_ATTACH_FIXED) {
		if (!addr || (uintptr_t)addr % FAKE_ALIGNMENT) {
			errno = EINVAL;
			return MAP_FAILED;
		}
		return mmap(addr, size, prot, MAP_SHARED | MAP_FIXED_NOREPLACE, fd, offset);
	}
	/* Room for an aligned window, trimmed to it afterwards. */
	space = mmap(NULL, size + FAKE_ALIGNMENT, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		     -1, 0);
	if (space == MAP_FAILED)
		return MAP_FAILED;
	start = ((uintptr_t)space + FAKE_ALIGNMENT - 1) & ~(uintptr_t)(FAKE_ALIGNMENT - 1);
	p = mmap((void *)start, size, prot, MAP_SHARED | MAP_FIXED, fd, offset);
	if (p == MAP_FAILED) {
		munmap(space, size + FAKE_ALIGNMENT);
		return MAP_FAILED;
	}
	if (start > (uintptr_t)space)
		munmap(space, start - (uintptr_t)space);
	if ((uintptr_t)space + FAKE_ALIGNMENT > start)
		munmap((void *)(start + size), (uintptr_t)space + FAKE_ALIGNMENT - start);
	return p;
}

/*
 * Unlike the daemon's fake, this one opens no other file of the memfd to
 * ask whether anyone owns it: closing that file would drop the POSIX lock
 * the library holds on a granted region (a process's POSIX locks on a file
 * go with the first of its descriptors of it that it closes). So owned is
 * always 1 here, and owner_fd says whether another open file holds the
 * owner lock.
 */
int mshare_info(int fd, struct mshare_fdinfo *out)
{
	const char *p = getenv("FAKE_MSHARE_ATTACHED");
	unsigned attached = 0;
	struct stat st;
	int elsewhere;

	if (fstat(fd, &st) < 0)
		return -1;
	elsewhere = locked_elsewhere(fd);
	if (elsewhere < 0)
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
		.owned = 1,
		.owner_fd = !elsewhere,
		.attached = attached,
		.windows = attached,
		.rss_pages = (uint64_t)st.st_blocks / 8,
	};
	return 0;
}
