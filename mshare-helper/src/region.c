/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <inttypes.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <mshare.h>

#include "crash.h"
#include "log.h"
#include "region.h"

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif

/* Populating advances this much between progress reports. */
#define POPULATE_CHUNK ((uint64_t)1 << 30)

static const char *const state_names[_REGION_STATE_MAX] = {
	[REGION_ACTIVE] = "active",
	[REGION_CHANGED] = "changed",
	[REGION_RETIRING] = "retiring",
	[REGION_FAILED] = "failed",
};

const char *region_state_to_string(enum region_state s)
{
	return s < _REGION_STATE_MAX ? state_names[s] : "unknown";
}

static unsigned log2_u64(uint64_t v)
{
	return 63u - (unsigned)__builtin_clzll(v);
}

/* Opens Path= and checks it can back the whole object. */
static int open_backing_file(const struct region_config *c)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	fd = open(c->path, ((c->prot & PROT_WRITE) ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return log_error_errno(errno, "Region '%s' (%s): cannot open Path=%s: %m",
				       c->name, c->source, c->path);
	if (fstat(fd, &st) < 0)
		return log_error_errno(errno, "Region '%s' (%s): cannot stat %s: %m",
				       c->name, c->source, c->path);
	if (!S_ISREG(st.st_mode))
		return log_error_errno(ENODEV, "Region '%s' (%s): %s is not a regular file",
				       c->name, c->source, c->path);
	/* Pages past the end of the file would give SIGBUS in every window. */
	if ((uint64_t)st.st_size < c->offset + c->size)
		return log_error_errno(EINVAL,
				       "Region '%s' (%s): %s has %" PRIu64 " bytes, fewer than Offset= plus Size= (%" PRIu64 ")",
				       c->name, c->source, c->path, (uint64_t)st.st_size,
				       c->offset + c->size);
	return TAKE_FD(fd);
}

static int make_memfd(const struct region_config *c)
{
	_cleanup_close_ int fd = -1;
	char name[16 + REGION_NAME_MAX];

	snprintf(name, sizeof(name), "mshare:%s", c->name);
	fd = memfd_create(name, MFD_CLOEXEC);
	if (fd < 0)
		return log_error_errno(errno, "Region '%s' (%s): cannot create a memfd: %m",
				       c->name, c->source);
	if (ftruncate(fd, (off_t)c->size) < 0)
		return log_error_errno(errno, "Region '%s' (%s): cannot size the memfd: %m",
				       c->name, c->source);
	return TAKE_FD(fd);
}

/* Puts the configured object at offset 0 of the region. */
static int region_map(struct region *r)
{
	const struct region_config *c = &r->config;
	_cleanup_close_ int backing = -1;
	unsigned int flags = MAP_SHARED;
	off_t backing_offset = 0;

	switch (c->backing) {
	case BACKING_ANONYMOUS:
		flags |= MAP_ANONYMOUS;
		break;
	case BACKING_HUGETLBFS:
		flags |= MAP_ANONYMOUS | MAP_HUGETLB |
			 (log2_u64(c->huge_page_size) << MAP_HUGE_SHIFT);
		break;
	case BACKING_MEMFD:
		backing = make_memfd(c);
		if (backing < 0)
			return backing;
		break;
	case BACKING_FILE:
		backing = open_backing_file(c);
		if (backing < 0)
			return backing;
		backing_offset = (off_t)c->offset;
		break;
	default:
		return -EINVAL;
	}

	/* The mapping holds its own reference to the backing file. */
	if (mshare_map_object(r->fd, 0, c->size, (unsigned)c->prot, flags, backing,
			      backing_offset) < 0)
		return log_error_errno(errno, "Region '%s' (%s): cannot map %s%s%s of %" PRIu64 " bytes: %m",
				       c->name, c->source, backing_to_string(c->backing),
				       c->path ? " " : "", c->path ?: "", c->size);
	return 0;
}

/* The descriptors handed out: new files of the region, without ownership.
 * Not logged: the callers say what for. */
static int region_open_sharers(struct region *r)
{
	struct stat st;

	if (fstat(r->fd, &st) < 0)
		return -errno;
	r->inode = (uint64_t)st.st_ino;
	r->fd_ro = mshare_fd_rdonly(r->fd);
	if (r->fd_ro < 0)
		return -errno;
	r->fd_rw = mshare_fd_rdwr(r->fd);
	if (r->fd_rw < 0)
		return -errno;
	return 0;
}

/* size rounded up to align; false if that overflows. */
static bool round_up(uint64_t size, uint64_t align, uint64_t *ret)
{
	if (size > UINT64_MAX - align + 1)
		return false;
	*ret = (size + align - 1) / align * align;
	return true;
}

/* A region of config's size, rounded up to align. */
static int region_size_for(const struct region_config *c, long align, uint64_t *ret)
{
	if (!round_up(c->size, (uint64_t)align, ret))
		return log_error_errno(EFBIG, "Region '%s' (%s): Size= is too large", c->name, strna(c->source));
	return 0;
}

static int region_setup(struct region *r)
{
	const struct region_config *c = &r->config;
	long align;
	int k;

	r->fd = mshare_create(O_CLOEXEC);
	if (r->fd < 0) {
		if (errno == ENOSYS)
			return log_error_errno(errno, "Region '%s': the running kernel has no mshare system calls: %m",
					       c->name);
		return log_error_errno(errno, "Region '%s' (%s): cannot create the region: %m",
				       c->name, c->source);
	}

	align = mshare_alignment(r->fd);
	if (align <= 0)
		return log_error_errno(align < 0 ? errno : EIO,
				       "Region '%s': cannot tell the sharing alignment: %m", c->name);
	r->align = (uint64_t)align;
	k = region_size_for(c, align, &r->region_size);
	if (k < 0)
		return k;
	if (ftruncate(r->fd, (off_t)r->region_size) < 0)
		return log_error_errno(errno, "Region '%s' (%s): cannot size the region to %" PRIu64 " bytes: %m",
				       c->name, c->source, r->region_size);

	k = region_map(r);
	if (k < 0)
		return k;
	k = region_open_sharers(r);
	if (k < 0)
		return log_error_errno(k, "Region '%s': cannot open the descriptors handed out: %m", c->name);
	return 0;
}

static struct region *region_new(const struct region_config *config)
{
	struct region *r = calloc(1, sizeof(*r));

	if (!r) {
		log_oom();
		return NULL;
	}
	r->fd = r->fd_ro = r->fd_rw = -1;
	if (region_config_copy(config, &r->config) < 0) {
		free(r);
		log_oom();
		return NULL;
	}
	return r;
}

int region_create(const struct region_config *config, struct region **ret)
{
	struct region *r;
	int k;

	r = region_new(config);
	if (!r)
		return -ENOMEM;
	k = region_setup(r);
	if (k < 0) {
		/* Whatever was made goes now; the entry stays, as "failed". */
		r->fd_rw = safe_close(r->fd_rw);
		r->fd_ro = safe_close(r->fd_ro);
		r->fd = safe_close(r->fd);
		r->region_size = 0;
		r->inode = 0;
		r->state = REGION_FAILED;
		r->error = -k;
	} else
		log_info("Region '%s' created (inode %" PRIu64 "): %s%s%s, %" PRIu64 " bytes, protection %s (%s).",
			 config->name, r->inode, backing_to_string(config->backing),
			 config->path ? " " : "", config->path ?: "", config->size,
			 prot_to_string(config->prot), config->source);
	*ret = r;
	return k;
}

struct region *region_new_failed(const struct region_config *config, int error)
{
	struct region *r = region_new(config);

	if (r) {
		r->state = REGION_FAILED;
		r->error = error < 0 ? -error : error;
	}
	return r;
}

/* What the kernel tells of fd: REGION_NOT_OWNER if it is no live region's
 * owner file (an older kernel does not tell ownership: owner_fd -1). */
static int region_inspect(int fd, struct mshare_fdinfo *info)
{
	/* Else mshare_info()'s EBADF could be about our descriptor, not
	 * about the file the store holds. */
	if (fcntl(fd, F_GETFD) < 0)
		return -errno;
	if (mshare_info(fd, info) < 0)
		/* With fd open, EBADF: the file is no mshare region at all. */
		return errno == EBADF ? REGION_NOT_OWNER : -errno;
	if (!info->owned || info->owner_fd == 0)
		return REGION_NOT_OWNER;
	if (info->align == 0)
		return -EIO;
	return 0;
}

/* Whether a region of info's size is one that c creates. */
static bool region_fits(const struct region_config *c, const struct mshare_fdinfo *info)
{
	uint64_t size;

	return round_up(c->size, info->align, &size) && size == info->size;
}

/* A stand-in configuration for a region known by its name and size only:
 * retiring, it is not handed out; claimed, it gets the real one. */
static struct region_config unknown_config(const char *name, uint64_t size)
{
	return (struct region_config){
		.name = (char *)name,
		.size = size,
		.backing = BACKING_ANONYMOUS,
		.prot = PROT_READ | PROT_WRITE,
		.source = (char *)"the fd store, without a saved configuration",
	};
}

int region_adopt(const char *name, const struct region_config *config, int fd, bool populated,
		 struct region **ret)
{
	struct mshare_fdinfo info;
	struct region_config guess;
	struct region *r;
	int k;

	k = region_inspect(fd, &info);
	if (k != 0)
		return k;
	if (config && !region_fits(config, &info)) {
		log_warning("Region '%s': the region in the fd store has %" PRIu64 " bytes, not what its saved "
			    "configuration gives; it is taken as a region whose configuration is not known.",
			    name, info.size);
		config = NULL;
	}
	guess = unknown_config(name, info.size);
	r = region_new(config ?: &guess);
	if (!r)
		return -ENOMEM;
	r->fd = fd;
	r->align = info.align;
	r->region_size = info.size;
	/* An unsaved one's contents are live: they win over populating. */
	r->populated = populated || !config;
	r->adopted = true;
	r->unsaved = !config;
	k = region_open_sharers(r);
	if (k < 0) {
		r->fd = -1; /* the caller's still */
		region_free(r);
		return k;
	}
	*ret = r;
	return 0;
}

int region_claim(struct region *r, const struct region_config *c)
{
	struct region_config n;
	uint64_t size;
	bool fits = round_up(c->size, r->align, &size) && size == r->region_size;

	if (region_config_copy(c, &n) < 0)
		return -ENOMEM;
	if (!fits)
		n.size = r->region_size;
	region_config_done(&r->config);
	r->config = n;
	r->unsaved = false;
	r->claimed = true;
	return fits;
}

int region_populate(struct region *r, region_progress_t progress, void *userdata)
{
	const struct region_config *c = &r->config;
	/* Writing would dirty every page of a file for nothing, and fails on
	 * an object mapped read-only: a claimed region's may be. */
	int advice = (c->prot & PROT_WRITE) && c->backing != BACKING_FILE && !r->claimed ?
			     MADV_POPULATE_WRITE : MADV_POPULATE_READ;
	uint64_t chunk = POPULATE_CHUNK, done = 0;
	usec_t start = now_usec();

	if (r->fd < 0)
		return -EBADF;
	/* Chunks stay huge page aligned: both are powers of two. */
	if (c->backing == BACKING_HUGETLBFS && c->huge_page_size > chunk)
		chunk = c->huge_page_size;

	while (done < c->size) {
		uint64_t n = c->size - done < chunk ? c->size - done : chunk;

		if (progress)
			progress(userdata, r, done);
		crash_point("populate");
		if (mshare_advise(r->fd, (off_t)done, n, advice) < 0) {
			r->populated = true; /* given up: not retried */
			return log_warning_errno(errno,
						 "Region '%s': populating failed after %" PRIu64 " of %" PRIu64 " bytes, the rest is faulted in on use: %m",
						 c->name, done, c->size);
		}
		done += n;
	}
	r->populated = true;
	log_info("Region '%s' populated: %" PRIu64 " bytes in %" PRIu64 " ms.", c->name, c->size,
		 (now_usec() - start) / USEC_PER_MSEC);
	return 0;
}

int region_stats(const struct region *r, struct region_stats *ret)
{
	struct mshare_fdinfo info;

	if (r->fd < 0)
		return -EBADF;
	if (mshare_info(r->fd, &info) < 0)
		return -errno;
	*ret = (struct region_stats){
		.rss_bytes = info.rss_pages * (uint64_t)sysconf(_SC_PAGESIZE),
		.pgtables_bytes = info.pgtables_bytes,
		.attached = info.attached,
		.windows = info.windows,
		.owned = info.owned != 0,
		.owner_fd = info.owner_fd != 0,
	};
	return 0;
}

void region_free(struct region *r)
{
	if (!r)
		return;
	safe_close(r->fd_rw);
	safe_close(r->fd_ro);
	safe_close(r->fd);
	region_config_done(&r->config);
	region_config_done(&r->pending);
	free(r);
}
