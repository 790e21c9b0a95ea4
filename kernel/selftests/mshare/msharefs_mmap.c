// SPDX-License-Identifier: GPL-2.0
/*
 * Windows: the rules of mmap() on a region, and what the other memory
 * management calls do on a window (mprotect, munmap, mremap, madvise,
 * process_madvise, mlock, mlockall (MCL_CURRENT, MCL_FUTURE), mbind,
 * userfaultfd, fork, core dumps, /proc/self/{smaps,pagemap},
 * MAP_POPULATE).
 */
#include <elf.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <linux/mempolicy.h>
#include <linux/userfaultfd.h>

#include "mshare_test.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22
#define MADV_POPULATE_WRITE	23
#endif

/* The fixture's region has an anonymous object at [0, OBJ_SIZE). */
#define OBJ_SIZE	SZ_2M

FIXTURE(mm) {
	struct mshare_ctx c;
	uint64_t align;
	size_t page;
	int fd;
	char *win;
};

FIXTURE_SETUP(mm)
{
	self->fd = -1;
	mshare_test_setup(_metadata, &self->c, "mmap");
	self->align = self->c.align;
	self->page = self->c.page;
	self->fd = test_region(_metadata, &self->c, "r", self->align);
	test_map_anon(_metadata, self->fd, 0, OBJ_SIZE);
}

FIXTURE_TEARDOWN(mm)
{
	if (self->win)
		munmap(self->win, self->align);
	if (self->fd >= 0)
		close(self->fd);
	mshare_ctx_fini(&self->c);
}

/* Map the fixture's window and write pattern seed over its object. */
static char *map_window(struct __test_metadata *_metadata,
			FIXTURE_DATA(mm) *self, uint64_t seed)
{
	self->win = test_window(_metadata, self->fd, self->align);
	pattern_fill(self->win, OBJ_SIZE, seed);
	return self->win;
}

TEST_F(mm, kernel_chosen_address_is_aligned)
{
	const uint64_t align = self->align;
	char *win, *free_space, *hint;

	win = test_window(_metadata, self->fd, align);
	EXPECT_TRUE(IS_ALIGNED(win, align)) TH_LOG("window at %p", win);
	EXPECT_TRUE(maps_has_range(win, align));
	ASSERT_EQ(0, munmap(win, align));

	/* a misaligned hint (without MAP_FIXED) still gets an aligned window */
	free_space = reserve_aligned(3 * align, align);
	ASSERT_NE(NULL, free_space);
	ASSERT_EQ(0, munmap(free_space, 3 * align));
	hint = free_space + align + self->page;
	win = mshare_window(self->fd, align, hint, 0);
	ASSERT_NE(MAP_FAILED, win);
	EXPECT_TRUE(IS_ALIGNED(win, align)) TH_LOG("hint %p, window at %p",
						   hint, win);
	self->win = win;
}

TEST_F(mm, fixed_aligned_address)
{
	char *hole, *win;

	hole = reserve_aligned(self->align, self->align);
	ASSERT_NE(NULL, hole);
	win = mshare_window(self->fd, self->align, hole, MAP_FIXED);
	ASSERT_EQ(hole, win);
	self->win = win;
	pattern_fill(win, OBJ_SIZE, 1);
	ASSERT_PATTERN(win, OBJ_SIZE, 1);
}

TEST_F(mm, fixed_misaligned_address)
{
	const uint64_t align = self->align;
	char *hole;

	hole = reserve_aligned(2 * align, align);
	ASSERT_NE(NULL, hole);
	EXPECT_ERRNO(EINVAL, mshare_window(self->fd, align, hole + self->page,
					   MAP_FIXED));
	EXPECT_ERRNO(EINVAL, mshare_window(self->fd, align, hole + SZ_2M,
					   MAP_FIXED));
	EXPECT_ERRNO(EINVAL, mshare_window(self->fd, align, hole + align / 2,
					   MAP_FIXED));
	munmap(hole, 2 * align);
}

TEST_F(mm, private_mapping)
{
	EXPECT_ERRNO(EINVAL, mmap(NULL, self->align, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE, self->fd, 0));
	EXPECT_ERRNO(EINVAL, mmap(NULL, self->align, PROT_READ, MAP_PRIVATE,
				  self->fd, 0));
}

TEST_F(mm, length_other_than_region_size)
{
	const uint64_t align = self->align;
	const uint64_t lens[] = {
		self->page, SZ_2M, align / 2, align - self->page,
		align + self->page, 2 * align,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		EXPECT_ERRNO(EINVAL, mshare_window(self->fd, lens[i], NULL, 0))
			TH_LOG("  length %#lx", (unsigned long)lens[i]);
	}
}

TEST_F(mm, unsized_region)
{
	int fd = test_region(_metadata, &self->c, "unsized", 0);

	EXPECT_ERRNO(EINVAL, mshare_window(fd, self->align, NULL, 0));
	EXPECT_ERRNO(EINVAL, mshare_window(fd, self->page, NULL, 0));
	close(fd);
}

TEST_F(mm, nonzero_offset)
{
	const off_t offs[] = { self->page, SZ_2M, self->align };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(offs); i++) {
		EXPECT_ERRNO(EINVAL, mmap(NULL, self->align,
					  PROT_READ | PROT_WRITE, MAP_SHARED,
					  self->fd, offs[i]))
			TH_LOG("  offset %#lx", (unsigned long)offs[i]);
	}
}

TEST_F(mm, mprotect_rejected)
{
	const uint64_t align = self->align, page = self->page;
	char *win = map_window(_metadata, self, 2);

	EXPECT_ERRNO(EINVAL, mprotect(win, align, PROT_READ));
	EXPECT_ERRNO(EINVAL, mprotect(win, page, PROT_READ));
	EXPECT_ERRNO(EINVAL, mprotect(win + SZ_1M, page, PROT_NONE));
	EXPECT_ERRNO(EINVAL, mprotect(win + align - page, page, PROT_READ));
	EXPECT_ERRNO(EINVAL, mprotect(win + OBJ_SIZE, SZ_2M, PROT_READ));
	EXPECT_ERRNO(EINVAL, mprotect(win, align, PROT_READ | PROT_WRITE))
		TH_LOG("  (the protection the window already has)");
	/* still readable and writable */
	ASSERT_PATTERN(win, OBJ_SIZE, 2);
	ASSERT_WRITE_SIGNAL(0, win + page);
}

TEST_F(mm, munmap_part_rejected)
{
	const uint64_t align = self->align, page = self->page;
	char *win = map_window(_metadata, self, 3);

	EXPECT_ERRNO(EINVAL, munmap(win, page));
	EXPECT_ERRNO(EINVAL, munmap(win + SZ_1M, page));
	EXPECT_ERRNO(EINVAL, munmap(win + OBJ_SIZE, SZ_2M));
	EXPECT_ERRNO(EINVAL, munmap(win + align - page, page));
	EXPECT_ERRNO(EINVAL, munmap(win + page, align - page));
	EXPECT_ERRNO(EINVAL, munmap(win, align - page));
	ASSERT_PATTERN(win, OBJ_SIZE, 3);
	EXPECT_TRUE(maps_has_range(win, align));

	/* the whole window goes; the region and its object stay */
	ASSERT_EQ(0, munmap(win, align));
	self->win = NULL;
	EXPECT_FALSE(maps_has_range(win, align));
	ASSERT_READ_SIGNAL(SIGSEGV, win);
	self->win = test_window(_metadata, self->fd, self->align);
	ASSERT_PATTERN(self->win, OBJ_SIZE, 3);
}

TEST_F(mm, mremap_rejected)
{
	const uint64_t align = self->align, page = self->page;
	char *win = map_window(_metadata, self, 5);
	char *target;

	target = reserve_aligned(align, align);
	ASSERT_NE(NULL, target);
	EXPECT_ERRNO(EINVAL, mremap(win, align, align,
				    MREMAP_MAYMOVE | MREMAP_FIXED, target))
		TH_LOG("  move");
	EXPECT_ERRNO(EINVAL, mremap(win, align, align / 2, 0))
		TH_LOG("  shrink");
	EXPECT_ERRNO(EINVAL, mremap(win, align, 2 * align, MREMAP_MAYMOVE))
		TH_LOG("  grow");
	EXPECT_ERRNO(EINVAL, mremap(win, page, page,
				    MREMAP_MAYMOVE | MREMAP_FIXED, target))
		TH_LOG("  move one page");
	EXPECT_ERRNO(EINVAL, mremap(win + SZ_1M, page, 2 * page,
				    MREMAP_MAYMOVE))
		TH_LOG("  grow one page");
	munmap(target, align);
	EXPECT_TRUE(maps_has_range(win, align));
	ASSERT_PATTERN(win, OBJ_SIZE, 5);
}

TEST_F(mm, madvise_dontneed_rejected)
{
	char *win = map_window(_metadata, self, 6);

	EXPECT_ERRNO(EINVAL, madvise(win, self->page, MADV_DONTNEED));
	EXPECT_ERRNO(EINVAL, madvise(win, OBJ_SIZE, MADV_DONTNEED));
	EXPECT_ERRNO(EINVAL, madvise(win, self->align, MADV_DONTNEED));
	ASSERT_PATTERN(win, OBJ_SIZE, 6);
}

/*
 * Of madvise(), a window takes the advice about the window itself
 * (whether fork() copies it, MADV_DONTDUMP, which it already has) and the
 * readahead advice, which changes nothing there (faults follow the
 * region's VMA, advised with mshare_advise()) but must not make a
 * program's madvise() of all its mappings fail. Windows are never dumped.
 */
TEST_F(mm, madvise_window_advice)
{
	const struct { int advice; const char *name; } refused[] = {
		{ MADV_DODUMP, "MADV_DODUMP" },
	}, taken[] = {
		{ MADV_NORMAL, "MADV_NORMAL" },
		{ MADV_RANDOM, "MADV_RANDOM" },
		{ MADV_SEQUENTIAL, "MADV_SEQUENTIAL" },
		{ MADV_DONTFORK, "MADV_DONTFORK" },
		{ MADV_DOFORK, "MADV_DOFORK" },
		{ MADV_DONTDUMP, "MADV_DONTDUMP" },
	};
	char *win = map_window(_metadata, self, 7);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(refused); i++) {
		EXPECT_ERRNO(EINVAL, madvise(win, self->align,
					     refused[i].advice))
			TH_LOG("  %s", refused[i].name);
	}
	for (i = 0; i < ARRAY_SIZE(taken); i++) {
		EXPECT_EQ(0, madvise(win, self->align, taken[i].advice))
			TH_LOG("  %s: %s", taken[i].name, strerror(errno));
	}
	ASSERT_PATTERN(win, OBJ_SIZE, 7);
}

/* process_madvise() is madvise() on another mm: the same advice is refused. */
TEST_F(mm, process_madvise_rejected)
{
	const int advice[] = { MADV_COLD, MADV_PAGEOUT, MADV_WILLNEED };
	char *win = map_window(_metadata, self, 9);
	struct iovec iov = { .iov_base = win, .iov_len = OBJ_SIZE };
	int pidfd = ASSERT_SYS(syscall(SYS_pidfd_open, getpid(), 0));
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(advice); i++) {
		EXPECT_ERRNO(EINVAL, syscall(SYS_process_madvise, pidfd, &iov,
					     1, advice[i], 0))
			TH_LOG("  advice %d", advice[i]);
	}
	close(pidfd);
	ASSERT_PATTERN(win, OBJ_SIZE, 9);
}

/* A child has the window unless MADV_DONTFORK left it out. */
static int child_has_window(const char *win, uint64_t align, uint64_t seed)
{
	if (!maps_has_range(win, align))
		return 2;
	return pattern_check(win, OBJ_SIZE, seed) == -1 ? 0 : 1;
}

TEST_F(mm, madvise_dontfork_leaves_window_out)
{
	char *win = map_window(_metadata, self, 8);
	pid_t pid;

	ASSERT_EQ(0, madvise(win, self->align, MADV_DONTFORK));
	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(child_has_window(win, self->align, 8));
	ASSERT_EQ(2, WEXITSTATUS(child_wait(pid)))
		TH_LOG("the child of MADV_DONTFORK has the window");

	ASSERT_EQ(0, madvise(win, self->align, MADV_DOFORK));
	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(child_has_window(win, self->align, 8));
	ASSERT_CHILD_OK(pid);
}

/* Page faults taken while touching (reading or writing) every page. */
static long touch_faults(char *p, size_t len, size_t page, bool write)
{
	volatile char *v = p;
	long before = minflt_self();
	size_t off;

	for (off = 0; off < len; off += page) {
		if (write)
			v[off] = 1;
		else
			(void)v[off];
	}
	return minflt_self() - before;
}

TEST_F(mm, madvise_populate)
{
	const uint64_t roff_w = SZ_1G, roff_r = 2 * SZ_1G;
	const size_t page = self->page;
	struct stat st;
	long faults;
	char *win;
	int memfd;

	memfd = ASSERT_SYS(memfd_sized(SZ_2M));
	test_map_fd(_metadata, self->fd, roff_w, SZ_2M, memfd, 0);
	test_map_anon(_metadata, self->fd, roff_r, SZ_2M);
	win = map_window(_metadata, self, 7);
	touch_faults(win, OBJ_SIZE, page, false);	/* warm up the loop */

	ASSERT_EQ(0, fstat(memfd, &st));
	ASSERT_EQ(0, st.st_blocks) TH_LOG("memfd populated too early");
	ASSERT_EQ(0, madvise(win + roff_w, SZ_2M, MADV_POPULATE_WRITE));
	ASSERT_EQ(0, fstat(memfd, &st));
	EXPECT_LE(SZ_2M, (uint64_t)st.st_blocks * 512);
	faults = touch_faults(win + roff_w, SZ_2M, page, true);
	TH_LOG("faults writing 512 pages after MADV_POPULATE_WRITE: %ld",
	       faults);
	EXPECT_GE(4, faults);

	ASSERT_EQ(0, madvise(win + roff_r, SZ_2M, MADV_POPULATE_READ));
	faults = touch_faults(win + roff_r, SZ_2M, page, false);
	TH_LOG("faults reading 512 pages after MADV_POPULATE_READ: %ld",
	       faults);
	EXPECT_GE(4, faults);
	close(memfd);
}

TEST_F(mm, mlock_rejected)
{
	char *win = map_window(_metadata, self, 8);

	EXPECT_ERRNO(EINVAL, mlock(win, self->page));
	EXPECT_ERRNO(EINVAL, mlock(win, OBJ_SIZE));
	EXPECT_ERRNO(EINVAL, mlock(win + SZ_1M, SZ_1M));
	EXPECT_ERRNO(EINVAL, mlock(win, self->align));
	ASSERT_PATTERN(win, OBJ_SIZE, 8);
}

TEST_F(mm, mlockall_with_window)
{
	char *win = map_window(_metadata, self, 9);

	ASSERT_EQ(0, mlockall(MCL_CURRENT)) TH_LOG("%s", strerror(errno));
	ASSERT_PATTERN(win, OBJ_SIZE, 9);
	pattern_fill(win, OBJ_SIZE, 10);
	ASSERT_PATTERN(win, OBJ_SIZE, 10);
	ASSERT_EQ(0, munlockall());
}

/*
 * mlockall(MCL_FUTURE) treats a window made later as mmap() treats a
 * hugetlbfs mapping: it counts against RLIMIT_MEMLOCK when it is made, as
 * any mapping does, and its pages are faulted in, but it is not locked:
 * windows are VM_SPECIAL, and one sharer cannot lock the region's pages
 * for all of them.
 */
TEST_F(mm, mlockall_future_window)
{
	long locked;
	pid_t pid;

	ASSERT_EQ(0, test_fdinfo(_metadata, 0, self->fd, "mshare-rss"));
	ASSERT_SYS(mlockall(MCL_CURRENT | MCL_FUTURE));
	locked = status_kib("VmLck");
	self->win = test_window(_metadata, self->fd, self->align);
	EXPECT_EQ(locked, status_kib("VmLck"))
		TH_LOG("the window counts as locked memory");
	EXPECT_EQ(OBJ_SIZE / self->page,
		  test_fdinfo(_metadata, 0, self->fd, "mshare-rss"))
		TH_LOG("the window's object was not faulted in");
	ASSERT_SYS(munlockall());

	/* Without CAP_IPC_LOCK, the limit applies as to a plain mapping. */
	pid = ASSERT_SYS(child_fork());
	if (pid == 0) {
		const struct rlimit rl = { SZ_64K, SZ_64K };
		void *p;

		CHILD_CHECK(caps_drop(1u << CAP_IPC_LOCK) == 0, "capset: %m");
		CHILD_CHECK(setrlimit(RLIMIT_MEMLOCK, &rl) == 0,
			    "setrlimit: %m");
		CHILD_CHECK(mlockall(MCL_FUTURE) == 0, "mlockall: %m");
		p = mmap(NULL, OBJ_SIZE, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		CHILD_CHECK(p == MAP_FAILED && errno == EAGAIN,
			    "plain shared memory above the limit: %m");
		p = mshare_window(self->fd, self->align, NULL, 0);
		CHILD_CHECK(p == MAP_FAILED && errno == EAGAIN,
			    "a window above the limit: %m");
		_exit(0);
	}
	ASSERT_CHILD_OK(pid);
}

static long sys_mbind(void *addr, unsigned long len, int mode,
		      const unsigned long *nodemask)
{
	return syscall(__NR_mbind, addr, len, mode, nodemask,
		       sizeof(*nodemask) * 8, 0);
}

TEST_F(mm, mbind_rejected)
{
	const unsigned long node0 = 1;
	char *win, *ctl;
	long ret;

	/* the same call works on ordinary memory */
	ctl = mmap(NULL, self->page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ctl);
	ret = sys_mbind(ctl, self->page, MPOL_BIND, &node0);
	if (ret == -1 && errno == ENOSYS)
		SKIP(return, "mbind: ENOSYS (kernel without CONFIG_NUMA)");
	ASSERT_EQ(0, ret) TH_LOG("mbind on anonymous memory: %s",
				 strerror(errno));
	munmap(ctl, self->page);

	win = map_window(_metadata, self, 11);
	EXPECT_ERRNO(EINVAL, sys_mbind(win, self->page, MPOL_BIND, &node0));
	EXPECT_ERRNO(EINVAL, sys_mbind(win, self->align, MPOL_BIND, &node0));
	EXPECT_ERRNO(EINVAL, sys_mbind(win, OBJ_SIZE, MPOL_PREFERRED, &node0));
	EXPECT_ERRNO(EINVAL, sys_mbind(win, OBJ_SIZE, MPOL_INTERLEAVE,
				       &node0));
	ASSERT_PATTERN(win, OBJ_SIZE, 11);
}

static int uffd_register(int uffd, void *addr, uint64_t len)
{
	struct uffdio_register reg = {
		.range = { .start = (unsigned long)addr, .len = len },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};

	return ioctl(uffd, UFFDIO_REGISTER, &reg);
}

TEST_F(mm, userfaultfd_register_rejected)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_range range;
	char *win, *ctl;
	int uffd;

	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		SKIP(return, "userfaultfd(): %s", strerror(errno));
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));

	/* the same registration works on ordinary memory */
	ctl = mmap(NULL, self->page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ctl);
	ASSERT_EQ(0, uffd_register(uffd, ctl, self->page));
	range.start = (unsigned long)ctl;
	range.len = self->page;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_UNREGISTER, &range));
	munmap(ctl, self->page);

	win = map_window(_metadata, self, 12);
	EXPECT_ERRNO(EINVAL, uffd_register(uffd, win, self->page));
	EXPECT_ERRNO(EINVAL, uffd_register(uffd, win, OBJ_SIZE));
	EXPECT_ERRNO(EINVAL, uffd_register(uffd, win, self->align));
	ASSERT_PATTERN(win, OBJ_SIZE, 12);
	close(uffd);
}

TEST_F(mm, fork_child_sees_window)
{
	char *win = map_window(_metadata, self, 13);
	pid_t pid;

	pid = ASSERT_SYS(child_fork());
	if (pid == 0) {
		CHILD_CHECK(pattern_check(win, OBJ_SIZE, 13) == -1, "data");
		pattern_fill(win + SZ_1M, SZ_1M, 14);
		_exit(0);
	}
	ASSERT_CHILD_OK(pid);
	ASSERT_PATTERN(win, SZ_1M, 13);
	ASSERT_PATTERN(win + SZ_1M, SZ_1M, 14);
}

#define CORE_PATTERN	"/proc/sys/kernel/core_pattern"

/*
 * The bytes a core file holds for the mapping at addr: its PT_LOAD's
 * p_filesz, or -1 if the core has no such segment or cannot be read.
 */
static long long core_bytes_at(const char *core, const void *addr)
{
	size_t len;
	char *img = read_text(core, &len);
	long long bytes = -1;
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;

	if (!img || len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > len)
		goto out;
	for (int i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr *ph = (Elf64_Phdr *)(img + eh->e_phoff) + i;

		if (ph->p_type == PT_LOAD && ph->p_vaddr == (uintptr_t)addr) {
			bytes = ph->p_filesz;
			break;
		}
	}
out:
	free(img);
	return bytes;
}

/* Dies with a core dump of a window and of plain memory of the same data. */
static void child_dump_core(const char *win, size_t len)
{
	struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
	char *plain = mmap(NULL, len, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHILD_CHECK(plain != MAP_FAILED, "%m");
	memcpy(plain, win, len);
	CHILD_CHECK(setrlimit(RLIMIT_CORE, &unlimited) == 0, "%m");
	printf("# plain %p\n", plain);
	fflush(stdout);
	abort();
}

/* A core dump leaves windows out: the region is not the process's memory. */
TEST_F(mm, core_dump_leaves_window_out)
{
	char *win = map_window(_metadata, self, 15), *saved, core[64];
	int status, fds[2];
	void *plain = NULL;
	FILE *out;
	pid_t pid;

	ASSERT_EQ(0, pipe2(fds, O_CLOEXEC));
	saved = read_text(CORE_PATTERN, NULL);
	ASSERT_NE(NULL, saved);
	/* The pattern is the machine's: put it back before any assertion. */
	if (write_text(CORE_PATTERN, "/tmp/mshare-core.%p\n")) {
		free(saved);
		ASSERT_TRUE(false) TH_LOG("%s: %s", CORE_PATTERN, strerror(errno));
	}
	pid = child_fork();
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		child_dump_core(win, OBJ_SIZE);
	}
	status = pid > 0 ? child_wait(pid) : -1;
	write_text(CORE_PATTERN, saved);
	free(saved);
	ASSERT_LT(0, pid) TH_LOG("fork: %s", strerror(errno));
	ASSERT_TRUE(WIFSIGNALED(status) && WCOREDUMP(status))
		TH_LOG("child %s, no core", status_str(status));

	/* The child's one line is in the pipe, which it has left. */
	close(fds[1]);
	out = fdopen(fds[0], "r");
	ASSERT_NE(NULL, out);
	ASSERT_EQ(1, fscanf(out, "# plain %p", &plain));
	fclose(out);

	snprintf(core, sizeof(core), "/tmp/mshare-core.%d", pid);
	EXPECT_EQ(0, core_bytes_at(core, win)) TH_LOG("the window in %s", core);
	EXPECT_LE((long long)OBJ_SIZE, core_bytes_at(core, plain))
		TH_LOG("the plain copy at %p in %s", plain, core);
	unlink(core);
}

/* Read the pagemap entries of [addr, addr + len); returns present ones. */
static long pagemap_read(struct __test_metadata *_metadata, int pm,
			 const char *addr, size_t len, size_t page)
{
	size_t n = len / page, i;
	uint64_t *ents;
	long present = 0;

	ents = malloc(n * sizeof(*ents));
	ASSERT_NE(NULL, ents);
	ASSERT_EQ((ssize_t)(n * sizeof(*ents)),
		  pread(pm, ents, n * sizeof(*ents),
			(uintptr_t)addr / page * sizeof(*ents)))
		TH_LOG("pagemap of %p+%#zx: %s", addr, len, strerror(errno));
	for (i = 0; i < n; i++)
		present += !!(ents[i] & (1ULL << 63));
	free(ents);
	return present;
}

TEST_F(mm, proc_smaps_and_pagemap)
{
	const uint64_t align = self->align;
	char *win = map_window(_metadata, self, 15);
	char want[64], *smaps;
	size_t len;
	long present;
	int pm;

	smaps = read_text("/proc/self/smaps", &len);
	ASSERT_NE(NULL, smaps) TH_LOG("smaps: %s", strerror(errno));
	snprintf(want, sizeof(want), "%lx-%lx ", (unsigned long)win,
		 (unsigned long)win + align);
	EXPECT_NE(NULL, strstr(smaps, want)) TH_LOG("no %s in smaps", want);
	free(smaps);

	pm = ASSERT_SYS(open("/proc/self/pagemap", O_RDONLY));
	present = pagemap_read(_metadata, pm, win, 64 * SZ_1M, self->page);
	TH_LOG("pagemap: %ld of 512 object pages present", present);
	pagemap_read(_metadata, pm, win + align - SZ_2M, SZ_2M, self->page);
	close(pm);
	ASSERT_PATTERN(win, OBJ_SIZE, 15);
}

TEST_F(mm, map_populate_window)
{
	const uint64_t align = self->align;
	char *win;
	int fd2;

	map_window(_metadata, self, 16);
	ASSERT_EQ(0, munmap(self->win, align));
	self->win = NULL;

	win = mshare_window(self->fd, align, NULL, MAP_POPULATE);
	ASSERT_NE(MAP_FAILED, win) TH_LOG("%s", strerror(errno));
	self->win = win;
	EXPECT_TRUE(IS_ALIGNED(win, align));
	ASSERT_PATTERN(win, OBJ_SIZE, 16);

	/* also with nothing mapped in the region */
	fd2 = test_region(_metadata, &self->c, "empty", align);
	win = mshare_window(fd2, align, NULL, MAP_POPULATE);
	ASSERT_NE(MAP_FAILED, win) TH_LOG("%s", strerror(errno));
	ASSERT_READ_SIGNAL(SIGSEGV, win);
	munmap(win, align);
	close(fd2);
}

TEST_HARNESS_MAIN
