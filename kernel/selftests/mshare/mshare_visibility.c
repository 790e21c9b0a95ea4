// SPDX-License-Identifier: GPL-2.0
/*
 * What a region made by mshare_create() shows of itself: a sharer's
 * /proc/PID/status (VmRSS, RssShmem and VmPTE leave the region out) and
 * /proc/PID/maps line (the window is the file "[mshare]"); the smaps entry
 * of a window (Size is the window's size, VmFlags has "sp", which no
 * other mapping has, MshareRss and MshareTables lines that
 * grow when the region is populated, the same in every window and every
 * process, and matching fdinfo's mshare-rss and mshare-pgtables), and
 * memory cgroup charging: the region's pages and page tables are charged
 * to the cgroup its creator was in at mshare_create(), not to the cgroup
 * of a sharer, even when the sharer faults every page in, and whether the
 * sharer holds the owner file (a co-owner) or a reopened descriptor
 * (mshare_handoff covers hand-offs and removed cgroups).
 */
#include <sys/socket.h>
#include <sys/stat.h>

#include "mshare_test.h"

#define OBJ_ROFF	SZ_1G
#define SMAPS_OBJ	(4 * SZ_1M)
#define MEMCG_OBJ	(32 * SZ_1M)
#define STEP_TIMEOUT_MS	(100 * 1000)

FIXTURE(visibility) {
	struct mshare_ctx c;
	uint64_t align;
	size_t page;
};

FIXTURE_SETUP(visibility)
{
	mshare_test_setup(_metadata, &self->c, "visibility");
	self->align = self->c.align;
	self->page = self->c.page;
}

FIXTURE_TEARDOWN(visibility)
{
	child_kill_all();
	mshare_ctx_fini(&self->c);
}

/* --- smaps ------------------------------------------------------------- */

/* How many times flag is among the VmFlags of an smaps entry. */
static int vmflags_count(const char *entry, const char *flag)
{
	const char *p = strstr(entry, "\nVmFlags:");
	size_t flen = strlen(flag);
	int n = 0;

	if (!p)
		return -1;
	for (p += strlen("\nVmFlags:"); *p && *p != '\n'; p++) {
		if (*p == ' ')
			continue;
		if (!strncmp(p, flag, flen) &&
		    (p[flen] == ' ' || p[flen] == '\n' || !p[flen]))
			n++;
		while (p[1] && p[1] != ' ' && p[1] != '\n')
			p++;
	}
	return n;
}

static const char *vmflags_line(const char *entry)
{
	const char *p = strstr(entry, "\nVmFlags:");

	return p ? p + 1 : "(none)";
}

static char *test_smaps(struct __test_metadata *_metadata, const void *start)
{
	char *entry = smaps_entry(start);

	ASSERT_NE(NULL, entry) TH_LOG("no smaps entry at %p", start);
	return entry;
}

/* A child attaches read-only and finds rss_kib as its MshareRss. */
static int child_smaps(int fd, uint64_t align, long rss_kib)
{
	char *w, *entry;
	long kib;

	w = sys_mshare_attach(fd, 0, align, NULL, MSHARE_ATTACH_RDONLY);
	CHILD_CHECK(w != MAP_FAILED, "attach: %m");
	entry = smaps_entry(w);
	CHILD_CHECK(entry, "no smaps entry");
	CHILD_CHECK(smaps_kib(entry, "Size") == (long)(align >> 10), "Size");
	kib = smaps_kib(entry, "MshareRss");
	CHILD_CHECK(kib == rss_kib, "MshareRss %ld kB, the owner's %ld kB", kib,
		    rss_kib);
	free(entry);
	return 0;
}

/* The line of /proc/self/maps for the mapping at start, malloc()ed. */
static char *maps_line(const void *start)
{
	char *all = read_text("/proc/self/maps", NULL), *b, *ret = NULL;

	if (!all)
		return NULL;
	b = mapping_line(all, start, '-');
	if (b)
		ret = strndup(b, strcspn(b, "\n"));
	free(all);
	return ret;
}

struct status_kib {
	long rss, shmem, pte;
};

static void status_read(struct status_kib *st)
{
	st->rss = status_kib("VmRSS");
	st->shmem = status_kib("RssShmem");
	st->pte = status_kib("VmPTE");
}

/*
 * A sharer reads all of a populated region: its own VmRSS, RssShmem and
 * VmPTE leave the region out (it is counted once, in the region), and
 * its window shows in /proc/PID/maps as the region's file, "[mshare]".
 */
static int child_status(int fd, uint64_t align, uint64_t len, long slack_kib)
{
	struct status_kib before, after;
	char *w, *line;

	status_read(&before);
	w = sys_mshare_attach(fd, 0, align, NULL, MSHARE_ATTACH_RDONLY);
	CHILD_CHECK(w != MAP_FAILED, "attach: %m");
	CHILD_CHECK(stamps_check(w + OBJ_ROFF, len, 17) == -1, "data");
	status_read(&after);
	CHILD_CHECK(before.rss >= 0 && before.shmem >= 0 && before.pte >= 0,
		    "no VmRSS, RssShmem or VmPTE in /proc/self/status");
	CHILD_CHECK(after.rss - before.rss <= slack_kib,
		    "VmRSS %ld -> %ld kB after reading %lu kB of the region",
		    before.rss, after.rss, (unsigned long)(len >> 10));
	CHILD_CHECK(after.shmem - before.shmem <= slack_kib,
		    "RssShmem %ld -> %ld kB", before.shmem, after.shmem);
	CHILD_CHECK(after.pte == before.pte, "VmPTE %ld -> %ld kB",
		    before.pte, after.pte);
	line = maps_line(w);
	CHILD_CHECK(line && strstr(line, "[mshare]"), "maps: %s",
		    line ?: "(no line)");
	printf("# a sharer's maps line: %s\n", line);
	free(line);
	return 0;
}

TEST_F(visibility, sharer_status_leaves_region_out)
{
	const uint64_t len = 16 * SZ_1M;
	/* What the per-cpu rss counters may hold back, and a stack page. */
	const long slack_kib = (rss_slack_pages() + 1) * (self->page >> 10);
	long long rss;
	pid_t pid;
	char *w;
	int fd;

	fd = test_new_region(_metadata, self->align);
	test_sys_map_anon(_metadata, fd, OBJ_ROFF, len, 0);
	w = test_attach(_metadata, fd, 0, 0, 0);
	stamp_pages(w + OBJ_ROFF, len, 17);
	rss = test_fdinfo(_metadata, 0, fd, "mshare-rss");
	ASSERT_LE((long long)(len / self->page - rss_slack_pages()), rss)
		TH_LOG("the region holds %lld pages", rss);

	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(child_status(fd, self->align, len, slack_kib));
	ASSERT_CHILD_OK(pid);
	munmap(w, self->align);
	close(fd);
}

TEST_F(visibility, smaps_of_windows)
{
	const uint64_t a = self->align;
	const long obj_kib = SMAPS_OBJ >> 10;
	const long slack_kib = rss_slack_pages() * (self->page >> 10);
	char *w, *part, *m, *ew, *ep, *em;
	long rss0, rss1, tables1;
	int fd, memfd, ms_w, ms_m;
	pid_t pid;

	fd = test_new_region(_metadata, 2 * a);
	test_sys_map_anon(_metadata, fd, OBJ_ROFF, SMAPS_OBJ, 0);
	w = test_attach(_metadata, fd, 0, 0, 0);
	part = test_attach(_metadata, fd, a, a, 0);
	memfd = ASSERT_SYS(memfd_sized(SZ_64K));
	m = mmap(NULL, SZ_64K, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	ASSERT_NE(MAP_FAILED, m);
	*(volatile char *)m = 1;

	ew = test_smaps(_metadata, w);
	ep = test_smaps(_metadata, part);
	em = test_smaps(_metadata, m);
	ASSERT_EQ((long)(2 * a >> 10), smaps_kib(ew, "Size"));
	ASSERT_EQ((long)(a >> 10), smaps_kib(ep, "Size"));

	/* "sp" (VM_MSHARE) for windows only */
	ms_w = vmflags_count(ew, "sp");
	ms_m = vmflags_count(em, "sp");
	TH_LOG("window %s", vmflags_line(ew));
	TH_LOG("memfd  %s", vmflags_line(em));
	ASSERT_EQ(1, ms_w) TH_LOG("no \"sp\" in the window's VmFlags");
	ASSERT_EQ(0, ms_m) TH_LOG("\"sp\" in a MAP_SHARED mapping's VmFlags");
	ASSERT_EQ(1, vmflags_count(ep, "sp"));

	/* the region's lines, in windows only */
	rss0 = smaps_kib(ew, "MshareRss");
	ASSERT_LE(0, rss0) TH_LOG("no MshareRss line");
	ASSERT_LE(0, smaps_kib(ew, "MshareTables"))
		TH_LOG("no MshareTables line");
	ASSERT_EQ(rss0, smaps_kib(ep, "MshareRss"));
	ASSERT_EQ(-1, smaps_kib(em, "MshareRss"));
	ASSERT_EQ(-1, smaps_kib(em, "MshareTables"));
	free(ew);
	free(ep);
	free(em);

	/* populate through the window: the region's numbers grow */
	memset(w + OBJ_ROFF, 0x5a, SMAPS_OBJ);
	ew = test_smaps(_metadata, w);
	ep = test_smaps(_metadata, part);
	rss1 = smaps_kib(ew, "MshareRss");
	tables1 = smaps_kib(ew, "MshareTables");
	TH_LOG("MshareRss %ld -> %ld kB, MshareTables %ld kB", rss0, rss1,
	       tables1);
	ASSERT_LE(rss0 + obj_kib - 2 * slack_kib, rss1);
	ASSERT_LT(0, tables1);
	/* the same numbers in every window, and in fdinfo */
	ASSERT_EQ(rss1, smaps_kib(ep, "MshareRss"));
	ASSERT_EQ(tables1, smaps_kib(ep, "MshareTables"));
	ASSERT_EQ(rss1, test_fdinfo(_metadata, 0, fd, "mshare-rss") *
			(long long)(self->page >> 10));
	ASSERT_EQ(tables1,
		  test_fdinfo(_metadata, 0, fd, "mshare-pgtables") >> 10);
	free(ew);
	free(ep);

	/* and in another process */
	pid = ASSERT_SYS(child_fork());
	if (pid == 0)
		_exit(child_smaps(fd, a, rss1));
	ASSERT_CHILD_OK(pid);

	munmap(m, SZ_64K);
	munmap(part, a);
	munmap(w, 2 * a);
	close(memfd);
	close(fd);
}

TEST_F(visibility, fdinfo_pgtables_after_populate)
{
	const uint64_t size = 4 * SZ_1M;
	long long pg0, pg1, rss0, rss1;
	int fd;

	fd = test_new_region(_metadata, self->align);
	test_sys_map_anon(_metadata, fd, OBJ_ROFF, size, 0);
	/* PTE-mapped for sure (EINVAL only without THP: PTE-mapped anyway) */
	sys_mshare_advise(fd, OBJ_ROFF, size, MADV_NOHUGEPAGE);
	pg0 = test_fdinfo(_metadata, 0, fd, "mshare-pgtables");
	rss0 = test_fdinfo(_metadata, 0, fd, "mshare-rss");
	ASSERT_EQ(0, sys_mshare_advise(fd, OBJ_ROFF, size, MADV_POPULATE_WRITE))
		TH_LOG("MADV_POPULATE_WRITE: %s", strerror(errno));
	pg1 = test_fdinfo(_metadata, 0, fd, "mshare-pgtables");
	rss1 = test_fdinfo(_metadata, 0, fd, "mshare-rss");
	TH_LOG("mshare-pgtables %lld -> %lld, mshare-rss %lld -> %lld", pg0,
	       pg1, rss0, rss1);
	ASSERT_LT(0, pg1);
	/* at least the two PTE tables of 4 MiB */
	ASSERT_LE(pg0 + 2 * (long long)self->page, pg1);
	ASSERT_LE(rss0 + (long long)(size / self->page) - 2 * rss_slack_pages(),
		  rss1);
	close(fd);
}

/* --- memory cgroups ---------------------------------------------------- */

FIXTURE(memcg) {
	struct mshare_ctx c;
	uint64_t align;
	char cg_owner[PATH_MAX];	/* made by the test, or "" */
	char cg_sharer[PATH_MAX];
	bool memory_enabled;		/* +memory written to the root */
};

FIXTURE_VARIANT(memcg) {
	/*
	 * The sharer gets the owner file itself, and so owns the region as
	 * much as its creator; or a reopened descriptor, which owns nothing.
	 */
	bool owner_file;
};

FIXTURE_VARIANT_ADD(memcg, owner_file) { .owner_file = true };
FIXTURE_VARIANT_ADD(memcg, reopened_file) { .owner_file = false };

FIXTURE_SETUP(memcg)
{
	mshare_test_setup(_metadata, &self->c, "memcg");
	self->align = self->c.align;
}

FIXTURE_TEARDOWN(memcg)
{
	child_kill_all();
	if (self->cg_owner[0])
		cg_remove(self->cg_owner);
	if (self->cg_sharer[0])
		cg_remove(self->cg_sharer);
	cg_memory_restore(self->memory_enabled);
	mshare_ctx_fini(&self->c);
}

/*
 * The creator: in its cgroup, makes the region with a MEMCG_OBJ anonymous
 * object, not populated, and hands the sharer the owner file or a
 * reopened read-write descriptor.
 */
static int child_owner(const char *cg, uint64_t align, bool owner_file,
		       int sock, int ready_fd, struct gate *done)
{
	char ok = 'O';
	int fd, give;

	gate_child(done);
	CHILD_CHECK(cg_join(cg) == 0, "join %s: %m", cg);
	fd = mshare_new(align, O_CLOEXEC);
	CHILD_CHECK(fd >= 0, "mshare_create: %m");
	CHILD_CHECK(sys_mshare_map_anon(fd, OBJ_ROFF, MEMCG_OBJ, 0) == 0,
		    "mshare_map: %m");
	/* one PTE table per 2 MiB for sure */
	CHILD_CHECK(sys_mshare_advise(fd, OBJ_ROFF, MEMCG_OBJ,
				      MADV_NOHUGEPAGE) == 0 || errno == EINVAL,
		    "MADV_NOHUGEPAGE: %m");
	give = owner_file ? fd : fd_reopen(fd, O_RDWR);
	CHILD_CHECK(give >= 0, "reopen: %m");
	CHILD_CHECK(fd_send(sock, give) == 0, "fd_send: %m");
	CHILD_CHECK(msg_send(ready_fd, &ok, 1) == 0, "%m");
	CHILD_CHECK(gate_wait(done) == 0, "%m");
	return 0;
}

/* The sharer: in its cgroup, attaches, then touches every page on go. */
static int child_sharer(const char *cg, bool owner_file, int sock,
			int ready_fd, struct gate *go, struct gate *done)
{
	long long owner_fd = -1;
	char *w, ok = 'A';
	size_t off;
	int fd;

	gate_child(go);
	gate_child(done);
	CHILD_CHECK(cg_join(cg) == 0, "join %s: %m", cg);
	fd = fd_recv(sock, STEP_TIMEOUT_MS);
	CHILD_CHECK(fd >= 0, "fd_recv: %m");
	CHILD_CHECK(fdinfo_get(0, fd, "mshare-owner-fd", &owner_fd) == 0 &&
		    owner_fd == owner_file, "mshare-owner-fd %lld", owner_fd);
	w = sys_mshare_attach(fd, 0, 0, NULL, 0);
	CHILD_CHECK(w != MAP_FAILED, "attach: %m");
	CHILD_CHECK(msg_send(ready_fd, &ok, 1) == 0, "%m");
	CHILD_CHECK(gate_wait(go) == 0, "%m");
	for (off = 0; off < MEMCG_OBJ; off += SZ_4K)
		((volatile char *)w)[OBJ_ROFF + off] = 1;
	ok = 'T';
	CHILD_CHECK(msg_send(ready_fd, &ok, 1) == 0, "%m");
	CHILD_CHECK(gate_wait(done) == 0, "%m");
	return 0;
}

TEST_F(memcg, charges_creator_not_sharer)
{
	const long long obj = MEMCG_OBJ;
	struct cg_numbers o0, o1, s0, s1;
	int sv[2], oready[2], sready[2];
	struct gate go, done;
	pid_t owner, sharer;
	char c, why[256];
	int ret;

	ret = cg_memory_setup(&self->memory_enabled, why, sizeof(why));
	if (ret == -1)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, ret) TH_LOG("%s", why);
	cg_remove_stale();
	snprintf(self->cg_owner, sizeof(self->cg_owner), "%s/%sowner.%d",
		 CG_ROOT, CG_PREFIX, getpid());
	ASSERT_EQ(0, mkdir(self->cg_owner, 0755))
		TH_LOG("mkdir %s: %s", self->cg_owner, strerror(errno));
	snprintf(self->cg_sharer, sizeof(self->cg_sharer), "%s/%ssharer.%d",
		 CG_ROOT, CG_PREFIX, getpid());
	ASSERT_EQ(0, mkdir(self->cg_sharer, 0755))
		TH_LOG("mkdir %s: %s", self->cg_sharer, strerror(errno));

	ASSERT_EQ(0, gate_init(&go));
	ASSERT_EQ(0, gate_init(&done));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	ASSERT_EQ(0, pipe2(oready, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(sready, O_CLOEXEC));
	sharer = ASSERT_SYS(child_fork());
	if (sharer == 0)
		_exit(child_sharer(self->cg_sharer, variant->owner_file, sv[1],
				   sready[1], &go, &done));
	owner = ASSERT_SYS(child_fork());
	if (owner == 0) {
		gate_child(&go);
		_exit(child_owner(self->cg_owner, self->align,
				  variant->owner_file, sv[0], oready[1],
				  &done));
	}
	close(oready[1]);
	close(sready[1]);
	ASSERT_EQ(0, msg_recv(oready[0], &c, 1, STEP_TIMEOUT_MS))
		TH_LOG("owner: %s", strerror(errno));
	ASSERT_EQ(0, msg_recv(sready[0], &c, 1, STEP_TIMEOUT_MS))
		TH_LOG("sharer: %s", strerror(errno));
	assert_in_cgroup(_metadata, owner, self->cg_owner);
	assert_in_cgroup(_metadata, sharer, self->cg_sharer);

	test_cg_measure(_metadata, self->cg_owner, &o0);
	test_cg_measure(_metadata, self->cg_sharer, &s0);
	gate_open(&go);
	ASSERT_EQ(0, msg_recv(sready[0], &c, 1, STEP_TIMEOUT_MS))
		TH_LOG("sharer touching: %s", strerror(errno));
	test_cg_measure(_metadata, self->cg_owner, &o1);
	test_cg_measure(_metadata, self->cg_sharer, &s1);
	ksft_print_msg("memcg-numbers: sharer_has=%s object_kib=%lld owner_current_kib=%lld owner_shmem_kib=%lld owner_pagetables_kib=%lld sharer_current_kib=%lld sharer_shmem_kib=%lld sharer_pagetables_kib=%lld (growth)\n",
		       variant->owner_file ? "owner-file" : "reopened-file",
		       obj >> 10, (o1.current - o0.current) >> 10,
		       (o1.shmem - o0.shmem) >> 10,
		       (o1.pagetables - o0.pagetables) >> 10,
		       (s1.current - s0.current) >> 10,
		       (s1.shmem - s0.shmem) >> 10,
		       (s1.pagetables - s0.pagetables) >> 10);

	/* the sharer faulted the pages in; the creator pays */
	EXPECT_LE(obj * 7 / 8, o1.current - o0.current);
	EXPECT_LE(obj * 7 / 8, o1.shmem - o0.shmem);
	EXPECT_GT(obj / 8, s1.current - s0.current);
	EXPECT_GT(obj / 8, s1.shmem - s0.shmem);
	/* 16 PTE tables for 32 MiB, in the region, charged to the creator */
	EXPECT_LE(16 * SZ_4K, o1.pagetables - o0.pagetables);
	EXPECT_GT(4 * SZ_4K, s1.pagetables - s0.pagetables);

	gate_open(&done);
	ASSERT_CHILD_OK(owner);
	ASSERT_CHILD_OK(sharer);
	gate_fini(&go);
	gate_fini(&done);
	close(sv[0]);
	close(sv[1]);
	close(oready[0]);
	close(sready[0]);
}

TEST_HARNESS_MAIN
