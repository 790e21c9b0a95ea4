// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Host unit test of libmshare: the fdinfo parser behind mshare_info() on
 * well-formed and malformed text, the argument checks of the conveniences
 * that need no mshare kernel, and mshare_attach()'s stand-in for a call the
 * kernel does not answer (ENOSYS): on a host without the mshare calls it
 * must not map a descriptor that is not a region.
 * TAP output, then a summary line; exit status 1 if anything failed.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/mman.h>
#include <sys/syscall.h>

#include "fdinfo.h"
#include "mshare-common/errno-name.h"
#include "mshare-common/tap.h"
#include "mshare.h"
#include "mshare_sysnum.h"


/* What the kernel prints for a region, before and after the mshare lines. */
#define HEAD "pos:\t0\nflags:\t02100002\nmnt_id:\t15\nino:\t2048\n"
#define BODY							\
	"mshare-size:\t549755813888\n"				\
	"mshare-align:\t549755813888\n"				\
	"mshare-owned:\t1\n"					\
	"mshare-owner-fd:\t1\n"					\
	"mshare-attached:\t3\n"					\
	"mshare-windows:\t4\n"					\
	"mshare-rss:\t512\n"					\
	"mshare-pgtables:\t8192\n"

/* Parse len bytes of text (strlen(text) if len is 0). */
static int parse(const char *text, size_t len, struct mshare_fdinfo *out)
{
	FILE *f;
	int r;

	if (!len)
		len = strlen(text);
	/* fmemopen() of an empty buffer fails: an empty file instead. */
	f = len ? fmemopen((void *)text, len, "r") : tmpfile();
	if (!f) {
		perror("fmemopen");
		exit(2);
	}
	r = mshare__fdinfo_parse(f, out);
	fclose(f);
	return r;
}

/* Field by field: the struct has padding, which assignment need not copy. */
static bool same(const struct mshare_fdinfo *a, const struct mshare_fdinfo *b)
{
	return a->size == b->size && a->align == b->align &&
	       a->owned == b->owned && a->owner_fd == b->owner_fd &&
	       a->attached == b->attached && a->windows == b->windows &&
	       a->rss_pages == b->rss_pages &&
	       a->pgtables_bytes == b->pgtables_bytes;
}

static const struct mshare_fdinfo poison = {
	.size = 0xdeadbeef, .align = 0xdeadbeef, .owned = -7, .owner_fd = -7, .attached = 77,
	.windows = 77,
	.rss_pages = 0xdeadbeef, .pgtables_bytes = 0xdeadbeef,
};

/* The text parses to the given values. */
static void good(const char *what, const char *text, uint64_t size,
		 uint64_t align, int owned, int owner_fd, unsigned int attached,
		 unsigned int windows, uint64_t rss, uint64_t pgtables)
{
	struct mshare_fdinfo out = poison;
	int r = parse(text, 0, &out);

	ok(r == 0 && out.size == size && out.align == align &&
	       out.owned == owned && out.owner_fd == owner_fd &&
	       out.attached == attached && out.windows == windows &&
	       out.rss_pages == rss && out.pgtables_bytes == pgtables,
	       "parses %s", what);
	if (r)
		printf("# returned %d (%s)\n", r, strerror(-r));
}

/* The text (len bytes, or up to its NUL) fails with -err, *out untouched. */
static void bad(const char *what, const char *text, size_t len, int err)
{
	struct mshare_fdinfo out = poison;
	int r = parse(text, len, &out);

	ok(r == -err && same(&out, &poison),
	       "rejects %s with %s", what, errno_to_name(err));
	if (r != -err)
		printf("# returned %d (%s)\n", r, r ? strerror(-r) : "success");
}

/* A public call fails with -1 and errno err. */
static void fails(const char *what, long r, int err)
{
	int saved = errno;

	ok(r == -1 && saved == err, "%s fails with %s", what,
	       errno_to_name(err));
	if (r != -1 || saved != err)
		printf("# returned %ld, errno %d (%s)\n", r, saved,
		       strerror(saved));
}

static void test_parser(void)
{
	char *long_line;
	char *text;
	size_t n;

	good("a region's fdinfo", HEAD BODY, 549755813888ULL, 549755813888ULL,
	     1, 1, 3, 4, 512, 8192);
	good("keys in any order, unknown lines and keys",
	     "mshare-pgtables:\t0\nmshare-rss:\t0\neventfd-count:\t1\n"
	     "mshare-windows:\t0\nmshare-future:\tnot a number\n"
	     "mshare-owner-fd:\t0\nmshare-attached:\t0\nmshare-owned:\t0\n"
	     "mshare-size:\t0\nmshare-owners:\t3\n"
	     "mshare-sizes:\tx\nmshare-align:\t4096\nmshare-aligns:\t1\n",
	     0, 4096, 0, 0, 0, 0, 0, 0);
	good("a sharer's descriptor of a live region",
	     HEAD "mshare-size:\t4096\nmshare-align:\t4096\nmshare-owned:\t1\n"
	     "mshare-owner-fd:\t0\nmshare-attached:\t1\nmshare-windows:\t2\n"
	     "mshare-rss:\t1\nmshare-pgtables:\t4096\n",
	     4096, 4096, 1, 0, 1, 2, 1, 4096);
	good("the largest values",
	     "mshare-size:\t18446744073709551615\n"
	     "mshare-align:\t18446744073709551615\n"
	     "mshare-owned:\t1\n"
	     "mshare-owner-fd:\t1\n"
	     "mshare-attached:\t4294967295\n"
	     "mshare-windows:\t4294967295\n"
	     "mshare-rss:\t18446744073709551615\n"
	     "mshare-pgtables:\t18446744073709551615\n",
	     UINT64_MAX, UINT64_MAX, 1, 1, 4294967295U, 4294967295U,
	     UINT64_MAX, UINT64_MAX);
	/* Kernels from before ownership moved to the descriptor. */
	good("an older kernel's mshare-owner: owned, owner_fd not told",
	     HEAD "mshare-size:\t0\nmshare-align:\t4096\nmshare-owner:\t42\n"
	     "mshare-attached:\t0\nmshare-windows:\t0\nmshare-rss:\t0\n"
	     "mshare-pgtables:\t0\n",
	     0, 4096, 1, -1, 0, 0, 0, 0);
	good("an older kernel's region whose owner is gone",
	     HEAD "mshare-size:\t0\nmshare-align:\t4096\nmshare-owner:\t0\n"
	     "mshare-attached:\t0\nmshare-windows:\t0\nmshare-rss:\t0\n"
	     "mshare-pgtables:\t0\n",
	     0, 4096, 0, -1, 0, 0, 0, 0);
	good("both formats: the ownership lines win",
	     HEAD BODY "mshare-owner:\t0\n", 549755813888ULL, 549755813888ULL,
	     1, 1, 3, 4, 512, 8192);

	/* A line longer than any buffer a parser might guess. */
	n = 100000;
	long_line = malloc(n + 1);
	text = malloc(n + sizeof(HEAD BODY) + 16);
	if (!long_line || !text) {
		perror("malloc");
		exit(2);
	}
	memset(long_line, 'x', n);
	long_line[n] = '\0';
	sprintf(text, "lock:\t%s\n" HEAD BODY, long_line);
	good("after a 100000-byte line", text, 549755813888ULL,
	     549755813888ULL, 1, 1, 3, 4, 512, 8192);
	free(long_line);
	free(text);

	bad("an empty file", "", 0, EBADF);
	bad("the fdinfo of another file", HEAD, 0, EBADF);
	bad("a missing key", HEAD
	    "mshare-size:\t0\nmshare-align:\t4096\nmshare-owned:\t1\n"
	    "mshare-owner-fd:\t1\nmshare-attached:\t0\nmshare-windows:\t0\n"
	    "mshare-rss:\t0\n", 0, EPROTO);
	bad("a missing mshare-align (the fdinfo of an older kernel)", HEAD
	    "mshare-size:\t0\nmshare-owner:\t1\nmshare-attached:\t0\n"
	    "mshare-windows:\t0\nmshare-rss:\t0\nmshare-pgtables:\t0\n", 0,
	    EPROTO);
	bad("mshare-owned without mshare-owner-fd", HEAD
	    "mshare-size:\t0\nmshare-align:\t4096\nmshare-owned:\t1\n"
	    "mshare-attached:\t0\nmshare-windows:\t0\nmshare-rss:\t0\n"
	    "mshare-pgtables:\t0\n", 0, EPROTO);
	bad("mshare-owner-fd without mshare-owned, even with mshare-owner", HEAD
	    "mshare-size:\t0\nmshare-align:\t4096\nmshare-owner-fd:\t1\n"
	    "mshare-owner:\t1\nmshare-attached:\t0\nmshare-windows:\t0\n"
	    "mshare-rss:\t0\nmshare-pgtables:\t0\n", 0, EPROTO);
	bad("no ownership line at all", HEAD
	    "mshare-size:\t0\nmshare-align:\t4096\nmshare-attached:\t0\n"
	    "mshare-windows:\t0\nmshare-rss:\t0\nmshare-pgtables:\t0\n", 0,
	    EPROTO);
	bad("a repeated mshare-owner-fd", HEAD BODY "mshare-owner-fd:\t0\n", 0,
	    EPROTO);
	bad("a repeated mshare-align", HEAD BODY "mshare-align:\t4096\n", 0,
	    EPROTO);
	bad("a repeated key", HEAD BODY "mshare-rss:\t1\n", 0, EPROTO);
	bad("a space for the tab", HEAD BODY "mshare-size: 4096\n", 0,
	    EPROTO);
	bad("two tabs", "mshare-size:\t\t4096\n", 0, EPROTO);
	bad("no separator", "mshare-size\t4096\n", 0, EPROTO);
	bad("an empty value", "mshare-size:\t\n", 0, EPROTO);
	bad("a negative number", "mshare-rss:\t-1\n", 0, EPROTO);
	bad("a plus sign", "mshare-rss:\t+1\n", 0, EPROTO);
	bad("a leading space", "mshare-rss:\t 1\n", 0, EPROTO);
	bad("a trailing space", "mshare-rss:\t1 \n", 0, EPROTO);
	bad("a unit after the number", "mshare-rss:\t1kB\n", 0, EPROTO);
	bad("a hexadecimal number", "mshare-size:\t0x10\n", 0, EPROTO);
	bad("a size past 2^64 - 1", "mshare-size:\t18446744073709551616\n", 0,
	    EPROTO);
	bad("an alignment past 2^64 - 1",
	    "mshare-align:\t18446744073709551616\n", 0, EPROTO);
	bad("a unit after the alignment", "mshare-align:\t512G\n", 0, EPROTO);
	bad("an owner past INT_MAX", "mshare-owner:\t2147483648\n", 0, EPROTO);
	bad("mshare-owned past 1", "mshare-owned:\t2\n", 0, EPROTO);
	bad("mshare-owner-fd past 1", "mshare-owner-fd:\t2\n", 0, EPROTO);
	bad("attached past UINT_MAX", "mshare-attached:\t4294967296\n", 0,
	    EPROTO);
	bad("windows past UINT_MAX", "mshare-windows:\t4294967296\n", 0,
	    EPROTO);
	bad("a last line without a newline", HEAD
	    "mshare-size:\t0\nmshare-align:\t4096\nmshare-owned:\t1\n"
	    "mshare-owner-fd:\t1\nmshare-attached:\t0\nmshare-windows:\t0\n"
	    "mshare-rss:\t0\nmshare-pgtables:\t0", 0, EPROTO);
	bad("a NUL inside a value", "mshare-rss:\t1\0002\n",
	    sizeof("mshare-rss:\t1\0002\n") - 1, EPROTO);
	bad("a NUL inside another line", HEAD BODY "pos:\t\0\n",
	    sizeof(HEAD BODY "pos:\t\0\n") - 1, EPROTO);
}

static void test_calls(void)
{
	struct mshare_fdinfo info = poison;
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	int closed = dup(fd);

	if (fd < 0 || closed < 0 || close(closed) < 0) {
		perror("/dev/null");
		exit(2);
	}

	errno = 0;
	fails("mshare_info(-1)", mshare_info(-1, &info), EBADF);
	errno = 0;
	fails("mshare_info() of a closed descriptor",
	      mshare_info(closed, &info), EBADF);
	errno = 0;
	fails("mshare_info() of /dev/null", mshare_info(fd, &info), EBADF);
	ok(same(&info, &poison),
	       "mshare_info() leaves *out alone on failure");
	errno = 0;
	fails("mshare_alignment() of /dev/null", mshare_alignment(fd), EBADF);
	errno = 0;
	fails("mshare_alignment(-1)", mshare_alignment(-1), EBADF);
	errno = 0;
	fails("mshare_fd_rdonly() of /dev/null", mshare_fd_rdonly(fd), EBADF);
	errno = 0;
	fails("mshare_fd_rdonly() of a closed descriptor",
	      mshare_fd_rdonly(closed), EBADF);
	errno = 0;
	fails("mshare_fd_rdwr() of /dev/null", mshare_fd_rdwr(fd), EBADF);
	errno = 0;
	fails("mshare_fd_rdwr() of a closed descriptor",
	      mshare_fd_rdwr(closed), EBADF);
	/* Refused before any system call. */
	errno = 0;
	fails("mshare_map_object() at a negative region offset",
	      mshare_map_object(fd, -4096, 4096, PROT_READ, MAP_ANONYMOUS, -1,
				0), EINVAL);
	errno = 0;
	fails("mshare_map_object() at a negative backing offset",
	      mshare_map_object(fd, 0, 4096, PROT_READ, 0, fd, -4096), EINVAL);
	close(fd);
}

/* The number of lines of /proc/self/maps: how many mappings there are. */
static int count_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	int c, n = 0;

	if (!f)
		return -1;
	while ((c = getc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

static void test_attach_fallback(void)
{
	int memfd = memfd_create("not-a-region", MFD_CLOEXEC);
	int before = count_maps();
	void *p;

	if (syscall(__NR_mshare_attach, -1, 0L, 0UL, 0UL, 0U) != -1 ||
	    errno != ENOSYS) {
		printf("# this kernel has mshare_attach: skipping the ENOSYS checks\n");
		close(memfd);
		return;
	}
	ok(memfd >= 0 && ftruncate(memfd, 1 << 20) == 0,
	       "a 1 MiB memfd to attach");
	errno = 0;
	p = mshare_attach(memfd, 0, 0, NULL, 0);
	ok(p == MAP_FAILED && errno == ENOSYS && before > 0 &&
	       count_maps() == before,
	       "mshare_attach() of a memfd without the call: ENOSYS, nothing mapped");
	errno = 0;
	p = mshare_attach(-1, 0, 0, NULL, 0);
	ok(p == MAP_FAILED && errno == ENOSYS,
	       "mshare_attach(-1) without the call: ENOSYS");
	close(memfd);
}

int main(void)
{
	test_parser();
	test_calls();
	test_attach_fallback();
	return tap_finish();
}
