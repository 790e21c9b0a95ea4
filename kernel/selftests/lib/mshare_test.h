/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kselftest harness glue for the msharefs tests: include it (once) from
 * every test program instead of kselftest_harness.h. It adds assertions on
 * errno and on child exit status, and test-side helpers that assert.
 *
 * Children forked by a test must not use the ASSERT and EXPECT macros (a
 * failing ASSERT would unwind into the harness in the child); they use
 * CHILD_CHECK and report through their exit status (ASSERT_CHILD_OK).
 */
#ifndef MSHARE_TEST_H
#define MSHARE_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "mshare_util.h"

/*
 * The tests run on a debug kernel (KASAN, lockdep) under TCG, 20-50 times
 * slower than native: the harness default of 30 s per test is too short.
 */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 120

static inline const char *errname(int err)
{
	return err ? strerrorname_np(err) ?: "E?" : "0";
}

/*
 * _expr (a syscall-like call) must fail with errno _err. Like the harness
 * macros, these take an optional TH_LOG() after them; a call that
 * succeeded shows as errno 0.
 */
#define __MSHARE_ERRNO(_err, _expr, _assert)				\
	for (int __errno_seen = (errno = 0,				\
				 (long)(_expr) == -1 ? errno : 0),	\
		 __errno_once = 1; __errno_once; __errno_once = 0)	\
		__EXPECT(_err, #_err, __errno_seen, "errno of " #_expr,	\
			 ==, _assert)

#define ASSERT_ERRNO(_err, _expr)	__MSHARE_ERRNO(_err, _expr, 1)
#define EXPECT_ERRNO(_err, _expr)	__MSHARE_ERRNO(_err, _expr, 0)

/* _expr must not return -1 (or MAP_FAILED); evaluates to its result. */
#define ASSERT_SYS(_expr) ({						\
	long __ret;							\
	int __errno;							\
	errno = 0;							\
	__ret = (long)(_expr);						\
	__errno = errno;						\
	ASSERT_NE(-1, __ret)						\
		TH_LOG("%s: %s", #_expr, errname(__errno));		\
	__ret;								\
})

#define ASSERT_CHILD_OK(_pid) do {					\
	int __status = child_wait(_pid);				\
	ASSERT_TRUE(status_ok(__status))				\
		TH_LOG("child %d %s", (int)(_pid), status_str(__status)); \
} while (0)

#define ASSERT_CHILD_KILLED(_pid, _sig) do {				\
	int __status = child_wait(_pid);				\
	ASSERT_TRUE(status_killed_by(__status, _sig))			\
		TH_LOG("child %d %s, expected SIG%s", (int)(_pid),	\
		       status_str(__status), sigabbrev_np(_sig));	\
} while (0)

/* [_p, _p + _len) holds the pattern _seed, from pattern offset _start. */
#define ASSERT_PATTERN_AT(_p, _len, _seed, _start) do {			\
	ssize_t __bad = pattern_check_at(_p, _len, _seed, _start);	\
	ASSERT_EQ(-1, __bad)						\
		TH_LOG("pattern %lu differs at +%#zx of %s",		\
		       (unsigned long)(_seed), __bad, #_p);		\
} while (0)

#define ASSERT_PATTERN(_p, _len, _seed) ASSERT_PATTERN_AT(_p, _len, _seed, 0)

/* The file range [_off, _off + _len) of _fd holds the pattern _seed. */
#define ASSERT_FD_PATTERN(_fd, _off, _len, _seed) do {			\
	ssize_t __bad = fd_pattern_check(_fd, _off, _len, _seed);	\
	ASSERT_EQ(-1, __bad)						\
		TH_LOG("pattern %lu differs at +%#zx of fd %s (-2: I/O)", \
		       (unsigned long)(_seed), __bad, #_fd);		\
} while (0)

/* A probe of _p must raise _sig (0: must not fault). */
#define ASSERT_READ_SIGNAL(_sig, _p) do {				\
	int __sig = probe_read(_p, NULL);				\
	ASSERT_EQ(_sig, __sig)						\
		TH_LOG("read of %s (%p): signal %d", #_p,		\
		       (void *)(_p), __sig);				\
} while (0)

#define ASSERT_WRITE_SIGNAL(_sig, _p) do {				\
	int __sig = probe_write(_p, 0x5a5a5a5a5a5a5a5aULL);		\
	ASSERT_EQ(_sig, __sig)						\
		TH_LOG("write of %s (%p): signal %d", #_p,		\
		       (void *)(_p), __sig);				\
} while (0)

static inline void mshare_test_setup(struct __test_metadata *_metadata,
				     struct mshare_ctx *c, const char *tag)
{
	ASSERT_EQ(0, mshare_ctx_init(c, tag))
		TH_LOG("msharefs test directory: %s", strerror(errno));
}

/* A new region of the test directory, sized when size != 0. */
static inline int test_region(struct __test_metadata *_metadata,
			      const struct mshare_ctx *c, const char *name,
			      uint64_t size)
{
	int fd = mshare_create(c, name, size);

	ASSERT_LE(0, fd)
		TH_LOG("region %s of %#lx bytes: %s", name,
		       (unsigned long)size, strerror(errno));
	return fd;
}

/* A read-write window of the region fd of the given size. */
static inline char *test_window(struct __test_metadata *_metadata, int fd,
				uint64_t size)
{
	char *win = mshare_window(fd, size, NULL, 0);

	ASSERT_NE(MAP_FAILED, win)
		TH_LOG("mmap of a window: %s", strerror(errno));
	return win;
}

static inline void test_map_anon(struct __test_metadata *_metadata, int fd,
				 uint64_t roff, uint64_t size)
{
	ASSERT_EQ(0, mshare_map_anon(fd, roff, size, 0))
		TH_LOG("anonymous object at %#lx+%#lx: %s",
		       (unsigned long)roff, (unsigned long)size,
		       strerror(errno));
}

static inline void test_map_fd(struct __test_metadata *_metadata, int fd,
			       uint64_t roff, uint64_t size, int objfd,
			       uint64_t off)
{
	ASSERT_EQ(0, mshare_map_fd(fd, roff, size, objfd, off))
		TH_LOG("object fd %d at %#lx+%#lx: %s", objfd,
		       (unsigned long)roff, (unsigned long)size,
		       strerror(errno));
}

/* --- the mshare system calls ------------------------------------------ */

/* A new region of mshare_create(O_CLOEXEC), sized when size != 0. */
static inline int test_new_region(struct __test_metadata *_metadata,
				  uint64_t size)
{
	int fd = mshare_new(size, O_CLOEXEC);

	ASSERT_LE(0, fd)
		TH_LOG("mshare_create of a region of %#lx bytes: %s%s",
		       (unsigned long)size, strerror(errno),
		       errno == ENOSYS ?
		       " (kernel without the mshare system calls)" : "");
	return fd;
}

/* mshare_attach() that must work; returns the window. */
static inline char *test_attach(struct __test_metadata *_metadata, int fd,
				uint64_t offset, uint64_t size,
				unsigned int flags)
{
	char *win = sys_mshare_attach(fd, offset, size, NULL, flags);

	ASSERT_NE(MAP_FAILED, win)
		TH_LOG("mshare_attach(%d, %#lx, %#lx, flags %#x): %s", fd,
		       (unsigned long)offset, (unsigned long)size, flags,
		       strerror(errno));
	return win;
}

static inline void test_sys_map_anon(struct __test_metadata *_metadata,
				     int fd, uint64_t roff, uint64_t size,
				     unsigned int extra_flags)
{
	ASSERT_EQ(0, sys_mshare_map_anon(fd, roff, size, extra_flags))
		TH_LOG("mshare_map of an anonymous object at %#lx+%#lx: %s",
		       (unsigned long)roff, (unsigned long)size,
		       strerror(errno));
}

static inline void test_sys_map_fd(struct __test_metadata *_metadata,
				   int fd, uint64_t roff, uint64_t size,
				   int bfd, uint64_t boff)
{
	ASSERT_EQ(0, sys_mshare_map_obj(fd, roff, size, boff,
					PROT_READ | PROT_WRITE, 0, bfd))
		TH_LOG("mshare_map of fd %d+%#lx at %#lx+%#lx: %s", bfd,
		       (unsigned long)boff, (unsigned long)roff,
		       (unsigned long)size, strerror(errno));
}

/* The value of line "<key>:" of /proc/<pid>/fdinfo/<fd>, which must exist. */
static inline long long test_fdinfo(struct __test_metadata *_metadata,
				    pid_t pid, int fd, const char *key)
{
	long long val = -1;

	ASSERT_EQ(0, fdinfo_get(pid, fd, key, &val))
		TH_LOG("%s of fdinfo %d of pid %d: %s", key, fd,
		       pid ? pid : getpid(), strerror(errno));
	return val;
}

/* --- memory cgroups ---------------------------------------------------- */

struct cg_numbers {
	long long current, shmem, pagetables;	/* bytes */
};

/* memory.current and memory.stat's shmem and pagetables of cgroup cg. */
static inline void test_cg_measure(struct __test_metadata *_metadata,
				   const char *cg, struct cg_numbers *n)
{
	n->current = cg_current(cg);
	n->shmem = cg_stat(cg, "shmem");
	n->pagetables = cg_stat(cg, "pagetables");
	ASSERT_LE(0, n->current) TH_LOG("%s/memory.current", cg);
	ASSERT_LE(0, n->shmem) TH_LOG("no shmem in %s/memory.stat", cg);
	ASSERT_LE(0, n->pagetables)
		TH_LOG("no pagetables in %s/memory.stat", cg);
}

/* /proc/<pid>/cgroup is "0::/<path of cg below CG_ROOT>". */
static inline void assert_in_cgroup(struct __test_metadata *_metadata,
				    pid_t pid, const char *cg)
{
	char path[64], want[PATH_MAX + 8], *text;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	snprintf(want, sizeof(want), "0::%s\n", cg + strlen(CG_ROOT));
	text = read_text(path, NULL);
	ASSERT_NE(NULL, text);
	EXPECT_NE(NULL, strstr(text, want))
		TH_LOG("pid %d is in %s, not %s", pid, text, cg);
	free(text);
}

#endif /* MSHARE_TEST_H */
