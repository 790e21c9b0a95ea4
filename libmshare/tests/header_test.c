// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Compile test of the public header, as C and as C++: the definitions it
 * falls back on match the kernel's uapi header, and every function is
 * declared with the kernel's calling conventions. -DEXPECT_UAPI: the
 * kernel's <linux/mshare.h> must be the one in use.
 */

#include <mshare.h>

#include <stddef.h>

#ifdef __cplusplus
# define STATIC_ASSERT(e) static_assert(e, #e)
#else
# define STATIC_ASSERT(e) _Static_assert(e, #e)
#endif

#ifdef EXPECT_UAPI
# if !defined(__has_include)
#  error "__has_include is needed to find <linux/mshare.h>"
# elif !__has_include(<linux/mshare.h>)
#  error "<linux/mshare.h> is not on the include path"
# endif
#endif

/* Including the kernel's header after ours is harmless. */
#if defined(__has_include)
# if __has_include(<linux/mshare.h>)
#  include <linux/mshare.h>
# endif
#endif

STATIC_ASSERT(MSHARE_ATTACH_RDONLY == 0x1);
STATIC_ASSERT(MSHARE_ATTACH_EXEC == 0x2);
STATIC_ASSERT(MSHARE_ATTACH_FIXED == 0x4);
STATIC_ASSERT(MSHARE_MAP_ARGS_SIZE_VER0 == 40);
STATIC_ASSERT(sizeof(struct mshare_map_args) == MSHARE_MAP_ARGS_SIZE_VER0);
STATIC_ASSERT(offsetof(struct mshare_map_args, region_offset) == 0);
STATIC_ASSERT(offsetof(struct mshare_map_args, size) == 8);
STATIC_ASSERT(offsetof(struct mshare_map_args, backing_offset) == 16);
STATIC_ASSERT(offsetof(struct mshare_map_args, prot) == 24);
STATIC_ASSERT(offsetof(struct mshare_map_args, flags) == 28);
STATIC_ASSERT(offsetof(struct mshare_map_args, backing_fd) == 32);
STATIC_ASSERT(offsetof(struct mshare_map_args, __reserved) == 36);

/* The layout of libmshare 0.1's struct, whose pid_t owner was at 16. */
STATIC_ASSERT(sizeof(struct mshare_fdinfo) == 48);
STATIC_ASSERT(offsetof(struct mshare_fdinfo, size) == 0);
STATIC_ASSERT(offsetof(struct mshare_fdinfo, align) == 8);
STATIC_ASSERT(offsetof(struct mshare_fdinfo, owned) == 16);
STATIC_ASSERT(offsetof(struct mshare_fdinfo, attached) == 20);
STATIC_ASSERT(offsetof(struct mshare_fdinfo, windows) == 24);
STATIC_ASSERT(offsetof(struct mshare_fdinfo, owner_fd) == 28);
STATIC_ASSERT(offsetof(struct mshare_fdinfo, rss_pages) == 32);
STATIC_ASSERT(offsetof(struct mshare_fdinfo, pgtables_bytes) == 40);

/* The declarations, by their types. */
static int (*const f_create)(unsigned int) = mshare_create;
static void *(*const f_attach)(int, off_t, size_t, void *, unsigned int) =
	mshare_attach;
static int (*const f_map)(int, const struct mshare_map_args *, size_t) =
	mshare_map;
static int (*const f_unmap)(int, off_t, size_t) = mshare_unmap;
static int (*const f_protect)(int, off_t, size_t, unsigned int) =
	mshare_protect;
static int (*const f_advise)(int, off_t, size_t, int) = mshare_advise;
static int (*const f_map_object)(int, off_t, size_t, unsigned int,
				 unsigned int, int, off_t) = mshare_map_object;
static long (*const f_alignment)(int) = mshare_alignment;
static int (*const f_fd_rdonly)(int) = mshare_fd_rdonly;
static int (*const f_fd_rdwr)(int) = mshare_fd_rdwr;
static int (*const f_info)(int, struct mshare_fdinfo *) = mshare_info;

int main(void)
{
	struct mshare_fdinfo info = { 0, 0, 0, 0, 0, 0, 0, 0 };

	(void)f_create; (void)f_attach; (void)f_map; (void)f_unmap;
	(void)f_protect; (void)f_advise; (void)f_map_object;
	(void)f_alignment; (void)f_fd_rdonly; (void)f_fd_rdwr; (void)f_info;
	return (int)info.attached;
}
