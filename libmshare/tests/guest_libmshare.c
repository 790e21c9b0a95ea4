// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * In-guest test of libmshare: every call once, end to end, on a kernel with
 * the mshare system calls. Static; run it inside the guest only (on any
 * other kernel the calls fail with ENOSYS).
 *
 * KTAP (mshare-common/tap.h): the plan, then one "ok N ..." or "not ok N ..."
 * per step. Exit status 0 if every step passed, 1 otherwise. A step
 * that later steps depend on ends the run ("Bail out!") when it fails.
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mshare.h>
#include <seccomp.h>

#include "mshare-common/errno-name.h"
#include "mshare-common/tap.h"
#include "mshare_sysnum.h"

#ifndef MADV_POPULATE_WRITE
# define MADV_POPULATE_WRITE	23
#endif

#define PLAN		19
#define OBJECT_SIZE	(2UL << 20)	/* the anonymous object: 2 MiB */

/* A diagnostic line: TAP ignores it. */
static void diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void diag_errno(const char *call, int err)
{
	diag("%s: %s (%s)", call, errno_to_name(err), strerror(err));
	if (err == ENOSYS)
		diag("this kernel has no mshare system calls");
}

static void __attribute__((noreturn)) bail_out(const char *why)
{
	printf("Bail out! %s\n", why);
	exit(1);
}

static unsigned char pattern(size_t i)
{
	return (unsigned char)(i * 31 + (i >> 12));
}

/* Whether the first len bytes of p hold pattern(). */
static bool check_pattern(const volatile unsigned char *p, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char want = pattern(i);

		if (p[i] != want) {
			diag("byte %zu is 0x%02x, not 0x%02x", i, p[i], want);
			return false;
		}
	}
	return true;
}

/*
 * Run fn(arg) in a child, its return value the child's exit status; the
 * child inherits the windows. Returns 0 with the child's wait status in
 * *status, or -1.
 */
static int run_child(int (*fn)(const void *), const void *arg, int *status)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		diag_errno("fork", errno);
		return -1;
	}
	if (pid == 0)
		_exit(fn(arg));
	if (waitpid(pid, status, 0) != pid) {
		diag_errno("waitpid", errno);
		return -1;
	}
	return 0;
}

struct access {
	volatile unsigned char *p;
	bool write;
};

static int touch(const void *arg)
{
	const struct access *a = arg;
	struct rlimit no_core = { 0, 0 };

	setrlimit(RLIMIT_CORE, &no_core);
	if (a->write)
		*a->p = 0x5a;
	else
		(void)*a->p;
	return 0;
}

/*
 * Touch one byte of the window in a child, which inherits the window:
 * its fate, SIGSEGV or a clean exit, tells whether the access was allowed.
 * Returns the signal that killed the child, 0 if it exited with status 0,
 * -1 otherwise.
 */
static int child_access(volatile unsigned char *p, bool write)
{
	struct access a = { .p = p, .write = write };
	int status;

	if (run_child(touch, &a, &status))
		return -1;
	if (WIFSIGNALED(status))
		return WTERMSIG(status);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

struct filtered {
	int fd, rfd;		/* the region, and a read-only descriptor of it */
	size_t len;		/* the object at offset 0 */
	off_t size;		/* the region's size */
	int error;		/* what the filter answers */
};

/* Whether mshare_attach(fd, offset, 0, addr, flags) fails with EINVAL. */
static bool attach_einval(int fd, off_t offset, void *addr, unsigned int flags)
{
	return mshare_attach(fd, offset, 0, addr, flags) == MAP_FAILED &&
	       errno == EINVAL;
}

/*
 * Behind a seccomp filter that answers mshare_attach() with f->error
 * (ENOSYS or EPERM), as container runtimes' default profiles do, the call
 * must fall back to mmap() and give a window onto the same pages, refuse
 * what the call refuses, and leave a descriptor that is not a region alone.
 * Returns 0, or the number of the check that failed; says why.
 */
static int attach_filtered(const void *arg)
{
	const struct filtered *f = arg;
	scmp_filter_ctx ctx;
	unsigned char *w;
	int memfd;

	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx || seccomp_rule_add(ctx, SCMP_ACT_ERRNO((unsigned int)f->error),
				     __NR_mshare_attach, 0) ||
	    seccomp_load(ctx)) {
		diag("cannot load a seccomp filter");
		return 1;
	}
	seccomp_release(ctx);
	if (syscall(__NR_mshare_attach, f->fd, 0L, 0UL, 0UL, 0U) != -1 ||
	    errno != f->error) {
		diag("the filter does not answer mshare_attach with %s",
		     strerror(f->error));
		return 2;
	}
	w = mshare_attach(f->fd, 0, 0, NULL, 0);
	if (w == MAP_FAILED) {
		diag_errno("mshare_attach behind the filter", errno);
		return 3;
	}
	if (!check_pattern(w, f->len))
		return 4;
	w[1] = 0x5b;	/* the parent looks for it */

	if (mshare_attach(f->rfd, 0, 0, NULL, 0) != MAP_FAILED || errno != EACCES) {
		diag("a writable window through a read-only descriptor is not EACCES");
		return 5;
	}
	memfd = memfd_create("not-a-region", MFD_CLOEXEC);
	if (memfd < 0 || ftruncate(memfd, (off_t)f->len) ||
	    mshare_attach(memfd, 0, 0, NULL, 0) != MAP_FAILED ||
	    errno != f->error) {
		diag("mshare_attach of a memfd behind the filter does not fail with %s",
		     strerror(f->error));
		return 6;
	}
	if (!attach_einval(f->fd, 0, NULL, 0x80) ||
	    !attach_einval(f->fd, f->size, NULL, 0) ||
	    !attach_einval(f->fd, -f->size, NULL, 0) ||
	    !attach_einval(f->fd, 0, NULL, MSHARE_ATTACH_FIXED)) {
		diag("unknown flags, an offset outside the region or MSHARE_ATTACH_FIXED without an address is not EINVAL");
		return 7;
	}
	return 0;
}

int main(void)
{
	const long page = sysconf(_SC_PAGESIZE);
	struct mshare_fdinfo info;
	unsigned char *win, *rwin;
	long align;
	int fd, rfd, wfd, r, sig, err;
	uint64_t rss;
	bool ok;

	setvbuf(stdout, NULL, _IOLBF, 0);
	tap_plan(PLAN);

	/* 1: mshare_create */
	fd = mshare_create(O_CLOEXEC);
	if (fd < 0)
		diag_errno("mshare_create", errno);
	if (!ok(fd >= 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC) &&
		    (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR,
		    "mshare_create(O_CLOEXEC) gives a close-on-exec read-write descriptor"))
		bail_out("no region");

	/* 2: mshare_alignment */
	align = mshare_alignment(fd);
	if (align < 0)
		diag_errno("mshare_alignment", errno);
	else
		diag("sharing alignment: %ld bytes", align);
	if (!ok(align > 0 && !(align & (align - 1)) && align % page == 0 &&
		    (unsigned long)align >= OBJECT_SIZE,
		    "mshare_alignment() is a power of two, a multiple of the page size"))
		bail_out("no alignment");

	/* 3: sizing */
	r = ftruncate(fd, align);
	if (r)
		diag_errno("ftruncate", errno);
	if (!ok(r == 0, "ftruncate() sizes the region to the alignment"))
		bail_out("unsized region");

	/* 4: mshare_map_object (mshare_map) */
	r = mshare_map_object(fd, 0, OBJECT_SIZE, PROT_READ | PROT_WRITE,
			      MAP_ANONYMOUS, -1, 0);
	if (r)
		diag_errno("mshare_map_object", errno);
	if (!ok(r == 0, "mshare_map_object() maps 2 MiB of anonymous shared memory at offset 0"))
		bail_out("nothing mapped in the region");

	/* 5: mshare_attach */
	win = mshare_attach(fd, 0, 0, NULL, 0);
	if (win == MAP_FAILED)
		diag_errno("mshare_attach", errno);
	if (!ok(win != MAP_FAILED && !((uintptr_t)win & (align - 1)),
		    "mshare_attach() maps a read-write window at an aligned address"))
		bail_out("no window");

	/* 6: data through the window */
	for (size_t i = 0; i < OBJECT_SIZE; i++)
		win[i] = pattern(i);
	ok(check_pattern(win, OBJECT_SIZE),
	       "what is written through the window reads back");

	/* 7: mshare_protect to read-only */
	r = mshare_protect(fd, 0, OBJECT_SIZE, PROT_READ);
	if (r)
		diag_errno("mshare_protect(PROT_READ)", errno);
	sig = r ? -1 : child_access(win, true);
	ok = r == 0 && sig == SIGSEGV && child_access(win, false) == 0 &&
	     check_pattern(win, OBJECT_SIZE);
	if (r == 0 && sig != SIGSEGV)
		diag("a write after mshare_protect(PROT_READ) gave %d, not SIGSEGV",
		     sig);
	ok(ok, "mshare_protect(PROT_READ): writes fault with SIGSEGV, reads work");

	/* 8: and back to read-write */
	r = mshare_protect(fd, 0, OBJECT_SIZE, PROT_READ | PROT_WRITE);
	if (r)
		diag_errno("mshare_protect(PROT_READ | PROT_WRITE)", errno);
	ok = r == 0 && child_access(win, true) == 0;
	if (ok) {
		/* The child wrote through its own window, onto the same page. */
		ok = win[0] == 0x5a;
		if (!ok)
			diag("the child's write is not seen: byte 0 is 0x%02x",
			     win[0]);
		win[0] = pattern(0);
	}
	ok(ok, "mshare_protect(PROT_READ | PROT_WRITE): writes work and are shared");

	/* 9: mshare_advise */
	r = mshare_advise(fd, 0, OBJECT_SIZE, MADV_POPULATE_WRITE);
	if (r)
		diag_errno("mshare_advise(MADV_POPULATE_WRITE)", errno);
	ok(r == 0 && check_pattern(win, OBJECT_SIZE),
	       "mshare_advise(MADV_POPULATE_WRITE) keeps the data");

	/* 10: mshare_info */
	r = mshare_info(fd, &info);
	if (r)
		diag_errno("mshare_info", errno);
	else
		diag("size %llu align %llu owned %d owner_fd %d attached %u windows %u rss %llu pages pgtables %llu bytes",
		     (unsigned long long)info.size,
		     (unsigned long long)info.align, info.owned, info.owner_fd,
		     info.attached, info.windows,
		     (unsigned long long)info.rss_pages,
		     (unsigned long long)info.pgtables_bytes);
	/*
	 * The kernel reads the resident pages from per-CPU counters, which
	 * may lag behind by a few dozen pages: half the object will do.
	 */
	rss = r == 0 ? info.rss_pages : 0;
	ok(r == 0 && info.size == (uint64_t)align &&
	       info.align == (uint64_t)align &&
	       info.owned == 1 && info.owner_fd == 1 && info.attached == 1 &&
	       info.windows == 1 && rss >= OBJECT_SIZE / page / 2 &&
	       info.pgtables_bytes > 0,
	       "mshare_info() shows the size, the alignment, an owner file (this one), one window and the resident pages");

	/* 11: mshare_fd_rdonly */
	rfd = mshare_fd_rdonly(fd);
	if (rfd < 0)
		diag_errno("mshare_fd_rdonly", errno);
	r = rfd >= 0 ? mshare_info(rfd, &info) : -1;
	if (rfd >= 0 && r)
		diag_errno("mshare_info of the read-only descriptor", errno);
	else if (rfd >= 0)
		diag("read-only descriptor: owned %d owner_fd %d", info.owned, info.owner_fd);
	ok(rfd >= 0 && (fcntl(rfd, F_GETFL) & O_ACCMODE) == O_RDONLY &&
	       (fcntl(rfd, F_GETFD) & FD_CLOEXEC) && r == 0 && info.owned == 1 &&
	       info.owner_fd == 0,
	       "mshare_fd_rdonly() gives a close-on-exec read-only descriptor that is no owner file");

	/* 12: a writable window through it is refused */
	rwin = rfd < 0 ? MAP_FAILED : mshare_attach(rfd, 0, 0, NULL, 0);
	err = errno;
	if (rwin != MAP_FAILED) {
		munmap(rwin, align);
		diag("mshare_attach() without MSHARE_ATTACH_RDONLY succeeded");
	} else if (rfd >= 0 && err != EACCES) {
		diag_errno("mshare_attach", err);
	}
	ok(rfd >= 0 && rwin == MAP_FAILED && err == EACCES,
	       "mshare_attach() without MSHARE_ATTACH_RDONLY through it fails with EACCES");

	/* 13: a read-only window through it */
	rwin = rfd < 0 ? MAP_FAILED :
		mshare_attach(rfd, 0, 0, NULL, MSHARE_ATTACH_RDONLY);
	if (rwin == MAP_FAILED)
		diag_errno("mshare_attach(MSHARE_ATTACH_RDONLY)", errno);
	ok = rwin != MAP_FAILED && check_pattern(rwin, OBJECT_SIZE);
	if (ok) {
		sig = child_access(rwin, true);
		ok = sig == SIGSEGV;
		if (!ok)
			diag("a write to the read-only window gave %d, not SIGSEGV",
			     sig);
	}
	if (rwin != MAP_FAILED && munmap(rwin, align)) {
		diag_errno("munmap", errno);
		ok = false;
	}
	if (rfd >= 0)
		close(rfd);
	ok(ok, "mshare_attach(MSHARE_ATTACH_RDONLY) through it shows the data, read-only");

	/* 14: behind a seccomp filter, mmap() stands in for the call */
	rfd = mshare_fd_rdonly(fd);
	if (rfd < 0)
		diag_errno("mshare_fd_rdonly", errno);
	ok = rfd >= 0;
	for (int i = 0; ok && i < 2; i++) {
		int error = i ? EPERM : ENOSYS, status;
		struct filtered f = {
			.fd = fd, .rfd = rfd, .len = OBJECT_SIZE,
			.size = align, .error = error,
		};

		r = run_child(attach_filtered, &f, &status) ? -1 :
			WIFEXITED(status) ? WEXITSTATUS(status) : 100;
		if (r == 0 && win[1] != 0x5b)
			diag("%s: the child's write through its window is not seen",
			     strerror(error));
		ok = r == 0 && win[1] == 0x5b;
		win[1] = pattern(1);
	}
	if (rfd >= 0)
		close(rfd);
	ok(ok, "mshare_attach() behind a filter that answers ENOSYS or EPERM maps the same pages with mmap() and refuses what the call refuses");

	/* 15: mshare_fd_rdwr: a read-write sharer, no owner */
	wfd = mshare_fd_rdwr(fd);
	if (wfd < 0)
		diag_errno("mshare_fd_rdwr", errno);
	r = wfd >= 0 ? mshare_info(wfd, &info) : -1;
	if (wfd >= 0 && r)
		diag_errno("mshare_info of the read-write sharer's descriptor", errno);
	ok(wfd >= 0 && (fcntl(wfd, F_GETFL) & O_ACCMODE) == O_RDWR &&
	       (fcntl(wfd, F_GETFD) & FD_CLOEXEC) && r == 0 && info.owned == 1 &&
	       info.owner_fd == 0,
	       "mshare_fd_rdwr() gives a close-on-exec read-write descriptor that is no owner file");

	/* 16: its window writes, its changes are refused */
	rwin = wfd < 0 ? MAP_FAILED : mshare_attach(wfd, 0, 0, NULL, 0);
	if (wfd >= 0 && rwin == MAP_FAILED)
		diag_errno("mshare_attach through the read-write sharer's descriptor", errno);
	ok = rwin != MAP_FAILED && check_pattern(rwin, OBJECT_SIZE);
	if (ok) {
		rwin[2] = 0x5c;
		ok = win[2] == 0x5c;
		if (!ok)
			diag("a write through the sharer's window is not seen in the owner's");
		win[2] = pattern(2);
	}
	if (ok) {
		r = mshare_protect(wfd, 0, OBJECT_SIZE, PROT_READ);
		err = errno;
		if (r == 0 || err != EPERM)
			diag("mshare_protect through the sharer's descriptor: %s",
			     r == 0 ? "succeeded" : strerror(err));
		ok = r == -1 && err == EPERM;
	}
	if (ok) {
		r = mshare_map_object(wfd, align - OBJECT_SIZE, OBJECT_SIZE,
				      PROT_READ, MAP_ANONYMOUS, -1, 0);
		err = errno;
		if (r == 0 || err != EPERM)
			diag("mshare_map_object through the sharer's descriptor: %s",
			     r == 0 ? "succeeded" : strerror(err));
		ok = r == -1 && err == EPERM;
	}
	if (rwin != MAP_FAILED && munmap(rwin, align)) {
		diag_errno("munmap", errno);
		ok = false;
	}
	ok(ok, "through it a read-write window shares the pages, mshare_protect() and mshare_map() fail with EPERM");

	/* 17: mshare_unmap */
	r = mshare_unmap(fd, 0, OBJECT_SIZE);
	if (r)
		diag_errno("mshare_unmap", errno);
	ok = r == 0;
	if (ok) {
		sig = child_access(win, false);
		ok = sig == SIGSEGV;
		if (!ok)
			diag("a read after mshare_unmap() gave %d, not SIGSEGV",
			     sig);
	}
	if (ok && mshare_info(fd, &info)) {
		diag_errno("mshare_info", errno);
		ok = false;
	} else if (ok && info.rss_pages + OBJECT_SIZE / page / 2 > rss) {
		diag("resident pages: %llu before mshare_unmap(), %llu after",
		     (unsigned long long)rss,
		     (unsigned long long)info.rss_pages);
		ok = false;
	}
	ok(ok, "mshare_unmap(): the window faults with SIGSEGV, the pages are freed");

	/* 18: the window goes, then the owner file */
	ok = munmap(win, align) == 0;
	if (!ok)
		diag_errno("munmap", errno);
	if (close(fd)) {
		diag_errno("close", errno);
		ok = false;
	}
	ok(ok, "munmap() of the window and close() of the owner file");

	/* 19: the sharer's descriptor does not keep the region */
	r = wfd >= 0 ? mshare_info(wfd, &info) : -1;
	if (wfd >= 0 && r)
		diag_errno("mshare_info after the owner file was closed", errno);
	rwin = wfd < 0 ? MAP_FAILED : mshare_attach(wfd, 0, 0, NULL, 0);
	err = errno;
	if (rwin != MAP_FAILED) {
		diag("mshare_attach after the owner file was closed succeeded");
		munmap(rwin, align);
	}
	ok(wfd >= 0 && r == 0 && info.owned == 0 && rwin == MAP_FAILED && err == ENXIO,
	       "once the owner file is closed the region has no owner: mshare-owned 0, mshare_attach() ENXIO");
	if (wfd >= 0)
		close(wfd);

	return tap_failed || tap_count != PLAN ? 1 : 0;
}
