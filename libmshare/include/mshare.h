/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libmshare: wrappers for the mshare system calls.
 *
 * An mshare region is memory whose page tables are shared by every process
 * that maps it. A region is made with mshare_create(), sized once with
 * ftruncate() to a multiple of the sharing alignment (mshare_alignment()),
 * filled by its owner with mshare_map(), and mapped by any process that
 * holds a descriptor of it with mshare_attach() or mmap(). See
 * mshare_create(2) and libmshare(3).
 *
 * Every function returns -1 (mshare_attach(): MAP_FAILED) and sets errno on
 * error, as the C library's system call wrappers do.
 */

#ifndef MSHARE_H
#define MSHARE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>	/* MAP_FAILED, PROT_*, MAP_*, MADV_* */
#include <sys/types.h>	/* off_t */

/*
 * The flags and struct mshare_map_args of the system calls: the kernel's
 * uapi header where one is installed, else the copy of it that libmshare
 * carries (mshare-uapi/linux/mshare.h, installed next to this header). The
 * copy is the installed header itself, guard and all, so including
 * <linux/mshare.h> after this header is harmless. (In the kernel tree the
 * header's guard is _UAPI_LINUX_MSHARE_H; headers_install turns it into
 * _LINUX_MSHARE_H.)
 */
#if defined(__has_include)
# if __has_include(<linux/mshare.h>)
#  include <linux/mshare.h>
# endif
#endif
#if !defined(_LINUX_MSHARE_H) && !defined(_UAPI_LINUX_MSHARE_H)
# include "mshare-uapi/linux/mshare.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*
 * What /proc/thread-self/fdinfo shows of a region descriptor; see
 * mshare_info(). The layout is that of libmshare 0.1, whose pid_t owner
 * was where owned is (and read 0 once the region was gone, as owned
 * does); owner_fd sits in what was padding.
 */
struct mshare_fdinfo {
	uint64_t size;		/* size in bytes, 0 while unsized */
	uint64_t align;		/* sharing alignment in bytes */
	int owned;		/* 1 while an owner file of the region is open
				   (its contents live), 0 once the last is closed */
	unsigned int attached;	/* processes with a window onto the region */
	unsigned int windows;	/* windows onto the region */
	int owner_fd;		/* 1 if this descriptor refers to an owner file
				   (it carries ownership), 0 if not, -1 if the
				   kernel does not tell (before ownership moved
				   to the descriptor) */
	uint64_t rss_pages;	/* resident pages of the region */
	uint64_t pgtables_bytes; /* bytes of page tables of the region */
};

/*
 * System calls; see the section 2 manual pages.
 */

/*
 * Make a new, empty region. flags is 0 or O_CLOEXEC. Returns a read-write
 * descriptor of the region's owner file: whoever holds that open file (this
 * descriptor, its dups, a copy passed with SCM_RIGHTS) owns the region, and
 * the region lives until the last reference to it is closed.
 */
int mshare_create(unsigned int flags);

/*
 * Map [offset, offset + size) of the region fd into the caller (size 0:
 * up to the end of the region); offset and size are multiples of the
 * sharing alignment. addr is a hint, or the exact address with
 * MSHARE_ATTACH_FIXED. Returns the address of the window, or MAP_FAILED.
 */
void *mshare_attach(int fd, off_t offset, size_t size, void *addr,
		    unsigned int flags);

/*
 * Map the object that *args describes into the region, as
 * mmap(MAP_SHARED | MAP_FIXED) would map it into a process. size is
 * sizeof(*args) as the caller knows it (MSHARE_MAP_ARGS_SIZE_VER0 or more).
 * Owner only.
 */
int mshare_map(int fd, const struct mshare_map_args *args, size_t size);

/*
 * Unmap [region_offset, region_offset + len) of the region, as munmap()
 * would in a process. Owner only.
 */
int mshare_unmap(int fd, off_t region_offset, size_t len);

/*
 * Change the protection of [region_offset, region_offset + len) of the
 * region to prot, as mprotect() would in a process; every window sees the
 * change at once. Owner only.
 */
int mshare_protect(int fd, off_t region_offset, size_t len,
		   unsigned int prot);

/*
 * Give advice about [region_offset, region_offset + len) of the region,
 * as madvise() would in a process. Owner only.
 */
int mshare_advise(int fd, off_t region_offset, size_t len, int advice);

/*
 * Conveniences; see libmshare(3).
 */

/* mshare_request() flags */
#define MSHARE_REQUEST_RDONLY	0x1	/* ask for a read-only descriptor */

/* Where a container reaches mshare-owner, unless $MSHARE_SOCKET says. */
#define MSHARE_REQUEST_SOCKET	"/run/mshare/mshare.sock"

/*
 * Ask mshare-owner(8) for a descriptor of the region it owns under name,
 * on the socket it serves this container on ($MSHARE_SOCKET, else
 * MSHARE_REQUEST_SOCKET; put there by mshare-oci-hook(1)). Returns a
 * close-on-exec descriptor, read-only with MSHARE_REQUEST_RDONLY, or -1
 * with errno as the daemon answered: EACCES (not granted to this
 * container, or not in that mode), ENOENT (no such region), ENXIO (the
 * container is no longer registered), ECONNREFUSED or ENOENT (no daemon
 * serves this socket). Needs libjansson.
 */
int mshare_request(const char *name, unsigned int flags);

/*
 * mshare_map() with the arguments spelled out: map len bytes of
 * backing_fd from backing_offset (backing_fd -1 and backing_offset 0 with
 * MAP_ANONYMOUS in flags for anonymous shared memory) at region_offset in
 * the region, with protection prot.
 */
int mshare_map_object(int fd, off_t region_offset, size_t len,
		      unsigned int prot, unsigned int flags, int backing_fd,
		      off_t backing_offset);

/*
 * The sharing alignment of the region fd, in bytes: sizes, offsets and
 * addresses of windows are multiples of it. It is the align field of
 * mshare_info() (mshare-align in the fdinfo), not st_blksize, which cannot
 * hold it.
 */
long mshare_alignment(int fd);

/*
 * A new read-only descriptor (close-on-exec) of the region fd; it allows
 * only read-only windows and carries no ownership. For a region of
 * mshare_create(), the caller must hold an owner file of it.
 */
int mshare_fd_rdonly(int fd);

/*
 * A new read-write descriptor (close-on-exec) of the region fd that carries
 * no ownership: it maps read-write windows, but cannot change the region
 * and does not keep it alive. What an owner hands to a read-write sharer.
 * For a region of mshare_create(), the caller must hold an owner file of
 * it.
 */
int mshare_fd_rdwr(int fd);

/*
 * Fill *out with what the kernel shows of the region fd in
 * /proc/thread-self/fdinfo. Returns 0.
 */
int mshare_info(int fd, struct mshare_fdinfo *out);

#ifdef __cplusplus
}
#endif

#endif /* MSHARE_H */
