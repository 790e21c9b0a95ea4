// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What the fake of the mshare calls (libmshare/tests/fake-mshare.c) does
 * not do as the kernel does, for test-fake.sh. Preloaded after the library
 * (LD_PRELOAD="libmshare-preload-fake.so kernel-shim.so"), it is the
 * library's real munmap() and mmap() (dlsym(RTLD_NEXT)):
 *
 *   - munmap() of part of a window fails with EINVAL, as a window stays
 *     whole (mshare_attach(2)). On the fake a window is a shared mapping of
 *     a memfd named "fake-mshare".
 *   - With $SHIM_FOREIGN_ATTACH naming the file that the fake reads
 *     mshare-attached from ($FAKE_MSHARE_ATTACHED), a client that does not
 *     use the library attaches the first window's region as soon as the
 *     window is made: the file then says 2, and the client's own mapping
 *     of the region shows at exit whether the library cleared it under
 *     the client ("kernel-shim: foreign client: byte 0 was N, is M").
 */

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FAKE_NAME "/memfd:fake-mshare"

static unsigned char *foreign;
static int foreign_was = -1;

/* Whether [a, b) cuts a window of the fake: meets one without covering it. */
static bool cuts_window(uintptr_t a, uintptr_t b)
{
	FILE *f = fopen("/proc/self/maps", "re");
	uintptr_t start, end;
	char line[512];
	bool cut = false;

	if (!f)
		return false;
	while (!cut && fgets(line, sizeof(line), f))
		cut = sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &start, &end) == 2 &&
		      strstr(line, FAKE_NAME) && start < b && a < end && (start < a || end > b);
	fclose(f);
	return cut;
}

int munmap(void *addr, size_t len)
{
	int (*next)(void *, size_t) = (int (*)(void *, size_t))dlsym(RTLD_NEXT, "munmap");
	uintptr_t a = (uintptr_t)addr, b = a + ((len + 4095) & ~(size_t)4095);

	if (len && cuts_window(a, b)) {
		errno = EINVAL;
		return -1;
	}
	return next(addr, len);
}

static bool is_fake_region(int fd)
{
	char path[64], target[256];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = '\0';
	return !strncmp(target, FAKE_NAME, strlen(FAKE_NAME));
}

/* The other client: its own mapping of the region, and mshare-attached 2. */
static void attach_foreign(int fd, size_t len)
{
	const char *count = getenv("SHIM_FOREIGN_ATTACH");
	void *(*next)(void *, size_t, int, int, int, off_t) =
		(void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
	FILE *f;
	void *p;

	if (!count || foreign)
		return;
	p = next(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return;
	foreign = p;
	foreign_was = foreign[0];
	f = fopen(count, "we");
	if (f) {
		fputs("2\n", f);
		fclose(f);
	}
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *(*next)(void *, size_t, int, int, int, off_t) =
		(void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
	void *p = next(addr, len, prot, flags, fd, off);

	if (p != MAP_FAILED && fd >= 0 && (flags & MAP_TYPE) == MAP_SHARED && is_fake_region(fd))
		attach_foreign(fd, len);
	return p;
}

__attribute__((destructor)) static void foreign_says(void)
{
	if (foreign)
		fprintf(stderr, "kernel-shim: foreign client: byte 0 was %d, is %d\n", foreign_was,
			foreign[0]);
}
