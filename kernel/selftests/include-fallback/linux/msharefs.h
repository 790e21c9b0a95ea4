/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Fallback copy of include/uapi/linux/msharefs.h for compile-testing the
 * selftests before the kernel headers carrying it are installed. The
 * Makefile adds this directory only when $(HEADERS)/linux/msharefs.h is
 * missing; keep it identical to the uapi header of the kernel patches.
 */
#ifndef _UAPI_LINUX_MSHAREFS_H
#define _UAPI_LINUX_MSHAREFS_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define MSHAREFS_CREATE_MAPPING	_IOW('x', 0, struct mshare_create)
#define MSHAREFS_UNMAP		_IOW('x', 1, struct mshare_unmap)

struct mshare_create {
	__u64 region_offset;	/* where in the region, page aligned (huge page aligned for hugetlb) */
	__u64 size;		/* length, page aligned, nonzero */
	__u64 offset;		/* offset in the backing fd */
	__u32 prot;		/* PROT_* */
	__u32 flags;		/* MAP_SHARED | MAP_FIXED required; MAP_ANONYMOUS iff fd == -1;
				   optional MAP_POPULATE, MAP_NORESERVE, MAP_HUGETLB (anonymous only) */
	__s32 fd;		/* backing object or -1 */
	__u32 reserved;		/* must be 0 */
};

struct mshare_unmap {
	__u64 region_offset;
	__u64 size;
};

#endif /* _UAPI_LINUX_MSHAREFS_H */
