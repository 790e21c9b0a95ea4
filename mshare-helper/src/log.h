/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Logging: to the journal (native protocol, with priority, errno and code
 * location fields) when stderr is connected to journald, otherwise to
 * stderr, with "<N>" priority prefixes when stderr is not a terminal (the
 * sd-daemon(3) convention, understood by journald and syslog bridges).
 *
 * The log_*_errno() functions return -abs(error), so that the place that
 * handles an error can log it and return it in one statement:
 *
 *	return log_error_errno(r, "Failed to map region '%s': %m", name);
 *
 * "%m" prints the error passed in, not whatever errno happens to be.
 */

#include <syslog.h>

#include "macro.h"

void log_open(const char *ident);
void log_set_max_level(int level);
int log_get_max_level(void);
int log_level_from_string(const char *s);

int log_internal(int level, int error, const char *file, int line,
		 const char *func, const char *format, ...) _printf_(6, 7);

#define log_full_errno(level, error, ...) \
	log_internal(level, error, __FILE__, __LINE__, __func__, __VA_ARGS__)

#define log_debug(...) log_full_errno(LOG_DEBUG, 0, __VA_ARGS__)
#define log_info(...) log_full_errno(LOG_INFO, 0, __VA_ARGS__)
#define log_notice(...) log_full_errno(LOG_NOTICE, 0, __VA_ARGS__)
#define log_warning(...) log_full_errno(LOG_WARNING, 0, __VA_ARGS__)
#define log_error(...) log_full_errno(LOG_ERR, 0, __VA_ARGS__)

#define log_debug_errno(e, ...) log_full_errno(LOG_DEBUG, e, __VA_ARGS__)
#define log_info_errno(e, ...) log_full_errno(LOG_INFO, e, __VA_ARGS__)
#define log_notice_errno(e, ...) log_full_errno(LOG_NOTICE, e, __VA_ARGS__)
#define log_warning_errno(e, ...) log_full_errno(LOG_WARNING, e, __VA_ARGS__)
#define log_error_errno(e, ...) log_full_errno(LOG_ERR, e, __VA_ARGS__)

/* Out of memory: logged once where it is noticed. */
#define log_oom() log_error_errno(ENOMEM, "Out of memory.")
