/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Region names (docs/protocol.md): 1 to REGION_NAME_MAX of A-Z a-z 0-9 _ .
 * -, the first a letter or a digit. What the daemon's configuration, the
 * protocol, the hook's annotation and the preload library's environment
 * accept alike.
 */

#include <stdbool.h>

#define REGION_NAME_MAX 64

bool region_name_is_valid(const char *name);
