// SPDX-License-Identifier: GPL-2.0
/*
 * Per-window permissions: every window of a region has the protection it
 * was mapped with, whatever the objects of the region allow, and the
 * hardware enforces it through the window's own top-level (P4D) entry.
 * A read-only window cannot be written, by the process or on its behalf
 * by the kernel (read(2), process_vm_writev(), O_DIRECT, /proc/self/mem,
 * GUP-fast pins through /sys/kernel/debug/gup_test); a window without
 * PROT_EXEC cannot run code; a PROT_NONE window faults on every access,
 * even after /proc/self/mem (FOLL_FORCE) read it; mprotect() of a window
 * fails with EINVAL. Each test first checks that what the writable window
 * writes is what the restricted window reads: the same memory.
 *
 * To be able to catch a window that reaches the region's pages with more
 * rights than its own, every restricted access comes after the region's
 * PTEs were made present and writable (or executable) through another
 * window, and after the restricted window itself was linked by a read.
 */
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <linux/types.h>

#include "mshare_test.h"

/* The fixture's read-write anonymous object. */
#define OBJ_ROFF	SZ_1G
#define OBJ_SIZE	SZ_1M
/* The part of it the kernel-side tests use. */
#define IO_SIZE		SZ_64K
/* A read-write-execute object for the exec test. */
#define CODE_ROFF	(2 * SZ_1G)
#define CODE_SIZE	SZ_64K
#define X86_RET		0xc3	/* the suite is x86-64 only (P4D sharing) */

/* From mm/gup_test.h of the kernel tree. */
#define GUP_TEST_PATH		"/sys/kernel/debug/gup_test"
#define GUP_TEST_MAX_PAGES_TO_DUMP	8
struct gup_test {
	__u64 get_delta_usec;
	__u64 put_delta_usec;
	__u64 addr;
	__u64 size;
	__u32 nr_pages_per_call;
	__u32 gup_flags;
	__u32 test_flags;
	__u32 which_pages[GUP_TEST_MAX_PAGES_TO_DUMP];
};
#define GUP_FAST_BENCHMARK	_IOWR('g', 1, struct gup_test)
#define PIN_FAST_BENCHMARK	_IOWR('g', 2, struct gup_test)
/* As tools/testing/selftests/mm/gup_test.c defines it. */
#define FOLL_WRITE		0x01

FIXTURE(perm) {
	struct mshare_ctx c;
	uint64_t align;
	size_t page;
	int fd;
	char *rw;	/* PROT_READ | PROT_WRITE */
	char *ro;	/* PROT_READ */
	char *extra;	/* a third window some tests map */
};

FIXTURE_SETUP(perm)
{
	self->fd = -1;
	mshare_test_setup(_metadata, &self->c, "perm");
	self->align = self->c.align;
	self->page = self->c.page;
	self->fd = test_region(_metadata, &self->c, "r", self->align);
	test_map_anon(_metadata, self->fd, OBJ_ROFF, OBJ_SIZE);
	self->rw = test_window(_metadata, self->fd, self->align);
	self->ro = mmap(NULL, self->align, PROT_READ, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, self->ro)
		TH_LOG("mmap of a read-only window: %s", strerror(errno));
	ASSERT_NE(self->rw, self->ro);
}

FIXTURE_TEARDOWN(perm)
{
	if (self->rw && self->rw != MAP_FAILED)
		munmap(self->rw, self->align);
	if (self->ro && self->ro != MAP_FAILED)
		munmap(self->ro, self->align);
	if (self->extra && self->extra != MAP_FAILED)
		munmap(self->extra, self->align);
	if (self->fd >= 0)
		close(self->fd);
	mshare_ctx_fini(&self->c);
}

/* A window of the fixture's region with protection prot, in self->extra. */
static char *extra_window(struct __test_metadata *_metadata,
			  FIXTURE_DATA(perm) *self, int prot)
{
	self->extra = mmap(NULL, self->align, prot, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, self->extra)
		TH_LOG("mmap of a window with prot %#x: %s", prot,
		       strerror(errno));
	ASSERT_TRUE(IS_ALIGNED(self->extra, self->align));
	return self->extra;
}

/*
 * Write pattern seed over [OBJ_ROFF, +len) through the writable window
 * (its PTEs become present, writable and dirty) and check that the
 * read-only window reads the same bytes (which links it).
 */
static void fill_rw_check_ro(struct __test_metadata *_metadata,
			     FIXTURE_DATA(perm) *self, size_t len,
			     uint64_t seed)
{
	pattern_fill(self->rw + OBJ_ROFF, len, seed);
	ASSERT_PATTERN(self->ro + OBJ_ROFF, len, seed);
}

/* Through both windows [OBJ_ROFF, +len) still holds pattern seed. */
static void check_both(struct __test_metadata *_metadata,
		       FIXTURE_DATA(perm) *self, size_t len, uint64_t seed)
{
	ASSERT_PATTERN(self->rw + OBJ_ROFF, len, seed);
	ASSERT_PATTERN(self->ro + OBJ_ROFF, len, seed);
}

/* In a child: link the window by a read, then write to it (must die). */
static int child_write_after_read(char *p)
{
	(void)*(volatile uint64_t *)p;
	*(volatile uint64_t *)p = 0x5a5a5a5a5a5a5a5aULL;
	return 0;	/* not reached */
}

TEST_F(perm, read_only_window_write_sigsegv)
{
	char *const targets[] = {
		self->ro + OBJ_ROFF,
		self->ro + OBJ_ROFF + OBJ_SIZE / 2 + 8,
		self->ro + OBJ_ROFF + OBJ_SIZE - 8,
	};
	unsigned int i;
	pid_t pid;

	fill_rw_check_ro(_metadata, self, OBJ_SIZE, 1);
	for (i = 0; i < ARRAY_SIZE(targets); i++) {
		ASSERT_WRITE_SIGNAL(SIGSEGV, targets[i]);
		EXPECT_EQ(targets[i], probe_fault_addr());
	}
	check_both(_metadata, self, OBJ_SIZE, 1);

	/* an uncaught write kills */
	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(child_write_after_read(self->ro + OBJ_ROFF + 64));
	ASSERT_CHILD_KILLED(pid, SIGSEGV);
	check_both(_metadata, self, OBJ_SIZE, 1);

	/* the writable window still writes, and the read-only one sees it */
	fill_rw_check_ro(_metadata, self, OBJ_SIZE, 2);
	ASSERT_WRITE_SIGNAL(SIGSEGV, targets[0]);
	check_both(_metadata, self, OBJ_SIZE, 2);
}

/*
 * Another process, with only a read-only window of its own (the region
 * opened O_RDONLY): it reads what this process wrote and cannot write.
 */
static int other_process_read_only(FIXTURE_DATA(perm) *self)
{
	char *win;
	int fd;

	CHILD_CHECK(munmap(self->rw, self->align) == 0, "munmap: %m");
	CHILD_CHECK(munmap(self->ro, self->align) == 0, "munmap: %m");
	fd = mshare_open(&self->c, "r", O_RDONLY);
	CHILD_CHECK(fd >= 0, "open O_RDONLY: %m");
	win = mmap(NULL, self->align, PROT_READ, MAP_SHARED, fd, 0);
	CHILD_CHECK(win != MAP_FAILED, "read-only window: %m");
	CHILD_CHECK(pattern_check(win + OBJ_ROFF, OBJ_SIZE, 3) == -1, "data");
	CHILD_CHECK(probe_write(win + OBJ_ROFF, 1) == SIGSEGV,
		    "write to the read-only window did not fault");
	CHILD_CHECK(probe_write(win + OBJ_ROFF + OBJ_SIZE - 8, 1) == SIGSEGV,
		    "write to the read-only window did not fault");
	/* without VM_MAYWRITE, mprotect() is refused before the window's hook */
	errno = 0;
	CHILD_CHECK(mprotect(win, self->align, PROT_READ | PROT_WRITE) == -1 &&
		    errno == EACCES, "mprotect: %m");
	CHILD_CHECK(probe_write(win + OBJ_ROFF, 1) == SIGSEGV,
		    "write after mprotect did not fault");
	CHILD_CHECK(pattern_check(win + OBJ_ROFF, OBJ_SIZE, 3) == -1,
		    "data changed");
	return 0;
}

TEST_F(perm, read_only_window_other_process)
{
	pid_t pid;

	fill_rw_check_ro(_metadata, self, OBJ_SIZE, 3);
	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(other_process_read_only(self));
	ASSERT_CHILD_OK(pid);
	check_both(_metadata, self, OBJ_SIZE, 3);
}

static int child_read(const char *p)
{
	(void)*(const volatile uint64_t *)p;
	return 0;	/* not reached */
}

/*
 * PROT_NONE: every access faults, data or hole. /proc/self/mem reads it
 * (GUP with FOLL_FORCE faults the page in through the region's tables),
 * and must not leave the window linked: a direct read still faults.
 */
TEST_F(perm, prot_none_window)
{
	const size_t half = OBJ_SIZE / 2;
	char *none = extra_window(_metadata, self, PROT_NONE);
	char *obj = none + OBJ_ROFF, *buf;
	int memfd;
	pid_t pid;

	/* the first half written, the second never touched */
	fill_rw_check_ro(_metadata, self, half, 4);
	ASSERT_READ_SIGNAL(SIGSEGV, obj);
	EXPECT_EQ(obj, probe_fault_addr());
	ASSERT_WRITE_SIGNAL(SIGSEGV, obj + 8);
	ASSERT_READ_SIGNAL(SIGSEGV, obj + half);
	ASSERT_READ_SIGNAL(SIGSEGV, none);	/* a hole, too */

	buf = malloc(OBJ_SIZE);
	ASSERT_NE(NULL, buf);
	memfd = ASSERT_SYS(open("/proc/self/mem", O_RDWR | O_CLOEXEC));
	memset(buf, 0xff, OBJ_SIZE);
	ASSERT_EQ(0, pread_full(memfd, buf, OBJ_SIZE, (off_t)(uintptr_t)obj))
		TH_LOG("/proc/self/mem read of the PROT_NONE window: %s",
		       strerror(errno));
	ASSERT_PATTERN(buf, half, 4);
	ASSERT_TRUE(is_zero(buf + half, half))
		TH_LOG("the untouched half does not read as zeroes");

	/* a direct access still faults, on both halves */
	ASSERT_READ_SIGNAL(SIGSEGV, obj);
	ASSERT_READ_SIGNAL(SIGSEGV, obj + half);
	ASSERT_READ_SIGNAL(SIGSEGV, obj + OBJ_SIZE - 8);
	ASSERT_WRITE_SIGNAL(SIGSEGV, obj + half);
	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(child_read(obj));
	ASSERT_CHILD_KILLED(pid, SIGSEGV);

	/* FOLL_FORCE does not write to a shared mapping without PROT_WRITE */
	memset(buf, 0xa5, 64);
	EXPECT_EQ(-1, pwrite(memfd, buf, 64, (off_t)(uintptr_t)obj))
		TH_LOG("/proc/self/mem wrote to the PROT_NONE window");
	check_both(_metadata, self, half, 4);
	ASSERT_TRUE(is_zero(self->ro + OBJ_ROFF + half, half));
	close(memfd);
	free(buf);
}

TEST_F(perm, mprotect_window_einval)
{
	const uint64_t align = self->align;
	char *none = extra_window(_metadata, self, PROT_NONE);
	const int rw = PROT_READ | PROT_WRITE;

	fill_rw_check_ro(_metadata, self, OBJ_SIZE, 5);
	EXPECT_ERRNO(EINVAL, mprotect(self->ro, align, rw));
	EXPECT_ERRNO(EINVAL, mprotect(self->ro + OBJ_ROFF, self->page, rw));
	EXPECT_ERRNO(EINVAL, mprotect(self->ro, align, PROT_READ | PROT_EXEC));
	EXPECT_ERRNO(EINVAL, mprotect(self->ro, align, rw | PROT_EXEC));
	EXPECT_ERRNO(EINVAL, mprotect(self->rw, align, PROT_READ));
	EXPECT_ERRNO(EINVAL, mprotect(self->rw, align, rw | PROT_EXEC));
	EXPECT_ERRNO(EINVAL, mprotect(none, align, PROT_READ));
	EXPECT_ERRNO(EINVAL, mprotect(none + OBJ_ROFF, self->page, rw));

	/* nothing changed */
	ASSERT_WRITE_SIGNAL(SIGSEGV, self->ro + OBJ_ROFF);
	ASSERT_READ_SIGNAL(SIGSEGV, none + OBJ_ROFF);
	check_both(_metadata, self, OBJ_SIZE, 5);
	fill_rw_check_ro(_metadata, self, OBJ_SIZE, 6);
}

/* In a child: link the window by a read, then call the code at p. */
static int child_call(char *p)
{
	void (*fn)(void) = (void (*)(void))p;

	(void)*(volatile char *)p;
	fn();
	return 0;
}

/*
 * The object is PROT_READ | PROT_WRITE | PROT_EXEC: code in it runs
 * through a PROT_READ | PROT_EXEC window only. The read-write window
 * wrote the code (so its PTEs are present, and executable for the
 * region), then each child links its window before calling.
 */
TEST_F(perm, exec_needs_exec_window)
{
	char *rx, *code_rw, *code_rx;
	pid_t pid;

	ASSERT_EQ(0, mshare_map(self->fd, CODE_ROFF, CODE_SIZE, 0,
				PROT_READ | PROT_WRITE | PROT_EXEC,
				MAP_SHARED | MAP_FIXED | MAP_ANONYMOUS, -1))
		TH_LOG("read-write-execute object: %s", strerror(errno));
	rx = extra_window(_metadata, self, PROT_READ | PROT_EXEC);
	code_rw = self->rw + CODE_ROFF;
	code_rx = rx + CODE_ROFF;

	memset(code_rw, X86_RET, CODE_SIZE);
	ASSERT_EQ(X86_RET, (unsigned char)code_rx[0]);
	ASSERT_EQ(X86_RET, (unsigned char)self->ro[CODE_ROFF + self->page]);

	/* the control: code runs through the executable window */
	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(child_call(code_rx));
	ASSERT_CHILD_OK(pid);
	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(child_call(code_rx + self->page));
	ASSERT_CHILD_OK(pid);

	/* not through the read-write one */
	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(child_call(code_rw));
	ASSERT_CHILD_KILLED(pid, SIGSEGV);

	/* nor through the read-only one */
	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(child_call(self->ro + CODE_ROFF + self->page));
	ASSERT_CHILD_KILLED(pid, SIGSEGV);

	/* the executable window is not writable */
	ASSERT_WRITE_SIGNAL(SIGSEGV, code_rx);
	ASSERT_EQ(X86_RET, (unsigned char)code_rw[0]);

	/* and in this process, where the executable window is linked */
	((void (*)(void))code_rx)();
}

/* read(2) from a pipe and from a file into the read-only window. */
TEST_F(perm, read_into_read_only_window_efault)
{
	char *dst = self->ro + OBJ_ROFF, *src;
	int pfd[2], filefd;

	fill_rw_check_ro(_metadata, self, OBJ_SIZE, 7);
	src = malloc(IO_SIZE);
	ASSERT_NE(NULL, src);
	pattern_fill(src, IO_SIZE, 8);

	ASSERT_EQ(0, pipe(pfd));
	ASSERT_EQ((ssize_t)self->page, write(pfd[1], src, self->page));
	ASSERT_ERRNO(EFAULT, read(pfd[0], dst, self->page));
	check_both(_metadata, self, OBJ_SIZE, 7);
	/* the control: the same read into the writable window works */
	ASSERT_EQ(0, fcntl(pfd[0], F_SETFL, O_NONBLOCK));
	ASSERT_EQ((ssize_t)self->page, write(pfd[1], src, self->page));
	ASSERT_LT(0, read(pfd[0], self->rw + OBJ_ROFF, self->page));
	ASSERT_EQ(0, memcmp(self->ro + OBJ_ROFF, src, 8));
	close(pfd[0]);
	close(pfd[1]);

	fill_rw_check_ro(_metadata, self, OBJ_SIZE, 7);
	filefd = ASSERT_SYS(memfd_sized(IO_SIZE));
	ASSERT_EQ(0, pwrite_full(filefd, src, IO_SIZE, 0));
	ASSERT_ERRNO(EFAULT, pread(filefd, dst, IO_SIZE, 0));
	check_both(_metadata, self, OBJ_SIZE, 7);
	ASSERT_EQ(IO_SIZE, pread(filefd, self->rw + OBJ_ROFF, IO_SIZE, 0));
	ASSERT_PATTERN(self->ro + OBJ_ROFF, IO_SIZE, 8);
	close(filefd);
	free(src);
}

static ssize_t self_vm_write(void *dst, const void *src, size_t len)
{
	struct iovec local = { .iov_base = (void *)src, .iov_len = len };
	struct iovec remote = { .iov_base = dst, .iov_len = len };

	return process_vm_writev(getpid(), &local, 1, &remote, 1, 0);
}

TEST_F(perm, process_vm_writev_read_only_efault)
{
	char *src;

	fill_rw_check_ro(_metadata, self, OBJ_SIZE, 9);
	src = malloc(IO_SIZE);
	ASSERT_NE(NULL, src);
	pattern_fill(src, IO_SIZE, 10);

	ASSERT_ERRNO(EFAULT, self_vm_write(self->ro + OBJ_ROFF, src, IO_SIZE));
	check_both(_metadata, self, OBJ_SIZE, 9);
	/* the control: into the writable window */
	ASSERT_EQ((ssize_t)IO_SIZE,
		  self_vm_write(self->rw + OBJ_ROFF, src, IO_SIZE))
		TH_LOG("process_vm_writev into the writable window: %s",
		       strerror(errno));
	ASSERT_PATTERN(self->ro + OBJ_ROFF, IO_SIZE, 10);
	free(src);
}

/*
 * An O_DIRECT fd on an IO_SIZE file holding pattern seed, on a disk
 * filesystem; -1 with the reason in why if there is none.
 */
static int odirect_source(uint64_t seed, char *why, size_t len)
{
	char dir[256], path[320], tried[256];
	int fd;

	if (find_disk_dir(true, dir, sizeof(dir), tried, sizeof(tried))) {
		snprintf(why, len,
			 "no filesystem with O_DIRECT I/O (tmpfs/ramfs excluded); tried: %s",
			 tried[0] ? tried : "none");
		return -1;
	}
	snprintf(path, sizeof(path), "%s/.mshare-perm.%d", dir, getpid());
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	if (fd < 0 || fd_pattern_fill(fd, 0, IO_SIZE, seed) || fsync(fd)) {
		snprintf(why, len, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
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

TEST_F(perm, odirect_read_into_read_only_efault)
{
	char why[768];
	int dfd;

	dfd = odirect_source(12, why, sizeof(why));
	if (dfd < 0)
		SKIP(return, "%s", why);
	fill_rw_check_ro(_metadata, self, OBJ_SIZE, 11);
	ASSERT_ERRNO(EFAULT, pread(dfd, self->ro + OBJ_ROFF, IO_SIZE, 0));
	check_both(_metadata, self, OBJ_SIZE, 11);
	/* the control: into the writable window */
	ASSERT_EQ((ssize_t)IO_SIZE,
		  pread(dfd, self->rw + OBJ_ROFF, IO_SIZE, 0))
		TH_LOG("O_DIRECT read into the writable window: %s",
		       strerror(errno));
	ASSERT_PATTERN(self->ro + OBJ_ROFF, IO_SIZE, 12);
	close(dfd);
}

/*
 * /proc/self/mem writes with FOLL_FORCE, which never writes to a shared
 * mapping without PROT_WRITE: the write fails (EIO from mem_rw(), or
 * EFAULT) and the data stays.
 */
TEST_F(perm, proc_mem_write_read_only_fails)
{
	char *dst = self->ro + OBJ_ROFF;
	char buf[64], back[64];
	ssize_t n;
	int memfd, err;

	fill_rw_check_ro(_metadata, self, OBJ_SIZE, 13);
	memfd = ASSERT_SYS(open("/proc/self/mem", O_RDWR | O_CLOEXEC));
	memset(buf, 0xa5, sizeof(buf));
	errno = 0;
	n = pwrite(memfd, buf, sizeof(buf), (off_t)(uintptr_t)dst);
	err = errno;
	ASSERT_EQ(-1, n)
		TH_LOG("/proc/self/mem wrote %zd bytes to the read-only window",
		       n);
	ASSERT_TRUE(err == EIO || err == EFAULT)
		TH_LOG("errno %s, expected EIO or EFAULT", errname(err));
	check_both(_metadata, self, OBJ_SIZE, 13);

	/* reading through it works */
	ASSERT_EQ((ssize_t)sizeof(back),
		  pread(memfd, back, sizeof(back), (off_t)(uintptr_t)dst));
	ASSERT_PATTERN(back, sizeof(back), 13);
	/* the control: writing through the writable window works */
	ASSERT_EQ((ssize_t)sizeof(buf),
		  pwrite(memfd, buf, sizeof(buf),
			 (off_t)(uintptr_t)(self->rw + OBJ_ROFF)))
		TH_LOG("/proc/self/mem write to the writable window: %s",
		       strerror(errno));
	ASSERT_EQ(0, memcmp(dst, buf, sizeof(buf)));
	close(memfd);
}

/* Bytes pinned by a gup_test fast benchmark of one page per call. */
static uint64_t gup_fast(struct __test_metadata *_metadata, int gfd,
			 unsigned long cmd, const char *addr, size_t len,
			 unsigned int gup_flags)
{
	struct gup_test gup = {
		.addr = (uintptr_t)addr,
		.size = len,
		.nr_pages_per_call = 1,	/* .size comes back exact */
		.gup_flags = gup_flags,
	};

	ASSERT_EQ(0, ioctl(gfd, cmd, &gup))
		TH_LOG("gup_test ioctl %#lx: %s", cmd, strerror(errno));
	return gup.size;
}

/*
 * GUP-fast walks the page tables without the VMA: it must check the
 * window's P4D entry, since the region's PTEs below it are writable.
 * The pages are present (written through the writable window, read
 * through the read-only one) so that the fast path, not the slow one,
 * decides. gup_test reports in .size how far it got.
 */
TEST_F(perm, gup_fast_write_read_only)
{
	const struct {
		unsigned long cmd;
		const char *name;
	} cmds[] = {
		{ GUP_FAST_BENCHMARK, "GUP_FAST_BENCHMARK" },
		{ PIN_FAST_BENCHMARK, "PIN_FAST_BENCHMARK" },
	};
	char *ro = self->ro + OBJ_ROFF, *rw = self->rw + OBJ_ROFF;
	unsigned int i;
	int gfd;

	gfd = open(GUP_TEST_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, gfd)
		TH_LOG("%s: %s: the test kernel has CONFIG_GUP_TEST=y and the guest mounts debugfs",
		       GUP_TEST_PATH, strerror(errno));

	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		fill_rw_check_ro(_metadata, self, IO_SIZE, 14 + i);
		/* the controls */
		EXPECT_EQ(IO_SIZE, gup_fast(_metadata, gfd, cmds[i].cmd, rw,
					    IO_SIZE, FOLL_WRITE))
			TH_LOG("%s FOLL_WRITE on the writable window",
			       cmds[i].name);
		EXPECT_EQ(IO_SIZE, gup_fast(_metadata, gfd, cmds[i].cmd, ro,
					    IO_SIZE, 0))
			TH_LOG("%s without FOLL_WRITE on the read-only window",
			       cmds[i].name);
		/* the PTEs are writable now, for sure */
		fill_rw_check_ro(_metadata, self, IO_SIZE, 16 + i);
		EXPECT_EQ(0, gup_fast(_metadata, gfd, cmds[i].cmd, ro,
				      IO_SIZE, FOLL_WRITE))
			TH_LOG("%s FOLL_WRITE on the read-only window",
			       cmds[i].name);
		check_both(_metadata, self, IO_SIZE, 16 + i);
	}
	close(gfd);
}

TEST_HARNESS_MAIN
