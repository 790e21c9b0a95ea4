/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Logging for the daemon and the tools: one convention. A function that
 * fails returns -errno; the place that handles the error (and has the
 * context to say what went wrong) logs it, once, and the log_*_errno()
 * functions return -abs(error) so that it can log and return in one
 * statement:
 *
 *	return log_error_errno(r, "Failed to map region '%s': %m", name);
 *
 * "%m" prints the error passed in, not whatever errno happens to be. Every
 * message goes through escape_control(): it stays one line, whatever a
 * client put in it.
 *
 * Where it goes (the sink):
 *  - a tool (the default, or log_open()): "IDENT: message" on stderr, IDENT
 *    the program's name unless log_open() says otherwise;
 *  - a service (log_open_service()): the journal when stderr is connected
 *    to journald (through the sink the program passes, so that only the
 *    programs that log there link libsystemd), otherwise stderr with "<N>"
 *    priority prefixes when stderr is not a terminal (the sd-daemon(3)
 *    convention, understood by journald and syslog bridges), and as a tool
 *    does on a terminal.
 *
 * The hook's one failure report (crun-hook/src/report.c) and the preload
 * library's lines (preload/src/report.c, which may not use stdio) are
 * sinks of their own and do not come through here.
 */

#include <errno.h>
#include <syslog.h>

#include "mshare-common/macro.h"

/* Writes one message (escaped already) to the journal; < 0 if it could not. */
typedef int (*log_journal_sink_t)(int level, int error, const char *file, int line,
				  const char *func, const char *ident, const char *msg);

void log_open(const char *ident);
void log_open_service(const char *ident, log_journal_sink_t journal);
void log_set_max_level(int level);
int log_get_max_level(void);
/* "err", "warning", "info", "debug", ...: a LOG_* level, or -EINVAL. */
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
