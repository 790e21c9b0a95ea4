/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "config.h"
#include "mshare-common/tap.h"

/* Parses text as "test.conf" plus the cross-file checks. */
static int parse_n(const char *text, size_t n, struct config **ret, char ***errors)
{
	_cleanup_config_free_ struct config *c = config_new();
	FILE *f = fmemopen((void *)text, n, "r");
	int r;

	if (!c || !f) {
		if (f)
			fclose(f);
		return -ENOMEM;
	}
	r = config_parse_file(c, f, "test.conf", errors);
	fclose(f);
	if (r == 0)
		r = config_verify(c, errors);
	if (r == 0 && ret)
		*ret = TAKE_PTR(c);
	return r;
}

static int parse(const char *text, struct config **ret, char ***errors)
{
	return parse_n(text, strlen(text), ret, errors);
}

static bool has_error(char **errors, const char *needle)
{
	for (char **e = errors; e && *e; e++)
		if (strstr(*e, needle))
			return true;
	return false;
}

static void print_errors(char **errors)
{
	for (char **e = errors; e && *e; e++)
		printf("#   error: %s\n", *e);
}

/* A bad configuration: it fails, and some error contains each needle. */
static void expect_error_n(const char *what, const char *text, size_t n, const char *needle1,
			   const char *needle2)
{
	_cleanup_strv_free_ char **errors = NULL;
	int r = parse_n(text, n, NULL, &errors);
	bool pass = r == -EINVAL && has_error(errors, needle1) && (!needle2 || has_error(errors, needle2));

	if (!ok(pass, "rejected: %s (\"%s\")", what, needle1))
		print_errors(errors);
}

static void expect_error(const char *what, const char *text, const char *needle1, const char *needle2)
{
	expect_error_n(what, text, strlen(text), needle1, needle2);
}

static void test_good(void)
{
	_cleanup_config_free_ struct config *c = NULL;
	_cleanup_strv_free_ char **errors = NULL;
	const struct region_config *r;
	const struct grant *g;
	int k;

	k = parse("# a full example\n"
		  "[Region]\n"
		  "Name=pool\n"
		  "Size=64M\n"
		  "Backing=memfd\n"
		  "Protection=rw\n"
		  "Populate=yes\n"
		  "\n"
		  "; second region, indented keys, CRLF, inline comment\r\n"
		  "[Region]\r\n"
		  "  Name = data\r\n"
		  "\tSize = 1G ; one GiB\r\n"
		  "  Backing = file\r\n"
		  "  Path = /var/lib/data/file\r\n"
		  "  Offset = 8K\r\n"
		  "  Protection = r\r\n"
		  "[Region]\n"
		  "Name=huge\n"
		  "Size=2G\n"
		  "Backing=hugetlbfs\n"
		  "HugePageSize=1G\n"
		  "[Region]\n"
		  "Name=plain\n"
		  "Size=4096\n"
		  "[Region]\n"
		  "Name=huge2\n"
		  "Size=4M\n"
		  "Backing=hugetlbfs\n"
		  "[Grant]\n"
		  "Region=pool\n"
		  "Mode=rw\n"
		  "User=root 1000\n"
		  "User=4242\n"
		  "Group=root 5\n"
		  "[Grant]\n"
		  "Region=d*\n"
		  "Container=web-* db-?\n"
		  "ContainerId=abc*\n"
		  "Annotation=io.mshare.regions=*data*\n"
		  "Annotation=tier=prod\n"
		  "[Grant]\n"
		  "Region=plain\n"
		  "User=1\n"
		  "User=\n"
		  "User=2\n",
		  &c, &errors);
	ok(k == 0, "a full configuration parses");
	print_errors(errors);
	if (k < 0)
		return;
	ok(c->n_regions == 5 && c->n_grants == 3, "5 regions, 3 grants");

	r = config_find_region(c, "pool");
	ok(r && r->size == 64 << 20 && r->backing == BACKING_MEMFD &&
	   r->prot == (PROT_READ | PROT_WRITE) && r->populate && !r->path,
	   "memfd region");
	ok(r && streq(r->source, "test.conf:2"), "region source is file:line (%s)", r ? r->source : "");
	r = config_find_region(c, "data");
	ok(r && r->size == 1ULL << 30 && r->backing == BACKING_FILE && r->path &&
	   streq(r->path, "/var/lib/data/file") && r->offset == 8192 && r->prot == PROT_READ &&
	   !r->populate,
	   "file region with blanks, CRLF and an inline comment");
	r = config_find_region(c, "huge");
	ok(r && r->backing == BACKING_HUGETLBFS && r->huge_page_size == 1ULL << 30, "hugetlbfs 1G");
	r = config_find_region(c, "huge2");
	ok(r && r->huge_page_size == 2 << 20, "HugePageSize defaults to 2M");
	r = config_find_region(c, "plain");
	ok(r && r->backing == BACKING_ANONYMOUS && r->prot == (PROT_READ | PROT_WRITE) && !r->populate,
	   "defaults: anonymous, rw, no populate");

	g = &c->grants[0];
	ok(streq(g->region, "pool") && g->mode == ACCESS_RW && g->n_uids == 3 && g->uids[0] == 0 &&
	   g->uids[1] == 1000 && g->uids[2] == 4242 && g->n_gids == 2 && g->gids[0] == 0 && g->gids[1] == 5,
	   "host grant: repeated User= adds up, names resolve");
	g = &c->grants[1];
	ok(streq(g->region, "d*") && g->mode == ACCESS_RO && strv_length(g->containers) == 2 &&
	   strv_length(g->container_ids) == 1 && g->n_annotations == 2 &&
	   streq(g->annotations[0].key, "io.mshare.regions") &&
	   streq(g->annotations[0].pattern, "*data*") && streq(g->annotations[1].key, "tier"),
	   "container grant, Mode= defaults to ro");
	g = &c->grants[2];
	ok(g->n_uids == 1 && g->uids[0] == 2, "an empty User= resets the list");
}

static void test_equal(void)
{
	_cleanup_config_free_ struct config *a = NULL, *b = NULL;
	_cleanup_strv_free_ char **errors = NULL;

	parse("[Region]\nName=x\nSize=4K\nPopulate=no\n[Region]\nName=y\nSize=8K\n", &a, &errors);
	parse("\n[Region]\nName=x\nSize=4K\nPopulate=yes\n[Region]\nName=y\nSize=12K\n", &b, &errors);
	ok(a && b, "two configurations parse");
	if (!a || !b)
		return;
	ok(region_config_equal(&a->regions[0], &b->regions[0]),
	   "Populate= and the place do not make a region different");
	ok(!region_config_equal(&a->regions[1], &b->regions[1]), "Size= does");
}

static void test_bad(void)
{
	static const char nul[] = "[Region]\nName=x\nSi\0ze=4K\n";
	char long_line[300];

	expect_error("unknown key", "[Region]\nName=x\nSise=64M\n", "test.conf:3: Sise=: unknown key", NULL);
	expect_error("unknown key in a grant", "[Region]\nName=x\nSize=4K\n[Grant]\nRegion=x\nUser=0\nUsers=1\n",
		     "test.conf:7: Users=: unknown key in [Grant]", NULL);
	expect_error("unknown section", "[Regoin]\nName=x\n", "test.conf:1: unknown section [Regoin]", NULL);
	expect_error("key outside a section", "Name=x\n", "test.conf:1: Name=: key outside of a section", NULL);
	expect_error("empty value", "[Region]\nName=x\nSize=\n", "test.conf:3: Size=: empty value", NULL);
	expect_error("bad size", "[Region]\nName=x\nSize=64Q\n", "test.conf:3: Size=: invalid size '64Q'", NULL);
	expect_error("negative size", "[Region]\nName=x\nSize=-1\n", "test.conf:3: Size=: invalid size", NULL);
	expect_error("huge size", "[Region]\nName=x\nSize=99999999999999999999\n",
		     "test.conf:3: Size=: '99999999999999999999' is too large", NULL);
	expect_error("zero size", "[Region]\nName=x\nSize=0\n", "test.conf:3: Size=: must not be zero", NULL);
	expect_error("unaligned size", "[Region]\nName=x\nSize=1000\n",
		     "test.conf:3: Size=: 1000 is not a multiple of the page size", NULL);
	expect_error("bad name", "[Region]\nName=a b\nSize=4K\n", "test.conf:2: Name=: invalid region name 'a b'", NULL);
	expect_error("name with a leading dash", "[Region]\nName=-x\nSize=4K\n", "test.conf:2: Name=: invalid", NULL);
	expect_error("missing name", "[Region]\nSize=4K\n", "test.conf:1: [Region] without Name=", NULL);
	expect_error("missing size", "\n[Region]\nName=x\n", "test.conf:2: [Region] without Size=", NULL);
	expect_error("bad backing", "[Region]\nName=x\nSize=4K\nBacking=tmpfs\n",
		     "test.conf:4: Backing=: unknown backing 'tmpfs'", NULL);
	expect_error("file without path", "[Region]\nName=x\nSize=4K\nBacking=file\n",
		     "test.conf:4: Backing=file needs Path=", NULL);
	expect_error("relative path", "[Region]\nName=x\nSize=4K\nBacking=file\nPath=data\n",
		     "test.conf:5: Path=: 'data' is not an absolute path", NULL);
	expect_error("path without file backing", "[Region]\nName=x\nSize=4K\nPath=/data\n",
		     "test.conf:4: Path=: only valid with Backing=file", NULL);
	expect_error("offset without file backing", "[Region]\nName=x\nSize=4K\nOffset=4K\n",
		     "test.conf:4: Offset=: only valid with Backing=file", NULL);
	expect_error("unaligned offset", "[Region]\nName=x\nSize=4K\nBacking=file\nPath=/d\nOffset=100\n",
		     "test.conf:6: Offset=: 100 is not a multiple of the page size", NULL);
	expect_error("bad huge page size", "[Region]\nName=x\nSize=6M\nBacking=hugetlbfs\nHugePageSize=3M\n",
		     "test.conf:5: HugePageSize=: '3M' is not a huge page size", NULL);
	expect_error("huge page size without hugetlbfs", "[Region]\nName=x\nSize=4M\nHugePageSize=2M\n",
		     "test.conf:4: HugePageSize=: only valid with Backing=hugetlbfs", NULL);
	expect_error("size not a multiple of the huge page size",
		     "[Region]\nName=x\nSize=3M\nBacking=hugetlbfs\n",
		     "test.conf:3: Size=: 3145728 is not a multiple of HugePageSize=", NULL);
	expect_error("bad protection", "[Region]\nName=x\nSize=4K\nProtection=wx\n",
		     "test.conf:4: Protection=: invalid protection 'wx'", NULL);
	expect_error("bad boolean", "[Region]\nName=x\nSize=4K\nPopulate=maybe\n",
		     "test.conf:4: Populate=: invalid boolean 'maybe'", NULL);
	expect_error("duplicate key", "[Region]\nName=x\nSize=4K\nSize=8K\n",
		     "test.conf:4: Size=: duplicate key", NULL);
	expect_error("duplicate region", "[Region]\nName=x\nSize=4K\n[Region]\nName=x\nSize=8K\n",
		     "test.conf:5: Name=: duplicate region name 'x', first defined at test.conf:1", NULL);
	expect_error("grant without region", "[Grant]\nUser=0\n", "test.conf:1: [Grant] without Region=", NULL);
	expect_error("grant of an unknown region", "[Grant]\nRegion=nope\nUser=0\n",
		     "test.conf:1: Region=: no region named 'nope' is configured", NULL);
	expect_error("grant of a bad region name", "[Grant]\nRegion=a b\nUser=0\n",
		     "test.conf:2: Region=: 'a b' is neither a region name nor a pattern", NULL);
	expect_error("bad mode", "[Region]\nName=x\nSize=4K\n[Grant]\nRegion=x\nMode=rx\nUser=0\n",
		     "test.conf:6: Mode=: invalid mode 'rx'", NULL);
	expect_error("unknown user", "[Region]\nName=x\nSize=4K\n[Grant]\nRegion=x\nUser=root no-such-user-mshare\n",
		     "test.conf:6: User=: unknown user 'no-such-user-mshare'", NULL);
	expect_error("unknown group", "[Region]\nName=x\nSize=4K\n[Grant]\nRegion=x\nGroup=no-such-group-mshare\n",
		     "test.conf:6: Group=: unknown group 'no-such-group-mshare'", NULL);
	expect_error("uid -1", "[Region]\nName=x\nSize=4K\n[Grant]\nRegion=x\nUser=4294967295\n",
		     "test.conf:6: User=: invalid user ID '4294967295'", NULL);
	expect_error("grant to nobody", "[Region]\nName=x\nSize=4K\n[Grant]\nRegion=x\nMode=rw\n",
		     "test.conf:4: [Grant] matches nobody", NULL);
	expect_error("annotation without =", "[Region]\nName=x\nSize=4K\n[Grant]\nRegion=x\nAnnotation=tier\n",
		     "test.conf:6: Annotation=: 'tier' is not KEY=PATTERN", NULL);
	expect_error("syntax error", "[Region]\nName=x\nSize=4K\nthis is not a key\n",
		     "test.conf:4: syntax error", NULL);
	expect_error("unclosed section header", "[Region\nName=x\nSize=4K\n", "test.conf:1: syntax error", NULL);
	expect_error("empty section", "[Region]\n[Region]\nName=x\nSize=4K\n", "test.conf:1: empty section", NULL);
	expect_error_n("NUL byte", nul, sizeof(nul) - 1, "test.conf:3: NUL byte", NULL);
	/* The replies to show and list carry these in JSON, which cannot. */
	expect_error("a path that is not UTF-8", "[Region]\nName=x\nSize=4K\nBacking=file\nPath=/srv/caf\xe9\n",
		     "test.conf:5: Path=: not valid UTF-8", NULL);
	expect_error("a container pattern that is not UTF-8",
		     "[Region]\nName=x\nSize=4K\n[Grant]\nRegion=x\nContainer=caf\xe9-*\n",
		     "test.conf:6: Container=: not valid UTF-8", NULL);
	expect_error("a key that is not UTF-8", "[Region]\nName=x\nSize=4K\nSiz\xe9=1\n",
		     "test.conf:4: Siz\\xe9=: not valid UTF-8", NULL);

	memset(long_line, 'a', sizeof(long_line));
	memcpy(long_line, "[Region]\nName=x\nSize=4K\nPath=/", 30);
	strcpy(long_line + sizeof(long_line) - 2, "\n");
	expect_error("over-long line", long_line, "test.conf:4: line too long", NULL);

	{
		_cleanup_strv_free_ char **errors = NULL;

		parse("[Region]\nName=x\nSize=4Q\n[Region]\nName=x\nSize=8K\n", NULL, &errors);
		ok(strv_length(errors) == 1, "a region with an error is left out, not reported twice");
	}

	/* Several errors are all reported, each with its line. */
	expect_error("several errors", "[Region]\nName=x\nSize=4Q\nBacking=nope\n",
		     "test.conf:3: Size=", "test.conf:4: Backing=");
}

static int write_file(const char *dir, const char *name, const char *text)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_fclose_ FILE *f = NULL;

	path = strprintf("%s/%s", dir, name);
	if (!path)
		return -ENOMEM;
	f = fopen(path, "we");
	if (!f || fputs(text, f) < 0)
		return -errno;
	return 0;
}

static void test_dir(void)
{
	char dir[] = "/tmp/test-config-XXXXXX";
	char cmd[128];
	_cleanup_config_free_ struct config *c = NULL;
	_cleanup_strv_free_ char **errors = NULL;
	int k;

	if (!mkdtemp(dir)) {
		ok(false, "mkdtemp");
		return;
	}
	write_file(dir, "10-b.conf", "[Region]\nName=b\nSize=4K\n");
	write_file(dir, "00-a.conf", "[Region]\nName=a\nSize=4K\n[Grant]\nRegion=b\nUser=0\n");
	write_file(dir, "README", "not a configuration file\n");
	write_file(dir, ".hidden.conf", "garbage\n");
	write_file(dir, "example.conf.dpkg-old", "garbage\n");
	write_file(dir, "05-bom.conf", "\xEF\xBB\xBF[Grant]\nRegion=a\nUser=0\n");
	{
		_cleanup_free_ char *masked = NULL;

		masked = strprintf("%s/99-masked.conf", dir);
		if (!masked || symlink("/dev/null", masked) < 0)
			printf("# could not mask\n");
	}

	k = config_load_dir(dir, &c, &errors);
	ok(k == 0 && c && c->n_regions == 2 && streq(c->regions[0].name, "a") &&
	   streq(c->regions[1].name, "b") && c->n_grants == 2,
	   "directory: *.conf in lexical order, a grant may name a later file's region, "
	   "a byte order mark is fine, a file masked with /dev/null is skipped");
	print_errors(errors);

	write_file(dir, "20-c.conf", "[Region]\nName=a\nSize=8K\n");
	config_free(c);
	c = NULL;
	strv_free(errors);
	errors = NULL;
	k = config_load_dir(dir, &c, &errors);
	ok(k == -EINVAL && !c && has_error(errors, "/20-c.conf:2: Name=: duplicate region name 'a', first defined at ") &&
	   has_error(errors, "/00-a.conf:1"),
	   "directory: a duplicate across files names both places");

	/* Its name is in the source ("FILE:LINE") that show replies carry. */
	write_file(dir, "20-c.conf", "[Region]\nName=c\nSize=4K\n");
	write_file(dir, "30-caf\xe9.conf", "[Region]\nName=d\nSize=4K\n");
	config_free(c);
	c = NULL;
	strv_free(errors);
	errors = NULL;
	k = config_load_dir(dir, &c, &errors);
	if (!ok(k == -EINVAL && !c && strv_length(errors) == 1 &&
		has_error(errors, "/30-caf\\xe9.conf: the file name is not valid UTF-8"),
		"directory: a file name that is not UTF-8 is refused, escaped in the error"))
		print_errors(errors);

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);

	strv_free(errors);
	errors = NULL;
	k = config_load_dir("/nonexistent/mshare", &c, &errors);
	ok(k == 0 && c && c->n_regions == 0, "a missing directory is an empty configuration");
}

int main(void)
{
	test_good();
	test_equal();
	test_bad();
	test_dir();
	return tap_finish();
}
