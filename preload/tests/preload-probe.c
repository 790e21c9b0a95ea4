// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What the host tests run under libmshare-preload.so: an ordinary program
 * (it knows nothing of mshare) that maps shared memory as its arguments
 * say, one step after the other, and prints one line per step:
 *
 *   map SIZE[:KIND]   mmap() SIZE bytes; KIND: shared (the default: shared
 *                     anonymous read-write), private, file, fixed, exec,
 *                     huge (MAP_HUGETLB), huge-try (MAP_HUGETLB, then
 *                     without it if that fails, as PostgreSQL's
 *                     huge_pages=try does)
 *   share             the mapping is shared with a child made by fork():
 *                     each sees what the other wrote
 *   fill BYTE         writes BYTE over the whole mapping
 *   check BYTE        the whole mapping holds BYTE
 *   aligned N         whether the mapping's address is a multiple of N
 *   unmap             munmap() of the mapping, with the length mapped
 *   unmap-around      munmap() of the mapping and 2 MiB on either side
 *   fixed-over        a private MAP_FIXED mapping over the mapping, unmapped
 *   fixed SIZE        a private MAP_FIXED mapping of SIZE bytes at the
 *                     mapping, left there
 *   try-unmap         as unmap, going on after an error ("try-unmap: EINVAL")
 *   raw-unmap SIZE    the munmap system call itself, of SIZE bytes at the
 *                     mapping: behind the library's back
 *   raw-map SIZE BYTE the mmap system call itself: private memory of SIZE
 *                     bytes at the mapping (MAP_FIXED), filled with BYTE
 *   raw-window SIZE BYTE  the same with a shared mapping of a memfd named as
 *                     the fake's regions are, "fake-mshare" (a window onto
 *                     another region, to the shim in kernel-shim.c)
 *   mapped OFFSET     whether the page at OFFSET into the mapping is mapped
 *   byte OFFSET       the byte at OFFSET into the mapping ("unmapped" if the
 *                     page is not mapped)
 *   fds               the descriptors from 100 up that it did not inherit,
 *                     and what they are
 *   shm SIZE          shmget(IPC_PRIVATE, SIZE, IPC_CREAT | IPC_EXCL | 0600)
 *                     and shmat() (the mapping is the attached segment)
 *   shm-share         as share, and shm_nattch is 2 while the child is
 *                     attached too
 *   nattch            shm_nattch of the segment (IPC_STAT)
 *   shmdt, rmid       shmdt() of the mapping; shmctl(IPC_RMID)
 *   try-shmdt         as shmdt, going on after an error
 *   gone              IPC_STAT of the segment fails with EINVAL
 *   touch PATH        creates PATH (tells a test that a step is done)
 *   wait PATH         waits (at most 30 s) until PATH is gone
 *
 * A failed step prints "STEP: error ENAME (description)" and exits 3; a
 * wrong result prints "STEP: FAILED ..." and exits 1.
 *
 * Built with -DPROBE_EXPORTS_JSON_OBJECT (and -rdynamic) it also exports a
 * function json_object(), as the postgres executable does: a library
 * preloaded into it that calls jansson's json_object() by name would call
 * this one, which says so and aborts.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mshare-common/errno-name.h"

static char *map;
static size_t map_len;
static int shm_id = -1;

/* A step failed: the segment, if any, is not left behind. */
static void remove_segment(void)
{
	if (shm_id >= 0)
		shmctl(shm_id, IPC_RMID, NULL);
}

static void error_exit(const char *step)
{
	int e = errno;

	printf("%s: error %s (%s)\n", step, errno_to_name(e), strerror(e));
	remove_segment();
	exit(3);
}

static void failed(const char *step, const char *what)
{
	printf("%s: FAILED %s\n", step, what);
	remove_segment();
	exit(1);
}

static size_t size_arg(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	if (*end == 'M')
		v <<= 20;
	else if (*end == 'K')
		v <<= 10;
	return (size_t)v;
}

static void step_map(size_t len, const char *kind)
{
	int prot = PROT_READ | PROT_WRITE, flags = MAP_SHARED | MAP_ANONYMOUS, fd = -1;
	void *addr = NULL, *p;

	if (!strcmp(kind, "private"))
		flags = MAP_PRIVATE | MAP_ANONYMOUS;
	else if (!strcmp(kind, "file")) {
		char path[] = "/tmp/preload-probe.XXXXXX";

		fd = mkstemp(path);
		if (fd < 0 || unlink(path) < 0 || ftruncate(fd, (off_t)len) < 0)
			error_exit("map");
		flags = MAP_SHARED;
	} else if (!strcmp(kind, "fixed")) {
		/* A range of our own, replaced by the mapping. */
		addr = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (addr == MAP_FAILED)
			error_exit("map");
		flags |= MAP_FIXED;
	} else if (!strcmp(kind, "exec"))
		prot |= PROT_EXEC;
	else if (!strcmp(kind, "huge") || !strcmp(kind, "huge-try"))
		flags |= MAP_HUGETLB;
	else if (strcmp(kind, "shared"))
		failed("map", "unknown kind");

	p = mmap(addr, len, prot, flags, fd, 0);
	if (p == MAP_FAILED && !strcmp(kind, "huge-try")) {
		printf("map: MAP_HUGETLB failed (%s), retrying without\n", errno_to_name(errno));
		p = mmap(NULL, len, prot, flags & ~MAP_HUGETLB, fd, 0);
	}
	if (p == MAP_FAILED)
		error_exit("map");
	if (fd >= 0)
		close(fd);
	map = p;
	map_len = len;
	printf("map %zu %s: %p\n", len, kind, p);
}

/* Parent and child each write where the other reads. */
static void step_share(const char *step, int expect_nattch)
{
	struct shmid_ds ds;
	int status;
	pid_t pid;

	memcpy(map, "parent", 7);
	pid = fork();
	if (pid < 0)
		error_exit(step);
	if (pid == 0) {
		if (memcmp(map, "parent", 7))
			_exit(10);
		if (expect_nattch && (shmctl(shm_id, IPC_STAT, &ds) < 0 || ds.shm_nattch != 2))
			_exit(11);
		memcpy(map + map_len - 4096, "child", 6);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) < 0)
		error_exit(step);
	if (!WIFEXITED(status) || WEXITSTATUS(status) == 10)
		failed(step, "the child does not see what the parent wrote");
	if (WEXITSTATUS(status) == 11)
		failed(step, "shm_nattch is not 2 with the child attached");
	if (WEXITSTATUS(status))
		failed(step, "the child failed");
	if (memcmp(map + map_len - 4096, "child", 6))
		failed(step, "the parent does not see what the child wrote");
	printf("%s: ok\n", step);
}

static void step_check(int byte)
{
	for (size_t i = 0; i < map_len; i++)
		if ((unsigned char)map[i] != byte) {
			printf("check: FAILED byte %zu is %d, not %d\n", i, (unsigned char)map[i], byte);
			remove_segment();
			exit(1);
		}
	printf("check %d: ok\n", byte);
}

/* The descriptors from 100 up, where the library keeps its own; not
 * those the probe inherited. */
static bool inherited[4096];

static void open_fds(void (*each)(int fd))
{
	struct dirent *d;
	DIR *dir;

	dir = opendir("/proc/self/fd");
	if (!dir)
		error_exit("fds");
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.' && atoi(d->d_name) != dirfd(dir))
			each(atoi(d->d_name));
	closedir(dir);
}

static void mark_inherited(int fd)
{
	if (fd < 4096)
		inherited[fd] = true;
}

static void step_fds(void)
{
	char path[64], target[256];
	struct dirent *d;
	int fds[64], n = 0;
	DIR *dir;

	dir = opendir("/proc/self/fd");
	if (!dir)
		error_exit("fds");
	while ((d = readdir(dir)) && n < 64) {
		int fd = atoi(d->d_name);

		if (fd >= 100 && fd != dirfd(dir) && !(fd < 4096 && inherited[fd]))
			fds[n++] = fd;
	}
	closedir(dir);
	/* In order: readdir() need not give them so. */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
			int t = fds[j];

			fds[j] = fds[j - 1];
			fds[j - 1] = t;
		}
	printf("fds:");
	for (int i = 0; i < n; i++) {
		ssize_t k;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[i]);
		k = readlink(path, target, sizeof(target) - 1);
		if (k < 0)
			continue;
		target[k] = '\0';
		printf(" %d=%s", fds[i], target);
	}
	printf("%s\n", n ? "" : " none");
}

static void step_shm(size_t len)
{
	void *p;

	shm_id = shmget(IPC_PRIVATE, len, IPC_CREAT | IPC_EXCL | 0600);
	if (shm_id < 0)
		error_exit("shm");
	p = shmat(shm_id, NULL, 0);
	if (p == (void *)-1)
		error_exit("shm");
	map = p;
	map_len = len;
	printf("shm %zu: id %d at %p\n", len, shm_id, p);
}

static void step_nattch(void)
{
	struct shmid_ds ds;

	if (shmctl(shm_id, IPC_STAT, &ds) < 0)
		error_exit("nattch");
	printf("nattch: %lu segsz %zu\n", (unsigned long)ds.shm_nattch, ds.shm_segsz);
}

/* The system call itself: the library does not see it. */
static void step_raw_map(const char *step, size_t len, int byte, int fd)
{
	int flags = (fd < 0 ? MAP_PRIVATE | MAP_ANONYMOUS : MAP_SHARED) | MAP_FIXED;
	long p = syscall(SYS_mmap, map, len, PROT_READ | PROT_WRITE, flags, fd, 0);

	if (p == -1 || (char *)p != map)
		error_exit(step);
	memset(map, byte, len);
	printf("%s: ok\n", step);
}

static void step_raw_window(size_t len, int byte)
{
	int fd = memfd_create("fake-mshare", MFD_CLOEXEC);

	if (fd < 0 || ftruncate(fd, (off_t)len) < 0)
		error_exit("raw-window");
	step_raw_map("raw-window", len, byte, fd);
	close(fd);
}

/* msync() fails with ENOMEM where nothing is mapped. */
static bool is_mapped(size_t offset)
{
	return msync(map + (offset & ~(size_t)4095), 4096, MS_ASYNC) == 0;
}

/* The byte, unless reading it would kill the probe (and leave its
 * segment behind). */
static void step_byte(const char *offset)
{
	size_t off = size_arg(offset);

	if (is_mapped(off))
		printf("byte %s: %d\n", offset, (unsigned char)map[off]);
	else
		printf("byte %s: unmapped\n", offset);
}

/* A step that may fail, and says how. */
static void tried(const char *step, int r)
{
	if (r < 0)
		printf("%s: %s\n", step, errno_to_name(errno));
	else
		printf("%s: ok\n", step);
}

static void step_wait(const char *path)
{
	for (int i = 0; i < 3000 && access(path, F_OK) == 0; i++)
		nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
	printf("wait: %s\n", access(path, F_OK) == 0 ? "timed out" : "ok");
}

#ifdef PROBE_EXPORTS_JSON_OBJECT
void *json_object(void *fcinfo);
void *json_object(void *fcinfo)
{
	fprintf(stderr, "json_object(%p): the program's own was called\n", fcinfo);
	abort();
}
#endif

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	open_fds(mark_inherited);
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i], *a = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(s, "map") && a) {
			const char *colon = strchr(a, ':');

			step_map(size_arg(a), colon ? colon + 1 : "shared");
			i++;
		} else if (!strcmp(s, "share"))
			step_share("share", 0);
		else if (!strcmp(s, "fill") && a) {
			memset(map, atoi(a), map_len);
			printf("fill %d: ok\n", atoi(a));
			i++;
		} else if (!strcmp(s, "check") && a) {
			step_check(atoi(a));
			i++;
		} else if (!strcmp(s, "aligned") && a) {
			printf("aligned: %s\n", (uintptr_t)map % size_arg(a) ? "no" : "yes");
			i++;
		} else if (!strcmp(s, "unmap")) {
			if (munmap(map, map_len) < 0)
				error_exit("unmap");
			printf("unmap: ok\n");
		} else if (!strcmp(s, "unmap-around")) {
			if (munmap(map - (2 << 20), map_len + (4 << 20)) < 0)
				error_exit("unmap-around");
			printf("unmap-around: ok\n");
		} else if (!strcmp(s, "fixed-over")) {
			void *p = mmap(map, map_len, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

			if (p != map || munmap(p, map_len) < 0)
				error_exit("fixed-over");
			printf("fixed-over: ok\n");
		} else if (!strcmp(s, "fixed") && a) {
			if (mmap(map, size_arg(a), PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != map)
				error_exit("fixed");
			printf("fixed: ok\n");
			i++;
		} else if (!strcmp(s, "try-unmap"))
			tried("try-unmap", munmap(map, map_len));
		else if (!strcmp(s, "raw-unmap") && a) {
			if (syscall(SYS_munmap, map, size_arg(a)) < 0)
				error_exit("raw-unmap");
			printf("raw-unmap: ok\n");
			i++;
		} else if (!strcmp(s, "raw-map") && i + 2 < argc) {
			step_raw_map("raw-map", size_arg(a), atoi(argv[i + 2]), -1);
			i += 2;
		} else if (!strcmp(s, "raw-window") && i + 2 < argc) {
			step_raw_window(size_arg(a), atoi(argv[i + 2]));
			i += 2;
		} else if (!strcmp(s, "mapped") && a) {
			printf("mapped %s: %s\n", a, is_mapped(size_arg(a)) ? "yes" : "no");
			i++;
		} else if (!strcmp(s, "byte") && a) {
			step_byte(a);
			i++;
		} else if (!strcmp(s, "fds"))
			step_fds();
		else if (!strcmp(s, "shm") && a) {
			step_shm(size_arg(a));
			i++;
		} else if (!strcmp(s, "shm-share"))
			step_share("shm-share", 1);
		else if (!strcmp(s, "nattch"))
			step_nattch();
		else if (!strcmp(s, "shmdt")) {
			if (shmdt(map) < 0)
				error_exit("shmdt");
			printf("shmdt: ok\n");
		} else if (!strcmp(s, "try-shmdt"))
			tried("try-shmdt", shmdt(map));
		else if (!strcmp(s, "rmid")) {
			if (shmctl(shm_id, IPC_RMID, NULL) < 0)
				error_exit("rmid");
			printf("rmid: ok\n");
		} else if (!strcmp(s, "gone")) {
			struct shmid_ds ds;

			printf("gone: %s\n", shmctl(shm_id, IPC_STAT, &ds) < 0 && errno == EINVAL
						     ? "yes" : "no");
		} else if (!strcmp(s, "touch") && a) {
			int fd = open(a, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

			if (fd < 0)
				error_exit("touch");
			close(fd);
			i++;
		} else if (!strcmp(s, "wait") && a) {
			step_wait(a);
			i++;
		} else {
			fprintf(stderr, "preload-probe: bad step '%s'\n", s);
			return 2;
		}
	}
	return 0;
}
