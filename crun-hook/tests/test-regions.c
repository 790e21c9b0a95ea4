/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The io.mshare.regions and io.mshare.socket annotations. */
#include "mshare-common/macro.h"
#include "mshare-common/region-name.h"
#include "mshare-common/strprintf.h"
#include "mshare-common/tap.h"
#include "regions.h"

/* Parses s and compares the result, formatted, with want ("" if an error
 * is expected, whose message must contain want_error). */
static void parse(const char *s, const char *want, const char *want_error)
{
	_cleanup_(region_list_done) struct region_list l = {};
	_cleanup_free_ char *error = NULL, *got = NULL;
	int r = regions_parse(s, &l, &error);

	if (want_error) {
		ok(r == -EINVAL && error && strstr(error, want_error), "\"%s\" is refused: %s", s,
		   strna(error));
		ok(l.n == 0 && !l.items, "\"%s\": nothing is returned on error", s);
		return;
	}
	got = r == 0 ? regions_format(&l) : NULL;
	ok(r == 0 && got && streq(got, want), "\"%s\" -> \"%s\" (%d %s)", s, strna(got), r, strna(error));
}

static void test_good(void)
{
	parse("pool", "pool:ro", NULL);
	parse("pool:ro", "pool:ro", NULL);
	parse("pool:rw", "pool:rw", NULL);
	parse("pool:rw,catalog:ro", "pool:rw,catalog:ro", NULL);
	parse("pool:rw,catalog", "pool:rw,catalog:ro", NULL);
	parse(" pool:rw , catalog ", "pool:rw,catalog:ro", NULL);
	parse("\tpool", "pool:ro", NULL);
	parse("Db-1.main_2:rw", "Db-1.main_2:rw", NULL);
	parse("0pool", "0pool:ro", NULL);
}

static void test_bad(void)
{
	parse("", "", "no region is named");
	parse("   ", "", "no region is named");
	parse(",", "", "entry 1 is empty");
	parse("pool,", "", "entry 2 is empty");
	parse("pool,,catalog", "", "entry 2 is empty");
	parse(",pool", "", "entry 1 is empty");
	parse("pool:", "", "mode '' is neither");
	parse("pool:RW", "", "mode 'RW' is neither");
	parse("pool:rw:ro", "", "mode 'rw:ro' is neither");
	parse("pool :rw", "", "'pool ' is not a region name");
	parse("pool: rw", "", "mode ' rw' is neither");
	parse(":rw", "", "'' is not a region name");
	parse("-pool", "", "'-pool' is not a region name");
	parse(".pool", "", "'.pool' is not a region name");
	parse("a/b", "", "'a/b' is not a region name");
	parse("po ol", "", "'po ol' is not a region name");
	parse("caf\xc3\xa9", "", "is not a region name");
	parse("pool;catalog", "", "is not a region name");
	parse("pool,pool:rw", "", "region 'pool' is named twice");
	parse("a,b,a", "", "region 'a' is named twice");
}

static void test_limits(void)
{
	char name[REGION_NAME_MAX + 2];
	_cleanup_free_ char *many = NULL, *too_many = NULL, *want = NULL;
	_cleanup_(region_list_done) struct region_list l = {};
	_cleanup_free_ char *error = NULL;
	size_t len = 0;
	int r;

	memset(name, 'a', sizeof(name));
	name[REGION_NAME_MAX] = '\0';
	want = strprintf("%s:ro", name);
	parse(name, want, NULL);
	name[REGION_NAME_MAX] = 'a';
	name[REGION_NAME_MAX + 1] = '\0';
	parse(name, "", "is not a region name");

	many = malloc(REGIONS_MAX * 8 + 16);
	for (int i = 0; i < REGIONS_MAX; i++)
		len += (size_t)sprintf(many + len, "%sr%d", i ? "," : "", i);
	r = regions_parse(many, &l, &error);
	ok(r == 0 && l.n == REGIONS_MAX, "%d regions are accepted (%zu)", REGIONS_MAX, l.n);
	ok(l.n == REGIONS_MAX && streq(l.items[REGIONS_MAX - 1].name, "r63") &&
	   l.items[REGIONS_MAX - 1].mode == ACCESS_RO, "the last of them is r63:ro");
	too_many = strprintf("%s,extra", many);
	parse(too_many, "", "more than 64 regions");
}

static void path(const char *p, const char *want_error)
{
	_cleanup_free_ char *error = NULL;
	int r = channel_path_check(p, &error);

	if (want_error)
		ok(r == -EINVAL && error && strstr(error, want_error), "socket path \"%s\" is refused: %s", p,
		   strna(error));
	else
		ok(r == 0 && !error, "socket path \"%s\" is accepted (%s)", p, strna(error));
}

static void test_socket_path(void)
{
	char longest[CHANNEL_PATH_MAX + 2];

	path("/run/mshare/mshare.sock", NULL);
	path("/mshare.sock", NULL);
	path("/var/run/app/x", NULL);
	path("run/mshare.sock", "is not an absolute path");
	path("", "is not an absolute path");
	path("/run/mshare/", "names no file");
	path("/", "names no file");
	path("/run//mshare.sock", "has an empty, '.' or '..' component");
	path("/run/./mshare.sock", "has an empty, '.' or '..' component");
	path("/run/../etc/x", "has an empty, '.' or '..' component");
	path("/run/..", "has an empty, '.' or '..' component");
	path("/run/...", NULL);
	memset(longest, 'a', sizeof(longest));
	longest[0] = '/';
	longest[CHANNEL_PATH_MAX] = '\0';
	path(longest, NULL);
	longest[CHANNEL_PATH_MAX] = 'a';
	longest[CHANNEL_PATH_MAX + 1] = '\0';
	path(longest, "which a unix socket address cannot hold");
}

int main(void)
{
	test_good();
	test_bad();
	test_limits();
	test_socket_path();
	return tap_finish();
}
