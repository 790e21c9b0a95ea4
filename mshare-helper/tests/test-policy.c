/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"
#include "mshare-common/tap.h"
#include "policy.h"

static const char conf[] =
	"[Region]\nName=pool\nSize=4K\n"
	"[Region]\nName=db-main\nSize=4K\n"
	"[Region]\nName=db-test\nSize=4K\n"
	"[Region]\nName=secret\nSize=4K\n"
	/* pool: rw to uid 1000, ro to group 100 */
	"[Grant]\nRegion=pool\nMode=rw\nUser=1000\n"
	"[Grant]\nRegion=pool\nGroup=100\n"
	/* db-*: ro to uid 2000, rw to uid 2000's supplementary group 300 */
	"[Grant]\nRegion=db-*\nUser=2000\n"
	"[Grant]\nRegion=db-main\nMode=rw\nGroup=300\n"
	/* containers */
	"[Grant]\nRegion=db-*\nMode=rw\nContainer=web-*\nAnnotation=tier=prod\n"
	"[Grant]\nRegion=pool\nContainerId=abc*\n"
	"[Grant]\nRegion=secret\nAnnotation=io.mshare/secret=yes\nAnnotation=tier=*\n";

static struct config *load(void)
{
	_cleanup_strv_free_ char **errors = NULL;
	struct config *c = config_new();
	FILE *f = fmemopen((void *)conf, sizeof(conf) - 1, "r");
	int k = c && f ? config_parse_file(c, f, "policy.conf", &errors) : -ENOMEM;

	if (f)
		fclose(f);
	for (char **e = errors; e && *e; e++)
		printf("# %s\n", *e);
	if (k < 0) {
		config_free(c);
		return NULL;
	}
	return c;
}

static enum access_mode host(const struct config *c, const char *region, uid_t uid, gid_t gid,
			     const gid_t *groups, size_t n_groups)
{
	struct peer_identity p = { .uid = uid, .gid = gid, .groups = groups, .n_groups = n_groups };

	return policy_access(c, region, &p, NULL);
}

static enum access_mode container(const struct config *c, const char *region, const char *name,
				  const char *id, const struct container_annotation *a, size_t n)
{
	struct peer_identity root = { .uid = 0, .gid = 0 };
	struct container_identity ct = { .name = name, .id = id, .annotations = a, .n_annotations = n };

	return policy_access(c, region, &root, &ct);
}

int main(void)
{
	_cleanup_config_free_ struct config *c = load();
	const gid_t g300[] = { 50, 300 };
	const struct container_annotation prod[] = { { "tier", "prod" } };
	const struct container_annotation dev[] = { { "tier", "dev" } };
	const struct container_annotation secret[] = { { "io.mshare/secret", "yes" }, { "tier", "dev" } };
	const struct container_annotation secret_only[] = { { "io.mshare/secret", "yes" } };

	ok(c != NULL, "policy configuration parses");
	if (!c)
		return tap_finish();

	ok(host(c, "pool", 1000, 1000, NULL, 0) == ACCESS_RW, "uid grant, rw");
	ok(host(c, "pool", 1001, 100, NULL, 0) == ACCESS_RO, "primary group grant, ro");
	ok(host(c, "pool", 1001, 1001, (gid_t[]){ 100 }, 1) == ACCESS_RO, "supplementary group grant");
	ok(host(c, "pool", 1000, 100, NULL, 0) == ACCESS_RW, "the best of several grants wins");
	ok(host(c, "pool", 1001, 1001, NULL, 0) == ACCESS_NONE, "no grant, no access");
	ok(host(c, "pool", 0, 0, NULL, 0) == ACCESS_NONE, "root has no implicit grant");
	ok(host(c, "db-test", 2000, 2000, NULL, 0) == ACCESS_RO, "pattern grant matches db-test");
	ok(host(c, "db-main", 2000, 2000, g300, 2) == ACCESS_RW, "rw through a supplementary group");
	ok(host(c, "db-test", 2000, 2000, g300, 2) == ACCESS_RO, "that grant is for db-main only");
	ok(host(c, "nonexistent", 1000, 100, NULL, 0) == ACCESS_NONE, "unknown region");
	ok(host(c, "db-main", 3000, 3000, NULL, 0) == ACCESS_NONE,
	   "container grants never match host processes");

	ok(container(c, "db-main", "web-1", NULL, prod, 1) == ACCESS_RW,
	   "container name pattern and annotation match");
	ok(container(c, "db-main", "web-1", NULL, dev, 1) == ACCESS_NONE,
	   "every kind of container key must match (annotation value differs)");
	ok(container(c, "db-main", "web-1", NULL, NULL, 0) == ACCESS_NONE,
	   "a missing annotation does not match");
	ok(container(c, "db-main", "api-1", NULL, prod, 1) == ACCESS_NONE, "name pattern differs");
	ok(container(c, "db-main", NULL, NULL, prod, 1) == ACCESS_NONE, "no name, no name match");
	ok(container(c, "pool", "x", "abcdef", NULL, 0) == ACCESS_RO, "container id pattern");
	ok(container(c, "pool", "x", "xabc", NULL, 0) == ACCESS_NONE, "id pattern is anchored");
	ok(container(c, "secret", "x", NULL, secret, 2) == ACCESS_RO, "all annotations match");
	ok(container(c, "secret", "x", NULL, secret_only, 1) == ACCESS_NONE,
	   "one of two annotations is not enough");
	ok(container(c, "pool", "web-1", "zzz", prod, 1) == ACCESS_NONE,
	   "host grants (uid 1000, gid 100) do not match containers");

	ok(access_allows(ACCESS_RW, ACCESS_RO) && access_allows(ACCESS_RW, ACCESS_RW) &&
	   access_allows(ACCESS_RO, ACCESS_RO) && !access_allows(ACCESS_RO, ACCESS_RW) &&
	   !access_allows(ACCESS_NONE, ACCESS_RO),
	   "rw covers ro, ro does not cover rw");
	return tap_finish();
}
