/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "crash.h"

/* Weak: the host tests' fake libmshare defines the one that crashes. */
__attribute__((weak)) void crash_point(const char *where)
{
	(void)where;
}
