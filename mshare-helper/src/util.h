/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"

typedef uint64_t usec_t;
#define USEC_PER_SEC ((usec_t)1000000)
#define USEC_PER_MSEC ((usec_t)1000)
#define USEC_INFINITY ((usec_t)UINT64_MAX)

/* CLOCK_MONOTONIC in microseconds. */
usec_t now_usec(void);

/* "64M", "2G", "4096": decimal with an optional K, M, G, T or P suffix (powers of 1024). */
int parse_size(const char *s, uint64_t *ret);
/* "yes"/"no", "true"/"false", "on"/"off", "1"/"0". Returns 0/1 or -EINVAL. */
int parse_boolean(const char *s);
/* A decimal number that fits unsigned 32 bits, no sign, no garbage. */
int parse_u32(const char *s, uint32_t *ret);

/* "64.0 MiB"-style, into buf (at least FORMAT_BYTES_MAX). */
#define FORMAT_BYTES_MAX 16
const char *format_bytes(char *buf, size_t len, uint64_t bytes);

/* Region names: 1-64 of [A-Za-z0-9_.-], the first one alphanumeric. */
#define REGION_NAME_MAX 64
bool region_name_is_valid(const char *name);
/* "MSHARE_FD_<NAME>": upper case, every other character as '_'. */
char *region_env_name(const char *name);

/* "ENOENT" <-> ENOENT. errno_from_name() returns 0 for unknown names. */
const char *errno_to_name(int error);
int errno_from_name(const char *name);

/*
 * What a client sent, fit for one log line: control characters (newline,
 * escape sequences, C1 controls), DEL, backslash and bytes that are not
 * valid UTF-8 as C escapes ("\\n", "\\x1b", "\\\\", "\\xff"), valid UTF-8
 * and everything else as it is. In place in buf (at most len bytes,
 * cut short with "..." if it does not fit); returns buf. Log sinks pass
 * every message through it, so that no name a client chose can forge a line.
 */
char *escape_control(const char *s, char *buf, size_t len);

/* A formatted string, or NULL if memory ran out (unlike asprintf(), whose
 * pointer is undefined then, which cleanup handlers must not free). */
char *strprintf(const char *format, ...) _printf_(1, 2);
char *vstrprintf(const char *format, va_list ap) _printf_(1, 0);
/* For functions that explain their failures in a char **ret_error: sets it
 * to the formatted message and returns r (a -errno), or -ENOMEM with
 * *ret_error NULL if the message cannot be allocated. */
int error_set(char **ret_error, int r, const char *format, ...) _printf_(3, 4);

/* NULL-terminated string vectors. */
void strv_free(char **l);
static inline void strv_freep(char ***l)
{
	strv_free(*l);
}
#define _cleanup_strv_free_ _cleanup_(strv_freep)
size_t strv_length(char *const *l);
int strv_extend(char ***l, const char *s);
int strv_extendf(char ***l, const char *format, ...) _printf_(2, 3);
bool strv_contains(char *const *l, const char *s);
char **strv_copy(char *const *l);
bool strv_equal(char *const *a, char *const *b);
/* Split at blanks, as the list-valued configuration keys are. */
int strv_split_blanks(const char *s, char ***ret);
