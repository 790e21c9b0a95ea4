/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The KTAP version 1 producer of the C tests (the kernel's format,
 * Documentation/dev-tools/ktap.rst; common/ktap.sh is the shell one):
 * ok(cond, "what") prints "ok N what" or "not ok N what" with the place
 * of the check, tap_skip() "ok N why # SKIP" for a check that cannot run
 * here, tap_plan() the plan when the count is known first, tap_finish() it
 * at the end otherwise. The header comes before the first line. The
 * results are counted once, by common/build/ktap-judge (common/run-tap.sh
 * on the host, the guest runner's log in QEMU).
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static unsigned tap_count, tap_failed;
static bool tap_started, tap_planned;

static inline void tap_header(void)
{
	if (!tap_started)
		printf("KTAP version 1\n");
	tap_started = true;
}

static inline void tap_plan(unsigned n)
{
	tap_header();
	printf("1..%u\n", n);
	tap_planned = true;
	fflush(stdout);
}

__attribute__((format(printf, 4, 5))) static inline bool
tap_ok(bool pass, const char *file, int line, const char *format, ...)
{
	va_list ap;

	tap_header();
	tap_count++;
	if (!pass)
		tap_failed++;
	printf("%s %u ", pass ? "ok" : "not ok", tap_count);
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

/* A check the machine cannot run (not the code under test failing). */
__attribute__((format(printf, 1, 2))) static inline void tap_skip(const char *format, ...)
{
	va_list ap;

	tap_header();
	tap_count++;
	printf("ok %u ", tap_count);
	va_start(ap, format);
	vprintf(format, ap);
	va_end(ap);
	printf(" # SKIP\n");
	fflush(stdout);
}

/* The plan if tap_plan() gave none; exit status 1 if a check failed. */
static inline int tap_finish(void)
{
	tap_header();
	if (!tap_planned)
		printf("1..%u\n", tap_count);
	return tap_failed ? 1 : 0;
}
