/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The library's settings, from the environment, read once per process (on
 * the first call that might be served):
 *
 *   MSHARE_PRELOAD_MIN_SIZE  the threshold (default 32M; mshare-common/size.h); never
 *                            less than a page
 *   MSHARE_PRELOAD_REGION    a region of mshare-owner to serve from, by
 *                            name; unset: a region of the process's own
 *   MSHARE_PRELOAD_STRICT    1: fail instead of falling back
 *   MSHARE_PRELOAD_QUIET     1: no notice when a region is first used
 *
 * (MSHARE_SOCKET, the daemon's socket, is libmshare's: mshare_request(3).)
 */

#include <stdbool.h>
#include <stdint.h>

#include "mshare-common/region-name.h"

#define PRELOAD_DEFAULT_MIN_SIZE (UINT64_C(32) << 20)

struct config {
	uint64_t min_size;
	char region[REGION_NAME_MAX + 1];	/* "" for a region of its own */
	bool strict;
	bool quiet;
	int error;		/* -EINVAL if a variable's value is invalid */
	char error_text[256];	/* which variable, which value */
};

/*
 * Fills *c from the four values (NULL: unset). A bad value leaves the
 * default in place and is described in error and error_text (the first
 * one only); STRICT is read first, so that it applies to the others.
 */
void config_parse(struct config *c, const char *min_size, const char *region,
		  const char *strict, const char *quiet);

/* The settings of this process, read from the environment once; the
 * threshold is at least a page. */
const struct config *config_get(void);
