/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "tap.h"
#include "util.h"

static void test_parse_size(void)
{
	static const struct {
		const char *s;
		int r;
		uint64_t v;
	} cases[] = {
		{ "0", 0, 0 },
		{ "4096", 0, 4096 },
		{ "64K", 0, 64 << 10 },
		{ "64k", 0, 64 << 10 },
		{ "64M", 0, 64 << 20 },
		{ "2G", 0, 2ULL << 30 },
		{ "3T", 0, 3ULL << 40 },
		{ "1P", 0, 1ULL << 50 },
		{ "18446744073709551615", 0, UINT64_MAX },
		{ "18446744073709551616", -ERANGE, 0 },
		{ "16384P", -ERANGE, 0 },
		{ "", -EINVAL, 0 },
		{ "M", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 },
		{ "+1", -EINVAL, 0 },
		{ " 1", -EINVAL, 0 },
		{ "1 ", -EINVAL, 0 },
		{ "1MB", -EINVAL, 0 },
		{ "1Q", -EINVAL, 0 },
		{ "0x10", -EINVAL, 0 },
		{ "1.5G", -EINVAL, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		uint64_t v = 0;
		int r = parse_size(cases[i].s, &v);

		ok(r == cases[i].r && (r < 0 || v == cases[i].v), "parse_size(\"%s\") = %d (%llu)",
		   cases[i].s, r, (unsigned long long)v);
	}
}

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

static void test_names(void)
{
	char long_name[REGION_NAME_MAX + 2];
	_cleanup_free_ char *e1 = region_env_name("db-pool.main_2");

	ok(region_name_is_valid("example"), "plain name");
	ok(region_name_is_valid("Db-pool.main_2"), "name with - . _");
	ok(!region_name_is_valid(""), "empty name");
	ok(!region_name_is_valid(NULL), "NULL name");
	ok(!region_name_is_valid("-x"), "leading dash");
	ok(!region_name_is_valid(".x"), "leading dot");
	ok(!region_name_is_valid("a b"), "blank");
	ok(!region_name_is_valid("a/b"), "slash");
	ok(!region_name_is_valid("caf\xc3\xa9"), "non-ASCII");
	memset(long_name, 'a', sizeof(long_name));
	long_name[REGION_NAME_MAX] = '\0';
	ok(region_name_is_valid(long_name), "%d characters", REGION_NAME_MAX);
	long_name[REGION_NAME_MAX] = 'a';
	long_name[REGION_NAME_MAX + 1] = '\0';
	ok(!region_name_is_valid(long_name), "%d characters", REGION_NAME_MAX + 1);
	ok(e1 && streq(e1, "MSHARE_FD_DB_POOL_MAIN_2"), "env name: %s", strna(e1));
}

static void test_errno_names(void)
{
	ok(streq(errno_to_name(ENOENT), "ENOENT"), "ENOENT to name");
	ok(streq(errno_to_name(-EACCES), "EACCES"), "-EACCES to name");
	ok(errno_from_name("EPROTONOSUPPORT") == EPROTONOSUPPORT, "EPROTONOSUPPORT from name");
	ok(errno_from_name("EAGAIN") == EAGAIN, "EAGAIN from name");
	ok(errno_from_name("ENOTANERROR") == 0, "unknown name");
}

static void test_booleans_and_lists(void)
{
	_cleanup_strv_free_ char **l = NULL;
	uint32_t u;

	ok(parse_boolean("yes") == 1 && parse_boolean("on") == 1 && parse_boolean("1") == 1 &&
	   parse_boolean("true") == 1, "true values");
	ok(parse_boolean("no") == 0 && parse_boolean("off") == 0 && parse_boolean("0") == 0 &&
	   parse_boolean("false") == 0, "false values");
	ok(parse_boolean("maybe") == -EINVAL && parse_boolean("") == -EINVAL, "bad booleans");
	ok(parse_u32("4294967295", &u) == 0 && u == UINT32_MAX, "u32 max");
	ok(parse_u32("4294967296", &u) == -ERANGE, "u32 overflow");
	ok(strv_split_blanks("  root\t1000  wheel ", &l) == 0 && strv_length(l) == 3 &&
	   streq(l[0], "root") && streq(l[1], "1000") && streq(l[2], "wheel"), "split at blanks");
}

static void test_error_set(void)
{
	_cleanup_free_ char *error = NULL;
	int r;

	r = error_set(&error, -EBADMSG, "member \"%s\" is missing", "op");
	ok(r == -EBADMSG && error && streq(error, "member \"op\" is missing"),
	   "error_set returns its errno and the message: %d \"%s\"", r, strna(error));
}

static void test_escape_control(void)
{
	static const struct {
		const char *s;
		size_t len;
		const char *want;
	} cases[] = {
		{ "pool", 64, "pool" },
		{ "a\nb", 64, "a\\nb" },
		{ "x\r\t\\", 64, "x\\r\\t\\\\" },
		{ "\x1b[31mred", 64, "\\x1b[31mred" },
		{ "del\x7f", 64, "del\\x7f" },
		{ "caf\xc3\xa9", 64, "caf\xc3\xa9" },
		{ "\xe2\x82\xac \xf0\x9f\x90\xa7", 64, "\xe2\x82\xac \xf0\x9f\x90\xa7" },
		{ "bad\xff\xfe", 64, "bad\\xff\\xfe" },
		{ "c1\xc2\x9b[2J", 64, "c1\\xc2\\x9b[2J" },
		{ "cut\xe2\x82", 64, "cut\\xe2\\x82" },
		{ "over\xc0\xaf", 64, "over\\xc0\\xaf" },
		{ "surr\xed\xa0\x80", 64, "surr\\xed\\xa0\\x80" },
		{ "abcdefghij", 8, "abcd..." },
		{ "\n\n\n\n", 8, "\\n\\n..." },
		{ "", 1, "" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char buf[64];
		const char *got = escape_control(cases[i].s, buf, cases[i].len);

		ok(streq(got, cases[i].want) && strlen(got) < cases[i].len,
		   "escape_control case %zu: \"%s\"", i, got);
	}
}

int main(void)
{
	test_parse_size();
	test_format_bytes();
	test_names();
	test_errno_names();
	test_booleans_and_lists();
	test_error_set();
	test_escape_control();
	return tap_finish();
}
