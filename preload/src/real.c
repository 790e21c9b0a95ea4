// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The real mmap(), munmap() and System V shared memory calls: dlsym(RTLD_NEXT)
 * once, raw system calls while that dlsym() is running on this thread.
 */

#include <dlfcn.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "real.h"

/* initial-exec: the library is preloaded, and this must not allocate. */
static __thread int resolving __attribute__((tls_model("initial-exec")));

enum { MMAP, MMAP64, MUNMAP, SHMGET, SHMAT, SHMDT, SHMCTL, NR_REAL };

static const char *const names[NR_REAL] = {
	[MMAP] = "mmap", [MMAP64] = "mmap64", [MUNMAP] = "munmap", [SHMGET] = "shmget",
	[SHMAT] = "shmat", [SHMDT] = "shmdt", [SHMCTL] = "shmctl",
};

static _Atomic(void *) real[NR_REAL];

/* The next definition of names[i], or NULL while this thread looks it up. */
static void *next(int i)
{
	void *p = atomic_load_explicit(&real[i], memory_order_acquire);

	if (p || resolving)
		return p;
	resolving = 1;
	p = dlsym(RTLD_NEXT, names[i]);
	resolving = 0;
	if (p)
		atomic_store_explicit(&real[i], p, memory_order_release);
	return p;
}

#define CALL(i, type, ...) ((type)next(i))(__VA_ARGS__)

void *real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (next(MMAP))
		return CALL(MMAP, void *(*)(void *, size_t, int, int, int, off_t), addr, len, prot,
			    flags, fd, off);
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

void *real_mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	if (next(MMAP64))
		return CALL(MMAP64, void *(*)(void *, size_t, int, int, int, off64_t), addr, len,
			    prot, flags, fd, off);
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

int real_munmap(void *addr, size_t len)
{
	if (next(MUNMAP))
		return CALL(MUNMAP, int (*)(void *, size_t), addr, len);
	return (int)syscall(SYS_munmap, addr, len);
}

int real_shmget(key_t key, size_t size, int flags)
{
	if (next(SHMGET))
		return CALL(SHMGET, int (*)(key_t, size_t, int), key, size, flags);
	return (int)syscall(SYS_shmget, key, size, flags);
}

void *real_shmat(int id, const void *addr, int flags)
{
	if (next(SHMAT))
		return CALL(SHMAT, void *(*)(int, const void *, int), id, addr, flags);
	return (void *)syscall(SYS_shmat, id, addr, flags);
}

int real_shmdt(const void *addr)
{
	if (next(SHMDT))
		return CALL(SHMDT, int (*)(const void *), addr);
	return (int)syscall(SYS_shmdt, addr);
}

int real_shmctl(int id, int cmd, struct shmid_ds *buf)
{
	if (next(SHMCTL))
		return CALL(SHMCTL, int (*)(int, int, struct shmid_ds *), id, cmd, buf);
	return (int)syscall(SYS_shmctl, id, cmd, buf);
}
