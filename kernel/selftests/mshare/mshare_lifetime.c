// SPDX-License-Identifier: GPL-2.0
/*
 * The life of a region made by mshare_create(): it lives while its owner
 * file, the one mshare_create() returned, is open somewhere (the
 * descriptor, its dups, a forked child's copy); a reopened descriptor,
 * read-only or read-write, does not keep it. When the last holder of the
 * owner file closes it, exits or is killed, the region is destroyed even
 * though other processes still hold (reopened) descriptors and windows:
 * every window faults with SIGSEGV, mmap() and mshare_attach() fail with
 * ENXIO, so do the owner-only calls, fdinfo's mshare-owned becomes 0, and
 * the memory of the objects is freed. A forked child of the owner closing
 * its inherited descriptor, or exiting, destroys nothing while the parent
 * holds it. fdinfo's mshare-attached and mshare-windows count the
 * processes and the windows onto the region. (mshare_handoff covers
 * handing the owner file on.)
 */
#include <sys/socket.h>

#include "mshare_test.h"

#define OBJ_ROFF	SZ_1G
#define OBJ_SIZE	SZ_1M
#define BIG_OBJ		(16 * SZ_1M)
#define STEP_TIMEOUT_MS	(60 * 1000)
#define FREE_TIMEOUT_S	30

/* Regions owned by the test process. */
FIXTURE(lifetime) {
	struct mshare_ctx c;
	uint64_t align;
	int fd;
	char *win;
};

/* Regions owned by a child that exits or is killed. */
FIXTURE(owner_end) {
	struct mshare_ctx c;
	uint64_t align;
	int fd;
	char *win;
};

FIXTURE_VARIANT(owner_end) {
	bool kill;	/* the owner process is SIGKILLed, not exiting */
};

FIXTURE_VARIANT_ADD(owner_end, exits) { .kill = false };
FIXTURE_VARIANT_ADD(owner_end, killed) { .kill = true };

FIXTURE_SETUP(lifetime)
{
	self->fd = -1;
	mshare_test_setup(_metadata, &self->c, "lifetime");
	self->align = self->c.align;
}

FIXTURE_TEARDOWN(lifetime)
{
	child_kill_all();
	if (self->win && self->win != MAP_FAILED)
		munmap(self->win, self->align);
	if (self->fd >= 0)
		close(self->fd);
	mshare_ctx_fini(&self->c);
}

FIXTURE_SETUP(owner_end)
{
	self->fd = -1;
	mshare_test_setup(_metadata, &self->c, "owner_end");
	self->align = self->c.align;
}

FIXTURE_TEARDOWN(owner_end)
{
	child_kill_all();
	if (self->win && self->win != MAP_FAILED)
		munmap(self->win, self->align);
	if (self->fd >= 0)
		close(self->fd);
	mshare_ctx_fini(&self->c);
}

static bool failed_with(long ret, int err)
{
	return ret == -1 && errno == err;
}

/* This process owns a new region with a stamped object and a window. */
static void own_region(struct __test_metadata *_metadata,
		       FIXTURE_DATA(lifetime) *self, uint64_t obj_size,
		       unsigned int map_flags)
{
	self->fd = test_new_region(_metadata, self->align);
	test_sys_map_anon(_metadata, self->fd, OBJ_ROFF, obj_size, map_flags);
	self->win = test_attach(_metadata, self->fd, 0, 0, 0);
	stamp_pages(self->win + OBJ_ROFF, obj_size, 1);
}

/* Everything a non-owner may try on a destroyed region; in a child. */
static int child_check_destroyed(int fd, char *w, uint64_t align)
{
	long long owner;

	CHILD_CHECK(probe_read(w + OBJ_ROFF, NULL) == SIGSEGV,
		    "read of a destroyed region did not fault");
	CHILD_CHECK(probe_write(w + OBJ_ROFF + OBJ_SIZE - 8, 1) == SIGSEGV,
		    "write to a destroyed region did not fault");
	errno = 0;
	CHILD_CHECK(mmap(NULL, align, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			 0) == MAP_FAILED && errno == ENXIO, "mmap: %m");
	errno = 0;
	CHILD_CHECK(sys_mshare_attach(fd, 0, 0, NULL, 0) == MAP_FAILED &&
		    errno == ENXIO, "mshare_attach: %m");
	errno = 0;
	CHILD_CHECK(sys_mshare_attach(fd, 0, 0, NULL, MSHARE_ATTACH_RDONLY) ==
		    MAP_FAILED && errno == ENXIO, "mshare_attach RDONLY: %m");
	CHILD_CHECK(failed_with(sys_mshare_map_anon(fd, OBJ_ROFF, OBJ_SIZE, 0),
				ENXIO), "mshare_map: %m");
	CHILD_CHECK(failed_with(sys_mshare_unmap(fd, OBJ_ROFF, OBJ_SIZE),
				ENXIO), "mshare_unmap: %m");
	CHILD_CHECK(failed_with(sys_mshare_protect(fd, OBJ_ROFF, OBJ_SIZE,
						   PROT_READ), ENXIO),
		    "mshare_protect: %m");
	CHILD_CHECK(failed_with(sys_mshare_advise(fd, OBJ_ROFF, OBJ_SIZE,
						  MADV_WILLNEED), ENXIO),
		    "mshare_advise: %m");
	CHILD_CHECK(fdinfo_get(0, fd, "mshare-owned", &owner) == 0, "%m");
	CHILD_CHECK(owner == 0, "mshare-owned %lld", owner);
	CHILD_CHECK(fdinfo_get(0, fd, "mshare-owner-fd", &owner) == 0, "%m");
	CHILD_CHECK(owner == 0, "mshare-owner-fd %lld", owner);
	return 0;
}

/*
 * A sharer with a window of its own that looks again when g opens. It
 * holds only fd, a reopened read-write descriptor: it closes the owner
 * file it inherited.
 */
static int child_sharer(int owner_fd, int fd, uint64_t align, int ready_fd,
			struct gate *g)
{
	char *w, ok = 1;

	gate_child(g);
	CHILD_CHECK(close(owner_fd) == 0, "%m");
	w = sys_mshare_attach(fd, 0, 0, NULL, 0);
	CHILD_CHECK(w != MAP_FAILED, "attach: %m");
	CHILD_CHECK(stamps_check(w + OBJ_ROFF, OBJ_SIZE, 1) == -1, "data");
	CHILD_CHECK(msg_send(ready_fd, &ok, 1) == 0, "%m");
	CHILD_CHECK(gate_wait(g) == 0, "%m");
	return child_check_destroyed(fd, w, align);
}

struct sharer {
	pid_t pid;
	int fd;		/* the number of its (non-owner) region fd */
	struct gate g;
};

static void start_sharer(struct __test_metadata *_metadata,
			 FIXTURE_DATA(lifetime) *self, struct sharer *s)
{
	int ready[2];
	char ok;

	s->fd = fd_reopen(self->fd, O_RDWR);
	ASSERT_LE(0, s->fd) TH_LOG("reopen: %s", strerror(errno));
	ASSERT_EQ(0, gate_init(&s->g));
	ASSERT_EQ(0, pipe2(ready, O_CLOEXEC));
	s->pid = ASSERT_SYS(child_fork());
	if (s->pid == 0) {
		close(ready[0]);
		_exit(child_sharer(self->fd, s->fd, self->align, ready[1],
				   &s->g));
	}
	/* the sharer's copy is the only one left */
	close(s->fd);
	close(ready[1]);
	ASSERT_EQ(0, msg_recv(ready[0], &ok, 1, STEP_TIMEOUT_MS))
		TH_LOG("sharer: %s", strerror(errno));
	close(ready[0]);
}

static void finish_sharer(struct __test_metadata *_metadata,
			  struct sharer *s)
{
	gate_open(&s->g);
	ASSERT_CHILD_OK(s->pid);
	gate_fini(&s->g);
}

/* fdinfo's mshare-owned of fd in process pid: whether the region lives. */
static long long owner_seen_by(struct __test_metadata *_metadata, pid_t pid,
			       int fd)
{
	return test_fdinfo(_metadata, pid, fd, "mshare-owned");
}

TEST_F(lifetime, owner_closes_last_fd)
{
	struct sharer s;

	own_region(_metadata, self, OBJ_SIZE, 0);
	start_sharer(_metadata, self, &s);
	ASSERT_EQ(1, owner_seen_by(_metadata, s.pid, s.fd));
	ASSERT_EQ(0, test_fdinfo(_metadata, s.pid, s.fd, "mshare-owner-fd"));

	ASSERT_EQ(0, close(self->fd));
	/* the sharer's descriptor is in its own table */
	ASSERT_EQ(0, owner_seen_by(_metadata, s.pid, s.fd));
	self->fd = -1;
	ASSERT_READ_SIGNAL(SIGSEGV, self->win + OBJ_ROFF);
	finish_sharer(_metadata, &s);
}

/* A dup of the owner descriptor keeps the region; a reopened one does not. */
TEST_F(lifetime, dup_keeps_region_reopen_does_not)
{
	struct sharer s;
	int d, ro, rw;
	char *w;

	own_region(_metadata, self, OBJ_SIZE, 0);
	start_sharer(_metadata, self, &s);

	/* a dup */
	d = ASSERT_SYS(dup(self->fd));
	ASSERT_EQ(0, close(self->fd));
	self->fd = -1;
	ASSERT_EQ(-1, stamps_check(self->win + OBJ_ROFF, OBJ_SIZE, 1));
	ASSERT_EQ(1, owner_seen_by(_metadata, s.pid, s.fd));
	ASSERT_EQ(1, test_fdinfo(_metadata, 0, d, "mshare-owner-fd"));
	w = test_attach(_metadata, d, 0, 0, MSHARE_ATTACH_RDONLY);
	ASSERT_EQ(0, munmap(w, self->align));
	test_sys_map_anon(_metadata, d, OBJ_ROFF + OBJ_SIZE, OBJ_SIZE, 0);

	/* reopened descriptors, read-only and read-write, own nothing */
	ro = fd_reopen(d, O_RDONLY);
	ASSERT_LE(0, ro) TH_LOG("reopen: %s", strerror(errno));
	rw = fd_reopen(d, O_RDWR);
	ASSERT_LE(0, rw) TH_LOG("reopen: %s", strerror(errno));
	ASSERT_EQ(0, test_fdinfo(_metadata, 0, ro, "mshare-owner-fd"));
	ASSERT_EQ(0, test_fdinfo(_metadata, 0, rw, "mshare-owner-fd"));
	ASSERT_EQ(-1, stamps_check(self->win + OBJ_ROFF, OBJ_SIZE, 1));
	ASSERT_WRITE_SIGNAL(0, self->win + OBJ_ROFF + OBJ_SIZE);

	/* the last owner descriptor: the region goes though ro, rw are open */
	ASSERT_EQ(0, close(d));
	ASSERT_EQ(0, owner_seen_by(_metadata, s.pid, s.fd));
	ASSERT_EQ(0, owner_seen_by(_metadata, 0, ro));
	ASSERT_EQ(0, owner_seen_by(_metadata, 0, rw));
	ASSERT_READ_SIGNAL(SIGSEGV, self->win + OBJ_ROFF);
	ASSERT_READ_SIGNAL(SIGSEGV, self->win + OBJ_ROFF + OBJ_SIZE);
	EXPECT_ERRNO(ENXIO, sys_mshare_attach(rw, 0, 0, NULL, 0));
	EXPECT_ERRNO(ENXIO, sys_mshare_attach(ro, 0, 0, NULL,
					      MSHARE_ATTACH_RDONLY));
	EXPECT_ERRNO(ENXIO, sys_mshare_map_anon(rw, 0, OBJ_SIZE, 0));
	EXPECT_ERRNO(ENXIO, sys_mshare_unmap(rw, OBJ_ROFF, OBJ_SIZE));
	finish_sharer(_metadata, &s);
	close(ro);
	close(rw);
}

/* A child of the owner closes its inherited descriptor, then stays. */
static int child_close(int fd, int ready_fd, struct gate *g)
{
	char ok = 1;

	gate_child(g);
	CHILD_CHECK(close(fd) == 0, "%m");
	CHILD_CHECK(msg_send(ready_fd, &ok, 1) == 0, "%m");
	CHILD_CHECK(gate_wait(g) == 0, "%m");
	return 0;
}

static void assert_alive(struct __test_metadata *_metadata,
			 FIXTURE_DATA(lifetime) *self)
{
	char *w;

	ASSERT_EQ(-1, stamps_check(self->win + OBJ_ROFF, OBJ_SIZE, 1));
	ASSERT_EQ(1, owner_seen_by(_metadata, 0, self->fd));
	ASSERT_EQ(1, test_fdinfo(_metadata, 0, self->fd, "mshare-owner-fd"));
	w = test_attach(_metadata, self->fd, 0, 0, 0);
	ASSERT_EQ(-1, stamps_check(w + OBJ_ROFF, OBJ_SIZE, 1));
	ASSERT_EQ(0, munmap(w, self->align));
}

TEST_F(lifetime, forked_child_close_keeps_region)
{
	int ready[2];
	struct gate g;
	pid_t pid;
	char ok;

	own_region(_metadata, self, OBJ_SIZE, 0);

	/* closes and exits */
	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(close(self->fd) ? 1 : 0);
	ASSERT_CHILD_OK(pid);
	assert_alive(_metadata, self);

	/* closes and stays, then is killed */
	ASSERT_EQ(0, gate_init(&g));
	ASSERT_EQ(0, pipe2(ready, O_CLOEXEC));
	pid = ASSERT_SYS(child_fork());
	if (pid == 0) {
		close(ready[0]);
		_exit(child_close(self->fd, ready[1], &g));
	}
	close(ready[1]);
	ASSERT_EQ(0, msg_recv(ready[0], &ok, 1, STEP_TIMEOUT_MS));
	assert_alive(_metadata, self);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_CHILD_KILLED(pid, SIGKILL);
	assert_alive(_metadata, self);
	gate_fini(&g);
	close(ready[0]);
}

/*
 * The owner: a child that creates the region and an object of obj_size
 * (populated with flags), stamps it, sends a reopened read-write
 * descriptor (not the owner file) over sock and waits for the gate to exit
 * (or to be killed). It is the only holder of the owner file.
 */
static int child_owner(int sock, uint64_t align, uint64_t obj_size,
		       unsigned int map_flags, struct gate *g)
{
	int fd, rw;
	char *w;

	gate_child(g);
	fd = mshare_new(align, O_CLOEXEC);
	CHILD_CHECK(fd >= 0, "mshare_create: %m");
	CHILD_CHECK(sys_mshare_map_anon(fd, OBJ_ROFF, obj_size, map_flags) == 0,
		    "mshare_map: %m");
	w = sys_mshare_attach(fd, 0, 0, NULL, 0);
	CHILD_CHECK(w != MAP_FAILED, "attach: %m");
	stamp_pages(w + OBJ_ROFF, obj_size, 1);
	rw = fd_reopen(fd, O_RDWR);
	CHILD_CHECK(rw >= 0, "reopen: %m");
	CHILD_CHECK(fd_send(sock, rw) == 0, "fd_send: %m");
	CHILD_CHECK(close(rw) == 0, "%m");
	CHILD_CHECK(gate_wait(g) == 0, "%m");
	return 0;
}

struct owner {
	pid_t pid;
	struct gate g;
};

/* Start an owner child; returns the region fd it sent. */
static int start_owner(struct __test_metadata *_metadata,
		       FIXTURE_DATA(owner_end) *self, struct owner *o,
		       uint64_t obj_size, unsigned int map_flags)
{
	int sv[2], fd;

	ASSERT_EQ(0, gate_init(&o->g));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	o->pid = ASSERT_SYS(child_fork());
	if (o->pid == 0) {
		close(sv[0]);
		_exit(child_owner(sv[1], self->align, obj_size, map_flags,
				  &o->g));
	}
	close(sv[1]);
	fd = fd_recv(sv[0], STEP_TIMEOUT_MS);
	ASSERT_LE(0, fd) TH_LOG("region fd from the owner: %s",
				strerror(errno));
	close(sv[0]);
	return fd;
}

static void end_owner(struct __test_metadata *_metadata, struct owner *o,
		      bool kill_it)
{
	if (kill_it) {
		ASSERT_EQ(0, kill(o->pid, SIGKILL));
		ASSERT_CHILD_KILLED(o->pid, SIGKILL);
	} else {
		gate_open(&o->g);
		ASSERT_CHILD_OK(o->pid);
	}
	gate_fini(&o->g);
}

TEST_F(owner_end, destroys_region)
{
	struct owner o;
	pid_t pid;

	self->fd = start_owner(_metadata, self, &o, OBJ_SIZE, 0);
	self->win = test_attach(_metadata, self->fd, 0, 0, 0);
	ASSERT_EQ(-1, stamps_check(self->win + OBJ_ROFF, OBJ_SIZE, 1));
	ASSERT_EQ(1, owner_seen_by(_metadata, 0, self->fd));
	ASSERT_EQ(0, test_fdinfo(_metadata, 0, self->fd, "mshare-owner-fd"));
	ASSERT_EQ(2, test_fdinfo(_metadata, 0, self->fd, "mshare-attached"));
	/* not the owner, even holding a read-write fd */
	EXPECT_ERRNO(EPERM, sys_mshare_map_anon(self->fd, 0, OBJ_SIZE, 0));
	EXPECT_ERRNO(EPERM, ftruncate(self->fd, 2 * self->align));

	end_owner(_metadata, &o, variant->kill);
	ASSERT_EQ(0, owner_seen_by(_metadata, 0, self->fd));
	ASSERT_READ_SIGNAL(SIGSEGV, self->win + OBJ_ROFF);
	ASSERT_WRITE_SIGNAL(SIGSEGV, self->win + OBJ_ROFF + OBJ_SIZE - 8);
	EXPECT_ERRNO(ENXIO, mmap(NULL, self->align, PROT_READ | PROT_WRITE,
				 MAP_SHARED, self->fd, 0));
	EXPECT_ERRNO(ENXIO, sys_mshare_attach(self->fd, 0, 0, NULL, 0));
	EXPECT_ERRNO(ENXIO, sys_mshare_map_anon(self->fd, 0, OBJ_SIZE, 0));
	EXPECT_ERRNO(ENXIO, sys_mshare_protect(self->fd, OBJ_ROFF, OBJ_SIZE,
					       PROT_READ));

	/* and in a child, with the window it inherits */
	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(child_check_destroyed(self->fd, self->win, self->align));
	ASSERT_CHILD_OK(pid);
}

static long shmem_kib(void)
{
	vmstat_refresh();
	return meminfo_kib("Shmem");
}

/*
 * After the region's end, Shmem comes back to where it was before its
 * object was populated (within 1/8 of the object), polled for a while as
 * the last references may be dropped from deferred work.
 */
static void assert_shmem_back(struct __test_metadata *_metadata,
			      long before, long populated, const char *how)
{
	const long size_kib = BIG_OBJ >> 10;
	double start = now_s();
	long after;

	do {
		after = shmem_kib();
		if (after <= before + size_kib / 8)
			break;
		usleep(100 * 1000);
	} while (now_s() - start < FREE_TIMEOUT_S);
	ksft_print_msg("lifetime-numbers: end=%s object_kib=%ld shmem_before_kib=%ld shmem_populated_kib=%ld shmem_after_kib=%ld wait_s=%.1f\n",
		       how, size_kib, before, populated, after,
		       now_s() - start);
	ASSERT_GE(before + size_kib / 8, after)
		TH_LOG("the object's memory was not freed");
}

TEST_F(lifetime, memory_freed_after_last_close)
{
	const long size_kib = BIG_OBJ >> 10;
	long before, populated;

	before = shmem_kib();
	ASSERT_LE(0, before);
	own_region(_metadata, self, BIG_OBJ, MAP_POPULATE);
	populated = shmem_kib();
	ASSERT_LE(before + size_kib * 3 / 4, populated)
		TH_LOG("the object's pages are not in Shmem: %ld -> %ld kB",
		       before, populated);

	/* this process keeps its window */
	ASSERT_EQ(0, close(self->fd));
	self->fd = -1;
	assert_shmem_back(_metadata, before, populated, "close");
	ASSERT_READ_SIGNAL(SIGSEGV, self->win + OBJ_ROFF);
}

TEST_F(owner_end, frees_memory)
{
	const long size_kib = BIG_OBJ >> 10;
	long before, populated;
	struct owner o;

	before = shmem_kib();
	ASSERT_LE(0, before);
	self->fd = start_owner(_metadata, self, &o, BIG_OBJ, MAP_POPULATE);
	self->win = test_attach(_metadata, self->fd, 0, 0, 0);
	populated = shmem_kib();
	ASSERT_LE(before + size_kib * 3 / 4, populated)
		TH_LOG("the object's pages are not in Shmem: %ld -> %ld kB",
		       before, populated);

	/* this process keeps its descriptor and its window */
	end_owner(_metadata, &o, variant->kill);
	assert_shmem_back(_metadata, before, populated,
			  variant->kill ? "sigkill" : "exit");
	ASSERT_READ_SIGNAL(SIGSEGV, self->win + OBJ_ROFF);
}

/* A child doing what it is told: 'a' attach, 'u' munmap, 'q' quit. */
static int child_remote(int fd, uint64_t align, int cmd_fd, int ack_fd)
{
	char *w = NULL, cmd, ack;

	for (;;) {
		CHILD_CHECK(msg_recv(cmd_fd, &cmd, 1, STEP_TIMEOUT_MS) == 0,
			    "%m");
		ack = 1;
		switch (cmd) {
		case 'a':
			w = sys_mshare_attach(fd, 0, 0, NULL, 0);
			ack = w != MAP_FAILED;
			break;
		case 'u':
			ack = w && munmap(w, align) == 0;
			w = NULL;
			break;
		case 'q':
			return 0;
		default:
			return 2;
		}
		CHILD_CHECK(msg_send(ack_fd, &ack, 1) == 0, "%m");
	}
}

struct remote {
	pid_t pid;
	int cmd, ack;
};

static void tell(struct __test_metadata *_metadata, struct remote *r,
		 char cmd)
{
	char ack = 0;

	ASSERT_EQ(0, msg_send(r->cmd, &cmd, 1));
	ASSERT_EQ(0, msg_recv(r->ack, &ack, 1, STEP_TIMEOUT_MS))
		TH_LOG("command %c: %s", cmd, strerror(errno));
	ASSERT_EQ(1, ack) TH_LOG("command %c failed in the child", cmd);
}

#define ASSERT_COUNTS(_attached, _windows) do {				\
	ASSERT_EQ(_attached, test_fdinfo(_metadata, 0, self->fd,	\
					 "mshare-attached"));		\
	ASSERT_EQ(_windows, test_fdinfo(_metadata, 0, self->fd,	\
					"mshare-windows"));		\
} while (0)

TEST_F(lifetime, attached_and_windows_counts)
{
	int cmd[2], ack[2], ready[2];
	struct remote r;
	struct gate g;
	char *w1, *w2, ok;
	pid_t y;

	self->fd = test_new_region(_metadata, self->align);
	test_sys_map_anon(_metadata, self->fd, OBJ_ROFF, OBJ_SIZE, 0);
	ASSERT_EQ(0, pipe2(cmd, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(ack, O_CLOEXEC));
	r.pid = ASSERT_SYS(child_fork());
	if (r.pid == 0) {
		close(cmd[1]);
		close(ack[0]);
		_exit(child_remote(self->fd, self->align, cmd[0], ack[1]));
	}
	close(cmd[0]);
	close(ack[1]);
	r.cmd = cmd[1];
	r.ack = ack[0];

	ASSERT_COUNTS(0, 0);
	w1 = test_attach(_metadata, self->fd, 0, 0, 0);
	ASSERT_COUNTS(1, 1);
	tell(_metadata, &r, 'a');
	ASSERT_COUNTS(2, 2);
	w2 = test_attach(_metadata, self->fd, 0, 0, MSHARE_ATTACH_RDONLY);
	ASSERT_COUNTS(2, 3);
	tell(_metadata, &r, 'u');
	ASSERT_COUNTS(1, 2);
	ASSERT_EQ(0, munmap(w2, self->align));
	ASSERT_COUNTS(1, 1);
	tell(_metadata, &r, 'a');
	ASSERT_COUNTS(2, 2);
	ok = 'q';
	ASSERT_EQ(0, msg_send(r.cmd, &ok, 1));
	ASSERT_CHILD_OK(r.pid);
	ASSERT_COUNTS(1, 1);

	/* fork() copies the window: the child's is one more */
	ASSERT_EQ(0, gate_init(&g));
	ASSERT_EQ(0, pipe2(ready, O_CLOEXEC));
	y = ASSERT_SYS(child_fork());
	if (y == 0) {
		close(ready[0]);
		_exit(child_close(self->fd, ready[1], &g));
	}
	close(ready[1]);
	ASSERT_EQ(0, msg_recv(ready[0], &ok, 1, STEP_TIMEOUT_MS));
	ASSERT_COUNTS(2, 2);
	ASSERT_EQ(0, kill(y, SIGKILL));
	ASSERT_CHILD_KILLED(y, SIGKILL);
	ASSERT_COUNTS(1, 1);
	ASSERT_EQ(0, munmap(w1, self->align));
	ASSERT_COUNTS(0, 0);
	gate_fini(&g);
	close(ready[0]);
	close(r.cmd);
	close(r.ack);
}

TEST_HARNESS_MAIN
