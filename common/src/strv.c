// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdarg.h>
#include <string.h>

#include "mshare-common/macro.h"
#include "mshare-common/strprintf.h"
#include "mshare-common/strv.h"

void strv_free(char **l)
{
	if (!l)
		return;
	for (char **p = l; *p; p++)
		free(*p);
	free(l);
}

size_t strv_length(char *const *l)
{
	size_t n = 0;

	while (l && l[n])
		n++;
	return n;
}

static int strv_push(char ***l, char *s)
{
	size_t n = strv_length(*l);
	char **t = realloc(*l, (n + 2) * sizeof(char *));

	if (!t)
		return -ENOMEM;
	t[n] = s;
	t[n + 1] = NULL;
	*l = t;
	return 0;
}

int strv_extend(char ***l, const char *s)
{
	char *c = strdup(s);

	if (!c)
		return -ENOMEM;
	if (strv_push(l, c) < 0) {
		free(c);
		return -ENOMEM;
	}
	return 0;
}

int strv_extendf(char ***l, const char *format, ...)
{
	char *s;
	va_list ap;

	va_start(ap, format);
	s = vstrprintf(format, ap);
	va_end(ap);
	if (!s)
		return -ENOMEM;
	if (strv_push(l, s) < 0) {
		free(s);
		return -ENOMEM;
	}
	return 0;
}

bool strv_contains(char *const *l, const char *s)
{
	for (size_t i = 0; l && l[i]; i++)
		if (streq(l[i], s))
			return true;
	return false;
}

char **strv_copy(char *const *l)
{
	char **c = calloc(strv_length(l) + 1, sizeof(char *));

	if (!c)
		return NULL;
	for (size_t i = 0; l && l[i]; i++) {
		c[i] = strdup(l[i]);
		if (!c[i]) {
			strv_free(c);
			return NULL;
		}
	}
	return c;
}

bool strv_equal(char *const *a, char *const *b)
{
	size_t n = strv_length(a);

	if (n != strv_length(b))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!streq(a[i], b[i]))
			return false;
	return true;
}

int strv_split_blanks(const char *s, char ***ret)
{
	_cleanup_strv_free_ char **l = calloc(1, sizeof(char *));
	const char *p = s;

	if (!l)
		return -ENOMEM;
	for (;;) {
		size_t n;
		char *w;

		p += strspn(p, " \t");
		if (!*p)
			break;
		n = strcspn(p, " \t");
		w = strndup(p, n);
		if (!w || strv_push(&l, w) < 0) {
			free(w);
			return -ENOMEM;
		}
		p += n;
	}
	*ret = TAKE_PTR(l);
	return 0;
}
