// SPDX-License-Identifier: LGPL-2.1-or-later
/* ASCII by hand rather than <ctype.h>: a name means the same in any locale. */
#include <stddef.h>

#include "mshare-common/region-name.h"

static bool name_char(char c, bool first)
{
	if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
		return true;
	return !first && (c == '_' || c == '.' || c == '-');
}

bool region_name_is_valid(const char *name)
{
	size_t n;

	if (!name)
		return false;
	for (n = 0; name[n]; n++)
		if (n >= REGION_NAME_MAX || !name_char(name[n], n == 0))
			return false;
	return n > 0;
}
