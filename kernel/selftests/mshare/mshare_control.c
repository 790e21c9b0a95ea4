// SPDX-License-Identifier: GPL-2.0
/*
 * What the owner does to a region made by mshare_create(): mshare_map()
 * of each kind of object (anonymous, memfd, regular file, MAP_HUGETLB and
 * hugetlbfs), seen through windows in this and another process;
 * MAP_POPULATE and fdinfo's mshare-rss; MAP_FIXED_NOREPLACE; the
 * extensible struct (short EINVAL, longer with a zero tail fine, a
 * non-zero tail E2BIG) and every argument error; mshare_unmap() (windows
 * fault afterwards); mshare_protect() (sharers whose TLBs hold writable
 * entries fault on the next write, back to read-write works; holes ENOMEM,
 * objects of read-only files EACCES; the caller's READ_IMPLIES_EXEC and
 * MDWE apply as in mprotect()); mshare_advise() (populate, DONTNEED
 * keeps shared memory, REMOVE zeroes, the accepted and the refused
 * advice); mincore() of a window (the region's resident pages, as any
 * process with a window sees them); msync() of a window and fsync() of
 * the region (the file objects written back); and who may do it: only
 * through the owner file, the one mshare_create() returned (EPERM through
 * any other descriptor of the region: reopened read-write or read-only,
 * in this process or another, even one that holds the owner file too;
 * EBADF for fds that are not regions).
 */
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <linux/capability.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "mshare_test.h"

#ifndef MAP_HUGE_2MB
#define MAP_HUGE_2MB	(21 << MAP_HUGE_SHIFT)
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE	25
#endif
#ifndef PR_SET_MDWE
#define PR_SET_MDWE			65
#define PR_MDWE_REFUSE_EXEC_GAIN	(1UL << 0)
#endif
#ifndef __NR_memfd_secret
#define __NR_memfd_secret	447
#endif
#define X86_RET		0xc3

#define RW		(PROT_READ | PROT_WRITE)
/* Where objects go; failing requests aim at TRY, which must stay a hole. */
#define OBJ_ROFF	SZ_1G
#define OBJ_SIZE	SZ_1M
/* Objects whose rss is checked: large against the per-cpu counter slack. */
#define RSS_OBJ		(4 * SZ_1M)
#define TRY		(4 * SZ_1G)
#define HUGE_ROFF	(8 * SZ_1G)
#define STEP_TIMEOUT_MS	(60 * 1000)

FIXTURE(control) {
	struct mshare_ctx c;
	uint64_t align;
	size_t page;
	int fd;		/* one alignment unit, owned by this process */
	char *win;	/* read-write window onto all of it */
};

FIXTURE_SETUP(control)
{
	self->fd = -1;
	mshare_test_setup(_metadata, &self->c, "control");
	self->align = self->c.align;
	self->page = self->c.page;
	self->fd = test_new_region(_metadata, self->align);
	self->win = test_attach(_metadata, self->fd, 0, 0, 0);
}

FIXTURE_TEARDOWN(control)
{
	child_kill_all();
	if (self->win && self->win != MAP_FAILED)
		munmap(self->win, self->align);
	if (self->fd >= 0)
		close(self->fd);
	mshare_ctx_fini(&self->c);
}

#define ASSERT_TRY_IS_HOLE() ASSERT_READ_SIGNAL(SIGSEGV, self->win + TRY)

static bool failed_with(long ret, int err)
{
	return ret == -1 && errno == err;
}

static long long rss(struct __test_metadata *_metadata, int fd)
{
	return test_fdinfo(_metadata, 0, fd, "mshare-rss");
}

/*
 * mshare-rss grew from _before to _after by _pages, within what the
 * per-cpu rss counters may hold back at either reading.
 */
#define ASSERT_RSS_GROWTH(_before, _after, _pages)			\
	ASSERT_LE((_pages) - 2 * rss_slack_pages(), (_after) - (_before))	\
		TH_LOG("mshare-rss %lld -> %lld, expected +%lld",		\
		       (long long)(_before), (long long)(_after),		\
		       (long long)(_pages))

/*
 * Another process attaches a window of its own, finds pattern seed (from
 * pattern offset start) at roff and writes pattern seed + 100 there,
 * which this process must then read through its window.
 */
static int child_check_and_write(int fd, uint64_t roff, uint64_t len,
				 uint64_t seed, uint64_t start)
{
	char *w = sys_mshare_attach(fd, 0, 0, NULL, 0);

	CHILD_CHECK(w != MAP_FAILED, "attach: %m");
	CHILD_CHECK(pattern_check_at(w + roff, len, seed, start) == -1,
		    "data at %#lx", (unsigned long)roff);
	pattern_fill_at(w + roff, len, seed + 100, start);
	return 0;
}

static void other_process_sees(struct __test_metadata *_metadata,
			       FIXTURE_DATA(control) *self, uint64_t roff,
			       uint64_t len, uint64_t seed, uint64_t start)
{
	pid_t pid = ASSERT_SYS(child_fork());

	if (pid == 0)
		_exit(child_check_and_write(self->fd, roff, len, seed, start));
	ASSERT_CHILD_OK(pid);
	ASSERT_PATTERN_AT(self->win + roff, len, seed + 100, start);
}

TEST_F(control, map_anonymous)
{
	char *obj = self->win + OBJ_ROFF, *obj2 = obj + 2 * OBJ_SIZE;

	ASSERT_EQ(0, sys_mshare_map_obj(self->fd, OBJ_ROFF, OBJ_SIZE, 0, RW,
					MAP_ANONYMOUS, -1))
		TH_LOG("mshare_map: %s", strerror(errno));
	/* the implied flags may be given */
	ASSERT_EQ(0, sys_mshare_map_obj(self->fd, OBJ_ROFF + 2 * OBJ_SIZE,
					OBJ_SIZE, 0, RW,
					MAP_SHARED | MAP_FIXED | MAP_ANONYMOUS,
					-1))
		TH_LOG("mshare_map with MAP_SHARED | MAP_FIXED: %s",
		       strerror(errno));
	ASSERT_TRUE(is_zero(obj, OBJ_SIZE));
	pattern_fill(obj, OBJ_SIZE, 1);
	pattern_fill(obj2, OBJ_SIZE, 2);
	ASSERT_READ_SIGNAL(SIGSEGV, obj + OBJ_SIZE);
	ASSERT_READ_SIGNAL(SIGSEGV, obj - 8);
	other_process_sees(_metadata, self, OBJ_ROFF, OBJ_SIZE, 1, 0);
	other_process_sees(_metadata, self, OBJ_ROFF + 2 * OBJ_SIZE, OBJ_SIZE,
			   2, 0);
}

/* A file object: the window shows the file from backing offset boff. */
static void check_file_object(struct __test_metadata *_metadata,
			      FIXTURE_DATA(control) *self, int bfd,
			      uint64_t seed)
{
	const uint64_t boff = OBJ_SIZE;
	char *obj = self->win + OBJ_ROFF;

	ASSERT_EQ(0, fd_pattern_fill(bfd, 0, 2 * OBJ_SIZE, seed));
	test_sys_map_fd(_metadata, self->fd, OBJ_ROFF, OBJ_SIZE, bfd, boff);
	ASSERT_PATTERN_AT(obj, OBJ_SIZE, seed, boff);
	/* writes through the window are in the file */
	pattern_fill_at(obj, OBJ_SIZE, seed + 1, boff);
	ASSERT_FD_PATTERN(bfd, boff, OBJ_SIZE, seed + 1);
	ASSERT_FD_PATTERN(bfd, 0, OBJ_SIZE, seed);
	/* and writes to the file in the window */
	ASSERT_EQ(0, fd_pattern_fill(bfd, boff, OBJ_SIZE, seed + 2));
	ASSERT_PATTERN_AT(obj, OBJ_SIZE, seed + 2, boff);
	other_process_sees(_metadata, self, OBJ_ROFF, OBJ_SIZE, seed + 2,
			   boff);
	ASSERT_FD_PATTERN(bfd, boff, OBJ_SIZE, seed + 102);
}

TEST_F(control, map_memfd)
{
	int memfd = ASSERT_SYS(memfd_sized(2 * OBJ_SIZE));

	check_file_object(_metadata, self, memfd, 10);
	close(memfd);
}

TEST_F(control, map_regular_file)
{
	char why[1024];
	int ffd, ro;

	ffd = disk_file(2 * OBJ_SIZE, why, sizeof(why));
	if (ffd < 0)
		SKIP(return, "%s", why);
	check_file_object(_metadata, self, ffd, 20);

	/* the same file opened read-only cannot back a writable object */
	ro = fd_reopen(ffd, O_RDONLY);
	ASSERT_LE(0, ro) TH_LOG("reopen O_RDONLY: %s", strerror(errno));
	EXPECT_ERRNO(EACCES, sys_mshare_map_obj(self->fd, TRY, OBJ_SIZE, 0,
						RW, 0, ro));
	ASSERT_TRY_IS_HOLE();
	ASSERT_EQ(0, sys_mshare_map_obj(self->fd, TRY, OBJ_SIZE, 0,
					PROT_READ, 0, ro));
	ASSERT_FD_PATTERN(ro, 0, OBJ_SIZE, 20);
	ASSERT_PATTERN(self->win + TRY, OBJ_SIZE, 20);
	ASSERT_WRITE_SIGNAL(SIGSEGV, self->win + TRY);
	close(ro);
	close(ffd);
}

TEST_F(control, map_hugetlb)
{
	const uint64_t page = self->page;
	char *h = self->win + HUGE_ROFF;
	char why[128];
	int hfd;

	if (hugetlb_usable(4, why, sizeof(why)))
		SKIP(return, "hugetlb: %s", why);

	/* anonymous, default and explicit 2 MiB pages */
	ASSERT_EQ(0, sys_mshare_map_anon(self->fd, HUGE_ROFF, SZ_2M,
					 MAP_HUGETLB))
		TH_LOG("MAP_HUGETLB: %s", strerror(errno));
	ASSERT_EQ(0, sys_mshare_map_anon(self->fd, HUGE_ROFF + 2 * SZ_2M,
					 SZ_2M, MAP_HUGETLB | MAP_HUGE_2MB))
		TH_LOG("MAP_HUGETLB | MAP_HUGE_2MB: %s", strerror(errno));
	/* a hugetlbfs file, from its second huge page */
	hfd = ASSERT_SYS(file_sized(HUGETLB_DIR, 2 * SZ_2M));
	test_sys_map_fd(_metadata, self->fd, HUGE_ROFF + 4 * SZ_2M, SZ_2M,
			hfd, SZ_2M);

	/* misaligned for huge pages */
	EXPECT_ERRNO(EINVAL, sys_mshare_map_anon(self->fd, TRY + page, SZ_2M,
						 MAP_HUGETLB));
	EXPECT_ERRNO(EINVAL, sys_mshare_map_anon(self->fd, TRY, 3 * SZ_1M,
						 MAP_HUGETLB));
	EXPECT_ERRNO(EINVAL, sys_mshare_map_obj(self->fd, TRY, SZ_2M, page, RW,
						0, hfd));
	EXPECT_ERRNO(EINVAL, sys_mshare_map_obj(self->fd, TRY + page, SZ_2M,
						0, RW, 0, hfd));
	ASSERT_TRY_IS_HOLE();

	pattern_fill(h, SZ_2M, 30);
	pattern_fill(h + 2 * SZ_2M, SZ_2M, 31);
	pattern_fill(h + 4 * SZ_2M, SZ_2M, 32);
	ASSERT_READ_SIGNAL(SIGSEGV, h + SZ_2M);
	other_process_sees(_metadata, self, HUGE_ROFF, SZ_2M, 30, 0);
	other_process_sees(_metadata, self, HUGE_ROFF + 2 * SZ_2M, SZ_2M, 31,
			   0);
	other_process_sees(_metadata, self, HUGE_ROFF + 4 * SZ_2M, SZ_2M, 32,
			   0);
	/* the file's second huge page is what the window wrote */
	{
		char *m = mmap(NULL, 2 * SZ_2M, PROT_READ, MAP_SHARED, hfd, 0);

		ASSERT_NE(MAP_FAILED, m);
		ASSERT_PATTERN(m + SZ_2M, SZ_2M, 132);
		munmap(m, 2 * SZ_2M);
	}
	close(hfd);
}

TEST_F(control, map_populate_grows_rss)
{
	const long long pages = RSS_OBJ / self->page;
	long long r0, r1, r2, r3;
	int memfd;

	r0 = rss(_metadata, self->fd);
	ASSERT_EQ(0, r0);
	test_sys_map_anon(_metadata, self->fd, OBJ_ROFF, RSS_OBJ, 0);
	r1 = rss(_metadata, self->fd);
	ASSERT_EQ(r0, r1) TH_LOG("a new object without MAP_POPULATE is resident");
	test_sys_map_anon(_metadata, self->fd, OBJ_ROFF + 2 * RSS_OBJ, RSS_OBJ,
			  MAP_POPULATE);
	r2 = rss(_metadata, self->fd);
	ASSERT_RSS_GROWTH(r1, r2, pages);

	memfd = ASSERT_SYS(memfd_sized(RSS_OBJ));
	ASSERT_EQ(0, sys_mshare_map_obj(self->fd, OBJ_ROFF + 4 * RSS_OBJ,
					RSS_OBJ, 0, RW, MAP_POPULATE, memfd));
	r3 = rss(_metadata, self->fd);
	ASSERT_RSS_GROWTH(r2, r3, pages);
	ASSERT_TRUE(is_zero(self->win + OBJ_ROFF + 2 * RSS_OBJ, RSS_OBJ));
	close(memfd);
}

TEST_F(control, map_fixed_noreplace)
{
	char *obj = self->win + TRY;
	int memfd = ASSERT_SYS(memfd_sized(OBJ_SIZE));

	test_sys_map_anon(_metadata, self->fd, TRY, OBJ_SIZE, 0);
	pattern_fill(obj, OBJ_SIZE, 40);
	EXPECT_ERRNO(EEXIST, sys_mshare_map_anon(self->fd, TRY, OBJ_SIZE,
						 MAP_FIXED_NOREPLACE));
	EXPECT_ERRNO(EEXIST, sys_mshare_map_anon(self->fd, TRY + OBJ_SIZE / 2,
						 OBJ_SIZE, MAP_FIXED_NOREPLACE));
	EXPECT_ERRNO(EEXIST, sys_mshare_map_anon(self->fd, TRY - self->page,
						 2 * self->page,
						 MAP_FIXED_NOREPLACE));
	EXPECT_ERRNO(EEXIST, sys_mshare_map_obj(self->fd, TRY, OBJ_SIZE, 0, RW,
						MAP_FIXED_NOREPLACE, memfd));
	ASSERT_PATTERN(obj, OBJ_SIZE, 40);
	ASSERT_READ_SIGNAL(SIGSEGV, obj - 8);

	/* where nothing is, it maps */
	ASSERT_EQ(0, sys_mshare_map_anon(self->fd, TRY + OBJ_SIZE, OBJ_SIZE,
					 MAP_FIXED_NOREPLACE));
	ASSERT_WRITE_SIGNAL(0, obj + OBJ_SIZE);
	/* without it, a mapping replaces what was there */
	test_sys_map_anon(_metadata, self->fd, TRY, OBJ_SIZE, 0);
	ASSERT_TRUE(is_zero(obj, OBJ_SIZE));
	close(memfd);
}

TEST_F(control, map_args_size)
{
	struct {
		struct mshare_map_args a;
		uint64_t tail[3];
	} buf;
	static union {
		struct mshare_map_args a;
		char bytes[4096];
	} big;
	const size_t bad_sizes[] = { 0, 8, 32, MSHARE_MAP_ARGS_SIZE_VER0 - 1 };
	uint64_t roff = TRY + SZ_1M;
	unsigned int i;

	ASSERT_EQ(40, sizeof(struct mshare_map_args));
	ASSERT_EQ(40, MSHARE_MAP_ARGS_SIZE_VER0);
	memset(&buf, 0, sizeof(buf));
	buf.a.region_offset = TRY;
	buf.a.size = SZ_64K;
	buf.a.prot = RW;
	buf.a.flags = MAP_ANONYMOUS;
	buf.a.backing_fd = -1;

	for (i = 0; i < ARRAY_SIZE(bad_sizes); i++) {
		EXPECT_ERRNO(EINVAL, sys_mshare_map(self->fd, &buf,
						    bad_sizes[i]))
			TH_LOG("  size %zu", bad_sizes[i]);
	}
	buf.tail[0] = 1;
	EXPECT_ERRNO(E2BIG, sys_mshare_map(self->fd, &buf, 48));
	buf.tail[0] = 0;
	buf.tail[2] = 0xff00;
	EXPECT_ERRNO(E2BIG, sys_mshare_map(self->fd, &buf, 64));
	buf.tail[2] = 0;
	ASSERT_TRY_IS_HOLE();

	/* exact, longer with zeroes; each maps where it says */
	buf.a.region_offset = roff;
	ASSERT_EQ(0, sys_mshare_map(self->fd, &buf, 40))
		TH_LOG("size 40: %s", strerror(errno));
	ASSERT_WRITE_SIGNAL(0, self->win + roff);
	buf.a.region_offset = roff += SZ_1M;
	ASSERT_EQ(0, sys_mshare_map(self->fd, &buf, 48))
		TH_LOG("size 48, zero tail: %s", strerror(errno));
	ASSERT_WRITE_SIGNAL(0, self->win + roff);
	buf.a.region_offset = roff += SZ_1M;
	ASSERT_EQ(0, sys_mshare_map(self->fd, &buf, sizeof(buf)))
		TH_LOG("size %zu, zero tail: %s", sizeof(buf), strerror(errno));
	ASSERT_WRITE_SIGNAL(0, self->win + roff);
	buf.a.region_offset = roff += SZ_1M;
	big.a = buf.a;
	ASSERT_EQ(0, sys_mshare_map(self->fd, &big, sizeof(big)))
		TH_LOG("size %zu, zero tail: %s", sizeof(big), strerror(errno));
	ASSERT_WRITE_SIGNAL(0, self->win + roff);
	big.bytes[sizeof(big) - 1] = 1;
	big.a.region_offset = TRY;
	EXPECT_ERRNO(E2BIG, sys_mshare_map(self->fd, &big, sizeof(big)));
	ASSERT_TRY_IS_HOLE();
}

TEST_F(control, map_bad_arguments)
{
	const uint64_t a = self->align, page = self->page;
	const unsigned int bad_flags[] = {
		MAP_PRIVATE | MAP_ANONYMOUS,
		MAP_SHARED_VALIDATE | MAP_ANONYMOUS,
		MAP_ANONYMOUS | MAP_LOCKED,
		MAP_ANONYMOUS | MAP_GROWSDOWN,
		MAP_ANONYMOUS | MAP_STACK,
		MAP_ANONYMOUS | MAP_SYNC,
		MAP_ANONYMOUS | MAP_32BIT,
		MAP_ANONYMOUS | 0x80000000u,
		MAP_ANONYMOUS | MAP_HUGE_2MB,	/* without MAP_HUGETLB */
	};
	const unsigned int bad_prot[] = { 0x8, PROT_GROWSDOWN, 0x80, ~0u };
	const struct { uint64_t roff, size; } bad_range[] = {
		{ TRY + 1, SZ_64K }, { TRY + page / 2, SZ_64K },
		{ TRY, 0 }, { TRY, page + 1 }, { TRY, 1 },
		{ a, page }, { a - page, 2 * page }, { 0, a + page },
	};
	struct mshare_map_args args = {
		.region_offset = TRY, .size = SZ_64K, .prot = RW,
		.flags = MAP_ANONYMOUS, .backing_fd = -1,
	};
	int memfd, other, named, unsized, pipefd[2], null, dir, efd, closed;
	unsigned int i;

	memfd = ASSERT_SYS(memfd_sized(SZ_64K));

	args.__reserved = 1;
	EXPECT_ERRNO(EINVAL, sys_mshare_map(self->fd, &args, sizeof(args)));
	args.__reserved = 0x80000000u;
	EXPECT_ERRNO(EINVAL, sys_mshare_map(self->fd, &args, sizeof(args)));
	args.__reserved = 0;

	for (i = 0; i < ARRAY_SIZE(bad_flags); i++) {
		EXPECT_ERRNO(EINVAL, sys_mshare_map_obj(self->fd, TRY, SZ_64K,
							0, RW, bad_flags[i], -1))
			TH_LOG("  flags %#x", bad_flags[i]);
	}
	EXPECT_ERRNO(EINVAL, sys_mshare_map_obj(self->fd, TRY, SZ_64K, 0, RW,
						MAP_PRIVATE, memfd));
	for (i = 0; i < ARRAY_SIZE(bad_prot); i++) {
		EXPECT_ERRNO(EINVAL, sys_mshare_map_obj(self->fd, TRY, SZ_64K,
							0, bad_prot[i],
							MAP_ANONYMOUS, -1))
			TH_LOG("  prot %#x", bad_prot[i]);
	}
	for (i = 0; i < ARRAY_SIZE(bad_range); i++) {
		EXPECT_ERRNO(EINVAL, sys_mshare_map_anon(self->fd,
							 bad_range[i].roff,
							 bad_range[i].size, 0))
			TH_LOG("  %#lx+%#lx", (unsigned long)bad_range[i].roff,
			       (unsigned long)bad_range[i].size);
	}
	/* misaligned backing offset */
	EXPECT_ERRNO(EINVAL, sys_mshare_map_obj(self->fd, TRY, page, 1, RW, 0,
						memfd));
	/* anonymous with a backing fd or offset */
	EXPECT_ERRNO(EINVAL, sys_mshare_map_obj(self->fd, TRY, SZ_64K, 0, RW,
						MAP_ANONYMOUS, memfd));
	EXPECT_ERRNO(EINVAL, sys_mshare_map_obj(self->fd, TRY, SZ_64K, page, RW,
						MAP_ANONYMOUS, -1));
	/* MAP_HUGETLB is for anonymous objects */
	EXPECT_ERRNO(EINVAL, sys_mshare_map_obj(self->fd, TRY, SZ_2M, 0, RW,
						MAP_HUGETLB, memfd));

	/* regions as backing: itself, another one, a named one */
	other = test_new_region(_metadata, self->align);
	named = test_region(_metadata, &self->c, "named", self->align);
	EXPECT_ERRNO(EINVAL, sys_mshare_map_obj(self->fd, TRY, SZ_64K, 0, RW,
						0, self->fd));
	EXPECT_ERRNO(EINVAL, sys_mshare_map_obj(self->fd, TRY, SZ_64K, 0, RW,
						0, other));
	EXPECT_ERRNO(EINVAL, sys_mshare_map_obj(self->fd, TRY, SZ_64K, 0, RW,
						0, named));

	/* backing that is not a regular file */
	ASSERT_EQ(0, pipe2(pipefd, O_CLOEXEC));
	null = ASSERT_SYS(open("/dev/null", O_RDWR | O_CLOEXEC));
	dir = ASSERT_SYS(open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	efd = ASSERT_SYS(eventfd(0, EFD_CLOEXEC));
	EXPECT_ERRNO(ENODEV, sys_mshare_map_obj(self->fd, TRY, SZ_64K, 0,
						PROT_READ, 0, pipefd[0]));
	EXPECT_ERRNO(ENODEV, sys_mshare_map_obj(self->fd, TRY, SZ_64K, 0, RW,
						0, null));
	EXPECT_ERRNO(ENODEV, sys_mshare_map_obj(self->fd, TRY, SZ_64K, 0,
						PROT_READ, 0, dir));
	EXPECT_ERRNO(ENODEV, sys_mshare_map_obj(self->fd, TRY, SZ_64K, 0, RW,
						0, efd));
	/* no backing fd */
	closed = ASSERT_SYS(dup(memfd));
	close(closed);
	EXPECT_ERRNO(EBADF, sys_mshare_map_obj(self->fd, TRY, SZ_64K, 0, RW, 0,
					       -1));
	EXPECT_ERRNO(EBADF, sys_mshare_map_obj(self->fd, TRY, SZ_64K, 0, RW, 0,
					       closed));

	/* an unsized region */
	unsized = test_new_region(_metadata, 0);
	EXPECT_ERRNO(EINVAL, sys_mshare_map_anon(unsized, 0, SZ_64K, 0));
	EXPECT_ERRNO(EINVAL, sys_mshare_unmap(unsized, 0, SZ_64K));
	EXPECT_ERRNO(EINVAL, sys_mshare_protect(unsized, 0, SZ_64K, PROT_READ));
	EXPECT_ERRNO(EINVAL, sys_mshare_advise(unsized, 0, SZ_64K,
					       MADV_WILLNEED));
	ASSERT_TRY_IS_HOLE();

	/* the control: the same request, right, works */
	ASSERT_EQ(0, sys_mshare_map(self->fd, &args, sizeof(args)));
	ASSERT_WRITE_SIGNAL(0, self->win + TRY);
	close(unsized);
	close(efd);
	close(dir);
	close(null);
	close(pipefd[0]);
	close(pipefd[1]);
	close(named);
	close(other);
	close(memfd);
}

/* A sharer that has read the object (linked window) until told to look again. */
static int child_after_unmap(int fd, int ready_fd, struct gate *g)
{
	char *w, ok = 1;

	gate_child(g);
	w = sys_mshare_attach(fd, 0, 0, NULL, 0);
	CHILD_CHECK(w != MAP_FAILED, "attach: %m");
	CHILD_CHECK(pattern_check(w + TRY, OBJ_SIZE, 50) == -1, "data");
	CHILD_CHECK(msg_send(ready_fd, &ok, 1) == 0, "%m");
	CHILD_CHECK(gate_wait(g) == 0, "%m");
	CHILD_CHECK(probe_read(w + TRY, NULL) == SIGSEGV,
		    "read after mshare_unmap did not fault");
	CHILD_CHECK(probe_read(w + TRY + OBJ_SIZE - 8, NULL) == SIGSEGV,
		    "read after mshare_unmap did not fault");
	CHILD_CHECK(probe_write(w + TRY + OBJ_SIZE / 2, 1) == SIGSEGV,
		    "write after mshare_unmap did not fault");
	return 0;
}

TEST_F(control, unmap_then_windows_fault)
{
	const uint64_t a = self->align, page = self->page;
	char *obj = self->win + TRY;
	int ready[2];
	struct gate g;
	pid_t pid;
	char ok;

	test_sys_map_anon(_metadata, self->fd, TRY, OBJ_SIZE, 0);
	pattern_fill(obj, OBJ_SIZE, 50);
	ASSERT_EQ(0, gate_init(&g));
	ASSERT_EQ(0, pipe2(ready, O_CLOEXEC));
	pid = ASSERT_SYS(child_fork());
	if (pid == 0) {
		close(ready[0]);
		_exit(child_after_unmap(self->fd, ready[1], &g));
	}
	close(ready[1]);
	ASSERT_EQ(0, msg_recv(ready[0], &ok, 1, STEP_TIMEOUT_MS));

	/* errors first: nothing changes */
	EXPECT_ERRNO(EINVAL, sys_mshare_unmap(self->fd, TRY, 0));
	EXPECT_ERRNO(EINVAL, sys_mshare_unmap(self->fd, TRY + 1, page));
	EXPECT_ERRNO(EINVAL, sys_mshare_unmap(self->fd, TRY, page + 1));
	EXPECT_ERRNO(EINVAL, sys_mshare_unmap(self->fd, a, page));
	EXPECT_ERRNO(EINVAL, sys_mshare_unmap(self->fd, a - page, 2 * page));
	EXPECT_ERRNO(EINVAL, sys_mshare_unmap(self->fd, -(int64_t)page, page));
	ASSERT_PATTERN(obj, OBJ_SIZE, 50);

	ASSERT_EQ(0, sys_mshare_unmap(self->fd, TRY, OBJ_SIZE));
	gate_open(&g);
	ASSERT_CHILD_OK(pid);
	ASSERT_READ_SIGNAL(SIGSEGV, obj);
	ASSERT_READ_SIGNAL(SIGSEGV, obj + OBJ_SIZE - 8);
	/* unmapping a hole is fine, as munmap() */
	ASSERT_EQ(0, sys_mshare_unmap(self->fd, TRY, OBJ_SIZE));

	/* a part of an object */
	test_sys_map_anon(_metadata, self->fd, TRY, OBJ_SIZE, 0);
	pattern_fill(obj, OBJ_SIZE, 51);
	ASSERT_EQ(0, sys_mshare_unmap(self->fd, TRY + SZ_64K, SZ_64K));
	ASSERT_READ_SIGNAL(SIGSEGV, obj + SZ_64K);
	ASSERT_READ_SIGNAL(SIGSEGV, obj + 2 * SZ_64K - 8);
	ASSERT_PATTERN(obj, SZ_64K, 51);
	ASSERT_PATTERN_AT(obj + 2 * SZ_64K, OBJ_SIZE - 2 * SZ_64K, 51,
			  2 * SZ_64K);
	gate_fini(&g);
	close(ready[0]);
}

/*
 * A sharer whose TLB holds writable entries for the object: it wrote all
 * of it just before waiting. After PROT_READ its writes must fault, its
 * reads not; after PROT_READ | PROT_WRITE its writes work again.
 */
static int child_protect(int fd, int ready_fd, struct gate *g1,
			 struct gate *g2)
{
	char *w, *obj, ok = 1;

	gate_child(g1);
	gate_child(g2);
	w = sys_mshare_attach(fd, 0, 0, NULL, 0);
	CHILD_CHECK(w != MAP_FAILED, "attach: %m");
	obj = w + TRY;
	CHILD_CHECK(pattern_check(obj, SZ_64K, 60) == -1, "data");
	pattern_fill(obj, SZ_64K, 61);
	CHILD_CHECK(msg_send(ready_fd, &ok, 1) == 0, "%m");

	CHILD_CHECK(gate_wait(g1) == 0, "%m");
	CHILD_CHECK(probe_write(obj, 1) == SIGSEGV,
		    "write after PROT_READ did not fault");
	CHILD_CHECK(probe_write(obj + SZ_64K - 8, 1) == SIGSEGV,
		    "write after PROT_READ did not fault");
	CHILD_CHECK(pattern_check(obj, SZ_64K, 61) == -1, "data changed");
	CHILD_CHECK(msg_send(ready_fd, &ok, 1) == 0, "%m");

	CHILD_CHECK(gate_wait(g2) == 0, "%m");
	CHILD_CHECK(probe_write(obj, pattern_word(62, 0)) == 0,
		    "write after PROT_READ | PROT_WRITE faulted");
	pattern_fill(obj, SZ_64K, 62);
	return 0;
}

TEST_F(control, protect_flushes_sharers)
{
	char *obj = self->win + TRY;
	struct gate g1, g2;
	int ready[2];
	pid_t pid;
	char ok;

	test_sys_map_anon(_metadata, self->fd, TRY, SZ_64K, 0);
	pattern_fill(obj, SZ_64K, 60);
	ASSERT_EQ(0, gate_init(&g1));
	ASSERT_EQ(0, gate_init(&g2));
	ASSERT_EQ(0, pipe2(ready, O_CLOEXEC));
	pid = ASSERT_SYS(child_fork());
	if (pid == 0) {
		close(ready[0]);
		_exit(child_protect(self->fd, ready[1], &g1, &g2));
	}
	close(ready[1]);
	ASSERT_EQ(0, msg_recv(ready[0], &ok, 1, STEP_TIMEOUT_MS))
		TH_LOG("sharer: %s", strerror(errno));
	ASSERT_PATTERN(obj, SZ_64K, 61);
	/* this process's writable entries too */
	pattern_fill_at(obj + SZ_64K / 2, 64, 61, SZ_64K / 2);

	ASSERT_EQ(0, sys_mshare_protect(self->fd, TRY, SZ_64K, PROT_READ))
		TH_LOG("mshare_protect PROT_READ: %s", strerror(errno));
	ASSERT_WRITE_SIGNAL(SIGSEGV, obj + SZ_64K / 2);
	ASSERT_WRITE_SIGNAL(SIGSEGV, obj);
	gate_open(&g1);
	ASSERT_EQ(0, msg_recv(ready[0], &ok, 1, STEP_TIMEOUT_MS))
		TH_LOG("sharer after PROT_READ: %s", strerror(errno));
	ASSERT_PATTERN(obj, SZ_64K, 61);

	ASSERT_EQ(0, sys_mshare_protect(self->fd, TRY, SZ_64K, RW))
		TH_LOG("mshare_protect back to RW: %s", strerror(errno));
	gate_open(&g2);
	ASSERT_CHILD_OK(pid);
	ASSERT_PATTERN(obj, SZ_64K, 62);
	ASSERT_WRITE_SIGNAL(0, obj);
	gate_fini(&g1);
	gate_fini(&g2);
	close(ready[0]);
}

/* Writes a counter into p without end, once it has said it runs. */
static int child_writer(char *p, int ready_fd)
{
	volatile uint64_t *q = (volatile uint64_t *)p;
	uint64_t n = 0;
	char ok = 1;

	*q = ++n;
	CHILD_CHECK(msg_send(ready_fd, &ok, 1) == 0, "%m");
	for (;;)
		*q = ++n;
	return 1;
}

/*
 * A sharer writing all the time, on another CPU if there is one: once
 * mshare_protect(PROT_READ) returned, no write of it may land, and it
 * dies of SIGSEGV.
 */
TEST_F(control, protect_stops_running_writer)
{
	volatile uint64_t *obj = (volatile uint64_t *)(self->win + TRY);
	uint64_t v1, v2;
	int ready[2], status, done = 0;
	double start;
	char *w, ok;
	pid_t pid;

	test_sys_map_anon(_metadata, self->fd, TRY, SZ_64K, 0);
	ASSERT_EQ(0, pipe2(ready, O_CLOEXEC));
	pid = ASSERT_SYS(child_fork());
	if (pid == 0) {
		close(ready[0]);
		w = sys_mshare_attach(self->fd, 0, 0, NULL, 0);
		CHILD_CHECK(w != MAP_FAILED, "attach: %m");
		_exit(child_writer(w + TRY, ready[1]));
	}
	close(ready[1]);
	ASSERT_EQ(0, msg_recv(ready[0], &ok, 1, STEP_TIMEOUT_MS));
	usleep(20 * 1000);
	v1 = *obj;
	usleep(20 * 1000);
	ASSERT_NE(v1, *obj) TH_LOG("the writer does not write");

	ASSERT_EQ(0, sys_mshare_protect(self->fd, TRY, SZ_64K, PROT_READ));
	v1 = *obj;
	usleep(200 * 1000);
	v2 = *obj;
	ASSERT_EQ(v1, v2) TH_LOG("the writer wrote after mshare_protect returned");
	start = now_s();
	while (now_s() - start < 30 && !done) {
		done = child_poll(pid, &status);
		ASSERT_LE(0, done);
		if (!done)
			usleep(10 * 1000);
	}
	ASSERT_TRUE(done) TH_LOG("the writer still runs");
	ASSERT_TRUE(status_killed_by(status, SIGSEGV))
		TH_LOG("writer %s", status_str(status));
	ASSERT_EQ(v2, *obj);
	close(ready[0]);
}

TEST_F(control, protect_errors)
{
	const uint64_t a = self->align, page = self->page;
	char *obj = self->win + TRY;

	test_sys_map_anon(_metadata, self->fd, TRY, SZ_64K, 0);
	pattern_fill(obj, SZ_64K, 70);

	EXPECT_ERRNO(EINVAL, sys_mshare_protect(self->fd, TRY, SZ_64K, 0x8));
	EXPECT_ERRNO(EINVAL, sys_mshare_protect(self->fd, TRY, SZ_64K,
						PROT_READ | PROT_GROWSDOWN));
	EXPECT_ERRNO(EINVAL, sys_mshare_protect(self->fd, TRY, SZ_64K, ~0u));
	EXPECT_ERRNO(EINVAL, sys_mshare_protect(self->fd, TRY + 1, page,
						PROT_READ));
	EXPECT_ERRNO(EINVAL, sys_mshare_protect(self->fd, TRY, 0, PROT_READ));
	EXPECT_ERRNO(EINVAL, sys_mshare_protect(self->fd, TRY, page + 1,
						PROT_READ));
	EXPECT_ERRNO(EINVAL, sys_mshare_protect(self->fd, a, page, PROT_READ));
	EXPECT_ERRNO(EINVAL, sys_mshare_protect(self->fd, a - page, 2 * page,
						PROT_READ));
	EXPECT_ERRNO(EINVAL, sys_mshare_protect(self->fd, -(int64_t)page, page,
						PROT_READ));
	/* every page must be mapped */
	EXPECT_ERRNO(ENOMEM, sys_mshare_protect(self->fd, TRY + SZ_1M, page,
						PROT_READ));
	EXPECT_ERRNO(ENOMEM, sys_mshare_protect(self->fd, TRY - page,
						SZ_64K + page, RW));
	EXPECT_ERRNO(ENOMEM, sys_mshare_protect(self->fd, TRY, SZ_64K + page,
						RW));
	ASSERT_PATTERN(obj, SZ_64K, 70);

	/* PROT_NONE and back keep the data */
	ASSERT_EQ(0, sys_mshare_protect(self->fd, TRY, SZ_64K, PROT_NONE));
	ASSERT_READ_SIGNAL(SIGSEGV, obj);
	ASSERT_EQ(0, sys_mshare_protect(self->fd, TRY, SZ_64K, RW));
	ASSERT_PATTERN(obj, SZ_64K, 70);
	ASSERT_WRITE_SIGNAL(0, obj);
}

TEST_F(control, protect_write_on_read_only_file_eacces)
{
	char *obj = self->win + TRY;
	int memfd, ro, wo;

	memfd = ASSERT_SYS(memfd_sized(SZ_64K));
	ASSERT_EQ(0, fd_pattern_fill(memfd, 0, SZ_64K, 80));
	ro = fd_reopen(memfd, O_RDONLY);
	ASSERT_LE(0, ro) TH_LOG("reopen O_RDONLY: %s", strerror(errno));

	EXPECT_ERRNO(EACCES, sys_mshare_map_obj(self->fd, TRY, SZ_64K, 0, RW, 0,
						ro));
	ASSERT_TRY_IS_HOLE();
	ASSERT_EQ(0, sys_mshare_map_obj(self->fd, TRY, SZ_64K, 0, PROT_READ, 0,
					ro));
	ASSERT_PATTERN(obj, SZ_64K, 80);
	ASSERT_WRITE_SIGNAL(SIGSEGV, obj);

	EXPECT_ERRNO(EACCES, sys_mshare_protect(self->fd, TRY, SZ_64K, RW));
	EXPECT_ERRNO(EACCES, sys_mshare_protect(self->fd, TRY, self->page,
						PROT_WRITE));
	ASSERT_WRITE_SIGNAL(SIGSEGV, obj);
	ASSERT_EQ(0, sys_mshare_protect(self->fd, TRY, SZ_64K, PROT_READ));
	ASSERT_PATTERN(obj, SZ_64K, 80);
	ASSERT_FD_PATTERN(memfd, 0, SZ_64K, 80);

	/* a write-only fd cannot back even a read-only object */
	wo = fd_reopen(memfd, O_WRONLY);
	ASSERT_LE(0, wo) TH_LOG("reopen O_WRONLY: %s", strerror(errno));
	EXPECT_ERRNO(EACCES, sys_mshare_map_obj(self->fd, TRY + SZ_1M, SZ_64K,
						0, PROT_READ, 0, wo));
	close(wo);
	close(ro);
	close(memfd);
}

/* In a child, as MDWE cannot be turned off again. */
static int child_mdwe(int fd)
{
	CHILD_CHECK(prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN, 0, 0, 0) == 0,
		    "PR_SET_MDWE: %m");
	/* executable already, it may stay so */
	CHILD_CHECK(sys_mshare_protect(fd, TRY, SZ_64K,
				       PROT_READ | PROT_EXEC) == 0,
		    "read-execute kept under MDWE: %m");
	CHILD_CHECK(sys_mshare_protect(fd, TRY, SZ_64K, RW | PROT_EXEC) == -1 &&
		    errno == EACCES, "read-write-execute under MDWE: %m");
	/* mshare_map() refused it already (__do_mmap()) */
	CHILD_CHECK(sys_mshare_map_obj(fd, TRY + SZ_1M, SZ_64K, 0,
				       RW | PROT_EXEC, MAP_ANONYMOUS, -1) == -1 &&
		    errno == EACCES, "mapping read-write-execute under MDWE: %m");
	CHILD_CHECK(sys_mshare_protect(fd, TRY, SZ_64K, PROT_READ) == 0,
		    "read-only under MDWE: %m");
	CHILD_CHECK(sys_mshare_protect(fd, TRY, SZ_64K,
				       PROT_READ | PROT_EXEC) == -1 &&
		    errno == EACCES, "gaining execute under MDWE: %m");
	return 0;
}

/*
 * The owner under memory-deny-write-execute (PR_SET_MDWE) makes nothing
 * in a region writable and executable, or executable that was not, as
 * mprotect() would refuse it in its own mm.
 */
TEST_F(control, protect_mdwe)
{
	pid_t pid;

	test_sys_map_anon(_metadata, self->fd, TRY, SZ_64K, 0);
	/* the control: without MDWE it may */
	ASSERT_EQ(0, sys_mshare_protect(self->fd, TRY, SZ_64K, RW | PROT_EXEC));
	ASSERT_EQ(0, sys_mshare_protect(self->fd, TRY, SZ_64K,
					PROT_READ | PROT_EXEC));

	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(child_mdwe(self->fd));
	ASSERT_CHILD_OK(pid);
}

/* In a child: PROT_READ under READ_IMPLIES_EXEC, then call through x. */
static int child_read_implies_exec(int fd, char *x)
{
	CHILD_CHECK(personality(PER_LINUX | READ_IMPLIES_EXEC) != -1,
		    "personality: %m");
	CHILD_CHECK(sys_mshare_protect(fd, TRY, SZ_64K, PROT_READ) == 0, "%m");
	CHILD_CHECK(probe_call(x + TRY) == 0,
		    "PROT_READ under READ_IMPLIES_EXEC did not execute");
	return 0;
}

/*
 * READ_IMPLIES_EXEC makes mshare_protect(PROT_READ) executable, as it
 * makes mprotect(PROT_READ) executable; the code is seen running through
 * an executable window.
 */
TEST_F(control, protect_read_implies_exec)
{
	char *x;
	pid_t pid;

	test_sys_map_anon(_metadata, self->fd, TRY, SZ_64K, 0);
	memset(self->win + TRY, X86_RET, SZ_64K);
	x = test_attach(_metadata, self->fd, 0, 0, MSHARE_ATTACH_EXEC);

	/* the control: PROT_READ alone does not execute */
	ASSERT_EQ(0, sys_mshare_protect(self->fd, TRY, SZ_64K, PROT_READ));
	ASSERT_EQ(SIGSEGV, probe_call(x + TRY));
	ASSERT_EQ(0, sys_mshare_protect(self->fd, TRY, SZ_64K, RW));

	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(child_read_implies_exec(self->fd, x));
	ASSERT_CHILD_OK(pid);
	/* the change is the region's: this process runs it too */
	ASSERT_EQ(0, probe_call(x + TRY));
	munmap(x, self->align);
}

/*
 * Secret memory (memfd_secret) is not an object a region holds: it is
 * locked against the RLIMIT_MEMLOCK of the mm that maps it, and meant for
 * its maker alone (EINVAL).
 */
TEST_F(control, map_secretmem_refused)
{
	int secret = syscall(__NR_memfd_secret, O_CLOEXEC);

	ASSERT_LE(0, secret) TH_LOG("memfd_secret: %s", strerror(errno));
	ASSERT_EQ(0, ftruncate(secret, SZ_64K));
	EXPECT_ERRNO(EINVAL, sys_mshare_map_obj(self->fd, TRY, SZ_64K, 0, RW,
						0, secret));
	ASSERT_TRY_IS_HOLE();
	close(secret);
}

/*
 * mincore() of [p, p + len): every page's residency bit as vec[i], which
 * must equal want(i); fails with the first page that differs.
 */
static int mincore_matches(const char *p, size_t len, size_t page,
			   bool (*want)(size_t i))
{
	size_t n = len / page;
	unsigned char *vec = calloc(n, 1);
	int bad = -1;

	if (!vec || mincore((void *)p, len, vec))
		bad = -2;
	for (size_t i = 0; bad == -1 && i < n; i++)
		if ((vec[i] & 1) != want(i))
			bad = i;
	free(vec);
	return bad;
}

static bool even_page(size_t i)
{
	return i % 2 == 0;
}

static bool no_page(size_t i)
{
	(void)i;
	return false;
}

static bool every_page(size_t i)
{
	(void)i;
	return true;
}

/*
 * mincore() of a window says what the region holds: the pages an object
 * has in memory, whoever touched them, and nothing for a hole.
 */
TEST_F(control, mincore_sees_region_pages)
{
	char *obj = self->win + OBJ_ROFF;
	pid_t pid;
	int bad;

	test_sys_map_anon(_metadata, self->fd, OBJ_ROFF, OBJ_SIZE, 0);
	bad = mincore_matches(obj, OBJ_SIZE, self->page, no_page);
	ASSERT_EQ(-1, bad) TH_LOG("a fresh object: page %d (-2: no mincore)",
				  bad);
	for (size_t off = 0; off < OBJ_SIZE; off += 2 * self->page)
		obj[off] = 1;
	bad = mincore_matches(obj, OBJ_SIZE, self->page, even_page);
	ASSERT_EQ(-1, bad) TH_LOG("every other page written: page %d", bad);
	/* A hole of the region is mapped (the window) and not resident. */
	bad = mincore_matches(self->win + TRY, SZ_64K, self->page, no_page);
	ASSERT_EQ(-1, bad) TH_LOG("a hole: page %d", bad);

	/* Another process's window, never touched, sees the same pages. */
	pid = ASSERT_SYS(child_fork());
	if (pid == 0) {
		char *w = sys_mshare_attach(self->fd, 0, 0, NULL, 0);

		CHILD_CHECK(w != MAP_FAILED, "attach: %m");
		CHILD_CHECK(mincore_matches(w + OBJ_ROFF, OBJ_SIZE, self->page,
					    even_page) == -1,
			    "the other window's mincore()");
		_exit(0);
	}
	ASSERT_CHILD_OK(pid);
}

#ifndef __NR_cachestat
#define __NR_cachestat	451
#endif

/* The page cache of a file, as cachestat(2) counts it (linux/mman.h). */
struct page_cache {
	uint64_t nr_cache, nr_dirty, nr_writeback;
	uint64_t nr_evicted, nr_recently_evicted;
};

static long long dirty_pages(int fd, uint64_t off, uint64_t len)
{
	struct { uint64_t off, len; } range = { off, len };
	struct page_cache pc;

	if (syscall(__NR_cachestat, fd, &range, &pc, 0))
		return -1;
	return pc.nr_dirty + pc.nr_writeback;
}

/*
 * The flusher may write any dirty page back at any moment: a scratch disk
 * that has written little yet has a share of the background threshold
 * near zero, so its first periodic wake-up cleans whatever is dirty. A
 * check that pages are still dirty is therefore retried on pages dirtied
 * again, up to DIRTY_TRIES times; a kernel that always cleans them fails.
 */
#define DIRTY_TRIES	5

/*
 * msync(MS_SYNC) of a window writes back the file objects behind it, over
 * the range given, from the owner's window and from a sharer's; fsync()
 * of the region's descriptor writes back all of them.
 */
TEST_F(control, msync_writes_back_file_objects)
{
	const uint64_t len = 4 * SZ_1M, half = len / 2;
	char *obj = self->win + TRY, why[1024];
	long long second = 0;
	pid_t pid;
	int ffd, tries;

	ffd = disk_file(len, why, sizeof(why));
	if (ffd < 0)
		SKIP(return, "%s", why);
	test_sys_map_fd(_metadata, self->fd, TRY, len, ffd, 0);
	ASSERT_LE(0, dirty_pages(ffd, 0, len))
		TH_LOG("cachestat: %s", strerror(errno));

	for (tries = 1; tries <= DIRTY_TRIES && second <= 0; tries++) {
		pattern_fill(obj, len, 40 + tries);
		if (dirty_pages(ffd, half, len - half) <= 0)
			continue;
		ASSERT_SYS(msync(obj, half, MS_SYNC));
		ASSERT_EQ(0, dirty_pages(ffd, 0, half));
		second = dirty_pages(ffd, half, len - half);
	}
	EXPECT_LT(0, second)
		TH_LOG("msync() of the first half wrote the second (%d tries)",
		       tries - 1);
	ASSERT_SYS(fsync(self->fd));
	EXPECT_EQ(0, dirty_pages(ffd, 0, len));

	pid = ASSERT_SYS(child_fork());
	if (pid == 0) {
		char *w = sys_mshare_attach(self->fd, 0, 0, NULL, 0);
		bool dirty = false;

		CHILD_CHECK(w != MAP_FAILED, "attach: %m");
		for (tries = 0; tries < DIRTY_TRIES && !dirty; tries++) {
			pattern_fill(w + TRY, len, 42);
			dirty = dirty_pages(ffd, 0, len) > 0;
		}
		CHILD_CHECK(dirty, "nothing dirty after %d fills", tries);
		CHILD_CHECK(msync(w + TRY, len, MS_SYNC) == 0, "msync: %m");
		CHILD_CHECK(dirty_pages(ffd, 0, len) == 0, "still dirty");
		_exit(0);
	}
	ASSERT_CHILD_OK(pid);
	ASSERT_FD_PATTERN(ffd, 0, len, 42);
	close(ffd);
}

/* The capabilities that override file permissions and ownership. */
#define FILE_CAPS	(1u << CAP_DAC_OVERRIDE | 1u << CAP_DAC_READ_SEARCH | \
			 1u << CAP_FOWNER)

/*
 * mincore() of a window does not tell the page cache of an object whose
 * file the caller could not open for writing: such an object reads as
 * resident throughout, as a file mapping of it would. The caller here
 * owns the region (and so passes the window's check) but neither owns the
 * object's file nor may write it once its capabilities are gone.
 */
TEST_F(control, mincore_hides_unwritable_object_cache)
{
	char *obj = self->win + TRY, why[1024];
	pid_t pid;
	int ffd, bad;

	ffd = disk_file(SZ_1M, why, sizeof(why));
	if (ffd < 0)
		SKIP(return, "%s", why);
	test_sys_map_fd(_metadata, self->fd, TRY, SZ_1M, ffd, 0);
	ASSERT_SYS(fchown(ffd, 65534, 65534));
	ASSERT_SYS(fchmod(ffd, 0644));
	ASSERT_TRUE(is_zero(obj, SZ_1M / 2));

	/*
	 * With the capabilities: the first half is in memory, the last
	 * quarter not (readahead may have brought in some of the rest).
	 */
	bad = mincore_matches(obj, SZ_1M / 2, self->page, every_page);
	ASSERT_EQ(-1, bad) TH_LOG("page %d of the first half", bad);
	bad = mincore_matches(obj + 3 * SZ_1M / 4, SZ_1M / 4, self->page,
			      no_page);
	ASSERT_EQ(-1, bad) TH_LOG("page %d of the last quarter", bad);

	pid = ASSERT_SYS(child_fork());
	if (pid == 0) {
		CHILD_CHECK(caps_drop(FILE_CAPS) == 0, "capset: %m");
		CHILD_CHECK(mincore_matches(obj, SZ_1M, self->page,
					    every_page) == -1,
			    "the object's page cache shows through the window");
		_exit(0);
	}
	ASSERT_CHILD_OK(pid);
	close(ffd);
}

TEST_F(control, advise_populate)
{
	const long long pages = RSS_OBJ / self->page;
	long long r0, r1, r2;

	test_sys_map_anon(_metadata, self->fd, TRY, RSS_OBJ, 0);
	test_sys_map_anon(_metadata, self->fd, TRY + 2 * RSS_OBJ, RSS_OBJ, 0);
	r0 = rss(_metadata, self->fd);
	ASSERT_EQ(0, sys_mshare_advise(self->fd, TRY, RSS_OBJ,
				       MADV_POPULATE_WRITE))
		TH_LOG("MADV_POPULATE_WRITE: %s", strerror(errno));
	r1 = rss(_metadata, self->fd);
	ASSERT_RSS_GROWTH(r0, r1, pages);
	ASSERT_EQ(0, sys_mshare_advise(self->fd, TRY + 2 * RSS_OBJ, RSS_OBJ,
				       MADV_POPULATE_READ))
		TH_LOG("MADV_POPULATE_READ: %s", strerror(errno));
	r2 = rss(_metadata, self->fd);
	ASSERT_RSS_GROWTH(r1, r2, pages);
	ASSERT_TRUE(is_zero(self->win + TRY, RSS_OBJ));
	/* a hole cannot be populated */
	EXPECT_ERRNO(ENOMEM, sys_mshare_advise(self->fd, TRY + RSS_OBJ,
					       RSS_OBJ, MADV_POPULATE_WRITE));
}

TEST_F(control, advise_dontneed_keeps_shared_data)
{
	const long long pages = RSS_OBJ / self->page;
	char *obj = self->win + TRY;
	long long r1, r2, r3;

	test_sys_map_anon(_metadata, self->fd, TRY, RSS_OBJ, 0);
	pattern_fill(obj, RSS_OBJ, 90);
	r1 = rss(_metadata, self->fd);
	ASSERT_LE(pages - rss_slack_pages(), r1);
	ASSERT_EQ(0, sys_mshare_advise(self->fd, TRY, RSS_OBJ, MADV_DONTNEED))
		TH_LOG("MADV_DONTNEED: %s", strerror(errno));
	r2 = rss(_metadata, self->fd);
	/* dropped */
	ASSERT_RSS_GROWTH(r2, r1, pages);
	/* the pages stay in shmem: a new fault finds the same bytes */
	ASSERT_PATTERN(obj, RSS_OBJ, 90);
	r3 = rss(_metadata, self->fd);
	ASSERT_RSS_GROWTH(r2, r3, pages);
	other_process_sees(_metadata, self, TRY, RSS_OBJ, 90, 0);
}

TEST_F(control, advise_remove_zeroes)
{
	char *obj = self->win + TRY;

	test_sys_map_anon(_metadata, self->fd, TRY, OBJ_SIZE, 0);
	pattern_fill(obj, OBJ_SIZE, 91);
	ASSERT_EQ(0, sys_mshare_advise(self->fd, TRY + SZ_64K, SZ_64K,
				       MADV_REMOVE))
		TH_LOG("MADV_REMOVE: %s", strerror(errno));
	ASSERT_TRUE(is_zero(obj + SZ_64K, SZ_64K));
	ASSERT_PATTERN(obj, SZ_64K, 91);
	ASSERT_PATTERN_AT(obj + 2 * SZ_64K, OBJ_SIZE - 2 * SZ_64K, 91,
			  2 * SZ_64K);
}

/*
 * Reclaim of a region's page cache while a sharer reads it: the owner pages
 * a clean disk-file object out with MADV_PAGEOUT, again and again, while a
 * child checks every page of it through its window. The pages must leave
 * the region (mshare-rss falls), come back from the disk when the sharer
 * touches them, and hold the file's data every time.
 */
#define PAGEOUT_ROUNDS	20

TEST_F(control, pageout_file_object_while_shared)
{
	const size_t pages = OBJ_SIZE / self->page;
	char *obj = self->win + TRY, why[1024];
	_Atomic long *board;	/* [0] stop, [1] checks, [2] bad */
	long long now, low = pages;
	pid_t pid;
	int ffd;

	ffd = disk_file(OBJ_SIZE, why, sizeof(why));
	if (ffd < 0)
		SKIP(return, "%s", why);
	ASSERT_SYS(fd_pattern_fill(ffd, 0, OBJ_SIZE, 93));
	ASSERT_SYS(fsync(ffd));
	test_sys_map_fd(_metadata, self->fd, TRY, OBJ_SIZE, ffd, 0);
	board = mmap(NULL, 3 * sizeof(*board), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, board);

	pid = ASSERT_SYS(child_fork());
	if (pid == 0) {
		while (!atomic_load(&board[0])) {
			if (pattern_check(obj, OBJ_SIZE, 93) >= 0)
				atomic_fetch_add(&board[2], 1);
			atomic_fetch_add(&board[1], 1);
		}
		_exit(0);
	}
	while (atomic_load(&board[1]) < 1)
		usleep(1000);
	for (int i = 0; i < PAGEOUT_ROUNDS; i++) {
		ASSERT_SYS(sys_mshare_advise(self->fd, TRY, OBJ_SIZE,
					     MADV_PAGEOUT));
		now = rss(_metadata, self->fd);
		low = now < low ? now : low;
		usleep(10000);
	}
	atomic_store(&board[0], 1);
	ASSERT_CHILD_OK(pid);

	TH_LOG("%d page-outs of %zu pages: mshare-rss down to %lld, %ld checks by the sharer, %ld bad",
	       PAGEOUT_ROUNDS, pages, low, atomic_load(&board[1]),
	       atomic_load(&board[2]));
	EXPECT_GT((long long)pages / 2, low)
		TH_LOG("MADV_PAGEOUT reclaimed no page of the object");
	EXPECT_LE(2, atomic_load(&board[1]));
	EXPECT_EQ(0, atomic_load(&board[2]));
	ASSERT_PATTERN(obj, OBJ_SIZE, 93);
	munmap((void *)board, 3 * sizeof(*board));
	close(ffd);
}

TEST_F(control, advise_accepted_and_refused)
{
	const struct { int advice; const char *name; } ok[] = {
		{ MADV_NORMAL, "MADV_NORMAL" },
		{ MADV_RANDOM, "MADV_RANDOM" },
		{ MADV_SEQUENTIAL, "MADV_SEQUENTIAL" },
		{ MADV_WILLNEED, "MADV_WILLNEED" },
		{ MADV_HUGEPAGE, "MADV_HUGEPAGE" },
		{ MADV_NOHUGEPAGE, "MADV_NOHUGEPAGE" },
		{ MADV_COLD, "MADV_COLD" },
		{ MADV_PAGEOUT, "MADV_PAGEOUT" },
		{ MADV_NORMAL, "MADV_NORMAL" },
	};
	const struct { int advice; const char *name; } refused[] = {
		{ MADV_FREE, "MADV_FREE" },
		{ MADV_DONTFORK, "MADV_DONTFORK" },
		{ MADV_DOFORK, "MADV_DOFORK" },
		{ MADV_MERGEABLE, "MADV_MERGEABLE" },
		{ MADV_UNMERGEABLE, "MADV_UNMERGEABLE" },
		{ MADV_DONTDUMP, "MADV_DONTDUMP" },
		{ MADV_DODUMP, "MADV_DODUMP" },
		{ MADV_WIPEONFORK, "MADV_WIPEONFORK" },
		{ MADV_KEEPONFORK, "MADV_KEEPONFORK" },
		{ MADV_COLLAPSE, "MADV_COLLAPSE" },
		{ 12345, "12345" },
		{ -1, "-1" },
	};
	char *obj = self->win + TRY;
	unsigned int i;

	test_sys_map_anon(_metadata, self->fd, TRY, OBJ_SIZE, 0);
	pattern_fill(obj, OBJ_SIZE, 92);
	for (i = 0; i < ARRAY_SIZE(ok); i++) {
		EXPECT_EQ(0, sys_mshare_advise(self->fd, TRY, OBJ_SIZE,
					       ok[i].advice))
			TH_LOG("  %s: %s", ok[i].name, strerror(errno));
	}
	for (i = 0; i < ARRAY_SIZE(refused); i++) {
		EXPECT_ERRNO(EINVAL, sys_mshare_advise(self->fd, TRY, OBJ_SIZE,
						       refused[i].advice))
			TH_LOG("  %s", refused[i].name);
	}
	ASSERT_PATTERN(obj, OBJ_SIZE, 92);
	/* a hole in the range */
	EXPECT_ERRNO(ENOMEM, sys_mshare_advise(self->fd, TRY, 2 * OBJ_SIZE,
					       MADV_NORMAL));
	/* the range must be page aligned and inside the region */
	EXPECT_ERRNO(EINVAL, sys_mshare_advise(self->fd, TRY + 1, self->page,
					       MADV_NORMAL));
	EXPECT_ERRNO(EINVAL, sys_mshare_advise(self->fd, TRY, 0, MADV_NORMAL));
	EXPECT_ERRNO(EINVAL, sys_mshare_advise(self->fd, self->align,
					       self->page, MADV_NORMAL));
}

/*
 * Another process holds a reopened read-write fd of the region: it may
 * change nothing through it.
 */
static int child_not_owner(int fd, uint64_t align)
{
	char *w;

	CHILD_CHECK(failed_with(sys_mshare_map_anon(fd, TRY + SZ_1M, SZ_64K, 0),
				EPERM), "mshare_map: %m");
	CHILD_CHECK(failed_with(sys_mshare_unmap(fd, TRY, SZ_64K), EPERM),
		    "mshare_unmap: %m");
	CHILD_CHECK(failed_with(sys_mshare_protect(fd, TRY, SZ_64K, PROT_READ),
				EPERM), "mshare_protect: %m");
	CHILD_CHECK(failed_with(sys_mshare_advise(fd, TRY, SZ_64K,
						  MADV_DONTNEED), EPERM),
		    "mshare_advise: %m");
	CHILD_CHECK(failed_with(sys_mshare_advise(fd, TRY, SZ_64K,
						  MADV_REMOVE), EPERM),
		    "mshare_advise: %m");
	CHILD_CHECK(failed_with(ftruncate(fd, 2 * align), EPERM),
		    "ftruncate: %m");
	CHILD_CHECK(failed_with(fallocate(fd, 0, 0, 2 * align), EPERM),
		    "fallocate: %m");
	/* it may use the region */
	w = sys_mshare_attach(fd, 0, 0, NULL, 0);
	CHILD_CHECK(w != MAP_FAILED, "attach: %m");
	CHILD_CHECK(pattern_check(w + TRY, SZ_64K, 93) == -1, "data");
	return 0;
}

static int child_receive_not_owner(int sock, uint64_t align)
{
	int fd = fd_recv(sock, STEP_TIMEOUT_MS);

	CHILD_CHECK(fd >= 0, "fd_recv: %m");
	return child_not_owner(fd, align);
}

/* Nothing changed: the object is there, writable, and the rest a hole. */
static void assert_unchanged(struct __test_metadata *_metadata, int fd,
			     char *win, uint64_t align, long long r0)
{
	ASSERT_PATTERN(win + TRY, SZ_64K, 93);
	ASSERT_WRITE_SIGNAL(0, win + TRY + SZ_64K - 8);
	pattern_fill(win + TRY, SZ_64K, 93);
	ASSERT_READ_SIGNAL(SIGSEGV, win + TRY + SZ_1M);
	ASSERT_EQ(r0, rss(_metadata, fd));
	ASSERT_EQ((long long)align, test_fdinfo(_metadata, 0, fd, "mshare-size"));
}

TEST_F(control, non_owner_eperm)
{
	int sv[2], fd, rw;
	long long r0;
	char *win;
	pid_t pid;

	test_sys_map_anon(_metadata, self->fd, TRY, SZ_64K, 0);
	pattern_fill(self->win + TRY, SZ_64K, 93);
	r0 = rss(_metadata, self->fd);

	/*
	 * inherited through fork(), next to the owner file the child
	 * inherits too: ownership is the file's, not the process's
	 */
	rw = fd_reopen(self->fd, O_RDWR);
	ASSERT_LE(0, rw) TH_LOG("reopen: %s", strerror(errno));
	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(child_not_owner(rw, self->align));
	ASSERT_CHILD_OK(pid);
	assert_unchanged(_metadata, self->fd, self->win, self->align, r0);
	/* and in this process */
	EXPECT_ERRNO(EPERM, sys_mshare_map_anon(rw, TRY + SZ_1M, SZ_64K, 0));
	EXPECT_ERRNO(EPERM, sys_mshare_unmap(rw, TRY, SZ_64K));
	EXPECT_ERRNO(EPERM, sys_mshare_protect(rw, TRY, SZ_64K, PROT_READ));
	EXPECT_ERRNO(EPERM, sys_mshare_advise(rw, TRY, SZ_64K, MADV_DONTNEED));
	EXPECT_ERRNO(EPERM, mshare_unmap(rw, TRY, SZ_64K));
	EXPECT_ERRNO(EPERM, mshare_map_anon(rw, TRY + SZ_1M, SZ_64K, 0));
	assert_unchanged(_metadata, self->fd, self->win, self->align, r0);
	close(rw);

	/* received over a unix socket by a process from before the region */
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = ASSERT_SYS(child_fork());
	if (pid == 0) {
		close(sv[0]);
		_exit(child_receive_not_owner(sv[1], self->align));
	}
	close(sv[1]);
	fd = test_new_region(_metadata, self->align);
	test_sys_map_anon(_metadata, fd, TRY, SZ_64K, 0);
	win = test_attach(_metadata, fd, 0, 0, 0);
	pattern_fill(win + TRY, SZ_64K, 93);
	r0 = rss(_metadata, fd);
	rw = fd_reopen(fd, O_RDWR);
	ASSERT_LE(0, rw) TH_LOG("reopen: %s", strerror(errno));
	ASSERT_EQ(0, fd_send(sv[0], rw));
	close(rw);
	ASSERT_CHILD_OK(pid);
	assert_unchanged(_metadata, fd, win, self->align, r0);
	munmap(win, self->align);
	close(fd);
	close(sv[0]);
}

/* A read-only descriptor is never the owner file: EPERM. */
TEST_F(control, reopened_read_only_fd_eperm)
{
	long long r0;
	int ro;

	test_sys_map_anon(_metadata, self->fd, TRY, SZ_64K, 0);
	pattern_fill(self->win + TRY, SZ_64K, 93);
	r0 = rss(_metadata, self->fd);
	ro = fd_reopen(self->fd, O_RDONLY);
	ASSERT_LE(0, ro) TH_LOG("reopen O_RDONLY: %s", strerror(errno));

	EXPECT_ERRNO(EPERM, sys_mshare_map_anon(ro, TRY + SZ_1M, SZ_64K, 0));
	EXPECT_ERRNO(EPERM, sys_mshare_unmap(ro, TRY, SZ_64K));
	EXPECT_ERRNO(EPERM, sys_mshare_protect(ro, TRY, SZ_64K, PROT_READ));
	EXPECT_ERRNO(EPERM, sys_mshare_advise(ro, TRY, SZ_64K, MADV_DONTNEED));
	assert_unchanged(_metadata, self->fd, self->win, self->align, r0);
	close(ro);
}

TEST_F(control, not_an_mshare_fd_ebadf)
{
	int bad[3];
	unsigned int i;

	bad[0] = ASSERT_SYS(memfd_sized(SZ_64K));
	bad[1] = -1;
	bad[2] = ASSERT_SYS(open("/dev/null", O_RDWR | O_CLOEXEC));

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_ERRNO(EBADF, sys_mshare_map_anon(bad[i], 0, SZ_64K, 0))
			TH_LOG("  fd %d", bad[i]);
		EXPECT_ERRNO(EBADF, sys_mshare_unmap(bad[i], 0, SZ_64K))
			TH_LOG("  fd %d", bad[i]);
		EXPECT_ERRNO(EBADF, sys_mshare_protect(bad[i], 0, SZ_64K,
						       PROT_READ))
			TH_LOG("  fd %d", bad[i]);
		EXPECT_ERRNO(EBADF, sys_mshare_advise(bad[i], 0, SZ_64K,
						      MADV_NORMAL))
			TH_LOG("  fd %d", bad[i]);
	}
	close(bad[0]);
	close(bad[2]);
}

/* The system calls work on regions of msharefs too. */
TEST_F(control, named_region)
{
	int named = test_region(_metadata, &self->c, "named", self->align);
	char *w, *obj;

	test_sys_map_anon(_metadata, named, OBJ_ROFF, SZ_64K, 0);
	w = test_attach(_metadata, named, 0, 0, 0);
	obj = w + OBJ_ROFF;
	pattern_fill(obj, SZ_64K, 94);
	ASSERT_EQ(0, sys_mshare_protect(named, OBJ_ROFF, SZ_64K, PROT_READ));
	ASSERT_WRITE_SIGNAL(SIGSEGV, obj);
	ASSERT_EQ(0, sys_mshare_protect(named, OBJ_ROFF, SZ_64K, RW));
	ASSERT_EQ(0, sys_mshare_advise(named, OBJ_ROFF, SZ_64K, MADV_DONTNEED));
	ASSERT_PATTERN(obj, SZ_64K, 94);
	ASSERT_EQ(0, sys_mshare_unmap(named, OBJ_ROFF, SZ_64K));
	ASSERT_READ_SIGNAL(SIGSEGV, obj);
	munmap(w, self->align);
	close(named);
}

TEST_HARNESS_MAIN
