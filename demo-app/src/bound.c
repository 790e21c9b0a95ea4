/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "bound.h"
#include "jsonl.h"
#include "mshare-common/strprintf.h"

const struct bound bound_ci[2] = {
	{ "page tables", "page tables", "pagetables_added_kb", 20, " kB" },
	{ "minor faults per worker mapping the pool (median of the warm-up)", "minor faults per worker",
	  "warmup_minflt_median", 100, "" },
};

bool bound_check(const struct bound *b, const json_t *mshare, const json_t *shm, const char *context,
		 char **text)
{
	json_t *mj = mshare ? json_object_get(mshare, b->field) : NULL;
	json_t *sj = shm ? json_object_get(shm, b->field) : NULL;
	char mt[64], st[64], rt[64];
	double m, s;
	bool ok;

	*text = NULL;
	if (!mshare || !shm) {
		*text = strprintf("%s: the mshare or the shm point did not run; the bound cannot be checked",
				  b->short_name);
		return false;
	}
	if (!json_is_number(mj) || !json_is_number(sj)) {
		*text = strprintf("%s: mshare %s vs shm %s: a point has no number; the bound cannot be checked (%s)",
				  b->name, json_is_number(mj) ? json_num_text(mj, mt, sizeof(mt)) : "none",
				  json_is_number(sj) ? json_num_text(sj, st, sizeof(st)) : "none", context);
		return false;
	}
	m = json_number_value(mj) < 0 ? 0 : json_number_value(mj);
	s = json_number_value(sj);
	ok = s > 0 && s >= b->factor * m;
	if (m > 0)
		snprintf(rt, sizeof(rt), "%.1f", s / m);
	else
		snprintf(rt, sizeof(rt), "inf");
	*text = strprintf("%s: mshare %s%s vs shm %s%s (ratio %s%s %g; %s)", b->name,
			  json_num_text(mj, mt, sizeof(mt)), b->unit, json_num_text(sj, st, sizeof(st)),
			  b->unit, rt, ok ? " >=" : ", expected >=", b->factor, context);
	return ok;
}
