/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>

#include "mshare-common/macro.h"
#include "util.h"

int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_double(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !(isdigit((unsigned char)*s) || *s == '.'))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v < 0)
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_fd(const char *s, int *out)
{
	uint64_t v;

	if (parse_u64(s, &v) < 0 || v > INT_MAX)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int probe_readable(const void *addr)
{
	int fds[2];
	char c;
	ssize_t n;
	int r = 0;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return negative_errno();
	n = write(fds[1], addr, 1);
	if (n < 0)
		r = negative_errno();
	else if (n == 1 && read(fds[0], &c, 1) != 1)
		r = -EIO;
	safe_close(fds[0]);
	safe_close(fds[1]);
	return r;
}
