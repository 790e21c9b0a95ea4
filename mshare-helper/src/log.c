/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>

#include "log.h"
#include "util.h"

enum log_target {
	LOG_TARGET_CONSOLE,	/* a terminal: "ident: message" */
	LOG_TARGET_STDERR,	/* "<N>message", for journald/syslog bridges */
	LOG_TARGET_JOURNAL,	/* native journal protocol */
};

/* The log settings are process-wide by nature, like syslog's. */
static struct {
	const char *ident;
	enum log_target target;
	int max_level;
} log_state = {
	.ident = "mshare",
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
	if (stderr_is_journal())
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

static void log_write_stderr(int level, const char *msg)
{
	if (log_state.target == LOG_TARGET_STDERR)
		fprintf(stderr, "<%i>%s\n", level, msg);
	else
		fprintf(stderr, "%s: %s\n", log_state.ident, msg);
}

static int log_write_journal(int level, int error, const char *file,
			     int line, const char *func, const char *msg)
{
	char f_prio[32], f_errno[32], f_line[32];
	_cleanup_free_ char *f_msg = NULL, *f_file = NULL, *f_func = NULL,
			    *f_ident = NULL;
	struct iovec iov[8];
	size_t n = 0;

	f_msg = strprintf("MESSAGE=%s", msg);
	f_file = strprintf("CODE_FILE=%s", file);
	f_func = strprintf("CODE_FUNC=%s", func);
	f_ident = strprintf("SYSLOG_IDENTIFIER=%s", log_state.ident);
	if (!f_msg || !f_file || !f_func || !f_ident)
		return -ENOMEM;
	snprintf(f_prio, sizeof(f_prio), "PRIORITY=%i", level);
	snprintf(f_line, sizeof(f_line), "CODE_LINE=%i", line);

#define IOV(s) (iov[n++] = (struct iovec){ .iov_base = (s), .iov_len = strlen(s) })
	IOV(f_msg);
	IOV(f_prio);
	IOV(f_ident);
	IOV(f_file);
	IOV(f_line);
	IOV(f_func);
	if (error > 0) {
		snprintf(f_errno, sizeof(f_errno), "ERRNO=%i", error);
		IOV(f_errno);
	}
#undef IOV
	return sd_journal_sendv(iov, (int)n);
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
	    log_write_journal(level, error, file, line, func, msg) < 0)
		log_write_stderr(level, msg);
out:
	errno = saved_errno;
	return -error;
}
