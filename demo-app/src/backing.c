/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "backing.h"
#include "mshare-common/log.h"
#include "mshare.h"
#include "util.h"

#define HUGETLB_ALIGN (1ull << 30)

const char *backing_kind_name(enum backing_kind kind)
{
	switch (kind) {
	case BACKING_MSHARE:
		return "mshare";
	case BACKING_SHM:
		return "shm";
	case BACKING_HUGETLB:
		return "hugetlb";
	}
	return "?";
}

int backing_parse(const char *s, struct backing_spec *spec)
{
	const char *colon = strchr(s, ':');
	size_t len = colon ? (size_t)(colon - s) : strlen(s);
	const char *arg = colon ? colon + 1 : NULL;

	if (len == 6 && !strncmp(s, "mshare", len)) {
		if (arg && !*arg)
			return -EINVAL;
		*spec = (struct backing_spec){ BACKING_MSHARE, arg };
		return 0;
	}
	if (!arg || arg[0] != '/')
		return -EINVAL; /* shm and hugetlb take an absolute path */
	if (len == 3 && !strncmp(s, "shm", len))
		*spec = (struct backing_spec){ BACKING_SHM, arg };
	else if (len == 7 && !strncmp(s, "hugetlb", len))
		*spec = (struct backing_spec){ BACKING_HUGETLB, arg };
	else
		return -EINVAL;
	return 0;
}

/* ---- mshare ---- */

/* $MSHARE_FD_<NAME>: NAME in upper case, other than letters and digits as '_'. */
static const char *region_fd_env(const char *name)
{
	char var[128] = "MSHARE_FD_";
	size_t n = strlen(var);

	for (; *name && n < sizeof(var) - 1; name++, n++)
		var[n] = isalnum((unsigned char)*name) ? (char)toupper((unsigned char)*name) : '_';
	var[n] = '\0';
	return getenv(var);
}

static int mshare_region_fd(const struct backing_spec *spec, struct backing_map *m)
{
	const char *env = spec->arg ? region_fd_env(spec->arg) : getenv("MSHARE_FD");
	int fd;

	if (!spec->arg && !env) {
		log_error("mshare: $MSHARE_FD is not set: run under `mshare-ctl run NAME -- ...`, "
			  "or name the region (--backing=mshare:NAME)");
		return -EINVAL;
	}
	if (env) {
		if (parse_fd(env, &fd) < 0) {
			log_error("mshare: the region descriptor \"%s\" from the environment is not a "
				  "number", env);
			return -EINVAL;
		}
		const char *name = spec->arg ?: getenv("MSHARE_REGION");

		snprintf(m->what, sizeof(m->what), "mshare:%s (fd %d)", name ?: "?", fd);
		return fd;
	}
	fd = mshare_request(spec->arg, 0);
	if (fd < 0) {
		const char *sock = getenv("MSHARE_SOCKET");

		return log_error_errno(negative_errno(),
				       "mshare: asking mshare-owner for region %s on %s: %m",
				       spec->arg, sock ?: MSHARE_REQUEST_SOCKET);
	}
	snprintf(m->what, sizeof(m->what), "mshare:%s", spec->arg);
	return fd;
}

static int region_map(const struct backing_spec *spec, struct backing_map *m)
{
	_cleanup_close_ int fd = -1;
	struct mshare_fdinfo info;
	void *addr;
	int r;

	fd = mshare_region_fd(spec, m);
	if (fd < 0)
		return fd;
	addr = mshare_attach(fd, 0, 0, NULL, 0);
	if (addr == MAP_FAILED) {
		r = negative_errno();
		if (r == -ENOSYS)
			log_error("%s: mshare_attach: this kernel has no mshare system calls", m->what);
		else
			log_error_errno(r, "%s: mshare_attach (read-write): %m", m->what);
		return r;
	}
	/* The window spans the whole region: its size, to unmap it. */
	if (mshare_info(fd, &info) < 0) {
		r = log_error_errno(negative_errno(), "%s: reading the region's fdinfo: %m", m->what);
		return r; /* the window stays: we cannot know its length */
	}
	m->addr = addr;
	m->map_len = info.size;
	m->size = info.size;
	m->page_size = 0;
	return 0;
}

/* ---- shm and hugetlb: a file ---- */

static int check_fs(int fd, const struct backing_spec *spec, struct backing_map *m)
{
	struct statfs st;

	if (fstatfs(fd, &st) < 0)
		return log_error_errno(negative_errno(), "%s: fstatfs: %m", m->what);
	if (spec->kind == BACKING_SHM && (unsigned long)st.f_type != TMPFS_MAGIC) {
		log_error("%s: not on a tmpfs (file system type 0x%lx); shm needs one, such as /dev/shm",
			  m->what, (unsigned long)st.f_type);
		return -EINVAL;
	}
	if (spec->kind == BACKING_HUGETLB && (unsigned long)st.f_type != HUGETLBFS_MAGIC) {
		log_error("%s: not on a hugetlbfs mount (file system type 0x%lx)", m->what,
			  (unsigned long)st.f_type);
		return -EINVAL;
	}
	m->page_size = spec->kind == BACKING_HUGETLB ? (uint64_t)st.f_bsize : (uint64_t)getpagesize();
	return 0;
}

/* mmap(MAP_SHARED) of len bytes of fd; for hugetlb at a 1 GiB-aligned address. */
static void *map_file(int fd, size_t len, enum backing_kind kind)
{
	size_t span;
	uintptr_t start, aligned;
	void *p;

	if (kind != BACKING_HUGETLB)
		return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	/* Reserve room to align in, then map over the aligned part of it. */
	span = len + HUGETLB_ALIGN;
	p = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return p;
	start = (uintptr_t)p;
	aligned = (start + HUGETLB_ALIGN - 1) & ~(uintptr_t)(HUGETLB_ALIGN - 1);
	if (aligned > start)
		munmap(p, aligned - start);
	if (start + span > aligned + len)
		munmap((void *)(aligned + len), start + span - (aligned + len));
	p = mmap((void *)aligned, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
	if (p == MAP_FAILED) {
		int saved = errno;

		munmap((void *)aligned, len);
		errno = saved;
	}
	return p;
}

static int file_map(const struct backing_spec *spec, uint64_t create_size, struct backing_map *m)
{
	_cleanup_close_ int fd = -1;
	struct stat st;
	uint64_t size;
	void *addr;
	int r;

	snprintf(m->what, sizeof(m->what), "%s:%s", backing_kind_name(spec->kind), spec->arg);
	fd = open(spec->arg, O_RDWR | O_CLOEXEC | (create_size ? O_CREAT : 0), 0666);
	if (fd < 0)
		return log_error_errno(negative_errno(), "%s: open: %m", m->what);
	r = check_fs(fd, spec, m);
	if (r < 0)
		return r;
	if (create_size) {
		if (create_size % m->page_size) {
			log_error("%s: --size=%" PRIu64 " is not a multiple of the page size (%" PRIu64
				  " bytes)", m->what, create_size, m->page_size);
			return -EINVAL;
		}
		if (ftruncate(fd, (off_t)create_size) < 0)
			return log_error_errno(negative_errno(), "%s: setting its size to %" PRIu64 ": %m",
					       m->what, create_size);
		size = create_size;
	} else {
		if (fstat(fd, &st) < 0)
			return log_error_errno(negative_errno(), "%s: fstat: %m", m->what);
		size = (uint64_t)st.st_size;
		if (!size) {
			log_error("%s: empty file: the pool is not loaded", m->what);
			return -EPROTO;
		}
	}
	addr = map_file(fd, size, spec->kind);
	if (addr == MAP_FAILED) {
		r = negative_errno();
		if (spec->kind == BACKING_HUGETLB && r == -ENOMEM)
			log_error("%s: mmap of %" PRIu64 " bytes: not enough free huge pages "
				  "(see HugePages_Free in /proc/meminfo, /proc/sys/vm/nr_hugepages)",
				  m->what, size);
		else
			log_error_errno(r, "%s: mmap of %" PRIu64 " bytes: %m", m->what, size);
		return r;
	}
	m->addr = addr;
	m->map_len = size;
	m->size = size;
	return 0;
}

int backing_create(const struct backing_spec *spec, uint64_t size, struct backing_map *m)
{
	int r;

	*m = (struct backing_map){ .kind = spec->kind };
	if (spec->kind != BACKING_MSHARE)
		return file_map(spec, size, m);
	r = region_map(spec, m);
	if (r < 0)
		return r;
	if (size > m->size) {
		log_error("%s: --size=%" PRIu64 " is larger than the region (%" PRIu64 " bytes)",
			  m->what, size, m->size);
		backing_close(m);
		return -EINVAL;
	}
	r = backing_check(m, size);
	if (r < 0) {
		backing_close(m);
		return r;
	}
	m->size = size;
	return 0;
}

int backing_open(const struct backing_spec *spec, struct backing_map *m)
{
	*m = (struct backing_map){ .kind = spec->kind };
	if (spec->kind != BACKING_MSHARE)
		return file_map(spec, 0, m);
	return region_map(spec, m);
}

int backing_check(const struct backing_map *m, uint64_t size)
{
	const unsigned char *p = m->addr;
	uint64_t at = 0;
	int r;

	r = probe_readable(p);
	if (r == 0) {
		at = size - 1;
		r = probe_readable(p + at);
	}
	if (r == -EFAULT) {
		log_error("%s: no memory behind byte %" PRIu64 " of the pool (%" PRIu64
			  " bytes): is the region's object (Size=) smaller than the pool?",
			  m->what, at, size);
		return r;
	}
	if (r < 0)
		return log_error_errno(r, "%s: probing the mapping: %m", m->what);
	return 0;
}

void backing_close(struct backing_map *m)
{
	if (m->addr && m->map_len)
		munmap(m->addr, m->map_len);
	m->addr = NULL;
	m->map_len = 0;
}
