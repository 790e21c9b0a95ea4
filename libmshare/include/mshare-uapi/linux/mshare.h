/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * mshare: regions of memory whose page tables are shared by every process
 * that maps them. See Documentation/mm/mshare.rst.
 *
 * A region is made with mshare_create(), sized once with ftruncate() in
 * multiples of the sharing alignment (mshare-align in the fdinfo of the
 * region fd), filled by its owner with mshare_map(), and attached by
 * other processes with mshare_attach() or mmap().
 */

#ifndef _LINUX_MSHARE_H
#define _LINUX_MSHARE_H

#include <linux/types.h>

/* mshare_attach() flags */
#define MSHARE_ATTACH_RDONLY	0x1	/* a read-only window */
#define MSHARE_ATTACH_EXEC	0x2	/* code in the region may run */
#define MSHARE_ATTACH_FIXED	0x4	/* at addr exactly, never replacing */

/**
 * struct mshare_map_args - what mshare_map() puts into a region
 * @region_offset:  where in the region, aligned to the page size (the huge
 *                  page size for hugetlb objects)
 * @size:           length, aligned like @region_offset
 * @backing_offset: offset into @backing_fd, aligned like @region_offset
 * @prot:           PROT_* protection of the mapping
 * @flags:          MAP_ANONYMOUS for anonymous shared memory (then
 *                  @backing_fd must be -1), optionally MAP_POPULATE,
 *                  MAP_NORESERVE, MAP_FIXED_NOREPLACE, and MAP_HUGETLB
 *                  with its size bits for anonymous memory. MAP_SHARED
 *                  and MAP_FIXED are implied and may be given.
 * @backing_fd:     a regular file, memfd, shmem or hugetlbfs file, or -1
 * @__reserved:     must be zero
 */
struct mshare_map_args {
	__u64 region_offset;
	__u64 size;
	__u64 backing_offset;
	__u32 prot;
	__u32 flags;
	__s32 backing_fd;
	__u32 __reserved;
};

#define MSHARE_MAP_ARGS_SIZE_VER0	40

#endif /* _LINUX_MSHARE_H */
