// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The library's messages: the one fallback notice per process, the one
 * success notice, and the reasons behind them (struct why).
 */

#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "report.h"

static atomic_int fallback_reported, served_reported;

static void vwrite_line(const char *format, va_list ap)
{
	char line[1024];
	int n = snprintf(line, sizeof(line), "%s: ", PRELOAD_NAME);

	n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, format, ap);
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	/* stderr may be closed or full: nothing to be done about it. */
	for (const char *p = line; n > 0;) {
		ssize_t k = write(STDERR_FILENO, p, (size_t)n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		p += k;
		n -= (int)k;
	}
}

void report_line(const char *format, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, format);
	vwrite_line(format, ap);
	va_end(ap);
	errno = saved;
}

int why_set(struct why *w, int error, const char *format, ...)
{
	va_list ap;

	w->error = error;
	va_start(ap, format);
	vsnprintf(w->text, sizeof(w->text), format, ap);
	va_end(ap);
	return error;
}

/* Whether a seccomp filter is installed on this thread ("Seccomp:\t2"). */
static int seccomp_filtered(void)
{
	_cleanup_close_ int fd = open("/proc/thread-self/status", O_RDONLY | O_CLOEXEC);
	char buf[4096];
	const char *p;
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strstr(buf, "\nSeccomp:");
	return p && strtol(p + strlen("\nSeccomp:"), NULL, 10) == 2;
}

int why_call(struct why *w, int error, const char *call)
{
	const char *hint = NULL;

	switch (-error) {
	case ENOSYS:
		hint = seccomp_filtered() ? "no kernel support, or a seccomp filter refuses the call"
					  : "no kernel support";
		break;
	case EPERM:
		if (seccomp_filtered())
			hint = "a seccomp filter refuses the call";
		break;
	}
	if (hint)
		return why_set(w, error, "%s: %s (%s)", call, strerrordesc_np(-error), hint);
	return why_set(w, error, "%s: %s", call, strerrordesc_np(-error));
}

void report_fallback(const char *what, const struct why *w, int strict)
{
	if (atomic_exchange(&fallback_reported, 1))
		return;
	if (strict)
		report_line("%s fails (MSHARE_PRELOAD_STRICT=1): %s", what, w->text);
	else
		report_line("%s falls back to plain shared memory: %s", what, w->text);
}

void report_failure(const char *what, const struct why *w)
{
	report_line("%s fails: %s", what, w->text);
}

void report_served(const char *format, ...)
{
	int saved = errno;
	va_list ap;

	if (config_get()->quiet || atomic_exchange(&served_reported, 1))
		return;
	va_start(ap, format);
	vwrite_line(format, ap);
	va_end(ap);
	errno = saved;
}
