/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the msharefs selftests: mounting, test directories,
 * regions, windows, the mshare system calls, backing objects, data
 * patterns, fault probing, child processes, pipes and descriptor passing,
 * /proc (meminfo, status, fdinfo) and getrusage readers.
 *
 * Nothing here uses the kselftest harness macros (this file is compiled on
 * its own and linked into every test). Functions report failure the way
 * system calls do, -1 with errno set, unless documented otherwise; the
 * tests assert on the results.
 */
#ifndef MSHARE_UTIL_H
#define MSHARE_UTIL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <unistd.h>
#include <linux/magic.h>
/* From HEADERS, else from libmshare's copy of them (see the Makefile). */
#include <linux/mshare.h>
#include <linux/msharefs.h>

#define MSHARE_ROOT	"/sys/fs/mshare"
#define MSHARE_INFO	MSHARE_ROOT "/mshare_info"
#define HUGETLB_DIR	"/dev/hugepages"

#ifndef MSHARE_MAGIC
#define MSHARE_MAGIC	0x4d534852
#endif
#ifndef HUGETLBFS_MAGIC
#define HUGETLBFS_MAGIC	0x958458f6
#endif

#define SZ_4K		0x1000UL
#define SZ_64K		0x10000UL
#define SZ_1M		0x100000UL
#define SZ_2M		0x200000UL
#define SZ_1G		0x40000000UL
#define HPAGE_SIZE	SZ_2M

#define ALIGN_UP(x, a)		(((x) + (a) - 1) & ~((uint64_t)(a) - 1))
#define IS_ALIGNED(x, a)	(((uint64_t)(x) & ((uint64_t)(a) - 1)) == 0)

/* What every test needs: its own msharefs directory and the alignment. */
struct mshare_ctx {
	char dir[256];		/* MSHARE_ROOT/<tag>.<pid>, removed by fini */
	uint64_t align;		/* from mshare_info */
	size_t page;
};

/* --- msharefs -------------------------------------------------------- */

/* Mount msharefs on MSHARE_ROOT unless it already is (returns 0). */
int mshare_ensure_mounted(void);
/*
 * Read mshare_info strictly: decimal digits, one newline, nothing else.
 * Malformed content fails with EPROTO.
 */
int mshare_read_info(uint64_t *align);
int mshare_ctx_init(struct mshare_ctx *c, const char *tag);
/* Kills the registered children, then removes the test directory. */
void mshare_ctx_fini(struct mshare_ctx *c);
/* "<dir>/<name>"; the result stays valid for the next 7 calls. */
const char *mshare_path(const struct mshare_ctx *c, const char *name);
/* Remove a file or a directory tree; best effort. */
void rm_tree(const char *path);
/* The whole of a (proc) file, NUL-terminated, malloc()ed; NULL on error. */
char *read_text(const char *path, size_t *len);
/* Write text to an existing (proc, sysfs, cgroup) file in one write; 0 or -1. */
int write_text(const char *path, const char *text);
/* /proc/self/maps has a mapping of exactly [start, start + len). */
bool maps_has_range(const void *start, uint64_t len);

/* Open (no O_CREAT) a region of the test directory. */
int mshare_open(const struct mshare_ctx *c, const char *name, int flags);
/* Create a 0600 region, sized when size != 0; returns an O_RDWR fd. */
int mshare_create(const struct mshare_ctx *c, const char *name, uint64_t size);
/* mmap(addr, size, RW, MAP_SHARED | extra_flags, fd, 0): a window. */
void *mshare_window(int fd, uint64_t size, void *addr, int extra_flags);
/* MSHAREFS_CREATE_MAPPING with every field given. */
int mshare_map(int fd, uint64_t roff, uint64_t size, uint64_t off,
	       unsigned int prot, unsigned int flags, int objfd);
/* Read-write anonymous shared object; extra_flags e.g. MAP_POPULATE. */
int mshare_map_anon(int fd, uint64_t roff, uint64_t size,
		    unsigned int extra_flags);
/* Read-write object backed by objfd at file offset off. */
int mshare_map_fd(int fd, uint64_t roff, uint64_t size, int objfd,
		  uint64_t off);
int mshare_unmap(int fd, uint64_t roff, uint64_t size);

/* --- mshare system calls ------------------------------------------------ */

/*
 * Raw syscall(2) wrappers, the only ones of the tests: they hand every
 * argument to the kernel as it is (libmshare's mshare_attach() would make
 * the window with mmap() on ENOSYS or EPERM, and the static tests do not
 * link libmshare). -1 and errno on failure; sys_mshare_attach returns
 * MAP_FAILED then.
 * Offsets are signed, as loff_t is, so that negative ones can be tried.
 */
int sys_mshare_create(unsigned int flags);
void *sys_mshare_attach(int fd, int64_t offset, size_t size, void *addr,
			unsigned int flags);
int sys_mshare_map(int fd, const void *args, size_t size);
int sys_mshare_unmap(int fd, int64_t roff, size_t len);
int sys_mshare_protect(int fd, int64_t roff, size_t len, unsigned int prot);
int sys_mshare_advise(int fd, int64_t roff, size_t len, int advice);
/* mshare_map() of a struct mshare_map_args made of the arguments. */
int sys_mshare_map_obj(int fd, uint64_t roff, uint64_t size, uint64_t boff,
		       unsigned int prot, unsigned int flags, int bfd);
/* Read-write anonymous shared object; extra_flags e.g. MAP_POPULATE. */
int sys_mshare_map_anon(int fd, uint64_t roff, uint64_t size,
			unsigned int extra_flags);
/* mshare_create(flags), then ftruncate(size) when size != 0. */
int mshare_new(uint64_t size, unsigned int flags);
/* open("/proc/self/fd/<fd>", flags | O_CLOEXEC): the same file again. */
int fd_reopen(int fd, int flags);
/*
 * The decimal value of line "<key>:" of /proc/<pid>/fdinfo/<fd> (pid 0:
 * self). -1 with ENOENT if there is no such line, EPROTO if it is not a
 * number.
 */
int fdinfo_get(pid_t pid, int fd, const char *key, long long *val);
/* Whether /proc/<pid>/fdinfo/<fd> (pid 0: self) has a line "<key>:". */
bool fdinfo_has(pid_t pid, int fd, const char *key);

/*
 * Reserve size bytes of address space at an align-aligned address (a
 * PROT_NONE placeholder that MAP_FIXED may replace). NULL on failure.
 */
void *reserve_aligned(uint64_t size, uint64_t align);
/* Number of user virtual address bits (47 or 56), probed with mmap. */
int user_va_bits(void);

/* --- backing objects -------------------------------------------------- */

int memfd_sized(size_t size);
/* A regular file created in dir and unlinked at once, of the given size. */
int file_sized(const char *dir, size_t size);
/*
 * 0 when /dev/hugepages is hugetlbfs with 2 MiB pages and at least
 * npages free; otherwise -1 with the reason in why.
 */
int hugetlb_usable(unsigned long npages, char *why, size_t len);
/*
 * Find a writable directory on a disk (or network) filesystem: not tmpfs,
 * ramfs or a pseudo filesystem. With odirect, O_DIRECT I/O must work there
 * too. $MSHARE_TEST_DISK_DIR is tried first, then every mount point.
 * Returns 0 and the directory in out, or -1 with the candidates in tried.
 */
int find_disk_dir(bool odirect, char *out, size_t outlen,
		  char *tried, size_t triedlen);
/* The scratch disk the test guest mounts (kernel/scripts/run-qemu.sh). */
#define SCRATCH_DIR	"/mnt/scratch"
/*
 * A file of the given size, unlinked, on a disk filesystem: SCRATCH_DIR,
 * else what find_disk_dir() finds; -1 with the reason in why.
 */
int disk_file(size_t size, char *why, size_t len);

/* --- data -------------------------------------------------------------- */

/* The 64-bit word at byte offset off of the pattern named seed. */
uint64_t pattern_word(uint64_t seed, uint64_t off);
/*
 * Fill or check every word of buf (len a multiple of 8) with the pattern
 * seed from its offset start on; plain pattern_fill/check start at 0.
 */
void pattern_fill_at(void *buf, size_t len, uint64_t seed, uint64_t start);
/* -1 if all of buf matches, else the offset in buf of the first bad word */
ssize_t pattern_check_at(const void *buf, size_t len, uint64_t seed,
			 uint64_t start);
void pattern_fill(void *buf, size_t len, uint64_t seed);
ssize_t pattern_check(const void *buf, size_t len, uint64_t seed);
bool is_zero(const void *buf, size_t len);
/* Only the first word of every page: cheap for big ranges. */
void stamp_pages_at(void *buf, size_t len, uint64_t seed, uint64_t start);
ssize_t stamps_check_at(const void *buf, size_t len, uint64_t seed,
			uint64_t start);
void stamp_pages(void *buf, size_t len, uint64_t seed);
ssize_t stamps_check(const void *buf, size_t len, uint64_t seed);
int pread_full(int fd, void *buf, size_t len, off_t off);
int pwrite_full(int fd, const void *buf, size_t len, off_t off);
/*
 * Pattern fill or check of the file range [off, off + len), the pattern
 * taken at the file offsets: a window mapping file offset off at p holds
 * the same data when pattern_check_at(p, len, seed, off) == -1.
 * fd_pattern_check: -1 if it matches, -2 on I/O error, else the offset
 * (from off) of the first bad word.
 */
int fd_pattern_fill(int fd, off_t off, size_t len, uint64_t seed);
ssize_t fd_pattern_check(int fd, off_t off, size_t len, uint64_t seed);

/* --- fault probing ------------------------------------------------------ */

/*
 * Access p (8-byte aligned) once, catching SIGSEGV and SIGBUS with
 * sigsetjmp/siglongjmp. Returns 0 or the signal number. A fault while no
 * probe is in progress is fatal as usual (the handler restores SIG_DFL).
 */
int probe_read(const void *p, uint64_t *val);
int probe_write(void *p, uint64_t val);
/* Call the code at p (a bare x86 "ret" will do), as the probes above. */
int probe_call(const void *p);
/* si_addr of the last fault caught by a probe. */
void *probe_fault_addr(void);

/* --- processes ---------------------------------------------------------- */

/*
 * fork() after flushing stdio; the parent remembers the child so that
 * child_kill_all() can clean up after a failed assertion. The child gets
 * SIGKILL if its parent dies and must leave with _exit().
 */
pid_t child_fork(void);
/* waitpid() without EINTR; returns the status, or -1. */
int child_wait(pid_t pid);
/* Non-blocking: 1 and the status if pid ended, 0 if not, -1 on error. */
int child_poll(pid_t pid, int *status);
void child_kill_all(void);
bool status_ok(int status);
bool status_killed_by(int status, int sig);
/* "exited 3", "killed by SIGSEGV": a static buffer. */
const char *status_str(int status);
/* Run the calling thread on CPU cpu only; 0, or -1 and errno. */
int pin_to_cpu(int cpu);
/*
 * Take the capabilities of mask (1u << CAP_*, capabilities 0-31) out of
 * the effective set, for a child that must meet the checks an
 * unprivileged process meets. 0, or -1 and errno.
 */
int caps_drop(uint32_t mask);

/* In a child: report and _exit(1) unless cond holds. */
#define CHILD_CHECK(cond, fmt, ...) do {				\
	if (!(cond)) {							\
		fprintf(stderr, "# child %d: %s:%d: %s: " fmt "\n",	\
			getpid(), __FILE__, __LINE__, #cond,		\
			##__VA_ARGS__);					\
		_exit(1);						\
	}								\
} while (0)

/*
 * A one-shot gate: children block in gate_wait() until the parent calls
 * gate_open() (it closes the only write end left). Every child must call
 * gate_child() right after fork() for every gate it inherited.
 */
struct gate {
	int rfd;
	int wfd;
};

int gate_init(struct gate *g);
void gate_child(struct gate *g);
int gate_wait(struct gate *g);
void gate_open(struct gate *g);
void gate_fini(struct gate *g);

/* Whole-message pipe I/O; recv fails with ETIMEDOUT or EPIPE (on EOF). */
int msg_send(int fd, const void *buf, size_t len);
int msg_recv(int fd, void *buf, size_t len, int timeout_ms);

/*
 * Pass a descriptor over a unix socket (SCM_RIGHTS). fd_recv returns the
 * new descriptor (O_CLOEXEC) or -1 (ETIMEDOUT, EPIPE on EOF, EPROTO if
 * the message carried no descriptor).
 */
int fd_send(int sock, int fd);
int fd_recv(int sock, int timeout_ms);

/* --- memory cgroups (cgroup v2) ----------------------------------------- */

#define CG_ROOT		"/sys/fs/cgroup"
#define CG_PREFIX	"mshare-test-"	/* of every cgroup a test makes */

/* Write val to cg/file (a whole write); 0 or -1. */
int cg_write(const char *cg, const char *file, const char *val);
/* Whether word is one of the blank-separated words of cg/file. */
bool cg_has_word(const char *cg, const char *file, const char *word);
/* cg/memory.current in bytes, or -1. */
long long cg_current(const char *cg);
/* The line "<key> <bytes>" of cg/memory.stat, or -1. */
long long cg_stat(const char *cg, const char *key);
/* Move the calling process into cg. */
int cg_join(const char *cg);
/*
 * Move what is left in cg to the root, then rmdir it, retrying EBUSY for
 * up to 5 s; 0 or -1 (errno of the last rmdir).
 */
int cg_remove(const char *cg);
/* Remove empty cgroups CG_ROOT/CG_PREFIX* left over by killed runs. */
void cg_remove_stale(void);
/*
 * 0 when CG_ROOT is cgroup2 with the memory controller, which is then
 * enabled for the root's children (*enabled: this call enabled it, for
 * cg_memory_restore()); otherwise -1 with the reason in why (an absent
 * controller), or -2 with it when enabling failed (an error, not a skip).
 */
int cg_memory_setup(bool *enabled, char *why, size_t len);
void cg_memory_restore(bool enabled);

/* --- statistics --------------------------------------------------------- */

/* Fold the per-cpu vmstat counters so that /proc/meminfo is exact. */
void vmstat_refresh(void);
/* A /proc/meminfo field in kB ("MemFree", "PageTables"), or -1. */
long meminfo_kib(const char *key);
/* A field of /proc/self/status in kB ("VmPTE", "VmRSS"), or -1. */
long status_kib(const char *key);
/*
 * The line of a maps or smaps text (sep '-') or of numa_maps (sep ' ')
 * that starts the mapping at start, or NULL if there is none.
 */
char *mapping_line(char *text, const void *start, char sep);
/*
 * The entry of /proc/self/smaps for the VMA that starts at start, from its
 * header line to the end of its VmFlags line (the last one), malloc()ed;
 * NULL if none.
 */
char *smaps_entry(const void *start);
/* The value of "<key>:" in an smaps entry (in kB), or -1 if missing. */
long smaps_kib(const char *entry, const char *key);
/*
 * How many pages a reading of get_mm_rss() (smaps' Rss and MshareRss,
 * fdinfo's mshare-rss) may lag behind: the counters are per-cpu and are
 * folded in batches of max(32, 2 * CPUs) per CPU.
 */
long rss_slack_pages(void);
long minflt_self(void);
double now_s(void);
/* CLOCK_MONOTONIC in milliseconds. */
uint64_t now_ms(void);
/*
 * The whole number (decimal, 0x hex or 0 octal) in environment variable
 * name: def when it is unset or empty, -1 when it is not a number from min
 * to max.
 */
long env_long(const char *name, long def, long min, long max);
uint64_t rnd_next(uint64_t *state);

#endif /* MSHARE_UTIL_H */
