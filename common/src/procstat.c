/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <sys/resource.h>

#include "mshare-common/macro.h"
#include "mshare-common/procstat.h"

int64_t proc_vmpte_kb(void)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	int64_t kb;

	if (!f)
		return negative_errno();
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPTE: %" SCNd64 " kB", &kb) == 1)
			return kb;
	return -ENOENT;
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
