/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Formatted strings on the heap, and the error messages made of them. */

#include <stdarg.h>

#include "mshare-common/macro.h"

/* A formatted string, or NULL if memory ran out (unlike asprintf(), whose
 * pointer is undefined then, which cleanup handlers must not free). */
char *strprintf(const char *format, ...) _printf_(1, 2);
char *vstrprintf(const char *format, va_list ap) _printf_(1, 0);

/* For functions that explain their failures in a char **ret_error: sets it
 * to the formatted message and returns r (a -errno), or -ENOMEM with
 * *ret_error NULL if the message cannot be allocated. */
int error_set(char **ret_error, int r, const char *format, ...) _printf_(3, 4);
