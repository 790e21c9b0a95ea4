// SPDX-License-Identifier: GPL-2.0
/*
 * The owner: the process (thread group) that created a region. When it
 * exits or is killed, every window of the region faults with SIGSEGV, new
 * mmap()s fail with ENXIO and the memory of the objects is freed, even
 * while other processes still have the region open and mapped.
 */
#include <fcntl.h>
#include <pthread.h>

#include "mshare_test.h"

#define OBJ_ROFF	SZ_1G
#define SMALL_OBJ	SZ_2M
#define BIG_OBJ		(256 * SZ_1M)
#define READY_TIMEOUT_MS	(200 * 1000)

FIXTURE(lifetime) {
	struct mshare_ctx c;
	uint64_t align;
	pid_t owner;
	struct gate owner_exit;
	int fd;		/* the region, opened by the test after creation */
	char *win;
};

FIXTURE_VARIANT(lifetime) {
	bool kill;	/* the owner is SIGKILLed instead of exiting */
};

FIXTURE_VARIANT_ADD(lifetime, exits) { .kill = false };
FIXTURE_VARIANT_ADD(lifetime, killed) { .kill = true };

FIXTURE_SETUP(lifetime)
{
	self->fd = -1;
	self->owner_exit.rfd = self->owner_exit.wfd = -1;
	mshare_test_setup(_metadata, &self->c, "owner");
	self->align = self->c.align;
}

FIXTURE_TEARDOWN(lifetime)
{
	if (self->win)
		munmap(self->win, self->align);
	if (self->fd >= 0)
		close(self->fd);
	gate_fini(&self->owner_exit);
	mshare_ctx_fini(&self->c);
}

struct owner_job {
	const struct mshare_ctx *c;
	uint64_t obj_size;
	const char *err;	/* what failed, and its errno */
	int errnum;
};

/* Create, size and map region "r", populate an object and stamp it. */
static void *owner_setup(void *arg)
{
	struct owner_job *job = arg;
	uint64_t align = job->c->align;
	char *win;
	int fd;

	fd = mshare_create(job->c, "r", align);
	if (fd < 0) {
		job->err = "create";
		job->errnum = errno;
		return NULL;
	}
	if (mshare_map_anon(fd, OBJ_ROFF, job->obj_size, MAP_POPULATE)) {
		job->err = "CREATE_MAPPING";
		job->errnum = errno;
		return NULL;
	}
	win = mshare_window(fd, align, NULL, 0);
	if (win == MAP_FAILED) {
		job->err = "window";
		job->errnum = errno;
		return NULL;
	}
	stamp_pages(win + OBJ_ROFF, job->obj_size, 1);
	return NULL;
}

static int owner_main(const struct mshare_ctx *c, uint64_t obj_size,
		      bool in_thread, int ready_fd, struct gate *owner_exit)
{
	struct owner_job job = { .c = c, .obj_size = obj_size };
	pthread_t thread;
	char ok = 1;

	if (in_thread) {
		/* a thread creates everything and is gone before "ready" */
		CHILD_CHECK(pthread_create(&thread, NULL, owner_setup, &job) == 0,
			    "pthread_create");
		CHILD_CHECK(pthread_join(thread, NULL) == 0, "pthread_join");
	} else {
		owner_setup(&job);
	}
	CHILD_CHECK(!job.err, "owner %s: %s", job.err, strerror(job.errnum));
	CHILD_CHECK(msg_send(ready_fd, &ok, 1) == 0, "ready: %m");
	CHILD_CHECK(gate_wait(owner_exit) == 0, "gate: %m");
	return 0;
}

/* Start an owner, then open and map its region and check the stamps. */
static void start_owner(struct __test_metadata *_metadata,
			FIXTURE_DATA(lifetime) *self, uint64_t obj_size,
			bool in_thread)
{
	int ready[2];
	char ok;

	ASSERT_EQ(0, gate_init(&self->owner_exit));
	ASSERT_EQ(0, pipe(ready));
	self->owner = ASSERT_SYS(child_fork());
	if (self->owner == 0) {
		close(ready[0]);
		gate_child(&self->owner_exit);
		_exit(owner_main(&self->c, obj_size, in_thread, ready[1],
				 &self->owner_exit));
	}
	close(ready[1]);
	ASSERT_EQ(0, msg_recv(ready[0], &ok, 1, READY_TIMEOUT_MS))
		TH_LOG("owner not ready: %s", strerror(errno));
	close(ready[0]);

	self->fd = ASSERT_SYS(mshare_open(&self->c, "r", O_RDWR));
	self->win = test_window(_metadata, self->fd, self->align);
	ASSERT_EQ(-1, stamps_check(self->win + OBJ_ROFF, obj_size, 1));
}

/* Make the owner exit (or kill it, by variant) and reap it. */
static void end_owner(struct __test_metadata *_metadata,
		      FIXTURE_DATA(lifetime) *self,
		      const FIXTURE_VARIANT(lifetime) *variant)
{
	if (variant->kill) {
		ASSERT_EQ(0, kill(self->owner, SIGKILL));
		ASSERT_CHILD_KILLED(self->owner, SIGKILL);
	} else {
		gate_open(&self->owner_exit);
		ASSERT_CHILD_OK(self->owner);
	}
}

/*
 * A sharer from before the owner's end: maps the region, says so on
 * ready_fd, and touches its window when g opens.
 */
static int early_sharer(FIXTURE_DATA(lifetime) *self, struct gate *g,
			int ready_fd)
{
	char *win, ok = 1;
	int fd;

	gate_child(g);
	gate_child(&self->owner_exit);
	fd = mshare_open(&self->c, "r", O_RDWR);
	CHILD_CHECK(fd >= 0, "open: %m");
	win = mshare_window(fd, self->align, NULL, 0);
	CHILD_CHECK(win != MAP_FAILED, "window: %m");
	CHILD_CHECK(stamps_check(win + OBJ_ROFF, SMALL_OBJ, 1) == -1, "data");
	CHILD_CHECK(msg_send(ready_fd, &ok, 1) == 0, "ready: %m");
	CHILD_CHECK(gate_wait(g) == 0, "gate: %m");
	(void)*(volatile uint64_t *)(win + OBJ_ROFF);
	return 0;	/* expected to die first */
}

TEST_F(lifetime, windows_fault_after_owner_end)
{
	pid_t early, late;
	struct gate g;
	int ready[2];
	char *obj, ok;

	start_owner(_metadata, self, SMALL_OBJ, false);
	obj = self->win + OBJ_ROFF;
	ASSERT_EQ(0, gate_init(&g));
	ASSERT_EQ(0, pipe(ready));
	early = ASSERT_SYS(child_fork());
	if (early == 0)
		_exit(early_sharer(self, &g, ready[1]));
	close(ready[1]);
	ASSERT_EQ(0, msg_recv(ready[0], &ok, 1, READY_TIMEOUT_MS))
		TH_LOG("early sharer not ready: %s", strerror(errno));
	close(ready[0]);

	end_owner(_metadata, self, variant);
	gate_open(&g);
	ASSERT_CHILD_KILLED(early, SIGSEGV);
	gate_fini(&g);

	ASSERT_READ_SIGNAL(SIGSEGV, obj);
	ASSERT_WRITE_SIGNAL(SIGSEGV, obj + SMALL_OBJ - 8);
	late = ASSERT_SYS(child_fork());
	if (late == 0) {
		(void)*(volatile uint64_t *)obj;
		_exit(0);
	}
	ASSERT_CHILD_KILLED(late, SIGSEGV);
}

TEST_F(lifetime, mmap_fails_after_owner_end)
{
	int fd2;

	start_owner(_metadata, self, SMALL_OBJ, false);
	end_owner(_metadata, self, variant);

	EXPECT_ERRNO(ENXIO, mshare_window(self->fd, self->align, NULL, 0));
	fd2 = mshare_open(&self->c, "r", O_RDWR);
	if (fd2 >= 0) {
		EXPECT_ERRNO(ENXIO, mshare_window(fd2, self->align, NULL, 0));
		close(fd2);
	} else {
		TH_LOG("reopening the region by name: %s", strerror(errno));
	}
}

static long memfree_kib(void)
{
	vmstat_refresh();
	return meminfo_kib("MemFree");
}

/*
 * The object's pages are freed when the owner ends: Shmem, which counts
 * exactly those pages, returns to where it was. MemFree is polled, as
 * freed pages may sit on per-cpu lists for a while (each stat_refresh
 * decays them); on the debug kernel the allocator's own bookkeeping
 * (KASAN, kmemleak, per-cpu caches) keeps a few tens of MiB of what the
 * test process and its children allocated, so it must give back at least
 * three quarters of what populating the object took.
 */
TEST_F_TIMEOUT(lifetime, memory_freed_after_owner_end, 280)
{
	const long size_kib = BIG_OBJ >> 10;
	long before, populated, after = 0;
	long shmem_before, shmem_populated, shmem_after;
	double start, waited = 0;

	before = memfree_kib();
	shmem_before = meminfo_kib("Shmem");
	ASSERT_LT(0, before);
	start_owner(_metadata, self, BIG_OBJ, false);
	populated = memfree_kib();
	shmem_populated = meminfo_kib("Shmem");
	TH_LOG("object of %ld KiB took %ld KiB of MemFree", size_kib,
	       before - populated);
	ASSERT_LE(size_kib / 2, before - populated)
		TH_LOG("the object does not seem to be populated");
	ASSERT_LE(size_kib / 2, shmem_populated - shmem_before)
		TH_LOG("the object's pages are not in Shmem");

	/* this process still has the region open and a window mapped */
	end_owner(_metadata, self, variant);
	start = now_s();
	while (waited < 60) {
		after = memfree_kib();
		if (after - populated >= (before - populated) * 3 / 4)
			break;
		usleep(200 * 1000);
		waited = now_s() - start;
	}
	shmem_after = meminfo_kib("Shmem");
	ksft_print_msg("owner-numbers: end=%s object_kib=%ld memfree_before_kib=%ld memfree_populated_kib=%ld memfree_after_kib=%ld shmem_before_kib=%ld shmem_populated_kib=%ld shmem_after_kib=%ld wait_s=%.1f\n",
		       variant->kill ? "sigkill" : "exit", size_kib, before,
		       populated, after, shmem_before, shmem_populated,
		       shmem_after, waited);
	ASSERT_LE(shmem_after, shmem_before + size_kib / 100)
		TH_LOG("the object's pages were not freed after the owner's end");
	ASSERT_LE((before - populated) * 3 / 4, after - populated)
		TH_LOG("MemFree did not come back after the owner's end");
	ASSERT_READ_SIGNAL(SIGSEGV, self->win + OBJ_ROFF);
}

/* The owner is the thread group: the creating thread's exit ends nothing. */
TEST_F(lifetime, owner_is_the_thread_group)
{
	char *obj;
	pid_t pid;

	start_owner(_metadata, self, SMALL_OBJ, true);
	obj = self->win + OBJ_ROFF;
	usleep(100 * 1000);
	ASSERT_EQ(-1, stamps_check(obj, SMALL_OBJ, 1));
	stamp_pages(obj, SMALL_OBJ, 2);
	pid = ASSERT_SYS(child_fork());
	if (pid == 0) {
		char *win = mshare_window(self->fd, self->align, NULL, 0);

		CHILD_CHECK(win != MAP_FAILED, "window: %m");
		CHILD_CHECK(stamps_check(win + OBJ_ROFF, SMALL_OBJ, 2) == -1,
			    "data");
		_exit(0);
	}
	ASSERT_CHILD_OK(pid);

	/* ... and the process's end does */
	end_owner(_metadata, self, variant);
	ASSERT_READ_SIGNAL(SIGSEGV, obj);
	EXPECT_ERRNO(ENXIO, mshare_window(self->fd, self->align, NULL, 0));
}

TEST_HARNESS_MAIN
