// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdio.h>

#include "mshare-common/strprintf.h"

char *vstrprintf(const char *format, va_list ap)
{
	char *s;

	if (vasprintf(&s, format, ap) < 0)
		return NULL;
	return s;
}

char *strprintf(const char *format, ...)
{
	va_list ap;
	char *s;

	va_start(ap, format);
	s = vstrprintf(format, ap);
	va_end(ap);
	return s;
}

int error_set(char **ret_error, int r, const char *format, ...)
{
	va_list ap;

	va_start(ap, format);
	*ret_error = vstrprintf(format, ap);
	va_end(ap);
	return *ret_error ? r : -ENOMEM;
}
