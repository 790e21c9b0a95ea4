/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The daemon's own parsers and formatters, and the common library's
 * helpers that most of its files use (../common/include/mshare-common).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mshare-common/clock.h"
#include "mshare-common/errno-name.h"
#include "mshare-common/escape.h"
#include "mshare-common/macro.h"
#include "mshare-common/region-name.h"
#include "mshare-common/size.h"
#include "mshare-common/strprintf.h"
#include "mshare-common/strv.h"

/* "yes"/"no", "true"/"false", "on"/"off", "1"/"0". Returns 0/1 or -EINVAL. */
int parse_boolean(const char *s);
/* A decimal number that fits unsigned 32 bits, no sign, no garbage. */
int parse_u32(const char *s, uint32_t *ret);

/* "64.0 MiB"-style, into buf (at least FORMAT_BYTES_MAX). */
#define FORMAT_BYTES_MAX 16
const char *format_bytes(char *buf, size_t len, uint64_t bytes);

/* "MSHARE_FD_<NAME>": upper case, every other character as '_'. */
char *region_env_name(const char *name);
