// SPDX-License-Identifier: GPL-2.0
/*
 * mshare_create(): its flags (0 and O_CLOEXEC, anything else EINVAL), what
 * fstat() says of a region (a regular file) and the alignment its fdinfo
 * shows (mshare-align, the alignment of /sys/fs/mshare/mshare_info; not
 * st_blksize, which cannot hold 512 GiB), the sizing rules of ftruncate()
 * and fallocate() (once, a non-zero multiple of the alignment, EFBIG when
 * too large, only through the owner file: the file mshare_create()
 * returned, in whatever process holds it, forked or sent over a socket;
 * EPERM through a reopened descriptor), the fdinfo lines of a new region
 * (mshare-owned, mshare-owner-fd; no mshare-owner), reopening through
 * /proc/self/fd (only by a process holding the owner file, O_RDONLY making
 * a read-only descriptor of the same region; the new file owns nothing),
 * and that such a region has no name in /sys/fs/mshare.
 */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "mshare_test.h"

#define RECV_TIMEOUT_MS	(60 * 1000)

FIXTURE(create) {
	struct mshare_ctx c;
	uint64_t align;
};

FIXTURE_SETUP(create)
{
	mshare_test_setup(_metadata, &self->c, "create");
	self->align = self->c.align;
}

FIXTURE_TEARDOWN(create)
{
	mshare_ctx_fini(&self->c);
}

/* ret is a failure with errno err (for children: no harness macros). */
static bool failed_with(long ret, int err)
{
	return ret == -1 && errno == err;
}

static int accmode(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : (fl & O_ACCMODE);
}

static long long size_of(struct __test_metadata *_metadata, int fd)
{
	struct stat st;

	ASSERT_EQ(0, fstat(fd, &st)) TH_LOG("fstat: %s", strerror(errno));
	return st.st_size;
}

/* Both the inode size and fdinfo's mshare-size are size. */
#define ASSERT_REGION_SIZE(_fd, _size) do {				\
	ASSERT_EQ((long long)(_size), size_of(_metadata, _fd));		\
	ASSERT_EQ((long long)(_size),					\
		  test_fdinfo(_metadata, 0, _fd, "mshare-size"));	\
} while (0)

TEST_F(create, flags)
{
	const unsigned int bad[] = {
		O_NONBLOCK, O_RDWR, O_WRONLY, O_CREAT, O_TRUNC, O_DIRECT,
		O_CLOEXEC | O_NONBLOCK, O_CLOEXEC | O_RDWR, 0x80000000u,
		~0u, ~(unsigned int)O_CLOEXEC,
	};
	struct stat st0, st1;
	int fd0, fd1, lowest, after;
	unsigned int i;

	fd0 = ASSERT_SYS(sys_mshare_create(0));
	ASSERT_EQ(0, fcntl(fd0, F_GETFD) & FD_CLOEXEC);
	ASSERT_EQ(O_RDWR, accmode(fd0));

	fd1 = ASSERT_SYS(sys_mshare_create(O_CLOEXEC));
	ASSERT_EQ(FD_CLOEXEC, fcntl(fd1, F_GETFD) & FD_CLOEXEC);
	ASSERT_EQ(O_RDWR, accmode(fd1));

	/* two regions, not the same one twice */
	ASSERT_EQ(0, fstat(fd0, &st0));
	ASSERT_EQ(0, fstat(fd1, &st1));
	ASSERT_NE(st0.st_ino, st1.st_ino);

	lowest = ASSERT_SYS(fcntl(fd0, F_DUPFD, 0));
	close(lowest);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_ERRNO(EINVAL, sys_mshare_create(bad[i]))
			TH_LOG("  flags %#x", bad[i]);
	}
	/* the failed calls left no descriptor behind */
	after = ASSERT_SYS(fcntl(fd0, F_DUPFD, 0));
	close(after);
	ASSERT_EQ(lowest, after);
	close(fd0);
	close(fd1);
}

TEST_F(create, fstat_regular_file_fdinfo_alignment)
{
	struct stat st;
	int fd;

	fd = ASSERT_SYS(sys_mshare_create(O_CLOEXEC));
	ASSERT_EQ(0, fstat(fd, &st));
	ASSERT_TRUE(S_ISREG(st.st_mode))
		TH_LOG("st_mode %#o is not a regular file", st.st_mode);
	/* self->align was read from mshare_info */
	ASSERT_EQ((long long)self->align,
		  test_fdinfo(_metadata, 0, fd, "mshare-align"));
#ifdef __x86_64__
	ASSERT_EQ(1ULL << 39, self->align)
		TH_LOG("the alignment is P4D_SIZE, 512 GiB, on x86-64");
#endif
	ASSERT_EQ(0, st.st_size);

	ASSERT_EQ(0, ftruncate(fd, 2 * self->align));
	ASSERT_EQ(0, fstat(fd, &st));
	ASSERT_EQ((off_t)(2 * self->align), st.st_size);
	ASSERT_TRUE(S_ISREG(st.st_mode));
	/* sizing does not change the alignment */
	ASSERT_EQ((long long)self->align,
		  test_fdinfo(_metadata, 0, fd, "mshare-align"));
	close(fd);
}

TEST_F(create, ftruncate_sizing)
{
	const uint64_t a = self->align, page = self->c.page;
	const int64_t bad[] = {
		0, page, a / 2, a - page, a + page, a + a / 2, -(int64_t)a,
	};
	const int64_t huge[] = { 1LL << 56, 1LL << 62 };
	const int64_t again[] = { a, 2 * a, 0, page };
	unsigned int i;
	int fd, fd2;

	/* a too large size must fail with EFBIG, not kill the test */
	signal(SIGXFSZ, SIG_IGN);

	fd = ASSERT_SYS(sys_mshare_create(O_CLOEXEC));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_ERRNO(EINVAL, ftruncate(fd, bad[i]))
			TH_LOG("  size %#llx", (long long)bad[i]);
	}
	ASSERT_REGION_SIZE(fd, 0);

	fd2 = ASSERT_SYS(sys_mshare_create(O_CLOEXEC));
	for (i = 0; i < ARRAY_SIZE(huge); i++) {
		EXPECT_ERRNO(EFBIG, ftruncate(fd2, huge[i]))
			TH_LOG("  size %#llx", (long long)huge[i]);
	}
	ASSERT_REGION_SIZE(fd2, 0);
	/* the failures did not use up the one sizing */
	ASSERT_EQ(0, ftruncate(fd2, 3 * a));
	ASSERT_REGION_SIZE(fd2, 3 * a);
	close(fd2);

	ASSERT_EQ(0, ftruncate(fd, a));
	ASSERT_REGION_SIZE(fd, a);
	for (i = 0; i < ARRAY_SIZE(again); i++) {
		EXPECT_ERRNO(EINVAL, ftruncate(fd, again[i]))
			TH_LOG("  second sizing to %#llx", (long long)again[i]);
	}
	EXPECT_ERRNO(EINVAL, fallocate(fd, 0, 0, 2 * a));
	ASSERT_REGION_SIZE(fd, a);
	close(fd);
}

TEST_F(create, fallocate_sizing)
{
	const uint64_t a = self->align, page = self->c.page;
	int fd, fd2;

	signal(SIGXFSZ, SIG_IGN);

	fd = ASSERT_SYS(sys_mshare_create(O_CLOEXEC));
	EXPECT_ERRNO(EINVAL, fallocate(fd, 0, 0, page));
	EXPECT_ERRNO(EINVAL, fallocate(fd, 0, 0, a / 2));
	EXPECT_ERRNO(EINVAL, fallocate(fd, 0, 0, a + page));
	EXPECT_ERRNO(EINVAL, fallocate(fd, 0, 0, 0));
	EXPECT_ERRNO(EINVAL, fallocate(fd, 0, a, a));	/* offset != 0 */
	/* only plain allocation sizes a region */
	EXPECT_EQ(-1, fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, a))
		TH_LOG("FALLOC_FL_KEEP_SIZE worked");
	EXPECT_EQ(-1, fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				0, a))
		TH_LOG("FALLOC_FL_PUNCH_HOLE worked");
	ASSERT_REGION_SIZE(fd, 0);

	fd2 = ASSERT_SYS(sys_mshare_create(O_CLOEXEC));
	EXPECT_ERRNO(EFBIG, fallocate(fd2, 0, 0, 1LL << 62));
	ASSERT_REGION_SIZE(fd2, 0);
	close(fd2);

	ASSERT_EQ(0, fallocate(fd, 0, 0, 2 * a))
		TH_LOG("fallocate: %s", strerror(errno));
	ASSERT_REGION_SIZE(fd, 2 * a);
	EXPECT_ERRNO(EINVAL, fallocate(fd, 0, 0, 2 * a));
	EXPECT_ERRNO(EINVAL, fallocate(fd, 0, 0, 4 * a));
	EXPECT_ERRNO(EINVAL, ftruncate(fd, 4 * a));
	ASSERT_REGION_SIZE(fd, 2 * a);
	close(fd);
}

/* A child that inherited the owner file sees it as the owner file too. */
static int child_fdinfo(int fd, uint64_t size)
{
	long long val;

	CHILD_CHECK(!fdinfo_has(0, fd, "mshare-owner"), "mshare-owner line");
	CHILD_CHECK(fdinfo_get(0, fd, "mshare-owned", &val) == 0, "%m");
	CHILD_CHECK(val == 1, "mshare-owned %lld", val);
	CHILD_CHECK(fdinfo_get(0, fd, "mshare-owner-fd", &val) == 0, "%m");
	CHILD_CHECK(val == 1, "mshare-owner-fd %lld", val);
	CHILD_CHECK(fdinfo_get(0, fd, "mshare-size", &val) == 0, "%m");
	CHILD_CHECK(val == (long long)size, "size %lld", val);
	return 0;
}

TEST_F(create, fdinfo_of_new_region)
{
	int fd = ASSERT_SYS(sys_mshare_create(O_CLOEXEC));
	pid_t pid;

	ASSERT_EQ(0, test_fdinfo(_metadata, 0, fd, "mshare-size"));
	ASSERT_EQ((long long)self->align,
		  test_fdinfo(_metadata, 0, fd, "mshare-align"));
	/* the pid of an owner is no more: a file owns the region */
	ASSERT_FALSE(fdinfo_has(0, fd, "mshare-owner"))
		TH_LOG("fdinfo still has an mshare-owner line");
	ASSERT_EQ(1, test_fdinfo(_metadata, 0, fd, "mshare-owned"));
	ASSERT_EQ(1, test_fdinfo(_metadata, 0, fd, "mshare-owner-fd"));
	ASSERT_EQ(0, test_fdinfo(_metadata, 0, fd, "mshare-attached"));
	ASSERT_EQ(0, test_fdinfo(_metadata, 0, fd, "mshare-windows"));
	ASSERT_EQ(0, test_fdinfo(_metadata, 0, fd, "mshare-rss"));
	ASSERT_LE(0, test_fdinfo(_metadata, 0, fd, "mshare-pgtables"));

	ASSERT_EQ(0, ftruncate(fd, self->align));
	ASSERT_EQ((long long)self->align,
		  test_fdinfo(_metadata, 0, fd, "mshare-size"));
	ASSERT_EQ(1, test_fdinfo(_metadata, 0, fd, "mshare-owned"));
	ASSERT_EQ(1, test_fdinfo(_metadata, 0, fd, "mshare-owner-fd"));
	ASSERT_EQ(0, test_fdinfo(_metadata, 0, fd, "mshare-attached"));
	ASSERT_EQ(0, test_fdinfo(_metadata, 0, fd, "mshare-rss"));

	/* a child that inherited the descriptor holds the owner file too */
	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(child_fdinfo(fd, self->align));
	ASSERT_CHILD_OK(pid);
	close(fd);
}

/*
 * Sizing by another process, which got a descriptor of a new, unsized
 * region by fork() or over a unix socket (a process from before the
 * region): the owner file itself makes it an owner, a reopened read-write
 * descriptor gets EPERM, a read-only one is refused by the VFS. Only a
 * holder of the owner file may reopen through /proc/self/fd.
 */
enum give { GIVE_OWNER, GIVE_RW, GIVE_RO };

FIXTURE(sizing) {
	struct mshare_ctx c;
	uint64_t align;
};

FIXTURE_VARIANT(sizing) {
	bool scm;		/* sent over a socket, else inherited */
	enum give give;		/* the owner file, or a reopened one */
};

FIXTURE_VARIANT_ADD(sizing, forked_owner_fd) { .scm = false, .give = GIVE_OWNER };
FIXTURE_VARIANT_ADD(sizing, forked_reopened_rw) { .scm = false, .give = GIVE_RW };
FIXTURE_VARIANT_ADD(sizing, forked_reopened_ro) { .scm = false, .give = GIVE_RO };
FIXTURE_VARIANT_ADD(sizing, scm_owner_fd) { .scm = true, .give = GIVE_OWNER };
FIXTURE_VARIANT_ADD(sizing, scm_reopened_rw) { .scm = true, .give = GIVE_RW };
FIXTURE_VARIANT_ADD(sizing, scm_reopened_ro) { .scm = true, .give = GIVE_RO };

FIXTURE_SETUP(sizing)
{
	mshare_test_setup(_metadata, &self->c, "sizing");
	self->align = self->c.align;
}

FIXTURE_TEARDOWN(sizing)
{
	mshare_ctx_fini(&self->c);
}

/* In the child: what it may do with fd, the only descriptor it holds. */
static int child_try_sizing(int fd, enum give give, uint64_t align)
{
	long long val = -1;
	char path[64];
	int ro;

	CHILD_CHECK(accmode(fd) == (give == GIVE_RO ? O_RDONLY : O_RDWR),
		    "access mode %d", accmode(fd));
	CHILD_CHECK(fdinfo_get(0, fd, "mshare-owner-fd", &val) == 0 &&
		    val == (give == GIVE_OWNER), "mshare-owner-fd %lld", val);
	CHILD_CHECK(fdinfo_get(0, fd, "mshare-owned", &val) == 0 && val == 1,
		    "mshare-owned %lld", val);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	switch (give) {
	case GIVE_OWNER:
		CHILD_CHECK(ftruncate(fd, align) == 0,
			    "ftruncate through the owner file: %m");
		CHILD_CHECK(failed_with(fallocate(fd, 0, 0, 2 * align), EINVAL),
			    "second sizing: %m");
		ro = open(path, O_RDONLY | O_CLOEXEC);
		CHILD_CHECK(ro >= 0, "reopen by a holder of the owner file: %m");
		CHILD_CHECK(fdinfo_get(0, ro, "mshare-owner-fd", &val) == 0 &&
			    val == 0, "reopened: mshare-owner-fd %lld", val);
		close(ro);
		break;
	case GIVE_RW:
		CHILD_CHECK(failed_with(ftruncate(fd, align), EPERM),
			    "ftruncate through a reopened descriptor: %m");
		CHILD_CHECK(failed_with(fallocate(fd, 0, 0, align), EPERM),
			    "fallocate through a reopened descriptor: %m");
		break;
	case GIVE_RO:
		errno = 0;
		CHILD_CHECK(ftruncate(fd, align) == -1 &&
			    (errno == EINVAL || errno == EBADF),
			    "ftruncate through a read-only descriptor: %m");
		CHILD_CHECK(failed_with(fallocate(fd, 0, 0, align), EBADF),
			    "fallocate through a read-only descriptor: %m");
		break;
	}
	if (give != GIVE_OWNER) {
		CHILD_CHECK(fdinfo_get(0, fd, "mshare-size", &val) == 0 &&
			    val == 0, "size %lld", val);
		CHILD_CHECK(failed_with(open(path, O_RDONLY), EACCES),
			    "reopen O_RDONLY without the owner file: %m");
		CHILD_CHECK(failed_with(open(path, O_RDWR), EACCES),
			    "reopen O_RDWR without the owner file: %m");
	}
	return 0;
}

/* A process from before the region, that receives a descriptor. */
static int child_receiver(int sock, enum give give, uint64_t align)
{
	char ok = 1;
	int fd;

	fd = fd_recv(sock, RECV_TIMEOUT_MS);
	CHILD_CHECK(fd >= 0, "fd_recv: %m");
	if (child_try_sizing(fd, give, align))
		return 1;
	CHILD_CHECK(msg_send(sock, &ok, 1) == 0, "%m");
	return 0;
}

TEST_F(sizing, by_another_process)
{
	int sv[2] = { -1, -1 }, fd, give;
	pid_t pid = 0;
	char ok;

	if (variant->scm) {
		ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
					sv));
		pid = ASSERT_SYS(child_fork());
		if (pid == 0) {
			close(sv[0]);
			_exit(child_receiver(sv[1], variant->give,
					     self->align));
		}
		close(sv[1]);
	}
	fd = ASSERT_SYS(sys_mshare_create(O_CLOEXEC));
	give = fd;
	if (variant->give != GIVE_OWNER) {
		give = fd_reopen(fd, variant->give == GIVE_RO ? O_RDONLY :
							       O_RDWR);
		ASSERT_LE(0, give) TH_LOG("reopen: %s", strerror(errno));
	}
	if (variant->scm) {
		ASSERT_EQ(0, fd_send(sv[0], give));
		ASSERT_EQ(0, msg_recv(sv[0], &ok, 1, RECV_TIMEOUT_MS))
			TH_LOG("receiver: %s", strerror(errno));
	} else {
		pid = ASSERT_SYS(child_fork());
		if (pid == 0) {
			/* the child holds only what it is given */
			if (give != fd)
				close(fd);
			_exit(child_try_sizing(give, variant->give,
					       self->align));
		}
	}
	ASSERT_CHILD_OK(pid);
	if (variant->give == GIVE_OWNER) {
		/* sized by the other process, once */
		ASSERT_EQ((long long)self->align,
			  test_fdinfo(_metadata, 0, fd, "mshare-size"));
		EXPECT_ERRNO(EINVAL, ftruncate(fd, 2 * self->align));
	} else {
		ASSERT_EQ(0, test_fdinfo(_metadata, 0, fd, "mshare-size"));
		ASSERT_EQ(0, ftruncate(fd, self->align));
		ASSERT_EQ((long long)self->align,
			  test_fdinfo(_metadata, 0, fd, "mshare-size"));
		close(give);
	}
	if (sv[0] >= 0)
		close(sv[0]);
	close(fd);
}

TEST_F(create, reopen_by_owner)
{
	struct stat st, st_rw, st_ro;
	int fd, rw, ro;
	int err;

	fd = ASSERT_SYS(sys_mshare_create(O_CLOEXEC));
	ASSERT_EQ(0, fstat(fd, &st));

	/*
	 * read-write: the same region, but a file of its own that owns
	 * nothing: sizing through it is EPERM, through the owner file works
	 */
	rw = fd_reopen(fd, O_RDWR);
	ASSERT_LE(0, rw) TH_LOG("reopen O_RDWR: %s", strerror(errno));
	ASSERT_EQ(O_RDWR, accmode(rw));
	ASSERT_EQ(0, fstat(rw, &st_rw));
	ASSERT_EQ(st.st_ino, st_rw.st_ino);
	ASSERT_EQ(st.st_dev, st_rw.st_dev);
	ASSERT_EQ(1, test_fdinfo(_metadata, 0, rw, "mshare-owned"));
	ASSERT_EQ(0, test_fdinfo(_metadata, 0, rw, "mshare-owner-fd"));
	EXPECT_ERRNO(EPERM, ftruncate(rw, self->align));
	EXPECT_ERRNO(EPERM, fallocate(rw, 0, 0, self->align));
	ASSERT_REGION_SIZE(fd, 0);
	ASSERT_EQ(0, ftruncate(fd, self->align));
	ASSERT_REGION_SIZE(rw, self->align);

	/* read-only */
	ro = fd_reopen(fd, O_RDONLY);
	ASSERT_LE(0, ro) TH_LOG("reopen O_RDONLY: %s", strerror(errno));
	ASSERT_EQ(O_RDONLY, accmode(ro));
	ASSERT_EQ(0, fstat(ro, &st_ro));
	ASSERT_EQ(st.st_ino, st_ro.st_ino);
	ASSERT_EQ(st.st_dev, st_ro.st_dev);
	ASSERT_REGION_SIZE(ro, self->align);
	ASSERT_EQ(1, test_fdinfo(_metadata, 0, ro, "mshare-owned"));
	ASSERT_EQ(0, test_fdinfo(_metadata, 0, ro, "mshare-owner-fd"));
	/* not open for writing: ftruncate gives EINVAL or EBADF */
	errno = 0;
	ASSERT_EQ(-1, ftruncate(ro, 2 * self->align));
	err = errno;
	ASSERT_TRUE(err == EINVAL || err == EBADF)
		TH_LOG("ftruncate of the read-only fd: %s", errname(err));
	EXPECT_ERRNO(EBADF, fallocate(ro, 0, 0, 2 * self->align));
	ASSERT_REGION_SIZE(fd, self->align);
	close(ro);
	close(rw);
	close(fd);
}

/*
 * A child that let go of the owner file it inherited and holds a
 * reopened read-write descriptor: it may reopen neither that one nor the
 * owner's descriptor through /proc.
 */
static int child_reopen(int fd, int rw, pid_t owner)
{
	char path[64];

	CHILD_CHECK(close(fd) == 0, "%m");
	snprintf(path, sizeof(path), "/proc/self/fd/%d", rw);
	CHILD_CHECK(failed_with(open(path, O_RDONLY), EACCES),
		    "reopen O_RDONLY by another process: %m");
	CHILD_CHECK(failed_with(open(path, O_RDWR), EACCES),
		    "reopen O_RDWR by another process: %m");
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", owner, fd);
	CHILD_CHECK(failed_with(open(path, O_RDONLY), EACCES),
		    "open of the owner's %s: %m", path);
	CHILD_CHECK(failed_with(open(path, O_RDWR), EACCES),
		    "open of the owner's %s O_RDWR: %m", path);
	return 0;
}

struct reopen_job {
	int fd;
	int ret;
	int err;
};

static void *thread_reopen(void *arg)
{
	struct reopen_job *job = arg;

	errno = 0;
	job->ret = fd_reopen(job->fd, O_RDONLY);
	job->err = errno;
	return NULL;
}

/*
 * A process without the owner file may not reopen; another thread of a
 * holder may (the same file table).
 */
TEST_F(create, reopen_by_other_process_eacces)
{
	int fd = test_new_region(_metadata, self->align);
	struct reopen_job job = { .fd = fd };
	pthread_t thread;
	pid_t pid;
	int rw;

	rw = fd_reopen(fd, O_RDWR);
	ASSERT_LE(0, rw) TH_LOG("reopen: %s", strerror(errno));
	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(child_reopen(fd, rw, getppid()));
	ASSERT_CHILD_OK(pid);
	close(rw);

	ASSERT_EQ(0, pthread_create(&thread, NULL, thread_reopen, &job));
	ASSERT_EQ(0, pthread_join(thread, NULL));
	ASSERT_LE(0, job.ret)
		TH_LOG("reopen by a thread of the owner: %s", errname(job.err));
	ASSERT_EQ(O_RDONLY, accmode(job.ret));
	close(job.ret);
	close(fd);
}

/* How many entries below dir (recursively) have inode number ino. */
static int count_ino(const char *dir, ino_t ino, int depth)
{
	char sub[PATH_MAX];
	struct dirent *de;
	struct stat st;
	int n = 0;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
		if (lstat(sub, &st))
			continue;
		if (st.st_ino == ino)
			n++;
		if (S_ISDIR(st.st_mode) && depth < 8)
			n += count_ino(sub, ino, depth + 1);
	}
	closedir(d);
	return n;
}

TEST_F(create, not_listed_in_msharefs)
{
	struct stat named_st, st;
	char path[64], link[PATH_MAX];
	int named, fd;
	ssize_t n;

	fd = test_new_region(_metadata, self->align);
	ASSERT_EQ(0, fstat(fd, &st));
	/* the control: a named region is found by the walk */
	named = test_region(_metadata, &self->c, "named", self->align);
	ASSERT_EQ(0, fstat(named, &named_st));
	ASSERT_EQ(1, count_ino(MSHARE_ROOT, named_st.st_ino, 0));

	ASSERT_EQ(0, count_ino(MSHARE_ROOT, st.st_ino, 0))
		TH_LOG("the mshare_create() region (ino %lu) has a name in %s",
		       (unsigned long)st.st_ino, MSHARE_ROOT);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	ASSERT_LT(0, n) TH_LOG("readlink %s: %s", path, strerror(errno));
	link[n] = '\0';
	TH_LOG("the region fd links to \"%s\"", link);
	ASSERT_NE(0, strncmp(link, MSHARE_ROOT "/", strlen(MSHARE_ROOT) + 1));
	close(named);
	close(fd);
}

static int child_emfile(int lowest_free)
{
	struct rlimit rl;

	CHILD_CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0, "%m");
	rl.rlim_cur = lowest_free;
	CHILD_CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0, "%m");
	CHILD_CHECK(failed_with(sys_mshare_create(0), EMFILE),
		    "mshare_create with no free descriptor: %m");
	return 0;
}

TEST_F(create, emfile)
{
	int lowest = ASSERT_SYS(fcntl(2, F_DUPFD, 0));
	pid_t pid;

	close(lowest);
	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(child_emfile(lowest));
	ASSERT_CHILD_OK(pid);
}

TEST_HARNESS_MAIN
