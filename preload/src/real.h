/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The functions the library interposes, as the next object in the lookup
 * order (the C library, or another preloaded library) defines them:
 * dlsym(RTLD_NEXT), resolved on first use. While a thread is inside that
 * dlsym(), a call that comes back to the library (an allocator that maps
 * memory through the PLT) goes straight to the system call instead.
 * Everything the library does on a program's behalf goes through these,
 * never through the interposed names.
 */

#include <stddef.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/types.h>

void *real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
void *real_mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off);
int real_munmap(void *addr, size_t len);
int real_shmget(key_t key, size_t size, int flags);
void *real_shmat(int id, const void *addr, int flags);
int real_shmdt(const void *addr);
int real_shmctl(int id, int cmd, struct shmid_ds *buf);
