// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Regions to serve from: made and owned by the process, or granted by
 * mshare-owner and locked while in use. See region.h.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include <mshare.h>

#include "fdplace.h"
#include "pages.h"
#include "real.h"
#include "region.h"

/* Whether a granted region is in use in this process (table lock held). */
static bool granted_busy;

/* What a mapping of len bytes with object_flags occupies. */
static int object_length(uint64_t len, int object_flags, uint64_t *ret, struct why *w)
{
	uint64_t page = page_size();
	int r;

	if (object_flags & MAP_HUGETLB) {
		r = huge_page_size(object_flags, &page);
		if (r < 0)
			return why_set(w, r, "cannot tell the huge page size: %s", strerrordesc_np(-r));
	}
	if (round_up(len, page, ret) < 0)
		return why_set(w, -EOVERFLOW, "%" PRIu64 " bytes cannot be rounded up to the page size",
			       len);
	return 0;
}

static int open_own(uint64_t len, int object_flags, struct region *r, struct why *w)
{
	_cleanup_close_ int fd = -1;
	uint64_t object, size;
	long align;
	int k;

	k = object_length(len, object_flags, &object, w);
	if (k < 0)
		return k;
	fd = mshare_create(O_CLOEXEC);
	if (fd < 0)
		return why_call(w, -errno, "mshare_create");
	fd = fd_move_high(TAKE_FD(fd));
	align = mshare_alignment(fd);
	if (align < 0)
		return why_call(w, -errno, "mshare_alignment");
	if (round_up(object, (uint64_t)align, &size) < 0 || size > INT64_MAX)
		return why_set(w, -EOVERFLOW,
			       "%" PRIu64 " bytes cannot be aligned to the sharing alignment (%ld bytes)",
			       len, align);
	if (ftruncate(fd, (off_t)size) < 0)
		return why_call(w, -errno, "ftruncate of the region");
	if (mshare_map_object(fd, 0, object, PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS | (unsigned)object_flags, -1, 0) < 0)
		return why_call(w, -errno,
				(object_flags & MAP_HUGETLB) ? "mshare_map of huge pages" : "mshare_map");
	*r = (struct region){ .fd = TAKE_FD(fd), .size = size, .align = (uint64_t)align,
			      .object = object };
	return 0;
}

static const char *socket_path(void)
{
	const char *p = secure_getenv("MSHARE_SOCKET");

	return p && *p ? p : MSHARE_REQUEST_SOCKET;
}

/* mshare_request()'s error, with what it means. */
static int request_failed(struct why *w, int error, const char *name)
{
	const char *path = socket_path(), *hint = NULL;

	switch (-error) {
	case ENOENT:
		hint = access(path, F_OK) < 0 ? "no socket there: is mshare-owner running?"
					       : "mshare-owner has no such region";
		break;
	case ECONNREFUSED:
		hint = "no mshare-owner listens there";
		break;
	case EACCES:
		hint = "the region is not granted to this process read-write";
		break;
	case ENXIO:
		hint = "the region could not be created, or this container is no longer registered";
		break;
	case ETIMEDOUT:
		hint = "mshare-owner did not answer";
		break;
	}
	return why_set(w, error, "mshare_request('%s') on %s: %s%s%s%s", name, path,
		       strerrordesc_np(-error), hint ? " (" : "", hint ?: "", hint ? ")" : "");
}

/* The lock that makes a granted region this process's alone. */
static int lock_granted(int fd, const char *name, struct why *w)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_start = PRELOAD_LOCK_BYTE, .l_len = 1 };

	if (fcntl(fd, F_SETLK, &fl) == 0)
		return 0;
	if (errno != EAGAIN && errno != EACCES)
		return why_set(w, -errno, "cannot lock region '%s': %s", name, strerrordesc_np(errno));
	fl = (struct flock){ .l_type = F_WRLCK, .l_whence = SEEK_SET,
			     .l_start = PRELOAD_LOCK_BYTE, .l_len = 1 };
	if (fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK && fl.l_pid > 0)
		return why_set(w, -EBUSY, "region '%s' is in use by process %d", name, (int)fl.l_pid);
	return why_set(w, -EBUSY, "region '%s' is in use by another process", name);
}

static int open_granted(const char *name, uint64_t len, int object_flags, struct region *r,
			struct why *w)
{
	struct mshare_fdinfo info;
	_cleanup_close_ int fd = -1;
	uint64_t object;
	int k;

	if (granted_busy)
		return why_set(w, -EBUSY, "region '%s' serves another mapping of this process already",
			       name);
	k = object_length(len, object_flags, &object, w);
	if (k < 0)
		return k;
	fd = mshare_request(name, 0);
	if (fd < 0)
		return request_failed(w, -errno, name);
	fd = fd_move_high(TAKE_FD(fd));
	if (mshare_info(fd, &info) < 0)
		return why_call(w, -errno, "mshare_info of the granted region");
	if (!info.owned)
		return why_set(w, -ENXIO, "region '%s' is gone: mshare-owner let go of it", name);
	if (info.size < object)
		return why_set(w, -ENOMEM, "region '%s' is %" PRIu64 " bytes, smaller than the %" PRIu64
			       " bytes asked for", name, info.size, object);
	k = lock_granted(fd, name, w);
	if (k < 0)
		return k;
	/* Under the lock: no other process of ours can attach meanwhile. */
	if (mshare_info(fd, &info) < 0)
		return why_call(w, -errno, "mshare_info of the granted region");
	if (info.attached)
		return why_set(w, -EBUSY, "region '%s' has windows in %u process%s already", name,
			       info.attached, info.attached == 1 ? "" : "es");
	*r = (struct region){ .fd = TAKE_FD(fd), .size = info.size, .align = info.align,
			      .object = object, .granted = true };
	granted_busy = true;
	return 0;
}

/*
 * Writes zeros over [0, r->object) of the window with read(2) from
 * /dev/zero: the kernel's copy fails with EFAULT where nothing is mapped
 * read-write, where a store would raise SIGSEGV.
 */
static int clear_granted(const struct region *r, void *window, const char *name, struct why *w)
{
	_cleanup_close_ int zero = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	uint64_t done = 0;

	if (zero < 0)
		return why_set(w, -errno, "cannot open /dev/zero to clear region '%s': %s", name,
			       strerrordesc_np(errno));
	while (done < r->object) {
		uint64_t left = r->object - done;
		ssize_t n = read(zero, (char *)window + done, left < (1u << 30) ? left : (1u << 30));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EFAULT)
			return why_set(w, -ENOMEM, "region '%s' maps only %" PRIu64 " of the first %" PRIu64
				       " bytes read-write", name, done, r->object);
		if (n <= 0)
			return why_set(w, n < 0 ? -errno : -EIO, "cannot clear region '%s': %s", name,
				       n < 0 ? strerrordesc_np(errno) : "short read from /dev/zero");
		done += (uint64_t)n;
	}
	return 0;
}

/*
 * Whether the library's window, just made, is the only one onto a granted
 * region, before clearing it. The check under the lock keeps other users of
 * the library away, but a client that does not take the lock may attach
 * between that check and the library's window, and clearing would destroy
 * what it uses. The kernel counts the library's own window: one process,
 * one window. More is someone else's, and the region is theirs. (At most,
 * not exactly one: the host tests' fake of the calls counts no windows.)
 */
static int check_alone(const struct region *r, const char *name, struct why *w)
{
	struct mshare_fdinfo info;

	if (mshare_info(r->fd, &info) < 0)
		return why_call(w, -errno, "mshare_info of the granted region");
	if (info.attached > 1 || info.windows > 1)
		return why_set(w, -EBUSY, "region '%s' was attached by another process while this one "
			       "took it (%u processes have windows)", name, info.attached);
	return 0;
}

void *region_window(const struct region *r, void *addr, unsigned flags, struct why *w)
{
	void *p = mshare_attach(r->fd, 0, 0, addr, flags);

	if (p != MAP_FAILED)
		return p;
	if (errno == ENOMEM)
		why_set(w, -ENOMEM, "mshare_attach: %s (a window takes %" PRIu64
			" bytes of address space: is RLIMIT_AS set?)", strerrordesc_np(ENOMEM), r->size);
	else
		why_call(w, -errno, "mshare_attach");
	return MAP_FAILED;
}

int region_adopt(const struct config *c, uint64_t len, int object_flags, void *hint,
		 struct region *r, void **window, struct why *w)
{
	int k;

	*r = REGION_NULL;
	k = c->region[0] ? open_granted(c->region, len, object_flags, r, w)
			 : open_own(len, object_flags, r, w);
	if (k < 0)
		return k;
	*window = region_window(r, hint, 0, w);
	if (*window == MAP_FAILED) {
		k = w->error;
		region_close(r);
		return k;
	}
	if (r->granted) {
		k = check_alone(r, c->region, w);
		if (k == 0)
			k = clear_granted(r, *window, c->region, w);
		if (k < 0) {
			real_munmap(*window, r->size);
			region_close(r);
			return k;
		}
	}
	return 0;
}

void region_close(struct region *r)
{
	if (r->fd < 0)
		return;
	safe_close(r->fd);
	if (r->granted)
		granted_busy = false;
	*r = REGION_NULL;
}

const char *region_describe(const struct region *r, char *buf, size_t len)
{
	if (!r->granted)
		return "a region of its own";
	snprintf(buf, len, "region '%s'", config_get()->region);
	return buf;
}
