/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A stand-in for libmshare on kernels without the mshare system calls (the
 * host): a "region" is a memfd. Only for tests/test-daemon.py, which runs
 * the daemon's socket, policy, reload, restart and robustness logic on the
 * host; the real thing runs in the guest. $FAKE_MSHARE_ATTACHED names a file
 * holding the number of processes mshare_info() reports attached.
 *
 * Ownership is the open file's, as in the kernel: mshare_create() takes an
 * open file description lock (F_OFD_SETLK) on the memfd, which only that
 * open file (its dups, copies passed with SCM_RIGHTS, the one in an fd
 * store) holds. A file another open of it conflicts with is a sharer's; so
 * the owner_fd and owned of mshare_info(), and a test, can tell an owner
 * file from the descriptors mshare_fd_rdonly() and mshare_fd_rdwr() open.
 * What the fake cannot do: end the region when the owner file goes (the
 * memfd lives while any descriptor does).
 *
 * $FAKE_MSHARE_CRASH=WHERE kills the daemon at crash_point(WHERE) (crash.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mshare.h>

#include "crash.h"

#define FAKE_ALIGNMENT (2L << 20)

/* The byte the owner lock covers. */
static struct flock owner_lock(short type)
{
	return (struct flock){ .l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
}

int mshare_create(unsigned int flags)
{
	struct flock fl = owner_lock(F_RDLCK);
	int fd;

	if (flags & ~(unsigned)O_CLOEXEC) {
		errno = EINVAL;
		return -1;
	}
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
	if (locked_elsewhere(fd) != 0) {
		errno = EPERM; /* not the owner file */
		return -1;
	}
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

int mshare_info(int fd, struct mshare_fdinfo *out)
{
	const char *p = getenv("FAKE_MSHARE_ATTACHED");
	struct stat st;
	unsigned attached = 0;
	int other, elsewhere, any;

	if (fstat(fd, &st) < 0)
		return -1;
	/* A new open file conflicts with the owner lock wherever it is. */
	other = reopen(fd, O_RDONLY);
	if (other < 0)
		return -1;
	any = locked_elsewhere(other);
	close(other);
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

void crash_point(const char *where)
{
	const char *want = getenv("FAKE_MSHARE_CRASH");

	if (want && strcmp(want, where) == 0) {
		fprintf(stderr, "fake-mshare: crashing at %s\n", where);
		kill(getpid(), SIGKILL);
	}
}
