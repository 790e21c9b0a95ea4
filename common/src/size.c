// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * No locale, no strtoull(): the same answer in every program, and nothing
 * the LD_PRELOAD library (preload/) could not call from its constructor.
 */
#include <errno.h>
#include <string.h>

#include "mshare-common/size.h"

/* K -> 10, M -> 20, ... P -> 50; 0 if c is no multiple. */
static unsigned suffix_shift(char c)
{
	static const char suffixes[] = "KMGTP";
	const char *p;

	if (c >= 'a' && c <= 'z')
		c = (char)(c - 'a' + 'A');
	p = c ? strchr(suffixes, c) : NULL;
	return p ? 10 * (unsigned)(p - suffixes + 1) : 0;
}

int parse_size(const char *s, uint64_t *ret)
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
		if (s[0] == 'i' && s[1] == 'B')
			s += 2;
		else if (s[0] == 'B')
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
