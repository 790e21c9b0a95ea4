/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * msharefs: ioctls on the files of msharefs, each an mshare region whose
 * page tables are shared by the processes that map it.
 */

#ifndef _LINUX_MSHAREFS_H
#define _LINUX_MSHAREFS_H

#include <linux/ioctl.h>
#include <linux/types.h>

/**
 * struct mshare_create - map an object into a region
 * @region_offset: where in the region, aligned to the page size (the huge
 *                 page size for hugetlb objects)
 * @size:          length of the mapping, aligned like @region_offset
 * @offset:        offset into @fd, aligned like @region_offset
 * @prot:          PROT_* protection of the mapping
 * @flags:         MAP_SHARED and MAP_FIXED, which are required; MAP_ANONYMOUS
 *                 if and only if @fd is -1; optionally MAP_POPULATE,
 *                 MAP_NORESERVE, and MAP_HUGETLB with its size bits for
 *                 anonymous memory
 * @fd:            the object: a regular file, memfd, shmem or hugetlbfs
 *                 file, or -1 for anonymous shared memory
 * @reserved:      must be zero
 */
struct mshare_create {
	__u64 region_offset;
	__u64 size;
	__u64 offset;
	__u32 prot;
	__u32 flags;
	__s32 fd;
	__u32 reserved;
};

/**
 * struct mshare_unmap - unmap a range of a region
 * @region_offset: start of the range, page aligned
 * @size:          length of the range, page aligned
 */
struct mshare_unmap {
	__u64 region_offset;
	__u64 size;
};

#define MSHAREFS_CREATE_MAPPING	_IOW('x', 0, struct mshare_create)
#define MSHAREFS_UNMAP		_IOW('x', 1, struct mshare_unmap)

#endif /* _LINUX_MSHAREFS_H */
