/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Private: recognising a descriptor of an mshare region. */

#ifndef MSHARE_REGION_H
#define MSHARE_REGION_H

#include <sys/stat.h>

#include "util.h"

/*
 * fstat() of fd into *st if fd is a descriptor of an mshare region (made
 * by mshare_create() or a file of msharefs): 0, or -EBADF if it is some
 * other file, or -errno.
 */
MSHARE_HIDDEN int mshare__region_stat(int fd, struct stat *st);

#endif /* MSHARE_REGION_H */
