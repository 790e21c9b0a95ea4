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

/* The descriptors handed out: new files of the region, without ownership. */
static int region_open_sharers(struct region *r)
{
	const struct region_config *c = &r->config;
	struct stat st;

	if (fstat(r->fd, &st) < 0)
		return log_error_errno(errno, "Region '%s': cannot stat its descriptor: %m", c->name);
	r->inode = (uint64_t)st.st_ino;
	r->fd_ro = mshare_fd_rdonly(r->fd);
	if (r->fd_ro < 0)
		return log_error_errno(errno, "Region '%s': cannot make a read-only descriptor: %m",
				       c->name);
	r->fd_rw = mshare_fd_rdwr(r->fd);
	if (r->fd_rw < 0)
		return log_error_errno(errno, "Region '%s': cannot make a read-write descriptor: %m",
				       c->name);
	return 0;
}

/* A region of config's size, rounded up to align. */
static int region_size_for(const struct region_config *c, long align, uint64_t *ret)
{
	if (c->size > UINT64_MAX - (uint64_t)align + 1)
		return log_error_errno(EFBIG, "Region '%s' (%s): Size= is too large", c->name, strna(c->source));
	*ret = (c->size + (uint64_t)align - 1) / (uint64_t)align * (uint64_t)align;
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
	k = region_size_for(c, align, &r->region_size);
	if (k < 0)
		return k;
	if (ftruncate(r->fd, (off_t)r->region_size) < 0)
		return log_error_errno(errno, "Region '%s' (%s): cannot size the region to %" PRIu64 " bytes: %m",
				       c->name, c->source, r->region_size);

	k = region_map(r);
	if (k < 0)
		return k;
	return region_open_sharers(r);
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

int region_adopt(const struct region_config *config, int fd, bool populated, struct region **ret)
{
	const char *name = config->name;
	struct mshare_fdinfo info;
	struct region *r;
	long align;
	int k;

	r = region_new(config);
	if (!r) {
		safe_close(fd);
		return -ENOMEM;
	}
	r->fd = fd;
	r->populated = populated;
	r->adopted = true;

	align = mshare_alignment(r->fd);
	if (align <= 0 || mshare_info(r->fd, &info) < 0) {
		k = log_error_errno(align == 0 ? EIO : errno,
				    "Region '%s': the descriptor in the fd store is not a region: %m", name);
		goto fail;
	}
	if (info.owner_fd == 0) {
		k = log_error_errno(EPERM, "Region '%s': the descriptor in the fd store is not its owner file.",
				    name);
		goto fail;
	}
	k = region_size_for(config, align, &r->region_size);
	if (k < 0)
		goto fail;
	if (info.size != r->region_size) {
		k = log_error_errno(EINVAL, "Region '%s': the region in the fd store has %" PRIu64
				    " bytes, its saved configuration says %" PRIu64 ".",
				    name, info.size, r->region_size);
		goto fail;
	}
	k = region_open_sharers(r);
	if (k < 0)
		goto fail;
	*ret = r;
	return 0;
fail:
	region_free(r);
	return k;
}

int region_populate(struct region *r, region_progress_t progress, void *userdata)
{
	const struct region_config *c = &r->config;
	/* Writing would dirty every page of a file for nothing. */
	int advice = (c->prot & PROT_WRITE) && c->backing != BACKING_FILE ?
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
