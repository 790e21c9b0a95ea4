/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the library says on stderr, and why it could not use a region.
 *
 * Everything is written with one write(2) of a line formatted on the
 * stack: no stdio, no allocation, so that nothing here maps memory through
 * the interposed calls or takes a lock of the C library's.
 */

#include "mshare-common/macro.h"

#define PRELOAD_NAME "mshare-preload"

/* Why a region could not be used: -errno, for a strict failure, and a
 * sentence for the message. */
struct why {
	int error;
	char text[512];
};

/* Sets *w and returns error (a -errno). */
_printf_(3, 4) int why_set(struct why *w, int error, const char *format, ...);

/*
 * "CALL: strerror" with a hint for the errors a region's calls give where
 * mshare cannot work (ENOSYS, EPERM); returns error.
 */
int why_call(struct why *w, int error, const char *call);

/*
 * The first call in this process that could not use a region says so on
 * stderr (what: "mmap of 134217728 bytes"), and later ones do not:
 *   mshare-preload: WHAT falls back to plain shared memory: WHY
 * or, under MSHARE_PRELOAD_STRICT=1,
 *   mshare-preload: WHAT fails (MSHARE_PRELOAD_STRICT=1): WHY
 */
void report_fallback(const char *what, const struct why *w, int strict);

/* A served call that fails (no fallback is possible): every time,
 *   mshare-preload: WHAT fails: WHY */
void report_failure(const char *what, const struct why *w);

/* The first region served in this process, unless MSHARE_PRELOAD_QUIET. */
_printf_(1, 2) void report_served(const char *format, ...);

/* A line on stderr, prefixed with "mshare-preload: ". */
_printf_(1, 2) void report_line(const char *format, ...);
