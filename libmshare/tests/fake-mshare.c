/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A stand-in for libmshare's system-call wrappers on kernels without the
 * mshare calls (the host), for the host tests of libmshare's users: linked
 * into mshare-helper's mshare-owner-fake (tests/test-daemon.py) and into
 * preload's libmshare-preload-fake.so (tests/test-fake.sh). It is not the
 * kernel: a "region" is a memfd, a window a shared mapping of it aligned as
 * a window is. What it cannot show (shared page tables, a region that ends
 * with its owner file, holes in a region) is for the guest tests.
 *
 * Ownership is the open file's, as in the kernel: mshare_create() takes an
 * open file description lock (F_OFD_SETLK, read) on byte 0 of the memfd,
 * which only that open file (its dups, copies passed with SCM_RIGHTS, the
 * one in an fd store) holds; mshare_fd_rdonly() and mshare_fd_rdwr() open
 * other files of it, whose changes get EPERM. mshare_info() finds the owner
 * lock in /proc/locks rather than by opening another file of the memfd:
 * closing that file would drop the POSIX locks the caller holds on it
 * (preload locks a granted region with one).
 *
 * MAP_HUGETLB objects are refused with ENOMEM, as by a kernel with no huge
 * pages in its pool, unless $FAKE_MSHARE_HUGE_PAGES is set. $FAKE_MSHARE_ATTACHED names a file holding the number
 * of processes mshare_info() reports attached.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <mshare.h>

#define FAKE_ALIGNMENT (2L << 20)
#define FAKE_PAGE 4096L

/* The byte the owner lock covers. */
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

/* Whether any open file of st's memfd holds the owner lock: 1, 0, -1. */
static int locked_anywhere(const struct stat *st)
{
	unsigned int major, minor;
	unsigned long ino;
	char line[256], kind[16];
	FILE *f = fopen("/proc/locks", "re");
	long start;
	int found = 0;

	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*d: %15s %*s %*s %*d %x:%x:%lu %ld", kind, &major, &minor, &ino,
			   &start) == 5)
			found = !strcmp(kind, "OFDLCK") && major == major(st->st_dev) &&
				minor == minor(st->st_dev) && ino == st->st_ino && start == 0;
	fclose(f);
	return found;
}

static int reopen(int fd, int mode)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return open(path, mode | O_CLOEXEC);
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
	    !(flags & MAP_SHARED) || (flags & MAP_PRIVATE) ||
	    ((flags & MAP_ANONYMOUS) != 0) != (backing_fd < 0) || backing_offset < 0)
		return fail(EINVAL);
	if (backing_fd >= 0 && fstat(backing_fd, &st) < 0)
		return -1;
	if ((flags & MAP_HUGETLB) && !getenv("FAKE_MSHARE_HUGE_PAGES"))
		return fail(ENOMEM);
	if (locked_elsewhere(fd) != 0)
		return fail(EPERM); /* not the owner file */
	return 0;
}

int mshare_advise(int fd, off_t region_offset, size_t len, int advice)
{
	struct stat st;

	(void)advice;
	if (fstat(fd, &st) < 0)
		return -1;
	if (region_offset < 0 || region_offset + (off_t)len > st.st_size)
		return fail(EINVAL);
	if (locked_elsewhere(fd) != 0)
		return fail(EPERM);
	return 0;
}

int mshare_fd_rdonly(int fd)
{
	return reopen(fd, O_RDONLY);
}

int mshare_fd_rdwr(int fd)
{
	return reopen(fd, O_RDWR);
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

int mshare_info(int fd, struct mshare_fdinfo *out)
{
	const char *p = getenv("FAKE_MSHARE_ATTACHED");
	unsigned int attached = 0;
	int any, elsewhere;
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -1;
	any = locked_anywhere(&st);
	elsewhere = locked_elsewhere(fd);
	if (any < 0 || elsewhere < 0)
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
		.owned = any,
		.owner_fd = any && !elsewhere,
		.attached = attached,
		.windows = attached,
		.rss_pages = (uint64_t)st.st_blocks / 8,
		.pgtables_bytes = attached ? 4096 : 0,
	};
	return 0;
}
