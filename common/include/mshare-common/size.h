/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Sizes, as every option, environment variable and configuration key of
 * the userspace spells them: the one rule.
 *
 * A decimal number of bytes, then optionally one of K, M, G, T or P
 * (either case; binary multiples: K is 1024), which may be followed by "iB"
 * or "B"; a bare "B" may follow the number too. "4096", "512B", "64k",
 * "32M", "32MB", "1GiB". Nothing else: no sign, no blanks, no fractions, no
 * hexadecimal.
 *
 * 0, -EINVAL for anything else (and for NULL), -ERANGE when the size does
 * not fit in 64 bits. *ret is only written on success. 0 is a size here:
 * whether it is allowed is the caller's check.
 */

#include <stdint.h>

int parse_size(const char *s, uint64_t *ret);
