/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-journal.h>

#include "report.h"
#include "util.h"

int report_failure(const char *id, int error, const char *message)
{
	_cleanup_free_ char *who = id ? strprintf("container %s", id) : strdup("unknown container");
	const char *text;

	if (error < 0)
		error = -error;
	text = message ?: strerror(error);
	fprintf(stderr, "%s: %s: %s\n", HOOK_NAME, who ?: "?", text);
	fflush(stderr);
	/* Without a journal (a host without systemd) stderr is all there is. */
	sd_journal_send("MESSAGE=%s: %s", who ?: "?", text,
			"PRIORITY=3",
			"SYSLOG_IDENTIFIER=" HOOK_NAME,
			"CONTAINER_ID=%s", id ?: "",
			"ERRNO=%d", error,
			NULL);
	return -error;
}
