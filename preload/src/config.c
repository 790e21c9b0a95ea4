// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The settings, from the environment, once per process (pthread_once).
 */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "mshare-common/size.h"
#include "pages.h"

/* 1, 0, or -EINVAL for a value that is neither. */
static int parse_bool(const char *s)
{
	static const char *const yes[] = { "1", "yes", "true", "on" };
	static const char *const no[] = { "0", "no", "false", "off", "" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (!strcasecmp(s, yes[i]))
			return 1;
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (!strcasecmp(s, no[i]))
			return 0;
	return -EINVAL;
}

/* The first invalid variable is the one reported: its first 64 bytes, with
 * control characters as '?'. */
static void invalid(struct config *c, const char *name, const char *value, const char *what)
{
	char shown[65];
	size_t n;

	if (c->error)
		return;
	for (n = 0; n < sizeof(shown) - 1 && value[n]; n++)
		shown[n] = (unsigned char)value[n] < 0x20 || value[n] == 0x7f ? '?' : value[n];
	shown[n] = '\0';
	c->error = -EINVAL;
	snprintf(c->error_text, sizeof(c->error_text), "%s=\"%s%s\" is not %s", name, shown,
		 value[n] ? "..." : "", what);
}

void config_parse(struct config *c, const char *min_size, const char *region,
		  const char *strict, const char *quiet)
{
	int b;

	*c = (struct config){ .min_size = PRELOAD_DEFAULT_MIN_SIZE };
	if (strict) {
		b = parse_bool(strict);
		if (b < 0)
			invalid(c, "MSHARE_PRELOAD_STRICT", strict, "0 or 1");
		else
			c->strict = b;
	}
	if (quiet) {
		b = parse_bool(quiet);
		if (b < 0)
			invalid(c, "MSHARE_PRELOAD_QUIET", quiet, "0 or 1");
		else
			c->quiet = b;
	}
	if (min_size && *min_size) {
		uint64_t v;

		if (parse_size(min_size, &v) < 0)
			invalid(c, "MSHARE_PRELOAD_MIN_SIZE", min_size,
				"a size (bytes, or with a suffix: 32M, 1G, 1GiB)");
		else
			c->min_size = v;
	}
	if (region && *region) {
		if (!region_name_is_valid(region))
			invalid(c, "MSHARE_PRELOAD_REGION", region,
				"a region name (1 to 64 of A-Z a-z 0-9 _ . -, starting with a letter or a digit)");
		else
			snprintf(c->region, sizeof(c->region), "%s", region);
	}
}

static struct config config;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

static void config_init(void)
{
	config_parse(&config, secure_getenv("MSHARE_PRELOAD_MIN_SIZE"),
		     secure_getenv("MSHARE_PRELOAD_REGION"), secure_getenv("MSHARE_PRELOAD_STRICT"),
		     secure_getenv("MSHARE_PRELOAD_QUIET"));
	/* Nothing smaller than a page is served, whatever the threshold:
	 * PostgreSQL's interlock segment (a few bytes of System V memory,
	 * which it checks after a crash) stays a plain one. */
	if (config.min_size < page_size())
		config.min_size = page_size();
}

const struct config *config_get(void)
{
	pthread_once(&config_once, config_init);
	return &config;
}
