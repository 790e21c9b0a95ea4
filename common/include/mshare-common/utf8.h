/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * UTF-8 as JSON (RFC 8259) and the journal take it: no overlong forms, no
 * surrogates, nothing past U+10FFFF. The protocol carries strings in JSON,
 * which cannot carry other bytes; the configuration parser refuses them for
 * that reason, and protocol.c tells them apart from a lack of memory.
 */

#include <stdbool.h>
#include <stddef.h>

/* The length of the valid UTF-8 sequence of 2 to 4 bytes at s, or 0 (an
 * ASCII byte, the end, or not valid UTF-8). */
size_t utf8_sequence_length(const unsigned char *s);
/* Whether the NUL-terminated s is valid UTF-8 throughout. */
bool utf8_is_valid(const char *s);
