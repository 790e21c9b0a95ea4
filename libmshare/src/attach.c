// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mshare_attach(): the system call, or the mmap(2) it stands for when the
 * call cannot be reached.
 *
 * A seccomp filter written before the mshare calls existed answers them
 * with ENOSYS (podman's default profile) or EPERM (containerd's) and lets
 * mmap() through; such profiles cannot name the calls (libseccomp has no
 * names for them). The kernel's mshare_attach() is mmap() of the region's
 * descriptor with MAP_SHARED, a protection and MAP_FIXED_NOREPLACE that
 * follow from the flags, and the checks below; mmap() of the descriptor
 * gives the same window, with the same page tables. So on ENOSYS or EPERM
 * (which the call itself never returns), for a descriptor of msharefs
 * only, the window is made with mmap(). A kernel without mshare has no such
 * descriptors: there the call's error stands.
 */

#include <errno.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mshare.h"
#include "region.h"
#include "mshare_sysnum.h"

#define ATTACH_FLAGS	(MSHARE_ATTACH_RDONLY | MSHARE_ATTACH_EXEC | \
			 MSHARE_ATTACH_FIXED)

static void *fail(int error)
{
	errno = error;
	return MAP_FAILED;
}

/* What the kernel's mshare_attach() does, from user space. */
static void *attach_by_mmap(int error, int fd, off_t offset, size_t size,
			    void *addr, unsigned int flags)
{
	int prot = PROT_READ, mflags = MAP_SHARED;
	struct stat st;

	/* Not a region (or not a descriptor): the call's own answer. */
	if (mshare__region_stat(fd, &st) < 0)
		return fail(error);
	if (flags & ~ATTACH_FLAGS)
		return fail(EINVAL);
	/* An unsized region has st_size 0: no offset is inside it. */
	if (offset < 0 || offset >= st.st_size)
		return fail(EINVAL);
	if (!size)
		size = (size_t)(st.st_size - offset);
	if (!(flags & MSHARE_ATTACH_RDONLY))
		prot |= PROT_WRITE;
	if (flags & MSHARE_ATTACH_EXEC)
		prot |= PROT_EXEC;
	if (flags & MSHARE_ATTACH_FIXED) {
		if (!addr)
			return fail(EINVAL);
		mflags |= MAP_FIXED_NOREPLACE;
	}
	/* The region's mmap() checks alignment and range, as for the call. */
	return mmap(addr, size, prot, mflags, fd, offset);
}

void *mshare_attach(int fd, off_t offset, size_t size, void *addr,
		    unsigned int flags)
{
	long ret = syscall(__NR_mshare_attach, (long)fd, (long)offset,
			   (unsigned long)size, (unsigned long)addr,
			   (unsigned long)flags);

	if (ret == -1 && (errno == ENOSYS || errno == EPERM))
		return attach_by_mmap(errno, fd, offset, size, addr, flags);
	return ret == -1 ? MAP_FAILED : (void *)ret;
}
