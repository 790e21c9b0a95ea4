// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mshare_info(): what /proc/thread-self/fdinfo/FD shows of a region.
 * The kernel writes one "key:\tvalue\n" line for each of
 *
 *	mshare-size	 bytes, 0 while the region is unsized
 *	mshare-align	 sharing alignment in bytes
 *	mshare-owned	 1 while an owner file of the region is open, else 0
 *	mshare-owner-fd	 1 if this descriptor's file is an owner file, else 0
 *	mshare-attached	 processes with a window onto the region
 *	mshare-windows	 windows onto the region
 *	mshare-rss	 resident pages of the region
 *	mshare-pgtables	 bytes of page tables of the region
 *
 * after the lines every fdinfo file has (pos, flags, mnt_id, ino). A kernel
 * from before ownership moved to the descriptor shows, instead of the two
 * ownership lines, mshare-owner (the owner's TGID, 0 once gone): it is read
 * as owned = (TGID != 0) and owner_fd = -1 (not told), so that the library
 * still works there (mshare_alignment() needs the parser).
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "fdinfo.h"
#include "util.h"

enum {
	KEY_SIZE,
	KEY_ALIGN,
	KEY_OWNED,
	KEY_OWNER_FD,
	KEY_ATTACHED,
	KEY_WINDOWS,
	KEY_RSS,
	KEY_PGTABLES,
	KEY_OWNER_PID,	/* older kernels, instead of the two above */
	NR_KEYS
};

static const struct {
	const char *name;
	unsigned long long max;
} keys[NR_KEYS] = {
	[KEY_SIZE]	= { "mshare-size",	UINT64_MAX },
	[KEY_ALIGN]	= { "mshare-align",	UINT64_MAX },
	[KEY_OWNED]	= { "mshare-owned",	1 },
	[KEY_OWNER_FD]	= { "mshare-owner-fd",	1 },
	[KEY_ATTACHED]	= { "mshare-attached",	UINT_MAX },
	[KEY_WINDOWS]	= { "mshare-windows",	UINT_MAX },
	[KEY_RSS]	= { "mshare-rss",	UINT64_MAX },
	[KEY_PGTABLES]	= { "mshare-pgtables",	UINT64_MAX },
	[KEY_OWNER_PID]	= { "mshare-owner",	INT_MAX },
};

#define BIT(k)		(1u << (k))
/* What every kernel shows, and the ownership lines of the two formats. */
#define KEYS_COMMON	(BIT(KEY_SIZE) | BIT(KEY_ALIGN) | BIT(KEY_ATTACHED) | \
			 BIT(KEY_WINDOWS) | BIT(KEY_RSS) | BIT(KEY_PGTABLES))
#define KEYS_OWNERSHIP	(BIT(KEY_OWNED) | BIT(KEY_OWNER_FD))

#define KEY_PREFIX	"mshare-"

/* The index of the key line[0, len) names, or -1 for an unknown one. */
static int key_index(const char *line, size_t len)
{
	for (int i = 0; i < NR_KEYS; i++)
		if (strlen(keys[i].name) == len &&
		    !memcmp(line, keys[i].name, len))
			return i;
	return -1;
}

/* A decimal number that is all of s, at most max: no sign, no spaces. */
static int parse_decimal(const char *s, unsigned long long max,
			 unsigned long long *value)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EPROTO;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end != '\0' || v > max)
		return -EPROTO;
	*value = v;
	return 0;
}

int mshare__fdinfo_parse(FILE *f, struct mshare_fdinfo *out)
{
	_cleanup_free_ char *line = NULL;
	unsigned long long value[NR_KEYS];
	unsigned int seen = 0;
	int owned, owner_fd;
	size_t cap = 0;
	ssize_t len;

	for (;;) {
		const char *colon;
		int i, r;

		errno = 0;
		len = getline(&line, &cap, f);
		if (len < 0)
			break;
		if (line[len - 1] != '\n' || memchr(line, '\0', len - 1))
			return -EPROTO;
		line[--len] = '\0';

		if (strncmp(line, KEY_PREFIX, strlen(KEY_PREFIX)))
			continue;
		colon = strchr(line, ':');
		if (!colon)
			return -EPROTO;
		i = key_index(line, colon - line);
		if (i < 0)
			continue;	/* a key of a newer kernel */
		if (colon[1] != '\t' || (seen & BIT(i)))
			return -EPROTO;
		r = parse_decimal(colon + 2, keys[i].max, &value[i]);
		if (r < 0)
			return r;
		seen |= BIT(i);
	}
	if (ferror(f) || !feof(f))
		return errno ? -errno : -EIO;

	if (!seen)
		return -EBADF;
	if ((seen & KEYS_COMMON) != KEYS_COMMON)
		return -EPROTO;
	/* Both ownership lines, or (an older kernel) the owner's TGID alone. */
	if ((seen & KEYS_OWNERSHIP) == KEYS_OWNERSHIP) {
		owned = (int)value[KEY_OWNED];
		owner_fd = (int)value[KEY_OWNER_FD];
	} else if (!(seen & KEYS_OWNERSHIP) && (seen & BIT(KEY_OWNER_PID))) {
		owned = value[KEY_OWNER_PID] != 0;
		owner_fd = -1;
	} else
		return -EPROTO;

	*out = (struct mshare_fdinfo) {
		.size		= value[KEY_SIZE],
		.align		= value[KEY_ALIGN],
		.owned		= owned,
		.owner_fd	= owner_fd,
		.attached	= (unsigned int)value[KEY_ATTACHED],
		.windows	= (unsigned int)value[KEY_WINDOWS],
		.rss_pages	= value[KEY_RSS],
		.pgtables_bytes	= value[KEY_PGTABLES],
	};
	return 0;
}

int mshare__info(int fd, struct mshare_fdinfo *out)
{
	_cleanup_fclose_ FILE *f = NULL;
	char path[MSHARE_PROC_PATH_MAX];

	/* Tell a bad descriptor from a missing /proc. */
	if (fcntl(fd, F_GETFD) < 0)
		return -errno;
	/* thread-self: a thread may have a file table of its own. */
	snprintf(path, sizeof(path), "/proc/thread-self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	return mshare__fdinfo_parse(f, out);
}

int mshare_info(int fd, struct mshare_fdinfo *out)
{
	return (int)mshare_ret(mshare__info(fd, out));
}
