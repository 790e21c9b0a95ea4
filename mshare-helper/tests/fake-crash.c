/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * crash_point() (crash.h) of mshare-owner-fake, the daemon on the fake
 * libmshare (../libmshare/tests/fake-mshare.c) that tests/test-daemon.py
 * runs: $FAKE_MSHARE_CRASH=WHERE kills the daemon at crash_point(WHERE).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crash.h"

void crash_point(const char *where)
{
	const char *want = getenv("FAKE_MSHARE_CRASH");

	if (want && strcmp(want, where) == 0) {
		fprintf(stderr, "fake-mshare: crashing at %s\n", where);
		kill(getpid(), SIGKILL);
	}
}
