// SPDX-License-Identifier: GPL-2.0
/*
 * get_user_pages() users on windows: O_DIRECT reads into a window (pages
 * populated or not yet touched) and process_vm_readv() of another
 * process's window (data, and holes).
 */
#include <fcntl.h>
#include <sys/uio.h>

#include "mshare_test.h"

#define OBJ_ROFF	SZ_1G
#define OBJ_SIZE	SZ_1M
#define DIO_SIZE	(256 * 1024UL)

FIXTURE(gup) {
	struct mshare_ctx c;
	uint64_t align;
	int fd;
	int memfd;
	char *win;
	char *win2;	/* a second window: where the data must show too */
};

FIXTURE_VARIANT(gup) {
	bool memfd;
};

FIXTURE_VARIANT_ADD(gup, anon) { .memfd = false };
FIXTURE_VARIANT_ADD(gup, memfd) { .memfd = true };

FIXTURE_SETUP(gup)
{
	self->fd = self->memfd = -1;
	mshare_test_setup(_metadata, &self->c, "gup");
	self->align = self->c.align;
	self->fd = test_region(_metadata, &self->c, "r", self->align);
	if (variant->memfd) {
		self->memfd = ASSERT_SYS(memfd_sized(OBJ_SIZE));
		test_map_fd(_metadata, self->fd, OBJ_ROFF, OBJ_SIZE,
			    self->memfd, 0);
	} else {
		test_map_anon(_metadata, self->fd, OBJ_ROFF, OBJ_SIZE);
	}
	self->win = test_window(_metadata, self->fd, self->align);
	self->win2 = test_window(_metadata, self->fd, self->align);
}

FIXTURE_TEARDOWN(gup)
{
	if (self->win)
		munmap(self->win, self->align);
	if (self->win2)
		munmap(self->win2, self->align);
	if (self->memfd >= 0)
		close(self->memfd);
	if (self->fd >= 0)
		close(self->fd);
	mshare_ctx_fini(&self->c);
}

/*
 * An O_DIRECT fd on a DIO_SIZE file holding pattern seed, on a disk
 * filesystem; -1 with the reason in why if there is none.
 */
static int odirect_source(uint64_t seed, char *why, size_t len)
{
	char dir[256], path[320], tried[256];
	int fd;

	if (find_disk_dir(true, dir, sizeof(dir), tried, sizeof(tried))) {
		snprintf(why, len,
			 "no filesystem with O_DIRECT I/O (tmpfs/ramfs excluded: no GUP); tried: %s",
			 tried[0] ? tried : "none");
		return -1;
	}
	snprintf(path, sizeof(path), "%s/.mshare-odirect.%d", dir, getpid());
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	if (fd < 0 || fd_pattern_fill(fd, 0, DIO_SIZE, seed) || fsync(fd)) {
		snprintf(why, len, "%s: %s", path, strerror(errno));
		unlink(path);
		return -1;
	}
	close(fd);
	fd = open(path, O_RDONLY | O_DIRECT);
	if (fd < 0)
		snprintf(why, len, "%s: O_DIRECT: %s", path, strerror(errno));
	unlink(path);
	return fd;
}

static void odirect_read(struct __test_metadata *_metadata,
			 FIXTURE_DATA(gup) *self, bool populate)
{
	char *dst = self->win + OBJ_ROFF;
	char why[768];
	ssize_t n;
	int dfd;

	dfd = odirect_source(80, why, sizeof(why));
	if (dfd < 0)
		SKIP(return, "%s", why);
	if (populate)
		memset(dst, 0x5a, DIO_SIZE);
	n = pread(dfd, dst, DIO_SIZE, 0);
	ASSERT_EQ((ssize_t)DIO_SIZE, n) TH_LOG("O_DIRECT read: %s",
					       strerror(errno));
	ASSERT_PATTERN(dst, DIO_SIZE, 80);
	ASSERT_PATTERN(self->win2 + OBJ_ROFF, DIO_SIZE, 80);
	if (self->memfd >= 0) {
		ASSERT_FD_PATTERN(self->memfd, 0, DIO_SIZE, 80);
	}
	close(dfd);
}

TEST_F(gup, odirect_read_untouched)
{
	odirect_read(_metadata, self, false);
}

TEST_F(gup, odirect_read_populated)
{
	odirect_read(_metadata, self, true);
}

/*
 * A child with a window of its own, never touched by it; returns its
 * pid and the window's address. The child leaves when g opens.
 */
static pid_t remote_sharer(struct __test_metadata *_metadata,
			   FIXTURE_DATA(gup) *self, struct gate *g,
			   char **remote)
{
	int pfd[2];
	pid_t pid;

	ASSERT_EQ(0, gate_init(g));
	ASSERT_EQ(0, pipe(pfd));
	pid = ASSERT_SYS(child_fork());
	if (pid == 0) {
		int fd = mshare_open(&self->c, "r", O_RDWR);
		char *win;

		gate_child(g);
		CHILD_CHECK(fd >= 0, "open: %m");
		/* the inherited windows stay: this one is elsewhere */
		win = mshare_window(fd, self->align, NULL, 0);
		CHILD_CHECK(win != MAP_FAILED, "window: %m");
		CHILD_CHECK(msg_send(pfd[1], &win, sizeof(win)) == 0, "%m");
		CHILD_CHECK(gate_wait(g) == 0, "gate: %m");
		_exit(0);
	}
	close(pfd[1]);
	ASSERT_EQ(0, msg_recv(pfd[0], remote, sizeof(*remote), 60000))
		TH_LOG("no window address from the child: %s",
		       strerror(errno));
	close(pfd[0]);
	return pid;
}

static ssize_t remote_read(pid_t pid, void *dst, const char *src, size_t len)
{
	struct iovec local = { .iov_base = dst, .iov_len = len };
	struct iovec rem = { .iov_base = (void *)src, .iov_len = len };

	return process_vm_readv(pid, &local, 1, &rem, 1, 0);
}

TEST_F(gup, process_vm_readv_data)
{
	const size_t half = OBJ_SIZE / 2;
	char *remote, *buf;
	struct gate g;
	ssize_t n;
	pid_t pid;

	/* the first half written, the second never touched by anyone */
	pattern_fill(self->win + OBJ_ROFF, half, 81);
	pid = remote_sharer(_metadata, self, &g, &remote);
	ASSERT_NE(remote, self->win);

	buf = malloc(OBJ_SIZE);
	ASSERT_NE(NULL, buf);
	memset(buf, 0xff, OBJ_SIZE);
	n = remote_read(pid, buf, remote + OBJ_ROFF, OBJ_SIZE);
	ASSERT_EQ((ssize_t)OBJ_SIZE, n) TH_LOG("%s", strerror(errno));
	ASSERT_PATTERN(buf, half, 81);
	ASSERT_TRUE(is_zero(buf + half, half))
		TH_LOG("the untouched half does not read as zeroes");
	gate_open(&g);
	ASSERT_CHILD_OK(pid);
	gate_fini(&g);
	free(buf);
}

TEST_F(gup, process_vm_readv_hole)
{
	const size_t page = self->c.page;
	char *remote, *buf;
	struct gate g;
	ssize_t n;
	pid_t pid;

	pattern_fill(self->win + OBJ_ROFF, OBJ_SIZE, 82);
	pid = remote_sharer(_metadata, self, &g, &remote);
	buf = malloc(SZ_64K);
	ASSERT_NE(NULL, buf);

	/* all hole */
	EXPECT_ERRNO(EFAULT, remote_read(pid, buf, remote, SZ_64K));
	EXPECT_ERRNO(EFAULT, remote_read(pid, buf, remote + OBJ_ROFF + OBJ_SIZE,
					 page));
	/* the object's last page, then a hole: a short read */
	n = remote_read(pid, buf, remote + OBJ_ROFF + OBJ_SIZE - page, 2 * page);
	ASSERT_EQ((ssize_t)page, n) TH_LOG("read across the end: %zd (%s)",
					   n, strerror(errno));
	ASSERT_PATTERN_AT(buf, page, 82, OBJ_SIZE - page);

	gate_open(&g);
	ASSERT_CHILD_OK(pid);
	gate_fini(&g);
	free(buf);
}

TEST_HARNESS_MAIN
