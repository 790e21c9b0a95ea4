/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Strings: error_set(), string vectors, escape_control(), and the log's %m. */
#include <fcntl.h>

#include "mshare-common/escape.h"
#include "mshare-common/log.h"
#include "mshare-common/strprintf.h"
#include "mshare-common/strv.h"
#include "mshare-common/tap.h"
#include "mshare-common/utf8.h"

static void test_error_set(void)
{
	_cleanup_free_ char *error = NULL;
	int r;

	r = error_set(&error, -EBADMSG, "member \"%s\" is missing", "op");
	ok(r == -EBADMSG && error && streq(error, "member \"op\" is missing"),
	   "error_set returns its errno and the message: %d \"%s\"", r, strna(error));
}

static void test_strv(void)
{
	_cleanup_strv_free_ char **l = NULL, **c = NULL;

	ok(strv_split_blanks("  root\t1000  wheel ", &l) == 0 && strv_length(l) == 3 &&
	   streq(l[0], "root") && streq(l[1], "1000") && streq(l[2], "wheel"), "split at blanks");
	ok(strv_extendf(&l, "%d", 7) == 0 && strv_contains(l, "7"), "extendf");
	c = strv_copy(l);
	ok(c && strv_equal(c, l), "copy");
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

/* A tool's line on stderr: "IDENT: message", %m the error passed in, one line. */
static void test_log(void)
{
	char buf[256] = "", esc[512];
	int p[2], saved, r;
	ssize_t n;

	if (pipe2(p, O_CLOEXEC) < 0) {
		ok(false, "pipe: %m");
		return;
	}
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	dup2(p[1], STDERR_FILENO);
	log_open("test");
	errno = EPERM;
	r = log_error_errno(-ENOENT, "opening \"%s\": %m", "a\nb");
	log_debug("below the level: not written");
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(p[1]);
	n = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	buf[n > 0 ? n : 0] = '\0';
	ok(r == -ENOENT && errno == EPERM, "log_error_errno returns -errno and keeps errno");
	ok(streq(buf, "test: opening \"a\\nb\": No such file or directory\n"), "the line: %s",
	   escape_control(buf, esc, sizeof(esc)));
}

static void test_utf8(void)
{
	static const struct {
		const char *s;
		bool valid;
	} cases[] = {
		{ "", true },
		{ "pool", true },
		{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", true },
		{ "\xc2\x85", true },		/* U+0085, a C1 control: valid, escape_control() escapes it */
		{ "caf\xe9", false },		/* Latin-1 */
		{ "\xc3", false },		/* cut short */
		{ "\xc0\xaf", false },		/* overlong */
		{ "\xed\xa0\x80", false },	/* a surrogate */
		{ "\xf4\x90\x80\x80", false },	/* past U+10FFFF */
		{ "\xff", false },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		ok(utf8_is_valid(cases[i].s) == cases[i].valid, "utf8_is_valid() case %zu: %s", i,
		   cases[i].valid ? "valid" : "not valid");
}

int main(void)
{
	test_error_set();
	test_strv();
	test_escape_control();
	test_utf8();
	test_log();
	return tap_finish();
}
