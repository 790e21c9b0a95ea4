/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>

#include "jsonl.h"
#include "mshare-common/strprintf.h"
#include "mshare-common/procstat.h"
#include "sample.h"

/* proc_fields()'s -1 for a missing key is null. */
static json_t *num_or_null(int64_t v)
{
	return v < 0 ? json_null() : json_integer(v);
}

static int cmp_id(const void *a, const void *b)
{
	return strcmp(json_string_value(json_object_get(*(json_t *const *)a, "id")),
		      json_string_value(json_object_get(*(json_t *const *)b, "id")));
}

/* cg: the pagetables of each memory.stat under dir/prefix*. */
static int sample_cgroups(const char *dir, const char *prefix, json_t *cg)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0, len = strlen(strempty(prefix));
	json_t **items;
	int r = 0;

	if (!d)
		return errno == ENOENT ? 0 : negative_errno();
	while (r == 0 && (e = readdir(d))) {
		_cleanup_free_ char *path = NULL;
		int64_t bytes;

		if (e->d_name[0] == '.' || strncmp(e->d_name, strempty(prefix), len) != 0)
			continue;
		path = strprintf("%s/%s/memory.stat", dir, e->d_name);
		if (!path) {
			r = -ENOMEM;
			break;
		}
		/* A worker cgroup without the file (gone, no memory controller) is left out. */
		if (proc_field(path, "pagetables", &bytes) < 0)
			continue;
		if (json_array_append_new(cg, json_pack("{s:s, s:I}", "id", e->d_name, "pagetables",
							(json_int_t)bytes)) < 0)
			r = -ENOMEM;
	}
	closedir(d);
	if (r < 0)
		return r;
	/* readdir's order is the file system's; the record's is the ids'. */
	n = json_array_size(cg);
	items = calloc(n ?: 1, sizeof(*items));
	if (!items)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		items[i] = json_incref(json_array_get(cg, i));
	qsort(items, n, sizeof(*items), cmp_id);
	json_array_clear(cg);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(cg, items[i]);
	free(items);
	return 0;
}

int sample_take(const struct sample_source *src, json_t **ret)
{
	static const char *const keys[] = { "PageTables", "MemAvailable", "Shmem", "HugePages_Free" };
	int64_t mem[ARRAY_SIZE(keys)], owner = -1;
	_cleanup_json_ json_t *s = NULL;
	json_t *cg;
	int r;

	r = proc_fields(src->meminfo, keys, mem, ARRAY_SIZE(keys));
	if (r < 0)
		return r;
	if (src->owner_stat && proc_field(src->owner_stat, "pagetables", &owner) < 0)
		owner = -1;
	s = json_pack("{s:o, s:o, s:o, s:o, s:o, s:[]}", "pagetables_kb", num_or_null(mem[0]),
		      "mem_available_kb", num_or_null(mem[1]), "shmem_kb", num_or_null(mem[2]), "hugepages_free",
		      num_or_null(mem[3]), "owner_pagetables", num_or_null(owner), "cg");
	if (!s)
		return -ENOMEM;
	cg = json_object_get(s, "cg");
	if (src->cgroups) {
		r = sample_cgroups(src->cgroups, src->prefix, cg);
		if (r < 0)
			return r;
	}
	*ret = TAKE_PTR(s);
	return 0;
}
