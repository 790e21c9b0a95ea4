// SPDX-License-Identifier: GPL-2.0
/*
 * Ownership of a region made by mshare_create() is the owner file's: the
 * struct file mshare_create() returned. Every descriptor of that file
 * (the first, its dup()s, a forked child's copy, a copy received over
 * SCM_RIGHTS, one kept across exec() without close-on-exec) may size,
 * map, unmap, protect and advise; any other file of the region, such as
 * one reopened through /proc, gets EPERM. The region lives until the last
 * reference to the owner file goes, and a window never keeps it: then its
 * contents go (windows fault with SIGSEGV), fdinfo's mshare-owned reads 0
 * and every remaining file gets ENXIO. Reopening through
 * /proc/{self,thread-self,PID}/fd and /proc/PID/map_files is for
 * processes holding the owner file only (EACCES), and gives a file without
 * ownership, read-only or read-write by the open mode.
 *
 * The tests: dup() carries ownership; the owner file handed to another
 * process, by fork(), over a unix socket or taken with pidfd_getfd(),
 * makes it an owner, and the region lives while either holds it (it
 * closes, exits or is killed: the FIXTURE_VARIANTs of holder); exec()
 * with and without close-on-exec (the test binary runs itself with
 * EXEC_ARG); every way of reopening, by a holder, by a non-holder, by a
 * forked holder (variants of reopen); a read-only holder; a window does
 * not keep the region (attach or mmap);
 * fdinfo's mshare-owned and mshare-owner-fd; the memory cgroup charged
 * (the creator's, even after a hand-off, the creator's exit and the
 * removal of its cgroup; SKIPs without a cgroup2 memory controller); the
 * OOM badness of the processes holding the owner file; no memory or page
 * tables left after the last owner; and a stress test: sharers check
 * data in their windows while the owner file goes from process to process
 * (MSHARE_HANDOFF_ROUNDS, 60).
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "mshare_test.h"

#define OBJ_ROFF	SZ_1G
#define OBJ_SIZE	SZ_1M
#define SCRATCH_ROFF	(2 * SZ_1G)	/* where owner checks map and unmap */
#define SCRATCH_SIZE	SZ_64K
#define STEP_TIMEOUT_MS	(100 * 1000)
#define FREE_TIMEOUT_S	30
#define LEAK_WAIT_S	15	/* for the region's page tables to go */
#define EXEC_ARG	"--mshare-handoff-exec-holder"

static bool failed_with(long ret, int err)
{
	return ret == -1 && errno == err;
}

static int accmode(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : (fl & O_ACCMODE);
}

/* --- what an owner may do, and what nobody else may --------------------- */

static char why_buf[256];

#define WHY(fmt, ...) ({						\
	snprintf(why_buf, sizeof(why_buf), fmt, ##__VA_ARGS__);		\
	(const char *)why_buf;						\
})

/*
 * Every change through fd, on the scratch part of the region: map, protect,
 * advise, unmap (system calls and ioctls). NULL if all worked, else what
 * failed.
 */
static const char *owner_changes(int fd)
{
	if (sys_mshare_map_anon(fd, SCRATCH_ROFF, SCRATCH_SIZE, 0))
		return WHY("mshare_map: %s", strerror(errno));
	if (sys_mshare_protect(fd, SCRATCH_ROFF, SCRATCH_SIZE, PROT_READ))
		return WHY("mshare_protect(PROT_READ): %s", strerror(errno));
	if (sys_mshare_protect(fd, SCRATCH_ROFF, SCRATCH_SIZE,
			       PROT_READ | PROT_WRITE))
		return WHY("mshare_protect(RW): %s", strerror(errno));
	if (sys_mshare_advise(fd, SCRATCH_ROFF, SCRATCH_SIZE, MADV_DONTNEED))
		return WHY("mshare_advise: %s", strerror(errno));
	if (sys_mshare_unmap(fd, SCRATCH_ROFF, SCRATCH_SIZE))
		return WHY("mshare_unmap: %s", strerror(errno));
	if (mshare_map_anon(fd, SCRATCH_ROFF, SCRATCH_SIZE, 0))
		return WHY("MSHAREFS_CREATE_MAPPING: %s", strerror(errno));
	if (mshare_unmap(fd, SCRATCH_ROFF, SCRATCH_SIZE))
		return WHY("MSHAREFS_UNMAP: %s", strerror(errno));
	return NULL;
}

#define REFUSED(_expr, _err) do {					\
	errno = 0;							\
	if (!failed_with((long)(_expr), _err))				\
		return WHY("%s: %s, not %s", #_expr,			\
			   errname(errno), strerrorname_np(_err));	\
} while (0)

/*
 * Every change through fd, a descriptor of a sized, live region that is
 * not the owner file, fails with err (EPERM; ENXIO once the region is
 * gone). The VFS refuses sizing through a read-only descriptor itself.
 */
static const char *changes_refused(int fd, int err)
{
	bool ro = accmode(fd) == O_RDONLY;
	struct stat st;
	off_t size;

	/* a size the owner could not set either: sizing happens once */
	size = fstat(fd, &st) || !st.st_size ? (off_t)SZ_4K : 2 * st.st_size;

	REFUSED(sys_mshare_map_anon(fd, SCRATCH_ROFF, SCRATCH_SIZE, 0), err);
	REFUSED(sys_mshare_unmap(fd, OBJ_ROFF, OBJ_SIZE), err);
	REFUSED(sys_mshare_protect(fd, OBJ_ROFF, OBJ_SIZE, PROT_READ), err);
	REFUSED(sys_mshare_advise(fd, OBJ_ROFF, OBJ_SIZE, MADV_DONTNEED), err);
	REFUSED(sys_mshare_advise(fd, OBJ_ROFF, OBJ_SIZE, MADV_WILLNEED), err);
	REFUSED(mshare_map_anon(fd, SCRATCH_ROFF, SCRATCH_SIZE, 0), err);
	REFUSED(mshare_unmap(fd, OBJ_ROFF, OBJ_SIZE), err);
	if (ro) {
		errno = 0;
		if (ftruncate(fd, size) != -1 ||
		    (errno != EINVAL && errno != EBADF))
			return WHY("ftruncate of a read-only fd: %s",
				   errname(errno));
		REFUSED(fallocate(fd, 0, 0, size), EBADF);
	} else {
		REFUSED(ftruncate(fd, size), err);
		REFUSED(fallocate(fd, 0, 0, size), err);
	}
	return NULL;
}

/* fdinfo's mshare-owned and mshare-owner-fd of fd are owned, owner_fd. */
static const char *fdinfo_owner(pid_t pid, int fd, int owned, int owner_fd)
{
	long long o = -1, f = -1;

	if (fdinfo_has(pid, fd, "mshare-owner"))
		return WHY("fdinfo of fd %d has an mshare-owner line", fd);
	if (fdinfo_get(pid, fd, "mshare-owned", &o) ||
	    fdinfo_get(pid, fd, "mshare-owner-fd", &f))
		return WHY("fdinfo of fd %d: %s", fd, strerror(errno));
	if (o != owned || f != owner_fd)
		return WHY("fdinfo of fd %d: mshare-owned %lld, mshare-owner-fd %lld; want %d, %d",
			   fd, o, f, owned, owner_fd);
	return NULL;
}

/* In a child: report and _exit(1) unless the check (NULL: fine) passed. */
#define CHILD_OK(_check) do {						\
	const char *__why = (_check);					\
	CHILD_CHECK(!__why, "%s", __why);				\
} while (0)

#define ASSERT_OK(_check) do {						\
	const char *__why = (_check);					\
	ASSERT_EQ(NULL, __why) TH_LOG("%s: %s", #_check, __why);	\
} while (0)

/* --- the region of a test, and how to tell it lives -------------------- */

struct region {
	int fd;		/* the owner file, or -1 once let go */
	int ro, rw;	/* reopened descriptors: they own nothing */
	char *win;	/* window through the owner file */
	uint64_t align;
};

static void region_init(struct region *r)
{
	r->fd = r->ro = r->rw = -1;
	r->win = NULL;
}

static void region_fini(struct region *r)
{
	if (r->win && r->win != MAP_FAILED)
		munmap(r->win, r->align);
	if (r->fd >= 0)
		close(r->fd);
	if (r->ro >= 0)
		close(r->ro);
	if (r->rw >= 0)
		close(r->rw);
	region_init(r);
}

/*
 * A new region of one alignment unit with a stamped object at OBJ_ROFF,
 * a window, and two watchers: reopened read-only and read-write files.
 */
static void make_region(struct __test_metadata *_metadata, struct region *r,
			uint64_t align, unsigned int create_flags)
{
	r->align = align;
	r->fd = mshare_new(align, create_flags);
	ASSERT_LE(0, r->fd) TH_LOG("mshare_create: %s", strerror(errno));
	test_sys_map_anon(_metadata, r->fd, OBJ_ROFF, OBJ_SIZE, 0);
	r->win = test_attach(_metadata, r->fd, 0, 0, 0);
	stamp_pages(r->win + OBJ_ROFF, OBJ_SIZE, 1);
	r->ro = fd_reopen(r->fd, O_RDONLY);
	ASSERT_LE(0, r->ro) TH_LOG("reopen O_RDONLY: %s", strerror(errno));
	r->rw = fd_reopen(r->fd, O_RDWR);
	ASSERT_LE(0, r->rw) TH_LOG("reopen O_RDWR: %s", strerror(errno));
}

static void close_owner_fd(struct __test_metadata *_metadata,
			   struct region *r)
{
	ASSERT_EQ(0, close(r->fd));
	r->fd = -1;
}

static void assert_alive(struct __test_metadata *_metadata, struct region *r)
{
	ASSERT_EQ(-1, stamps_check(r->win + OBJ_ROFF, OBJ_SIZE, 1))
		TH_LOG("the window lost its data");
	ASSERT_OK(fdinfo_owner(0, r->ro, 1, 0));
	ASSERT_OK(fdinfo_owner(0, r->rw, 1, 0));
	ASSERT_OK(changes_refused(r->rw, EPERM));
}

/* A child touches the window it inherits: it must die of SIGSEGV. */
static void assert_child_faults(struct __test_metadata *_metadata, char *p)
{
	pid_t pid;

	pid = ASSERT_SYS(child_fork());
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL);
		signal(SIGBUS, SIG_DFL);
		(void)*(volatile uint64_t *)p;
		_exit(0);
	}
	ASSERT_CHILD_KILLED(pid, SIGSEGV);
}

/* The region is gone: windows fault, nothing attaches, changes ENXIO. */
static void assert_gone(struct __test_metadata *_metadata, struct region *r)
{
	ASSERT_READ_SIGNAL(SIGSEGV, r->win + OBJ_ROFF);
	ASSERT_WRITE_SIGNAL(SIGSEGV, r->win + OBJ_ROFF + OBJ_SIZE - 8);
	assert_child_faults(_metadata, r->win + OBJ_ROFF);
	ASSERT_OK(fdinfo_owner(0, r->ro, 0, 0));
	ASSERT_OK(fdinfo_owner(0, r->rw, 0, 0));
	EXPECT_ERRNO(ENXIO, sys_mshare_attach(r->rw, 0, 0, NULL, 0));
	EXPECT_ERRNO(ENXIO, sys_mshare_attach(r->ro, 0, 0, NULL,
					      MSHARE_ATTACH_RDONLY));
	EXPECT_ERRNO(ENXIO, mmap(NULL, r->align, PROT_READ | PROT_WRITE,
				 MAP_SHARED, r->rw, 0));
	EXPECT_ERRNO(ENXIO, mmap(NULL, r->align, PROT_READ, MAP_SHARED, r->ro,
				 0));
	ASSERT_OK(changes_refused(r->rw, ENXIO));
}

/* --- plain tests ----------------------------------------------------------- */

FIXTURE(handoff) {
	struct mshare_ctx c;
	struct region r;
};

FIXTURE_SETUP(handoff)
{
	region_init(&self->r);
	mshare_test_setup(_metadata, &self->c, "handoff");
}

FIXTURE_TEARDOWN(handoff)
{
	child_kill_all();
	region_fini(&self->r);
	mshare_ctx_fini(&self->c);
}

TEST_F(handoff, dup_carries_ownership)
{
	struct region *r = &self->r;
	int d1, d2;

	make_region(_metadata, r, self->c.align, O_CLOEXEC);
	d1 = ASSERT_SYS(dup(r->fd));
	d2 = ASSERT_SYS(fcntl(r->fd, F_DUPFD_CLOEXEC, 100));
	ASSERT_OK(fdinfo_owner(0, d1, 1, 1));
	ASSERT_OK(fdinfo_owner(0, d2, 1, 1));
	ASSERT_OK(owner_changes(d1));
	ASSERT_OK(owner_changes(d2));

	close_owner_fd(_metadata, r);
	assert_alive(_metadata, r);
	ASSERT_OK(owner_changes(d2));
	ASSERT_EQ(0, close(d2));
	assert_alive(_metadata, r);
	ASSERT_OK(owner_changes(d1));
	/* the last descriptor of the owner file */
	ASSERT_EQ(0, close(d1));
	assert_gone(_metadata, r);
}

/*
 * fdinfo: mshare-owned is whether the region still has its owner file,
 * mshare-owner-fd whether this descriptor is of it; the owner's pid is
 * shown no more.
 */
TEST_F(handoff, fdinfo_owned_and_owner_fd)
{
	struct region *r = &self->r;
	char path[64];
	int d, t;
	pid_t pid;

	make_region(_metadata, r, self->c.align, O_CLOEXEC);
	d = ASSERT_SYS(dup(r->fd));
	snprintf(path, sizeof(path), "/proc/thread-self/fd/%d", r->fd);
	t = ASSERT_SYS(open(path, O_RDWR | O_CLOEXEC));
	ASSERT_OK(fdinfo_owner(0, r->fd, 1, 1));
	ASSERT_OK(fdinfo_owner(0, d, 1, 1));
	ASSERT_OK(fdinfo_owner(0, r->rw, 1, 0));
	ASSERT_OK(fdinfo_owner(0, r->ro, 1, 0));
	ASSERT_OK(fdinfo_owner(0, t, 1, 0));

	/* the same in a child, for what it inherited */
	pid = ASSERT_SYS(child_fork());
	if (pid == 0) {
		CHILD_OK(fdinfo_owner(0, r->fd, 1, 1));
		CHILD_OK(fdinfo_owner(0, r->rw, 1, 0));
		_exit(0);
	}
	ASSERT_CHILD_OK(pid);

	ASSERT_EQ(0, close(d));
	close_owner_fd(_metadata, r);
	ASSERT_OK(fdinfo_owner(0, r->rw, 0, 0));
	ASSERT_OK(fdinfo_owner(0, r->ro, 0, 0));
	ASSERT_OK(fdinfo_owner(0, t, 0, 0));
	close(t);
}

/* --- the owner file in another process ------------------------------------ */

/* pidfd_getfd() takes a file as SCM_RIGHTS passes it: ownership goes too. */
enum how_given { BY_FORK, BY_SCM_RIGHTS, BY_PIDFD_GETFD };
enum how_ends { BY_CLOSE, BY_EXIT, BY_KILL };

FIXTURE(holder) {
	struct mshare_ctx c;
	struct region r;
};

FIXTURE_VARIANT(holder) {
	enum how_given given;	/* how the other process gets the owner file */
	enum how_ends ends;	/* how it lets go of it, after this one did */
};

FIXTURE_VARIANT_ADD(holder, fork_close) { .given = BY_FORK, .ends = BY_CLOSE };
FIXTURE_VARIANT_ADD(holder, fork_exit) { .given = BY_FORK, .ends = BY_EXIT };
FIXTURE_VARIANT_ADD(holder, fork_kill) { .given = BY_FORK, .ends = BY_KILL };
FIXTURE_VARIANT_ADD(holder, scm_close) { .given = BY_SCM_RIGHTS, .ends = BY_CLOSE };
FIXTURE_VARIANT_ADD(holder, scm_exit) { .given = BY_SCM_RIGHTS, .ends = BY_EXIT };
FIXTURE_VARIANT_ADD(holder, scm_kill) { .given = BY_SCM_RIGHTS, .ends = BY_KILL };
FIXTURE_VARIANT_ADD(holder, getfd_close) { .given = BY_PIDFD_GETFD, .ends = BY_CLOSE };
FIXTURE_VARIANT_ADD(holder, getfd_exit) { .given = BY_PIDFD_GETFD, .ends = BY_EXIT };
FIXTURE_VARIANT_ADD(holder, getfd_kill) { .given = BY_PIDFD_GETFD, .ends = BY_KILL };

FIXTURE_SETUP(holder)
{
	region_init(&self->r);
	mshare_test_setup(_metadata, &self->c, "holder");
}

FIXTURE_TEARDOWN(holder)
{
	child_kill_all();
	region_fini(&self->r);
	mshare_ctx_fini(&self->c);
}

struct holder_msg {
	char tag;
	int fd;		/* the holder's number of the owner file */
};

/* Take descriptor number fd of the parent with pidfd_getfd(). */
static int take_from_parent(int fd)
{
	int pidfd = syscall(SYS_pidfd_open, getppid(), 0), taken;

	if (pidfd < 0)
		return -1;
	taken = syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	close(pidfd);
	return taken;
}

/*
 * The other holder: gets the owner file (fd inherited, over sock, or
 * taken from the parent with the number read from sock), checks that it
 * owns the region and may reopen it, attaches a window, says so, then
 * does what it is told: 'c' close the owner file (its window must fault
 * then), 'x' exit.
 */
static int child_holder(enum how_given given, int fd, int sock, int cmd_fd,
			int rep_fd)
{
	struct holder_msg m = { .tag = 'R' };
	char path[64], cmd;
	int re;
	char *w;

	if (given == BY_SCM_RIGHTS) {
		fd = fd_recv(sock, STEP_TIMEOUT_MS);
		CHILD_CHECK(fd >= 0, "fd_recv: %m");
	} else if (given == BY_PIDFD_GETFD) {
		CHILD_CHECK(msg_recv(sock, &fd, sizeof(fd), STEP_TIMEOUT_MS) ==
			    0, "%m");
		fd = take_from_parent(fd);
		CHILD_CHECK(fd >= 0, "pidfd_getfd: %m");
	}
	CHILD_OK(fdinfo_owner(0, fd, 1, 1));
	CHILD_OK(owner_changes(fd));
	w = sys_mshare_attach(fd, 0, 0, NULL, 0);
	CHILD_CHECK(w != MAP_FAILED, "attach: %m");
	CHILD_CHECK(stamps_check(w + OBJ_ROFF, OBJ_SIZE, 1) == -1, "data");
	/* a holder may reopen; the new file owns nothing */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	re = open(path, O_RDWR | O_CLOEXEC);
	CHILD_CHECK(re >= 0, "reopen by a holder: %m");
	CHILD_OK(fdinfo_owner(0, re, 1, 0));
	CHILD_OK(changes_refused(re, EPERM));
	close(re);
	m.fd = fd;
	CHILD_CHECK(msg_send(rep_fd, &m, sizeof(m)) == 0, "%m");
	for (;;) {
		CHILD_CHECK(msg_recv(cmd_fd, &cmd, 1, STEP_TIMEOUT_MS) == 0,
			    "%m");
		if (cmd == 'x')
			return 0;
		CHILD_CHECK(cmd == 'c', "command %c", cmd);
		CHILD_CHECK(close(fd) == 0, "%m");
		CHILD_CHECK(probe_read(w + OBJ_ROFF, NULL) == SIGSEGV,
			    "the window works after the last owner closed");
		m.tag = 'C';
		CHILD_CHECK(msg_send(rep_fd, &m, sizeof(m)) == 0, "%m");
	}
}

TEST_F(holder, owns_until_both_let_go)
{
	int sv[2] = { -1, -1 }, cmd[2], rep[2];
	struct region *r = &self->r;
	struct holder_msg m;
	char c;
	pid_t pid = 0;

	ASSERT_EQ(0, pipe2(cmd, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(rep, O_CLOEXEC));
	if (variant->given != BY_FORK) {
		/* a process from before the region */
		ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
					sv));
		pid = ASSERT_SYS(child_fork());
		if (pid == 0)
			_exit(child_holder(variant->given, -1, sv[1], cmd[0],
					   rep[1]));
	}
	make_region(_metadata, r, self->c.align, O_CLOEXEC);
	if (variant->given == BY_FORK) {
		pid = ASSERT_SYS(child_fork());
		if (pid == 0)
			_exit(child_holder(BY_FORK, r->fd, -1, cmd[0], rep[1]));
	} else if (variant->given == BY_SCM_RIGHTS) {
		ASSERT_EQ(0, fd_send(sv[0], r->fd));
	} else {
		ASSERT_EQ(0, msg_send(sv[0], &r->fd, sizeof(r->fd)));
	}
	/* the holder's ends: its death shows as EOF */
	close(cmd[0]);
	close(rep[1]);
	ASSERT_EQ(0, msg_recv(rep[0], &m, sizeof(m), STEP_TIMEOUT_MS))
		TH_LOG("holder: %s", strerror(errno));

	/* both own it */
	ASSERT_OK(fdinfo_owner(pid, m.fd, 1, 1));
	ASSERT_OK(fdinfo_owner(0, r->fd, 1, 1));
	ASSERT_OK(owner_changes(r->fd));

	/* this one lets go: the region stays with the other */
	close_owner_fd(_metadata, r);
	assert_alive(_metadata, r);
	ASSERT_OK(fdinfo_owner(pid, m.fd, 1, 1));
	/* without the owner file, this process may not reopen any more */
	EXPECT_ERRNO(EACCES, fd_reopen(r->ro, O_RDONLY));
	EXPECT_ERRNO(EACCES, fd_reopen(r->rw, O_RDWR));
	EXPECT_ERRNO(EACCES, fd_reopen(r->ro, O_RDWR));

	/* and the other one too */
	switch (variant->ends) {
	case BY_CLOSE:
		c = 'c';
		ASSERT_EQ(0, msg_send(cmd[1], &c, 1));
		ASSERT_EQ(0, msg_recv(rep[0], &m, sizeof(m), STEP_TIMEOUT_MS))
			TH_LOG("holder closing: %s", strerror(errno));
		ASSERT_EQ('C', m.tag);
		assert_gone(_metadata, r);
		c = 'x';
		ASSERT_EQ(0, msg_send(cmd[1], &c, 1));
		ASSERT_CHILD_OK(pid);
		break;
	case BY_EXIT:
		c = 'x';
		ASSERT_EQ(0, msg_send(cmd[1], &c, 1));
		ASSERT_CHILD_OK(pid);
		assert_gone(_metadata, r);
		break;
	case BY_KILL:
		ASSERT_EQ(0, kill(pid, SIGKILL));
		ASSERT_CHILD_KILLED(pid, SIGKILL);
		assert_gone(_metadata, r);
		break;
	}
	close(cmd[1]);
	close(rep[0]);
	if (sv[0] >= 0) {
		close(sv[0]);
		close(sv[1]);
	}
}

/* --- exec ------------------------------------------------------------------ */

FIXTURE(exec) {
	struct mshare_ctx c;
	struct region r;
};

FIXTURE_VARIANT(exec) {
	bool cloexec;	/* mshare_create(O_CLOEXEC) */
};

FIXTURE_VARIANT_ADD(exec, cloexec) { .cloexec = true };
FIXTURE_VARIANT_ADD(exec, kept) { .cloexec = false };

FIXTURE_SETUP(exec)
{
	region_init(&self->r);
	mshare_test_setup(_metadata, &self->c, "exec");
}

FIXTURE_TEARDOWN(exec)
{
	child_kill_all();
	region_fini(&self->r);
	mshare_ctx_fini(&self->c);
}

/*
 * The test binary run again by exec_runs_holder(): EXEC_ARG <fd> <kept>
 * <ready fd> <gate fd>. With kept, fd must be the owner file still, which
 * makes this new program an owner: it checks so, says 'R' and holds it
 * until the gate closes. Otherwise fd must be closed. 'F' on failure.
 */
static int exec_holder(int fd, bool kept, int ready, int gate)
{
	char *w, c = 'R', path[64];
	const char *why;
	int re;

	if (!kept) {
		errno = 0;
		if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) {
			fprintf(stderr, "# exec holder: close-on-exec fd %d is open\n",
				fd);
			c = 'F';
		}
		return msg_send(ready, &c, 1) || c != 'R';
	}
	c = 'F';
	if (fcntl(fd, F_GETFD) != 0) {
		fprintf(stderr, "# exec holder: fd %d: %s, flags %d\n", fd,
			strerror(errno), fcntl(fd, F_GETFD));
		goto out;
	}
	why = fdinfo_owner(0, fd, 1, 1) ?: owner_changes(fd);
	if (why) {
		fprintf(stderr, "# exec holder: %s\n", why);
		goto out;
	}
	w = sys_mshare_attach(fd, 0, 0, NULL, 0);
	if (w == MAP_FAILED || stamps_check(w + OBJ_ROFF, OBJ_SIZE, 1) != -1) {
		fprintf(stderr, "# exec holder: window: %s\n",
			w == MAP_FAILED ? strerror(errno) : "bad data");
		goto out;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	re = open(path, O_RDONLY | O_CLOEXEC);
	if (re < 0) {
		fprintf(stderr, "# exec holder: reopen: %s\n", strerror(errno));
		goto out;
	}
	close(re);
	c = 'R';
out:
	if (msg_send(ready, &c, 1) || c != 'R')
		return 1;
	return gate_wait(&(struct gate){ .rfd = gate, .wfd = -1 }) ? 1 : 0;
}

/* Runs before main(): when started as the exec holder, be only that. */
static void __attribute__((constructor)) exec_holder_main(void)
{
	char *cmd, *arg[6] = { NULL };
	size_t len, off;
	int n = 0;

	cmd = read_text("/proc/self/cmdline", &len);
	if (!cmd)
		return;
	for (off = 0; off < len && n < 6; off += strlen(cmd + off) + 1)
		arg[n++] = cmd + off;
	if (n == 6 && !strcmp(arg[1], EXEC_ARG))
		_exit(exec_holder(atoi(arg[2]), atoi(arg[3]), atoi(arg[4]),
				  atoi(arg[5])));
	free(cmd);
}

TEST_F(exec, owner_file_across_exec)
{
	struct region *r = &self->r;
	int ready[2], gate[2], go[2];
	char c, a_fd[16], a_kept[4], a_ready[16], a_gate[16];
	pid_t pid;

	make_region(_metadata, r, self->c.align,
		    variant->cloexec ? O_CLOEXEC : 0);
	ASSERT_EQ(!!variant->cloexec, !!(fcntl(r->fd, F_GETFD) & FD_CLOEXEC));
	ASSERT_EQ(0, pipe2(ready, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(gate, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(go, O_CLOEXEC));
	snprintf(a_fd, sizeof(a_fd), "%d", r->fd);
	snprintf(a_kept, sizeof(a_kept), "%d", !variant->cloexec);
	snprintf(a_ready, sizeof(a_ready), "%d", ready[1]);
	snprintf(a_gate, sizeof(a_gate), "%d", gate[0]);
	pid = ASSERT_SYS(child_fork());
	if (pid == 0) {
		close(ready[0]);
		close(gate[1]);
		close(go[1]);
		/* what the new program gets besides the region */
		fcntl(ready[1], F_SETFD, 0);
		fcntl(gate[0], F_SETFD, 0);
		/* exec once the parent has let go of the owner file */
		if (gate_wait(&(struct gate){ .rfd = go[0], .wfd = -1 }))
			_exit(2);
		execl("/proc/self/exe", "mshare_handoff", EXEC_ARG, a_fd,
		      a_kept, a_ready, a_gate, (char *)NULL);
		_exit(127);
	}
	close(ready[1]);
	close(gate[0]);
	close(go[0]);

	/* the child is the only holder */
	close_owner_fd(_metadata, r);
	assert_alive(_metadata, r);
	close(go[1]);
	ASSERT_EQ(0, msg_recv(ready[0], &c, 1, STEP_TIMEOUT_MS))
		TH_LOG("exec holder: %s", strerror(errno));
	ASSERT_EQ('R', c) TH_LOG("the exec holder failed (see its lines)");
	if (variant->cloexec) {
		/* exec closed the last owner descriptor */
		ASSERT_CHILD_OK(pid);
		assert_gone(_metadata, r);
	} else {
		/* the new program owns the region */
		assert_alive(_metadata, r);
		ASSERT_OK(fdinfo_owner(pid, atoi(a_fd), 1, 1));
		close(gate[1]);
		ASSERT_CHILD_OK(pid);
		assert_gone(_metadata, r);
	}
	if (variant->cloexec)
		close(gate[1]);
	close(ready[0]);
}

/* --- reopening through /proc ---------------------------------------------- */

enum via { VIA_SELF_FD, VIA_THREAD_SELF_FD, VIA_PID_FD, VIA_MAP_FILES };

FIXTURE(reopen) {
	struct mshare_ctx c;
	struct region r;
};

FIXTURE_VARIANT(reopen) {
	enum via via;
};

FIXTURE_VARIANT_ADD(reopen, self_fd) { .via = VIA_SELF_FD };
FIXTURE_VARIANT_ADD(reopen, thread_self_fd) { .via = VIA_THREAD_SELF_FD };
FIXTURE_VARIANT_ADD(reopen, pid_fd) { .via = VIA_PID_FD };
FIXTURE_VARIANT_ADD(reopen, map_files) { .via = VIA_MAP_FILES };

FIXTURE_SETUP(reopen)
{
	region_init(&self->r);
	mshare_test_setup(_metadata, &self->c, "reopen");
	make_region(_metadata, &self->r, self->c.align, O_CLOEXEC);
}

FIXTURE_TEARDOWN(reopen)
{
	child_kill_all();
	region_fini(&self->r);
	mshare_ctx_fini(&self->c);
}

/*
 * The path that opens the region again: fd of process pid (self and
 * thread-self: of the caller), or the map_files entry of window win.
 */
static const char *reopen_path(enum via via, pid_t pid, int fd,
			       const char *win, uint64_t len)
{
	static char path[96];

	switch (via) {
	case VIA_SELF_FD:
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		break;
	case VIA_THREAD_SELF_FD:
		snprintf(path, sizeof(path), "/proc/thread-self/fd/%d", fd);
		break;
	case VIA_PID_FD:
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
		break;
	case VIA_MAP_FILES:
		snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", pid,
			 (unsigned long)win, (unsigned long)win + len);
		break;
	}
	return path;
}

/* open(path) gives a file of the region that owns nothing; in a child. */
static const char *reopened_ok(const char *path, int flags, ino_t ino,
			       int *out)
{
	const char *why;
	struct stat st;
	int fd;

	fd = open(path, flags | O_CLOEXEC);
	if (fd < 0)
		return WHY("open(%s, %#x) by a holder: %s", path, flags,
			   strerror(errno));
	*out = fd;
	if (fstat(fd, &st) || st.st_ino != ino)
		return WHY("%s is another file", path);
	if (accmode(fd) != (flags & O_ACCMODE))
		return WHY("%s: access mode %d", path, accmode(fd));
	why = fdinfo_owner(0, fd, 1, 0);
	if (!why)
		why = changes_refused(fd, EPERM);
	return why;
}

static ino_t ino_of(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : st.st_ino;
}

/* A holder of the owner file reopens: read-write or read-only, no owner. */
TEST_F(reopen, holder_gets_file_without_ownership)
{
	struct region *r = &self->r;
	const char *path;
	int rw = -1, ro = -1;
	char *w;

	path = reopen_path(variant->via, getpid(), r->fd, r->win, r->align);
	ASSERT_OK(reopened_ok(path, O_RDWR, ino_of(r->fd), &rw));
	ASSERT_OK(reopened_ok(path, O_RDONLY, ino_of(r->fd), &ro));
	/* a read-write sharer's and a read-only sharer's windows */
	w = test_attach(_metadata, rw, 0, 0, 0);
	ASSERT_EQ(-1, stamps_check(w + OBJ_ROFF, OBJ_SIZE, 1));
	ASSERT_EQ(0, munmap(w, r->align));
	EXPECT_ERRNO(EACCES, sys_mshare_attach(ro, 0, 0, NULL, 0));
	w = test_attach(_metadata, ro, 0, 0, MSHARE_ATTACH_RDONLY);
	ASSERT_EQ(-1, stamps_check(w + OBJ_ROFF, OBJ_SIZE, 1));
	ASSERT_EQ(0, munmap(w, r->align));

	/* they keep nothing */
	close_owner_fd(_metadata, r);
	ASSERT_OK(fdinfo_owner(0, rw, 0, 0));
	ASSERT_OK(fdinfo_owner(0, ro, 0, 0));
	assert_gone(_metadata, r);
	close(rw);
	close(ro);
}

/*
 * A child without the owner file: it let go of the one it inherited and
 * holds the reopened watchers, with a window of its own. Every way of
 * reopening is EACCES, read-only included.
 */
static int child_non_holder(enum via via, struct region *r, pid_t parent)
{
	const int modes[] = { O_RDONLY, O_RDWR };
	const char *paths[2];
	unsigned int i, k;
	char *w;

	CHILD_CHECK(close(r->fd) == 0, "%m");
	w = sys_mshare_attach(r->rw, 0, 0, NULL, 0);
	CHILD_CHECK(w != MAP_FAILED, "attach: %m");
	switch (via) {
	case VIA_SELF_FD:
	case VIA_THREAD_SELF_FD:
		paths[0] = strdup(reopen_path(via, 0, r->rw, NULL, 0));
		/* a read-only holder never gets a read-write file */
		paths[1] = strdup(reopen_path(via, 0, r->ro, NULL, 0));
		break;
	case VIA_PID_FD:
		paths[0] = strdup(reopen_path(via, parent, r->fd, NULL, 0));
		paths[1] = strdup(reopen_path(via, getpid(), r->rw, NULL, 0));
		break;
	case VIA_MAP_FILES:
		paths[0] = strdup(reopen_path(via, parent, 0, r->win,
					      r->align));
		paths[1] = strdup(reopen_path(via, getpid(), 0, w, r->align));
		break;
	}
	for (i = 0; i < 2; i++) {
		for (k = 0; k < 2; k++) {
			errno = 0;
			CHILD_CHECK(failed_with(open(paths[i], modes[k] |
						     O_CLOEXEC), EACCES),
				    "open(%s, %#x) without the owner file: %m",
				    paths[i], modes[k]);
		}
	}
	CHILD_OK(fdinfo_owner(0, r->rw, 1, 0));
	return 0;
}

TEST_F(reopen, non_holder_eacces)
{
	pid_t pid;

	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(child_non_holder(variant->via, &self->r, getppid()));
	ASSERT_CHILD_OK(pid);
	assert_alive(_metadata, &self->r);
}

/*
 * A forked child holding the inherited owner file may reopen, also the
 * parent's descriptor and window: what counts is the caller's own table.
 */
static int child_holder_reopens(enum via via, struct region *r, pid_t parent)
{
	const char *path;
	int fd = -1;

	path = reopen_path(via, via == VIA_PID_FD || via == VIA_MAP_FILES ?
			   parent : 0, r->fd, r->win, r->align);
	CHILD_OK(reopened_ok(path, O_RDWR, ino_of(r->fd), &fd));
	close(fd);
	CHILD_OK(reopened_ok(path, O_RDONLY, ino_of(r->fd), &fd));
	close(fd);
	CHILD_OK(fdinfo_owner(0, r->fd, 1, 1));
	return 0;
}

TEST_F(reopen, forked_holder_reopens)
{
	pid_t pid;

	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(child_holder_reopens(variant->via, &self->r, getppid()));
	ASSERT_CHILD_OK(pid);
	assert_alive(_metadata, &self->r);
}

/*
 * A process given only a read-only descriptor (a process from before the
 * region): read-only windows, no change, no reopening, in any mode.
 */
static int child_read_only_holder(int sock, uint64_t align)
{
	char path[64], ok = 1;
	int fd;
	char *w;

	fd = fd_recv(sock, STEP_TIMEOUT_MS);
	CHILD_CHECK(fd >= 0, "fd_recv: %m");
	CHILD_CHECK(accmode(fd) == O_RDONLY, "mode %d", accmode(fd));
	CHILD_OK(fdinfo_owner(0, fd, 1, 0));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	CHILD_CHECK(failed_with(open(path, O_RDWR), EACCES),
		    "reopen O_RDWR of a read-only descriptor: %m");
	CHILD_CHECK(failed_with(open(path, O_RDONLY), EACCES),
		    "reopen O_RDONLY of a read-only descriptor: %m");
	snprintf(path, sizeof(path), "/proc/thread-self/fd/%d", fd);
	CHILD_CHECK(failed_with(open(path, O_RDWR), EACCES),
		    "reopen O_RDWR through thread-self: %m");
	CHILD_OK(changes_refused(fd, EPERM));
	errno = 0;
	CHILD_CHECK(sys_mshare_attach(fd, 0, 0, NULL, 0) == MAP_FAILED &&
		    errno == EACCES, "writable window: %m");
	w = sys_mshare_attach(fd, 0, 0, NULL, MSHARE_ATTACH_RDONLY);
	CHILD_CHECK(w != MAP_FAILED, "read-only window: %m");
	CHILD_CHECK(stamps_check(w + OBJ_ROFF, OBJ_SIZE, 1) == -1, "data");
	CHILD_CHECK(probe_write(w + OBJ_ROFF, 1) == SIGSEGV,
		    "write to a read-only window did not fault");
	CHILD_CHECK(munmap(w, align) == 0, "%m");
	CHILD_OK(fdinfo_owner(0, fd, 1, 0));
	CHILD_CHECK(msg_send(sock, &ok, 1) == 0, "%m");
	return 0;
}

TEST_F(handoff, read_only_holder_never_owns)
{
	struct region *r = &self->r;
	int sv[2];
	pid_t pid;
	char ok;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = ASSERT_SYS(child_fork());
	if (pid == 0) {
		close(sv[0]);
		_exit(child_read_only_holder(sv[1], self->c.align));
	}
	close(sv[1]);
	make_region(_metadata, r, self->c.align, O_CLOEXEC);
	ASSERT_EQ(0, fd_send(sv[0], r->ro));
	ASSERT_EQ(0, msg_recv(sv[0], &ok, 1, STEP_TIMEOUT_MS))
		TH_LOG("read-only holder: %s", strerror(errno));
	ASSERT_CHILD_OK(pid);
	assert_alive(_metadata, r);
	close(sv[0]);
}

/* --- a window keeps nothing ----------------------------------------------- */

FIXTURE(mapped) {
	struct mshare_ctx c;
	struct region r;
};

FIXTURE_VARIANT(mapped) {
	bool by_mmap;	/* the window by mmap(), else mshare_attach() */
};

FIXTURE_VARIANT_ADD(mapped, attach) { .by_mmap = false };
FIXTURE_VARIANT_ADD(mapped, mmap) { .by_mmap = true };

FIXTURE_SETUP(mapped)
{
	region_init(&self->r);
	mshare_test_setup(_metadata, &self->c, "mapped");
}

FIXTURE_TEARDOWN(mapped)
{
	child_kill_all();
	region_fini(&self->r);
	mshare_ctx_fini(&self->c);
}

/* The owner maps the region, then closes its last owner descriptor. */
TEST_F(mapped, window_does_not_keep_region)
{
	struct region *r = &self->r;
	const uint64_t a = self->c.align;
	char *w;

	make_region(_metadata, r, a, O_CLOEXEC);
	if (variant->by_mmap) {
		w = mmap(NULL, a, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
		ASSERT_NE(MAP_FAILED, w) TH_LOG("mmap: %s", strerror(errno));
	} else {
		w = test_attach(_metadata, r->fd, 0, 0, 0);
	}
	ASSERT_EQ(-1, stamps_check(w + OBJ_ROFF, OBJ_SIZE, 1));
	/* no other window: make_region's goes too */
	ASSERT_EQ(0, munmap(r->win, a));
	r->win = w;
	ASSERT_EQ(1, test_fdinfo(_metadata, 0, r->ro, "mshare-windows"));

	close_owner_fd(_metadata, r);
	assert_gone(_metadata, r);
	/* the window is still there, faulting */
	ASSERT_TRUE(maps_has_range(w, a));
}

/* --- memory cgroup --------------------------------------------------------- */

#define MEMCG_OBJ	(32 * SZ_1M)
#define MEMCG_OBJ2	(OBJ_ROFF + MEMCG_OBJ)	/* the second object */

FIXTURE(memcg) {
	struct mshare_ctx c;
	char cg_parent[PATH_MAX], cg_a[PATH_MAX + 8], cg_b[PATH_MAX + 8];
	bool memory_enabled;
};

FIXTURE_SETUP(memcg)
{
	mshare_test_setup(_metadata, &self->c, "memcg");
}

FIXTURE_TEARDOWN(memcg)
{
	child_kill_all();
	if (self->cg_a[0])
		cg_remove(self->cg_a);
	if (self->cg_b[0])
		cg_remove(self->cg_b);
	if (self->cg_parent[0])
		cg_remove(self->cg_parent);
	cg_memory_restore(self->memory_enabled);
	mshare_ctx_fini(&self->c);
}

/*
 * The creator: in cgroup A, makes the region with two MEMCG_OBJ objects,
 * populates the first (its pages and PTE tables are charged now), sends
 * the owner file over sock and exits.
 */
static int child_memcg_creator(const char *cg, uint64_t align, int sock)
{
	int fd;

	CHILD_CHECK(cg_join(cg) == 0, "join %s: %m", cg);
	fd = mshare_new(align, O_CLOEXEC);
	CHILD_CHECK(fd >= 0, "mshare_create: %m");
	CHILD_CHECK(sys_mshare_map_anon(fd, OBJ_ROFF, 2 * MEMCG_OBJ, 0) == 0,
		    "mshare_map: %m");
	/* one PTE table per 2 MiB for sure */
	CHILD_CHECK(sys_mshare_advise(fd, OBJ_ROFF, 2 * MEMCG_OBJ,
				      MADV_NOHUGEPAGE) == 0 || errno == EINVAL,
		    "MADV_NOHUGEPAGE: %m");
	CHILD_CHECK(sys_mshare_advise(fd, OBJ_ROFF, MEMCG_OBJ,
				      MADV_POPULATE_WRITE) == 0,
		    "MADV_POPULATE_WRITE: %m");
	CHILD_CHECK(fd_send(sock, fd) == 0, "fd_send: %m");
	return 0;
}

/*
 * The receiver: in cgroup B, gets the owner file, attaches, says 'A';
 * then 'f': writes every page of the second object, says 'F'; 'q': exits.
 */
static int child_memcg_receiver(const char *cg, int sock, int cmd_fd,
				int rep_fd)
{
	char *w, c = 'A';
	size_t off;
	int fd;

	CHILD_CHECK(cg_join(cg) == 0, "join %s: %m", cg);
	fd = fd_recv(sock, STEP_TIMEOUT_MS);
	CHILD_CHECK(fd >= 0, "fd_recv: %m");
	CHILD_OK(fdinfo_owner(0, fd, 1, 1));
	w = sys_mshare_attach(fd, 0, 0, NULL, 0);
	CHILD_CHECK(w != MAP_FAILED, "attach: %m");
	CHILD_CHECK(msg_send(rep_fd, &c, 1) == 0, "%m");
	for (;;) {
		CHILD_CHECK(msg_recv(cmd_fd, &c, 1, STEP_TIMEOUT_MS) == 0,
			    "%m");
		if (c == 'q')
			return 0;
		CHILD_CHECK(c == 'f', "command %c", c);
		for (off = 0; off < MEMCG_OBJ; off += SZ_4K)
			((volatile char *)w)[MEMCG_OBJ2 + off] = 1;
		c = 'F';
		CHILD_CHECK(msg_send(rep_fd, &c, 1) == 0, "%m");
	}
}

static void print_cg(const char *when, const char *name,
		     const struct cg_numbers *n0, const struct cg_numbers *n)
{
	ksft_print_msg("memcg-handoff-numbers: %s %s current_kib=%lld shmem_kib=%lld pagetables_kib=%lld (growth)\n",
		       when, name, (n->current - n0->current) >> 10,
		       (n->shmem - n0->shmem) >> 10,
		       (n->pagetables - n0->pagetables) >> 10);
}

/*
 * Hand-off moves no charge: the creator in A hands the owner file to a
 * process in B and exits, A is removed. A's charges stay, visible in the
 * parent, new faults by the receiver still go there, B pays nothing.
 */
TEST_F(memcg, charges_stay_with_creator_cgroup)
{
	const long long obj = MEMCG_OBJ;
	struct cg_numbers p0, a0, b0, a1, b1, p2, b2, p3, b3, p4;
	int sv[2], cmd[2], rep[2], ret;
	pid_t creator, receiver;
	char c, why[256];
	double start;

	ret = cg_memory_setup(&self->memory_enabled, why, sizeof(why));
	if (ret == -1)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, ret) TH_LOG("%s", why);
	cg_remove_stale();
	snprintf(self->cg_parent, sizeof(self->cg_parent), "%s/%shandoff.%d",
		 CG_ROOT, CG_PREFIX, getpid());
	ASSERT_EQ(0, mkdir(self->cg_parent, 0755))
		TH_LOG("mkdir %s: %s", self->cg_parent, strerror(errno));
	ASSERT_EQ(0, cg_write(self->cg_parent, "cgroup.subtree_control",
			      "+memory"))
		TH_LOG("+memory in %s: %s", self->cg_parent, strerror(errno));
	snprintf(self->cg_a, sizeof(self->cg_a), "%s/a", self->cg_parent);
	snprintf(self->cg_b, sizeof(self->cg_b), "%s/b", self->cg_parent);
	ASSERT_EQ(0, mkdir(self->cg_a, 0755)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, mkdir(self->cg_b, 0755)) TH_LOG("%s", strerror(errno));

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	ASSERT_EQ(0, pipe2(cmd, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(rep, O_CLOEXEC));
	test_cg_measure(_metadata, self->cg_parent, &p0);
	test_cg_measure(_metadata, self->cg_a, &a0);
	test_cg_measure(_metadata, self->cg_b, &b0);
	receiver = ASSERT_SYS(child_fork());
	if (receiver == 0)
		_exit(child_memcg_receiver(self->cg_b, sv[1], cmd[0], rep[1]));
	creator = ASSERT_SYS(child_fork());
	if (creator == 0)
		_exit(child_memcg_creator(self->cg_a, self->c.align, sv[0]));
	ASSERT_EQ(0, msg_recv(rep[0], &c, 1, STEP_TIMEOUT_MS))
		TH_LOG("receiver: %s", strerror(errno));
	assert_in_cgroup(_metadata, receiver, self->cg_b);
	/* the creator is gone: only the receiver holds the owner file */
	ASSERT_CHILD_OK(creator);

	test_cg_measure(_metadata, self->cg_a, &a1);
	test_cg_measure(_metadata, self->cg_b, &b1);
	print_cg("handed-off", "a", &a0, &a1);
	print_cg("handed-off", "b", &b0, &b1);
	EXPECT_LE(obj * 7 / 8, a1.current - a0.current);
	EXPECT_LE(obj * 7 / 8, a1.shmem - a0.shmem);
	/* 16 PTE tables for 32 MiB */
	EXPECT_LE(16 * SZ_4K, a1.pagetables - a0.pagetables);
	EXPECT_GT(obj / 8, b1.current - b0.current);
	EXPECT_GT(obj / 8, b1.shmem - b0.shmem);

	/* the creator's cgroup goes: its charges stay, offline */
	ASSERT_EQ(0, cg_remove(self->cg_a))
		TH_LOG("rmdir %s: %s", self->cg_a, strerror(errno));
	self->cg_a[0] = '\0';
	test_cg_measure(_metadata, self->cg_parent, &p2);
	test_cg_measure(_metadata, self->cg_b, &b2);
	print_cg("a-removed", "parent", &p0, &p2);
	print_cg("a-removed", "b", &b0, &b2);
	EXPECT_LE(obj * 7 / 8, p2.current - p0.current);
	EXPECT_LE(obj * 7 / 8, p2.shmem - p0.shmem);
	EXPECT_LE(16 * SZ_4K, p2.pagetables - p0.pagetables);
	EXPECT_GT(obj / 8, b2.current - b0.current);

	/* new faults by the receiver, in B, are charged there too */
	c = 'f';
	ASSERT_EQ(0, msg_send(cmd[1], &c, 1));
	ASSERT_EQ(0, msg_recv(rep[0], &c, 1, STEP_TIMEOUT_MS))
		TH_LOG("receiver faulting: %s", strerror(errno));
	test_cg_measure(_metadata, self->cg_parent, &p3);
	test_cg_measure(_metadata, self->cg_b, &b3);
	print_cg("receiver-faulted", "parent", &p2, &p3);
	print_cg("receiver-faulted", "b", &b2, &b3);
	EXPECT_LE(obj * 7 / 8, p3.current - p2.current);
	EXPECT_LE(obj * 7 / 8, p3.shmem - p2.shmem);
	EXPECT_LE(16 * SZ_4K, p3.pagetables - p2.pagetables);
	EXPECT_GT(obj / 8, b3.current - b0.current);
	EXPECT_GT(obj / 8, b3.shmem - b0.shmem);
	EXPECT_GT(8 * SZ_4K, b3.pagetables - b0.pagetables);

	/* the last owner goes: so do the charges */
	c = 'q';
	ASSERT_EQ(0, msg_send(cmd[1], &c, 1));
	ASSERT_CHILD_OK(receiver);
	start = now_s();
	do {
		test_cg_measure(_metadata, self->cg_parent, &p4);
		if (p4.current - p0.current < obj / 8)
			break;
		usleep(100 * 1000);
	} while (now_s() - start < FREE_TIMEOUT_S);
	print_cg("receiver-exited", "parent", &p0, &p4);
	EXPECT_GT(obj / 8, p4.current - p0.current)
		TH_LOG("the region's charges stayed after its end");
	close(sv[0]);
	close(sv[1]);
	close(cmd[0]);
	close(cmd[1]);
	close(rep[0]);
	close(rep[1]);
}

/* --- OOM badness ----------------------------------------------------------- */

#define OOM_OBJ		(256 * SZ_1M)

static long oom_score(pid_t pid)
{
	char path[64], *text;
	long v;

	snprintf(path, sizeof(path), "/proc/%d/oom_score", pid);
	text = read_text(path, NULL);
	if (!text)
		return -1;
	v = strtol(text, NULL, 10);
	free(text);
	return v;
}

/*
 * A process that does as told: 'c' create a region with a populated
 * OOM_OBJ and keep the owner file; 's' send it over sock; 'r' send a
 * reopened read-write descriptor; 'g' receive one; 'd' close the owner
 * file; 'q' exit. It says 'k' after each.
 */
static int child_oom(uint64_t align, int sock, int cmd_fd, int rep_fd)
{
	int owner = -1, other = -1, fd;
	char c;

	for (;;) {
		CHILD_CHECK(msg_recv(cmd_fd, &c, 1, 4 * STEP_TIMEOUT_MS) == 0,
			    "%m");
		switch (c) {
		case 'c':
			owner = mshare_new(align, O_CLOEXEC);
			CHILD_CHECK(owner >= 0, "mshare_create: %m");
			CHILD_CHECK(sys_mshare_map_anon(owner, OBJ_ROFF,
							OOM_OBJ,
							MAP_POPULATE) == 0,
				    "mshare_map: %m");
			break;
		case 's':
			CHILD_CHECK(fd_send(sock, owner) == 0, "%m");
			break;
		case 'r':
			fd = fd_reopen(owner, O_RDWR);
			CHILD_CHECK(fd >= 0, "reopen: %m");
			CHILD_CHECK(fd_send(sock, fd) == 0, "%m");
			close(fd);
			break;
		case 'g':
			fd = fd_recv(sock, STEP_TIMEOUT_MS);
			CHILD_CHECK(fd >= 0, "fd_recv: %m");
			if (fdinfo_owner(0, fd, 1, 1) == NULL)
				owner = fd;
			else
				other = fd;
			break;
		case 'd':
			CHILD_CHECK(close(owner) == 0, "%m");
			owner = -1;
			break;
		case 'q':
			if (other >= 0)
				close(other);
			return 0;
		default:
			return 2;
		}
		c = 'k';
		CHILD_CHECK(msg_send(rep_fd, &c, 1) == 0, "%m");
	}
}

struct oom_kid {
	pid_t pid;
	int cmd, rep;
};

static void oom_tell(struct __test_metadata *_metadata, struct oom_kid *k,
		     char c)
{
	ASSERT_EQ(0, msg_send(k->cmd, &c, 1));
	ASSERT_EQ(0, msg_recv(k->rep, &c, 1, 4 * STEP_TIMEOUT_MS))
		TH_LOG("command %c: %s", c, strerror(errno));
	ASSERT_EQ('k', c);
}

static void oom_start(struct __test_metadata *_metadata, struct oom_kid *k,
		      uint64_t align, int sock)
{
	int cmd[2], rep[2];

	ASSERT_EQ(0, pipe2(cmd, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(rep, O_CLOEXEC));
	k->pid = ASSERT_SYS(child_fork());
	if (k->pid == 0)
		_exit(child_oom(align, sock, cmd[0], rep[1]));
	close(cmd[0]);
	close(rep[1]);
	k->cmd = cmd[1];
	k->rep = rep[0];
}

/*
 * The region's memory counts in the badness of every process holding its
 * owner file, and in no other's: it moves with a hand-off.
 */
TEST_F(handoff, oom_badness_follows_owner_file)
{
	long total_kib, pts, a0, b0, a1, b1, a2, b2, a3, b3;
	struct oom_kid a, b;
	int sv[2];

	total_kib = meminfo_kib("MemTotal") + meminfo_kib("SwapTotal");
	ASSERT_LT(0, total_kib);
	/* proc_oom_score(): (1000 + badness * 1000 / totalpages) * 2 / 3 */
	pts = (long)(OOM_OBJ >> 10) * 1000 / total_kib * 2 / 3;
	ASSERT_LE(8, pts) TH_LOG("a %lu MiB object is too small against %ld kB",
				 OOM_OBJ >> 20, total_kib);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv));
	oom_start(_metadata, &a, self->c.align, sv[0]);
	oom_start(_metadata, &b, self->c.align, sv[1]);
	a0 = oom_score(a.pid);
	b0 = oom_score(b.pid);

	oom_tell(_metadata, &a, 'c');
	/* a reopened descriptor counts for nothing */
	oom_tell(_metadata, &a, 'r');
	oom_tell(_metadata, &b, 'g');
	a1 = oom_score(a.pid);
	b1 = oom_score(b.pid);
	/* both hold the owner file */
	oom_tell(_metadata, &a, 's');
	oom_tell(_metadata, &b, 'g');
	a2 = oom_score(a.pid);
	b2 = oom_score(b.pid);
	/* the sender lets go */
	oom_tell(_metadata, &a, 'd');
	a3 = oom_score(a.pid);
	b3 = oom_score(b.pid);
	ksft_print_msg("oom-numbers: object_kib=%lu expected_points=%ld sender=%ld,%ld,%ld,%ld receiver=%ld,%ld,%ld,%ld (start, created, both hold, handed off)\n",
		       OOM_OBJ >> 10, pts, a0, a1, a2, a3, b0, b1, b2, b3);
	ASSERT_LE(0, a0);
	ASSERT_LE(0, b0);
	EXPECT_LE(a0 + pts / 2, a1) TH_LOG("the owner's badness did not grow");
	EXPECT_GT(b0 + pts / 4, b1)
		TH_LOG("a reopened descriptor counted in the badness");
	EXPECT_LE(a0 + pts / 2, a2);
	EXPECT_LE(b0 + pts / 2, b2)
		TH_LOG("the receiver's badness did not grow");
	EXPECT_GT(a0 + pts / 4, a3)
		TH_LOG("the sender's badness did not drop after the hand-off");
	EXPECT_LE(b0 + pts / 2, b3);

	oom_tell(_metadata, &b, 'd');
	ASSERT_EQ(0, msg_send(a.cmd, "q", 1));
	ASSERT_EQ(0, msg_send(b.cmd, "q", 1));
	ASSERT_CHILD_OK(a.pid);
	ASSERT_CHILD_OK(b.pid);
	close(a.cmd);
	close(a.rep);
	close(b.cmd);
	close(b.rep);
	close(sv[0]);
	close(sv[1]);
}

/* --- nothing left -------------------------------------------------------- */

#define LEAK_OBJ	(128 * SZ_1M)

static long shmem_kib(void)
{
	vmstat_refresh();
	return meminfo_kib("Shmem");
}

/*
 * A relay: gets the owner file on in_sock, attaches, checks the data
 * (seed) and stamps its own (seed + 1), then hands it on over out_sock
 * and exits; the last one (out_sock -1) closes it and checks that its
 * window faults before it exits.
 */
static int child_relay(int in_sock, int out_sock, uint64_t seed)
{
	char *w;
	int fd;

	fd = fd_recv(in_sock, STEP_TIMEOUT_MS);
	CHILD_CHECK(fd >= 0, "fd_recv: %m");
	CHILD_OK(fdinfo_owner(0, fd, 1, 1));
	w = sys_mshare_attach(fd, 0, 0, NULL, 0);
	CHILD_CHECK(w != MAP_FAILED, "attach: %m");
	CHILD_CHECK(stamps_check(w + OBJ_ROFF, LEAK_OBJ, seed) == -1,
		    "data of the previous holder");
	stamp_pages(w + OBJ_ROFF, LEAK_OBJ, seed + 1);
	if (out_sock >= 0) {
		CHILD_CHECK(fd_send(out_sock, fd) == 0, "fd_send: %m");
		return 0;
	}
	CHILD_CHECK(close(fd) == 0, "%m");
	CHILD_CHECK(probe_read(w + OBJ_ROFF, NULL) == SIGSEGV,
		    "the window works after the last owner closed");
	return 0;
}

FIXTURE(leak) {
	struct mshare_ctx c;
};

FIXTURE_VARIANT(leak) {
	bool handed_on;		/* through two relays, else the creator closes */
	bool mapped_at_end;	/* the last owner has a window as it closes */
	bool unmap_first;	/* mshare_unmap() while the window links the
				 * tables, then the window goes, then the owner */
};

FIXTURE_VARIANT_ADD(leak, creator_closes) {
	.handed_on = false, .mapped_at_end = false,
};
FIXTURE_VARIANT_ADD(leak, creator_closes_mapped) {
	.handed_on = false, .mapped_at_end = true,
};
/* the window leaves the region's tables stranded, then goes before the owner */
FIXTURE_VARIANT_ADD(leak, unmapped_then_window_goes) {
	.handed_on = false, .mapped_at_end = true, .unmap_first = true,
};
/* the last relay closes with its window mapped (and then exits) */
FIXTURE_VARIANT_ADD(leak, handed_on_twice) {
	.handed_on = true, .mapped_at_end = true,
};

FIXTURE_SETUP(leak)
{
	mshare_test_setup(_metadata, &self->c, "leak");
}

FIXTURE_TEARDOWN(leak)
{
	child_kill_all();
	mshare_ctx_fini(&self->c);
}

/*
 * Shmem, PageTables and the region's own page tables (fdinfo
 * mshare-pgtables, read through a reopened descriptor that outlives the
 * owner file) come back to where they were before the region was
 * populated, once the last owner let go and no window is left.
 */
TEST_F(leak, nothing_left_after_last_owner)
{
	long shmem0, pt0, shmem1, pt1, shmem2, pt2;
	int s1[2], s2[2], fd, ro;
	long long pg0, pg1, pg2;
	pid_t r1 = 0, r2 = 0;
	double start;
	char *w;

	shmem0 = shmem_kib();
	pt0 = meminfo_kib("PageTables");
	ASSERT_LE(0, shmem0);
	ASSERT_LE(0, pt0);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s1));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s2));
	if (variant->handed_on) {
		r1 = ASSERT_SYS(child_fork());
		if (r1 == 0)
			_exit(child_relay(s1[1], s2[0], 1));
		r2 = ASSERT_SYS(child_fork());
		if (r2 == 0)
			_exit(child_relay(s2[1], -1, 2));
	}

	fd = test_new_region(_metadata, self->c.align);
	ro = ASSERT_SYS(fd_reopen(fd, O_RDONLY));
	pg0 = test_fdinfo(_metadata, 0, fd, "mshare-pgtables");
	test_sys_map_anon(_metadata, fd, OBJ_ROFF, LEAK_OBJ, 0);
	sys_mshare_advise(fd, OBJ_ROFF, LEAK_OBJ, MADV_NOHUGEPAGE);
	ASSERT_EQ(0, sys_mshare_advise(fd, OBJ_ROFF, LEAK_OBJ,
				       MADV_POPULATE_WRITE))
		TH_LOG("MADV_POPULATE_WRITE: %s", strerror(errno));
	w = test_attach(_metadata, fd, 0, 0, 0);
	stamp_pages(w + OBJ_ROFF, LEAK_OBJ, 1);
	if (variant->handed_on || !variant->mapped_at_end) {
		ASSERT_EQ(0, munmap(w, self->c.align));
		w = NULL;
	}
	pg1 = test_fdinfo(_metadata, 0, fd, "mshare-pgtables");
	shmem1 = shmem_kib();
	pt1 = meminfo_kib("PageTables");
	ASSERT_LE(shmem0 + (long)(LEAK_OBJ >> 10) * 7 / 8, shmem1);
	/* 64 PTE tables */
	ASSERT_LE(pg0 + 64 * (long long)SZ_4K, pg1);
	ASSERT_LE(pt0 + (pg1 - pg0) / 2048, pt1)
		TH_LOG("the region's page tables are not in PageTables");

	if (variant->handed_on) {
		/* this process lets go; the relays hand it on and let go */
		ASSERT_EQ(0, fd_send(s1[0], fd));
		ASSERT_EQ(0, close(fd));
		ASSERT_CHILD_OK(r1);
		ASSERT_CHILD_OK(r2);
	} else {
		if (variant->unmap_first) {
			ASSERT_EQ(0, sys_mshare_unmap(fd, OBJ_ROFF, LEAK_OBJ));
			ASSERT_EQ(0, munmap(w, self->c.align));
			w = NULL;
			/* what the owner's release must free */
			ASSERT_LT(pg0, test_fdinfo(_metadata, 0, fd,
						   "mshare-pgtables"))
				TH_LOG("no table was stranded: nothing to test");
		}
		ASSERT_EQ(0, close(fd));
	}
	ASSERT_OK(fdinfo_owner(0, ro, 0, 0));
	if (w) {
		/* no window is left when the numbers are taken */
		ASSERT_READ_SIGNAL(SIGSEGV, w + OBJ_ROFF);
		ASSERT_EQ(0, munmap(w, self->c.align));
	}

	start = now_s();
	do {
		shmem2 = shmem_kib();
		pt2 = meminfo_kib("PageTables");
		pg2 = test_fdinfo(_metadata, 0, ro, "mshare-pgtables");
		if (shmem2 <= shmem0 + (long)(LEAK_OBJ >> 10) / 8 &&
		    pt2 <= pt0 + 96 && pg2 <= pg0)
			break;
		usleep(100 * 1000);
	} while (now_s() - start < LEAK_WAIT_S);
	ksft_print_msg("leak-numbers: %s object_kib=%lu shmem_kib=%ld,%ld,%ld pagetables_kib=%ld,%ld,%ld region_pgtables=%lld,%lld,%lld (start, populated, after) wait_s=%.1f\n",
		       variant->handed_on ? "handed-on" :
		       variant->unmap_first ? "unmapped-then-window-goes" :
		       variant->mapped_at_end ? "creator-closes-mapped" :
		       "creator-closes",
		       LEAK_OBJ >> 10, shmem0, shmem1, shmem2, pt0, pt1, pt2,
		       pg0, pg1, pg2, now_s() - start);
	EXPECT_GE(shmem0 + (long)(LEAK_OBJ >> 10) / 8, shmem2)
		TH_LOG("the region's memory was not freed");
	EXPECT_GE(pt0 + 96, pt2) TH_LOG("PageTables did not come back");
	EXPECT_GE(pg0, pg2)
		TH_LOG("the region kept %lld bytes of page tables after its end",
		       pg2 - pg0);
	/*
	 * For the record (the counter is global, no assertion): the
	 * region's last file goes too, and with it the region's mm.
	 */
	close(ro);
	start = now_s();
	while ((pt2 = meminfo_kib("PageTables")) > pt0 &&
	       now_s() - start < 10)
		usleep(100 * 1000);
	ksft_print_msg("leak-numbers: pagetables_kib=%ld (start %ld) %.1f s after the last descriptor\n",
		       pt2, pt0, now_s() - start);
	close(s1[0]);
	close(s1[1]);
	close(s2[0]);
	close(s2[1]);
}

/* --- stress: the owner file travels, sharers keep working ----------------- */

#define ST_SHARERS	4
#define ST_SLICE	(64 * SZ_4K)
#define ST_DATA		(OBJ_ROFF + SZ_4K)
#define ST_OBJ		(SZ_4K + ST_SHARERS * ST_SLICE)
#define ST_MAGIC	0x68616e646f6666ULL
#define ST_ROUNDS	60

/* At OBJ_ROFF in the region: one seqcount per sharer's slice. */
struct st_ctl {
	uint64_t magic;
	uint64_t seq[ST_SHARERS];	/* odd while being written */
};

/* Shared by the test and its sharers (plain shared memory). */
struct st_shared {
	int stop;
	struct {
		uint64_t writes, checks, retries, bad;
	} n[ST_SHARERS];
};

/* The pattern of slice k written as generation gen (its even seqcount). */
static uint64_t st_seed(int k, uint64_t gen)
{
	return (uint64_t)(k + 1) << 48 | gen;
}

/*
 * Sharer k: a window through a reopened descriptor (which it closes: the
 * window is all it keeps), writes its slice under the seqcount and checks
 * it, and checks another sharer's slice when it reads a stable copy.
 * No SIGSEGV handler: a fault kills it.
 */
static int stress_sharer(int owner_fd, int fd, int k, struct st_shared *sh,
			 int ready_fd)
{
	uint64_t s, s1, s2, iter = 0;
	struct st_ctl *ctl;
	char *w, *buf, ok = 1;
	int j;

	signal(SIGSEGV, SIG_DFL);
	signal(SIGBUS, SIG_DFL);
	CHILD_CHECK(close(owner_fd) == 0, "%m");
	w = sys_mshare_attach(fd, 0, 0, NULL, 0);
	CHILD_CHECK(w != MAP_FAILED, "attach: %m");
	CHILD_CHECK(close(fd) == 0, "%m");
	ctl = (struct st_ctl *)(w + OBJ_ROFF);
	CHILD_CHECK(ctl->magic == ST_MAGIC, "magic %#lx", ctl->magic);
	buf = malloc(ST_SLICE);
	CHILD_CHECK(buf, "malloc");
	CHILD_CHECK(msg_send(ready_fd, &ok, 1) == 0, "%m");
	while (!__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE)) {
		char *mine = w + ST_DATA + k * ST_SLICE;

		s = __atomic_load_n(&ctl->seq[k], __ATOMIC_RELAXED);
		__atomic_store_n(&ctl->seq[k], s + 1, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		pattern_fill(mine, ST_SLICE, st_seed(k, s + 2));
		__atomic_store_n(&ctl->seq[k], s + 2, __ATOMIC_RELEASE);
		sh->n[k].writes++;
		if (pattern_check(mine, ST_SLICE, st_seed(k, s + 2)) != -1)
			sh->n[k].bad++;

		j = (k + 1 + iter++ % (ST_SHARERS - 1)) % ST_SHARERS;
		s1 = __atomic_load_n(&ctl->seq[j], __ATOMIC_ACQUIRE);
		memcpy(buf, w + ST_DATA + j * ST_SLICE, ST_SLICE);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&ctl->seq[j], __ATOMIC_RELAXED);
		if (s1 != s2 || (s1 & 1)) {
			sh->n[k].retries++;
		} else {
			sh->n[k].checks++;
			if (pattern_check(buf, ST_SLICE, st_seed(j, s1)) != -1)
				sh->n[k].bad++;
		}
		usleep(200);
	}
	free(buf);
	return sh->n[k].bad ? 1 : 0;
}

/*
 * A holder: gets the owner file from the baton socket, checks that it
 * owns the region and uses that (protect and advise the sharers' object,
 * map and unmap a scratch object, a window of its own), says 'G', then
 * on 'p' passes it on and exits, on 'q' closes it and exits.
 */
static int stress_holder(int inherited, int baton_in, int baton_out,
			 int cmd_fd, int rep_fd, uint64_t align)
{
	struct st_ctl *ctl;
	char c = 'G', *w;
	int fd;

	if (inherited >= 0)
		CHILD_CHECK(close(inherited) == 0, "%m");
	fd = fd_recv(baton_in, STEP_TIMEOUT_MS);
	CHILD_CHECK(fd >= 0, "fd_recv: %m");
	CHILD_OK(fdinfo_owner(0, fd, 1, 1));
	CHILD_CHECK(sys_mshare_protect(fd, OBJ_ROFF, ST_OBJ,
				       PROT_READ | PROT_WRITE) == 0,
		    "mshare_protect: %m");
	CHILD_CHECK(sys_mshare_advise(fd, OBJ_ROFF, ST_OBJ,
				      MADV_WILLNEED) == 0, "mshare_advise: %m");
	CHILD_OK(owner_changes(fd));
	w = sys_mshare_attach(fd, 0, 0, NULL, 0);
	CHILD_CHECK(w != MAP_FAILED, "attach: %m");
	ctl = (struct st_ctl *)(w + OBJ_ROFF);
	CHILD_CHECK(ctl->magic == ST_MAGIC, "magic %#lx", ctl->magic);
	CHILD_CHECK(munmap(w, align) == 0, "%m");
	CHILD_CHECK(msg_send(rep_fd, &c, 1) == 0, "%m");
	CHILD_CHECK(msg_recv(cmd_fd, &c, 1, 4 * STEP_TIMEOUT_MS) == 0, "%m");
	if (c == 'p') {
		CHILD_CHECK(fd_send(baton_out, fd) == 0, "fd_send: %m");
		return 0;
	}
	CHILD_CHECK(c == 'q', "command %c", c);
	CHILD_CHECK(close(fd) == 0, "%m");
	return 0;
}

struct st_holder {
	pid_t pid;
	int cmd, rep;
};

TEST_F_TIMEOUT(handoff, stress_sharers_while_owner_travels, 280)
{
	const uint64_t a = self->c.align;
	struct st_holder cur = { .pid = 0 }, next;
	pid_t sharers[ST_SHARERS];
	long rounds = env_long("MSHARE_HANDOFF_ROUNDS", ST_ROUNDS, 1, 99999), r;
	struct st_shared *sh;
	struct st_ctl *ctl;
	int baton[2], ready[2], cmd[2], rep[2], fd, rw, k, st;
	uint64_t writes = 0, checks = 0, retries = 0, bad = 0;
	double start;
	char c, *w;

	ASSERT_LT(0, rounds)
		TH_LOG("MSHARE_HANDOFF_ROUNDS must be 1 to 99999");
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	memset(sh, 0, sizeof(*sh));

	fd = test_new_region(_metadata, a);
	test_sys_map_anon(_metadata, fd, OBJ_ROFF, ST_OBJ, MAP_POPULATE);
	w = test_attach(_metadata, fd, 0, 0, 0);
	ctl = (struct st_ctl *)(w + OBJ_ROFF);
	for (k = 0; k < ST_SHARERS; k++)
		pattern_fill(w + ST_DATA + k * ST_SLICE, ST_SLICE,
			     st_seed(k, 0));
	ctl->magic = ST_MAGIC;
	rw = ASSERT_SYS(fd_reopen(fd, O_RDWR));

	ASSERT_EQ(0, pipe2(ready, O_CLOEXEC));
	for (k = 0; k < ST_SHARERS; k++) {
		sharers[k] = ASSERT_SYS(child_fork());
		if (sharers[k] == 0) {
			close(ready[0]);
			_exit(stress_sharer(fd, rw, k, sh, ready[1]));
		}
	}
	for (k = 0; k < ST_SHARERS; k++)
		ASSERT_EQ(0, msg_recv(ready[0], &c, 1, STEP_TIMEOUT_MS))
			TH_LOG("sharer: %s", strerror(errno));

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, baton));
	start = now_s();
	for (r = 0; r < rounds; r++) {
		ASSERT_EQ(0, pipe2(cmd, O_CLOEXEC));
		ASSERT_EQ(0, pipe2(rep, O_CLOEXEC));
		next.pid = ASSERT_SYS(child_fork());
		if (next.pid == 0)
			_exit(stress_holder(fd, baton[1], baton[0], cmd[0],
					    rep[1], a));
		close(cmd[0]);
		close(rep[1]);
		next.cmd = cmd[1];
		next.rep = rep[0];
		if (r == 0) {
			/* this process hands it on first, and lets go */
			ASSERT_EQ(0, fd_send(baton[0], fd));
			ASSERT_EQ(0, close(fd));
			fd = -1;
		} else {
			ASSERT_EQ(0, msg_send(cur.cmd, "p", 1));
			ASSERT_CHILD_OK(cur.pid);
			close(cur.cmd);
			close(cur.rep);
		}
		ASSERT_EQ(0, msg_recv(next.rep, &c, 1, 4 * STEP_TIMEOUT_MS))
			TH_LOG("round %ld: holder: %s", r, strerror(errno));
		cur = next;
		ASSERT_OK(fdinfo_owner(0, rw, 1, 0));
		for (k = 0; k < ST_SHARERS; k++)
			ASSERT_EQ(0, child_poll(sharers[k], &st))
				TH_LOG("round %ld: sharer %d %s", r, k,
				       status_str(st));
	}
	ksft_print_msg("handoff-numbers: rounds=%ld seconds=%.1f\n", rounds,
		       now_s() - start);

	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
	for (k = 0; k < ST_SHARERS; k++)
		ASSERT_CHILD_OK(sharers[k]);
	for (k = 0; k < ST_SHARERS; k++) {
		writes += sh->n[k].writes;
		checks += sh->n[k].checks;
		retries += sh->n[k].retries;
		bad += sh->n[k].bad;
		EXPECT_LT(0, sh->n[k].writes);
		EXPECT_LT(0, sh->n[k].checks);
		/* what the sharer left is intact */
		ASSERT_EQ(0, ctl->seq[k] & 1);
		ASSERT_PATTERN(w + ST_DATA + k * ST_SLICE, ST_SLICE,
			       st_seed(k, ctl->seq[k]));
	}
	ksft_print_msg("handoff-numbers: writes=%lu checks=%lu retries=%lu bad=%lu\n",
		       writes, checks, retries, bad);
	EXPECT_EQ(0, bad);

	/* the last holder lets go: the end */
	ASSERT_EQ(0, msg_send(cur.cmd, "q", 1));
	ASSERT_CHILD_OK(cur.pid);
	ASSERT_OK(fdinfo_owner(0, rw, 0, 0));
	ASSERT_READ_SIGNAL(SIGSEGV, w + OBJ_ROFF);
	close(cur.cmd);
	close(cur.rep);
	close(baton[0]);
	close(baton[1]);
	close(ready[0]);
	close(ready[1]);
	close(rw);
	munmap(w, a);
	munmap(sh, sizeof(*sh));
}

TEST_HARNESS_MAIN
