// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * In-guest test of libmshare-preload.so, for the QEMU guest on our kernel
 * (never the host: there the library falls back and this test fails). An
 * ordinary program as far as its calls go (mmap(), fork(), shmget()); the
 * checks look behind them with libmshare's mshare_info(). Run it under the
 * library, strict so that a fallback is an error:
 *
 *   mshare-run --strict guest-preload [SIZE_MIB [CHILDREN]]
 *   LD_PRELOAD=.../libmshare-preload.so MSHARE_PRELOAD_STRICT=1 guest-preload
 *
 * Maps SIZE_MIB (default 256) of shared anonymous memory: it must be a
 * window onto a region of the process's own (one region descriptor, at a
 * high number, owned, as large as the window, which lies at the sharing
 * alignment). One child writes every page; then CHILDREN - 1 more (default
 * 8 in all) each read every page, check what the first wrote and write a
 * mark of their own, and report their minor faults and VmPTE growth over
 * that: a few faults and no page tables of their own, where plain shared
 * memory costs 8 bytes of page table per page and a fault per 16 pages read
 * (fault-around): 1024 faults and 128 kB per child for 64 MiB, measured on
 * the host under the fake library. The parent sees
 * every mark; munmap() ends the window and the region's descriptor. Then a
 * System V segment (shmget, shmat, fork, IPC_STAT, shmdt, IPC_RMID) and,
 * if the guest has huge pages, a MAP_HUGETLB mapping. Prints TAP.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mshare.h>

#include "mshare-common/procstat.h"
#include "mshare-common/tap.h"

#define PAGE 4096UL
#define MAGIC UINT64_C(0x6d73686172653137) /* "mshare17" */
/* What a child that only finds the region's page tables may cost. */
#define MAX_FAULTS 64
#define MAX_PTE_KB 16

struct report {
	int index;
	long faults;
	long pte_kb;
	size_t bad;	/* pages without the first child's pattern */
};

/* The one region descriptor of this process (-1 if none or several). */
static int region_fd(struct mshare_fdinfo *info)
{
	int found = -1, n = 0;

	for (int fd = 3; fd < 65536; fd++) {
		struct mshare_fdinfo i;

		if (fcntl(fd, F_GETFD) < 0 || mshare_info(fd, &i) < 0)
			continue;
		found = fd;
		*info = i;
		n++;
	}
	return n == 1 ? found : -1;
}

/* The size of the mapping that starts at addr, from /proc/self/maps. */
static uint64_t vma_size(const void *addr)
{
	uintptr_t start, end;
	char line[512];
	uint64_t size = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &start, &end) == 2 &&
		    start == (uintptr_t)addr)
			size = end - start;
	fclose(f);
	return size;
}

/* Child index: 0 writes the pattern, the others check it and mark. */
static void child(char *map, size_t len, int index, int fd)
{
	struct report r = { .index = index };
	struct proc_sample before, after;

	proc_sample(&before);
	for (size_t off = 0; off < len; off += PAGE) {
		uint64_t *w = (uint64_t *)(map + off);

		if (index == 0)
			w[0] = MAGIC ^ (off / PAGE);
		else if (w[0] != (MAGIC ^ (off / PAGE)))
			r.bad++;
	}
	if (index > 0)
		((uint64_t *)(map + (size_t)index * PAGE))[1] = MAGIC + (uint64_t)index;
	proc_sample(&after);
	r.faults = (long)(after.minflt - before.minflt);
	r.pte_kb = (long)(after.vmpte_kb - before.vmpte_kb);
	if (write(fd, &r, sizeof(r)) != sizeof(r))
		_exit(2);
	_exit(0);
}

/* Runs children [from, to) at once; their reports into r[]. */
static bool run_children(char *map, size_t len, int from, int to, struct report *r)
{
	int p[2], status;
	bool good = true;

	if (pipe(p) < 0)
		return false;
	for (int i = from; i < to; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return false;
		if (pid == 0) {
			close(p[0]);
			child(map, len, i, p[1]);
		}
	}
	close(p[1]);
	for (int i = from; i < to; i++) {
		struct report one;

		if (read(p[0], &one, sizeof(one)) != sizeof(one) || one.index < from || one.index >= to) {
			good = false;
			break;
		}
		r[one.index] = one;
	}
	close(p[0]);
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			good = false;
	return good;
}

static void test_mmap(size_t len, int children)
{
	struct report r[64] = {};
	struct mshare_fdinfo info = {};
	size_t bad = 0;
	char *map;
	int fd;

	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!ok(map != MAP_FAILED, "mmap of %zu MiB: %s", len >> 20,
		map == MAP_FAILED ? strerror(errno) : "ok")) {
		tap_skip("no mapping, nothing more to check");
		return;
	}
	fd = region_fd(&info);
	ok(fd >= 0, "the process holds one region descriptor (fd %d)", fd);
	ok(fd >= 1000 || (fd >= 3 && fd >= (int)sysconf(_SC_OPEN_MAX) / 2),
	   "... at a high number (%d)", fd);
	ok(info.owned == 1 && info.owner_fd != 0, "... the region's owner file (owned %d, owner_fd %d)",
	   info.owned, info.owner_fd);
	ok(info.align && info.size >= len && info.size % info.align == 0,
	   "... sized %" PRIu64 " bytes, a multiple of the alignment %" PRIu64, info.size, info.align);
	ok(info.align && (uintptr_t)map % info.align == 0, "the mapping is a window at the alignment (%p)",
	   (void *)map);
	ok(vma_size(map) == info.size, "the window is as large as the region (%" PRIu64 " bytes)",
	   vma_size(map));
	ok(info.attached == 1 && info.windows == 1, "one process, one window (%u, %u)", info.attached,
	   info.windows);

	ok(run_children(map, len, 0, 1, r), "a child writes every page");
	printf("# child 0 (writes %zu pages): %ld faults, VmPTE %+ld kB\n", len / PAGE, r[0].faults,
	       r[0].pte_kb);
	ok(r[0].pte_kb <= MAX_PTE_KB, "the writer's page tables grow by %ld kB (at most %d)",
	   r[0].pte_kb, MAX_PTE_KB);
	ok(run_children(map, len, 1, children, r), "%d children read every page at once",
	   children - 1);
	for (int i = 1; i < children; i++) {
		printf("# child %d: %ld faults, VmPTE %+ld kB, %zu pages wrong\n", i, r[i].faults,
		       r[i].pte_kb, r[i].bad);
		bad += r[i].bad;
	}
	ok(bad == 0, "every child sees what the first wrote (%zu pages wrong)", bad);
	for (int i = 1; i < children; i++)
		ok(r[i].faults <= MAX_FAULTS && r[i].pte_kb <= MAX_PTE_KB,
		   "child %d: %ld faults (at most %d) and %ld kB of page tables (at most %d) for %zu pages",
		   i, r[i].faults, MAX_FAULTS, r[i].pte_kb, MAX_PTE_KB, len / PAGE);
	bad = 0;
	for (int i = 1; i < children; i++)
		if (((uint64_t *)(map + (size_t)i * PAGE))[1] != MAGIC + (uint64_t)i)
			bad++;
	ok(bad == 0, "the parent sees every child's mark (%zu missing)", bad);
	ok(mshare_info(fd, &info) == 0 && info.attached == 1,
	   "with the children gone, one process has the region attached (%u)", info.attached);
	ok(munmap(map, len) == 0, "munmap of the mapping");
	ok(fcntl(fd, F_GETFD) < 0 && errno == EBADF, "... closes the region's descriptor");
	ok(vma_size(map) == 0, "... and the whole window is gone");
}

static void test_sysv(size_t len)
{
	struct mshare_fdinfo info = {};
	struct shmid_ds ds;
	int id, fd, status;
	char *p;
	pid_t pid;

	id = shmget(IPC_PRIVATE, len, IPC_CREAT | IPC_EXCL | 0600);
	if (!ok(id >= 0, "shmget of %zu MiB: %s", len >> 20, id < 0 ? strerror(errno) : "ok"))
		return;
	p = shmat(id, NULL, 0);
	ok(p != (void *)-1, "shmat");
	if (p == (void *)-1) {
		shmctl(id, IPC_RMID, NULL);
		return;
	}
	fd = region_fd(&info);
	ok(fd >= 0 && info.align && (uintptr_t)p % info.align == 0 && info.size >= len,
	   "the segment is a window onto a region (fd %d, %p)", fd, (void *)p);
	ok(shmctl(id, IPC_STAT, &ds) == 0 && ds.shm_nattch == 1 && ds.shm_segsz == len,
	   "IPC_STAT: nattch 1, segsz the size");
	strcpy(p, "parent");
	pid = fork();
	if (pid == 0) {
		struct shmid_ds cds;
		int good = !strcmp(p, "parent") && shmctl(id, IPC_STAT, &cds) == 0 && cds.shm_nattch == 2;

		strcpy(p + len - PAGE, "child");
		_exit(good ? 0 : 1);
	}
	ok(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && !WEXITSTATUS(status) &&
		   !strcmp(p + len - PAGE, "child"),
	   "a child shares it, and counts in nattch");
	ok(shmdt(p) == 0, "shmdt");
	ok(shmctl(id, IPC_STAT, &ds) == 0 && ds.shm_nattch == 0, "nattch 0 after shmdt");
	ok(shmctl(id, IPC_RMID, NULL) == 0, "IPC_RMID");
	ok(fd < 0 || (fcntl(fd, F_GETFD) < 0 && errno == EBADF), "... closes the region's descriptor");
}

static void test_hugetlb(size_t len)
{
	struct mshare_fdinfo info;
	long pages = 0;
	FILE *f = fopen("/proc/sys/vm/nr_hugepages", "re");
	char *p;

	if (f) {
		if (fscanf(f, "%ld", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	if (pages * (2L << 20) < (long)len) {
		tap_skip("MAP_HUGETLB: the guest has %ld huge pages", pages);
		return;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	ok(p != MAP_FAILED && region_fd(&info) >= 0 && (uintptr_t)p % info.align == 0,
	   "MAP_HUGETLB of %zu MiB is a window onto a region of huge pages", len >> 20);
	if (p != MAP_FAILED) {
		memset(p, 1, len);
		ok(munmap(p, len) == 0, "munmap of the huge page mapping");
	}
}

int main(int argc, char **argv)
{
	const char *preload = getenv("LD_PRELOAD");
	size_t len = (size_t)(argc > 1 ? atol(argv[1]) : 256) << 20;
	int children = argc > 2 ? atoi(argv[2]) : 8;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (children < 2 || children > 64 || len < (32UL << 20)) {
		fprintf(stderr, "usage: guest-preload [SIZE_MIB >= 32 [CHILDREN 2..64]]\n");
		return 2;
	}
	if (!ok(preload && strstr(preload, "libmshare-preload"), "runs under libmshare-preload.so")) {
		printf("Bail out! run it with mshare-run --strict, or LD_PRELOAD\n");
		return 1;
	}
	test_mmap(len, children);
	test_sysv(64UL << 20);
	test_hugetlb(64UL << 20);
	return tap_finish();
}
