/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <time.h>

#include "util.h"

usec_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (usec_t)ts.tv_sec * USEC_PER_SEC + (usec_t)ts.tv_nsec / 1000;
}

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

int parse_size(const char *s, uint64_t *ret)
{
	static const struct {
		char c;
		unsigned shift;
	} suffixes[] = {
		{ 'K', 10 }, { 'M', 20 }, { 'G', 30 }, { 'T', 40 }, { 'P', 50 },
	};
	const char *end;
	uint64_t v;
	int r;

	r = parse_u64_prefix(s, &v, &end);
	if (r < 0)
		return r;
	if (*end) {
		unsigned shift = 0;

		for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++)
			if (toupper((unsigned char)*end) == suffixes[i].c)
				shift = suffixes[i].shift;
		if (!shift || end[1])
			return -EINVAL;
		if (v > (UINT64_MAX >> shift))
			return -ERANGE;
		v <<= shift;
	}
	*ret = v;
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

bool region_name_is_valid(const char *name)
{
	size_t n = 0;

	if (!name || !isalnum((unsigned char)name[0]))
		return false;
	for (const char *p = name; *p; p++, n++)
		if (!(isascii((unsigned char)*p) && isalnum((unsigned char)*p)) &&
		    !strchr("_.-", *p))
			return false;
	return n <= REGION_NAME_MAX;
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

const char *errno_to_name(int error)
{
	const char *n;

	if (error < 0)
		error = -error;
	n = strerrorname_np(error);
	return n ? n : "EIO";
}

int errno_from_name(const char *name)
{
	/* The table is glibc's; errno values are below 4096 on Linux. */
	for (int e = 1; e < 4096; e++) {
		const char *n = strerrorname_np(e);

		if (n && streq(n, name))
			return e;
	}
	return 0;
}

/* The length of the valid UTF-8 sequence at s that is no C1 control
 * (U+0080-U+009F), or 0. */
static size_t utf8_printable_length(const unsigned char *s)
{
	size_t n;
	unsigned char lo = 0x80, hi = 0xbf;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	/* No overlong forms, no surrogates, nothing past U+10FFFF. */
	if (s[0] == 0xc2)
		lo = 0xa0;
	else if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

char *escape_control(const char *s, char *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;

	if (len == 0)
		return buf;
	while (*p) {
		unsigned char ch = *p;
		char e[5];
		size_t n = 0, take = 1;

		if (ch == '\\' || ch == '\n' || ch == '\t' || ch == '\r') {
			e[n++] = '\\';
			e[n++] = ch == '\n' ? 'n' : ch == '\t' ? 't' : ch == '\r' ? 'r' : '\\';
		} else if (ch >= 0x80 && (take = utf8_printable_length(p)) > 0) {
			memcpy(e, p, take);
			n = take;
		} else if (ch < 0x20 || ch >= 0x7f) {
			/* Control characters, and bytes that are no valid UTF-8 (the
			 * journal would keep the message as a blob nobody reads). */
			take = 1;
			e[n++] = '\\';
			e[n++] = 'x';
			e[n++] = hex[ch >> 4];
			e[n++] = hex[ch & 15];
		} else
			e[n++] = (char)ch;
		if (o + n + 1 > len) {
			/* "..." marks the cut, in the room that is left. */
			for (size_t i = 0; i < 3 && len > 4; i++)
				buf[len - 4 + i] = '.';
			o = len > 4 ? len - 1 : o;
			break;
		}
		memcpy(buf + o, e, n);
		o += n;
		p += take;
	}
	buf[o] = '\0';
	return buf;
}

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
