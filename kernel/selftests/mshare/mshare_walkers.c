// SPDX-License-Identifier: GPL-2.0
/*
 * The walkers that report on or act on a process's memory, run against a
 * window while a child, the region's co-owner, maps an object, writes every
 * page of it through its own window and unmaps it again, in a loop: the
 * region's page tables are filled, emptied and freed under the walker.
 *
 * walkers.<walker>.while_the_owner_changes: for $MSHARE_WALK_SECONDS (3 by
 * default) the test process runs one walker over its window again and
 * again; each answer must be the one docs/kernel-status.md gives for a
 * window, whatever the region holds at that moment:
 *   pagemap     every entry a hole (the page walker keeps out of windows)
 *   numa_maps   the window's line has no page counts (no " N<node>=")
 *   clear_refs  writing "1" succeeds
 *   smaps       the window's own Rss is 0 kB (the region's pages are in
 *               MshareRss)
 *   mincore     succeeds (what is resident changes under it)
 *   move_pages  asked where pages are, says -ENOENT for each
 *   migrate     migrate_pages() from node 0 to node 0 succeeds
 *   vm_readv    process_vm_readv() of the window reads the page or fails
 *               with EFAULT
 *   proc_mem    pread() of /proc/self/mem reads the page or fails with
 *               EIO
 * (each outcome of the last two is counted and logged).
 * The debug kernel's checkers (KASAN, lockdep, DEBUG_VM, page table
 * check) judge what the answers cannot show.
 */
#include <ctype.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "mshare_test.h"

#define OBJ_SIZE	SZ_2M
#define PAGES		16
#define MAX_SECONDS	600
#define MIN_ROUNDS	10

struct board {
	_Atomic int stop;
	_Atomic unsigned long cycles;	/* map, write, unmap done */
};

struct walk {
	char *win;
	size_t page;
	int pagemap;
	int mem;
	unsigned long read, faulted;	/* vm_readv, proc_mem: outcomes */
	char why[256];
};

#define WHY(w, ...) (snprintf((w)->why, sizeof((w)->why), __VA_ARGS__), -1)

static int walk_pagemap(struct walk *w)
{
	uint64_t ents[PAGES];
	off_t off = (uintptr_t)w->win / w->page * sizeof(ents[0]);

	if (pread(w->pagemap, ents, sizeof(ents), off) != sizeof(ents))
		return WHY(w, "pread of pagemap: %m");
	for (int i = 0; i < PAGES; i++)
		if (ents[i] & (3ULL << 62))
			return WHY(w, "page %d: entry %#llx is not a hole", i,
				   (unsigned long long)ents[i]);
	return 0;
}

static int walk_numa_maps(struct walk *w)
{
	char *text = read_text("/proc/self/numa_maps", NULL), *line, *end;
	int ret = 0;

	if (!text)
		return WHY(w, "reading numa_maps: %m");
	line = mapping_line(text, w->win, ' ');
	if (!line) {
		ret = WHY(w, "no numa_maps line for the window");
	} else {
		end = strchrnul(line, '\n');
		*end = '\0';
		for (char *n = line; (n = strstr(n, " N")); n += 2)
			if (isdigit((unsigned char)n[2]))
				ret = WHY(w, "the window counts pages: %s", line);
	}
	free(text);
	return ret;
}

static int walk_clear_refs(struct walk *w)
{
	return write_text("/proc/self/clear_refs", "1") ?
	       WHY(w, "writing clear_refs: %m") : 0;
}

static int walk_smaps(struct walk *w)
{
	char *entry = smaps_entry(w->win);
	long rss;

	if (!entry)
		return WHY(w, "no smaps entry for the window");
	rss = smaps_kib(entry, "Rss");
	free(entry);
	return rss == 0 ? 0 : WHY(w, "the window's Rss is %ld kB", rss);
}

static int walk_mincore(struct walk *w)
{
	unsigned char vec[PAGES];

	return mincore(w->win, PAGES * w->page, vec) ?
	       WHY(w, "mincore: %m") : 0;
}

static int walk_move_pages(struct walk *w)
{
	void *pages[PAGES];
	int status[PAGES];

	for (int i = 0; i < PAGES; i++) {
		pages[i] = w->win + i * w->page;
		status[i] = 1;
	}
	if (syscall(__NR_move_pages, 0, PAGES, pages, NULL, status, 0))
		return WHY(w, "move_pages: %m");
	for (int i = 0; i < PAGES; i++)
		if (status[i] != -ENOENT)
			return WHY(w, "page %d: status %d, not -ENOENT", i,
				   status[i]);
	return 0;
}

static int walk_migrate(struct walk *w)
{
	unsigned long node0 = 1;

	return syscall(__NR_migrate_pages, 0, 8 * sizeof(node0), &node0,
		       &node0) < 0 ? WHY(w, "migrate_pages: %m") : 0;
}

/* A read of 8 bytes of the window: all of them, or err with none. */
static int vm_outcome(struct walk *w, ssize_t n, int err, const char *what)
{
	if (n == sizeof(uint64_t)) {
		w->read++;
		return 0;
	}
	if (n < 0 && errno == err) {
		w->faulted++;
		return 0;
	}
	return WHY(w, "%s: %zd (%m)", what, n);
}

static int walk_vm_readv(struct walk *w)
{
	uint64_t val;
	struct iovec local = { &val, sizeof(val) };
	struct iovec remote = { w->win, sizeof(val) };
	ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);

	return vm_outcome(w, n, EFAULT, "process_vm_readv");
}

static int walk_proc_mem(struct walk *w)
{
	uint64_t val;
	ssize_t n = pread(w->mem, &val, sizeof(val), (uintptr_t)w->win);

	return vm_outcome(w, n, EIO, "pread of /proc/self/mem");
}

FIXTURE(walkers) {
	struct mshare_ctx c;
	int fd;
	struct walk w;
	struct board *board;
	pid_t owner;
};

FIXTURE_VARIANT(walkers) {
	int (*walk)(struct walk *w);
};

FIXTURE_VARIANT_ADD(walkers, pagemap) { .walk = walk_pagemap };
FIXTURE_VARIANT_ADD(walkers, numa_maps) { .walk = walk_numa_maps };
FIXTURE_VARIANT_ADD(walkers, clear_refs) { .walk = walk_clear_refs };
FIXTURE_VARIANT_ADD(walkers, smaps) { .walk = walk_smaps };
FIXTURE_VARIANT_ADD(walkers, mincore) { .walk = walk_mincore };
FIXTURE_VARIANT_ADD(walkers, move_pages) { .walk = walk_move_pages };
FIXTURE_VARIANT_ADD(walkers, migrate) { .walk = walk_migrate };
FIXTURE_VARIANT_ADD(walkers, vm_readv) { .walk = walk_vm_readv };
FIXTURE_VARIANT_ADD(walkers, proc_mem) { .walk = walk_proc_mem };

/* The co-owner: map, write every page through the window, unmap. */
static int churn(int fd, char *win, size_t page, struct board *b)
{
	while (!atomic_load(&b->stop)) {
		CHILD_CHECK(sys_mshare_map_anon(fd, 0, OBJ_SIZE, 0) == 0,
			    "mshare_map: %m");
		for (size_t off = 0; off < OBJ_SIZE; off += page)
			win[off] = 1;
		CHILD_CHECK(sys_mshare_unmap(fd, 0, OBJ_SIZE) == 0,
			    "mshare_unmap: %m");
		atomic_fetch_add(&b->cycles, 1);
	}
	return 0;
}

FIXTURE_SETUP(walkers)
{
	self->fd = -1;
	self->w.pagemap = -1;
	self->w.mem = -1;
	self->owner = -1;
	mshare_test_setup(_metadata, &self->c, "walkers");
	self->w.page = self->c.page;
	self->board = mmap(NULL, sizeof(*self->board), PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->board);
	self->fd = test_new_region(_metadata, self->c.align);
	self->w.win = test_attach(_metadata, self->fd, 0, 0, 0);
	self->w.pagemap = ASSERT_SYS(open("/proc/self/pagemap", O_RDONLY));
	self->w.mem = ASSERT_SYS(open("/proc/self/mem", O_RDONLY));
	self->owner = ASSERT_SYS(child_fork());
	if (self->owner == 0)
		_exit(churn(self->fd, self->w.win, self->w.page, self->board));
}

FIXTURE_TEARDOWN(walkers)
{
	if (self->board != MAP_FAILED)
		atomic_store(&self->board->stop, 1);
	child_kill_all();
	if (self->w.mem >= 0)
		close(self->w.mem);
	if (self->w.pagemap >= 0)
		close(self->w.pagemap);
	if (self->fd >= 0)
		close(self->fd);
	if (self->board != MAP_FAILED)
		munmap(self->board, sizeof(*self->board));
	mshare_ctx_fini(&self->c);
}

TEST_F_TIMEOUT(walkers, while_the_owner_changes, MAX_SECONDS + 60)
{
	int seconds = env_long("MSHARE_WALK_SECONDS", 3, 1, MAX_SECONDS);
	unsigned long walks = 0, cycles;
	uint64_t deadline;

	ASSERT_LT(0, seconds)
		TH_LOG("MSHARE_WALK_SECONDS must be 1 to %d", MAX_SECONDS);
	deadline = now_ms() + seconds * 1000ULL;
	while (now_ms() < deadline || walks < MIN_ROUNDS ||
	       atomic_load(&self->board->cycles) < MIN_ROUNDS) {
		ASSERT_EQ(0, variant->walk(&self->w))
			TH_LOG("walk %lu: %s", walks, self->w.why);
		walks++;
		ASSERT_GT(deadline + 60 * 1000, now_ms())
			TH_LOG("the owner changed the region %lu times in %d s",
			       atomic_load(&self->board->cycles), seconds + 60);
	}
	atomic_store(&self->board->stop, 1);
	ASSERT_CHILD_OK(self->owner);
	self->owner = -1;
	cycles = atomic_load(&self->board->cycles);
	TH_LOG("%lu walks while the owner mapped, wrote and unmapped the object %lu times",
	       walks, cycles);
	if (self->w.read || self->w.faulted)
		TH_LOG("%lu reads got the page, %lu found none mapped",
		       self->w.read, self->w.faulted);
}

TEST_HARNESS_MAIN
