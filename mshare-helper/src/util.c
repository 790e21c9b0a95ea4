/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <inttypes.h>

#include "util.h"

static int parse_u64_prefix(const char *s, uint64_t *ret, const char **end)
{
	uint64_t v = 0;
	const char *p = s;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*ret = v;
	*end = p;
	return 0;
}

int parse_u32(const char *s, uint32_t *ret)
{
	const char *end;
	uint64_t v;
	int r;

	r = parse_u64_prefix(s, &v, &end);
	if (r < 0)
		return r;
	if (*end)
		return -EINVAL;
	if (v > UINT32_MAX)
		return -ERANGE;
	*ret = (uint32_t)v;
	return 0;
}

int parse_boolean(const char *s)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (streq(s, yes[i]))
			return 1;
		if (streq(s, no[i]))
			return 0;
	}
	return -EINVAL;
}

const char *format_bytes(char *buf, size_t len, uint64_t bytes)
{
	static const char units[] = "KMGTPE";

	if (bytes < 1024) {
		snprintf(buf, len, "%" PRIu64 "B", bytes);
		return buf;
	}
	for (size_t i = ARRAY_SIZE(units) - 1; i > 0; i--) {
		uint64_t unit = (uint64_t)1 << (10 * i);

		if (bytes >= unit) {
			/* One decimal, rounded down: 1.5 GiB -> "1.5G". */
			uint64_t tenths = (bytes % unit) * 10 / unit;

			snprintf(buf, len, "%" PRIu64 ".%" PRIu64 "%c",
				 bytes / unit, tenths, units[i - 1]);
			return buf;
		}
	}
	return buf; /* not reached */
}

char *region_env_name(const char *name)
{
	static const char prefix[] = "MSHARE_FD_";
	size_t n = strlen(name);
	char *s = malloc(sizeof(prefix) + n);

	if (!s)
		return NULL;
	memcpy(s, prefix, sizeof(prefix) - 1);
	for (size_t i = 0; i < n; i++)
		s[sizeof(prefix) - 1 + i] =
			isalnum((unsigned char)name[i]) ?
				(char)toupper((unsigned char)name[i]) : '_';
	s[sizeof(prefix) - 1 + n] = '\0';
	return s;
}
