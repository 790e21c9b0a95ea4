/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-journal.h>

#include "mshare-common/escape.h"
#include "mshare-common/macro.h"
#include "mshare-common/strprintf.h"
#include "oci.h"
#include "report.h"

/* Room for a message escaped: long enough for any the hook makes from sane input. */
#define REPORT_TEXT_MAX 4096
#define REPORT_ID_MAX (OCI_ID_MAX * 4 + 1)

int report_failure(const char *id, int error, const char *message)
{
	_cleanup_free_ char *text = malloc(REPORT_TEXT_MAX), *who = malloc(REPORT_ID_MAX);
	_cleanup_free_ char *line = NULL;

	if (error < 0)
		error = -error;
	/*
	 * Messages carry what the container's creator chose (annotations, its
	 * id, paths): control characters are escaped, so that the message
	 * stays one line and cannot forge another or play with a terminal.
	 */
	if (text)
		escape_control(message ?: strerror(error), text, REPORT_TEXT_MAX);
	if (who)
		escape_control(id ?: "", who, REPORT_ID_MAX);
	line = strprintf("%s%s: %s", id ? "container " : "unknown container",
			 id ? strempty(who) : "", text ?: "?");
	fprintf(stderr, "%s: %s\n", HOOK_NAME, line ?: "?");
	fflush(stderr);
	/* Without a journal (a host without systemd) stderr is all there is. */
	sd_journal_send("MESSAGE=%s", line ?: "?",
			"PRIORITY=3",
			"SYSLOG_IDENTIFIER=" HOOK_NAME,
			"CONTAINER_ID=%s", strempty(who),
			"ERRNO=%d", error,
			NULL);
	return -error;
}
