/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Sizes as the environment and mshare-run's options spell them: a decimal
 * number of bytes with an optional suffix K, M, G, T or P (powers of 1024,
 * either case), which may be followed by "iB" or "B": 33554432, 32M, 32MB,
 * 1GiB. Shared by the library and mshare-run.
 */

#include <stdint.h>

/* 0, -EINVAL (not a size) or -ERANGE (does not fit in 64 bits). */
int preload_parse_size(const char *s, uint64_t *ret);

/* 0 if s is a region name as mshare-owner knows them (1 to 64 of
 * A-Z a-z 0-9 _ . -, starting with a letter or a digit), else -EINVAL. */
int preload_check_region_name(const char *s);
