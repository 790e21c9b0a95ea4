/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * crash_point() (crash.h) of mshare-owner-fake, the daemon on the fake
 * libmshare (../libmshare/tests/fake-mshare.c) that tests/test-daemon.py
 * runs. At crash_point(WHERE):
 *
 *	$FAKE_MSHARE_CRASH=WHERE	kills the daemon (SIGKILL)
 *	$FAKE_MSHARE_SIGHUP=WHERE	sends it SIGHUP, as a reload racing it would
 *	$FAKE_MSHARE_ENOMEM=WHERE	makes its next reallocarray() fail with
 *					ENOMEM, as memory running out there would
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crash.h"

static bool fail_next_alloc;

static bool armed(const char *variable, const char *where)
{
	const char *want = getenv(variable);

	return want && strcmp(want, where) == 0;
}

void crash_point(const char *where)
{
	if (armed("FAKE_MSHARE_CRASH", where)) {
		fprintf(stderr, "fake-mshare: crashing at %s\n", where);
		kill(getpid(), SIGKILL);
	}
	if (armed("FAKE_MSHARE_SIGHUP", where)) {
		fprintf(stderr, "fake-mshare: SIGHUP at %s\n", where);
		kill(getpid(), SIGHUP);
	}
	if (armed("FAKE_MSHARE_ENOMEM", where)) {
		fprintf(stderr, "fake-mshare: the next allocation after %s fails\n", where);
		fail_next_alloc = true;
	}
}

/* The daemon's own calls bind to this one (libc's internal ones do not). */
void *reallocarray(void *p, size_t n, size_t size)
{
	if (fail_next_alloc || (size && n > SIZE_MAX / size)) {
		fail_next_alloc = false;
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, n * size);
}
