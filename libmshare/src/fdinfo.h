/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private: mshare_info() in the internal convention, for the other files
 * of the library, and its parser, exposed to the unit test.
 */

#ifndef MSHARE_FDINFO_H
#define MSHARE_FDINFO_H

#include <stdio.h>

#include "mshare.h"
#include "util.h"

/*
 * Parse the text of /proc/PID/fdinfo/FD of an mshare region from f into
 * *out. Lines other than the mshare-* ones, and mshare-* keys this
 * library does not know, are skipped. Returns 0; -EBADF if the text has
 * no mshare-* line we know (not a region); -EPROTO if a line is not
 * terminated by a newline or holds a NUL, if a known key is repeated,
 * missing, or not followed by ":\t" and a decimal number that ends the
 * line and fits its field; -errno for a read error. *out is written only
 * on success.
 */
MSHARE_HIDDEN int mshare__fdinfo_parse(FILE *f, struct mshare_fdinfo *out);

/*
 * Parse /proc/thread-self/fdinfo/fd into *out: 0, -EBADF for a bad
 * descriptor or one that is not a region, or another -errno.
 */
MSHARE_HIDDEN int mshare__info(int fd, struct mshare_fdinfo *out);

#endif /* MSHARE_FDINFO_H */
