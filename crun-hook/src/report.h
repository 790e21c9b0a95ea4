/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The hook's one message when it fails, to standard error (which crun
 * shows when the run.oci.hooks.stderr annotation sends it somewhere) and to
 * the journal (PRIORITY=3, SYSLOG_IDENTIFIER=mshare-oci-hook, CONTAINER_ID=,
 * ERRNO=):
 *
 *	mshare-oci-hook: container ID: WHAT: REASON
 */

#include "mshare-common/macro.h"

#define HOOK_NAME "mshare-oci-hook"

/* id may be NULL (the state could not be read); error is an errno value
 * (either sign), message "WHAT: REASON". Returns -abs(error). */
int report_failure(const char *id, int error, const char *message);
