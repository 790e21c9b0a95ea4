// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdarg.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "mshare-common/escape.h"
#include "mshare-common/log.h"

enum log_target {
	LOG_TARGET_CONSOLE,	/* "ident: message" */
	LOG_TARGET_STDERR,	/* "<N>message", for journald/syslog bridges */
	LOG_TARGET_JOURNAL,	/* the program's journal sink */
};

/* The log settings are process-wide by nature, like syslog's. */
static struct {
	const char *ident;	/* NULL: the program's name */
	enum log_target target;
	log_journal_sink_t journal;
	int max_level;
} log_state = {
	.target = LOG_TARGET_CONSOLE,
	.max_level = LOG_INFO,
};

/* JOURNAL_STREAM=dev:ino names the stream journald connected to stderr. */
static bool stderr_is_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2)
		return false;
	if (fstat(STDERR_FILENO, &st) < 0)
		return false;
	return st.st_dev == (dev_t)dev && st.st_ino == (ino_t)ino;
}

void log_open(const char *ident)
{
	log_state.ident = ident;
	log_state.target = LOG_TARGET_CONSOLE;
	log_state.journal = NULL;
}

void log_open_service(const char *ident, log_journal_sink_t journal)
{
	log_state.ident = ident;
	log_state.journal = journal;
	if (journal && stderr_is_journal())
		log_state.target = LOG_TARGET_JOURNAL;
	else if (isatty(STDERR_FILENO))
		log_state.target = LOG_TARGET_CONSOLE;
	else
		log_state.target = LOG_TARGET_STDERR;
}

void log_set_max_level(int level)
{
	log_state.max_level = level;
}

int log_get_max_level(void)
{
	return log_state.max_level;
}

int log_level_from_string(const char *s)
{
	static const char *const names[] = {
		[LOG_EMERG] = "emerg", [LOG_ALERT] = "alert",
		[LOG_CRIT] = "crit",   [LOG_ERR] = "err",
		[LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
		[LOG_INFO] = "info",   [LOG_DEBUG] = "debug",
	};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (streq(s, names[i]))
			return (int)i;
	return -EINVAL;
}

static const char *log_ident(void)
{
	return log_state.ident ?: program_invocation_short_name;
}

static void log_write_stderr(int level, const char *msg)
{
	if (log_state.target == LOG_TARGET_STDERR)
		fprintf(stderr, "<%i>%s\n", level, msg);
	else
		fprintf(stderr, "%s: %s\n", log_ident(), msg);
}

int log_internal(int level, int error, const char *file, int line,
		 const char *func, const char *format, ...)
{
	char raw[2048], msg[2048];
	va_list ap;
	int saved_errno = errno;

	if (error < 0)
		error = -error;
	if (level > log_state.max_level)
		goto out;

	/* Make "%m" print the error that was passed in. */
	errno = error;
	va_start(ap, format);
	vsnprintf(raw, sizeof(raw), format, ap);
	va_end(ap);
	/* Messages name what clients sent: one line each, whatever they sent. */
	escape_control(raw, msg, sizeof(msg));

	if (log_state.target != LOG_TARGET_JOURNAL ||
	    log_state.journal(level, error, file, line, func, log_ident(), msg) < 0)
		log_write_stderr(level, msg);
out:
	errno = saved_errno;
	return -error;
}
