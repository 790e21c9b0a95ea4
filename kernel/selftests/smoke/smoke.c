// SPDX-License-Identifier: GPL-2.0
/*
 * Placeholder in-guest test: proves the harness end to end (static binary,
 * TAP output, counting) until the real mshare suites replace it.
 */
#include <stdio.h>
#include <string.h>

#include "kselftest_harness.h"

TEST(proc_filesystems_readable)
{
	char line[256];
	int n = 0;
	FILE *f = fopen("/proc/filesystems", "r");

	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	ASSERT_GT(n, 0);
	TH_LOG("%d filesystems registered", n);
}

TEST(msharefs_registered)
{
	char line[256];
	int found = 0;
	FILE *f = fopen("/proc/filesystems", "r");

	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "msharefs"))
			found = 1;
	fclose(f);
	if (!found)
		SKIP(return, "kernel has no msharefs");
}

TEST_HARNESS_MAIN
