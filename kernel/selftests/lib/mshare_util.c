// SPDX-License-Identifier: GPL-2.0
/* Helpers shared by the msharefs selftests; see mshare_util.h. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <linux/capability.h>

#include "mshare_sysnum.h"
#include "mshare_util.h"

/* --- msharefs -------------------------------------------------------- */

int mshare_ensure_mounted(void)
{
	struct statfs sfs;

	if (statfs(MSHARE_ROOT, &sfs) == 0 && sfs.f_type == MSHARE_MAGIC)
		return 0;
	mkdir(MSHARE_ROOT, 0755);
	if (mount("msharefs", MSHARE_ROOT, "msharefs", 0, NULL))
		return -1;
	fprintf(stderr, "# mounted msharefs on %s\n", MSHARE_ROOT);
	return 0;
}

static ssize_t read_file(const char *path, char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (got < len - 1) {
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			close(fd);
			errno = e;
			return -1;
		}
		if (n == 0)
			break;
		got += n;
	}
	close(fd);
	buf[got] = '\0';
	return got;
}

int mshare_read_info(uint64_t *align)
{
	unsigned long long v;
	char buf[64], *end;
	ssize_t n;

	n = read_file(MSHARE_INFO, buf, sizeof(buf));
	if (n < 0)
		return -1;
	if (n == 0 || !isdigit((unsigned char)buf[0]))
		goto bad;
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || v == 0 || strcmp(end, "\n"))
		goto bad;
	*align = v;
	return 0;
bad:
	errno = EPROTO;
	return -1;
}

int mshare_ctx_init(struct mshare_ctx *c, const char *tag)
{
	memset(c, 0, sizeof(*c));
	c->page = sysconf(_SC_PAGESIZE);
	umask(022);
	if (mshare_ensure_mounted() || mshare_read_info(&c->align))
		return -1;
	snprintf(c->dir, sizeof(c->dir), "%s/%s.%d", MSHARE_ROOT, tag,
		 getpid());
	rm_tree(c->dir);	/* left over by an earlier process of this pid */
	return mkdir(c->dir, 0755);
}

void mshare_ctx_fini(struct mshare_ctx *c)
{
	child_kill_all();
	if (c->dir[0])
		rm_tree(c->dir);
}

const char *mshare_path(const struct mshare_ctx *c, const char *name)
{
	static char bufs[8][PATH_MAX];
	static unsigned int next;
	char *buf = bufs[next++ % 8];

	snprintf(buf, PATH_MAX, "%s/%s", c->dir, name);
	return buf;
}

void rm_tree(const char *path)
{
	char sub[PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *d;

	if (lstat(path, &st))
		return;
	if (!S_ISDIR(st.st_mode)) {
		unlink(path);
		return;
	}
	d = opendir(path);
	if (d) {
		while ((de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
			rm_tree(sub);
		}
		closedir(d);
	}
	rmdir(path);
}

char *read_text(const char *path, size_t *len)
{
	size_t cap = SZ_64K, got = 0;
	char *buf = malloc(cap), *nbuf;
	ssize_t n;
	int fd, e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !buf)
		goto fail;
	for (;;) {
		if (got + 1 >= cap) {
			nbuf = realloc(buf, cap *= 2);
			if (!nbuf)
				goto fail;
			buf = nbuf;
		}
		n = read(fd, buf + got, cap - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail;
		if (n == 0)
			break;
		got += n;
	}
	close(fd);
	buf[got] = '\0';
	if (len)
		*len = got;
	return buf;
fail:
	e = errno;
	if (fd >= 0)
		close(fd);
	free(buf);
	errno = e;
	return NULL;
}

int write_text(const char *path, const char *text)
{
	ssize_t n;
	int fd, e;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	e = errno;
	close(fd);
	errno = e;
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

bool maps_has_range(const void *start, uint64_t len)
{
	char *maps = read_text("/proc/self/maps", NULL), *line;
	char want[64];
	bool found = false;

	if (!maps)
		return false;
	snprintf(want, sizeof(want), "%lx-%lx ", (unsigned long)start,
		 (unsigned long)start + (unsigned long)len);
	for (line = maps; line && !found; line = strchr(line, '\n')) {
		if (*line == '\n')
			line++;
		found = !strncmp(line, want, strlen(want));
	}
	free(maps);
	return found;
}

int mshare_open(const struct mshare_ctx *c, const char *name, int flags)
{
	return open(mshare_path(c, name), flags | O_CLOEXEC);
}

int mshare_create(const struct mshare_ctx *c, const char *name, uint64_t size)
{
	int fd, e;

	fd = open(mshare_path(c, name), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0 || !size)
		return fd;
	if (ftruncate(fd, size) == 0)
		return fd;
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

void *mshare_window(int fd, uint64_t size, void *addr, int extra_flags)
{
	return mmap(addr, size, PROT_READ | PROT_WRITE, MAP_SHARED | extra_flags,
		    fd, 0);
}

int mshare_map(int fd, uint64_t roff, uint64_t size, uint64_t off,
	       unsigned int prot, unsigned int flags, int objfd)
{
	struct mshare_create mc = {
		.region_offset = roff,
		.size = size,
		.offset = off,
		.prot = prot,
		.flags = flags,
		.fd = objfd,
	};

	return ioctl(fd, MSHAREFS_CREATE_MAPPING, &mc);
}

int mshare_map_anon(int fd, uint64_t roff, uint64_t size,
		    unsigned int extra_flags)
{
	return mshare_map(fd, roff, size, 0, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_FIXED | MAP_ANONYMOUS | extra_flags,
			  -1);
}

int mshare_map_fd(int fd, uint64_t roff, uint64_t size, int objfd,
		  uint64_t off)
{
	return mshare_map(fd, roff, size, off, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_FIXED, objfd);
}

int mshare_unmap(int fd, uint64_t roff, uint64_t size)
{
	struct mshare_unmap mu = { .region_offset = roff, .size = size };

	return ioctl(fd, MSHAREFS_UNMAP, &mu);
}

/* --- mshare system calls ------------------------------------------------ */

int sys_mshare_create(unsigned int flags)
{
	return syscall(__NR_mshare_create, flags);
}

void *sys_mshare_attach(int fd, int64_t offset, size_t size, void *addr,
			unsigned int flags)
{
	long ret = syscall(__NR_mshare_attach, fd, offset, size, addr, flags);

	return ret == -1 ? MAP_FAILED : (void *)ret;
}

int sys_mshare_map(int fd, const void *args, size_t size)
{
	return syscall(__NR_mshare_map, fd, args, size);
}

int sys_mshare_unmap(int fd, int64_t roff, size_t len)
{
	return syscall(__NR_mshare_unmap, fd, roff, len);
}

int sys_mshare_protect(int fd, int64_t roff, size_t len, unsigned int prot)
{
	return syscall(__NR_mshare_protect, fd, roff, len, prot);
}

int sys_mshare_advise(int fd, int64_t roff, size_t len, int advice)
{
	return syscall(__NR_mshare_advise, fd, roff, len, advice);
}

int sys_mshare_map_obj(int fd, uint64_t roff, uint64_t size, uint64_t boff,
		       unsigned int prot, unsigned int flags, int bfd)
{
	struct mshare_map_args args = {
		.region_offset = roff,
		.size = size,
		.backing_offset = boff,
		.prot = prot,
		.flags = flags,
		.backing_fd = bfd,
	};

	return sys_mshare_map(fd, &args, sizeof(args));
}

int sys_mshare_map_anon(int fd, uint64_t roff, uint64_t size,
			unsigned int extra_flags)
{
	return sys_mshare_map_obj(fd, roff, size, 0, PROT_READ | PROT_WRITE,
				  MAP_ANONYMOUS | extra_flags, -1);
}

int mshare_new(uint64_t size, unsigned int flags)
{
	int fd, e;

	fd = sys_mshare_create(flags);
	if (fd < 0 || !size)
		return fd;
	if (ftruncate(fd, size) == 0)
		return fd;
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

int fd_reopen(int fd, int flags)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return open(path, flags | O_CLOEXEC);
}

int fdinfo_get(pid_t pid, int fd, const char *key, long long *val)
{
	size_t klen = strlen(key);
	char path[64], *text, *line, *end;
	int ret = -1, err = ENOENT;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
	else
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	text = read_text(path, NULL);
	if (!text)
		return -1;
	for (line = text; line; line = strchr(line, '\n')) {
		if (*line == '\n')
			line++;
		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		errno = 0;
		*val = strtoll(line + klen + 1, &end, 10);
		if (errno || end == line + klen + 1 ||
		    (*end != '\n' && *end != '\0')) {
			err = EPROTO;
			break;
		}
		ret = 0;
		break;
	}
	free(text);
	if (ret)
		errno = err;
	return ret;
}

bool fdinfo_has(pid_t pid, int fd, const char *key)
{
	size_t klen = strlen(key);
	char path[64], *text, *line;
	bool found = false;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
	else
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	text = read_text(path, NULL);
	for (line = text; line && !found; line = strchr(line, '\n')) {
		if (*line == '\n')
			line++;
		found = !strncmp(line, key, klen) && line[klen] == ':';
	}
	free(text);
	return found;
}

void *reserve_aligned(uint64_t size, uint64_t align)
{
	uintptr_t p, a;
	void *m;

	m = mmap(NULL, size + align, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	p = (uintptr_t)m;
	a = ALIGN_UP(p, align);
	if (a > p)
		munmap(m, a - p);
	if (p + align > a)
		munmap((void *)(a + size), p + align - a);
	return (void *)a;
}

int user_va_bits(void)
{
	void *hint = (void *)(1UL << 47), *p;

	p = mmap(hint, SZ_4K, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED)
		return 47;
	munmap(p, SZ_4K);
	return p == hint ? 56 : 47;
}

/* --- backing objects -------------------------------------------------- */

int memfd_sized(size_t size)
{
	int fd, e;

	fd = memfd_create("mshare-test", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, size) == 0)
		return fd;
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

static int create_unlinked(const char *dir, int flags)
{
	static unsigned int seq;
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/.mshare-test.%d.%u", dir, getpid(),
		 seq++);
	fd = open(path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC | flags, 0600);
	if (fd >= 0)
		unlink(path);
	return fd;
}

int file_sized(const char *dir, size_t size)
{
	int fd, e;

	fd = create_unlinked(dir, 0);
	if (fd < 0 || ftruncate(fd, size) == 0)
		return fd;
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

int hugetlb_usable(unsigned long npages, char *why, size_t len)
{
	struct statfs sfs;
	long free_pages;

	if (statfs(HUGETLB_DIR, &sfs) || sfs.f_type != HUGETLBFS_MAGIC) {
		snprintf(why, len, "%s is not a hugetlbfs mount", HUGETLB_DIR);
		return -1;
	}
	if (meminfo_kib("Hugepagesize") != (long)(HPAGE_SIZE >> 10)) {
		snprintf(why, len, "default huge page size is not 2 MiB");
		return -1;
	}
	free_pages = meminfo_kib("HugePages_Free");
	if (free_pages < (long)npages) {
		snprintf(why, len, "%ld free huge pages, need %lu",
			 free_pages, npages);
		return -1;
	}
	return 0;
}

/* Filesystems whose files are not on a disk (or have no O_DIRECT I/O). */
static bool memory_fs(const char *type)
{
	static const char * const types[] = {
		"tmpfs", "ramfs", "rootfs", "proc", "sysfs", "devtmpfs",
		"devpts", "hugetlbfs", "msharefs", "debugfs", "tracefs",
		"securityfs", "cgroup", "cgroup2", "pstore", "bpf", "mqueue",
		"configfs", "fusectl", "autofs", "binfmt_misc", "efivarfs",
		"nsfs",
	};
	size_t i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(type, types[i]))
			return true;
	return false;
}

static bool dir_works(const char *dir, bool odirect)
{
	struct statfs sfs;
	bool ok = true;
	void *buf;
	int fd;

	if (statfs(dir, &sfs) || sfs.f_type == TMPFS_MAGIC ||
	    sfs.f_type == RAMFS_MAGIC)
		return false;
	fd = create_unlinked(dir, odirect ? O_DIRECT : 0);
	if (fd < 0)
		return false;
	if (!odirect) {
		/* objects are mapped shared and writable */
		buf = MAP_FAILED;
		if (ftruncate(fd, SZ_4K) == 0)
			buf = mmap(NULL, SZ_4K, PROT_READ | PROT_WRITE,
				   MAP_SHARED, fd, 0);
		ok = buf != MAP_FAILED;
		if (ok)
			munmap(buf, SZ_4K);
	} else {
		/* Some filesystems accept O_DIRECT at open() only. */
		buf = mmap(NULL, SZ_4K, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ok = buf != MAP_FAILED && pwrite(fd, buf, SZ_4K, 0) == SZ_4K &&
		     pread(fd, buf, SZ_4K, 0) == SZ_4K;
		if (buf != MAP_FAILED)
			munmap(buf, SZ_4K);
	}
	close(fd);
	return ok;
}

static void note_tried(char *tried, size_t len, const char *dir)
{
	size_t used = strlen(tried);

	if (used < len)
		snprintf(tried + used, len - used, "%s%s", used ? " " : "", dir);
}

int disk_file(size_t size, char *why, size_t len)
{
	char dir[256], tried[512];
	int fd, e;

	fd = file_sized(SCRATCH_DIR, size);
	if (fd >= 0)
		return fd;
	e = errno;
	if (find_disk_dir(false, dir, sizeof(dir), tried, sizeof(tried))) {
		snprintf(why, len,
			 "no disk filesystem (%s: %s); tried: %s", SCRATCH_DIR,
			 strerror(e), tried[0] ? tried : "none");
		return -1;
	}
	fd = file_sized(dir, size);
	if (fd < 0)
		snprintf(why, len, "file in %s: %s", dir, strerror(errno));
	return fd;
}

int find_disk_dir(bool odirect, char *out, size_t outlen,
		  char *tried, size_t triedlen)
{
	const char *env = getenv("MSHARE_TEST_DISK_DIR");
	struct mntent *me;
	FILE *mounts;
	int ret = -1;

	tried[0] = '\0';
	if (env && *env) {
		note_tried(tried, triedlen, env);
		if (dir_works(env, odirect)) {
			snprintf(out, outlen, "%s", env);
			return 0;
		}
	}
	mounts = setmntent("/proc/self/mounts", "r");
	if (!mounts)
		return -1;
	while ((me = getmntent(mounts))) {
		if (memory_fs(me->mnt_type))
			continue;
		note_tried(tried, triedlen, me->mnt_dir);
		if (dir_works(me->mnt_dir, odirect)) {
			snprintf(out, outlen, "%s", me->mnt_dir);
			ret = 0;
			break;
		}
	}
	endmntent(mounts);
	return ret;
}

/* --- data -------------------------------------------------------------- */

uint64_t pattern_word(uint64_t seed, uint64_t off)
{
	uint64_t x = seed + off * 0x9e3779b97f4a7c15ULL;

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

void pattern_fill_at(void *buf, size_t len, uint64_t seed, uint64_t start)
{
	uint64_t *w = buf;
	size_t i;

	for (i = 0; i < len / 8; i++)
		w[i] = pattern_word(seed, start + i * 8);
}

ssize_t pattern_check_at(const void *buf, size_t len, uint64_t seed,
			 uint64_t start)
{
	const uint64_t *w = buf;
	size_t i;

	for (i = 0; i < len / 8; i++)
		if (w[i] != pattern_word(seed, start + i * 8))
			return i * 8;
	return -1;
}

void pattern_fill(void *buf, size_t len, uint64_t seed)
{
	pattern_fill_at(buf, len, seed, 0);
}

ssize_t pattern_check(const void *buf, size_t len, uint64_t seed)
{
	return pattern_check_at(buf, len, seed, 0);
}

bool is_zero(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

void stamp_pages_at(void *buf, size_t len, uint64_t seed, uint64_t start)
{
	size_t off;

	for (off = 0; off < len; off += SZ_4K)
		*(uint64_t *)((char *)buf + off) = pattern_word(seed, start + off);
}

ssize_t stamps_check_at(const void *buf, size_t len, uint64_t seed,
			uint64_t start)
{
	size_t off;

	for (off = 0; off < len; off += SZ_4K)
		if (*(const volatile uint64_t *)((const char *)buf + off) !=
		    pattern_word(seed, start + off))
			return off;
	return -1;
}

void stamp_pages(void *buf, size_t len, uint64_t seed)
{
	stamp_pages_at(buf, len, seed, 0);
}

ssize_t stamps_check(const void *buf, size_t len, uint64_t seed)
{
	return stamps_check_at(buf, len, seed, 0);
}

int pread_full(int fd, void *buf, size_t len, off_t off)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pread(fd, (char *)buf + done, len - done, off + done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			return -1;
		}
		done += n;
	}
	return 0;
}

int pwrite_full(int fd, const void *buf, size_t len, off_t off)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pwrite(fd, (const char *)buf + done, len - done, off + done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			return -1;
		}
		done += n;
	}
	return 0;
}

int fd_pattern_fill(int fd, off_t off, size_t len, uint64_t seed)
{
	void *buf = malloc(len);
	int ret, e;

	if (!buf)
		return -1;
	pattern_fill_at(buf, len, seed, off);
	ret = pwrite_full(fd, buf, len, off);
	e = errno;
	free(buf);
	errno = e;
	return ret;
}

ssize_t fd_pattern_check(int fd, off_t off, size_t len, uint64_t seed)
{
	void *buf = malloc(len);
	ssize_t ret = -2;

	if (buf && pread_full(fd, buf, len, off) == 0)
		ret = pattern_check_at(buf, len, seed, off);
	free(buf);
	return ret;
}

/* --- fault probing ------------------------------------------------------ */

/*
 * Per thread: SIGSEGV and SIGBUS go to the thread that faulted, and
 * threads of one process probe at the same time (mshare_tlb).
 */
static __thread sigjmp_buf probe_env;
static __thread volatile sig_atomic_t probe_armed;
static __thread void *volatile probe_addr;

static void probe_handler(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (probe_armed) {
		probe_armed = 0;
		probe_addr = si->si_addr;
		siglongjmp(probe_env, sig);
	}
	/* Not a probe: let the access fault again, fatally. */
	signal(sig, SIG_DFL);
}

static void probe_setup(void)
{
	static bool done;
	struct sigaction sa = {
		.sa_sigaction = probe_handler,
		.sa_flags = SA_SIGINFO,
	};

	if (done)
		return;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	done = true;
}

/* One access through a probe: op(arg) with the handler armed. */
struct probe_access {
	void *p;
	uint64_t val;
};

static int probe_run(void (*op)(struct probe_access *), struct probe_access *a)
{
	int sig;

	probe_setup();
	sig = sigsetjmp(probe_env, 1);
	if (sig)
		return sig;
	probe_armed = 1;
	op(a);
	probe_armed = 0;
	return 0;
}

static void probe_op_read(struct probe_access *a)
{
	a->val = *(const volatile uint64_t *)a->p;
}

static void probe_op_write(struct probe_access *a)
{
	*(volatile uint64_t *)a->p = a->val;
}

static void probe_op_call(struct probe_access *a)
{
	((void (*)(void))a->p)();
}

int probe_read(const void *p, uint64_t *val)
{
	struct probe_access a = { .p = (void *)p };
	int sig = probe_run(probe_op_read, &a);

	if (!sig && val)
		*val = a.val;
	return sig;
}

int probe_write(void *p, uint64_t val)
{
	struct probe_access a = { .p = p, .val = val };

	return probe_run(probe_op_write, &a);
}

int probe_call(const void *p)
{
	struct probe_access a = { .p = (void *)p };

	return probe_run(probe_op_call, &a);
}

void *probe_fault_addr(void)
{
	return probe_addr;
}

/* --- processes ---------------------------------------------------------- */

#define MAX_CHILDREN 1024
static pid_t children[MAX_CHILDREN];

static void child_forget(pid_t pid)
{
	int i;

	for (i = 0; i < MAX_CHILDREN; i++)
		if (children[i] == pid)
			children[i] = 0;
}

pid_t child_fork(void)
{
	pid_t parent = getpid(), pid;
	int i;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		memset(children, 0, sizeof(children));
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
	} else if (pid > 0) {
		for (i = 0; i < MAX_CHILDREN; i++) {
			if (!children[i]) {
				children[i] = pid;
				break;
			}
		}
	}
	return pid;
}

int child_wait(pid_t pid)
{
	int status;
	pid_t r;

	do {
		r = waitpid(pid, &status, 0);
	} while (r < 0 && errno == EINTR);
	if (r != pid)
		return -1;
	child_forget(pid);
	return status;
}

int child_poll(pid_t pid, int *status)
{
	pid_t r;

	do {
		r = waitpid(pid, status, WNOHANG);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return -1;
	if (r == 0)
		return 0;
	child_forget(pid);
	return 1;
}

void child_kill_all(void)
{
	int i;

	for (i = 0; i < MAX_CHILDREN; i++) {
		if (!children[i])
			continue;
		kill(children[i], SIGKILL);
		child_wait(children[i]);
		children[i] = 0;
	}
}

bool status_ok(int status)
{
	return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool status_killed_by(int status, int sig)
{
	return status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == sig;
}

const char *status_str(int status)
{
	static char buf[64];

	if (status == -1)
		snprintf(buf, sizeof(buf), "not waited for");
	else if (WIFEXITED(status))
		snprintf(buf, sizeof(buf), "exited %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, sizeof(buf), "killed by SIG%s",
			 sigabbrev_np(WTERMSIG(status)) ?: "?");
	else
		snprintf(buf, sizeof(buf), "status %#x", status);
	return buf;
}

int pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

int caps_drop(uint32_t mask)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return -1;
	data[0].effective &= ~mask;
	return syscall(SYS_capset, &hdr, data);
}

int gate_init(struct gate *g)
{
	int fds[2];

	if (pipe2(fds, O_CLOEXEC))
		return -1;
	g->rfd = fds[0];
	g->wfd = fds[1];
	return 0;
}

void gate_child(struct gate *g)
{
	if (g->wfd >= 0)
		close(g->wfd);
	g->wfd = -1;
}

int gate_wait(struct gate *g)
{
	char c;
	ssize_t n;

	do {
		n = read(g->rfd, &c, 1);
	} while (n < 0 && errno == EINTR);
	return n == 0 ? 0 : -1;
}

void gate_open(struct gate *g)
{
	gate_child(g);
}

void gate_fini(struct gate *g)
{
	gate_child(g);
	if (g->rfd >= 0)
		close(g->rfd);
	g->rfd = -1;
}

int msg_send(int fd, const void *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = write(fd, (const char *)buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		done += n;
	}
	return 0;
}

int msg_recv(int fd, void *buf, size_t len, int timeout_ms)
{
	double deadline = now_s() + timeout_ms / 1000.0;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	size_t done = 0;
	ssize_t n;
	int left;

	while (done < len) {
		left = (int)((deadline - now_s()) * 1000);
		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		n = poll(&pfd, 1, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			continue;
		n = read(fd, (char *)buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = EPIPE;
			return -1;
		}
		done += n;
	}
	return 0;
}

int fd_send(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte = 'F';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = cbuf,
		.msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	ssize_t n;

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	do {
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	return n == 1 ? 0 : -1;
}

int fd_recv(int sock, int timeout_ms)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct pollfd pfd = { .fd = sock, .events = POLLIN };
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = cbuf,
		.msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	ssize_t n;
	int fd;

	do {
		n = poll(&pfd, 1, timeout_ms);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	if (n == 0) {
		errno = ETIMEDOUT;
		return -1;
	}
	do {
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	if (n == 0) {
		errno = EPIPE;
		return -1;
	}
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS ||
	    cm->cmsg_len != CMSG_LEN(sizeof(int))) {
		errno = EPROTO;
		return -1;
	}
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* --- memory cgroups (cgroup v2) ----------------------------------------- */

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC	0x63677270
#endif

int cg_write(const char *cg, const char *file, const char *val)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	return write_text(path, val);
}

bool cg_has_word(const char *cg, const char *file, const char *word)
{
	char path[PATH_MAX + 64], *text, *tok, *save;
	bool found = false;

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	text = read_text(path, NULL);
	if (!text)
		return false;
	for (tok = strtok_r(text, " \n", &save); tok && !found;
	     tok = strtok_r(NULL, " \n", &save))
		found = !strcmp(tok, word);
	free(text);
	return found;
}

long long cg_current(const char *cg)
{
	char path[PATH_MAX + 64], *text;
	long long v;

	snprintf(path, sizeof(path), "%s/memory.current", cg);
	text = read_text(path, NULL);
	if (!text)
		return -1;
	v = strtoll(text, NULL, 10);
	free(text);
	return v;
}

long long cg_stat(const char *cg, const char *key)
{
	char path[PATH_MAX + 64], *text, *line;
	size_t klen = strlen(key);
	long long v = -1;

	snprintf(path, sizeof(path), "%s/memory.stat", cg);
	text = read_text(path, NULL);
	if (!text)
		return -1;
	for (line = text; line; line = strchr(line, '\n')) {
		if (*line == '\n')
			line++;
		if (!strncmp(line, key, klen) && line[klen] == ' ') {
			v = strtoll(line + klen + 1, NULL, 10);
			break;
		}
	}
	free(text);
	return v;
}

int cg_join(const char *cg)
{
	char pid[32];

	snprintf(pid, sizeof(pid), "%d\n", getpid());
	return cg_write(cg, "cgroup.procs", pid);
}

int cg_remove(const char *cg)
{
	char path[PATH_MAX + 32], *procs, *p, *end;
	double start;
	long pid;
	int fd, ret;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	procs = read_text(path, NULL);
	for (p = procs; p && *p; p = end) {
		pid = strtol(p, &end, 10);
		if (end == p)
			break;
		fd = open(CG_ROOT "/cgroup.procs", O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			dprintf(fd, "%ld\n", pid);
			close(fd);
		}
	}
	free(procs);
	start = now_s();
	while ((ret = rmdir(cg)) && errno == EBUSY && now_s() - start < 5)
		usleep(50 * 1000);
	return ret;
}

/* rmdir the cgroup tree at path, deepest first (cgroups only hold dirs). */
static void rm_cgroup_tree(const char *path, int depth)
{
	char sub[PATH_MAX];
	struct dirent *de;
	DIR *d;

	d = depth < 4 ? opendir(path) : NULL;
	while (d && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		rm_cgroup_tree(sub, depth + 1);
	}
	if (d)
		closedir(d);
	rmdir(path);
}

void cg_remove_stale(void)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(CG_ROOT);

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, CG_PREFIX, strlen(CG_PREFIX)))
			continue;
		snprintf(path, sizeof(path), "%s/%s", CG_ROOT, de->d_name);
		/* children first: a test may make a level below */
		rm_cgroup_tree(path, 0);
	}
	closedir(d);
}

int cg_memory_setup(bool *enabled, char *why, size_t len)
{
	struct statfs sfs;

	*enabled = false;
	if (statfs(CG_ROOT, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		snprintf(why, len, "%s is not a cgroup2 mount", CG_ROOT);
		return -1;
	}
	if (!cg_has_word(CG_ROOT, "cgroup.controllers", "memory")) {
		snprintf(why, len, "no memory controller in %s/cgroup.controllers",
			 CG_ROOT);
		return -1;
	}
	if (cg_has_word(CG_ROOT, "cgroup.subtree_control", "memory"))
		return 0;
	if (cg_write(CG_ROOT, "cgroup.subtree_control", "+memory")) {
		snprintf(why, len, "enabling the memory controller in %s: %s",
			 CG_ROOT, strerror(errno));
		return -2;
	}
	*enabled = true;
	return 0;
}

void cg_memory_restore(bool enabled)
{
	if (!enabled)
		return;
	/* best effort: other cgroups may use it by now */
	if (cg_write(CG_ROOT, "cgroup.subtree_control", "-memory"))
		fprintf(stderr, "# leaving +memory in %s: %s\n", CG_ROOT,
			strerror(errno));
}

/* --- statistics --------------------------------------------------------- */

void vmstat_refresh(void)
{
	int fd = open("/proc/sys/vm/stat_refresh", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (write(fd, "1", 1) < 0) {
		/* Older kernels or no permission: the counters are close. */
	}
	close(fd);
}

long meminfo_kib(const char *key)
{
	size_t klen = strlen(key);
	char line[256];
	long val = -1;
	FILE *f;

	f = fopen("/proc/meminfo", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			val = strtol(line + klen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return val;
}

char *mapping_line(char *text, const void *start, char sep)
{
	char want[40];
	size_t wlen;
	char *b;

	wlen = snprintf(want, sizeof(want), "%lx%c", (unsigned long)start, sep);
	for (b = text; b; b = strchr(b, '\n')) {
		if (*b == '\n')
			b++;
		if (!strncmp(b, want, wlen))
			return b;
	}
	return NULL;
}

char *smaps_entry(const void *start)
{
	char *all = read_text("/proc/self/smaps", NULL), *b, *e, *ret;

	if (!all)
		return NULL;
	b = mapping_line(all, start, '-');
	ret = NULL;
	e = b ? strstr(b, "\nVmFlags:") : NULL;
	if (e) {
		e = strchr(e + 1, '\n') ?: e + strlen(e);
		ret = strndup(b, e - b);
	}
	free(all);
	return ret;
}

long smaps_kib(const char *entry, const char *key)
{
	char want[64];
	const char *p;

	snprintf(want, sizeof(want), "\n%s:", key);
	p = strstr(entry, want);
	return p ? strtol(p + strlen(want), NULL, 10) : -1;
}

long status_kib(const char *key)
{
	size_t klen = strlen(key);
	char line[256];
	long val = -1;
	FILE *f;

	f = fopen("/proc/self/status", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			val = strtol(line + klen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return val;
}

long rss_slack_pages(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);

	if (cpus < 1)
		cpus = 1;
	return cpus * (cpus * 2 > 32 ? cpus * 2 : 32);
}

long minflt_self(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return -1;
	return ru.ru_minflt;
}

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

long env_long(const char *name, long def, long min, long max)
{
	const char *env = getenv(name);
	char *end;
	long v;

	if (!env || !*env)
		return def;
	errno = 0;
	v = strtol(env, &end, 0);
	if (errno || *end || v < min || v > max)
		return -1;
	return v;
}

uint64_t rnd_next(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}
