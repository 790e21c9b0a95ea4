// SPDX-License-Identifier: GPL-2.0
/*
 * Sharing: processes (and windows of one process) at different addresses
 * see the same data; holes and read-only objects fault with SIGSEGV; one
 * sharer's munmap or exit leaves the others working.
 */
#include <fcntl.h>

#include "mshare_test.h"

/* The fixture's anonymous object, away from both ends of the region. */
#define OBJ_ROFF	SZ_1G
#define OBJ_SIZE	(4 * SZ_1M)

FIXTURE(share) {
	struct mshare_ctx c;
	uint64_t align;
	int fd;
	char *win;
	char *obj;		/* win + OBJ_ROFF */
};

FIXTURE_SETUP(share)
{
	self->fd = -1;
	mshare_test_setup(_metadata, &self->c, "share");
	self->align = self->c.align;
	self->fd = test_region(_metadata, &self->c, "r", self->align);
	test_map_anon(_metadata, self->fd, OBJ_ROFF, OBJ_SIZE);
	self->win = test_window(_metadata, self->fd, self->align);
	self->obj = self->win + OBJ_ROFF;
}

FIXTURE_TEARDOWN(share)
{
	if (self->win)
		munmap(self->win, self->align);
	if (self->fd >= 0)
		close(self->fd);
	mshare_ctx_fini(&self->c);
}

/* In a child: map the region at a fixed address unlike the parent's. */
static char *child_window(const struct mshare_ctx *c, uint64_t align,
			  const char *parent_win)
{
	char *at = reserve_aligned(align, align), *win;
	int fd;

	CHILD_CHECK(at && at != parent_win, "no other aligned address");
	fd = mshare_open(c, "r", O_RDWR);
	CHILD_CHECK(fd >= 0, "open: %m");
	win = mshare_window(fd, align, at, MAP_FIXED);
	CHILD_CHECK(win == at, "window at %p: %p %m", at, win);
	close(fd);
	return win;
}

static int other_address(FIXTURE_DATA(share) *self)
{
	char *win = child_window(&self->c, self->align, self->win);

	/* drop the inherited window: only the child's own one is left */
	CHILD_CHECK(munmap(self->win, self->align) == 0, "%m");
	CHILD_CHECK(pattern_check(win + OBJ_ROFF, OBJ_SIZE, 1) == -1, "data");
	pattern_fill(win + OBJ_ROFF, SZ_1M, 2);
	return 0;
}

TEST_F(share, other_process_other_address)
{
	pid_t pid;

	pattern_fill(self->obj, OBJ_SIZE, 1);
	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(other_address(self));
	ASSERT_CHILD_OK(pid);
	ASSERT_PATTERN(self->obj, SZ_1M, 2);
	ASSERT_PATTERN_AT(self->obj + SZ_1M, OBJ_SIZE - SZ_1M, 1, SZ_1M);
}

TEST_F(share, two_windows_in_one_process)
{
	char *win2 = test_window(_metadata, self->fd, self->align);

	ASSERT_NE(self->win, win2);
	pattern_fill(self->obj, OBJ_SIZE, 3);
	ASSERT_PATTERN(win2 + OBJ_ROFF, OBJ_SIZE, 3);
	pattern_fill(win2 + OBJ_ROFF, OBJ_SIZE, 4);
	ASSERT_PATTERN(self->obj, OBJ_SIZE, 4);

	/* one window going away leaves the other */
	ASSERT_EQ(0, munmap(win2, self->align));
	ASSERT_PATTERN(self->obj, OBJ_SIZE, 4);
	pattern_fill(self->obj, OBJ_SIZE, 5);
	ASSERT_PATTERN(self->obj, OBJ_SIZE, 5);
}

/* A sharer that unmaps (or just exits) after checking seed and writing. */
static int sharer(FIXTURE_DATA(share) *self, uint64_t seed, bool do_munmap)
{
	char *win = child_window(&self->c, self->align, self->win);

	CHILD_CHECK(pattern_check(win + OBJ_ROFF, OBJ_SIZE, seed) == -1,
		    "data %lu", (unsigned long)seed);
	pattern_fill(win + OBJ_ROFF, OBJ_SIZE, seed + 1);
	if (do_munmap)
		CHILD_CHECK(munmap(win, self->align) == 0, "munmap: %m");
	return 0;
}

TEST_F(share, sharer_munmap_or_exit_leaves_others)
{
	uint64_t seed = 10;
	pid_t pid;
	int i;

	pattern_fill(self->obj, OBJ_SIZE, seed);
	for (i = 0; i < 4; i++) {
		pid = ASSERT_SYS(child_fork());
		if (pid == 0)
			_exit(sharer(self, seed, i % 2 == 0));
		ASSERT_CHILD_OK(pid);
		/* the parent, a sharer itself, goes on reading and writing */
		ASSERT_PATTERN(self->obj, OBJ_SIZE, seed + 1);
		seed += 2;
		pattern_fill(self->obj, OBJ_SIZE, seed);
		ASSERT_PATTERN(self->obj, OBJ_SIZE, seed);
	}
}

TEST_F(share, hole_access_sigsegv)
{
	char *const holes[] = {
		self->win,				/* first byte */
		self->obj - 8,				/* just below */
		self->obj + OBJ_SIZE,			/* just above */
		self->win + self->align / 2,
		self->win + self->align - 8,		/* last word */
	};
	unsigned int i;
	pid_t pid;

	for (i = 0; i < ARRAY_SIZE(holes); i++) {
		ASSERT_READ_SIGNAL(SIGSEGV, holes[i]);
		EXPECT_EQ(holes[i], probe_fault_addr());
		ASSERT_WRITE_SIGNAL(SIGSEGV, holes[i]);
	}
	ASSERT_READ_SIGNAL(0, self->obj);

	/* and an uncaught one kills */
	pid = ASSERT_SYS(child_fork());
	if (pid == 0) {
		*(volatile char *)(self->obj + OBJ_SIZE) = 1;
		_exit(0);
	}
	ASSERT_CHILD_KILLED(pid, SIGSEGV);
}

static int write_read_only(char *win, uint64_t roff)
{
	CHILD_CHECK(pattern_check(win + roff, SZ_64K, 6) == -1, "data");
	*(volatile char *)(win + roff) = 1;
	return 0;	/* not reached */
}

TEST_F(share, read_only_object_write_sigsegv)
{
	const uint64_t roff = 2 * SZ_1G;
	char *p = self->win + roff;
	pid_t pid;
	int memfd;

	memfd = ASSERT_SYS(memfd_sized(SZ_64K));
	ASSERT_EQ(0, fd_pattern_fill(memfd, 0, SZ_64K, 6));
	ASSERT_EQ(0, mshare_map(self->fd, roff, SZ_64K, 0, PROT_READ,
				MAP_SHARED | MAP_FIXED, memfd));
	ASSERT_PATTERN(p, SZ_64K, 6);
	ASSERT_WRITE_SIGNAL(SIGSEGV, p);
	EXPECT_EQ(p, probe_fault_addr());
	ASSERT_WRITE_SIGNAL(SIGSEGV, p + SZ_64K - 8);

	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(write_read_only(self->win, roff));
	ASSERT_CHILD_KILLED(pid, SIGSEGV);

	/* the object did not change; it stays coherent with its file */
	ASSERT_FD_PATTERN(memfd, 0, SZ_64K, 6);
	ASSERT_EQ(0, fd_pattern_fill(memfd, 0, SZ_64K, 7));
	ASSERT_PATTERN(p, SZ_64K, 7);
	close(memfd);
}

TEST_HARNESS_MAIN
