// SPDX-License-Identifier: GPL-2.0
/*
 * Objects in a region: MSHAREFS_CREATE_MAPPING and MSHAREFS_UNMAP, every
 * error they promise, replacement, and the data path of each supported
 * kind of object (anonymous, memfd, tmpfs file, disk file, hugetlbfs file,
 * MAP_HUGETLB anonymous) in both directions and across processes.
 */
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "mshare_test.h"

#ifndef MAP_UNINITIALIZED
#define MAP_UNINITIALIZED	0x4000000
#endif

#define RW		(PROT_READ | PROT_WRITE)
#define SHARED_FIXED	(MAP_SHARED | MAP_FIXED)
#define ANON_FLAGS	(MAP_SHARED | MAP_FIXED | MAP_ANONYMOUS)
/* Where the failing requests of the error tests point: must stay a hole. */
#define TRY		SZ_1G

static int create(int fd, uint64_t roff, uint64_t size, uint64_t off,
		  unsigned int prot, unsigned int flags, int objfd,
		  unsigned int reserved)
{
	struct mshare_create mc = {
		.region_offset = roff, .size = size, .offset = off,
		.prot = prot, .flags = flags, .fd = objfd,
		.reserved = reserved,
	};

	return ioctl(fd, MSHAREFS_CREATE_MAPPING, &mc);
}

static int reopen_rdonly(int fd)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return open(path, O_RDONLY | O_CLOEXEC);
}

FIXTURE(map) {
	struct mshare_ctx c;
	uint64_t align;
	uint64_t page;
	int fd;
	char *win;
	int memfd;	/* 2 MiB */
};

FIXTURE_SETUP(map)
{
	self->fd = self->memfd = -1;
	mshare_test_setup(_metadata, &self->c, "map");
	self->align = self->c.align;
	self->page = self->c.page;
	self->fd = test_region(_metadata, &self->c, "r", self->align);
	self->win = test_window(_metadata, self->fd, self->align);
	self->memfd = ASSERT_SYS(memfd_sized(SZ_2M));
}

FIXTURE_TEARDOWN(map)
{
	if (self->win)
		munmap(self->win, self->align);
	if (self->fd >= 0)
		close(self->fd);
	if (self->memfd >= 0)
		close(self->memfd);
	mshare_ctx_fini(&self->c);
}

/* The failed requests left no mapping behind at TRY. */
#define ASSERT_TRY_IS_HOLE() ASSERT_READ_SIGNAL(SIGSEGV, self->win + TRY)

TEST_F(map, unsized_region)
{
	int fd = test_region(_metadata, &self->c, "unsized", 0);

	EXPECT_ERRNO(EINVAL, mshare_map_anon(fd, 0, SZ_64K, 0));
	EXPECT_ERRNO(EINVAL, mshare_map_fd(fd, 0, SZ_64K, self->memfd, 0));
	EXPECT_ERRNO(EINVAL, mshare_unmap(fd, 0, SZ_64K));
	close(fd);
}

TEST_F(map, region_fd_read_only)
{
	int rfd = ASSERT_SYS(mshare_open(&self->c, "r", O_RDONLY));

	EXPECT_ERRNO(EBADF, mshare_map_anon(rfd, TRY, SZ_64K, 0));
	EXPECT_ERRNO(EBADF, mshare_map_fd(rfd, TRY, SZ_64K, self->memfd, 0));
	close(rfd);
	ASSERT_TRY_IS_HOLE();
	/* the same requests through the O_RDWR fd */
	ASSERT_EQ(0, mshare_map_anon(self->fd, TRY, SZ_64K, 0));
	ASSERT_EQ(0, mshare_map_fd(self->fd, TRY + SZ_1M, SZ_64K,
				   self->memfd, 0));
}

TEST_F(map, misaligned_offset_or_size)
{
	const uint64_t page = self->page;
	const uint64_t roffs[] = { TRY + 1, TRY + 8, TRY + page / 2,
				   TRY + page + 1 };
	const uint64_t sizes[] = { 1, page - 1, page + 1, SZ_64K + 8 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(roffs); i++) {
		EXPECT_ERRNO(EINVAL, mshare_map_anon(self->fd, roffs[i],
						     SZ_64K, 0))
			TH_LOG("  region_offset %#lx", (unsigned long)roffs[i]);
		EXPECT_ERRNO(EINVAL, mshare_map_fd(self->fd, roffs[i], SZ_64K,
						   self->memfd, 0))
			TH_LOG("  region_offset %#lx", (unsigned long)roffs[i]);
	}
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		EXPECT_ERRNO(EINVAL, mshare_map_anon(self->fd, TRY, sizes[i], 0))
			TH_LOG("  size %#lx", (unsigned long)sizes[i]);
		EXPECT_ERRNO(EINVAL, mshare_map_fd(self->fd, TRY, sizes[i],
						   self->memfd, 0))
			TH_LOG("  size %#lx", (unsigned long)sizes[i]);
	}
	ASSERT_TRY_IS_HOLE();
}

TEST_F(map, zero_size)
{
	EXPECT_ERRNO(EINVAL, mshare_map_anon(self->fd, TRY, 0, 0));
	EXPECT_ERRNO(EINVAL, mshare_map_fd(self->fd, TRY, 0, self->memfd, 0));
	ASSERT_TRY_IS_HOLE();
}

TEST_F(map, outside_region)
{
	const uint64_t align = self->align, page = self->page;
	const uint64_t top = ~0ULL & ~(page - 1);
	const struct { uint64_t roff, size; } bad[] = {
		{ align, page },
		{ align - page, 2 * page },
		{ 0, align + page },
		{ align + SZ_1G, page },
		{ top, page },			/* end wraps to 0 */
		{ page, top },			/* end wraps */
		{ top, 2 * page },
		{ 0, top },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_ERRNO(EINVAL, mshare_map_anon(self->fd, bad[i].roff,
						     bad[i].size, 0))
			TH_LOG("  %#lx+%#lx", (unsigned long)bad[i].roff,
			       (unsigned long)bad[i].size);
	}
	/* the very last page and the very first are inside */
	ASSERT_EQ(0, mshare_map_anon(self->fd, align - page, page, 0));
	ASSERT_EQ(0, mshare_map_anon(self->fd, 0, page, 0));
	ASSERT_WRITE_SIGNAL(0, self->win + align - 8);
	ASSERT_WRITE_SIGNAL(0, self->win);
	ASSERT_READ_SIGNAL(SIGSEGV, self->win + align - page - 8);
	ASSERT_READ_SIGNAL(SIGSEGV, self->win + page);
}

TEST_F(map, bad_flags)
{
	const unsigned int bad_anon[] = {
		MAP_FIXED | MAP_ANONYMOUS,			/* not shared */
		MAP_SHARED | MAP_ANONYMOUS,			/* not fixed */
		MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS,
		MAP_SHARED | MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS,
		ANON_FLAGS | MAP_GROWSDOWN,
		ANON_FLAGS | MAP_LOCKED,
		ANON_FLAGS | MAP_STACK,
		ANON_FLAGS | MAP_SYNC,
		ANON_FLAGS | MAP_32BIT,
		ANON_FLAGS | MAP_UNINITIALIZED,
		ANON_FLAGS | 0x80000000u,
	};
	const unsigned int bad_fd[] = {
		MAP_FIXED,
		MAP_SHARED,
		MAP_PRIVATE | MAP_FIXED,
		SHARED_FIXED | MAP_LOCKED,
		SHARED_FIXED | 0x80000000u,
		SHARED_FIXED | MAP_HUGETLB,	/* anonymous only */
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad_anon); i++) {
		EXPECT_ERRNO(EINVAL, create(self->fd, TRY, SZ_64K, 0, RW,
					    bad_anon[i], -1, 0))
			TH_LOG("  anonymous, flags %#x", bad_anon[i]);
	}
	for (i = 0; i < ARRAY_SIZE(bad_fd); i++) {
		EXPECT_ERRNO(EINVAL, create(self->fd, TRY, SZ_64K, 0, RW,
					    bad_fd[i], self->memfd, 0))
			TH_LOG("  memfd, flags %#x", bad_fd[i]);
	}
	ASSERT_TRY_IS_HOLE();
	ASSERT_EQ(0, create(self->fd, TRY, SZ_64K, 0, RW, ANON_FLAGS, -1, 0));
	ASSERT_EQ(0, create(self->fd, TRY + SZ_1M, SZ_64K, 0, RW, SHARED_FIXED,
			    self->memfd, 0));

	/* MAP_FIXED_NOREPLACE maps into a hole and refuses to replace. */
	EXPECT_ERRNO(EEXIST, create(self->fd, TRY, SZ_64K, 0, RW,
				    ANON_FLAGS | MAP_FIXED_NOREPLACE, -1, 0));
	ASSERT_EQ(0, create(self->fd, TRY + 2 * SZ_1M, SZ_64K, 0, RW,
			    MAP_SHARED | MAP_FIXED_NOREPLACE | MAP_ANONYMOUS,
			    -1, 0));
}

TEST_F(map, reserved_not_zero)
{
	EXPECT_ERRNO(EINVAL, create(self->fd, TRY, SZ_64K, 0, RW, ANON_FLAGS,
				    -1, 1));
	EXPECT_ERRNO(EINVAL, create(self->fd, TRY, SZ_64K, 0, RW, SHARED_FIXED,
				    self->memfd, 0x80000000u));
	ASSERT_TRY_IS_HOLE();
}

TEST_F(map, anonymous_with_fd)
{
	EXPECT_ERRNO(EINVAL, create(self->fd, TRY, SZ_64K, 0, RW, ANON_FLAGS,
				    self->memfd, 0));
	EXPECT_ERRNO(EINVAL, create(self->fd, TRY, SZ_64K, 0, RW, ANON_FLAGS,
				    0, 0));
	ASSERT_TRY_IS_HOLE();
}

TEST_F(map, bad_backing_fd)
{
	int closed = ASSERT_SYS(dup(self->memfd));

	close(closed);
	EXPECT_ERRNO(EBADF, create(self->fd, TRY, SZ_64K, 0, RW, SHARED_FIXED,
				   -1, 0));
	EXPECT_ERRNO(EBADF, create(self->fd, TRY, SZ_64K, 0, RW, SHARED_FIXED,
				   closed, 0));
	EXPECT_ERRNO(EBADF, create(self->fd, TRY, SZ_64K, 0, RW, SHARED_FIXED,
				   1 << 20, 0));
	EXPECT_ERRNO(EBADF, create(self->fd, TRY, SZ_64K, 0, RW, SHARED_FIXED,
				   -2, 0));
	ASSERT_TRY_IS_HOLE();
}

TEST_F(map, msharefs_backing_fd)
{
	int other = test_region(_metadata, &self->c, "other", self->align);
	int unsized = test_region(_metadata, &self->c, "unsized", 0);

	EXPECT_ERRNO(EINVAL, mshare_map_fd(self->fd, TRY, SZ_64K, other, 0));
	EXPECT_ERRNO(EINVAL, mshare_map_fd(self->fd, TRY, SZ_64K, unsized, 0));
	EXPECT_ERRNO(EINVAL, mshare_map_fd(self->fd, TRY, SZ_64K, self->fd, 0))
		TH_LOG("  (the region itself)");
	ASSERT_TRY_IS_HOLE();
	close(other);
	close(unsized);
}

TEST_F(map, backing_fd_not_regular)
{
	int pipefd[2], sock[2], dir, efd, zero;

	ASSERT_EQ(0, pipe(pipefd));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sock));
	dir = ASSERT_SYS(open("/tmp", O_RDONLY | O_DIRECTORY));
	efd = ASSERT_SYS(eventfd(0, 0));

	EXPECT_ERRNO(ENODEV, create(self->fd, TRY, SZ_64K, 0, PROT_READ,
				    SHARED_FIXED, pipefd[0], 0))
		TH_LOG("  pipe");
	EXPECT_ERRNO(ENODEV, create(self->fd, TRY, SZ_64K, 0, PROT_READ,
				    SHARED_FIXED, dir, 0))
		TH_LOG("  directory");
	EXPECT_ERRNO(ENODEV, create(self->fd, TRY, SZ_64K, 0, RW,
				    SHARED_FIXED, sock[0], 0))
		TH_LOG("  socket");
	EXPECT_ERRNO(ENODEV, create(self->fd, TRY, SZ_64K, 0, RW,
				    SHARED_FIXED, efd, 0))
		TH_LOG("  eventfd");
	/* a character device that has an mmap method is still not regular */
	zero = open("/dev/zero", O_RDWR);
	if (zero >= 0) {
		EXPECT_ERRNO(ENODEV, create(self->fd, TRY, SZ_64K, 0, RW,
					    SHARED_FIXED, zero, 0))
			TH_LOG("  /dev/zero");
		close(zero);
	} else {
		TH_LOG("no /dev/zero (%s): character device not tried",
		       strerror(errno));
	}
	ASSERT_TRY_IS_HOLE();
	close(pipefd[0]);
	close(pipefd[1]);
	close(sock[0]);
	close(sock[1]);
	close(dir);
	close(efd);
}

TEST_F(map, backing_fd_read_only)
{
	char *p = self->win + TRY;
	int ro;

	ASSERT_EQ(0, fd_pattern_fill(self->memfd, 0, SZ_64K, 50));
	ro = ASSERT_SYS(reopen_rdonly(self->memfd));
	EXPECT_ERRNO(EACCES, create(self->fd, TRY, SZ_64K, 0, RW, SHARED_FIXED,
				    ro, 0));
	EXPECT_ERRNO(EACCES, create(self->fd, TRY, SZ_64K, 0, PROT_WRITE,
				    SHARED_FIXED, ro, 0));
	ASSERT_TRY_IS_HOLE();

	/* read-only is fine, and the object is read-only in the window */
	ASSERT_EQ(0, create(self->fd, TRY, SZ_64K, 0, PROT_READ, SHARED_FIXED,
			    ro, 0));
	close(ro);
	ASSERT_PATTERN(p, SZ_64K, 50);
	ASSERT_WRITE_SIGNAL(SIGSEGV, p);
	ASSERT_FD_PATTERN(self->memfd, 0, SZ_64K, 50);
}

TEST_F(map, hugetlb_misaligned)
{
	const uint64_t page = self->page;
	char why[128];
	int hfd;

	if (hugetlb_usable(2, why, sizeof(why)))
		SKIP(return, "hugetlb: %s", why);
	hfd = ASSERT_SYS(file_sized(HUGETLB_DIR, 2 * SZ_2M));

	EXPECT_ERRNO(EINVAL, mshare_map_fd(self->fd, TRY + page, SZ_2M, hfd, 0))
		TH_LOG("  hugetlbfs region_offset");
	EXPECT_ERRNO(EINVAL, mshare_map_fd(self->fd, TRY, page, hfd, 0))
		TH_LOG("  hugetlbfs size");
	EXPECT_ERRNO(EINVAL, mshare_map_fd(self->fd, TRY, SZ_2M + page, hfd, 0))
		TH_LOG("  hugetlbfs size");
	EXPECT_ERRNO(EINVAL, mshare_map_fd(self->fd, TRY, SZ_2M, hfd, page))
		TH_LOG("  hugetlbfs offset");
	EXPECT_ERRNO(EINVAL, mshare_map_anon(self->fd, TRY + page, SZ_2M,
					     MAP_HUGETLB))
		TH_LOG("  MAP_HUGETLB region_offset");
	EXPECT_ERRNO(EINVAL, mshare_map_anon(self->fd, TRY, page, MAP_HUGETLB))
		TH_LOG("  MAP_HUGETLB size");
	EXPECT_ERRNO(EINVAL, mshare_map_anon(self->fd, TRY, 3 * SZ_1M,
					     MAP_HUGETLB))
		TH_LOG("  MAP_HUGETLB size");
	ASSERT_TRY_IS_HOLE();

	/* aligned, both work */
	ASSERT_EQ(0, mshare_map_fd(self->fd, TRY, SZ_2M, hfd, SZ_2M));
	ASSERT_EQ(0, mshare_map_anon(self->fd, TRY + SZ_2M, SZ_2M, MAP_HUGETLB));
	ASSERT_WRITE_SIGNAL(0, self->win + TRY);
	ASSERT_WRITE_SIGNAL(0, self->win + TRY + SZ_2M);
	close(hfd);
}

TEST_F(map, unknown_ioctl)
{
	struct mshare_create mc = {};
	const unsigned long cmds[] = {
		_IO('x', 0),
		_IOR('x', 0, struct mshare_create),
		_IOW('x', 0, struct mshare_unmap),
		_IOW('x', 2, struct mshare_create),
		_IOW('x', 0x7f, struct mshare_create),
		_IOW('y', 0, struct mshare_create),
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		EXPECT_ERRNO(ENOTTY, ioctl(self->fd, cmds[i], &mc))
			TH_LOG("  cmd %#lx", cmds[i]);
	}
	ASSERT_EQ(0, mshare_map_anon(self->fd, TRY, SZ_64K, 0));
}

TEST_F(map, replace_existing_mapping)
{
	char *win = self->win;
	int a, b;

	a = ASSERT_SYS(memfd_sized(4 * SZ_1M));
	b = ASSERT_SYS(memfd_sized(4 * SZ_1M));
	ASSERT_EQ(0, fd_pattern_fill(a, 0, 4 * SZ_1M, 60));
	ASSERT_EQ(0, fd_pattern_fill(b, 0, 4 * SZ_1M, 61));

	test_map_fd(_metadata, self->fd, 0, 4 * SZ_1M, a, 0);
	ASSERT_PATTERN(win, 4 * SZ_1M, 60);
	test_map_fd(_metadata, self->fd, SZ_2M, 4 * SZ_1M, b, 0);
	ASSERT_PATTERN(win, SZ_2M, 60);
	ASSERT_PATTERN(win + SZ_2M, 4 * SZ_1M, 61);

	/* writes to the replaced range go to b, not to a */
	pattern_fill(win + SZ_2M, 4 * SZ_1M, 62);
	ASSERT_FD_PATTERN(b, 0, 4 * SZ_1M, 62);
	ASSERT_FD_PATTERN(a, SZ_2M, SZ_2M, 60);

	/* an anonymous object replaced by a new one starts empty */
	test_map_anon(_metadata, self->fd, 8 * SZ_1M, SZ_1M);
	pattern_fill(win + 8 * SZ_1M, SZ_1M, 63);
	test_map_anon(_metadata, self->fd, 8 * SZ_1M, SZ_1M);
	ASSERT_TRUE(is_zero(win + 8 * SZ_1M, SZ_1M));
	close(a);
	close(b);
}

TEST_F(map, unmap_errors)
{
	const uint64_t align = self->align, page = self->page;
	const uint64_t top = ~0ULL & ~(page - 1);
	const struct { uint64_t roff, size; } bad[] = {
		{ 1, page },
		{ page / 2, page },
		{ 0, page + 1 },
		{ 0, 1 },
		{ align, page },
		{ align - page, 2 * page },
		{ 0, align + page },
		{ top, page },
		{ page, top },
	};
	unsigned int i;

	test_map_anon(_metadata, self->fd, 0, SZ_64K);
	pattern_fill(self->win, SZ_64K, 64);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_ERRNO(EINVAL, mshare_unmap(self->fd, bad[i].roff,
						  bad[i].size))
			TH_LOG("  %#lx+%#lx", (unsigned long)bad[i].roff,
			       (unsigned long)bad[i].size);
	}
	/* nothing was unmapped */
	ASSERT_PATTERN(self->win, SZ_64K, 64);
}

TEST_F(map, unmap_hole_and_parts)
{
	const uint64_t page = self->page;
	char *win = self->win;

	/* a hole, twice */
	ASSERT_EQ(0, mshare_unmap(self->fd, TRY, SZ_2M));
	ASSERT_EQ(0, mshare_unmap(self->fd, TRY, SZ_2M));

	/* one page out of an object */
	test_map_anon(_metadata, self->fd, 0, SZ_64K);
	pattern_fill(win, SZ_64K, 65);
	ASSERT_EQ(0, mshare_unmap(self->fd, 4 * page, page));
	ASSERT_READ_SIGNAL(SIGSEGV, win + 4 * page);
	ASSERT_PATTERN(win, 4 * page, 65);
	ASSERT_PATTERN_AT(win + 5 * page, SZ_64K - 5 * page, 65, 5 * page);

	/* a range covering the rest of the object and a hole */
	ASSERT_EQ(0, mshare_unmap(self->fd, 0, SZ_1M));
	ASSERT_READ_SIGNAL(SIGSEGV, win);
	ASSERT_READ_SIGNAL(SIGSEGV, win + SZ_64K - 8);
}

/*
 * Another process with an O_RDWR fd may map the region but not change
 * it: mapping, unmapping and sizing are the owner's (EPERM).
 */
static int map_as_other_process(const struct mshare_ctx *c, uint64_t align)
{
	int fd = mshare_open(c, "r", O_RDWR);
	char *win;

	CHILD_CHECK(fd >= 0, "open: %m");
	CHILD_CHECK(mshare_map_anon(fd, TRY, SZ_1M, 0) == -1 && errno == EPERM,
		    "map by a non-owner: %m");
	CHILD_CHECK(mshare_unmap(fd, TRY, SZ_1M) == -1 && errno == EPERM,
		    "unmap by a non-owner: %m");
	win = mshare_window(fd, align, NULL, 0);
	CHILD_CHECK(win != MAP_FAILED, "window: %m");
	pattern_fill(win + TRY, SZ_1M, 66);
	return 0;
}

/* Only the owner maps objects; others use them through their windows. */
TEST_F(map, other_process_cannot_map)
{
	pid_t pid;

	test_map_anon(_metadata, self->fd, TRY, SZ_1M);
	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(map_as_other_process(&self->c, self->align));
	ASSERT_CHILD_OK(pid);
	ASSERT_PATTERN(self->win + TRY, SZ_1M, 66);
}

TEST_F(map, populate_flag)
{
	struct stat st;
	int plain, populated;

	plain = ASSERT_SYS(memfd_sized(SZ_2M));
	populated = ASSERT_SYS(memfd_sized(SZ_2M));
	ASSERT_EQ(0, mshare_map(self->fd, 0, SZ_2M, 0, RW, SHARED_FIXED,
				plain));
	ASSERT_EQ(0, mshare_map(self->fd, SZ_2M, SZ_2M, 0, RW,
				SHARED_FIXED | MAP_POPULATE, populated));
	ASSERT_EQ(0, fstat(plain, &st));
	TH_LOG("without MAP_POPULATE: %ld KiB allocated", (long)st.st_blocks / 2);
	ASSERT_EQ(0, fstat(populated, &st));
	TH_LOG("with MAP_POPULATE: %ld KiB allocated", (long)st.st_blocks / 2);
	EXPECT_LE(SZ_2M, (uint64_t)st.st_blocks * 512);
	close(plain);
	close(populated);
}

/*
 * Every kind of object, through a window and through its own fd or
 * mapping (anonymous objects: through a second window).
 */
enum obj_kind { ANON, MEMFD, TMPFS_FILE, DISK_FILE, HUGETLBFS_FILE };

FIXTURE(obj) {
	struct mshare_ctx c;
	uint64_t align;
	int fd;
	char *win;
	char *win2;		/* anonymous objects: the other view */
	int objfd;
	char *objmap;		/* hugetlbfs: the other view */
	uint64_t roff, size, off, file_size, unit;
	long hfree;		/* HugePages_Free before the object */
	char diskdir[PATH_MAX];
};

FIXTURE_VARIANT(obj) {
	enum obj_kind kind;
	unsigned int flags;
	bool huge;
};

FIXTURE_VARIANT_ADD(obj, anon) { .kind = ANON };
FIXTURE_VARIANT_ADD(obj, anon_populate) { .kind = ANON, .flags = MAP_POPULATE };
FIXTURE_VARIANT_ADD(obj, anon_noreserve) { .kind = ANON, .flags = MAP_NORESERVE };
FIXTURE_VARIANT_ADD(obj, anon_hugetlb) {
	.kind = ANON, .flags = MAP_HUGETLB, .huge = true,
};
FIXTURE_VARIANT_ADD(obj, memfd) { .kind = MEMFD };
FIXTURE_VARIANT_ADD(obj, memfd_populate) { .kind = MEMFD, .flags = MAP_POPULATE };
FIXTURE_VARIANT_ADD(obj, tmpfs_file) { .kind = TMPFS_FILE };
FIXTURE_VARIANT_ADD(obj, disk_file) { .kind = DISK_FILE };
FIXTURE_VARIANT_ADD(obj, hugetlbfs_file) { .kind = HUGETLBFS_FILE, .huge = true };

static int obj_open(FIXTURE_DATA(obj) *self, enum obj_kind kind)
{
	switch (kind) {
	case MEMFD:
		return memfd_sized(self->file_size);
	case TMPFS_FILE:
		return file_sized("/tmp", self->file_size);
	case DISK_FILE:
		return file_sized(self->diskdir, self->file_size);
	case HUGETLBFS_FILE:
		return file_sized(HUGETLB_DIR, self->file_size);
	case ANON:
		break;
	}
	return -1;
}

FIXTURE_SETUP(obj)
{
	const unsigned int flags = MAP_SHARED | MAP_FIXED | variant->flags |
		(variant->kind == ANON ? MAP_ANONYMOUS : 0);
	const uint64_t page = sysconf(_SC_PAGESIZE);
	char why[512];

	self->fd = self->objfd = -1;
	if (variant->huge) {
		self->roff = 6 * SZ_1M;
		self->size = 4 * SZ_1M;
		self->off = variant->kind == ANON ? 0 : SZ_2M;
		self->unit = SZ_2M;
		self->file_size = self->off + self->size;
	} else {
		self->roff = 6 * SZ_1M + 3 * page;
		self->size = SZ_1M;
		self->off = variant->kind == ANON ? 0 : 2 * page;
		self->unit = page;
		self->file_size = self->off + self->size + SZ_64K;
	}
	/* skip before creating anything: teardown does not follow a skip */
	/* a hugetlbfs file mapping reserves its whole file */
	if (variant->huge &&
	    hugetlb_usable(self->file_size / SZ_2M, why, sizeof(why)))
		SKIP(return, "hugetlb: %s", why);
	if (variant->kind == DISK_FILE &&
	    find_disk_dir(false, self->diskdir, sizeof(self->diskdir), why,
			  sizeof(why)))
		SKIP(return, "no disk filesystem mounted (tried: %s); regular files are covered on /tmp",
		     why[0] ? why : "none");

	mshare_test_setup(_metadata, &self->c, "obj");
	self->align = self->c.align;
	self->fd = test_region(_metadata, &self->c, "r", self->align);
	self->win = test_window(_metadata, self->fd, self->align);
	if (variant->kind != ANON) {
		self->objfd = obj_open(self, variant->kind);
		ASSERT_LE(0, self->objfd)
			TH_LOG("backing object: %s", strerror(errno));
	}
	if (variant->kind == DISK_FILE)
		TH_LOG("disk file in %s", self->diskdir);
	if (variant->kind == HUGETLBFS_FILE) {
		self->objmap = mmap(NULL, self->file_size, RW, MAP_SHARED,
				    self->objfd, 0);
		ASSERT_NE(MAP_FAILED, self->objmap);
	}
	self->hfree = meminfo_kib("HugePages_Free");
	ASSERT_EQ(0, mshare_map(self->fd, self->roff, self->size, self->off,
				RW, flags, self->objfd))
		TH_LOG("CREATE_MAPPING flags %#x: %s", flags, strerror(errno));
	if (variant->kind == ANON)
		self->win2 = test_window(_metadata, self->fd, self->align);
}

FIXTURE_TEARDOWN(obj)
{
	if (self->win)
		munmap(self->win, self->align);
	if (self->win2)
		munmap(self->win2, self->align);
	if (self->objmap)
		munmap(self->objmap, self->file_size);
	if (self->objfd >= 0)
		close(self->objfd);
	if (self->fd >= 0)
		close(self->fd);
	mshare_ctx_fini(&self->c);
}

/* The object's own view of [at, at + len) of the mapped part, if memory. */
static char *obj_view(FIXTURE_DATA(obj) *self, uint64_t at)
{
	if (self->win2)
		return self->win2 + self->roff + at;
	if (self->objmap)
		return self->objmap + self->off + at;
	return NULL;
}

static void obj_fill(struct __test_metadata *_metadata,
		     FIXTURE_DATA(obj) *self, uint64_t at, uint64_t len,
		     uint64_t seed)
{
	char *view = obj_view(self, at);

	if (view) {
		pattern_fill_at(view, len, seed, self->off + at);
	} else {
		ASSERT_EQ(0, fd_pattern_fill(self->objfd, self->off + at, len,
					     seed));
	}
}

static void obj_check(struct __test_metadata *_metadata,
		      FIXTURE_DATA(obj) *self, uint64_t at, uint64_t len,
		      uint64_t seed)
{
	char *view = obj_view(self, at);

	if (view) {
		ASSERT_PATTERN_AT(view, len, seed, self->off + at);
	} else {
		ASSERT_FD_PATTERN(self->objfd, self->off + at, len, seed);
	}
}

/* The window's view of [at, at + len) of the mapped part. */
static char *win_at(FIXTURE_DATA(obj) *self, uint64_t at)
{
	return self->win + self->roff + at;
}

TEST_F(obj, window_writes_reach_object)
{
	pattern_fill_at(win_at(self, 0), self->size, 70, self->off);
	obj_check(_metadata, self, 0, self->size, 70);
	if (variant->huge) {
		long used = self->hfree - meminfo_kib("HugePages_Free");

		EXPECT_EQ((long)(self->size / SZ_2M), used)
			TH_LOG("huge pages taken by the object");
	}
}

TEST_F(obj, object_writes_reach_window)
{
	obj_fill(_metadata, self, 0, self->size, 71);
	ASSERT_PATTERN_AT(win_at(self, 0), self->size, 71, self->off);
}

static int share_as_other_process(FIXTURE_DATA(obj) *self)
{
	int fd = mshare_open(&self->c, "r", O_RDWR);
	const uint64_t half = self->size / 2;
	char *win;

	CHILD_CHECK(fd >= 0, "open: %m");
	win = mshare_window(fd, self->align, NULL, 0);
	CHILD_CHECK(win != MAP_FAILED, "window: %m");
	CHILD_CHECK(win != self->win, "same address as the parent");
	win += self->roff;
	CHILD_CHECK(pattern_check_at(win, self->size, 72, self->off) == -1,
		    "data from the parent");
	pattern_fill_at(win + half, half, 73, self->off + half);
	return 0;
}

TEST_F(obj, other_process_shares_object)
{
	const uint64_t half = self->size / 2;
	pid_t pid;

	pattern_fill_at(win_at(self, 0), self->size, 72, self->off);
	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(share_as_other_process(self));
	ASSERT_CHILD_OK(pid);
	obj_check(_metadata, self, 0, half, 72);
	obj_check(_metadata, self, half, half, 73);
	ASSERT_PATTERN_AT(win_at(self, half), half, 73, self->off + half);
}

TEST_F(obj, unmap_leaves_hole)
{
	const uint64_t unit = self->unit;

	pattern_fill_at(win_at(self, 0), self->size, 74, self->off);
	ASSERT_EQ(0, mshare_unmap(self->fd, self->roff, unit));
	ASSERT_READ_SIGNAL(SIGSEGV, win_at(self, 0));
	ASSERT_READ_SIGNAL(SIGSEGV, win_at(self, unit - 8));
	ASSERT_PATTERN_AT(win_at(self, unit), self->size - unit, 74,
			  self->off + unit);

	ASSERT_EQ(0, mshare_unmap(self->fd, self->roff, self->size));
	ASSERT_READ_SIGNAL(SIGSEGV, win_at(self, unit));
	ASSERT_READ_SIGNAL(SIGSEGV, win_at(self, self->size - 8));
	if (self->win2) {
		/* anonymous: gone from every window */
		ASSERT_READ_SIGNAL(SIGSEGV, obj_view(self, unit));
	} else {
		/* a file keeps what was written through the window */
		obj_check(_metadata, self, 0, self->size, 74);
	}
}

TEST_HARNESS_MAIN
