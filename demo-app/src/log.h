/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Messages to stderr, prefixed with the program's name. An error is logged
 * once, by the function that has the context to say what went wrong; the
 * callers pass its -errno up without logging again.
 */

#include "macro.h"

void log_msg(const char *format, ...) _printf_(1, 2);

/* Logs "format: strerror(-error)" and returns error (a -errno value). */
int log_errno(int error, const char *format, ...) _printf_(2, 3);
