/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idmap.h"
#include "mshare-common/macro.h"

static int parse_ulong(const char **p, unsigned long *ret)
{
	char *end;

	while (**p == ' ' || **p == '\t')
		(*p)++;
	if (**p < '0' || **p > '9')
		return -EBADMSG;
	errno = 0;
	*ret = strtoul(*p, &end, 10);
	if (errno || *ret > UINT32_MAX)
		return -EBADMSG;
	*p = end;
	return 0;
}

int idmap_parse_root(const char *text, unsigned long *ret)
{
	const char *p = text;

	while (*p) {
		unsigned long inside, outside, count;

		if (parse_ulong(&p, &inside) < 0 || parse_ulong(&p, &outside) < 0 ||
		    parse_ulong(&p, &count) < 0)
			return -EBADMSG;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p && *p != '\n')
			return -EBADMSG;
		if (*p)
			p++;
		if (inside == 0 && count > 0) {
			*ret = outside;
			return 0;
		}
	}
	return -ENOENT;
}

static int read_map(pid_t pid, const char *which, unsigned long *ret)
{
	char path[64], buf[4096];
	_cleanup_close_ int fd = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, which);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return idmap_parse_root(buf, ret);
}

int idmap_container_root(pid_t pid, uid_t *ret_uid, gid_t *ret_gid)
{
	unsigned long uid, gid;
	int r;

	r = read_map(pid, "uid_map", &uid);
	if (r < 0)
		return r;
	r = read_map(pid, "gid_map", &gid);
	if (r < 0)
		return r;
	*ret_uid = (uid_t)uid;
	*ret_gid = (gid_t)gid;
	return 0;
}
