/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>

#include "log.h"
#include "util.h"

int log_journal_sink(int level, int error, const char *file, int line, const char *func,
		     const char *ident, const char *msg)
{
	char f_prio[32], f_errno[32], f_line[32];
	_cleanup_free_ char *f_msg = NULL, *f_file = NULL, *f_func = NULL,
			    *f_ident = NULL;
	struct iovec iov[8];
	size_t n = 0;

	f_msg = strprintf("MESSAGE=%s", msg);
	f_file = strprintf("CODE_FILE=%s", file);
	f_func = strprintf("CODE_FUNC=%s", func);
	f_ident = strprintf("SYSLOG_IDENTIFIER=%s", ident);
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
