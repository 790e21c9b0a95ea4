/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "mshare-common/macro.h"
#include "mshare-common/region-name.h"
#include "mshare-common/strprintf.h"
#include "regions.h"

void region_list_done(struct region_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->items[i].name);
	free(l->items);
	*l = (struct region_list){};
}

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

static const char *trim_blanks(const char *start, const char *end)
{
	while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	return end;
}

/* One "NAME[:MODE]" entry, [start, end), blanks trimmed already. */
static int parse_entry(const char *start, const char *end, size_t index,
		       struct region_request *ret, char **ret_error)
{
	const char *colon = memchr(start, ':', (size_t)(end - start));
	_cleanup_free_ char *name = NULL, *mode = NULL;
	int m = ACCESS_RO;

	if (start == end)
		return error_set(ret_error, -EINVAL, "entry %zu is empty", index + 1);
	name = strndup(start, (size_t)((colon ?: end) - start));
	if (!name)
		return -ENOMEM;
	if (!region_name_is_valid(name))
		return error_set(ret_error, -EINVAL,
				 "'%s' is not a region name (1 to %d characters of A-Z a-z 0-9 _ . -, "
				 "starting with a letter or a digit)", name, REGION_NAME_MAX);
	if (colon) {
		mode = strndup(colon + 1, (size_t)(end - colon - 1));
		if (!mode)
			return -ENOMEM;
		m = access_mode_from_string(mode);
		if (m < 0)
			return error_set(ret_error, -EINVAL,
					 "region '%s': mode '%s' is neither 'ro' nor 'rw'", name, mode);
	}
	ret->name = TAKE_PTR(name);
	ret->mode = (enum access_mode)m;
	return 0;
}

int regions_parse(const char *s, struct region_list *ret, char **ret_error)
{
	_cleanup_(region_list_done) struct region_list l = {};
	const char *p = s, *end = s + strlen(s);
	int r;

	*ret_error = NULL;
	if (skip_blanks(p, end) == end)
		return error_set(ret_error, -EINVAL, "no region is named");
	for (;;) {
		const char *comma = memchr(p, ',', (size_t)(end - p)) ?: end;
		const char *a = skip_blanks(p, comma), *b = trim_blanks(a, comma);
		struct region_request e = {};

		if (l.n == REGIONS_MAX)
			return error_set(ret_error, -EINVAL, "more than %d regions", REGIONS_MAX);
		r = parse_entry(a, b, l.n, &e, ret_error);
		if (r < 0)
			return r;
		for (size_t i = 0; i < l.n; i++)
			if (streq(l.items[i].name, e.name)) {
				r = error_set(ret_error, -EINVAL, "region '%s' is named twice", e.name);
				free(e.name);
				return r;
			}
		if (!(l.n & (l.n + 1))) { /* 0, 1, 3, 7, ...: grow to 2n + 2 */
			struct region_request *t = reallocarray(l.items, 2 * l.n + 2, sizeof(*t));

			if (!t) {
				free(e.name);
				return -ENOMEM;
			}
			l.items = t;
		}
		l.items[l.n++] = e;
		if (comma == end)
			break;
		p = comma + 1;
	}
	*ret = l;
	l = (struct region_list){};
	return 0;
}

char *regions_format(const struct region_list *l)
{
	size_t len = 1;
	char *s, *p;

	for (size_t i = 0; i < l->n; i++)
		len += strlen(l->items[i].name) + 4;
	s = p = malloc(len);
	if (!s)
		return NULL;
	*p = '\0';
	for (size_t i = 0; i < l->n; i++)
		p += sprintf(p, "%s%s:%s", i ? "," : "", l->items[i].name,
			     access_mode_to_string(l->items[i].mode));
	return s;
}

int channel_path_check(const char *path, char **ret_error)
{
	size_t len = strlen(path);

	*ret_error = NULL;
	if (path[0] != '/')
		return error_set(ret_error, -EINVAL, "'%s' is not an absolute path", path);
	if (len > CHANNEL_PATH_MAX)
		return error_set(ret_error, -EINVAL,
				 "'%s' is longer than %d bytes, which a unix socket address cannot hold",
				 path, CHANNEL_PATH_MAX);
	if (path[len - 1] == '/')
		return error_set(ret_error, -EINVAL, "'%s' names no file", path);
	for (const char *p = path + 1;;) {
		size_t n = strcspn(p, "/");

		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return error_set(ret_error, -EINVAL, "'%s' has an empty, '.' or '..' component", path);
		if (!p[n])
			break;
		p += n + 1;
	}
	return 0;
}
