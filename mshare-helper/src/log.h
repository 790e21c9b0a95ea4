/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The daemon logs with the common logger (mshare-common/log.h: return
 * -errno, log once where the error is handled); this file adds its
 * journal sink, the native journal protocol with priority, errno and code
 * location fields:
 *
 *	log_open_service("mshare-owner", log_journal_sink);
 */

#include "mshare-common/log.h"

int log_journal_sink(int level, int error, const char *file, int line, const char *func,
		     const char *ident, const char *msg);
