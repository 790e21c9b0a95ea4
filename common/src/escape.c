// SPDX-License-Identifier: LGPL-2.1-or-later
#include <string.h>

#include "mshare-common/escape.h"
#include "mshare-common/utf8.h"

/* The length of the valid UTF-8 sequence at s that is no C1 control
 * (U+0080-U+009F, encoded as 0xc2 0x80-0x9f), or 0. */
static size_t utf8_printable_length(const unsigned char *s)
{
	if (s[0] == 0xc2 && s[1] < 0xa0)
		return 0;
	return utf8_sequence_length(s);
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
