/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A minimal TAP producer for the host unit tests: ok(cond, "what") prints
 * "ok N - what" or "not ok N - what" with the place of the check,
 * tap_skip() a check that cannot run here, and tap_finish() the plan.
 * common/run-tap.sh adds the results of all tests up.
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static unsigned tap_count, tap_failed;

__attribute__((format(printf, 4, 5))) static inline bool
tap_ok(bool pass, const char *file, int line, const char *format, ...)
{
	va_list ap;

	tap_count++;
	if (!pass)
		tap_failed++;
	printf("%s %u - ", pass ? "ok" : "not ok", tap_count);
	va_start(ap, format);
	vprintf(format, ap);
	va_end(ap);
	printf("\n");
	if (!pass)
		printf("#   failed at %s:%d\n", file, line);
	fflush(stdout);
	return pass;
}

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

/*
 * A check the machine cannot run (not the code under test failing): "ok N
 * # SKIP why", which run-tap.sh counts as skipped, never as passed.
 */
__attribute__((format(printf, 1, 2))) static inline void tap_skip(const char *format, ...)
{
	va_list ap;

	tap_count++;
	printf("ok %u # SKIP ", tap_count);
	va_start(ap, format);
	vprintf(format, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static inline int tap_finish(void)
{
	printf("1..%u\n", tap_count);
	return tap_failed ? 1 : 0;
}
