// SPDX-License-Identifier: GPL-2.0
/*
 * msharefs as a filesystem: registration and magic, mshare_info, creating
 * regions, directories, unlink, permission bits, and the sizing rules
 * (ftruncate/fallocate, once, to a non-zero multiple of the alignment).
 */
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "mshare_test.h"

#define NOBODY 65534

FIXTURE(fs) {
	struct mshare_ctx c;
};

FIXTURE_SETUP(fs)
{
	mshare_test_setup(_metadata, &self->c, "fs");
}

FIXTURE_TEARDOWN(fs)
{
	mshare_ctx_fini(&self->c);
}

TEST_F(fs, listed_in_proc_filesystems)
{
	char line[256], *name;
	bool found = false;
	FILE *f;

	f = fopen("/proc/filesystems", "re");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		name = strrchr(line, '\t');
		if (!strcmp(name ? name + 1 : line, "msharefs"))
			found = true;
	}
	fclose(f);
	ASSERT_TRUE(found) TH_LOG("no msharefs line in /proc/filesystems");
}

TEST_F(fs, statfs_magic)
{
	struct statfs sfs;
	int fd;

	ASSERT_EQ(0, statfs(MSHARE_ROOT, &sfs));
	EXPECT_EQ(MSHARE_MAGIC, sfs.f_type);
	ASSERT_EQ(0, statfs(self->c.dir, &sfs));
	EXPECT_EQ(MSHARE_MAGIC, sfs.f_type);
	fd = test_region(_metadata, &self->c, "r", 0);
	ASSERT_EQ(0, fstatfs(fd, &sfs));
	EXPECT_EQ(MSHARE_MAGIC, sfs.f_type);
	close(fd);
}

TEST_F(fs, mshare_info_mode)
{
	struct stat st;

	ASSERT_EQ(0, stat(MSHARE_INFO, &st));
	EXPECT_TRUE(S_ISREG(st.st_mode));
	EXPECT_EQ(0444, st.st_mode & 07777);
}

TEST_F(fs, mshare_info_content)
{
	uint64_t align;

	/* Strict: decimal, one newline, nothing else (mshare_read_info). */
	ASSERT_EQ(0, mshare_read_info(&align))
		TH_LOG("mshare_info: %s", strerror(errno));
	TH_LOG("alignment %#lx", (unsigned long)align);
	ASSERT_TRUE(IS_ALIGNED(align, self->c.page));
#ifdef __x86_64__
	ASSERT_EQ(1UL << 39, align) TH_LOG("expected P4D_SIZE on x86_64");
#endif
}

/* Reads of any size and offset return the same text. */
TEST_F(fs, mshare_info_partial_reads)
{
	char whole[64] = "", bytes[64] = "";
	ssize_t n, len = 0;
	int fd;

	fd = ASSERT_SYS(open(MSHARE_INFO, O_RDONLY));
	n = ASSERT_SYS(read(fd, whole, sizeof(whole) - 1));
	ASSERT_LT(1, n);
	ASSERT_EQ(0, lseek(fd, 0, SEEK_SET));
	while (len < (ssize_t)sizeof(bytes) - 1 &&
	       (n = read(fd, bytes + len, 1)) == 1)
		len++;
	EXPECT_EQ(0, n);
	EXPECT_STREQ(whole, bytes);
	n = ASSERT_SYS(pread(fd, bytes, sizeof(bytes) - 1, 2));
	bytes[n] = '\0';
	EXPECT_STREQ(whole + 2, bytes);
	close(fd);
}

static int info_write_as_nobody(void)
{
	CHILD_CHECK(setgroups(0, NULL) == 0 && setgid(NOBODY) == 0 &&
		    setuid(NOBODY) == 0, "%m");
	CHILD_CHECK(open(MSHARE_INFO, O_WRONLY) == -1 && errno == EACCES,
		    "open(O_WRONLY): %m");
	return 0;
}

TEST_F(fs, mshare_info_read_only)
{
	uint64_t before, after;
	pid_t pid;
	int fd;

	ASSERT_EQ(0, mshare_read_info(&before));
	/* root may get an O_WRONLY fd, but no write may succeed */
	fd = open(MSHARE_INFO, O_WRONLY);
	if (fd >= 0) {
		EXPECT_EQ(-1, write(fd, "4096\n", 5));
		close(fd);
	}
	ASSERT_EQ(0, mshare_read_info(&after));
	EXPECT_EQ(before, after);

	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(info_write_as_nobody());
	ASSERT_CHILD_OK(pid);
}

TEST_F(fs, create_region)
{
	struct stat st, st2;
	int fd, fd2;

	fd = ASSERT_SYS(open(mshare_path(&self->c, "r"), O_CREAT | O_RDWR,
			     0600));
	ASSERT_EQ(0, fstat(fd, &st));
	EXPECT_TRUE(S_ISREG(st.st_mode));
	EXPECT_EQ(0600, st.st_mode & 07777);
	EXPECT_EQ(0, st.st_size);
	EXPECT_EQ(geteuid(), st.st_uid);

	fd2 = ASSERT_SYS(mshare_open(&self->c, "r", O_RDWR));
	ASSERT_EQ(0, fstat(fd2, &st2));
	EXPECT_EQ(st.st_ino, st2.st_ino);
	close(fd2);

	EXPECT_ERRNO(EEXIST, open(mshare_path(&self->c, "r"),
				  O_CREAT | O_EXCL | O_RDWR, 0600));
	EXPECT_ERRNO(ENOENT, mshare_open(&self->c, "missing", O_RDWR));
	close(fd);
}

TEST_F(fs, mkdir_rmdir_subdirectories)
{
	const char *sub = mshare_path(&self->c, "sub");
	const char *deep = mshare_path(&self->c, "sub/deeper");
	const char *file = mshare_path(&self->c, "sub/deeper/r");
	const uint64_t align = self->c.align;
	bool listed = false;
	struct dirent *de;
	struct stat st;
	char *win;
	DIR *d;
	int fd;

	ASSERT_EQ(0, mkdir(sub, 0755));
	EXPECT_ERRNO(EEXIST, mkdir(sub, 0755));
	ASSERT_EQ(0, mkdir(deep, 0755));
	ASSERT_EQ(0, stat(deep, &st));
	EXPECT_TRUE(S_ISDIR(st.st_mode));

	d = opendir(sub);
	ASSERT_NE(NULL, d);
	while ((de = readdir(d)))
		listed |= !strcmp(de->d_name, "deeper");
	closedir(d);
	EXPECT_TRUE(listed);

	/* a region in a subdirectory is a full region */
	fd = ASSERT_SYS(open(file, O_CREAT | O_RDWR, 0600));
	ASSERT_EQ(0, ftruncate(fd, align));
	test_map_anon(_metadata, fd, 0, SZ_1M);
	win = test_window(_metadata, fd, align);
	pattern_fill(win, SZ_1M, 1);
	ASSERT_PATTERN(win, SZ_1M, 1);
	ASSERT_EQ(0, munmap(win, align));
	close(fd);

	EXPECT_ERRNO(ENOTEMPTY, rmdir(sub));
	EXPECT_ERRNO(ENOTEMPTY, rmdir(deep));
	ASSERT_EQ(0, unlink(file));
	ASSERT_EQ(0, rmdir(deep));
	ASSERT_EQ(0, rmdir(sub));
	EXPECT_ERRNO(ENOENT, stat(sub, &st));
}

/* An open fd keeps an unlinked region alive, objects and all. */
TEST_F(fs, unlink_with_open_fd)
{
	const uint64_t align = self->c.align;
	char *win;
	int fd;

	fd = test_region(_metadata, &self->c, "r", align);
	test_map_anon(_metadata, fd, 0, SZ_1M);
	win = test_window(_metadata, fd, align);
	pattern_fill(win, SZ_1M, 2);
	ASSERT_EQ(0, munmap(win, align));

	ASSERT_EQ(0, unlink(mshare_path(&self->c, "r")));
	EXPECT_ERRNO(ENOENT, mshare_open(&self->c, "r", O_RDWR));

	win = test_window(_metadata, fd, align);
	ASSERT_PATTERN(win, SZ_1M, 2);
	pattern_fill(win, SZ_1M, 3);
	ASSERT_PATTERN(win, SZ_1M, 3);
	ASSERT_EQ(0, munmap(win, align));
	close(fd);
}

/* A mapping alone keeps an unlinked, closed region alive. */
TEST_F(fs, unlink_with_mapping_only)
{
	const uint64_t align = self->c.align;
	char *win;
	pid_t pid;
	int fd;

	fd = test_region(_metadata, &self->c, "r", align);
	test_map_anon(_metadata, fd, 0, SZ_1M);
	win = test_window(_metadata, fd, align);
	pattern_fill(win, SZ_1M, 4);
	close(fd);
	ASSERT_EQ(0, unlink(mshare_path(&self->c, "r")));

	ASSERT_PATTERN(win, SZ_1M, 4);
	pattern_fill(win, SZ_1M, 5);
	ASSERT_PATTERN(win, SZ_1M, 5);
	pid = ASSERT_SYS(child_fork());
	if (pid == 0) {
		CHILD_CHECK(pattern_check(win, SZ_1M, 5) == -1, "data");
		_exit(0);
	}
	ASSERT_CHILD_OK(pid);
	ASSERT_EQ(0, munmap(win, align));
}

static int open_as_nobody(const struct mshare_ctx *c)
{
	int fd;

	CHILD_CHECK(setgroups(0, NULL) == 0 && setgid(NOBODY) == 0 &&
		    setuid(NOBODY) == 0, "%m");
	CHILD_CHECK(mshare_open(c, "private", O_RDWR) == -1 && errno == EACCES,
		    "0600 region O_RDWR: %m");
	CHILD_CHECK(mshare_open(c, "private", O_RDONLY) == -1 &&
		    errno == EACCES, "0600 region O_RDONLY: %m");
	/* the bits, not a blanket refusal, decide */
	fd = mshare_open(c, "public", O_RDONLY);
	CHILD_CHECK(fd >= 0, "0644 region O_RDONLY: %m");
	close(fd);
	CHILD_CHECK(mshare_open(c, "public", O_RDWR) == -1 && errno == EACCES,
		    "0644 region O_RDWR: %m");
	CHILD_CHECK(open(mshare_path(c, "new"), O_CREAT | O_RDWR, 0600) == -1 &&
		    errno == EACCES, "create in a 0755 root directory: %m");
	return 0;
}

TEST_F(fs, permission_bits)
{
	const uint64_t align = self->c.align;
	int priv, pub;
	pid_t pid;

	priv = test_region(_metadata, &self->c, "private", align);
	pub = test_region(_metadata, &self->c, "public", align);
	ASSERT_EQ(0, fchmod(pub, 0644));

	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(open_as_nobody(&self->c));
	ASSERT_CHILD_OK(pid);
	close(priv);
	close(pub);
}

static void assert_size(struct __test_metadata *_metadata, int fd,
			uint64_t size)
{
	struct stat st;

	ASSERT_EQ(0, fstat(fd, &st));
	ASSERT_EQ(size, (uint64_t)st.st_size);
}

TEST_F(fs, size_with_ftruncate)
{
	const uint64_t align = self->c.align;
	struct stat st;
	int fd;

	fd = test_region(_metadata, &self->c, "r", 0);
	ASSERT_EQ(0, ftruncate(fd, align));
	assert_size(_metadata, fd, align);
	ASSERT_EQ(0, stat(mshare_path(&self->c, "r"), &st));
	EXPECT_EQ(align, (uint64_t)st.st_size);
	close(fd);

	/* any non-zero multiple */
	fd = test_region(_metadata, &self->c, "r2", 0);
	ASSERT_EQ(0, ftruncate(fd, 2 * align));
	assert_size(_metadata, fd, 2 * align);
	close(fd);
}

TEST_F(fs, size_with_fallocate)
{
	const uint64_t align = self->c.align;
	int fd;

	fd = test_region(_metadata, &self->c, "r", 0);
	ASSERT_EQ(0, fallocate(fd, 0, 0, align));
	assert_size(_metadata, fd, align);
	close(fd);

	fd = test_region(_metadata, &self->c, "r2", 0);
	ASSERT_EQ(0, fallocate(fd, 0, 0, 3 * align));
	assert_size(_metadata, fd, 3 * align);
	close(fd);
}

/* After the failures, the region is still unsized and can be sized. */
static void assert_still_unsized(struct __test_metadata *_metadata, int fd,
				 uint64_t align)
{
	assert_size(_metadata, fd, 0);
	ASSERT_EQ(0, ftruncate(fd, align));
	assert_size(_metadata, fd, align);
}

TEST_F(fs, size_misaligned)
{
	const uint64_t align = self->c.align;
	const uint64_t page = self->c.page;
	const uint64_t bad[] = {
		1, page, align / 2, align - page, align + page, 2 * align - 1,
	};
	unsigned int i;
	int fd;

	fd = test_region(_metadata, &self->c, "r", 0);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_ERRNO(EINVAL, ftruncate(fd, bad[i]))
			TH_LOG("  ftruncate size %#lx", (unsigned long)bad[i]);
		EXPECT_ERRNO(EINVAL, fallocate(fd, 0, 0, bad[i]))
			TH_LOG("  fallocate size %#lx", (unsigned long)bad[i]);
	}
	assert_still_unsized(_metadata, fd, align);
	close(fd);
}

TEST_F(fs, size_zero)
{
	int fd;

	fd = test_region(_metadata, &self->c, "r", 0);
	EXPECT_ERRNO(EINVAL, ftruncate(fd, 0));
	EXPECT_ERRNO(EINVAL, fallocate(fd, 0, 0, 0));
	assert_still_unsized(_metadata, fd, self->c.align);
	close(fd);
}

TEST_F(fs, size_only_once)
{
	const uint64_t align = self->c.align;
	int fd, fd2;

	fd = test_region(_metadata, &self->c, "r", align);
	EXPECT_ERRNO(EINVAL, ftruncate(fd, align));
	EXPECT_ERRNO(EINVAL, ftruncate(fd, 2 * align));
	EXPECT_ERRNO(EINVAL, ftruncate(fd, 0));
	EXPECT_ERRNO(EINVAL, fallocate(fd, 0, 0, align));
	EXPECT_ERRNO(EINVAL, fallocate(fd, 0, 0, 2 * align));
	/* the size belongs to the region, not to the fd */
	fd2 = ASSERT_SYS(mshare_open(&self->c, "r", O_RDWR));
	EXPECT_ERRNO(EINVAL, ftruncate(fd2, 2 * align));
	close(fd2);
	assert_size(_metadata, fd, align);
	close(fd);

	fd = test_region(_metadata, &self->c, "r2", 0);
	ASSERT_EQ(0, fallocate(fd, 0, 0, align));
	EXPECT_ERRNO(EINVAL, fallocate(fd, 0, 0, align));
	EXPECT_ERRNO(EINVAL, ftruncate(fd, 2 * align));
	assert_size(_metadata, fd, align);
	close(fd);
}

TEST_F(fs, size_too_large)
{
	const int bits = user_va_bits();
	const uint64_t huge[] = { 1UL << bits, 1UL << 57, 1UL << 62 };
	unsigned int i;
	int fd, err, ret;

	TH_LOG("user address space: %d bits", bits);
	fd = test_region(_metadata, &self->c, "r", 0);
	for (i = 0; i < ARRAY_SIZE(huge); i++) {
		ASSERT_TRUE(IS_ALIGNED(huge[i], self->c.align));
		errno = 0;
		ret = ftruncate(fd, huge[i]);
		err = errno;
		TH_LOG("ftruncate(%#lx): %d %s", (unsigned long)huge[i], ret,
		       errname(err));
		EXPECT_EQ(-1, ret);
		EXPECT_TRUE(err == EFBIG || err == EINVAL);
		errno = 0;
		ret = fallocate(fd, 0, 0, huge[i]);
		err = errno;
		TH_LOG("fallocate(%#lx): %d %s", (unsigned long)huge[i], ret,
		       errname(err));
		EXPECT_EQ(-1, ret);
		EXPECT_TRUE(err == EFBIG || err == EINVAL);
	}
	assert_still_unsized(_metadata, fd, self->c.align);
	close(fd);
}

TEST_F(fs, fallocate_offset)
{
	const uint64_t align = self->c.align;
	int fd;

	fd = test_region(_metadata, &self->c, "r", 0);
	EXPECT_ERRNO(EINVAL, fallocate(fd, 0, align, align));
	EXPECT_ERRNO(EINVAL, fallocate(fd, 0, self->c.page, align));
	EXPECT_ERRNO(EINVAL, fallocate(fd, 0, 1, align));
	assert_still_unsized(_metadata, fd, align);
	close(fd);
}

TEST_F(fs, fallocate_mode)
{
	const int modes[] = {
		FALLOC_FL_KEEP_SIZE,
		FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		FALLOC_FL_ZERO_RANGE,
		FALLOC_FL_COLLAPSE_RANGE,
		FALLOC_FL_INSERT_RANGE,
		FALLOC_FL_UNSHARE_RANGE,
	};
	const uint64_t align = self->c.align;
	unsigned int i;
	int fd;

	fd = test_region(_metadata, &self->c, "r", 0);
	for (i = 0; i < ARRAY_SIZE(modes); i++) {
		EXPECT_ERRNO(EOPNOTSUPP, fallocate(fd, modes[i], 0, align))
			TH_LOG("  mode %#x", modes[i]);
	}
	assert_still_unsized(_metadata, fd, align);
	close(fd);
}

TEST_HARNESS_MAIN
