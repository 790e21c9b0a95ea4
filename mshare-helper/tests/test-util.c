/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The daemon's own helpers (src/util.c); the common library's have their
 * tests in ../common/tests. */
#include "mshare-common/tap.h"
#include "util.h"

static void test_format_bytes(void)
{
	char b[FORMAT_BYTES_MAX];

	ok(streq(format_bytes(b, sizeof(b), 0), "0B"), "format 0: %s", b);
	ok(streq(format_bytes(b, sizeof(b), 1023), "1023B"), "format 1023: %s", b);
	ok(streq(format_bytes(b, sizeof(b), 1024), "1.0K"), "format 1024: %s", b);
	ok(streq(format_bytes(b, sizeof(b), 64ULL << 20), "64.0M"), "format 64M: %s", b);
	ok(streq(format_bytes(b, sizeof(b), 3ULL << 29), "1.5G"), "format 1.5G: %s", b);
	ok(streq(format_bytes(b, sizeof(b), 512ULL << 30), "512.0G"), "format 512G: %s", b);
	ok(streq(format_bytes(b, sizeof(b), UINT64_MAX), "15.9E"), "format max: %s", b);
}

static void test_env_name(void)
{
	_cleanup_free_ char *e1 = region_env_name("db-pool.main_2");

	ok(e1 && streq(e1, "MSHARE_FD_DB_POOL_MAIN_2"), "env name: %s", strna(e1));
}

static void test_booleans_and_numbers(void)
{
	uint32_t u;

	ok(parse_boolean("yes") == 1 && parse_boolean("on") == 1 && parse_boolean("1") == 1 &&
	   parse_boolean("true") == 1, "true values");
	ok(parse_boolean("no") == 0 && parse_boolean("off") == 0 && parse_boolean("0") == 0 &&
	   parse_boolean("false") == 0, "false values");
	ok(parse_boolean("maybe") == -EINVAL && parse_boolean("") == -EINVAL, "bad booleans");
	ok(parse_u32("4294967295", &u) == 0 && u == UINT32_MAX, "u32 max");
	ok(parse_u32("4294967296", &u) == -ERANGE, "u32 overflow");
}

int main(void)
{
	test_format_bytes();
	test_env_name();
	test_booleans_and_numbers();
	return tap_finish();
}
