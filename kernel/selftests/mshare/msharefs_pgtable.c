// SPDX-License-Identifier: GPL-2.0
/*
 * Page tables are shared: 64 processes reading every page of a 1 GiB
 * object through windows add (almost) nothing to PageTables and take
 * (almost) no page faults. For comparison, 2 processes mapping the same
 * 1 GiB memfd the ordinary way each add about 2 MiB of page tables.
 *
 * Greppable results:
 *   # mshare-numbers: sharers=64 ... pagetables_kib=... minflt_max=...
 *   # memfd-numbers: procs=2 ... pagetables_kib_per_proc=...
 */
#include <fcntl.h>

#include "mshare_test.h"

#define OBJ_SIZE		SZ_1G
#define NR_SHARERS		64
#define NR_MEMFD_PROCS		2
#define OBJ_SEED		1
#define MAX_SHARER_FAULTS	4
#define MAX_MSHARE_PT_KIB	1024		/* growth for all 64 */
#define MIN_MEMFD_PT_KIB	1536		/* growth per process */
#define STEP_TIMEOUT_MS		(240 * 1000)

/*
 * The object both tests map: a 1 GiB memfd of stamped pages. The harness
 * runs each test in a child of its own process, and the memfd is made in
 * that process, so the test that runs second finds the pages the first
 * one wrote instead of allocating and writing 1 GiB again (half a minute
 * on a debug kernel under emulation).
 */
static int obj_fd = -1;
static int obj_errno;

static void __attribute__((constructor)) obj_create(void)
{
	obj_fd = memfd_sized(OBJ_SIZE);
	obj_errno = errno;
}

/* Stamp every page of the object, unless an earlier test did. */
static void obj_fill(struct __test_metadata *_metadata)
{
	const uint64_t last = OBJ_SIZE - SZ_4K;
	uint64_t off, word;
	char *buf;
	double t0;

	ASSERT_LE(0, obj_fd)
		TH_LOG("memfd of 1 GiB: %s", strerror(obj_errno));
	/* the pages are written in order: the last one is written last */
	ASSERT_EQ(0, pread_full(obj_fd, &word, sizeof(word), last));
	if (word == pattern_word(OBJ_SEED, last))
		return;

	t0 = now_s();
	buf = calloc(1, SZ_1M);
	ASSERT_NE(NULL, buf);
	for (off = 0; off < OBJ_SIZE; off += SZ_1M) {
		stamp_pages_at(buf, SZ_1M, OBJ_SEED, off);
		ASSERT_EQ(0, pwrite_full(obj_fd, buf, SZ_1M, off));
	}
	free(buf);
	TH_LOG("filled the 1 GiB memfd in %.1f s", now_s() - t0);
}

FIXTURE(pgtable) {
	struct mshare_ctx c;
};

FIXTURE_SETUP(pgtable)
{
	mshare_test_setup(_metadata, &self->c, "pgtable");
}

FIXTURE_TEARDOWN(pgtable)
{
	mshare_ctx_fini(&self->c);
}

/* How each reader maps OBJ_SIZE bytes of stamped data. */
struct reader_job {
	int fd;
	uint64_t map_len;
	int prot;
	int flags;		/* besides MAP_SHARED */
	uint64_t data_off;	/* of the data in the mapping */
	uint64_t seed;
};

struct reader_report {
	long minflt;		/* during the touching loop */
	long bad;		/* first page with a wrong stamp, or -1 */
};

/* The pipes and gates of one group of readers. */
struct group {
	struct gate go, done;
	int ready[2], report[2];
};

static long pagetables_kib(void)
{
	vmstat_refresh();
	return meminfo_kib("PageTables");
}

static int reader(const struct reader_job *job, struct group *g)
{
	struct reader_report rep;
	volatile char warm[64 * 1024];
	long before;
	char *p;

	gate_child(&g->go);
	gate_child(&g->done);
	close(g->ready[0]);
	close(g->report[0]);
	/* fault in this loop's stack and getrusage() before measuring */
	memset((char *)warm, 1, sizeof(warm));
	minflt_self();
	CHILD_CHECK(msg_send(g->ready[1], "r", 1) == 0, "ready: %m");
	CHILD_CHECK(gate_wait(&g->go) == 0, "go: %m");

	p = mmap(NULL, job->map_len, job->prot, MAP_SHARED | job->flags,
		 job->fd, 0);
	CHILD_CHECK(p != MAP_FAILED, "mmap: %m");
	before = minflt_self();
	rep.bad = stamps_check(p + job->data_off, OBJ_SIZE, job->seed);
	rep.minflt = minflt_self() - before;
	CHILD_CHECK(msg_send(g->report[1], &rep, sizeof(rep)) == 0, "%m");
	/* keep the mapping while the parent reads PageTables */
	CHILD_CHECK(gate_wait(&g->done) == 0, "done: %m");
	return 0;
}

struct group_result {
	long pt_growth_kib;
	long minflt_max;
	long minflt_total;
	long bad;		/* readers that saw a wrong stamp */
};

/*
 * Start n readers, let them map and read once they are all waiting, then
 * measure PageTables while they all still have their mappings.
 */
static void run_readers(struct __test_metadata *_metadata,
			const struct reader_job *job, int n,
			struct group_result *res)
{
	struct reader_report rep;
	pid_t pids[NR_SHARERS];
	struct group g;
	long base;
	char c;
	int i;

	memset(res, 0, sizeof(*res));
	ASSERT_EQ(0, gate_init(&g.go));
	ASSERT_EQ(0, gate_init(&g.done));
	ASSERT_EQ(0, pipe(g.ready));
	ASSERT_EQ(0, pipe(g.report));
	for (i = 0; i < n; i++) {
		pids[i] = ASSERT_SYS(child_fork());
		if (pids[i] == 0)
			_exit(reader(job, &g));
	}
	close(g.ready[1]);
	close(g.report[1]);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, msg_recv(g.ready[0], &c, 1, STEP_TIMEOUT_MS))
			TH_LOG("reader %d not ready: %s", i, strerror(errno));
	}

	base = pagetables_kib();
	ASSERT_LE(0, base);
	gate_open(&g.go);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, msg_recv(g.report[0], &rep, sizeof(rep),
				      STEP_TIMEOUT_MS))
			TH_LOG("report %d: %s", i, strerror(errno));
		if (rep.minflt > res->minflt_max)
			res->minflt_max = rep.minflt;
		res->minflt_total += rep.minflt;
		res->bad += rep.bad != -1;
	}
	res->pt_growth_kib = pagetables_kib() - base;

	gate_open(&g.done);
	for (i = 0; i < n; i++) {
		ASSERT_CHILD_OK(pids[i]);
	}
	gate_fini(&g.go);
	gate_fini(&g.done);
	close(g.ready[0]);
	close(g.report[0]);
}

TEST_F_TIMEOUT(pgtable, mshare_sharers_share_page_tables, 280)
{
	const uint64_t align = self->c.align;
	struct reader_job job = {
		.map_len = align, .prot = PROT_READ | PROT_WRITE,
		.data_off = 0, .seed = OBJ_SEED,
	};
	struct group_result res;
	double t0;

	obj_fill(_metadata);
	t0 = now_s();
	job.fd = test_region(_metadata, &self->c, "r", align);
	ASSERT_EQ(0, mshare_map(job.fd, 0, OBJ_SIZE, 0, PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_FIXED | MAP_POPULATE, obj_fd))
		TH_LOG("the 1 GiB memfd as the region's object: %s",
		       strerror(errno));
	TH_LOG("owner populated the region's page tables in %.1f s",
	       now_s() - t0);

	t0 = now_s();
	run_readers(_metadata, &job, NR_SHARERS, &res);
	ksft_print_msg("mshare-numbers: sharers=%d object_mib=%lu pagetables_kib=%ld minflt_max=%ld minflt_total=%ld seconds=%.1f\n",
		       NR_SHARERS, OBJ_SIZE >> 20, res.pt_growth_kib,
		       res.minflt_max, res.minflt_total, now_s() - t0);
	ASSERT_EQ(0, res.bad) TH_LOG("readers that saw wrong data");
	EXPECT_GT(MAX_MSHARE_PT_KIB, res.pt_growth_kib);
	EXPECT_GE(MAX_SHARER_FAULTS, res.minflt_max);
	close(job.fd);
}

TEST_F_TIMEOUT(pgtable, memfd_mappers_each_have_page_tables, 280)
{
	/* allocated and up to date, so the mappers only build page tables */
	struct reader_job job = {
		.fd = obj_fd, .map_len = OBJ_SIZE, .prot = PROT_READ,
		.flags = MAP_POPULATE, .data_off = 0, .seed = OBJ_SEED,
	};
	struct group_result res;
	double t0;

	obj_fill(_metadata);
	t0 = now_s();
	run_readers(_metadata, &job, NR_MEMFD_PROCS, &res);
	ksft_print_msg("memfd-numbers: procs=%d object_mib=%lu pagetables_kib=%ld pagetables_kib_per_proc=%ld minflt_max=%ld seconds=%.1f\n",
		       NR_MEMFD_PROCS, OBJ_SIZE >> 20, res.pt_growth_kib,
		       res.pt_growth_kib / NR_MEMFD_PROCS, res.minflt_max,
		       now_s() - t0);
	ASSERT_EQ(0, res.bad) TH_LOG("readers that saw wrong data");
	EXPECT_LE(NR_MEMFD_PROCS * MIN_MEMFD_PT_KIB, res.pt_growth_kib);
}

TEST_HARNESS_MAIN
