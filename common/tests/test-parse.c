/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one size rule (mshare-common/size.h), region names and errno names:
 * what every component parses alike.
 */
#include <stdint.h>

#include "mshare-common/errno-name.h"
#include "mshare-common/macro.h"
#include "mshare-common/region-name.h"
#include "mshare-common/size.h"
#include "mshare-common/tap.h"

static void size_is(const char *s, uint64_t want)
{
	uint64_t v = 0;
	int r = parse_size(s, &v);

	ok(r == 0 && v == want, "size '%s' is %llu (got %d, %llu)", s, (unsigned long long)want, r,
	   (unsigned long long)v);
}

static void size_bad(const char *s, int want)
{
	uint64_t v = 42;
	int r = parse_size(s, &v);

	ok(r == want && v == 42, "size '%s' is refused with %s (got %d)", s ?: "(null)",
	   errno_to_name(want), r);
}

static void test_sizes(void)
{
	size_is("0", 0);
	size_is("0G", 0);
	size_is("4096", 4096);
	size_is("512B", 512);
	size_is("4k", 4096);
	size_is("64K", UINT64_C(64) << 10);
	size_is("32M", UINT64_C(32) << 20);
	size_is("32MB", UINT64_C(32) << 20);
	size_is("32MiB", UINT64_C(32) << 20);
	size_is("1G", UINT64_C(1) << 30);
	size_is("1GiB", UINT64_C(1) << 30);
	size_is("1g", UINT64_C(1) << 30);
	size_is("3GB", UINT64_C(3) << 30);
	size_is("2T", UINT64_C(2) << 40);
	size_is("3P", UINT64_C(3) << 50);
	size_is("18446744073709551615", UINT64_MAX);
	size_is("16383P", UINT64_C(16383) << 50);

	size_bad("", -EINVAL);
	size_bad(NULL, -EINVAL);
	size_bad("M", -EINVAL);
	size_bad("G", -EINVAL);
	size_bad("-1", -EINVAL);
	size_bad("+1", -EINVAL);
	size_bad(" 1", -EINVAL);
	size_bad("1 ", -EINVAL);
	size_bad("1 G", -EINVAL);
	size_bad("12Q", -EINVAL);
	size_bad("1GB ", -EINVAL);
	size_bad("1GiBs", -EINVAL);
	size_bad("1Gi", -EINVAL);
	size_bad("1iB", -EINVAL);
	size_bad("1BB", -EINVAL);
	size_bad("1.5G", -EINVAL);
	size_bad("0x10", -EINVAL);
	size_bad("18446744073709551616", -ERANGE);
	size_bad("16384P", -ERANGE);
	size_bad("16777216T", -ERANGE);
	size_bad("99999999999999999999999", -ERANGE);
}

static void test_region_names(void)
{
	char name[REGION_NAME_MAX + 2];

	ok(region_name_is_valid("pool"), "region name 'pool'");
	ok(region_name_is_valid("Db-1.buffers_a"), "region name with - . _");
	ok(region_name_is_valid("0pool"), "region name starting with a digit");
	memset(name, 'a', sizeof(name));
	name[REGION_NAME_MAX] = '\0';
	ok(region_name_is_valid(name), "region name of %d characters", REGION_NAME_MAX);
	name[REGION_NAME_MAX] = 'a';
	name[REGION_NAME_MAX + 1] = '\0';
	ok(!region_name_is_valid(name), "region name of %d characters is refused",
	   REGION_NAME_MAX + 1);
	ok(!region_name_is_valid(""), "empty region name is refused");
	ok(!region_name_is_valid(NULL), "no region name is refused");
	ok(!region_name_is_valid("-pool"), "region name starting with '-' is refused");
	ok(!region_name_is_valid(".pool"), "region name starting with '.' is refused");
	ok(!region_name_is_valid("po ol"), "region name with a blank is refused");
	ok(!region_name_is_valid("pool/x"), "region name with a slash is refused");
	ok(!region_name_is_valid("p\xc3\xb6ol"), "region name with UTF-8 is refused");
}

static void test_errno_names(void)
{
	ok(streq(errno_to_name(ENOENT), "ENOENT"), "ENOENT to name");
	ok(streq(errno_to_name(-EACCES), "EACCES"), "-EACCES to name");
	ok(streq(errno_to_name(4095), "EIO"), "a value without a name is EIO");
	ok(errno_from_name("EPROTONOSUPPORT") == EPROTONOSUPPORT, "EPROTONOSUPPORT from name");
	ok(errno_from_name("EAGAIN") == EAGAIN, "EAGAIN from name");
	ok(errno_from_name("ENOTANERROR") == 0, "unknown name");
	ok(errno_from_name(NULL) == 0, "no name");
}

int main(void)
{
	test_sizes();
	test_region_names();
	test_errno_names();
	return tap_finish();
}
