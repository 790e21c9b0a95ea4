/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the kernel has mapped, as opposed to what the library's table
 * remembers: a program can unmap or replace a window by ways the library
 * does not see (the munmap or mmap system call itself, mremap()), and the
 * table's entry then describes memory that is no longer the window. Before
 * the library acts on a window's whole range from the table, it asks.
 *
 * /proc/self/maps, read with read(2) into the stack: no stdio and no
 * allocation, which could map memory through the interposed calls while
 * the table lock is held. (PROCMAP_QUERY would spare reading the list, but
 * came with Linux 6.11 and is not in the build's headers; a window is
 * unmapped rarely, and the list is short.)
 */

#include <stdint.h>

/*
 * Whether one mapping covers exactly [start, end) and maps fd's file from
 * offset 0, as a window onto a region does: 1, 0, or -errno if the list
 * cannot be read.
 */
int maps_shows(uintptr_t start, uintptr_t end, int fd);
