// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz the mshare system calls: several processes make random calls, in
 * random order, with random arguments, for MSHARE_FUZZ_SECONDS (40).
 *
 * MSHARE_FUZZ_PROCS (4) worker processes draw operations from ops[]:
 * mshare_create() with valid and invalid flags; ftruncate() and
 * fallocate() to interesting sizes; mshare_map() of objects of every kind
 * (anonymous, MAP_HUGETLB, memfd, files on /tmp and on a disk, a
 * hugetlbfs file, read-only and write-only files, a directory, /dev/zero,
 * a socket, bad descriptors, the region itself) with struct sizes 0, 8,
 * 40, 48 and 4096 (zero or random tail); mshare_unmap(), mshare_protect()
 * and mshare_advise() (valid and invalid advice); the msharefs ioctls on
 * named regions of the test's msharefs directory; windows by
 * mshare_attach() and mmap() at offsets, sizes and addresses around the
 * alignment A, unaligned, occupied, 0 and near the top of the address
 * space; munmap(), mprotect(), madvise(), mlock() and mremap() of
 * windows; reads, writes and calls into windows under a SIGSEGV/SIGBUS
 * handler; reopening through /proc/self/fd (and by path for named
 * regions); dup() and close(); descriptors passed to the other workers
 * over unix sockets, so that other processes use them (the owner file
 * makes its receiver an owner, a reopened descriptor does not); forked
 * children that use the windows and descriptors they inherit; short-lived
 * owner children that create a region, pass its owner file on and exit
 * under its users; fdinfo and smaps reads; and a single-process coherence
 * check of one object through two windows around unmap, protect, advise,
 * fork and destruction.
 *
 * Ownership: a region made by mshare_create() is owned through its owner
 * file, the one mshare_create() returned: every descriptor of it (dups,
 * inherited, received) may change the region, no other one (EPERM), and
 * the region lives while the file is open anywhere. A process knows its
 * region lives while it holds the owner file, and knows it is destroyed
 * once it closed its last descriptor of the owner file if that file never
 * left it (never sent, never inherited by a child); otherwise it does not
 * know. Only a holder of the owner file may reopen the region through
 * /proc/self/fd (EACCES). A named msharefs region is owned by the process
 * that created it.
 *
 * Errors are the point, but every call has a set of errno values it may
 * return in its situation: whether the descriptor is the owner file and
 * whether the region still lives, the access mode of the descriptor, the
 * arguments (see the *_expect() helpers). The test fails when a call
 * returns an errno outside its set, succeeds where it must fail (a change
 * through a descriptor that does not own the region, a writable window
 * through a read-only descriptor, invalid arguments), a
 * window allows more than its own protection, a process dies of a signal
 * that no probe caught or does not end in time, the coherence check sees
 * wrong data, fewer than MIN_CALLS of some call were made, none of the
 * main calls ever succeeded, or memory does not come back at the end.
 *
 * Replay: the seed is printed at the start; run with MSHARE_FUZZ_SEED set
 * to it, and the same MSHARE_FUZZ_PROCS, to make every process take the
 * same random decisions again (how the processes interleave, and so some
 * results, still varies). MSHARE_FUZZ_MEM_TOLERANCE_MB (32) is how much
 * memory may stay missing at the end. The harness timeout is the fuzzing
 * time plus TIMEOUT_EXTRA.
 *
 * Everything written into windows is code: words of one-byte x86
 * instructions that touch no memory and end in a ret (code_word()), so
 * that a call into any written word of an executable window just returns.
 * Memory stays bounded: objects are small or never populated, touches
 * land in a few 2 MiB zones of each region, a worker has at most MAX_FDS
 * descriptors and MAX_WINS windows, and it lets go of everything when
 * MemAvailable runs low.
 */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>

#include "mshare_test.h"

#ifndef MADV_COLD
#define MADV_COLD		20
#define MADV_PAGEOUT		21
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22
#define MADV_POPULATE_WRITE	23
#endif
#ifndef MADV_DONTNEED_LOCKED
#define MADV_DONTNEED_LOCKED	24
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE		25
#endif
#ifndef MADV_SOFT_OFFLINE
#define MADV_SOFT_OFFLINE	101
#endif
#ifndef MAP_HUGE_2MB
#define MAP_HUGE_2MB		(21U << MAP_HUGE_SHIFT)
#define MAP_HUGE_1GB		(30U << MAP_HUGE_SHIFT)
#endif
#ifndef PROT_SEM
#define PROT_SEM		0x8
#endif
#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT		0x01
#endif

#define DEFAULT_SECONDS		40
#define DEFAULT_PROCS		4
#define MAX_PROCS		16
#define TIMEOUT_EXTRA		120	/* harness timeout: fuzzing + this */
#define GRACE_S			60	/* for the workers to end after it */
#define KID_TIMEOUT_S		30	/* for a forked child to end */
#define SETTLE_S		25	/* for memory to come back */
#define MEM_TOLERANCE_MB	32
#define MIN_CALLS		3	/* of every call */

#define MAX_FDS			40	/* region descriptors of a process */
#define MAX_WINS		16	/* windows of a process */
#define MAX_REGIONS		(MAX_FDS + MAX_WINS)
#define MAX_OWNED		10	/* live regions a process created */
#define MAX_KIDS		3	/* children running at once */
#define KID_OPS			24	/* most operations of a child */
#define WIN_VA_BUDGET		(32UL << 40)
#define BACKING_SIZE		(4 * SZ_1M)
#define ZONE			SZ_2M
#define POPULATE_MAX		(4 * SZ_1M)	/* most one call populates */
#define NORESERVE_MAX		(8 * SZ_1M)	/* most MAP_NORESERVE maps */
#define MAX_LOG			40	/* failure lines of a process */
#define MAX_LOG_ALL		300	/* of all processes */
#define MSG_MAGIC		0x6d736866
#define ERR_WORDS		4	/* errno values, signal numbers < 256 */

/* --- calls and their statistics ------------------------------------- */

enum call {
	C_CREATE, C_NAMED, C_FTRUNCATE, C_FALLOCATE, C_MAP, C_IOCTL_MAP,
	C_UNMAP, C_IOCTL_UNMAP, C_PROTECT, C_ADVISE, C_ATTACH, C_MMAP,
	C_MUNMAP, C_WIN_MPROTECT, C_WIN_MADVISE, C_WIN_MLOCK, C_WIN_MREMAP,
	C_READ, C_WRITE, C_EXEC, C_REOPEN, C_DUP, C_CLOSE, C_SEND, C_RECV,
	C_FORK, C_OWNER_CHILD, C_FDINFO, C_SMAPS, C_COHERENCE, NR_CALLS
};

static const char * const call_names[NR_CALLS] = {
	[C_CREATE] = "mshare_create",
	[C_NAMED] = "open(O_CREAT)",
	[C_FTRUNCATE] = "ftruncate",
	[C_FALLOCATE] = "fallocate",
	[C_MAP] = "mshare_map",
	[C_IOCTL_MAP] = "CREATE_MAPPING",
	[C_UNMAP] = "mshare_unmap",
	[C_IOCTL_UNMAP] = "MSHAREFS_UNMAP",
	[C_PROTECT] = "mshare_protect",
	[C_ADVISE] = "mshare_advise",
	[C_ATTACH] = "mshare_attach",
	[C_MMAP] = "mmap",
	[C_MUNMAP] = "munmap",
	[C_WIN_MPROTECT] = "mprotect(win)",
	[C_WIN_MADVISE] = "madvise(win)",
	[C_WIN_MLOCK] = "mlock(win)",
	[C_WIN_MREMAP] = "mremap(win)",
	[C_READ] = "read probe",
	[C_WRITE] = "write probe",
	[C_EXEC] = "exec probe",
	[C_REOPEN] = "reopen",
	[C_DUP] = "dup",
	[C_CLOSE] = "close",
	[C_SEND] = "sendmsg",
	[C_RECV] = "recvmsg",
	[C_FORK] = "fork child",
	[C_OWNER_CHILD] = "owner child",
	[C_FDINFO] = "fdinfo",
	[C_SMAPS] = "smaps",
	[C_COHERENCE] = "coherence",
};

/* At least one of each of these must succeed. */
static const enum call must_succeed[] = {
	C_CREATE, C_FTRUNCATE, C_MAP, C_ATTACH, C_PROTECT, C_ADVISE, C_UNMAP,
};

struct call_stat {
	uint64_t calls, ok, expected, unexpected;
	uint64_t seen[ERR_WORDS];	/* errno values (signals of probes) */
};

/* Shared by every process of the test. */
struct shared {
	struct call_stat st[NR_CALLS];
	uint64_t failures;
	uint64_t logged;		/* failure lines */
	uint64_t next_id;		/* of regions */
	uint64_t next_token;		/* of processes */
	uint64_t exec_skipped;		/* no code word to call */
	uint64_t reliefs;		/* memory ran low */
	int cur_op[MAX_PROCS];		/* of each worker, for crash reports */
	uint64_t nops[MAX_PROCS];
};

static bool is_probe(enum call c)
{
	return c == C_READ || c == C_WRITE || c == C_EXEC;
}

/* --- the run, set up by the test before the workers start ------------ */

static struct {
	struct shared *sh;
	uint64_t align;			/* A */
	uint64_t page;
	const struct mshare_ctx *ctx;	/* the msharefs test directory */
	char disk_dir[PATH_MAX];	/* "" without a disk filesystem */
	bool hugetlb;			/* 2 MiB hugetlb pages to spare */
	bool nx;			/* the CPU refuses to run PROT_READ */
	int seconds;
	int nprocs;
	uint64_t seed;
	double deadline;		/* of the fuzzing */
	int inbox[MAX_PROCS][2];	/* [0]: the worker reads; [1]: sends */
} G;

/* --- what a process knows: regions, descriptors, windows, children --- */

struct region {
	bool used;
	uint64_t id;
	pid_t owner;		/* tgid of its creator, */
	uint64_t token;		/* and the creator's token (pids are reused) */
	bool named;
	bool dead;		/* known to be destroyed */
	bool owner_out;		/* the owner file may be held elsewhere */
	char name[40];		/* in the test directory, if named */
	uint64_t size_seen;	/* the size last seen */
	int nfds, nwins;	/* of this process */
	int owner_fds;		/* descriptors of the owner file, of this process */
};

struct fdent {
	int fd;
	int mode;		/* O_RDONLY, O_WRONLY or O_RDWR */
	bool owns;		/* the owner file of an unnamed region */
	struct region *r;
	char tag[80];		/* for the logs */
};

struct window {
	char *addr;
	uint64_t len;
	uint64_t roff;		/* region offset of addr */
	int prot;
	bool dontfork;		/* not inherited by a child */
	struct region *r;
	char *last_write;	/* where a code word went last */
};

struct kid {
	pid_t pid;
	enum call what;
	double kill_at;		/* 0: not to be killed */
	double deadline;
	bool killed;
};

enum backing {
	B_MEMFD, B_TMP, B_DISK, B_HUGE, B_RDONLY, B_WRONLY, B_DIR, B_DEVZERO,
	NR_BACKINGS
};

static const char * const backing_names[NR_BACKINGS] = {
	"memfd", "/tmp file", "disk file", "hugetlbfs file",
	"read-only memfd", "write-only file", "directory", "/dev/zero",
};

static struct {
	int idx;		/* worker index */
	pid_t pid;
	uint64_t token;		/* this process, among all of the test */
	bool child;		/* a fork or owner child */
	uint64_t rnd;
	unsigned int seq;	/* for names */
	struct region regions[MAX_REGIONS];
	struct fdent fds[MAX_FDS];
	int nfds;
	struct window wins[MAX_WINS];
	int nwins;
	uint64_t win_va;
	struct kid kids[MAX_KIDS];
	int nkids;
	int back[NR_BACKINGS];
	unsigned long ops;
	int failures;
	int logged;
	uint64_t scratch[8];	/* what stray code may write */
} W;

/* --- randomness -------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void seed_rng(uint64_t seed)
{
	uint64_t x = seed;

	W.rnd = splitmix64(&x) | 1;
}

static uint64_t rnd(void)
{
	return rnd_next(&W.rnd);
}

static uint64_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static bool chance(unsigned int percent)
{
	return below(100) < percent;
}

#define PICK(arr)	((arr)[below(ARRAY_SIZE(arr))])

struct wval {
	uint64_t val;
	unsigned int weight;
};

static uint64_t pick_weighted(const struct wval *v, size_t n)
{
	unsigned int total = 0, x;
	size_t i;

	for (i = 0; i < n; i++)
		total += v[i].weight;
	x = below(total);
	for (i = 0; i < n - 1; i++) {
		if (x < v[i].weight)
			break;
		x -= v[i].weight;
	}
	return v[i].val;
}

#define PICK_W(arr)	pick_weighted(arr, ARRAY_SIZE(arr))

/* --- logging and accounting ----------------------------------------- */

static void say(const char *what, const char *fmt, va_list ap)
{
	char buf[640];
	int n;

	n = snprintf(buf, sizeof(buf), "# mshare_fuzz %s%d pid %d: %s: ",
		     W.child ? "child of worker " : "worker ", W.idx, W.pid,
		     what);
	vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
	n = strlen(buf);
	buf[n++] = '\n';
	if (write(STDERR_FILENO, buf, n) < 0) {
		/* nowhere else to say it */
	}
}

static void __attribute__((format(printf, 1, 2))) fail(const char *fmt, ...)
{
	va_list ap;

	__atomic_fetch_add(&G.sh->failures, 1, __ATOMIC_RELAXED);
	W.failures++;
	if (W.logged++ >= MAX_LOG ||
	    __atomic_fetch_add(&G.sh->logged, 1, __ATOMIC_RELAXED) >= MAX_LOG_ALL)
		return;
	va_start(ap, fmt);
	say("FAIL", fmt, ap);
	va_end(ap);
}

static void __attribute__((format(printf, 1, 2))) note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("note", fmt, ap);
	va_end(ap);
}

/*
 * What a call may return: the errno values (signals for probes) that are
 * no surprise, and, if success would be a bug, why.
 */
struct expect {
	uint64_t errs[ERR_WORDS];
	const char *must_fail;
};

static void allow(struct expect *e, ...)
{
	va_list ap;
	int err;

	va_start(ap, e);
	while ((err = va_arg(ap, int)))
		e->errs[err / 64] |= 1ULL << (err % 64);
	va_end(ap);
}

static void disallow(struct expect *e, int err)
{
	e->errs[err / 64] &= ~(1ULL << (err % 64));
}

static bool allowed(const struct expect *e, int err)
{
	return err > 0 && err < 64 * ERR_WORDS &&
	       (e->errs[err / 64] >> (err % 64) & 1);
}

/* The call cannot succeed if cond holds. */
static void refuse(struct expect *e, bool cond, const char *why)
{
	if (cond && why && !e->must_fail)
		e->must_fail = why;
}

/* Not a region descriptor: EBADF, whatever else is wrong. */
static void expect_not_region(struct expect *e)
{
	memset(e, 0, sizeof(*e));
	allow(e, EBADF, 0);
	refuse(e, true, "the descriptor is not a region");
}

static const char *err_str(enum call c, int err)
{
	if (is_probe(c))
		return sigabbrev_np(err) ?: "SIG?";
	return errname(err);
}

static void stat_add(uint64_t *counter)
{
	__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

/*
 * Count a call and check its result against e: ok tells whether it
 * succeeded, err is its errno (or the signal of a probe). The arguments
 * are only formatted for a failure. Returns ok.
 */
static bool __attribute__((format(printf, 5, 6)))
account(enum call c, bool ok, int err, const struct expect *e,
	const char *fmt, ...)
{
	struct call_stat *s = &G.sh->st[c];
	char args[400];
	va_list ap;

	stat_add(&s->calls);
	if (ok) {
		stat_add(&s->ok);
		if (!e->must_fail)
			return true;
	} else {
		if (err > 0 && err < 64 * ERR_WORDS)
			__atomic_fetch_or(&s->seen[err / 64], 1ULL << (err % 64),
					  __ATOMIC_RELAXED);
		if (allowed(e, err)) {
			stat_add(&s->expected);
			return false;
		}
	}
	stat_add(&s->unexpected);
	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	if (ok)
		fail("%s(%s) succeeded, but %s", call_names[c], args,
		     e->must_fail);
	else
		fail("%s(%s): unexpected %s", call_names[c], args,
		     err_str(c, err));
	return ok;
}

/* --- probes -------------------------------------------------------------- */

enum probe_kind { P_READ, P_WRITE, P_EXEC };

static sigjmp_buf probe_env;
static volatile sig_atomic_t probe_armed;

static void probe_handler(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	if (probe_armed) {
		probe_armed = 0;
		siglongjmp(probe_env, sig);
	}
	/* Not a probe: let the access fault again, fatally. */
	signal(sig, SIG_DFL);
}

static void probe_setup(void)
{
	struct sigaction sa = {
		.sa_sigaction = probe_handler,
		.sa_flags = SA_SIGINFO,
	};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
}

/*
 * The bytes of the code words: nop, xchg %eax,%ecx, xchg %eax,%edx, cmc,
 * clc, stc, cld and ret. None touches memory, none is a prefix.
 */
static const uint8_t code_bytes[8] = {
	0x90, 0x91, 0x92, 0xf5, 0xf8, 0xf9, 0xfc, 0xc3,
};

/* A word that, called, runs up to 7 harmless instructions and returns. */
static uint64_t code_word(uint64_t x)
{
	uint64_t w = 0xc3ULL << 56;
	int i;

	for (i = 0; i < 7; i++)
		w |= (uint64_t)code_bytes[x >> (3 * i) & 7] << (8 * i);
	return w;
}

static bool is_code_word(uint64_t w)
{
	int i;

	if (w >> 56 != 0xc3)
		return false;
	for (i = 0; i < 7; i++)
		if (!memchr(code_bytes, w >> (8 * i) & 0xff, sizeof(code_bytes)))
			return false;
	return true;
}

/*
 * Call the code word at p, below the red zone. %rax points at scratch
 * memory: if the word was zeroed under us, "00 00" (add %al,(%rax)) runs
 * harmlessly up to the next code word or fault.
 */
static void call_word(void *p)
{
	void *scratch = W.scratch;

	asm volatile("sub $128, %%rsp\n\t"
		     "call *%%rsi\n\t"
		     "add $128, %%rsp"
		     : "+a" (scratch), "+S" (p)
		     :
		     : "rcx", "rdx", "cc", "memory");
}

/* Access p once; 0, or the signal (SIGSEGV, SIGBUS) it raised. */
static int probe(enum probe_kind kind, void *p, uint64_t *val)
{
	volatile uint64_t *q = p;
	int sig;

	sig = sigsetjmp(probe_env, 1);
	if (sig)
		return sig;
	probe_armed = 1;
	if (kind == P_READ)
		*val = *q;
	else if (kind == P_WRITE)
		*q = *val;
	else
		call_word(p);
	probe_armed = 0;
	return 0;
}

/* Whether the CPU refuses to run code from a page without PROT_EXEC. */
static bool nx_works(void)
{
	uint64_t v = 0;
	void *p;
	int sig;

	p = mmap(NULL, G.page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return false;
	memset(p, 0xc3, G.page);
	mprotect(p, G.page, PROT_READ);
	sig = probe(P_EXEC, p, &v);
	munmap(p, G.page);
	return sig == SIGSEGV;
}

/* --- regions, descriptors, windows -------------------------------------- */

enum rstate { MINE_LIVE, MINE_DEAD, NOT_MINE };

/*
 * Whether a region lives, as far as this process knows: an unnamed one
 * lives while this process holds its owner file, and is known dead once
 * it let go of an owner file that never left it; a named one lives until
 * its creator exits, so its creator knows. NOT_MINE: it may or may not.
 */
static enum rstate rstate(const struct region *r)
{
	if (r->named)
		return r->token == W.token ? MINE_LIVE : NOT_MINE;
	if (r->dead)
		return MINE_DEAD;
	return r->owner_fds ? MINE_LIVE : NOT_MINE;
}

/* Whether a change of the region through f must work (arguments aside). */
static bool fd_owns(const struct fdent *f)
{
	return f->r->named ? rstate(f->r) == MINE_LIVE : f->owns;
}

static bool writable(const struct fdent *f)
{
	return f->mode != O_RDONLY;
}

static bool readable(const struct fdent *f)
{
	return f->mode != O_WRONLY;
}

static const char *mode_str(int mode)
{
	return mode == O_RDONLY ? "ro" : mode == O_WRONLY ? "wo" : "rw";
}

static struct region *region_find(uint64_t id)
{
	int i;

	for (i = 0; i < MAX_REGIONS; i++)
		if (W.regions[i].used && W.regions[i].id == id)
			return &W.regions[i];
	return NULL;
}

static int regions_used(void)
{
	int i, n = 0;

	for (i = 0; i < MAX_REGIONS; i++)
		n += W.regions[i].used;
	return n;
}

static int owned_live(void)
{
	int i, n = 0;

	for (i = 0; i < MAX_REGIONS; i++)
		n += W.regions[i].used && rstate(&W.regions[i]) == MINE_LIVE;
	return n;
}

static struct region *region_new(uint64_t id, pid_t owner, uint64_t token,
				 bool named, const char *name)
{
	struct region *r;
	int i;

	for (i = 0; i < MAX_REGIONS; i++) {
		r = &W.regions[i];
		if (r->used)
			continue;
		memset(r, 0, sizeof(*r));
		r->used = true;
		r->id = id;
		r->owner = owner;
		r->token = token;
		r->named = named;
		if (name)
			snprintf(r->name, sizeof(r->name), "%s", name);
		return r;
	}
	return NULL;
}

/* Forget a region nothing of this process refers to any more. */
static void region_put(struct region *r)
{
	if (r->nfds || r->nwins)
		return;
	/* The owner of a named region tidies up its name. */
	if (r->named && r->token == W.token)
		unlink(mshare_path(G.ctx, r->name));
	memset(r, 0, sizeof(*r));
}

static uint64_t new_region_id(void)
{
	return __atomic_add_fetch(&G.sh->next_id, 1, __ATOMIC_RELAXED);
}

/* This process is a new one: who it is, and its random numbers. */
static void become(uint64_t seed)
{
	W.pid = getpid();
	W.token = __atomic_add_fetch(&G.sh->next_token, 1, __ATOMIC_RELAXED);
	seed_rng(seed);
}

static uint64_t fd_size(const struct fdent *f)
{
	struct stat st;

	if (!f || fstat(f->fd, &st))
		return 0;
	f->r->size_seen = st.st_size;
	return st.st_size;
}

/*
 * Track a new region descriptor, the owner file of r if owns; NULL (and
 * the fd closed) if no room.
 */
static struct fdent *fd_add(int fd, struct region *r, bool owns)
{
	struct fdent *f;
	int fl;

	if (W.nfds == MAX_FDS || !r) {
		close(fd);
		if (r)
			region_put(r);
		return NULL;
	}
	fl = fcntl(fd, F_GETFL);
	f = &W.fds[W.nfds++];
	f->fd = fd;
	f->mode = fl < 0 ? O_RDWR : fl & O_ACCMODE;
	f->owns = owns;
	f->r = r;
	snprintf(f->tag, sizeof(f->tag), "%sregion %lu of %d, %s%s",
		 r->named ? "named " : "", (unsigned long)r->id, r->owner,
		 mode_str(f->mode), owns ? ", owner file" : "");
	r->nfds++;
	r->owner_fds += owns;
	return f;
}

static void fd_forget(struct fdent *f)
{
	f->r->owner_fds -= f->owns;
	*f = W.fds[--W.nfds];
}

static struct window *win_add(char *addr, uint64_t len, struct region *r,
			      uint64_t roff, int prot)
{
	struct window *w;

	if (W.nwins == MAX_WINS) {
		munmap(addr, len);
		return NULL;
	}
	w = &W.wins[W.nwins++];
	memset(w, 0, sizeof(*w));
	w->addr = addr;
	w->len = len;
	w->roff = roff;
	w->prot = prot;
	w->r = r;
	r->nwins++;
	W.win_va += len;
	return w;
}

static void win_forget(struct window *w)
{
	struct region *r = w->r;

	W.win_va -= w->len;
	*w = W.wins[--W.nwins];
	r->nwins--;
	region_put(r);
}

/* munmap() a whole window: that always works. */
static void win_unmap(struct window *w)
{
	struct expect e = {};
	int ret;

	allow(&e, EINTR, 0);
	ret = munmap(w->addr, w->len);
	account(C_MUNMAP, ret == 0, errno, &e, "whole window %p+%#lx",
		w->addr, w->len);
	win_forget(w);
}

/* Make room for another window. */
static void win_room(void)
{
	if (W.nwins == MAX_WINS)
		win_unmap(&W.wins[below(W.nwins)]);
}

/* --- interesting values -------------------------------------------------- */

/*
 * Region offsets where objects go and touches land: 2 MiB zones at the
 * start of a region of rsize bytes (0: taken as A), on both sides of the
 * first boundary of A and at its end. Touches only in zones keep the
 * memory of even the largest objects bounded.
 */
static uint64_t zone(uint64_t rsize)
{
	const uint64_t A = G.align, size = rsize ? rsize : A;
	const uint64_t z[] = {
		0, ZONE, 2 * ZONE, 3 * ZONE, A - ZONE,
		size > A ? A : 4 * ZONE, size > A ? A + ZONE : 5 * ZONE,
		size - ZONE,
	};

	return PICK(z);
}

/* Offsets that are wrong, or right at some edge. */
static uint64_t odd_offset(uint64_t rsize)
{
	const uint64_t A = G.align, P = G.page, size = rsize ? rsize : A;
	const uint64_t v[] = {
		A - P, A, A + P, size - P, size, size + P, P / 2, 1, ZONE + 8,
		-P, -A, LONG_MAX & ~(P - 1), LONG_MAX, 1UL << 63, ~0UL, 3 * A,
	};

	return PICK(v);
}

static uint64_t pick_obj_off(uint64_t rsize, bool huge)
{
	uint64_t z = zone(rsize);
	unsigned int c = below(100);

	if (c < 55 && !huge)
		return z + below(ZONE / G.page) * G.page;
	if (c < 85)
		return z;
	return odd_offset(rsize);
}

static uint64_t pick_obj_size(bool huge)
{
	const uint64_t P = G.page, A = G.align;
	const uint64_t small[] = {
		P, 2 * P, 16 * P, 64 * P, ZONE - P, ZONE, ZONE + P, 2 * ZONE,
	};
	const uint64_t hsizes[] = { ZONE, 2 * ZONE };
	const uint64_t odd[] = {
		0, 1, P - 1, P + 1, A, A - P, ~0UL, -P, 1UL << 40, 3 * ZONE + 8,
	};

	if (chance(88))
		return huge ? PICK(hsizes) : PICK(small);
	return PICK(odd);
}

/* A range for unmap, protect, advise. */
static void pick_range(uint64_t rsize, uint64_t *off, uint64_t *len)
{
	const uint64_t P = G.page, A = G.align, size = rsize ? rsize : A;
	const uint64_t lens[] = { P, 4 * P, 16 * P, ZONE, 2 * ZONE, 4 * SZ_1M };
	const uint64_t odd[] = { 0, 1, P - 1, P + 1, A, size, ~0UL, -P,
				 1UL << 40 };
	unsigned int c = below(100);

	if (c < 70)
		*off = zone(rsize) + below(ZONE / P) * P;
	else if (c < 82)
		*off = zone(rsize);
	else
		*off = odd_offset(rsize);
	if (chance(80))
		*len = PICK(lens);
	else if (chance(30))
		*len = size - *off;	/* to the end */
	else
		*len = PICK(odd);
}

/* Why [off, off + len) is no range of a region of rsize bytes, or NULL. */
static const char *range_invalid(uint64_t off, uint64_t len, uint64_t rsize)
{
	if (!rsize)
		return "the region has no size";
	if (!len)
		return "the range is empty";
	if ((off | len) & (G.page - 1))
		return "the range is not page aligned";
	if ((int64_t)off < 0 || off >= rsize || len > rsize - off)
		return "the range is not inside the region";
	return NULL;
}

static const struct wval obj_prots[] = {
	{ PROT_READ | PROT_WRITE, 55 }, { PROT_READ, 12 },
	{ PROT_READ | PROT_WRITE | PROT_EXEC, 10 },
	{ PROT_READ | PROT_EXEC, 8 }, { PROT_NONE, 5 }, { PROT_WRITE, 3 },
	{ PROT_EXEC, 2 }, { PROT_SEM, 2 }, { 0x10, 1 },
	{ PROT_GROWSDOWN | PROT_READ, 1 }, { ~0U, 1 },
};

static const struct wval win_prots[] = {
	{ PROT_READ | PROT_WRITE, 45 }, { PROT_READ, 25 },
	{ PROT_READ | PROT_EXEC, 8 }, { PROT_READ | PROT_WRITE | PROT_EXEC, 7 },
	{ PROT_NONE, 7 }, { PROT_WRITE, 4 }, { PROT_EXEC, 2 },
	{ PROT_READ | PROT_SEM, 2 },
};

/* What mshare_advise() accepts, */
static const int region_advice[] = {
	MADV_NORMAL, MADV_RANDOM, MADV_SEQUENTIAL, MADV_WILLNEED,
	MADV_DONTNEED, MADV_REMOVE, MADV_HUGEPAGE, MADV_NOHUGEPAGE, MADV_COLD,
	MADV_PAGEOUT, MADV_POPULATE_READ, MADV_POPULATE_WRITE,
};

/* and what it must refuse. */
static const int region_bad_advice[] = {
	MADV_FREE, MADV_DONTFORK, MADV_DOFORK, MADV_MERGEABLE,
	MADV_UNMERGEABLE, MADV_DONTDUMP, MADV_DODUMP, MADV_WIPEONFORK,
	MADV_KEEPONFORK, MADV_COLLAPSE, MADV_DONTNEED_LOCKED,
	MADV_SOFT_OFFLINE, 5, -1, 12345, INT_MIN,
};

/* What madvise() of a window accepts, */
static const int window_advice[] = {
	MADV_NORMAL, MADV_RANDOM, MADV_SEQUENTIAL, MADV_DONTFORK, MADV_DOFORK,
	MADV_DONTDUMP, MADV_POPULATE_READ, MADV_POPULATE_WRITE,
};

/* and refuses (never those that poison memory). */
static const int window_bad_advice[] = {
	MADV_DONTNEED, MADV_FREE, MADV_REMOVE, MADV_WILLNEED, MADV_COLD,
	MADV_PAGEOUT, MADV_HUGEPAGE, MADV_NOHUGEPAGE, MADV_MERGEABLE,
	MADV_UNMERGEABLE, MADV_WIPEONFORK, MADV_KEEPONFORK, MADV_COLLAPSE,
	MADV_DONTNEED_LOCKED, MADV_DODUMP, 5, -1, 12345,
};

static bool populates(int advice)
{
	return advice == MADV_POPULATE_READ || advice == MADV_POPULATE_WRITE ||
	       advice == MADV_WILLNEED;
}

/* A descriptor that is not open. */
static int bad_fd(void)
{
	int n;

	switch (below(3)) {
	case 0:
		return -1;
	case 1:
		return 1 << 20;
	default:
		n = fcntl(G.inbox[0][1], F_DUPFD_CLOEXEC, 100);
		if (n >= 0)
			close(n);
		return n;
	}
}

/* An open descriptor of something else than a region. */
static int foreign_fd(void)
{
	int i = below(NR_BACKINGS);

	if (W.back[i] >= 0)
		return W.back[i];
	return chance(50) ? G.inbox[0][1] : STDIN_FILENO;
}

/*
 * A descriptor to call on: one of the process's region descriptors, most
 * of the time one of its own live regions if own, or now and then none
 * (NULL): a bad number or, with foreign, some other open file.
 */
static struct fdent *pick_fd(bool own, bool foreign, int *fd)
{
	struct fdent *f;
	int tries;

	if (!W.nfds || chance(4)) {
		*fd = foreign && chance(50) ? foreign_fd() : bad_fd();
		return NULL;
	}
	f = &W.fds[below(W.nfds)];
	for (tries = 0; own && chance(80) && tries < 6; tries++) {
		if (fd_owns(f) && writable(f))
			break;
		f = &W.fds[below(W.nfds)];
	}
	*fd = f->fd;
	return f;
}

static struct fdent *random_fd(void)
{
	return W.nfds ? &W.fds[below(W.nfds)] : NULL;
}

static struct window *random_win(void)
{
	return W.nwins ? &W.wins[below(W.nwins)] : NULL;
}

/* --- letting go ---------------------------------------------------------- */

static void region_destroyed(struct region *r);

/*
 * close() a tracked descriptor; closing the last descriptor of an owner
 * file that never left this process destroys the region.
 */
static void fd_close(struct fdent *f)
{
	struct region *r = f->r;
	struct expect e = {};
	int fd = f->fd, ret, err;
	bool owns = f->owns;

	fd_forget(f);
	ret = close(fd);
	err = errno;
	allow(&e, EINTR, 0);
	account(C_CLOSE, ret == 0, err, &e, "fd %d", fd);
	r->nfds--;
	if (owns && !r->owner_fds && !r->owner_out)
		region_destroyed(r);
	region_put(r);
}

/* Close every descriptor and unmap every window of a region. */
static void drop_region(struct region *r)
{
	bool windows_first = chance(50);
	int i;

	for (i = W.nwins - 1; windows_first && i >= 0; i--)
		if (W.wins[i].r == r)
			win_unmap(&W.wins[i]);
	for (i = W.nfds - 1; i >= 0; i--)
		if (W.fds[i].r == r)
			fd_close(&W.fds[i]);
	for (i = W.nwins - 1; i >= 0; i--)
		if (W.wins[i].r == r)
			win_unmap(&W.wins[i]);
}

static struct region *random_region(bool owned)
{
	int i, start = below(MAX_REGIONS);
	struct region *r;

	for (i = 0; i < MAX_REGIONS; i++) {
		r = &W.regions[(start + i) % MAX_REGIONS];
		if (r->used && (!owned || rstate(r) == MINE_LIVE))
			return r;
	}
	return NULL;
}

/* Make room for another descriptor and region. */
static void make_room(void)
{
	struct region *r;

	while (W.nfds > MAX_FDS - 4 || regions_used() > MAX_REGIONS - 4 ||
	       owned_live() >= MAX_OWNED) {
		r = random_region(owned_live() >= MAX_OWNED);
		if (!r)
			break;
		drop_region(r);
	}
}

static void drop_everything(void)
{
	while (W.nwins)
		win_unmap(&W.wins[W.nwins - 1]);
	while (W.nfds)
		fd_close(&W.fds[W.nfds - 1]);
}

/* --- touching windows ---------------------------------------------------- */

/* An address in a window to touch: mostly in a zone, else anywhere. */
static char *touch_addr(const struct window *w)
{
	uint64_t rsize = w->r->size_seen, t;

	if (w->last_write && chance(30))
		return w->last_write;
	if (chance(85)) {
		t = zone(rsize) + below(ZONE / 8) * 8;
		if (t >= w->roff && t - w->roff < w->len)
			return w->addr + (t - w->roff);
		t = zone(w->len) + below(ZONE / 8) * 8;
	} else {
		t = chance(50) ? w->len - 8 : below(w->len / 8) * 8;
	}
	/* never outside the window, whatever its size */
	return w->addr + (t < w->len ? t : below(w->len / 8) * 8);
}

/*
 * One access to p in window w. The window's own protection is the limit
 * whatever the region holds, and a destroyed region faults everywhere.
 */
static void touch(struct window *w, enum probe_kind kind, char *p)
{
	static const enum call calls[] = { C_READ, C_WRITE, C_EXEC };
	struct expect e = {};
	bool dead = rstate(w->r) == MINE_DEAD;
	uint64_t v = 0;
	int sig;

	allow(&e, SIGSEGV, SIGBUS, 0);
	if (dead) {
		disallow(&e, SIGBUS);
		refuse(&e, true, "the region was destroyed");
	}
	switch (kind) {
	case P_READ:
		refuse(&e, !(w->prot & (PROT_READ | PROT_WRITE | PROT_EXEC)),
		       "the window is PROT_NONE");
		break;
	case P_WRITE:
		v = code_word(rnd());
		refuse(&e, !(w->prot & PROT_WRITE), "the window is read-only");
		break;
	case P_EXEC:
		/* Only ever call a code word. */
		if (probe(P_READ, p, &v) || !is_code_word(v)) {
			stat_add(&G.sh->exec_skipped);
			return;
		}
		refuse(&e, G.nx && !(w->prot & PROT_EXEC),
		       "the window is not executable");
		break;
	}
	sig = probe(kind, p, &v);
	account(calls[kind], !sig, sig, &e,
		"%p, window %p+%#lx prot %#x onto +%#lx of region %lu of %d",
		p, w->addr, w->len, w->prot, w->roff, (unsigned long)w->r->id,
		w->r->owner);
	if (kind == P_WRITE && !sig)
		w->last_write = p;
}

/* The last owner file went: the region and its memory go. */
static void region_destroyed(struct region *r)
{
	int i;

	r->dead = true;
	for (i = 0; i < W.nwins; i++)
		if (W.wins[i].r == r)
			touch(&W.wins[i], P_READ, touch_addr(&W.wins[i]));
}

/* --- backing objects ----------------------------------------------------- */

static int reopen_fd(int fd, int flags)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return open(path, flags | O_CLOEXEC);
}

static int hugetlb_file(void)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/mshare_fuzz.%d", HUGETLB_DIR,
		 getpid());
	fd = open(path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	unlink(path);
	if (ftruncate(fd, 2 * HPAGE_SIZE)) {
		close(fd);
		return -1;
	}
	return fd;
}

static void backings_open(void)
{
	W.back[B_MEMFD] = memfd_sized(BACKING_SIZE);
	W.back[B_TMP] = file_sized("/tmp", BACKING_SIZE);
	W.back[B_DISK] = G.disk_dir[0] ? file_sized(G.disk_dir, BACKING_SIZE)
				       : -1;
	W.back[B_HUGE] = G.hugetlb ? hugetlb_file() : -1;
	W.back[B_RDONLY] = W.back[B_MEMFD] < 0 ? -1 :
			   reopen_fd(W.back[B_MEMFD], O_RDONLY);
	W.back[B_WRONLY] = W.back[B_TMP] < 0 ? -1 :
			   reopen_fd(W.back[B_TMP], O_WRONLY);
	W.back[B_DIR] = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	W.back[B_DEVZERO] = open("/dev/zero", O_RDWR | O_CLOEXEC);
}

static void backings_close(void)
{
	int i;

	for (i = 0; i < NR_BACKINGS; i++)
		if (W.back[i] >= 0)
			close(W.back[i]);
}

/* --- objects for mshare_map() and CREATE_MAPPING ------------------------ */

struct object {
	uint64_t roff, size, boff;
	unsigned int prot, flags;
	int bfd;
	const char *kind;
	bool file;		/* the caller's file: noexec mounts say EPERM */
	bool huge;		/* hugetlb: 2 MiB alignment */
	const char *bad;	/* why it cannot be mapped, or NULL */
};

#define MSHARE_MAP_FLAGS	(MAP_TYPE | MAP_FIXED | MAP_FIXED_NOREPLACE | \
				 MAP_ANONYMOUS | MAP_POPULATE | \
				 MAP_NORESERVE | MAP_HUGETLB | \
				 (MAP_HUGE_MASK << MAP_HUGE_SHIFT))

static unsigned int pick_obj_flags(void)
{
	static const unsigned int odd[] = {
		MAP_PRIVATE, MAP_SHARED_VALIDATE, MAP_LOCKED, MAP_GROWSDOWN,
		MAP_HUGE_1GB, MAP_HUGETLB, MAP_SYNC, MAP_STACK, MAP_32BIT,
		MAP_NONBLOCK, MAP_DENYWRITE,
	};
	unsigned int f = 0;

	if (chance(50))
		f |= MAP_SHARED;
	if (chance(40))
		f |= MAP_FIXED;
	if (chance(8))
		f |= MAP_FIXED_NOREPLACE;
	if (chance(15))
		f |= MAP_POPULATE;
	if (chance(10))
		f |= MAP_NORESERVE;
	if (chance(4))
		f |= PICK(odd);
	return f;
}

/* What to map: the backing, its flags and descriptor. */
static void pick_backing(struct object *o, int region_fd)
{
	static const struct wval kinds[] = {
		{ NR_BACKINGS, 45 },		/* anonymous */
		{ B_MEMFD, 15 }, { B_TMP, 7 }, { B_DISK, 6 }, { B_HUGE, 6 },
		{ B_RDONLY, 5 }, { B_WRONLY, 2 }, { NR_BACKINGS + 1, 3 },
		{ B_DIR, 2 }, { B_DEVZERO, 2 }, { NR_BACKINGS + 2, 2 },
		{ NR_BACKINGS + 3, 3 },
	};
	uint64_t k = PICK_W(kinds);

	o->bfd = -1;
	if (k < NR_BACKINGS && W.back[k] < 0)
		k = W.back[B_MEMFD] >= 0 ? B_MEMFD : NR_BACKINGS;
	if (k < NR_BACKINGS) {
		o->bfd = W.back[k];
		o->kind = backing_names[k];
		o->file = k <= B_WRONLY;
		o->huge = k == B_HUGE;
		if (k == B_DIR || k == B_DEVZERO)
			o->bad = "the backing is not a regular file";
		else if (k == B_WRONLY)
			o->bad = "the backing is not open for reading";
		return;
	}
	switch (k - NR_BACKINGS) {
	case 0:
		o->kind = "anonymous";
		o->flags |= MAP_ANONYMOUS;
		if (chance(8)) {
			o->flags |= MAP_HUGETLB | (chance(70) ? MAP_HUGE_2MB : 0);
			o->kind = "anonymous hugetlb";
			o->huge = true;
		}
		if (chance(3)) {
			o->bfd = W.back[B_MEMFD];
			o->bad = "anonymous with a backing descriptor";
		}
		return;
	case 1:
		o->bfd = region_fd;
		o->kind = "the region";
		o->bad = "a region cannot back a region";
		return;
	case 2:
		o->bfd = G.inbox[0][1];
		o->kind = "a socket";
		o->bad = "the backing is not a regular file";
		return;
	default:
		o->bfd = bad_fd();
		o->kind = "a bad descriptor";
		o->bad = "the backing descriptor is bad";
		return;
	}
}

/*
 * Why o cannot be mapped into a region of rsize bytes (NULL if it may
 * be), for mshare_map() or, with ioctl, for CREATE_MAPPING.
 */
static const char *object_invalid(const struct object *o, uint64_t rsize,
				  bool ioctl)
{
	const unsigned int type = o->flags & MAP_TYPE;
	const uint64_t P = G.page;

	if (o->flags & ~MSHARE_MAP_FLAGS)
		return "unknown map flags";
	if (ioctl && type != MAP_SHARED)
		return "CREATE_MAPPING needs MAP_SHARED";
	if (ioctl && !(o->flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)))
		return "CREATE_MAPPING needs MAP_FIXED";
	if (type && type != MAP_SHARED)
		return "only MAP_SHARED mappings";
	if (o->prot & ~(PROT_READ | PROT_WRITE | PROT_EXEC))
		return "bad prot";
	if (!o->size || (o->roff | o->size | o->boff) & (P - 1))
		return "offsets and size must be page aligned";
	if (!rsize)
		return "the region has no size";
	if (o->roff >= rsize || o->size > rsize - o->roff)
		return "the object does not fit in the region";
	if (o->flags & MAP_ANONYMOUS) {
		if (o->boff)
			return "an anonymous object has no offset";
		if (!(o->flags & MAP_HUGETLB) &&
		    (o->flags & (MAP_HUGE_MASK << MAP_HUGE_SHIFT)))
			return "a huge page size without MAP_HUGETLB";
	} else if (o->flags & (MAP_HUGETLB | (MAP_HUGE_MASK << MAP_HUGE_SHIFT))) {
		return "MAP_HUGETLB with a file";
	}
	if (o->bad)
		return o->bad;
	if (o->huge && ((o->roff | o->size |
			 ((o->flags & MAP_ANONYMOUS) ? 0 : o->boff)) &
			(HPAGE_SIZE - 1)))
		return "hugetlb objects are aligned to 2 MiB";
	if (o->bfd == W.back[B_RDONLY] && !(o->flags & MAP_ANONYMOUS) &&
	    (o->prot & PROT_WRITE))
		return "PROT_WRITE of a read-only file";
	return NULL;
}

static void gen_object(struct object *o, uint64_t rsize, int region_fd)
{
	const uint64_t P = G.page;
	const uint64_t boffs[] = {
		P, ZONE, BACKING_SIZE - P, BACKING_SIZE, BACKING_SIZE + P,
		P / 2, 1UL << 62, -P,
	};

	memset(o, 0, sizeof(*o));
	o->prot = PICK_W(obj_prots);
	o->flags = pick_obj_flags();
	pick_backing(o, region_fd);
	o->roff = pick_obj_off(rsize, o->huge);
	o->size = pick_obj_size(o->huge);
	if (!(o->flags & MAP_ANONYMOUS) && chance(30))
		o->boff = o->huge ? ZONE : PICK(boffs);
	else if (chance(2))
		o->boff = PICK(boffs);
	/* Memory stays bounded: nothing big is reserved or populated. */
	if (o->size > NORESERVE_MAX)
		o->flags &= ~MAP_NORESERVE;
	if (o->size > POPULATE_MAX)
		o->flags &= ~MAP_POPULATE;
}

/* A small valid object: anonymous or memfd, read-write. */
static void valid_object(struct object *o, uint64_t rsize)
{
	const uint64_t sizes[] = { G.page, 16 * G.page, ZONE };

	memset(o, 0, sizeof(*o));
	o->prot = PROT_READ | PROT_WRITE | (chance(20) ? PROT_EXEC : 0);
	o->flags = MAP_SHARED | (chance(30) ? MAP_POPULATE : 0);
	o->roff = zone(rsize);
	o->size = PICK(sizes);
	if (chance(60) || W.back[B_MEMFD] < 0) {
		o->flags |= MAP_ANONYMOUS;
		o->bfd = -1;
		o->kind = "anonymous";
	} else {
		o->bfd = W.back[B_MEMFD];
		o->kind = "memfd";
		o->file = true;
	}
}

/* --- fdinfo -------------------------------------------------------------- */

enum {
	FI_SIZE, FI_OWNED, FI_OWNER_FD, FI_ATTACHED, FI_WINDOWS, FI_RSS,
	FI_PGTABLES, FI_ALIGN, NR_FI
};

/* The mshare lines of a region's fdinfo; mshare-align is newer. */
static const char * const fdinfo_keys[NR_FI] = {
	"mshare-size:", "mshare-owned:", "mshare-owner-fd:",
	"mshare-attached:", "mshare-windows:", "mshare-rss:",
	"mshare-pgtables:", "mshare-align:",
};

struct fdinfo {
	long v[NR_FI];		/* v[FI_ALIGN] is -1 without the line */
};

/* Read the mshare lines of fd's fdinfo: 0, -1 (errno), or -2 (format). */
static int fdinfo_read(int fd, struct fdinfo *fi, const char **bad)
{
	char path[64], *text, *p;
	size_t klen;
	int i, ret = 0;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	text = read_text(path, NULL);
	if (!text)
		return -1;
	/* the owner's pid is shown no more */
	p = strstr(text, "mshare-owner:");
	if (p && (p == text || p[-1] == '\n')) {
		*bad = "mshare-owner: (gone since ownership is a file's)";
		free(text);
		return -2;
	}
	for (i = 0; i < NR_FI; i++) {
		klen = strlen(fdinfo_keys[i]);
		p = strstr(text, fdinfo_keys[i]);
		if (!p && i == FI_ALIGN) {
			fi->v[i] = -1;
			continue;
		}
		if (!p || (p != text && p[-1] != '\n') || p[klen] != '\t' ||
		    sscanf(p + klen, "\t%ld", &fi->v[i]) != 1 || fi->v[i] < 0 ||
		    ((i == FI_OWNED || i == FI_OWNER_FD) && fi->v[i] > 1)) {
			*bad = fdinfo_keys[i];
			ret = -2;
			break;
		}
	}
	free(text);
	return ret;
}

/*
 * A region descriptor tells the alignment A: in its fdinfo (mshare-align)
 * or, before that line existed, as st_blksize.
 */
static bool align_told(int fd, const struct stat *st)
{
	const char *bad = NULL;
	struct fdinfo fi;

	if (fdinfo_read(fd, &fi, &bad))
		return false;
	if (fi.v[FI_ALIGN] >= 0)
		return fi.v[FI_ALIGN] == (long)G.align;
	return st->st_blksize == (blksize_t)G.align;
}

/* --- expectations -------------------------------------------------------- */

/*
 * A call that changes a region (sizing, map, unmap, protect, advise):
 * only through a writable descriptor of the owner file (of a named region:
 * by its creator), while the region lives. Once it is gone, every
 * descriptor left gets ENXIO.
 */
static void control_expect(struct expect *e, const struct fdent *f)
{
	allow(e, EINVAL, ENOMEM, EINTR, 0);
	if (!writable(f)) {
		allow(e, EBADF, 0);
		refuse(e, true, "the descriptor is read-only");
	}
	if (fd_owns(f))
		return;
	switch (rstate(f->r)) {
	case NOT_MINE:
		allow(e, EPERM, ENXIO, 0);
		refuse(e, true, f->r->named ? "the caller does not own the region" :
		       "the descriptor is not the owner file");
		break;
	case MINE_DEAD:
		allow(e, ENXIO, 0);
		refuse(e, true, "the region was destroyed");
		break;
	case MINE_LIVE:
		allow(e, EPERM, 0);
		refuse(e, true, "the descriptor is not the owner file");
		break;
	}
}

static void map_expect(struct expect *e, const struct fdent *f,
		       const struct object *o, uint64_t rsize, bool ioctl)
{
	control_expect(e, f);
	allow(e, EBADF, ENODEV, EACCES, EEXIST, EOVERFLOW, ENFILE, EFAULT, 0);
	/* A file on a noexec mount cannot be mapped PROT_EXEC. */
	if (o->file && (o->prot & PROT_EXEC))
		allow(e, EPERM, 0);
	refuse(e, true, object_invalid(o, rsize, ioctl));
}

/*
 * A window through f onto [off, off + size) of the region (size 0: to
 * its end), of protection prot, at addr if fixed. occupied: something of
 * this process is known to be in the way at addr.
 */
static void window_expect(struct expect *e, const struct fdent *f,
			  uint64_t rsize, int64_t off, uint64_t size,
			  int prot, unsigned long addr, bool fixed,
			  bool occupied)
{
	const uint64_t A = G.align;

	allow(e, EINVAL, ENOMEM, EEXIST, EINTR, EAGAIN, EACCES, 0);
	if (addr < 0x10000 || (prot & PROT_EXEC))
		allow(e, EPERM, 0);	/* below mmap_min_addr, noexec */
	if (!readable(f))
		refuse(e, true, "the descriptor is write-only");
	refuse(e, !writable(f) && (prot & PROT_WRITE),
	       "a writable window through a read-only descriptor");
	switch (rstate(f->r)) {
	case NOT_MINE:
		allow(e, ENXIO, 0);
		break;
	case MINE_DEAD:
		allow(e, ENXIO, 0);
		refuse(e, true, "the region was destroyed");
		break;
	case MINE_LIVE:
		refuse(e, !rsize, "the region has no size");
		break;
	}
	refuse(e, off < 0 || off % A, "the offset is not a multiple of A");
	refuse(e, rsize && (uint64_t)off >= rsize,
	       "the offset is beyond the region");
	refuse(e, size % A, "the size is not a multiple of A");
	refuse(e, rsize && size && (uint64_t)off < rsize &&
	       size > rsize - off, "the window does not fit in the region");
	refuse(e, fixed && !addr, "a fixed window at address 0");
	refuse(e, fixed && addr % A, "a fixed address not aligned to A");
	refuse(e, fixed && occupied, "the fixed address is occupied");
}

/*
 * Once a region has its size (it never changes again), nothing but the
 * arguments makes a window EINVAL: call after every refuse().
 */
static void window_expect_sized(struct expect *e, uint64_t rsize)
{
	if (rsize && !e->must_fail)
		disallow(e, EINVAL);
}

/*
 * Call after a call on the region of f whose expectation was built on
 * rsize, its size as seen before. Another holder of the owner file (a
 * forked child, a receiver, the sender) may size an unsized region at
 * any moment: if it went from unsized to sized meanwhile, the
 * expectation says nothing, anything goes. errno is kept.
 */
static void size_raced(struct expect *e, struct fdent *f, uint64_t rsize)
{
	int err = errno;

	if (f && !rsize && fd_size(f)) {
		e->must_fail = NULL;
		memset(e->errs, 0xff, sizeof(e->errs));
	}
	errno = err;
}

/* --- calls on regions ---------------------------------------------------- */

static struct fdent *do_create(unsigned int flags)
{
	struct expect e = {};
	struct region *r;
	struct fdent *f;
	struct stat st;
	long fd;
	int fdfl;

	make_room();
	allow(&e, EMFILE, ENFILE, ENOMEM, 0);
	if (flags & ~O_CLOEXEC) {
		allow(&e, EINVAL, 0);
		refuse(&e, true, "invalid flags");
	}
	fd = sys_mshare_create(flags);
	if (!account(C_CREATE, fd >= 0, errno, &e, "%#x", flags))
		return NULL;
	r = region_new(new_region_id(), W.pid, W.token, false, NULL);
	f = fd_add(fd, r, true);
	if (!f)
		return NULL;
	fdfl = fcntl(fd, F_GETFD);
	if (fstat(fd, &st) || !align_told(fd, &st) || st.st_size ||
	    f->mode != O_RDWR || !(fdfl & FD_CLOEXEC) != !(flags & O_CLOEXEC))
		fail("mshare_create(%#x) = %ld: alignment not told (blksize %ld, A %#lx), size %ld, mode %s, FD_CLOEXEC %d",
		     flags, fd, (long)st.st_blksize, G.align, (long)st.st_size,
		     mode_str(f->mode), !!(fdfl & FD_CLOEXEC));
	return f;
}

static void op_create(void)
{
	static const struct wval flags[] = {
		{ O_CLOEXEC, 55 }, { 0, 30 }, { O_NONBLOCK, 3 }, { O_RDWR, 3 },
		{ O_CLOEXEC | O_RDONLY | 1, 2 }, { O_EXCL, 2 }, { 1U << 31, 2 },
		{ ~0U, 3 },
	};

	do_create(PICK_W(flags));
}

static void op_named_create(void)
{
	static const struct wval flags[] = {
		{ O_RDWR, 85 }, { O_RDONLY, 8 }, { O_WRONLY, 7 },
	};
	struct expect e = {};
	struct region *r;
	char name[40];
	int fd, fl;

	make_room();
	/* unique: tokens are never reused, pids are */
	snprintf(name, sizeof(name), "r%lu.%u", (unsigned long)W.token,
		 W.seq++);
	fl = PICK_W(flags) | O_CREAT | O_EXCL | O_CLOEXEC;
	allow(&e, EMFILE, ENFILE, ENOMEM, ENOSPC, 0);
	fd = open(mshare_path(G.ctx, name), fl, 0600);
	if (!account(C_NAMED, fd >= 0, errno, &e, "%s, %#x", name, fl))
		return;
	r = region_new(new_region_id(), W.pid, W.token, true, name);
	fd_add(fd, r, false);
}

enum size_how { SIZE_FTRUNCATE, SIZE_FALLOCATE };

/* Size the region of f (NULL: fd is no region) with ftruncate or fallocate. */
static void do_size(struct fdent *f, int fd, uint64_t size, int validity,
		    enum size_how how, int mode, int64_t offset)
{
	const enum call c = how == SIZE_FTRUNCATE ? C_FTRUNCATE : C_FALLOCATE;
	uint64_t before = fd_size(f);
	struct expect e = {};
	int ret;

	if (!f) {
		expect_not_region(&e);
		/* ftruncate() checks the length before the descriptor. */
		if (how == SIZE_FTRUNCATE && (int64_t)size < 0)
			allow(&e, EINVAL, 0);
	} else {
		control_expect(&e, f);
		allow(&e, EFBIG, 0);
		if (how == SIZE_FALLOCATE) {
			allow(&e, EOPNOTSUPP, 0);
			refuse(&e, mode, "a fallocate mode");
			refuse(&e, offset, "a fallocate offset");
		}
		refuse(&e, validity < 0, "the size is not a multiple of A");
		refuse(&e, before != 0, "the region was already sized");
		/*
		 * The documented way: the owner sizes its unsized live
		 * region, through a writable descriptor, to a size that
		 * is a multiple of A.
		 */
		if (fd_owns(f) && writable(f) && !before &&
		    validity > 0 && !mode && !offset) {
			memset(e.errs, 0, sizeof(e.errs));
			allow(&e, ENOMEM, 0);
		}
	}
	if (how == SIZE_FTRUNCATE)
		ret = ftruncate(fd, size);
	else
		ret = fallocate(fd, mode, offset, size);
	/* unless this call sized it: then the check below holds */
	if (ret)
		size_raced(&e, f, before);
	if (!account(c, ret == 0, errno, &e,
		     "fd %d [%s], size %#lx, mode %#x, offset %#lx", fd,
		     f ? f->tag : "not a region", size, mode, offset))
		return;
	if (f && fd_size(f) != size)
		fail("%s(fd %d, %#lx) succeeded, but the size is %#lx",
		     call_names[c], fd, size, f->r->size_seen);
}

/* validity: 1 a size mshare takes, -1 one it refuses, 0 either. */
static uint64_t pick_region_size(int *validity)
{
	const uint64_t A = G.align, P = G.page;
	const uint64_t valid[] = { A, A, A, A, 2 * A, 2 * A, 3 * A, 16 * A };
	const uint64_t either[] = { 254 * A, 255 * A, 256 * A, 1UL << 62 };
	const uint64_t invalid[] = {
		0, 1, P, A - 1, A + P, ZONE, A / 2, -1, -A, LONG_MAX,
	};
	unsigned int c = below(100);

	*validity = c < 70 ? 1 : c < 75 ? 0 : -1;
	if (c < 70)
		return PICK(valid);
	if (c < 75)
		return PICK(either);
	return PICK(invalid);
}

static void op_size(void)
{
	static const struct wval modes[] = {
		{ 0, 85 }, { FALLOC_FL_KEEP_SIZE, 4 },
		{ FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 4 },
		{ FALLOC_FL_ZERO_RANGE, 3 }, { FALLOC_FL_COLLAPSE_RANGE, 2 },
		{ 0x100, 2 },
	};
	const int64_t offsets[] = { (int64_t)G.page, -1, (int64_t)G.align };
	enum size_how how = chance(50) ? SIZE_FTRUNCATE : SIZE_FALLOCATE;
	int fd, validity, mode = 0;
	int64_t offset = 0;
	struct fdent *f;
	uint64_t size;

	f = pick_fd(true, false, &fd);
	size = pick_region_size(&validity);
	if (how == SIZE_FALLOCATE) {
		mode = PICK_W(modes);
		if (chance(8))
			offset = PICK(offsets);
	}
	do_size(f, fd, size, validity, how, mode, offset);
}

/* mshare_map() of o, with a struct size and contents chosen at random. */
static void do_map(struct fdent *f, int fd, const struct object *o,
		   bool odd_struct)
{
	static uint8_t buf[4096] __attribute__((aligned(8)));
	const size_t small[] = { 0, 8, MSHARE_MAP_ARGS_SIZE_VER0 - 1 };
	struct mshare_map_args a = {
		.region_offset = o->roff,
		.size = o->size,
		.backing_offset = o->boff,
		.prot = o->prot,
		.flags = o->flags,
		.backing_fd = o->bfd,
	};
	size_t usize = sizeof(a);
	const void *uargs = buf;
	struct expect e = {};
	uint64_t rsize = fd_size(f);
	int ret;

	if (f)
		map_expect(&e, f, o, rsize, false);
	allow(&e, E2BIG, 0);
	if (odd_struct && chance(3)) {
		a.__reserved = rnd() | 1;
		refuse(&e, true, "__reserved is not zero");
	}
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &a, sizeof(a));
	switch (odd_struct ? below(24) : 99) {
	case 0:
		usize = PICK(small);
		refuse(&e, true, "the struct is too small");
		break;
	case 1:
		usize = 48;
		break;
	case 2:
		usize = 48;
		buf[40 + below(8)] = 1 + below(255);
		refuse(&e, true, "the struct has a non-zero tail");
		break;
	case 3:
		usize = sizeof(buf);
		break;
	case 4:
		usize = sizeof(buf);
		buf[40 + below(sizeof(buf) - 40)] = 1 + below(255);
		refuse(&e, true, "the struct has a non-zero tail");
		break;
	case 5:
		uargs = NULL;
		refuse(&e, true, "the struct pointer is NULL");
		break;
	}
	if (!f)
		expect_not_region(&e);
	ret = sys_mshare_map(fd, uargs, usize);
	size_raced(&e, f, rsize);
	account(C_MAP, ret == 0, errno, &e,
		"fd %d [%s], roff %#lx size %#lx boff %#lx prot %#x flags %#x, backing %d (%s), struct %p+%zu",
		fd, f ? f->tag : "not a region", o->roff, o->size, o->boff,
		o->prot, o->flags, o->bfd, o->kind, uargs, usize);
}

static void op_map(void)
{
	struct object o;
	struct fdent *f;
	int fd;

	f = pick_fd(true, true, &fd);
	gen_object(&o, fd_size(f), fd);
	do_map(f, fd, &o, true);
}

/* The msharefs ioctls: on named regions mostly, on any region fd. */
static struct fdent *pick_ioctl_fd(int *fd)
{
	struct fdent *f = pick_fd(true, false, fd);
	int i;

	for (i = 0; f && !f->r->named && i < 4 && chance(70); i++)
		f = pick_fd(true, false, fd);
	if (!f)
		*fd = -1;	/* never an ioctl on some other file */
	return f;
}

static void op_ioctl_map(void)
{
	struct mshare_create mc;
	struct expect e = {};
	struct object o;
	struct fdent *f;
	uint64_t rsize;
	void *arg = &mc;
	int fd, ret;

	f = pick_ioctl_fd(&fd);
	rsize = fd_size(f);
	gen_object(&o, rsize, fd);
	if (chance(85))
		o.flags = (o.flags & ~MAP_TYPE) | MAP_SHARED | MAP_FIXED;
	mc = (struct mshare_create) {
		.region_offset = o.roff, .size = o.size, .offset = o.boff,
		.prot = o.prot, .flags = o.flags, .fd = o.bfd,
	};
	if (f)
		map_expect(&e, f, &o, rsize, true);
	if (chance(3)) {
		mc.reserved = 1 + below(1000);
		refuse(&e, true, "reserved is not zero");
	}
	if (chance(3)) {
		arg = chance(50) ? NULL : (void *)G.page;
		refuse(&e, true, "the argument pointer is bad");
	}
	if (!f)
		expect_not_region(&e);
	ret = ioctl(fd, MSHAREFS_CREATE_MAPPING, arg);
	size_raced(&e, f, rsize);
	account(C_IOCTL_MAP, ret == 0, errno, &e,
		"fd %d [%s], roff %#lx size %#lx offset %#lx prot %#x flags %#x, backing %d (%s), reserved %u, arg %p",
		fd, f ? f->tag : "not a region", o.roff, o.size, o.boff,
		o.prot, o.flags, o.bfd, o.kind, mc.reserved, arg);
}

static void op_unmap(void)
{
	struct expect e = {};
	uint64_t off, len, rsize;
	struct fdent *f;
	int fd, ret;

	f = pick_fd(true, true, &fd);
	rsize = fd_size(f);
	pick_range(rsize, &off, &len);
	if (f) {
		control_expect(&e, f);
		refuse(&e, true, range_invalid(off, len, rsize));
	} else {
		expect_not_region(&e);
	}
	ret = sys_mshare_unmap(fd, off, len);
	size_raced(&e, f, rsize);
	account(C_UNMAP, ret == 0, errno, &e, "fd %d [%s], %#lx, %#lx", fd,
		f ? f->tag : "not a region", off, len);
}

static void op_ioctl_unmap(void)
{
	unsigned long cmd = MSHAREFS_UNMAP;
	uint64_t rsize, off, len;
	struct mshare_unmap mu;
	struct expect e = {};
	struct fdent *f;
	void *arg = &mu;
	int fd, ret;

	f = pick_ioctl_fd(&fd);
	rsize = fd_size(f);
	pick_range(rsize, &off, &len);
	mu.region_offset = off;
	mu.size = len;
	if (f) {
		control_expect(&e, f);
		refuse(&e, true, range_invalid(off, len, rsize));
		allow(&e, EFAULT, ENOTTY, 0);
	}
	if (chance(3)) {
		arg = chance(50) ? NULL : (void *)G.page;
		refuse(&e, true, "the argument pointer is bad");
	}
	if (chance(3)) {
		cmd = _IOW('x', 2 + below(8), struct mshare_unmap);
		memset(e.errs, 0, sizeof(e.errs));
		allow(&e, ENOTTY, 0);
		e.must_fail = "no such ioctl";
	}
	if (!f)
		expect_not_region(&e);
	ret = ioctl(fd, cmd, arg);
	size_raced(&e, f, rsize);
	account(C_IOCTL_UNMAP, ret == 0, errno, &e,
		"fd %d [%s], cmd %#lx, %#lx, %#lx", fd,
		f ? f->tag : "not a region", cmd, off, len);
}

static void op_protect(void)
{
	static const struct wval prots[] = {
		{ PROT_READ, 25 }, { PROT_READ | PROT_WRITE, 30 },
		{ PROT_READ | PROT_WRITE | PROT_EXEC, 8 },
		{ PROT_READ | PROT_EXEC, 8 }, { PROT_NONE, 10 },
		{ PROT_WRITE, 4 }, { PROT_EXEC, 3 }, { PROT_SEM, 3 },
		{ 0x10, 2 }, { PROT_GROWSDOWN | PROT_READ, 3 }, { ~0U, 4 },
	};
	unsigned int prot = PICK_W(prots);
	struct expect e = {};
	uint64_t off, len, rsize;
	struct fdent *f;
	int fd, ret;

	f = pick_fd(true, true, &fd);
	rsize = fd_size(f);
	pick_range(rsize, &off, &len);
	if (f) {
		control_expect(&e, f);
		allow(&e, EACCES, 0);
		refuse(&e, true, range_invalid(off, len, rsize));
		refuse(&e, prot & ~(PROT_READ | PROT_WRITE | PROT_EXEC),
		       "bad prot");
	} else {
		expect_not_region(&e);
	}
	ret = sys_mshare_protect(fd, off, len, prot);
	size_raced(&e, f, rsize);
	account(C_PROTECT, ret == 0, errno, &e,
		"fd %d [%s], %#lx, %#lx, prot %#x", fd,
		f ? f->tag : "not a region", off, len, prot);
}

static void op_advise(void)
{
	bool good = chance(85);
	int advice = good ? PICK(region_advice) : PICK(region_bad_advice);
	struct expect e = {};
	uint64_t off, len, rsize;
	struct fdent *f;
	int fd, ret;

	f = pick_fd(true, true, &fd);
	rsize = fd_size(f);
	pick_range(rsize, &off, &len);
	if (populates(advice) && len > POPULATE_MAX)
		len = POPULATE_MAX;
	if (f) {
		control_expect(&e, f);
		allow(&e, EFAULT, EAGAIN, EACCES, EOPNOTSUPP, EIO, 0);
		/*
		 * MADV_REMOVE punches a hole in the backing file: past its
		 * filesystem's largest file (a disk file object at a huge
		 * backing offset), fallocate() says EFBIG, as for madvise().
		 */
		if (advice == MADV_REMOVE)
			allow(&e, EFBIG, 0);
		refuse(&e, true, range_invalid(off, len, rsize));
		refuse(&e, !good, "mshare_advise() does not take this advice");
	} else {
		expect_not_region(&e);
	}
	ret = sys_mshare_advise(fd, off, len, advice);
	size_raced(&e, f, rsize);
	account(C_ADVISE, ret == 0, errno, &e,
		"fd %d [%s], %#lx, %#lx, advice %d", fd,
		f ? f->tag : "not a region", off, len, advice);
}

/* --- windows ------------------------------------------------------------- */

static int64_t pick_win_off(uint64_t rsize)
{
	const uint64_t A = G.align, P = G.page, size = rsize ? rsize : A;
	const int64_t v[] = {
		0, 0, 0, 0, 0, 0, 0, 0, (int64_t)A, (int64_t)A,
		2 * (int64_t)A, (int64_t)(size - A), (int64_t)size,
		(int64_t)(size + A), (int64_t)(A / 2), (int64_t)P, -(int64_t)A,
		LONG_MAX & ~(int64_t)(A - 1), LONG_MAX & ~(int64_t)(P - 1),
	};

	return PICK(v);
}

static uint64_t pick_win_size(uint64_t rsize, int64_t off)
{
	const uint64_t A = G.align, P = G.page, size = rsize ? rsize : A;
	const uint64_t v[] = {
		0, 0, 0, A, A, A, 2 * A, size, size - off, A - 1, A + P, P,
		~0UL, -A, 3 * A,
	};

	return PICK(v);
}

/*
 * Where to put a window of len bytes: 0, a free address aligned to A,
 * unaligned ones, high ones, and ones where something is (occupied).
 */
static unsigned long pick_addr(uint64_t len, bool *occupied)
{
	const uint64_t A = G.align, P = G.page;
	unsigned long stack = (unsigned long)&len;
	unsigned int c = below(100);
	void *p;

	*occupied = false;
	if (c < 35)
		return 0;
	if (c < 60) {
		/* free now: reserve, then give back */
		p = reserve_aligned(len && len <= 4 * A ? len : A, A);
		if (!p)
			return 0;
		munmap(p, len && len <= 4 * A ? len : A);
		return (unsigned long)p;
	}
	if (c < 70 && W.nwins) {
		*occupied = true;
		return (unsigned long)random_win()->addr;
	}
	if (c < 75) {
		*occupied = true;	/* the window would cover the stack */
		return stack & ~(A - 1);
	}
	switch (below(10)) {
	case 0: return 1;
	case 1: return P;
	case 2: return A + P;
	case 3: return (1UL << 47) - A;
	case 4: return 1UL << 47;
	case 5: return (1UL << 56) - A;
	case 6: return 0xffff800000000000UL;
	case 7: return ~0UL & ~(A - 1);
	case 8: return 0x10000;
	default: return below(1UL << 47) & ~(P - 1);
	}
}

/* The length of the mapping that starts at addr, from /proc/self/maps. */
static uint64_t vma_len_at(unsigned long addr)
{
	char *maps = read_text("/proc/self/maps", NULL), *line;
	unsigned long start, end;
	uint64_t len = 0;

	for (line = maps; line && *line; line = strchr(line, '\n')) {
		if (*line == '\n')
			line++;
		if (sscanf(line, "%lx-%lx", &start, &end) == 2 &&
		    start == addr) {
			len = end - start;
			break;
		}
	}
	free(maps);
	return len;
}

/* Unmap the mapping at addr, whatever its size. */
static void unmap_stray(unsigned long addr)
{
	uint64_t len = vma_len_at(addr);

	if (len)
		munmap((void *)addr, len);
}

/* After a window appeared: check and track it. */
static struct window *window_made(enum call c, long ret, uint64_t len,
				  struct fdent *f, int64_t off, int prot,
				  unsigned long addr, bool fixed)
{
	uint64_t vlen = vma_len_at(ret);
	struct window *w;

	if (vlen != len) {
		fail("%s gave a window at %#lx of %#lx bytes, want %#lx",
		     call_names[c], ret, vlen, len);
		unmap_stray(ret);
		return NULL;
	}
	if (ret % G.align)
		fail("%s gave a window at %#lx, not aligned to A",
		     call_names[c], ret);
	if (fixed && (unsigned long)ret != addr)
		fail("%s at fixed %#lx gave %#lx", call_names[c], addr, ret);
	/*
	 * A window that should not be (reported already) is not used:
	 * the touches and partial unmaps of windows rely on their size.
	 */
	if (!len || len % G.align) {
		munmap((void *)ret, len);
		return NULL;
	}
	w = win_add((char *)ret, len, f->r, off, prot);
	if (w && W.win_va > WIN_VA_BUDGET) {
		win_unmap(w);	/* too much address space */
		return NULL;
	}
	return w;
}

static struct window *do_attach(struct fdent *f, int fd, int64_t off,
				uint64_t size, unsigned long addr,
				unsigned int flags, bool occupied)
{
	int prot = PROT_READ | (flags & MSHARE_ATTACH_RDONLY ? 0 : PROT_WRITE) |
		   (flags & MSHARE_ATTACH_EXEC ? PROT_EXEC : 0);
	bool fixed = flags & MSHARE_ATTACH_FIXED;
	struct expect e = {};
	uint64_t rsize = fd_size(f), len;
	long ret;

	if (f) {
		window_expect(&e, f, rsize, off, size, prot, addr, fixed,
			      occupied);
		refuse(&e, flags & ~(MSHARE_ATTACH_RDONLY | MSHARE_ATTACH_EXEC |
				     MSHARE_ATTACH_FIXED), "invalid flags");
		window_expect_sized(&e, rsize);
	} else {
		expect_not_region(&e);
	}
	ret = (long)sys_mshare_attach(fd, off, size, (void *)addr, flags);
	size_raced(&e, f, rsize);
	if (!account(C_ATTACH, ret != -1, errno, &e,
		     "fd %d [%s], off %#lx, size %#lx, addr %#lx, flags %#x",
		     fd, f ? f->tag : "not a region", off, size, addr, flags))
		return NULL;
	if (!f) {
		unmap_stray(ret);
		return NULL;
	}
	len = size ? (size + G.page - 1) & ~(G.page - 1) : fd_size(f) - off;
	return window_made(C_ATTACH, ret, len, f, off, prot, addr, fixed);
}

static void op_attach(void)
{
	static const struct wval flags[] = {
		{ 0, 45 }, { MSHARE_ATTACH_RDONLY, 25 },
		{ MSHARE_ATTACH_EXEC, 8 },
		{ MSHARE_ATTACH_RDONLY | MSHARE_ATTACH_EXEC, 7 },
		{ MSHARE_ATTACH_FIXED, 8 },
		{ MSHARE_ATTACH_FIXED | MSHARE_ATTACH_RDONLY, 4 },
		{ 0x8, 1 }, { 1U << 31, 1 }, { ~0U, 1 },
	};
	unsigned int fl = PICK_W(flags);
	unsigned long addr;
	struct fdent *f;
	uint64_t rsize, size;
	bool occupied;
	int64_t off;
	int fd;

	win_room();
	f = pick_fd(false, true, &fd);
	rsize = fd_size(f);
	off = pick_win_off(rsize);
	size = pick_win_size(rsize, off);
	addr = pick_addr(size ? size : G.align, &occupied);
	do_attach(f, fd, off, size, addr, fl, occupied);
}

static void op_mmap(void)
{
	static const struct wval types[] = {
		{ MAP_SHARED, 70 }, { MAP_SHARED_VALIDATE, 15 },
		{ MAP_PRIVATE, 10 }, { 0, 5 },
	};
	static const unsigned int extras[] = {
		MAP_POPULATE, MAP_NORESERVE, MAP_LOCKED, MAP_SYNC, MAP_HUGETLB,
		MAP_32BIT, MAP_GROWSDOWN, MAP_STACK,
	};
	const unsigned int type = PICK_W(types);
	unsigned int flags = type;
	int prot = PICK_W(win_prots), fd;
	uint64_t rsize, len, alen;
	struct expect e = {};
	unsigned long addr;
	struct fdent *f;
	bool occupied;
	int64_t off;
	void *p;

	win_room();
	f = pick_fd(false, false, &fd);
	rsize = fd_size(f);
	off = pick_win_off(rsize);
	len = pick_win_size(rsize, off);
	alen = (len + G.page - 1) & ~(G.page - 1);
	addr = pick_addr(alen, &occupied);
	if (chance(25))
		flags |= MAP_FIXED_NOREPLACE;
	if (chance(10))
		flags |= PICK(extras);
	if (f) {
		window_expect(&e, f, rsize, off, alen, prot, addr,
			      flags & MAP_FIXED_NOREPLACE, occupied);
		allow(&e, EBADF, EOVERFLOW, ENODEV, EPERM, 0);
		refuse(&e, type != MAP_SHARED && type != MAP_SHARED_VALIDATE,
		       "a window is MAP_SHARED");
		refuse(&e, !len || !alen, "no length");
		refuse(&e, flags & MAP_HUGETLB, "MAP_HUGETLB of a region");
		refuse(&e, flags & MAP_GROWSDOWN, "MAP_GROWSDOWN of a file");
		if (type == MAP_SHARED_VALIDATE) {
			allow(&e, EOPNOTSUPP, 0);
			refuse(&e, flags & MAP_SYNC, "MAP_SYNC of a region");
		}
		window_expect_sized(&e, rsize);
	} else {
		expect_not_region(&e);
	}
	p = mmap((void *)addr, len, prot, flags, fd, off);
	size_raced(&e, f, rsize);
	if (!account(C_MMAP, p != MAP_FAILED, errno, &e,
		     "%#lx, %#lx, prot %#x, flags %#x, fd %d [%s], off %#lx",
		     addr, len, prot, flags, fd, f ? f->tag : "not a region",
		     off))
		return;
	if (!f) {
		unmap_stray((unsigned long)p);
		return;
	}
	window_made(C_MMAP, (long)p, alen, f, off, prot, addr,
		    flags & MAP_FIXED_NOREPLACE);
}

/* munmap() of a whole window works, of a part never. */
static void op_munmap(void)
{
	struct window *w = random_win();
	struct expect e = {};
	uint64_t P = G.page;
	char *start;
	size_t len;
	int ret;

	if (!w)
		return;
	if (chance(70)) {
		win_unmap(w);
		return;
	}
	switch (below(5)) {
	case 0:
		start = w->addr + P;
		len = P;
		break;
	case 1:
		start = w->addr;
		len = P;
		break;
	case 2:
		start = w->addr;
		len = w->len - P;
		break;
	case 3:
		start = w->addr + (w->len > G.align ? G.align : P);
		len = w->addr + w->len - start;
		break;
	default:
		start = w->addr + 1;
		len = P;
		break;
	}
	allow(&e, EINVAL, ENOMEM, 0);
	refuse(&e, true, "a window cannot be split");
	ret = munmap(start, len);
	if (account(C_MUNMAP, ret == 0, errno, &e, "%p+%#zx of window %p+%#lx",
		    start, len, w->addr, w->len)) {
		munmap(w->addr, w->len);
		win_forget(w);
	}
}

/* A range inside window w: all of it, or a page of it. */
static void win_range(const struct window *w, char **start, size_t *len)
{
	*start = w->addr;
	*len = w->len;
	if (chance(30)) {
		*len = G.page;
		if (chance(50))
			*start += G.page * below(w->len / G.page);
	}
}

static void op_win_mprotect(void)
{
	struct window *w = random_win();
	int prot = PICK_W(win_prots);
	struct expect e = {};
	char *start;
	size_t len;
	int ret;

	if (!w)
		return;
	win_range(w, &start, &len);
	allow(&e, EINVAL, EACCES, ENOMEM, 0);
	refuse(&e, true, "a window cannot be mprotect()ed");
	ret = mprotect(start, len, prot);
	account(C_WIN_MPROTECT, ret == 0, errno, &e,
		"%p+%#zx, prot %#x of window %p+%#lx prot %#x", start, len,
		prot, w->addr, w->len, w->prot);
}

static void op_win_madvise(void)
{
	struct window *w = random_win();
	bool good = chance(60);
	int advice = good ? PICK(window_advice) : PICK(window_bad_advice);
	struct expect e = {};
	char *start;
	size_t len;
	int ret;

	if (!w)
		return;
	win_range(w, &start, &len);
	if (populates(advice) && len > POPULATE_MAX)
		len = POPULATE_MAX;
	allow(&e, EINVAL, ENOMEM, EAGAIN, EFAULT, EINTR, 0);
	refuse(&e, !good, "windows refuse this advice");
	if (chance(3)) {
		start++;
		refuse(&e, true, "the address is not page aligned");
	}
	ret = madvise(start, len, advice);
	if (!account(C_WIN_MADVISE, ret == 0, errno, &e,
		     "%p+%#zx, advice %d of window %p+%#lx", start, len,
		     advice, w->addr, w->len))
		return;
	if (advice == MADV_DONTFORK)
		w->dontfork = true;
	else if (advice == MADV_DOFORK)
		w->dontfork = false;
}

static void op_win_mlock(void)
{
	struct window *w = random_win();
	struct expect e = {};
	unsigned int how = below(3);
	char *start;
	size_t len;
	int ret;

	if (!w)
		return;
	win_range(w, &start, &len);
	allow(&e, EINVAL, ENOMEM, EAGAIN, EPERM, 0);
	if (how == 0)
		ret = munlock(start, len);
	else if (how == 1)
		ret = mlock(start, len);
	else
		ret = mlock2(start, len, MLOCK_ONFAULT);
	refuse(&e, how, "a window cannot be locked");
	account(C_WIN_MLOCK, ret == 0, errno, &e,
		"%s %p+%#zx of window %p+%#lx",
		how == 0 ? "munlock" : how == 1 ? "mlock" : "mlock2 onfault",
		start, len, w->addr, w->len);
}

static void op_win_mremap(void)
{
	struct window *w = random_win();
	struct expect e = {};
	size_t newlen;
	int flags;
	void *p;

	if (!w)
		return;
	switch (below(4)) {
	case 0:
		newlen = w->len + G.align;
		break;
	case 1:
		newlen = w->len;
		break;
	case 2:
		newlen = w->len / 2;
		break;
	default:
		newlen = G.page;
		break;
	}
	flags = chance(70) ? MREMAP_MAYMOVE : 0;
	allow(&e, EINVAL, EFAULT, ENOMEM, EAGAIN, 0);
	refuse(&e, true, "a window cannot be moved or resized");
	p = mremap(w->addr, w->len, newlen, flags);
	if (!account(C_WIN_MREMAP, p != MAP_FAILED, errno, &e,
		     "window %p+%#lx to %#zx, flags %#x", w->addr, w->len,
		     newlen, flags))
		return;
	/* it moved or changed: get rid of whatever is left */
	munmap(p, newlen);
	if (p != w->addr)
		munmap(w->addr, w->len);
	win_forget(w);
}

static void op_touch(void)
{
	struct window *w = random_win();
	int i, n = 1 + below(6);
	unsigned int c;

	if (!w)
		return;
	for (i = 0; i < n; i++) {
		c = below(100);
		touch(w, c < 45 ? P_READ : c < 80 ? P_WRITE : P_EXEC,
		      touch_addr(w));
	}
}

/* --- descriptors --------------------------------------------------------- */

static void op_reopen(void)
{
	static const struct wval modes[] = {
		{ O_RDONLY, 45 }, { O_RDWR, 40 }, { O_WRONLY, 5 },
		{ O_RDWR | O_TRUNC, 5 }, { O_RDONLY | O_TRUNC, 5 },
	};
	struct fdent *f = random_fd(), *nf;
	int fl = PICK_W(modes) | (chance(50) ? O_CLOEXEC : 0);
	struct region *r;
	struct expect e = {};
	char path[PATH_MAX];
	bool by_name;
	int fd;

	if (!f)
		return;
	make_room();
	f = random_fd();
	if (!f)
		return;
	r = f->r;
	by_name = r->named && chance(40);
	if (by_name)
		snprintf(path, sizeof(path), "%s", mshare_path(G.ctx, r->name));
	else
		snprintf(path, sizeof(path), "/proc/self/fd/%d", f->fd);
	allow(&e, EMFILE, ENFILE, ENOMEM, 0);
	if (by_name)
		allow(&e, ENOENT, 0);	/* unlinked */
	if (fl & O_TRUNC)
		allow(&e, EINVAL, EPERM, ENXIO, 0);	/* a sized region */
	/*
	 * Only a process holding the owner file reopens an unnamed region,
	 * and the new file does not own it.
	 */
	if (!r->named && !r->owner_fds) {
		allow(&e, EACCES, 0);
		refuse(&e, true,
		       "only a holder of the owner file reopens an unnamed region");
	}
	fd = open(path, fl, 0);
	if (!account(C_REOPEN, fd >= 0, errno, &e, "%s [%s], %#x", path,
		     f->tag, fl))
		return;
	nf = fd_add(fd, r, false);
	if (nf && nf->mode != (fl & O_ACCMODE))
		fail("reopen(%s, %#x): mode %s", path, fl, mode_str(nf->mode));
}

static void op_dup_close(void)
{
	struct fdent *f = random_fd();
	struct expect e = {};
	int fd, ret;

	if (chance(5)) {
		fd = bad_fd();
		allow(&e, EBADF, 0);
		refuse(&e, true, "the descriptor is not open");
		ret = close(fd);
		account(C_CLOSE, ret == 0, errno, &e, "fd %d", fd);
		return;
	}
	if (!f)
		return;
	if (chance(50)) {
		fd_close(f);
		return;
	}
	make_room();
	f = random_fd();
	if (!f)
		return;
	allow(&e, EMFILE, EINVAL, 0);
	fd = chance(50) ? dup(f->fd) :
	     fcntl(f->fd, F_DUPFD_CLOEXEC, 3 + (int)below(64));
	if (account(C_DUP, fd >= 0, errno, &e, "fd %d [%s]", f->fd, f->tag))
		fd_add(fd, f->r, f->owns);
}

struct fd_msg {
	uint32_t magic;
	int32_t owner;
	uint64_t token;
	uint64_t id;
	uint8_t named;
	uint8_t owns;		/* the descriptor is of the owner file */
	char name[sizeof(((struct region *)0)->name)];
};

static bool do_send(struct fdent *f, int target)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	struct fd_msg m = {
		.magic = MSG_MAGIC,
		.owner = f->r->owner,
		.token = f->r->token,
		.id = f->r->id,
		.named = f->r->named,
		.owns = f->owns,
	};
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = cbuf.buf,
		.msg_controllen = sizeof(cbuf.buf),
	};
	struct expect e = {};
	struct cmsghdr *cm;
	ssize_t n;

	memcpy(m.name, f->r->name, sizeof(m.name));
	memset(&cbuf, 0, sizeof(cbuf));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &f->fd, sizeof(int));
	allow(&e, EAGAIN, ECONNREFUSED, EPIPE, ENOBUFS, ENOMEM, ETOOMANYREFS,
	      EINTR, 0);
	/* Once in flight, the owner file is out of this process's sight. */
	if (f->owns)
		f->r->owner_out = true;
	n = sendmsg(G.inbox[target][1], &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
	return account(C_SEND, n == (ssize_t)sizeof(m), errno, &e,
		       "fd %d [%s] to worker %d", f->fd, f->tag, target);
}

static void op_send(void)
{
	struct fdent *f = random_fd();

	if (f && do_send(f, below(G.nprocs)) && chance(30))
		fd_close(f);
}

/*
 * A region descriptor from another process (or this one). The owner file
 * makes this process an owner, and its sender may still hold it.
 */
static void received(int fd, const struct fd_msg *m)
{
	struct region *r = region_find(m->id);
	bool owns = m->owns && !m->named;

	if (!r)
		r = region_new(m->id, m->owner, m->token, m->named, m->name);
	if (r && owns) {
		if (r->dead)
			fail("received the owner file of region %lu, known destroyed",
			     (unsigned long)r->id);
		r->dead = false;
		r->owner_out = true;
	}
	fd_add(fd, r, owns);
}

static void op_recv(void)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	struct fd_msg m;
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct expect e = {};
	struct cmsghdr *cm;
	int i, k, fds[4], nfds;
	ssize_t n;

	if (W.child)
		return;
	allow(&e, EAGAIN, EINTR, ENOMEM, 0);
	for (k = 0; k < 4; k++) {
		make_room();
		memset(&m, 0, sizeof(m));
		mh.msg_control = cbuf.buf;
		mh.msg_controllen = sizeof(cbuf.buf);
		n = recvmsg(G.inbox[W.idx][0], &mh, MSG_DONTWAIT |
			    (chance(50) ? MSG_CMSG_CLOEXEC : 0));
		if (!account(C_RECV, n >= 0, errno, &e, "worker %d", W.idx))
			return;
		nfds = 0;
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
			if (cm->cmsg_level != SOL_SOCKET ||
			    cm->cmsg_type != SCM_RIGHTS)
				continue;
			for (i = 0; nfds < 4 &&
			     CMSG_LEN((i + 1) * sizeof(int)) <= cm->cmsg_len; i++)
				memcpy(&fds[nfds++], CMSG_DATA(cm) + i * sizeof(int),
				       sizeof(int));
		}
		m.name[sizeof(m.name) - 1] = '\0';
		if (n != (ssize_t)sizeof(m) || m.magic != MSG_MAGIC || nfds != 1 ||
		    (mh.msg_flags & (MSG_CTRUNC | MSG_TRUNC))) {
			fail("recvmsg: %zd bytes, magic %#x, %d fds, flags %#x",
			     n, m.magic, nfds, mh.msg_flags);
			for (i = 0; i < nfds; i++)
				close(fds[i]);
			continue;
		}
		received(fds[0], &m);
	}
}

/* --- children ------------------------------------------------------------ */

/*
 * Owner files inherited by a child are held by two processes from now on:
 * neither knows when the other lets go.
 */
static void owner_files_shared(void)
{
	int i;

	for (i = 0; i < MAX_REGIONS; i++)
		if (W.regions[i].used && W.regions[i].owner_fds)
			W.regions[i].owner_out = true;
}

/* In a new child: it is its own process now. */
static void child_start(uint64_t seed)
{
	int i;

	owner_files_shared();
	W.child = true;
	W.nkids = 0;
	W.failures = 0;
	W.logged = 0;
	become(seed);
	/* windows madvise(MADV_DONTFORK)ed stayed with the parent */
	for (i = W.nwins - 1; i >= 0; i--)
		if (W.wins[i].dontfork)
			win_forget(&W.wins[i]);
}

static void __attribute__((noreturn)) child_end(void)
{
	_exit(W.failures ? 1 : 0);
}

static void run_ops(int n, bool kid);

/* A forked child: uses what it inherited, then exits (or is killed). */
static void fork_child_body(void)
{
	run_ops(4 + below(KID_OPS - 4), true);
}

/*
 * An owner child: makes a region, passes its owner file on, uses it a
 * little and exits: the region stays with whoever got the owner file, and
 * goes when the receiver lets go of it (or with the worker's inbox, if it
 * never received it).
 */
static void owner_child_body(void)
{
	uint64_t size = chance(70) ? G.align : 2 * G.align;
	struct window *w;
	struct object o;
	struct fdent *f;
	int i, n, fd;

	f = do_create(O_CLOEXEC);
	if (!f)
		return;
	fd = f->fd;
	do_size(f, fd, size, 1, chance(70) ? SIZE_FALLOCATE : SIZE_FTRUNCATE,
		0, 0);
	n = 1 + below(3);
	for (i = 0; i < n; i++) {
		valid_object(&o, size);
		do_map(f, fd, &o, false);
	}
	if (chance(70)) {
		win_room();
		w = do_attach(f, fd, 0, 0, 0, 0, false);
		for (i = 0; w && i < 8; i++)
			touch(w, P_WRITE, touch_addr(w));
	}
	do_send(f, below(G.nprocs));
	run_ops(below(8), true);
	if (chance(50))
		usleep(below(20000));
}

static void reap_kids(bool all);

static void kid_spawn(enum call what, void (*body)(void))
{
	uint64_t seed = rnd();
	struct expect e = {};
	struct kid *k;
	pid_t pid;

	reap_kids(false);
	if (W.child || W.nkids == MAX_KIDS)
		return;
	allow(&e, EAGAIN, ENOMEM, 0);
	owner_files_shared();
	pid = child_fork();
	if (pid == 0) {
		child_start(seed);
		body();
		child_end();
	}
	if (!account(what, pid > 0, errno, &e, "%s", ""))
		return;
	k = &W.kids[W.nkids++];
	k->pid = pid;
	k->what = what;
	k->killed = false;
	k->kill_at = chance(25) ? now_s() + below(40) / 1000.0 : 0;
	k->deadline = now_s() + KID_TIMEOUT_S;
}

/*
 * Children end by themselves, exit status 1 when they found (and
 * counted) failures, or by the SIGKILL that was planned for them.
 */
static void reap_kids(bool all)
{
	struct kid *k;
	int i, status, r;
	double now;

	for (i = 0; i < W.nkids;) {
		k = &W.kids[i];
		now = now_s();
		if (k->kill_at && now >= k->kill_at) {
			kill(k->pid, SIGKILL);
			k->kill_at = 0;
			k->killed = true;
		}
		r = child_poll(k->pid, &status);
		if (r == 0 && now > k->deadline) {
			fail("%s %d still running after %d s", call_names[k->what],
			     k->pid, KID_TIMEOUT_S);
			kill(k->pid, SIGKILL);
			child_wait(k->pid);
		} else if (r == 0) {
			if (all)
				usleep(2000);
			else
				i++;
			continue;
		} else if (r < 0) {
			fail("waitpid(%d): %m", k->pid);
		} else if (!(WIFEXITED(status) && WEXITSTATUS(status) <= 1) &&
			   !(k->killed && status_killed_by(status, SIGKILL))) {
			fail("%s %d %s", call_names[k->what], k->pid,
			     status_str(status));
		}
		*k = W.kids[--W.nkids];
	}
}

static void op_fork(void)
{
	kid_spawn(C_FORK, fork_child_body);
}

static void op_owner_child(void)
{
	kid_spawn(C_OWNER_CHILD, owner_child_body);
}

/* --- /proc --------------------------------------------------------------- */

static int windows_of(const struct region *r)
{
	int i, n = 0;

	for (i = 0; i < W.nwins; i++)
		n += W.wins[i].r == r;
	return n;
}

static void op_fdinfo(void)
{
	struct fdent *f = random_fd();
	struct expect e = {};
	const char *bad = NULL;
	struct fdinfo fi;
	long want, before;
	int ret, mine;

	if (!f)
		return;
	allow(&e, ENOMEM, 0);
	/* another holder of the owner file may size it meanwhile */
	before = fd_size(f);
	ret = fdinfo_read(f->fd, &fi, &bad);
	if (ret == -2) {
		fail("fdinfo of fd %d [%s]: no valid %s line", f->fd, f->tag,
		     bad);
		return;
	}
	if (!account(C_FDINFO, ret == 0, errno, &e, "fd %d", f->fd))
		return;
	mine = windows_of(f->r);
	/* whether this descriptor carries ownership (named: not told here) */
	if (!f->r->named && fi.v[FI_OWNER_FD] != f->owns)
		fail("fdinfo of fd %d [%s]: mshare-owner-fd %ld", f->fd, f->tag,
		     fi.v[FI_OWNER_FD]);
	switch (rstate(f->r)) {
	case MINE_LIVE:
		if (fi.v[FI_OWNED] != 1)
			fail("fdinfo of fd %d [%s]: mshare-owned %ld of a live region",
			     f->fd, f->tag, fi.v[FI_OWNED]);
		want = fd_size(f);
		if (fi.v[FI_SIZE] != want && fi.v[FI_SIZE] != before)
			fail("fdinfo of fd %d [%s]: size %#lx, fstat says %#lx, before %#lx",
			     f->fd, f->tag, fi.v[FI_SIZE], want, before);
		break;
	case MINE_DEAD:
		if (fi.v[FI_OWNED] != 0 || fi.v[FI_OWNER_FD] != 0)
			fail("fdinfo of fd %d [%s]: mshare-owned %ld, mshare-owner-fd %ld of a destroyed region",
			     f->fd, f->tag, fi.v[FI_OWNED], fi.v[FI_OWNER_FD]);
		break;
	case NOT_MINE:
		break;
	}
	if (fi.v[FI_SIZE] % G.align ||
	    (fi.v[FI_ALIGN] >= 0 && fi.v[FI_ALIGN] != (long)G.align))
		fail("fdinfo of fd %d [%s]: size %#lx, align %#lx (A %#lx)",
		     f->fd, f->tag, fi.v[FI_SIZE], fi.v[FI_ALIGN], G.align);
	if (fi.v[FI_WINDOWS] < mine || (mine && fi.v[FI_ATTACHED] < 1))
		fail("fdinfo of fd %d [%s]: %ld windows, %ld attached; this process has %d",
		     f->fd, f->tag, fi.v[FI_WINDOWS], fi.v[FI_ATTACHED], mine);
}

/*
 * Every window is in smaps, whole, with the VM_MSHARE flag "sp" (the
 * "ms" of the first versions was VM_MAYSHARE's already) and the mshare
 * lines.
 */
static void smaps_check(const char *text, const struct window *w)
{
	const char *s, *flags, *end;
	char head[64];
	long kb = -1;

	snprintf(head, sizeof(head), "%lx-%lx ", (unsigned long)w->addr,
		 (unsigned long)w->addr + w->len);
	for (s = text; s; s = strchr(s, '\n')) {
		if (*s == '\n')
			s++;
		if (!strncmp(s, head, strlen(head)))
			break;
	}
	if (!s) {
		fail("smaps: no entry %s for window %p+%#lx", head, w->addr,
		     w->len);
		return;
	}
	flags = strstr(s, "\nVmFlags:");
	end = flags ? strchr(flags + 1, '\n') : NULL;
	if (!flags || !end) {
		fail("smaps: no VmFlags for window %p", w->addr);
		return;
	}
	sscanf(strstr(s, "\nSize:") ?: "", "\nSize: %ld", &kb);
	if (kb != (long)(w->len >> 10) || !memmem(flags, end - flags, " sp ", 4) ||
	    !memmem(s, flags - s, "\nMshareRss:", 11) ||
	    !memmem(s, flags - s, "\nMshareTables:", 14))
		fail("smaps of window %p+%#lx: Size %ld kB, %.*s, mshare lines %d",
		     w->addr, w->len, kb, (int)(end - flags - 1), flags + 1,
		     !!memmem(s, flags - s, "\nMshareRss:", 11));
}

static void op_smaps(void)
{
	struct expect e = {};
	char *text;
	int i;

	allow(&e, ENOMEM, 0);
	text = read_text("/proc/self/smaps", NULL);
	if (!account(C_SMAPS, !!text, errno, &e, "%s", ""))
		return;
	for (i = 0; i < W.nwins; i++)
		smaps_check(text, &W.wins[i]);
	free(text);
}

static void op_drop(void)
{
	struct region *r = random_region(false);

	if (r)
		drop_region(r);
}

/* --- coherence: one object through two windows, in one process -------- */

/*
 * A region of 2A that only this process knows, with one anonymous object
 * in its second half, seen through a window onto the whole region and one
 * onto the second half. Nothing else can change it, so every step has
 * exactly one right outcome.
 */
struct coh {
	int fd;
	char *w1, *w2;		/* the whole region; its second half */
	uint64_t roff, len;	/* the object, in the second half */
	uint64_t woff;		/* of the word the steps use, in the object */
	uint64_t *p1, *p2;	/* that word through each window */
	uint64_t v;		/* what it holds */
};

/*
 * A call of a coherence step must succeed; ENOMEM and EAGAIN end the
 * check without failing it (*skip).
 */
static bool coh_ok(enum call c, bool ok, int err, const char *step,
		   bool *skip)
{
	struct expect e = {};

	allow(&e, ENOMEM, EAGAIN, 0);
	if (account(c, ok, err, &e, "coherence step %s", step))
		return true;
	*skip = allowed(&e, err);
	return false;
}

/* An access to p must raise want_sig (0: must not fault). */
static bool coh_probe(enum probe_kind kind, uint64_t *p, uint64_t *v,
		      int want_sig, const char *step)
{
	static const enum call calls[] = { C_READ, C_WRITE, C_EXEC };
	struct expect e = {};
	int sig;

	if (want_sig) {
		allow(&e, want_sig, 0);
		refuse(&e, true, "the coherence step makes it fault");
	}
	sig = probe(kind, p, v);
	account(calls[kind], !sig, sig, &e, "%p, coherence step %s", p, step);
	return sig == want_sig;
}

static bool coh_fault(enum probe_kind kind, uint64_t *p, const char *step)
{
	uint64_t v = code_word(rnd());

	return coh_probe(kind, p, &v, SIGSEGV, step);
}

static bool coh_read(struct coh *c, uint64_t *p, uint64_t want,
		     const char *step)
{
	uint64_t v = 0;

	if (!coh_probe(P_READ, p, &v, 0, step))
		return false;
	if (v != want) {
		fail("coherence step %s: %p reads %#lx, want %#lx (window %d)",
		     step, p, v, want, p == c->p1 ? 1 : 2);
		return false;
	}
	return true;
}

static bool coh_write(struct coh *c, uint64_t *p, const char *step)
{
	c->v = code_word(rnd());
	return coh_probe(P_WRITE, p, &c->v, 0, step);
}

static bool coh_advise(struct coh *c, int advice, const char *step,
		       bool *skip)
{
	int ret = sys_mshare_advise(c->fd, c->roff, c->len, advice);

	return coh_ok(C_ADVISE, ret == 0, errno, step, skip);
}

static bool coh_protect(struct coh *c, unsigned int prot, const char *step,
			bool *skip)
{
	int ret = sys_mshare_protect(c->fd, c->roff, c->len, prot);

	return coh_ok(C_PROTECT, ret == 0, errno, step, skip);
}

static bool coh_map_anon(struct coh *c, unsigned int flags, const char *step,
			 bool *skip)
{
	struct mshare_map_args a = {
		.region_offset = c->roff, .size = c->len,
		.prot = PROT_READ | PROT_WRITE,
		.flags = MAP_ANONYMOUS | flags, .backing_fd = -1,
	};
	int ret = sys_mshare_map(c->fd, &a, sizeof(a));

	return coh_ok(C_MAP, ret == 0, errno, step, skip);
}

/* MADV_DONTNEED drops the mapping, not the data of shared memory. */
static bool step_dontneed(struct coh *c, bool *skip)
{
	return coh_advise(c, MADV_DONTNEED, "dontneed", skip) &&
	       coh_read(c, c->p2, c->v, "dontneed");
}

/* MADV_REMOVE frees the data: zeroes. */
static bool step_remove(struct coh *c, bool *skip)
{
	if (!coh_advise(c, MADV_REMOVE, "remove", skip))
		return false;
	c->v = 0;
	return coh_read(c, c->p2, 0, "remove") &&
	       coh_read(c, c->p1, 0, "remove");
}

static bool step_pageout(struct coh *c, bool *skip)
{
	return coh_advise(c, chance(50) ? MADV_PAGEOUT : MADV_COLD, "pageout",
			  skip) &&
	       coh_read(c, c->p2, c->v, "pageout");
}

static bool step_populate(struct coh *c, bool *skip)
{
	return coh_advise(c, chance(50) ? MADV_POPULATE_WRITE :
			  MADV_POPULATE_READ, "populate", skip) &&
	       coh_read(c, c->p2, c->v, "populate");
}

/* Read-only for every window at once, then writable again. */
static bool step_read_only(struct coh *c, bool *skip)
{
	return coh_protect(c, PROT_READ, "read-only", skip) &&
	       coh_read(c, c->p2, c->v, "read-only") &&
	       coh_fault(P_WRITE, c->p1, "read-only") &&
	       coh_read(c, c->p2, c->v, "read-only") &&
	       coh_protect(c, PROT_READ | PROT_WRITE, "read-only", skip) &&
	       coh_write(c, c->p1, "read-only") &&
	       coh_read(c, c->p2, c->v, "read-only");
}

static bool step_no_access(struct coh *c, bool *skip)
{
	return coh_protect(c, PROT_NONE, "no-access", skip) &&
	       coh_fault(P_READ, c->p2, "no-access") &&
	       coh_protect(c, PROT_READ | PROT_WRITE, "no-access", skip) &&
	       coh_read(c, c->p2, c->v, "no-access");
}

/* Unmapped, the object faults; mapped again, it is new and zero. */
static bool step_unmap(struct coh *c, bool *skip)
{
	int ret = sys_mshare_unmap(c->fd, c->roff, c->len);

	if (!coh_ok(C_UNMAP, ret == 0, errno, "unmap", skip) ||
	    !coh_fault(P_READ, c->p2, "unmap") ||
	    !coh_fault(P_READ, c->p1, "unmap") ||
	    !coh_map_anon(c, 0, "unmap", skip))
		return false;
	c->v = 0;
	return coh_read(c, c->p2, 0, "unmap");
}

static bool step_replace(struct coh *c, bool *skip)
{
	if (!coh_map_anon(c, chance(50) ? MAP_FIXED : 0, "replace", skip))
		return false;
	c->v = 0;
	return coh_read(c, c->p2, 0, "replace") &&
	       coh_write(c, c->p2, "replace") &&
	       coh_read(c, c->p1, c->v, "replace");
}

/* MAP_FIXED_NOREPLACE over the object: EEXIST, and nothing changed. */
static bool step_noreplace(struct coh *c, bool *skip)
{
	struct mshare_map_args a = {
		.region_offset = c->roff, .size = c->len,
		.prot = PROT_READ | PROT_WRITE,
		.flags = MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, .backing_fd = -1,
	};
	struct expect e = {};
	int ret, err;

	(void)skip;
	allow(&e, EEXIST, 0);
	refuse(&e, true, "MAP_FIXED_NOREPLACE over an object");
	ret = sys_mshare_map(c->fd, &a, sizeof(a));
	err = errno;
	if (account(C_MAP, ret == 0, err, &e, "coherence step noreplace") ||
	    err != EEXIST)
		return false;
	return coh_read(c, c->p2, c->v, "noreplace");
}

/* Wait for the child of a step; -1 if it did not end in time. */
static int coh_wait(pid_t pid)
{
	double end = now_s() + KID_TIMEOUT_S;
	int status, r;

	while ((r = child_poll(pid, &status)) == 0) {
		if (now_s() > end) {
			fail("coherence step fork: child %d still running after %d s",
			     pid, KID_TIMEOUT_S);
			kill(pid, SIGKILL);
			child_wait(pid);
			return -1;
		}
		usleep(1000);
	}
	return r < 0 ? -1 : status;
}

/* A child sees the data through the inherited windows, and writes. */
static bool step_fork(struct coh *c, bool *skip)
{
	uint64_t v2 = code_word(rnd()), v = 0;
	struct expect e = {};
	int status;
	pid_t pid;

	allow(&e, EAGAIN, ENOMEM, 0);
	pid = child_fork();
	if (pid == 0) {
		W.child = true;
		W.failures = 0;
		become(rnd());
		if (probe(P_READ, c->p2, &v) || v != c->v)
			fail("coherence step fork: the child reads %#lx, want %#lx",
			     v, c->v);
		else if (probe(P_WRITE, c->p1, &v2))
			fail("coherence step fork: the child cannot write");
		child_end();
	}
	if (!account(C_FORK, pid > 0, errno, &e, "coherence step fork")) {
		*skip = true;
		return false;
	}
	status = coh_wait(pid);
	if (!status_ok(status)) {
		if (status != -1 &&
		    !(WIFEXITED(status) && WEXITSTATUS(status) == 1))
			fail("coherence step fork: child %s", status_str(status));
		return false;
	}
	c->v = v2;
	return coh_read(c, c->p2, v2, "fork");
}

/* A read-only descriptor makes read-only windows only. */
static bool step_read_only_fd(struct coh *c, bool *skip)
{
	const uint64_t A = G.align;
	struct expect e = {};
	bool ok = false;
	uint64_t *p3;
	long addr;
	int fd;

	fd = reopen_fd(c->fd, O_RDONLY);
	if (!coh_ok(C_REOPEN, fd >= 0, errno, "read-only fd", skip))
		return false;
	allow(&e, EACCES, 0);
	refuse(&e, true, "a writable window through a read-only descriptor");
	addr = (long)sys_mshare_attach(fd, A, 0, 0, 0);
	if (account(C_ATTACH, addr != -1, errno, &e,
		    "coherence step read-only fd")) {
		unmap_stray(addr);
		goto out;
	}
	addr = (long)sys_mshare_attach(fd, A, 0, 0, MSHARE_ATTACH_RDONLY);
	if (!coh_ok(C_ATTACH, addr != -1, errno, "read-only fd", skip))
		goto out;
	p3 = (uint64_t *)(addr + c->roff - A + c->woff);
	ok = vma_len_at(addr) == A && coh_read(c, p3, c->v, "read-only fd") &&
	     coh_fault(P_WRITE, p3, "read-only fd");
	unmap_stray(addr);
out:
	close(fd);
	return ok && coh_read(c, c->p2, c->v, "read-only fd");
}

/* Closing the only descriptor destroys the region: both windows fault. */
static bool step_destroy(struct coh *c, bool *skip)
{
	int ret = close(c->fd);

	c->fd = -1;
	return coh_ok(C_CLOSE, ret == 0, errno, "destroy", skip) &&
	       coh_fault(P_READ, c->p1, "destroy") &&
	       coh_fault(P_READ, c->p2, "destroy");
}

/* The steps a coherence check takes at random, one to three of them. */
static bool (*const coh_steps[])(struct coh *c, bool *skip) = {
	step_dontneed, step_remove, step_pageout, step_populate,
	step_read_only, step_no_access, step_unmap, step_replace,
	step_noreplace, step_fork, step_read_only_fd, step_destroy,
};

/* The fdinfo of a fresh region: exactly what this process made. */
static bool coh_fdinfo(struct coh *c)
{
	const char *bad = NULL;
	struct fdinfo fi;

	if (fdinfo_read(c->fd, &fi, &bad)) {
		fail("coherence: fdinfo: %s", bad ?: strerror(errno));
		return false;
	}
	if (fi.v[FI_SIZE] == (long)(2 * G.align) && fi.v[FI_OWNED] == 1 &&
	    fi.v[FI_OWNER_FD] == 1 && fi.v[FI_ATTACHED] == 1 &&
	    fi.v[FI_WINDOWS] == 2 && fi.v[FI_RSS] >= 1)
		return true;
	fail("coherence: fdinfo size %#lx owned %ld owner-fd %ld attached %ld windows %ld rss %ld; want %#lx, 1, 1, 1, 2, >= 1",
	     fi.v[FI_SIZE], fi.v[FI_OWNED], fi.v[FI_OWNER_FD],
	     fi.v[FI_ATTACHED], fi.v[FI_WINDOWS], fi.v[FI_RSS], 2 * G.align);
	return false;
}

/* A new region with one object, seen through two windows. */
static bool coh_setup(struct coh *c, bool *skip)
{
	const uint64_t A = G.align, P = G.page;
	const uint64_t lens[] = { P, 16 * P, ZONE };
	long addr;
	int ret;

	c->fd = sys_mshare_create(O_CLOEXEC);
	if (!coh_ok(C_CREATE, c->fd >= 0, errno, "setup", skip))
		return false;
	ret = fallocate(c->fd, 0, 0, 2 * A);
	if (!coh_ok(C_FALLOCATE, ret == 0, errno, "setup", skip))
		return false;
	c->len = PICK(lens);
	c->roff = A + below(4) * ZONE + below(16) * P;
	c->woff = below(c->len / 8) * 8;
	if (!coh_map_anon(c, chance(30) ? MAP_POPULATE : 0, "setup", skip))
		return false;
	addr = (long)sys_mshare_attach(c->fd, 0, 0, 0, 0);
	if (!coh_ok(C_ATTACH, addr != -1, errno, "setup", skip))
		return false;
	c->w1 = (char *)addr;
	if (chance(50)) {
		addr = (long)sys_mshare_attach(c->fd, A, A, 0, 0);
		if (!coh_ok(C_ATTACH, addr != -1, errno, "setup", skip))
			return false;
	} else {
		addr = (long)mmap(NULL, A, PROT_READ | PROT_WRITE, MAP_SHARED,
				  c->fd, A);
		if (!coh_ok(C_MMAP, addr != (long)MAP_FAILED, errno, "setup",
			    skip))
			return false;
	}
	c->w2 = (char *)addr;
	if (vma_len_at((unsigned long)c->w1) != 2 * A ||
	    vma_len_at((unsigned long)c->w2) != A) {
		fail("coherence: windows %p+%#lx, %p+%#lx; want %#lx, %#lx",
		     c->w1, vma_len_at((unsigned long)c->w1), c->w2,
		     vma_len_at((unsigned long)c->w2), 2 * A, A);
		return false;
	}
	c->p1 = (uint64_t *)(c->w1 + c->roff + c->woff);
	c->p2 = (uint64_t *)(c->w2 + c->roff - A + c->woff);
	return coh_write(c, c->p1, "setup") &&
	       coh_read(c, c->p2, c->v, "setup") && coh_fdinfo(c);
}

static void op_coherence(void)
{
	struct call_stat *s = &G.sh->st[C_COHERENCE];
	struct coh c = { .fd = -1 };
	int i, n = 1 + below(3);
	bool ok, skip = false;

	ok = coh_setup(&c, &skip);
	for (i = 0; ok && i < n && c.fd >= 0; i++)
		ok = PICK(coh_steps)(&c, &skip);
	if (c.w1)
		unmap_stray((unsigned long)c.w1);
	if (c.w2)
		unmap_stray((unsigned long)c.w2);
	if (c.fd >= 0)
		close(c.fd);
	if (skip)
		return;
	/* the reason of a failure was reported */
	stat_add(&s->calls);
	stat_add(ok ? &s->ok : &s->unexpected);
}

/* --- the operations ------------------------------------------------------ */

static const struct op {
	const char *name;
	void (*fn)(void);
	unsigned int weight;		/* in a worker */
	unsigned int kid_weight;	/* in a forked child */
} ops[] = {
	{ "create",		op_create,		6,	1 },
	{ "named create",	op_named_create,	3,	1 },
	{ "size",		op_size,		7,	2 },
	{ "map",		op_map,			14,	3 },
	{ "ioctl map",		op_ioctl_map,		4,	1 },
	{ "unmap",		op_unmap,		6,	2 },
	{ "ioctl unmap",	op_ioctl_unmap,		3,	1 },
	{ "protect",		op_protect,		6,	2 },
	{ "advise",		op_advise,		6,	2 },
	{ "attach",		op_attach,		8,	3 },
	{ "mmap",		op_mmap,		5,	2 },
	{ "munmap",		op_munmap,		5,	2 },
	{ "window mprotect",	op_win_mprotect,	2,	1 },
	{ "window madvise",	op_win_madvise,		3,	1 },
	{ "window mlock",	op_win_mlock,		2,	1 },
	{ "window mremap",	op_win_mremap,		2,	1 },
	{ "touch",		op_touch,		16,	20 },
	{ "reopen",		op_reopen,		4,	2 },
	{ "dup/close",		op_dup_close,		6,	2 },
	{ "send",		op_send,		5,	1 },
	{ "receive",		op_recv,		6,	0 },
	{ "fork",		op_fork,		2,	0 },
	{ "owner child",	op_owner_child,		2,	0 },
	{ "fdinfo",		op_fdinfo,		3,	1 },
	{ "smaps",		op_smaps,		1,	1 },
	{ "coherence",		op_coherence,		2,	0 },
	{ "drop region",	op_drop,		3,	1 },
};

static const struct op *pick_op(bool kid)
{
	unsigned int total = 0, x, w;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ops); i++)
		total += kid ? ops[i].kid_weight : ops[i].weight;
	x = below(total);
	for (i = 0; i < ARRAY_SIZE(ops) - 1; i++) {
		w = kid ? ops[i].kid_weight : ops[i].weight;
		if (x < w)
			break;
		x -= w;
	}
	return &ops[i];
}

static void run_ops(int n, bool kid)
{
	int i;

	for (i = 0; i < n; i++)
		pick_op(kid)->fn();
}

/* Let go of everything when memory runs low. */
static void relieve_pressure(void)
{
	long avail = meminfo_kib("MemAvailable"), total = meminfo_kib("MemTotal");

	if (avail < 0 || total < 0 || avail > total / 4)
		return;
	if (!__atomic_fetch_add(&G.sh->reliefs, 1, __ATOMIC_RELAXED))
		note("MemAvailable %ld of %ld kB: letting go of everything",
		     avail, total);
	drop_everything();
}

static void __attribute__((noreturn)) worker_main(int idx)
{
	const struct op *op;
	int i;

	W.idx = idx;
	become(G.seed + 0x51ed2701ULL * (idx + 1));
	for (i = 0; i < G.nprocs; i++)
		if (i != idx)
			close(G.inbox[i][0]);
	backings_open();
	while (now_s() < G.deadline) {
		op = pick_op(false);
		G.sh->cur_op[idx] = op - ops;
		G.sh->nops[idx]++;
		op->fn();
		reap_kids(false);
		if (++W.ops % 64 == 0)
			relieve_pressure();
	}
	G.sh->cur_op[idx] = -1;
	reap_kids(true);
	drop_everything();
	backings_close();
	_exit(0);
}

/* --- the test ------------------------------------------------------------ */

static uint64_t fuzz_seed(void)
{
	const char *s = getenv("MSHARE_FUZZ_SEED");
	struct timespec ts;

	if (s && *s)
		return strtoull(s, NULL, 0);
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000007ULL ^ ts.tv_nsec ^
	       (uint64_t)getpid() << 32;
}

struct mem {
	long free, buffers, cached, shmem, pagetables, slab, huge_free;
};

/* Let freed memory come back: caches, KASAN's quarantine, vmstat. */
static void mem_settle(bool shrink_slabs)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int fd;

	fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "3", 1) < 0) {
			/* best effort */
		}
		close(fd);
	}
	d = shrink_slabs ? opendir("/sys/kernel/slab") : NULL;
	while (d && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink",
			 de->d_name);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (write(fd, "1", 1) < 0) {
			/* best effort */
		}
		close(fd);
	}
	if (d)
		closedir(d);
	vmstat_refresh();
}

static void mem_read(struct mem *m)
{
	m->free = meminfo_kib("MemFree");
	m->buffers = meminfo_kib("Buffers");
	m->cached = meminfo_kib("Cached");
	m->shmem = meminfo_kib("Shmem");
	m->pagetables = meminfo_kib("PageTables");
	m->slab = meminfo_kib("Slab");
	m->huge_free = meminfo_kib("HugePages_Free");
}

/* Free memory, counting reclaimable cache but not shmem. */
static long mem_avail(const struct mem *m)
{
	return m->free + m->buffers + m->cached - m->shmem;
}

static bool mem_back(const struct mem *before, const struct mem *now,
		     long tolerance_kb)
{
	return before->free >= 0 && now->free >= 0 &&
	       mem_avail(before) - mem_avail(now) <= tolerance_kb &&
	       now->shmem - before->shmem <= tolerance_kb &&
	       now->huge_free >= before->huge_free;
}

static void errnos_str(const struct call_stat *s, enum call c, char *buf,
		       size_t len)
{
	size_t used = 0;
	int err;

	buf[0] = '\0';
	for (err = 1; err < 64 * ERR_WORDS && used < len; err++)
		if (s->seen[err / 64] >> (err % 64) & 1)
			used += snprintf(buf + used, len - used, " %s",
					 err_str(c, err));
}

FIXTURE(fuzz) {
	struct mshare_ctx c;
	struct shared *sh;
};

FIXTURE_SETUP(fuzz)
{
	mshare_test_setup(_metadata, &self->c, "fuzz");
	self->sh = mmap(NULL, sizeof(*self->sh), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
}

FIXTURE_TEARDOWN(fuzz)
{
	mshare_ctx_fini(&self->c);
	if (self->sh != MAP_FAILED)
		munmap(self->sh, sizeof(*self->sh));
}

static void print_summary(struct __test_metadata *_metadata,
			  const struct shared *sh)
{
	char errs[400];
	int c;

	TH_LOG("%-16s %8s %8s %8s %5s  %s", "call", "calls", "ok", "errors",
	       "bad", "errno values (signals for probes) seen");
	for (c = 0; c < NR_CALLS; c++) {
		errnos_str(&sh->st[c], c, errs, sizeof(errs));
		TH_LOG("%-16s %8lu %8lu %8lu %5lu %s", call_names[c],
		       sh->st[c].calls, sh->st[c].ok, sh->st[c].expected,
		       sh->st[c].unexpected, errs);
	}
	TH_LOG("exec probes skipped (no code word there): %lu; low-memory releases: %lu; failures %lu (at most %d lines logged)",
	       sh->exec_skipped, sh->reliefs, sh->failures, MAX_LOG_ALL);
}

/* Wait for the workers; false if one failed to end well in time. */
static bool wait_workers(struct __test_metadata *_metadata, pid_t *pids,
			 int n, const struct shared *sh)
{
	double hard = G.deadline + GRACE_S;
	int i, left = n, status;
	bool ok = true;

	while (left) {
		for (i = 0; i < n; i++) {
			if (pids[i] <= 0 || child_poll(pids[i], &status) != 1)
				continue;
			pids[i] = 0;
			left--;
			if (status_ok(status))
				continue;
			ok = false;
			TH_LOG("worker %d %s, after %lu operations, in op '%s'", i,
			       status_str(status), sh->nops[i],
			       sh->cur_op[i] >= 0 ?
			       ops[sh->cur_op[i]].name : "(cleanup)");
		}
		if (left && now_s() > hard) {
			for (i = 0; i < n; i++) {
				if (pids[i] <= 0)
					continue;
				TH_LOG("worker %d still running %d s after the end, in op '%s': killed",
				       i, GRACE_S, sh->cur_op[i] >= 0 ?
				       ops[sh->cur_op[i]].name : "(cleanup)");
				kill(pids[i], SIGKILL);
				child_wait(pids[i]);
			}
			return false;
		}
		if (left)
			usleep(100 * 1000);
	}
	return ok;
}

TEST_F_TIMEOUT(fuzz, run, DEFAULT_SECONDS + TIMEOUT_EXTRA)
{
	long tolerance_mb = env_long("MSHARE_FUZZ_MEM_TOLERANCE_MB",
				     MEM_TOLERANCE_MB, 0, 1 << 20);
	long tolerance_kb = tolerance_mb << 10;
	struct mem before, after;
	pid_t pids[MAX_PROCS];
	char why[128], tried[512];
	double start, settle_end;
	bool workers_ok;
	size_t k;
	int i, c;

	G.sh = self->sh;
	G.align = self->c.align;
	G.page = self->c.page;
	G.ctx = &self->c;
	G.seconds = env_long("MSHARE_FUZZ_SECONDS", DEFAULT_SECONDS, 1,
			     30 * 24 * 3600);
	G.nprocs = env_long("MSHARE_FUZZ_PROCS", DEFAULT_PROCS, 1, MAX_PROCS);
	ASSERT_LE(0, tolerance_mb)
		TH_LOG("MSHARE_FUZZ_MEM_TOLERANCE_MB must be 0 to %d", 1 << 20);
	ASSERT_LT(0, G.seconds)
		TH_LOG("MSHARE_FUZZ_SECONDS must be 1 to %d", 30 * 24 * 3600);
	ASSERT_LT(0, G.nprocs)
		TH_LOG("MSHARE_FUZZ_PROCS must be 1 to %d", MAX_PROCS);
	G.seed = fuzz_seed();
	TH_LOG("seed %lu: %d processes, %d s (replay: MSHARE_FUZZ_SEED=%lu MSHARE_FUZZ_PROCS=%d MSHARE_FUZZ_SECONDS=%d)",
	       G.seed, G.nprocs, G.seconds, G.seed, G.nprocs, G.seconds);

	probe_setup();
	G.nx = nx_works();
	if (!G.nx)
		TH_LOG("code runs from PROT_READ pages here: not checking exec permissions");
	G.hugetlb = hugetlb_usable(16, why, sizeof(why)) == 0;
	if (!G.hugetlb)
		TH_LOG("no hugetlbfs file objects: %s", why);
	if (find_disk_dir(false, G.disk_dir, sizeof(G.disk_dir), tried,
			  sizeof(tried))) {
		G.disk_dir[0] = '\0';
		TH_LOG("no disk file objects (tried: %s)", tried);
	}

	mem_settle(true);
	mem_read(&before);

	for (i = 0; i < G.nprocs; i++)
		ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0,
					G.inbox[i]));
	for (i = 0; i < G.nprocs; i++)
		self->sh->cur_op[i] = -1;
	start = now_s();
	G.deadline = start + G.seconds;
	for (i = 0; i < G.nprocs; i++) {
		pids[i] = child_fork();
		if (pids[i] == 0)
			worker_main(i);
		ASSERT_LT(0, pids[i]) TH_LOG("fork: %s", strerror(errno));
	}
	for (i = 0; i < G.nprocs; i++) {
		close(G.inbox[i][0]);
		close(G.inbox[i][1]);
	}
	workers_ok = wait_workers(_metadata, pids, G.nprocs, self->sh);
	TH_LOG("fuzzed for %.1f s", now_s() - start);
	print_summary(_metadata, self->sh);

	/* Every descriptor is closed now: memory must come back. */
	rm_tree(self->c.dir);
	mem_settle(true);
	settle_end = now_s() + SETTLE_S;
	for (;;) {
		mem_read(&after);
		if (mem_back(&before, &after, tolerance_kb) ||
		    now_s() > settle_end)
			break;
		sleep(1);
		mem_settle(false);
	}
	TH_LOG("memory kB before/after: free+cache-shmem %ld/%ld, MemFree %ld/%ld, Shmem %ld/%ld, PageTables %ld/%ld, Slab %ld/%ld, HugePages_Free %ld/%ld (tolerance %ld kB)",
	       mem_avail(&before), mem_avail(&after), before.free, after.free,
	       before.shmem, after.shmem, before.pagetables, after.pagetables,
	       before.slab, after.slab, before.huge_free, after.huge_free,
	       tolerance_kb);

	EXPECT_TRUE(workers_ok);
	EXPECT_EQ(0, self->sh->failures)
		TH_LOG("failures (see the FAIL lines); replay with MSHARE_FUZZ_SEED=%lu MSHARE_FUZZ_PROCS=%d",
		       G.seed, G.nprocs);
	for (c = 0; c < NR_CALLS; c++)
		EXPECT_LE(MIN_CALLS, self->sh->st[c].calls)
			TH_LOG("too few %s calls", call_names[c] ?: "?");
	for (k = 0; k < ARRAY_SIZE(must_succeed); k++)
		EXPECT_LT(0, self->sh->st[must_succeed[k]].ok)
			TH_LOG("no %s call succeeded",
			       call_names[must_succeed[k]] ?: "?");
	EXPECT_GE(tolerance_kb, mem_avail(&before) - mem_avail(&after))
		TH_LOG("free memory (MemFree + Buffers + Cached - Shmem) did not come back");
	EXPECT_GE(tolerance_kb, after.shmem - before.shmem)
		TH_LOG("Shmem did not come back");
	EXPECT_LE(before.huge_free, after.huge_free)
		TH_LOG("hugetlb pages did not come back");
}

/* The harness timeout follows MSHARE_FUZZ_SECONDS. */
static void __attribute__((constructor(KSELFTEST_PRIO_TEST + 1)))
fuzz_set_timeout(void)
{
	long seconds = env_long("MSHARE_FUZZ_SECONDS", DEFAULT_SECONDS, 1,
				30 * 24 * 3600);

	/* A bad value fails the test itself, in its first lines. */
	_fuzz_run_object->timeout =
		(seconds < 0 ? DEFAULT_SECONDS : seconds) + TIMEOUT_EXTRA;
}

TEST_HARNESS_MAIN
