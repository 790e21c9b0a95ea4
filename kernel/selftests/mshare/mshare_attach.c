// SPDX-License-Identifier: GPL-2.0
/*
 * mshare_attach(): windows onto a region made by mshare_create(), the
 * whole of it or an aligned part (offset, size; size 0 for the rest),
 * anywhere (an aligned address) or at a fixed one (MSHARE_ATTACH_FIXED:
 * EEXIST if occupied, EINVAL at 0 or unaligned), read-only
 * (MSHARE_ATTACH_RDONLY, and nothing else through a read-only descriptor,
 * for mmap() too) or executable (MSHARE_ATTACH_EXEC); the errors for bad
 * descriptors, offsets, sizes, flags and unsized regions; mmap() of the
 * region fd with an offset showing the same as the same attach; and the
 * point of it all, that a process attaching a populated object reads it
 * with a handful of page faults and no page tables of its own, where a
 * memfd mapping of the same size needs a page table per 2 MiB.
 */
#include <sys/mman.h>
#include <sys/stat.h>

#include "mshare_test.h"

/* Objects of the fixture's region of two alignment units. */
#define OBJ_ROFF	SZ_1G
#define OBJ_SIZE	SZ_1M
#define SEED_LO		1	/* at OBJ_ROFF */
#define SEED_HI		2	/* at align + OBJ_ROFF */
#define CODE_ROFF	(2 * SZ_1G)
#define CODE_SIZE	SZ_64K
#define X86_RET		0xc3
#define MAX_WINDOWS	16
#define READY_TIMEOUT_MS	(120 * 1000)

/* The page-table test. */
#define PT_OBJ_SIZE	(8 * SZ_1M)
#define PT_SEED		7
#define PT_MAX_FAULTS	16
#define PT_MAX_VMPTE_KIB	8	/* a P4D table with 5-level paging */
#define PT_MIN_MEMFD_VMPTE_KIB	16	/* 4 PTE tables for 8 MiB */

FIXTURE(attach) {
	struct mshare_ctx c;
	uint64_t align;
	size_t page;
	/* 2 * align, with objects at OBJ_ROFF and align + OBJ_ROFF */
	int fd;
	char *win;		/* a read-write window onto all of it */
	struct { void *p; uint64_t len; } maps[MAX_WINDOWS];
	int nmaps;
};

static void track(FIXTURE_DATA(attach) *self, void *p, uint64_t len)
{
	if (p != MAP_FAILED && self->nmaps < MAX_WINDOWS) {
		self->maps[self->nmaps].p = p;
		self->maps[self->nmaps].len = len;
		self->nmaps++;
	}
}

FIXTURE_SETUP(attach)
{
	self->fd = -1;
	mshare_test_setup(_metadata, &self->c, "attach");
	self->align = self->c.align;
	self->page = self->c.page;
	self->fd = test_new_region(_metadata, 2 * self->align);
	test_sys_map_anon(_metadata, self->fd, OBJ_ROFF, OBJ_SIZE, 0);
	test_sys_map_anon(_metadata, self->fd, self->align + OBJ_ROFF,
			  OBJ_SIZE, 0);
}

FIXTURE_TEARDOWN(attach)
{
	int i;

	child_kill_all();
	for (i = 0; i < self->nmaps; i++)
		munmap(self->maps[i].p, self->maps[i].len);
	if (self->fd >= 0)
		close(self->fd);
	mshare_ctx_fini(&self->c);
}

/* A window that must work, remembered for the teardown. */
static char *window(struct __test_metadata *_metadata,
		    FIXTURE_DATA(attach) *self, int fd, uint64_t offset,
		    uint64_t size, unsigned int flags)
{
	char *w = test_attach(_metadata, fd, offset, size, flags);

	track(self, w, size ? size : 2 * self->align - offset);
	ASSERT_TRUE(IS_ALIGNED(w, self->align))
		TH_LOG("window at %p is not aligned", w);
	return w;
}

/* The fixture's read-write window, with both objects filled. */
static void fill_objects(struct __test_metadata *_metadata,
			 FIXTURE_DATA(attach) *self)
{
	self->win = window(_metadata, self, self->fd, 0, 0, 0);
	ASSERT_TRUE(maps_has_range(self->win, 2 * self->align));
	pattern_fill(self->win + OBJ_ROFF, OBJ_SIZE, SEED_LO);
	pattern_fill(self->win + self->align + OBJ_ROFF, OBJ_SIZE, SEED_HI);
}

static long long nr_windows(struct __test_metadata *_metadata, int fd)
{
	return test_fdinfo(_metadata, 0, fd, "mshare-windows");
}

/* A process of its own attaches, reads, and writes SEED_HI + 10. */
static int child_attach_rw(FIXTURE_DATA(attach) *self, int ready_fd,
			   struct gate *go)
{
	uint64_t a = self->align;
	char *w, ok = 1;

	gate_child(go);
	w = sys_mshare_attach(self->fd, 0, 0, NULL, 0);
	CHILD_CHECK(w != MAP_FAILED, "attach: %m");
	CHILD_CHECK(IS_ALIGNED(w, a), "window at %p", w);
	CHILD_CHECK(maps_has_range(w, 2 * a), "no window of 2 units");
	CHILD_CHECK(msg_send(ready_fd, &ok, 1) == 0, "%m");
	CHILD_CHECK(gate_wait(go) == 0, "%m");
	CHILD_CHECK(pattern_check(w + OBJ_ROFF, OBJ_SIZE, SEED_LO) == -1,
		    "low object");
	CHILD_CHECK(pattern_check(w + a + OBJ_ROFF, OBJ_SIZE, SEED_HI) == -1,
		    "high object");
	pattern_fill(w + OBJ_ROFF, OBJ_SIZE, SEED_HI + 10);
	return 0;
}

TEST_F(attach, whole_region_shared_between_processes)
{
	struct gate go;
	int ready[2];
	pid_t pid;
	char ok;

	ASSERT_EQ(0, gate_init(&go));
	ASSERT_EQ(0, pipe2(ready, O_CLOEXEC));
	/* forked before this process has a window */
	pid = ASSERT_SYS(child_fork());
	if (pid == 0) {
		close(ready[0]);
		_exit(child_attach_rw(self, ready[1], &go));
	}
	close(ready[1]);
	fill_objects(_metadata, self);
	ASSERT_EQ(0, msg_recv(ready[0], &ok, 1, READY_TIMEOUT_MS))
		TH_LOG("child: %s", strerror(errno));
	gate_open(&go);
	ASSERT_CHILD_OK(pid);
	ASSERT_PATTERN(self->win + OBJ_ROFF, OBJ_SIZE, SEED_HI + 10);
	ASSERT_PATTERN(self->win + self->align + OBJ_ROFF, OBJ_SIZE, SEED_HI);
	/* outside the objects: holes */
	ASSERT_READ_SIGNAL(SIGSEGV, self->win);
	ASSERT_READ_SIGNAL(SIGSEGV, self->win + OBJ_ROFF + OBJ_SIZE);
	gate_fini(&go);
	close(ready[0]);
}

TEST_F(attach, fixed_address)
{
	const uint64_t a = self->align, page = self->page;
	char *free_space, *w, *small;

	fill_objects(_metadata, self);
	free_space = reserve_aligned(4 * a, a);
	ASSERT_NE(NULL, free_space);
	ASSERT_EQ(0, munmap(free_space, 4 * a));

	w = sys_mshare_attach(self->fd, 0, 0, free_space, MSHARE_ATTACH_FIXED);
	track(self, w, 2 * a);
	ASSERT_EQ(free_space, w) TH_LOG("attach FIXED: %s", strerror(errno));
	ASSERT_TRUE(maps_has_range(w, 2 * a));
	ASSERT_PATTERN(w + OBJ_ROFF, OBJ_SIZE, SEED_LO);

	/* occupied, by that window, wholly or partly */
	EXPECT_ERRNO(EEXIST, sys_mshare_attach(self->fd, 0, 0, w,
					       MSHARE_ATTACH_FIXED));
	EXPECT_ERRNO(EEXIST, sys_mshare_attach(self->fd, 0, 0, w + a,
					       MSHARE_ATTACH_FIXED));
	/* by an ordinary page inside [w + 3a, w + 4a) */
	small = mmap(w + 3 * a + page, page, PROT_READ,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	ASSERT_EQ(w + 3 * a + page, small);
	EXPECT_ERRNO(EEXIST, sys_mshare_attach(self->fd, 0, a, w + 3 * a,
					       MSHARE_ATTACH_FIXED));
	/* never replacing: both are still there */
	ASSERT_TRUE(maps_has_range(small, page));
	ASSERT_TRUE(maps_has_range(w, 2 * a));
	ASSERT_PATTERN(w + OBJ_ROFF, OBJ_SIZE, SEED_LO);
	ASSERT_EQ(0, munmap(small, page));

	/* address 0, unaligned addresses */
	EXPECT_ERRNO(EINVAL, sys_mshare_attach(self->fd, 0, a, NULL,
					       MSHARE_ATTACH_FIXED));
	EXPECT_ERRNO(EINVAL, sys_mshare_attach(self->fd, 0, a,
					       w + 2 * a + page,
					       MSHARE_ATTACH_FIXED));
	EXPECT_ERRNO(EINVAL, sys_mshare_attach(self->fd, 0, a,
					       w + 2 * a + a / 2,
					       MSHARE_ATTACH_FIXED));
	ASSERT_EQ(2, nr_windows(_metadata, self->fd));

	/* the free aligned unit after the window takes the high half */
	w = sys_mshare_attach(self->fd, a, a, free_space + 2 * a,
			      MSHARE_ATTACH_FIXED);
	track(self, w, a);
	ASSERT_EQ(free_space + 2 * a, w)
		TH_LOG("attach FIXED: %s", strerror(errno));
	ASSERT_PATTERN(w + OBJ_ROFF, OBJ_SIZE, SEED_HI);
}

/* Without MSHARE_ATTACH_FIXED an unaligned hint still gives an aligned window. */
TEST_F(attach, hint_gives_aligned_window)
{
	const uint64_t a = self->align;
	char *free_space, *w;

	free_space = reserve_aligned(4 * a, a);
	ASSERT_NE(NULL, free_space);
	ASSERT_EQ(0, munmap(free_space, 4 * a));
	w = sys_mshare_attach(self->fd, 0, a, free_space + self->page, 0);
	track(self, w, a);
	ASSERT_NE(MAP_FAILED, w) TH_LOG("attach: %s", strerror(errno));
	ASSERT_TRUE(IS_ALIGNED(w, a)) TH_LOG("window at %p", w);
	ASSERT_TRUE(maps_has_range(w, a));
}

TEST_F(attach, partial_windows)
{
	const uint64_t a = self->align;
	char *lo, *hi, *rest;

	fill_objects(_metadata, self);
	hi = window(_metadata, self, self->fd, a, a, 0);
	ASSERT_TRUE(maps_has_range(hi, a));
	ASSERT_PATTERN(hi + OBJ_ROFF, OBJ_SIZE, SEED_HI);
	rest = window(_metadata, self, self->fd, a, 0, 0);
	ASSERT_TRUE(maps_has_range(rest, a))
		TH_LOG("size 0 from offset a is not the rest, a");
	ASSERT_PATTERN(rest + OBJ_ROFF, OBJ_SIZE, SEED_HI);
	lo = window(_metadata, self, self->fd, 0, a, 0);
	ASSERT_TRUE(maps_has_range(lo, a));
	ASSERT_PATTERN(lo + OBJ_ROFF, OBJ_SIZE, SEED_LO);
	ASSERT_EQ(4, nr_windows(_metadata, self->fd));

	/* one memory: writes through a part show through the whole */
	pattern_fill(hi + OBJ_ROFF, OBJ_SIZE, 4);
	ASSERT_PATTERN(self->win + a + OBJ_ROFF, OBJ_SIZE, 4);
	ASSERT_PATTERN(rest + OBJ_ROFF, OBJ_SIZE, 4);
	pattern_fill(lo + OBJ_ROFF, OBJ_SIZE, 5);
	ASSERT_PATTERN(self->win + OBJ_ROFF, OBJ_SIZE, 5);
	/* a part shows nothing else: holes around its object */
	ASSERT_READ_SIGNAL(SIGSEGV, hi + OBJ_ROFF + OBJ_SIZE);
	ASSERT_READ_SIGNAL(SIGSEGV, hi);
	ASSERT_READ_SIGNAL(SIGSEGV, lo + a - 8);
}

TEST_F(attach, invalid_offset_size_flags_einval)
{
	const uint64_t a = self->align, page = self->page;
	const int64_t offsets[] = {
		page, a / 2, a + page, 2 * a, 3 * a, -(int64_t)a, -(int64_t)page,
	};
	const struct { int64_t off; uint64_t size; } ranges[] = {
		{ 0, page }, { 0, a / 2 }, { 0, a + page }, { 0, 3 * a },
		{ 0, 4 * a }, { a, 2 * a }, { a, a + page }, { a, page },
	};
	const unsigned int flags[] = { 0x8, 0x10, 0x80000000u, ~0u };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(offsets); i++) {
		EXPECT_ERRNO(EINVAL, sys_mshare_attach(self->fd, offsets[i], 0,
						       NULL, 0))
			TH_LOG("  offset %#llx", (long long)offsets[i]);
	}
	for (i = 0; i < ARRAY_SIZE(ranges); i++) {
		EXPECT_ERRNO(EINVAL, sys_mshare_attach(self->fd, ranges[i].off,
						       ranges[i].size, NULL, 0))
			TH_LOG("  offset %#llx size %#llx",
			       (long long)ranges[i].off,
			       (long long)ranges[i].size);
	}
	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		EXPECT_ERRNO(EINVAL, sys_mshare_attach(self->fd, 0, 0, NULL,
						       flags[i]))
			TH_LOG("  flags %#x", flags[i]);
	}
	/* nothing was mapped */
	ASSERT_EQ(0, nr_windows(_metadata, self->fd));
}

TEST_F(attach, not_an_mshare_fd_ebadf)
{
	int memfd, closed, null, dir, info;

	memfd = ASSERT_SYS(memfd_sized(SZ_2M));
	EXPECT_ERRNO(EBADF, sys_mshare_attach(memfd, 0, 0, NULL, 0));
	EXPECT_ERRNO(EBADF, sys_mshare_attach(-1, 0, 0, NULL, 0));
	closed = ASSERT_SYS(dup(memfd));
	close(closed);
	EXPECT_ERRNO(EBADF, sys_mshare_attach(closed, 0, 0, NULL, 0));
	null = ASSERT_SYS(open("/dev/null", O_RDWR | O_CLOEXEC));
	EXPECT_ERRNO(EBADF, sys_mshare_attach(null, 0, 0, NULL, 0));
	/* msharefs files that are not regions */
	dir = ASSERT_SYS(open(self->c.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	EXPECT_ERRNO(EBADF, sys_mshare_attach(dir, 0, 0, NULL, 0));
	info = ASSERT_SYS(open(MSHARE_INFO, O_RDONLY | O_CLOEXEC));
	EXPECT_ERRNO(EBADF, sys_mshare_attach(info, 0, 0, NULL, 0));
	close(info);
	close(dir);
	close(null);
	close(memfd);
}

TEST_F(attach, unsized_region_einval)
{
	int fd = test_new_region(_metadata, 0);
	char *w;

	EXPECT_ERRNO(EINVAL, sys_mshare_attach(fd, 0, 0, NULL, 0));
	EXPECT_ERRNO(EINVAL, sys_mshare_attach(fd, 0, self->align, NULL, 0));
	EXPECT_ERRNO(EINVAL, sys_mshare_attach(fd, 0, 0, NULL,
					       MSHARE_ATTACH_RDONLY));
	EXPECT_ERRNO(EINVAL, mmap(NULL, self->align, PROT_READ | PROT_WRITE,
				  MAP_SHARED, fd, 0));
	/* the control: once sized, the same attach works */
	ASSERT_EQ(0, ftruncate(fd, self->align));
	w = sys_mshare_attach(fd, 0, 0, NULL, 0);
	ASSERT_NE(MAP_FAILED, w) TH_LOG("attach: %s", strerror(errno));
	ASSERT_EQ(0, munmap(w, self->align));
	close(fd);
}

/* A process given only the read-only descriptor. */
static int child_read_only_fd(int ro)
{
	char *w;

	errno = 0;
	w = sys_mshare_attach(ro, 0, 0, NULL, 0);
	CHILD_CHECK(w == MAP_FAILED && errno == EACCES,
		    "writable attach via a read-only fd: %m");
	w = sys_mshare_attach(ro, 0, 0, NULL, MSHARE_ATTACH_RDONLY);
	CHILD_CHECK(w != MAP_FAILED, "read-only attach: %m");
	CHILD_CHECK(pattern_check(w + OBJ_ROFF, OBJ_SIZE, SEED_LO) == -1,
		    "data");
	CHILD_CHECK(probe_write(w + OBJ_ROFF, 1) == SIGSEGV,
		    "write to a read-only window did not fault");
	CHILD_CHECK(pattern_check(w + OBJ_ROFF, OBJ_SIZE, SEED_LO) == -1,
		    "data changed");
	return 0;
}

TEST_F(attach, read_only_descriptor)
{
	const uint64_t a = self->align;
	const int rw = PROT_READ | PROT_WRITE;
	char *r, *m, *r2;
	pid_t pid;
	int ro;

	fill_objects(_metadata, self);
	ro = fd_reopen(self->fd, O_RDONLY);
	ASSERT_LE(0, ro) TH_LOG("reopen O_RDONLY: %s", strerror(errno));

	EXPECT_ERRNO(EACCES, sys_mshare_attach(ro, 0, 0, NULL, 0));
	EXPECT_ERRNO(EACCES, sys_mshare_attach(ro, 0, a, NULL,
					       MSHARE_ATTACH_EXEC));
	EXPECT_ERRNO(EACCES, mmap(NULL, 2 * a, rw, MAP_SHARED, ro, 0));
	EXPECT_ERRNO(EACCES, mmap(NULL, a, PROT_WRITE, MAP_SHARED, ro, a));
	ASSERT_EQ(1, nr_windows(_metadata, self->fd));

	r = window(_metadata, self, ro, 0, 0, MSHARE_ATTACH_RDONLY);
	ASSERT_PATTERN(r + OBJ_ROFF, OBJ_SIZE, SEED_LO);
	ASSERT_PATTERN(r + a + OBJ_ROFF, OBJ_SIZE, SEED_HI);
	ASSERT_WRITE_SIGNAL(SIGSEGV, r + OBJ_ROFF);
	ASSERT_WRITE_SIGNAL(SIGSEGV, r + a + OBJ_ROFF + OBJ_SIZE - 8);
	ASSERT_PATTERN(self->win + OBJ_ROFF, OBJ_SIZE, SEED_LO);

	m = mmap(NULL, a, PROT_READ, MAP_SHARED, ro, a);
	track(self, m, a);
	ASSERT_NE(MAP_FAILED, m) TH_LOG("mmap PROT_READ: %s", strerror(errno));
	ASSERT_PATTERN(m + OBJ_ROFF, OBJ_SIZE, SEED_HI);
	ASSERT_WRITE_SIGNAL(SIGSEGV, m + OBJ_ROFF);

	/* RDONLY through the read-write descriptor is read-only too */
	r2 = window(_metadata, self, self->fd, 0, 0, MSHARE_ATTACH_RDONLY);
	ASSERT_PATTERN(r2 + OBJ_ROFF, OBJ_SIZE, SEED_LO);
	ASSERT_WRITE_SIGNAL(SIGSEGV, r2 + OBJ_ROFF);

	/* what the writable window writes, the read-only ones read */
	pattern_fill(self->win + OBJ_ROFF, OBJ_SIZE, 9);
	ASSERT_PATTERN(r + OBJ_ROFF, OBJ_SIZE, 9);
	ASSERT_PATTERN(r2 + OBJ_ROFF, OBJ_SIZE, 9);
	pattern_fill(self->win + OBJ_ROFF, OBJ_SIZE, SEED_LO);

	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(child_read_only_fd(ro));
	ASSERT_CHILD_OK(pid);
	close(ro);
}

/* In a child: link the window by a read, then call the code at p. */
static int child_call(char *p)
{
	void (*fn)(void) = (void (*)(void))p;

	(void)*(volatile char *)p;
	fn();
	return 0;
}

#define EXPECT_CALL(_p, _ok) do {					\
	pid_t __pid = ASSERT_SYS(child_fork());				\
	if (__pid == 0)							\
		_exit(child_call(_p));					\
	if (_ok)							\
		ASSERT_CHILD_OK(__pid);					\
	else								\
		ASSERT_CHILD_KILLED(__pid, SIGSEGV);			\
} while (0)

TEST_F(attach, exec_flag)
{
	const uint64_t a = self->align, page = self->page;
	char *rw, *x, *rx, *ro;

	ASSERT_EQ(0, sys_mshare_map_obj(self->fd, CODE_ROFF, CODE_SIZE, 0,
					PROT_READ | PROT_WRITE | PROT_EXEC,
					MAP_ANONYMOUS, -1))
		TH_LOG("read-write-execute object: %s", strerror(errno));
	rw = window(_metadata, self, self->fd, 0, a, 0);
	memset(rw + CODE_ROFF, X86_RET, CODE_SIZE);
	x = window(_metadata, self, self->fd, 0, a, MSHARE_ATTACH_EXEC);
	rx = window(_metadata, self, self->fd, 0, a,
		    MSHARE_ATTACH_EXEC | MSHARE_ATTACH_RDONLY);
	ro = window(_metadata, self, self->fd, 0, a, MSHARE_ATTACH_RDONLY);
	ASSERT_EQ(X86_RET, (unsigned char)x[CODE_ROFF]);

	/* the controls: code runs through the executable windows */
	EXPECT_CALL(x + CODE_ROFF, true);
	EXPECT_CALL(rx + CODE_ROFF + page, true);
	/* not through the others */
	EXPECT_CALL(rw + CODE_ROFF, false);
	EXPECT_CALL(ro + CODE_ROFF + page, false);

	/* EXEC alone is read-write-execute, EXEC | RDONLY not writable */
	ASSERT_EQ(0, probe_write(x + CODE_ROFF + CODE_SIZE - 8,
				 0xc3c3c3c3c3c3c3c3ULL));
	ASSERT_WRITE_SIGNAL(SIGSEGV, rx + CODE_ROFF);
	ASSERT_EQ(X86_RET, (unsigned char)rw[CODE_ROFF]);
	/* and in this process */
	((void (*)(void))(x + CODE_ROFF))();
}

TEST_F(attach, mmap_with_offset_like_attach)
{
	const uint64_t a = self->align, page = self->page;
	const int rw = PROT_READ | PROT_WRITE;
	char *m, *m0, *free_space, *f;

	fill_objects(_metadata, self);
	m = mmap(NULL, a, rw, MAP_SHARED, self->fd, a);
	track(self, m, a);
	ASSERT_NE(MAP_FAILED, m) TH_LOG("mmap at offset a: %s", strerror(errno));
	ASSERT_TRUE(IS_ALIGNED(m, a));
	ASSERT_TRUE(maps_has_range(m, a));
	ASSERT_PATTERN(m + OBJ_ROFF, OBJ_SIZE, SEED_HI);
	pattern_fill(m + OBJ_ROFF, OBJ_SIZE, 6);
	ASSERT_PATTERN(self->win + a + OBJ_ROFF, OBJ_SIZE, 6);

	m0 = mmap(NULL, 2 * a, rw, MAP_SHARED, self->fd, 0);
	track(self, m0, 2 * a);
	ASSERT_NE(MAP_FAILED, m0);
	ASSERT_PATTERN(m0 + OBJ_ROFF, OBJ_SIZE, SEED_LO);
	ASSERT_PATTERN(m0 + a + OBJ_ROFF, OBJ_SIZE, 6);

	/* the same rules as attach */
	EXPECT_ERRNO(EINVAL, mmap(NULL, a, rw, MAP_SHARED, self->fd, page));
	EXPECT_ERRNO(EINVAL, mmap(NULL, a, rw, MAP_SHARED, self->fd, 2 * a));
	EXPECT_ERRNO(EINVAL, mmap(NULL, 2 * a, rw, MAP_SHARED, self->fd, a));
	EXPECT_ERRNO(EINVAL, mmap(NULL, page, rw, MAP_SHARED, self->fd, 0));
	EXPECT_ERRNO(EINVAL, mmap(NULL, a, rw, MAP_PRIVATE, self->fd, 0));

	free_space = reserve_aligned(2 * a, a);
	ASSERT_NE(NULL, free_space);
	ASSERT_EQ(0, munmap(free_space, 2 * a));
	EXPECT_ERRNO(EINVAL, mmap(free_space + page, a, rw,
				  MAP_SHARED | MAP_FIXED_NOREPLACE, self->fd, a));
	f = mmap(free_space + a, a, rw, MAP_SHARED | MAP_FIXED_NOREPLACE,
		 self->fd, a);
	track(self, f, a);
	ASSERT_EQ(free_space + a, f) TH_LOG("mmap FIXED: %s", strerror(errno));
	ASSERT_PATTERN(f + OBJ_ROFF, OBJ_SIZE, 6);
}

struct pt_report {
	long bad, memfd_bad;
	long minflt, memfd_minflt;
	long vmpte_kib, memfd_vmpte_kib;	/* growth */
};

/*
 * A process that never had the region: attach, read every page of the
 * populated object; then the same through an ordinary memfd mapping.
 */
static int child_pt_reader(int fd, int memfd, int report_fd)
{
	struct pt_report rep;
	volatile char warm[64 * 1024];
	long pte0, pte1, f0;
	char *w, *m;

	/* fault in this stack, getrusage() and the status reader first */
	memset((char *)warm, 1, sizeof(warm));
	minflt_self();
	status_kib("VmPTE");

	pte0 = status_kib("VmPTE");
	w = sys_mshare_attach(fd, 0, 0, NULL, MSHARE_ATTACH_RDONLY);
	CHILD_CHECK(w != MAP_FAILED, "attach: %m");
	f0 = minflt_self();
	rep.bad = stamps_check(w + OBJ_ROFF, PT_OBJ_SIZE, PT_SEED);
	rep.minflt = minflt_self() - f0;
	pte1 = status_kib("VmPTE");
	CHILD_CHECK(pte0 >= 0 && pte1 >= 0, "no VmPTE in /proc/self/status");
	rep.vmpte_kib = pte1 - pte0;

	m = mmap(NULL, PT_OBJ_SIZE, PROT_READ, MAP_SHARED, memfd, 0);
	CHILD_CHECK(m != MAP_FAILED, "mmap of the memfd: %m");
	/* PTE-mapped for sure; EINVAL only without THP, PTE-mapped anyway */
	madvise(m, PT_OBJ_SIZE, MADV_NOHUGEPAGE);
	pte0 = status_kib("VmPTE");
	f0 = minflt_self();
	rep.memfd_bad = stamps_check(m, PT_OBJ_SIZE, PT_SEED);
	rep.memfd_minflt = minflt_self() - f0;
	pte1 = status_kib("VmPTE");
	rep.memfd_vmpte_kib = pte1 - pte0;
	CHILD_CHECK(msg_send(report_fd, &rep, sizeof(rep)) == 0, "%m");
	return 0;
}

TEST_F(attach, page_tables_shared)
{
	struct pt_report rep;
	int fd, memfd, rp[2];
	char *w, *m;
	pid_t pid;

	fd = test_new_region(_metadata, self->align);
	test_sys_map_anon(_metadata, fd, OBJ_ROFF, PT_OBJ_SIZE, MAP_POPULATE);
	w = window(_metadata, self, fd, 0, self->align, 0);
	stamp_pages(w + OBJ_ROFF, PT_OBJ_SIZE, PT_SEED);
	ASSERT_LE((long long)(PT_OBJ_SIZE / self->page) - rss_slack_pages(),
		  test_fdinfo(_metadata, 0, fd, "mshare-rss"))
		TH_LOG("the object is not populated");

	memfd = ASSERT_SYS(memfd_sized(PT_OBJ_SIZE));
	m = mmap(NULL, PT_OBJ_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		 memfd, 0);
	ASSERT_NE(MAP_FAILED, m);
	stamp_pages(m, PT_OBJ_SIZE, PT_SEED);
	ASSERT_EQ(0, munmap(m, PT_OBJ_SIZE));

	ASSERT_EQ(0, pipe2(rp, O_CLOEXEC));
	pid = ASSERT_SYS(child_fork());
	if (pid == 0) {
		close(rp[0]);
		_exit(child_pt_reader(fd, memfd, rp[1]));
	}
	close(rp[1]);
	ASSERT_EQ(0, msg_recv(rp[0], &rep, sizeof(rep), READY_TIMEOUT_MS))
		TH_LOG("reader: %s", strerror(errno));
	ASSERT_CHILD_OK(pid);
	ksft_print_msg("attach-numbers: object_kib=%lu mshare_minflt=%ld mshare_vmpte_kib=%ld memfd_minflt=%ld memfd_vmpte_kib=%ld\n",
		       PT_OBJ_SIZE >> 10, rep.minflt, rep.vmpte_kib,
		       rep.memfd_minflt, rep.memfd_vmpte_kib);
	ASSERT_EQ(-1, rep.bad) TH_LOG("the window reads other data");
	ASSERT_EQ(-1, rep.memfd_bad) TH_LOG("the memfd reads other data");
	ASSERT_GT(PT_MAX_FAULTS, rep.minflt)
		TH_LOG("reading through the window took %ld faults",
		       rep.minflt);
	ASSERT_GE(PT_MAX_VMPTE_KIB, rep.vmpte_kib)
		TH_LOG("the window cost the reader %ld kB of page tables",
		       rep.vmpte_kib);
	/* the control: the reader's VmPTE does show private page tables */
	ASSERT_LE(PT_MIN_MEMFD_VMPTE_KIB, rep.memfd_vmpte_kib);
	close(rp[0]);
	close(memfd);
	close(fd);
}

TEST_HARNESS_MAIN
