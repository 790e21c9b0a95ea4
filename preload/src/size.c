// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The size parser of MSHARE_PRELOAD_MIN_SIZE and mshare-run --min-size,
 * and the check of region names (docs/protocol.md).
 */

#include <errno.h>
#include <string.h>

#include "size.h"

#define REGION_NAME_MAX 64

static unsigned suffix_shift(char c)
{
	static const char suffixes[] = "KMGTP";
	const char *p;

	if (c >= 'a' && c <= 'z')
		c = (char)(c - 'a' + 'A');
	p = c ? strchr(suffixes, c) : NULL;
	return p ? 10 * (unsigned)(p - suffixes + 1) : 0;
}

int preload_parse_size(const char *s, uint64_t *ret)
{
	uint64_t v = 0;
	unsigned shift;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	shift = suffix_shift(*s);
	if (shift) {
		s++;
		if (*s == 'i' && s[1] == 'B')
			s += 2;
		else if (*s == 'B')
			s++;
	} else if (*s == 'B')
		s++;
	if (*s)
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*ret = v << shift;
	return 0;
}

static int name_char(char c, int first)
{
	if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
		return 1;
	return !first && (c == '_' || c == '.' || c == '-');
}

int preload_check_region_name(const char *s)
{
	size_t n;

	if (!s)
		return -EINVAL;
	for (n = 0; s[n]; n++)
		if (n >= REGION_NAME_MAX || !name_char(s[n], n == 0))
			return -EINVAL;
	return n ? 0 : -EINVAL;
}
