/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Parsing option values, clocks, and probing memory. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* A decimal unsigned number, the whole string. -EINVAL or -ERANGE. */
int parse_u64(const char *s, uint64_t *out);

/* A non-negative decimal number, the whole string ("1.5"). -EINVAL. */
int parse_double(const char *s, double *out);

/* A file descriptor number (0 to INT_MAX). -EINVAL. */
int parse_fd(const char *s, int *out);

/* Nanoseconds on clock id (CLOCK_MONOTONIC, CLOCK_BOOTTIME). */
uint64_t clock_ns(clockid_t id);

static inline double ns_to_ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

/*
 * Whether the byte at addr can be read, found out without touching it
 * from user space: the kernel copies it into a pipe, and says EFAULT where
 * a load would have raised SIGSEGV or SIGBUS. 0, -EFAULT, or another
 * -errno if the probe itself failed.
 */
int probe_readable(const void *addr);
