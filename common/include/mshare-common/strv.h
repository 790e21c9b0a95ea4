/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* NULL-terminated string vectors. Functions return 0 or -ENOMEM. */

#include <stdbool.h>
#include <stddef.h>

#include "mshare-common/macro.h"

void strv_free(char **l);
static inline void strv_freep(char ***l)
{
	strv_free(*l);
}
#define _cleanup_strv_free_ _cleanup_(strv_freep)
size_t strv_length(char *const *l);
int strv_extend(char ***l, const char *s);
int strv_extendf(char ***l, const char *format, ...) _printf_(2, 3);
bool strv_contains(char *const *l, const char *s);
char **strv_copy(char *const *l);
bool strv_equal(char *const *a, char *const *b);
/* Split at blanks, as the list-valued configuration keys are. */
int strv_split_blanks(const char *s, char ***ret);
