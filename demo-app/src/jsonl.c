/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <glob.h>
#include <math.h>
#include <stdbool.h>

#include "jsonl.h"

json_t *json_num(double v)
{
	if (isnan(v))
		return json_null();
	/* Whole numbers within the exact range of a double. */
	if (v == trunc(v) && fabs(v) < 9007199254740992.0)
		return json_integer((json_int_t)v);
	return json_real(v);
}

double json_member_num(const json_t *o, const char *key)
{
	json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;

	return json_is_number(v) ? json_number_value(v) : NAN;
}

int jsonl_read(const char *path, const char *event, json_t *array)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	_cleanup_free_ char *line = NULL;
	size_t size = 0;

	if (!f)
		return errno == ENOENT ? 0 : negative_errno();
	while (getline(&line, &size, f) >= 0) {
		json_t *j = json_loads(line, JSON_DECODE_ANY, NULL);
		const char *e;

		if (!json_is_object(j)) {
			json_decref(j);
			continue;
		}
		e = json_string_value(json_object_get(j, "event"));
		if (event && (!e || !streq(e, event))) {
			json_decref(j);
			continue;
		}
		if (json_array_append_new(array, j) < 0)
			return -ENOMEM;
	}
	return ferror(f) ? -EIO : 0;
}

int jsonl_read_glob(const char *pattern, const char *event, json_t *array)
{
	glob_t g = { 0 };
	int r = glob(pattern, 0, NULL, &g);

	if (r == GLOB_NOMATCH)
		return 0;
	if (r != 0)
		return r == GLOB_NOSPACE ? -ENOMEM : -EIO;
	for (size_t i = 0; i < g.gl_pathc && r == 0; i++)
		r = jsonl_read(g.gl_pathv[i], event, array);
	globfree(&g);
	return r;
}

static bool name_ok(const char *s, size_t len)
{
	if (len == 0 || s[0] == '.' || s[len - 1] == '.')
		return false;
	for (size_t i = 0; i < len; i++)
		if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) && s[i] != '_' &&
		    s[i] != '.')
			return false;
	return true;
}

int json_set_arg(json_t *o, const char *arg)
{
	const char *eq = strchr(arg, '=');
	size_t len;
	json_t *v, *parent = o;
	_cleanup_free_ char *name = NULL;
	char *key, *dot;

	if (!eq)
		return -EINVAL;
	len = (size_t)(eq - arg);
	if (len > 0 && arg[len - 1] == ':') {
		len--;
		v = eq[1] ? json_loads(eq + 1, JSON_DECODE_ANY, NULL) : json_null();
	} else
		v = json_string(eq + 1);
	if (!v)
		return -EINVAL;
	if (!name_ok(arg, len)) {
		json_decref(v);
		return -EINVAL;
	}
	name = strndup(arg, len);
	if (!name) {
		json_decref(v);
		return -ENOMEM;
	}
	/* Down the dotted path, making the objects on the way. */
	for (key = name; (dot = strchr(key, '.')); key = dot + 1) {
		json_t *child;

		*dot = '\0';
		child = json_object_get(parent, key);
		if (!json_is_object(child)) {
			child = json_object();
			if (!child || json_object_set_new(parent, key, child) < 0) {
				json_decref(v);
				return -ENOMEM;
			}
		}
		parent = child;
	}
	return json_object_set_new(parent, key, v) < 0 ? -ENOMEM : 0;
}

int jsonl_print(FILE *f, const char *prefix, const json_t *j)
{
	_cleanup_free_ char *s = json_dumps(j, JSONL_DUMP_FLAGS);

	if (!s)
		return -ENOMEM;
	if (fprintf(f, "%s%s%s\n", strempty(prefix), prefix ? " " : "", s) < 0 || fflush(f) != 0)
		return negative_errno();
	return 0;
}

const char *json_num_text(const json_t *v, char *buf, size_t size)
{
	if (json_is_integer(v))
		snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, size, "%.15g", json_real_value(v));
	else
		snprintf(buf, size, "?");
	return buf;
}
