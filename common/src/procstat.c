/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <sys/resource.h>

#include "mshare-common/macro.h"
#include "mshare-common/procstat.h"

int proc_fields(const char *path, const char *const *keys, int64_t *values, size_t n)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	char line[512];
	size_t found = 0;

	if (!f)
		return negative_errno();
	for (size_t i = 0; i < n; i++)
		values[i] = -1;
	while (found < n && fgets(line, sizeof(line), f)) {
		for (size_t i = 0; i < n; i++) {
			size_t len = strlen(keys[i]);
			long long v;
			char *end;

			if (values[i] >= 0 || strncmp(line, keys[i], len) != 0 ||
			    (line[len] != ':' && line[len] != ' '))
				continue;
			/* "Key:   123 kB", "key 123": the first number after the key. */
			errno = 0;
			v = strtoll(line + len + 1, &end, 10);
			if (errno || end == line + len + 1 || v < 0)
				return -EBADMSG;
			values[i] = v;
			found++;
			break;
		}
	}
	if (ferror(f))
		return -EIO;
	return (int)found;
}

int proc_field(const char *path, const char *key, int64_t *ret)
{
	int64_t v;
	int r = proc_fields(path, &key, &v, 1);

	if (r < 0)
		return r;
	if (r == 0)
		return -ENOENT;
	*ret = v;
	return 0;
}

int64_t proc_vmpte_kb(void)
{
	int64_t kb;
	int r = proc_field("/proc/self/status", "VmPTE", &kb);

	return r < 0 ? r : kb;
}

void proc_sample(struct proc_sample *s)
{
	struct rusage ru;
	int64_t kb = proc_vmpte_kb();

	s->vmpte_kb = kb < 0 ? -1 : kb;
	getrusage(RUSAGE_SELF, &ru);
	s->minflt = (uint64_t)ru.ru_minflt;
	s->majflt = (uint64_t)ru.ru_majflt;
}

uint64_t proc_start_boottime_ns(void)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/stat", "re");
	char buf[1024], *p;
	unsigned long long ticks;
	long hz = sysconf(_SC_CLK_TCK);
	int field;

	if (!f || !fgets(buf, sizeof(buf), f) || hz <= 0)
		return 0;
	/* The command name, field 2, may hold blanks and ')': skip past its last ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	p++;
	/* p is at field 3; starttime is field 22. */
	for (field = 3; field < 22; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return 0;
	}
	if (sscanf(p, " %llu", &ticks) != 1)
		return 0;
	return (uint64_t)ticks * (1000000000ull / (uint64_t)hz);
}
