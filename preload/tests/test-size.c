// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Host unit test (TAP) of the size parser and the region name check that
 * the library and mshare-run share (src/size.c).
 */

#include <errno.h>
#include <stdint.h>

#include "size.h"
#include "tap.h"

static void size_is(const char *s, uint64_t want)
{
	uint64_t v = 0;
	int r = preload_parse_size(s, &v);

	ok(r == 0 && v == want, "size '%s' is %llu (got %d, %llu)", s, (unsigned long long)want, r,
	   (unsigned long long)v);
}

static void size_bad(const char *s, int want)
{
	uint64_t v = 42;
	int r = preload_parse_size(s, &v);

	ok(r == want && v == 42, "size '%s' is refused with %d (got %d)", s, want, r);
}

int main(void)
{
	size_is("0", 0);
	size_is("33554432", UINT64_C(33554432));
	size_is("512B", 512);
	size_is("4k", 4096);
	size_is("32M", UINT64_C(32) << 20);
	size_is("32MB", UINT64_C(32) << 20);
	size_is("32MiB", UINT64_C(32) << 20);
	size_is("1G", UINT64_C(1) << 30);
	size_is("1GiB", UINT64_C(1) << 30);
	size_is("1g", UINT64_C(1) << 30);
	size_is("2T", UINT64_C(2) << 40);
	size_is("3P", UINT64_C(3) << 50);
	size_is("18446744073709551615", UINT64_MAX);
	size_is("16383P", UINT64_C(16383) << 50);

	size_bad("", -EINVAL);
	size_bad(NULL, -EINVAL);
	size_bad("M", -EINVAL);
	size_bad("-1", -EINVAL);
	size_bad("+1", -EINVAL);
	size_bad(" 1", -EINVAL);
	size_bad("1 ", -EINVAL);
	size_bad("12Q", -EINVAL);
	size_bad("1GB ", -EINVAL);
	size_bad("1Gi", -EINVAL);
	size_bad("1iB", -EINVAL);
	size_bad("1BB", -EINVAL);
	size_bad("1.5G", -EINVAL);
	size_bad("0x10", -EINVAL);
	size_bad("18446744073709551616", -ERANGE);
	size_bad("16384P", -ERANGE);
	size_bad("99999999999999999999999", -ERANGE);

	ok(preload_check_region_name("pool") == 0, "region name 'pool'");
	ok(preload_check_region_name("db-1.buffers_a") == 0, "region name 'db-1.buffers_a'");
	ok(preload_check_region_name("0pool") == 0, "region name '0pool'");
	ok(preload_check_region_name(
		   "a123456789012345678901234567890123456789012345678901234567890123") == 0,
	   "region name of 64 characters");
	ok(preload_check_region_name(
		   "a1234567890123456789012345678901234567890123456789012345678901234") == -EINVAL,
	   "region name of 65 characters is refused");
	ok(preload_check_region_name("") == -EINVAL, "empty region name is refused");
	ok(preload_check_region_name(NULL) == -EINVAL, "no region name is refused");
	ok(preload_check_region_name("-pool") == -EINVAL, "region name starting with '-' is refused");
	ok(preload_check_region_name(".pool") == -EINVAL, "region name starting with '.' is refused");
	ok(preload_check_region_name("po ol") == -EINVAL, "region name with a space is refused");
	ok(preload_check_region_name("pool/x") == -EINVAL, "region name with a slash is refused");
	ok(preload_check_region_name("p\xc3\xb6ol") == -EINVAL, "region name with UTF-8 is refused");
	return tap_finish();
}
