// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Host unit test (TAP) of the library's settings (src/config.c): the four
 * variables, their defaults, and what a bad value does.
 */

#include <errno.h>
#include <string.h>

#include "config.h"
#include "mshare-common/tap.h"

int main(void)
{
	struct config c;

	config_parse(&c, NULL, NULL, NULL, NULL);
	ok(c.min_size == (UINT64_C(32) << 20) && !c.region[0] && !c.strict && !c.quiet && !c.error,
	   "defaults: 32 MiB, a region of its own, not strict, not quiet");

	config_parse(&c, "", "", "", "");
	ok(c.min_size == (UINT64_C(32) << 20) && !c.region[0] && !c.strict && !c.quiet && !c.error,
	   "empty values are the defaults");

	config_parse(&c, "1GiB", "pool", "1", "yes");
	ok(c.min_size == (UINT64_C(1) << 30) && !strcmp(c.region, "pool") && c.strict && c.quiet &&
		   !c.error,
	   "all four set");

	config_parse(&c, "64M", NULL, "0", "false");
	ok(c.min_size == (UINT64_C(64) << 20) && !c.strict && !c.quiet && !c.error, "0 and false");

	config_parse(&c, "12Q", NULL, NULL, NULL);
	ok(c.error == -EINVAL && c.min_size == (UINT64_C(32) << 20) &&
		   strstr(c.error_text, "MSHARE_PRELOAD_MIN_SIZE=\"12Q\""),
	   "a bad size is named, and the default stays: %s", c.error_text);

	config_parse(&c, NULL, "bad name", "1", NULL);
	ok(c.error == -EINVAL && !c.region[0] && c.strict &&
		   strstr(c.error_text, "MSHARE_PRELOAD_REGION=\"bad name\""),
	   "a bad region name is named, strict still applies: %s", c.error_text);

	config_parse(&c, NULL, NULL, "maybe", NULL);
	ok(c.error == -EINVAL && !c.strict && strstr(c.error_text, "MSHARE_PRELOAD_STRICT=\"maybe\""),
	   "a bad STRICT is named and is not strict: %s", c.error_text);

	config_parse(&c, NULL, NULL, NULL, "2");
	ok(c.error == -EINVAL && !c.quiet && strstr(c.error_text, "MSHARE_PRELOAD_QUIET=\"2\""),
	   "a bad QUIET is named: %s", c.error_text);

	config_parse(&c, "x", "y z", NULL, NULL);
	ok(c.error == -EINVAL && strstr(c.error_text, "MSHARE_PRELOAD_MIN_SIZE") &&
		   !strstr(c.error_text, "MSHARE_PRELOAD_REGION"),
	   "of two bad values, the first is named");

	config_parse(&c, "0123456789012345678901234567890123456789012345678901234567890123456789X",
		     NULL, NULL, NULL);
	ok(c.error == -EINVAL && strstr(c.error_text, "...\" is not") && strlen(c.error_text) < 250,
	   "a long bad value is cut: %s", c.error_text);

	config_parse(&c, "1\nmshare-preload: forged", NULL, NULL, NULL);
	ok(c.error == -EINVAL && !strchr(c.error_text, '\n') && strstr(c.error_text, "1?mshare"),
	   "control characters are not printed: %s", c.error_text);
	return tap_finish();
}
