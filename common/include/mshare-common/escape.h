/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

/*
 * What a client sent, fit for one log line: control characters (newline,
 * escape sequences, C1 controls), DEL, backslash and bytes that are not
 * valid UTF-8 as C escapes ("\\n", "\\x1b", "\\\\", "\\xff"), valid UTF-8
 * and everything else as it is. In place in buf (at most len bytes,
 * cut short with "..." if it does not fit); returns buf. Log sinks pass
 * every message through it, so that no name a client chose can forge a line.
 */
char *escape_control(const char *s, char *buf, size_t len);
