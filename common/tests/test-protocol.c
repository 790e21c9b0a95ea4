/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "mshare-common/protocol.h"
#include "mshare-common/tap.h"
#include "proto-equal.h"

static bool str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && streq(a, b));
}

static bool request_equal(const struct proto_request *a, const struct proto_request *b)
{
	if (a->op != b->op || !str_eq(a->client, b->client) || !str_eq(a->region, b->region) ||
	    a->force != b->force ||
	    (a->op == PROTO_OP_GET && a->mode != b->mode) || a->start != b->start ||
	    a->has_container != b->has_container || !str_eq(a->container_name, b->container_name) ||
	    !str_eq(a->container_id, b->container_id) || a->n_annotations != b->n_annotations ||
	    a->n_regions != b->n_regions)
		return false;
	return region_requests_equal(a->regions, b->regions, a->n_regions) &&
	       annotations_equal(a->annotations, b->annotations, a->n_annotations);
}

static void roundtrip(const char *what, const struct proto_request *req)
{
	_cleanup_(proto_request_done) struct proto_request out = {};
	_cleanup_free_ char *text = NULL, *error = NULL;
	size_t len;
	int k;

	k = proto_request_encode(req, &text, &len);
	if (!ok(k == 0, "encode %s", what))
		return;
	k = proto_request_decode(text, len, &out, &error);
	ok(k == 0 && request_equal(req, &out), "round trip %s: %s%s%s", what, text,
	   error ? " -> " : "", error ?: "");
}

static void test_roundtrips(void)
{
	struct proto_annotation annotations[] = {
		{ "io.mshare/regions", "pool,db" },
		{ "tier", "prod \"quoted\" \xc3\xa9" },
	};

	roundtrip("hello", &(struct proto_request){ .op = PROTO_OP_HELLO, .client = "test 1.0" });
	roundtrip("hello without client", &(struct proto_request){ .op = PROTO_OP_HELLO });
	roundtrip("get rw", &(struct proto_request){ .op = PROTO_OP_GET, .region = "pool", .mode = ACCESS_RW });
	roundtrip("get ro", &(struct proto_request){ .op = PROTO_OP_GET, .region = "db-main.2", .mode = ACCESS_RO });
	roundtrip("get for a container",
		  &(struct proto_request){ .op = PROTO_OP_GET, .region = "pool", .mode = ACCESS_RO,
					   .has_container = true, .container_name = "web-1",
					   .container_id = "0123abcd", .annotations = annotations,
					   .n_annotations = ARRAY_SIZE(annotations) });
	roundtrip("get for a container by id only",
		  &(struct proto_request){ .op = PROTO_OP_GET, .region = "pool", .mode = ACCESS_RO,
					   .has_container = true, .container_id = "0123abcd" });
	roundtrip("get for a container with no name, id or annotation",
		  &(struct proto_request){ .op = PROTO_OP_GET, .region = "pool", .mode = ACCESS_RO,
					   .has_container = true });
	roundtrip("list", &(struct proto_request){ .op = PROTO_OP_LIST });
	roundtrip("list from 7", &(struct proto_request){ .op = PROTO_OP_LIST, .start = 7 });
	roundtrip("show", &(struct proto_request){ .op = PROTO_OP_SHOW, .region = "pool" });
	roundtrip("reload", &(struct proto_request){ .op = PROTO_OP_RELOAD });
	{
		struct proto_region_request regions[] = {
			{ "pool", ACCESS_RW },
			{ "catalog", ACCESS_RO },
		};

		roundtrip("register", &(struct proto_request){
			.op = PROTO_OP_REGISTER, .has_container = true, .container_name = "web-1",
			.container_id = "0123abcd", .annotations = annotations,
			.n_annotations = ARRAY_SIZE(annotations), .regions = regions,
			.n_regions = ARRAY_SIZE(regions) });
	}
	roundtrip("unregister", &(struct proto_request){ .op = PROTO_OP_UNREGISTER, .has_container = true,
							.container_id = "0123abcd" });
	roundtrip("containers", &(struct proto_request){ .op = PROTO_OP_CONTAINERS });
	roundtrip("destroy", &(struct proto_request){ .op = PROTO_OP_DESTROY, .region = "pool" });
	roundtrip("destroy --force", &(struct proto_request){ .op = PROTO_OP_DESTROY, .region = "pool",
							     .force = true });
}

static void reject_n(const char *what, const char *msg, size_t len, int expected)
{
	_cleanup_(proto_request_done) struct proto_request out = {};
	_cleanup_free_ char *error = NULL;
	int k = proto_request_decode(msg, len, &out, &error);

	ok(k == expected && error && *error, "rejects %s with %s: %s", what, errno_to_name(expected),
	   strna(error));
}

static void reject(const char *what, const char *msg, int expected)
{
	reject_n(what, msg, strlen(msg), expected);
}

static void test_rejections(void)
{
	static const char nul[] = "{\"version\":1,\0\"op\":\"hello\"}";
	_cleanup_free_ char *big = NULL, *long_client = NULL;
	size_t n = MSHARE_PROTOCOL_MAX_MESSAGE + 1;

	reject("non-JSON", "hello", -EBADMSG);
	reject("an empty message", "", -EBADMSG);
	reject("truncated JSON", "{\"version\":1,\"op\":\"he", -EBADMSG);
	reject("trailing garbage", "{\"version\":1,\"op\":\"hello\"} x", -EBADMSG);
	reject("two objects", "{\"version\":1,\"op\":\"hello\"}{}", -EBADMSG);
	reject("an array", "[1,2]", -EBADMSG);
	reject("a string", "\"hello\"", -EBADMSG);
	reject("a number", "1", -EBADMSG);
	reject("a NUL byte", "\0", -EBADMSG);
	reject_n("a NUL byte inside", nul, sizeof(nul) - 1, -EBADMSG);
	reject("an escaped NUL", "{\"version\":1,\"op\":\"hel\\u0000lo\"}", -EBADMSG);
	reject("invalid UTF-8", "{\"version\":1,\"op\":\"hello\",\"client\":\"\xff\xfe\"}", -EBADMSG);
	reject("a missing version", "{\"op\":\"hello\"}", -EBADMSG);
	reject("version 2", "{\"version\":2,\"op\":\"hello\"}", -EPROTONOSUPPORT);
	reject("version 0", "{\"version\":0,\"op\":\"hello\"}", -EPROTONOSUPPORT);
	reject("a huge version", "{\"version\":99999999999999999999,\"op\":\"hello\"}", -EBADMSG);
	reject("version as a string", "{\"version\":\"1\",\"op\":\"hello\"}", -EBADMSG);
	reject("version as a real", "{\"version\":1.0,\"op\":\"hello\"}", -EBADMSG);
	reject("version null", "{\"version\":null,\"op\":\"hello\"}", -EBADMSG);
	reject("a duplicate member", "{\"version\":1,\"op\":\"hello\",\"op\":\"list\"}", -EBADMSG);
	reject("a missing op", "{\"version\":1}", -EBADMSG);
	reject("op as a number", "{\"version\":1,\"op\":5}", -EBADMSG);
	reject("an unknown op", "{\"version\":1,\"op\":\"frobnicate\"}", -EOPNOTSUPP);
	reject("get without region", "{\"version\":1,\"op\":\"get\",\"mode\":\"ro\"}", -EBADMSG);
	reject("get without mode", "{\"version\":1,\"op\":\"get\",\"region\":\"pool\"}", -EBADMSG);
	reject("region as a number", "{\"version\":1,\"op\":\"get\",\"region\":5,\"mode\":\"ro\"}", -EBADMSG);
	reject("region as an object", "{\"version\":1,\"op\":\"show\",\"region\":{}}", -EBADMSG);
	reject("a path as region", "{\"version\":1,\"op\":\"get\",\"region\":\"../etc\",\"mode\":\"ro\"}", -EINVAL);
	reject("an empty region", "{\"version\":1,\"op\":\"show\",\"region\":\"\"}", -EINVAL);
	reject("destroy without region", "{\"version\":1,\"op\":\"destroy\"}", -EBADMSG);
	reject("destroy with force as a string", "{\"version\":1,\"op\":\"destroy\",\"region\":\"p\",\"force\":\"yes\"}", -EBADMSG);
	reject("mode wx", "{\"version\":1,\"op\":\"get\",\"region\":\"p\",\"mode\":\"wx\"}", -EINVAL);
	reject("mode as a boolean", "{\"version\":1,\"op\":\"get\",\"region\":\"p\",\"mode\":true}", -EBADMSG);
	reject("container not an object",
	       "{\"version\":1,\"op\":\"get\",\"region\":\"p\",\"mode\":\"ro\",\"container\":\"web\"}", -EBADMSG);
	reject("an empty container",
	       "{\"version\":1,\"op\":\"get\",\"region\":\"p\",\"mode\":\"ro\",\"container\":{}}", -EBADMSG);
	reject("container name as a number",
	       "{\"version\":1,\"op\":\"get\",\"region\":\"p\",\"mode\":\"ro\",\"container\":{\"name\":1}}", -EBADMSG);
	reject("an annotation that is no string",
	       "{\"version\":1,\"op\":\"get\",\"region\":\"p\",\"mode\":\"ro\",\"container\":{\"annotations\":{\"a\":1}}}",
	       -EBADMSG);
	reject("annotations as an array",
	       "{\"version\":1,\"op\":\"get\",\"region\":\"p\",\"mode\":\"ro\",\"container\":{\"annotations\":[]}}",
	       -EBADMSG);
#define REG "{\"version\":1,\"op\":\"register\","
	reject("register without container", REG "\"regions\":[{\"region\":\"p\",\"mode\":\"ro\"}]}", -EBADMSG);
	reject("register without container id",
	       REG "\"container\":{\"name\":\"w\"},\"regions\":[{\"region\":\"p\",\"mode\":\"ro\"}]}", -EBADMSG);
	reject("register with an empty container id",
	       REG "\"container\":{\"id\":\"\"},\"regions\":[{\"region\":\"p\",\"mode\":\"ro\"}]}", -EBADMSG);
	reject("register without regions", REG "\"container\":{\"id\":\"c\"}}", -EBADMSG);
	reject("register with no region", REG "\"container\":{\"id\":\"c\"},\"regions\":[]}", -EINVAL);
	reject("register with regions as an object", REG "\"container\":{\"id\":\"c\"},\"regions\":{}}", -EBADMSG);
	reject("register with a region that is a string",
	       REG "\"container\":{\"id\":\"c\"},\"regions\":[\"p\"]}", -EBADMSG);
	reject("register with a region without mode",
	       REG "\"container\":{\"id\":\"c\"},\"regions\":[{\"region\":\"p\"}]}", -EBADMSG);
	reject("register with a bad region name",
	       REG "\"container\":{\"id\":\"c\"},\"regions\":[{\"region\":\"../p\",\"mode\":\"ro\"}]}", -EINVAL);
	reject("register naming a region twice",
	       REG "\"container\":{\"id\":\"c\"},\"regions\":[{\"region\":\"p\",\"mode\":\"ro\"},"
	       "{\"region\":\"p\",\"mode\":\"rw\"}]}", -EINVAL);
	reject("unregister without container", "{\"version\":1,\"op\":\"unregister\"}", -EBADMSG);
#undef REG
	reject("a negative list start", "{\"version\":1,\"op\":\"list\",\"start\":-1}", -EINVAL);
	reject("list start as a string", "{\"version\":1,\"op\":\"list\",\"start\":\"1\"}", -EBADMSG);
	reject("a list start past 32 bits", "{\"version\":1,\"op\":\"list\",\"start\":4294967296}", -EINVAL);

	long_client = malloc(PROTO_CLIENT_MAX + 64);
	if (long_client) {
		int off = sprintf(long_client, "{\"version\":1,\"op\":\"hello\",\"client\":\"");

		memset(long_client + off, 'x', PROTO_CLIENT_MAX + 1);
		strcpy(long_client + off + PROTO_CLIENT_MAX + 1, "\"}");
		reject("an over-long client name", long_client, -EINVAL);
	}

	big = malloc(n + 1);
	if (big) {
		/* Valid JSON, just too long. */
		memset(big, ' ', n);
		memcpy(big, "{\"version\":1,\"op\":\"hello\"}", 26);
		big[n] = '\0';
		reject_n("an oversized message", big, n, -EMSGSIZE);
		{
			_cleanup_(proto_request_done) struct proto_request out = {};
			_cleanup_free_ char *e = NULL;

			ok(proto_request_decode(big, n - 1, &out, &e) == 0,
			   "accepts a message of exactly the maximum size");
		}
	}
}

static void test_unknown_members(void)
{
	_cleanup_(proto_request_done) struct proto_request out = {};
	_cleanup_free_ char *error = NULL;
	const char *msg = "{\"version\":1,\"op\":\"hello\",\"future\":[1,{\"x\":null}]}";

	ok(proto_request_decode(msg, strlen(msg), &out, &error) == 0 && out.op == PROTO_OP_HELLO,
	   "unknown members are ignored");
}

/* encode -> the expected text -> decode -> encode -> the same text: the
 * decoder keeps everything the encoder wrote, and the wire format is the
 * one docs/protocol.md shows. */
static bool reply_roundtrip(const char *what, enum proto_op op, const struct proto_reply *in,
			    const char *expected, struct proto_reply *ret)
{
	_cleanup_free_ char *text = NULL, *again = NULL, *error = NULL;
	size_t len = 0, len2 = 0;
	int k;

	k = proto_reply_encode(op, in, &text, &len);
	if (!ok(k == 0 && streq(text, expected), "encode the %s reply: %s", what, strna(text)))
		return false;
	k = proto_reply_decode(op, text, len, ret, &error);
	if (k == 0)
		k = proto_reply_encode(op, ret, &again, &len2);
	return ok(k == 0 && streq(text, again), "decode and encode the %s reply again: %s%s", what,
		  strna(again), error ?: "");
}

#define REGION_JSON "{\"name\":\"pool\",\"state\":\"active\",\"size\":67108864,\"region_size\":549755813888," \
	"\"backing\":\"file\",\"path\":\"/var/lib/pool\",\"protection\":\"rw\",\"populate\":true," \
	"\"rss_bytes\":50565120,\"pgtables_bytes\":8192,\"attached\":3,\"windows\":4,\"owner_pid\":42," \
	"\"inode\":4242,\"access\":\"ro\"}"

static const struct proto_region_info pool = {
	.name = "pool", .state = "active", .size = 64 << 20, .region_size = 512ULL << 30,
	.backing = "file", .path = "/var/lib/pool", .protection = "rw", .populate = true,
	.rss_bytes = 12345 * 4096ULL, .pgtables_bytes = 8192, .attached = 3, .windows = 4,
	.owner_pid = 42, .inode = 4242, .access = "ro",
};

static bool region_equal(const struct proto_region_info *a, const struct proto_region_info *b)
{
	return streq(a->name, b->name) && streq(a->state, b->state) && a->size == b->size &&
	       a->region_size == b->region_size && streq(a->backing, b->backing) &&
	       str_eq(a->path, b->path) && streq(a->protection, b->protection) &&
	       a->populate == b->populate && a->rss_bytes == b->rss_bytes &&
	       a->pgtables_bytes == b->pgtables_bytes && a->attached == b->attached &&
	       a->windows == b->windows && a->owner_pid == b->owner_pid && a->inode == b->inode &&
	       streq(a->access, b->access);
}

static void test_reply_hello_get(void)
{
	_cleanup_(proto_reply_done) struct proto_reply hello = {}, get = {}, bare = {};
	uint32_t versions[] = { 1 };

	if (reply_roundtrip("hello", PROTO_OP_HELLO, &(struct proto_reply){ .hello = {
		.versions = versions, .n_versions = 1, .server = "mshare-owner 0.1.0",
		.max_message = 65536, .uid = 1000 } },
		"{\"version\":1,\"status\":\"ok\",\"versions\":[1],\"server\":\"mshare-owner 0.1.0\","
		"\"max_message\":65536,\"uid\":1000}", &hello))
		ok(hello.hello.n_versions == 1 && hello.hello.versions[0] == 1 &&
		   streq(hello.hello.server, "mshare-owner 0.1.0") && hello.hello.max_message == 65536 &&
		   hello.hello.uid == 1000, "hello reply members");
	if (reply_roundtrip("get", PROTO_OP_GET, &(struct proto_reply){ .get.mode = ACCESS_RO,
		.has_region = true, .region = pool },
		"{\"version\":1,\"status\":\"ok\",\"mode\":\"ro\",\"region\":" REGION_JSON "}", &get))
		ok(get.get.mode == ACCESS_RO && get.has_region && region_equal(&get.region, &pool),
		   "get reply members");
	{
		_cleanup_free_ char *e = NULL;
		const char *m = "{\"version\":1,\"status\":\"ok\",\"mode\":\"rw\"}";

		ok(proto_reply_decode(PROTO_OP_GET, m, strlen(m), &bare, &e) == 0 && !bare.has_region &&
		   bare.get.mode == ACCESS_RW, "a get reply without region decodes (mshare_request() needs the descriptor only)");
	}
}

static void test_reply_list(void)
{
	_cleanup_(proto_reply_done) struct proto_reply page = {}, last = {};
	struct proto_region_info regions[] = { pool, pool };

	regions[1].name = "catalog";
	regions[1].path = NULL;
	regions[1].inode = 0;
	if (reply_roundtrip("list", PROTO_OP_LIST, &(struct proto_reply){ .list = {
		.regions = regions, .n_regions = 2, .has_next = true, .next = 7 } },
		"{\"version\":1,\"status\":\"ok\",\"regions\":[" REGION_JSON ",{\"name\":\"catalog\","
		"\"state\":\"active\",\"size\":67108864,\"region_size\":549755813888,\"backing\":\"file\","
		"\"protection\":\"rw\",\"populate\":true,\"rss_bytes\":50565120,\"pgtables_bytes\":8192,"
		"\"attached\":3,\"windows\":4,\"owner_pid\":42,\"inode\":0,\"access\":\"ro\"}],\"next\":7}",
		&page))
		ok(page.list.n_regions == 2 && region_equal(&page.list.regions[0], &regions[0]) &&
		   region_equal(&page.list.regions[1], &regions[1]) && page.list.has_next &&
		   page.list.next == 7, "list reply members");
	if (reply_roundtrip("last list", PROTO_OP_LIST, &(struct proto_reply){},
			    "{\"version\":1,\"status\":\"ok\",\"regions\":[]}", &last))
		ok(last.list.n_regions == 0 && !last.list.has_next, "the last page has no next");
}

static void test_reply_show(void)
{
	_cleanup_(proto_reply_done) struct proto_reply show = {}, plain = {};
	uid_t users[] = { 0, 1000 };
	gid_t groups[] = { 27 };
	char *containers[] = { "web-*", NULL }, *ids[] = { NULL };
	struct proto_annotation annotations[] = { { "io.mshare.regions", "*pool*" } };
	struct proto_grant grants[] = { {
		.source = "/etc/mshare/regions.d/example.conf:20", .region = "pool", .mode = ACCESS_RW,
		.users = users, .n_users = 2, .groups = groups, .n_groups = 1, .containers = containers,
		.container_ids = ids, .annotations = annotations, .n_annotations = 1,
	}, { .source = "b.conf:1", .region = "p*", .mode = ACCESS_RO } };
	struct proto_reply in = {
		.has_region = true, .region = pool,
		.show = { .source = "a.conf:3", .error = "ENOSPC", .pending_source = "b.conf:9",
			  .has_grants = true, .grants = grants, .n_grants = 2 },
	};

	if (reply_roundtrip("show", PROTO_OP_SHOW, &in,
		"{\"version\":1,\"status\":\"ok\",\"region\":" REGION_JSON ",\"source\":\"a.conf:3\","
		"\"error\":\"ENOSPC\",\"pending_source\":\"b.conf:9\",\"grants\":[{\"source\":"
		"\"/etc/mshare/regions.d/example.conf:20\",\"region\":\"pool\",\"mode\":\"rw\",\"users\":[0,1000],"
		"\"groups\":[27],\"containers\":[\"web-*\"],\"container_ids\":[],\"annotations\":"
		"{\"io.mshare.regions\":\"*pool*\"}},{\"source\":\"b.conf:1\",\"region\":\"p*\",\"mode\":\"ro\","
		"\"users\":[],\"groups\":[],\"containers\":[],\"container_ids\":[],\"annotations\":{}}]}", &show)) {
		const struct proto_grant *g = &show.show.grants[0];

		ok(region_equal(&show.region, &pool) && streq(show.show.source, "a.conf:3") &&
		   streq(show.show.error, "ENOSPC") && streq(show.show.pending_source, "b.conf:9") &&
		   show.show.has_grants && show.show.n_grants == 2 && streq(g->source, grants[0].source) &&
		   g->mode == ACCESS_RW && g->n_users == 2 && g->users[1] == 1000 && g->n_groups == 1 &&
		   g->groups[0] == 27 && streq(g->containers[0], "web-*") && !g->containers[1] &&
		   !g->container_ids[0] && g->n_annotations == 1 && streq(g->annotations[0].value, "*pool*") &&
		   show.show.grants[1].mode == ACCESS_RO, "show reply members");
	}
	in.show = (typeof(in.show)){ .source = "" };
	if (reply_roundtrip("show to a non-root peer", PROTO_OP_SHOW, &in,
			    "{\"version\":1,\"status\":\"ok\",\"region\":" REGION_JSON ",\"source\":\"\"}", &plain))
		ok(!plain.show.has_grants && !plain.show.error && !plain.show.pending_source,
		   "no grants are not an empty list of grants");
}

static void test_reply_containers_register(void)
{
	_cleanup_(proto_reply_done) struct proto_reply reg = {}, cts = {}, none = {};
	struct proto_region_request regions[] = { { "pool", ACCESS_RW }, { "catalog", ACCESS_RO } };
	struct proto_container_info containers[] = {
		{ .id = "4f0c", .name = "web-1", .pid = 1234, .regions = regions, .n_regions = 2,
		  .connections = 3 },
		{ .id = "77aa", .pid = 99, .regions = regions + 1, .n_regions = 1 },
	};

	if (reply_roundtrip("register", PROTO_OP_REGISTER, &(struct proto_reply){
		.reg = { .regions = regions, .n_regions = 2 } },
		"{\"version\":1,\"status\":\"ok\",\"regions\":[{\"region\":\"pool\",\"mode\":\"rw\"},"
		"{\"region\":\"catalog\",\"mode\":\"ro\"}]}", &reg))
		ok(reg.reg.n_regions == 2 && streq(reg.reg.regions[1].region, "catalog") &&
		   reg.reg.regions[1].mode == ACCESS_RO, "register reply members");
	if (reply_roundtrip("containers", PROTO_OP_CONTAINERS, &(struct proto_reply){
		.containers = { .containers = containers, .n_containers = 2 } },
		"{\"version\":1,\"status\":\"ok\",\"containers\":[{\"id\":\"4f0c\",\"name\":\"web-1\",\"pid\":1234,"
		"\"regions\":[{\"region\":\"pool\",\"mode\":\"rw\"},{\"region\":\"catalog\",\"mode\":\"ro\"}],"
		"\"connections\":3},{\"id\":\"77aa\",\"pid\":99,\"regions\":[{\"region\":\"catalog\",\"mode\":\"ro\"}],"
		"\"connections\":0}]}", &cts)) {
		const struct proto_container_info *c = cts.containers.containers;

		ok(cts.containers.n_containers == 2 && streq(c[0].id, "4f0c") && streq(c[0].name, "web-1") &&
		   c[0].pid == 1234 && c[0].n_regions == 2 && c[0].regions[0].mode == ACCESS_RW &&
		   c[0].connections == 3 && !c[1].name && c[1].pid == 99, "containers reply members");
	}
	reply_roundtrip("empty containers", PROTO_OP_CONTAINERS, &(struct proto_reply){},
			"{\"version\":1,\"status\":\"ok\",\"containers\":[]}", &none);
}

static void test_reply_messages(void)
{
	_cleanup_(proto_reply_done) struct proto_reply reload = {}, destroyed = {}, gone = {}, unreg = {};
	const char *m = "region 'pool' (inode 4242) destroyed and created anew as configured (inode 4250)";

	if (reply_roundtrip("reload", PROTO_OP_RELOAD, &(struct proto_reply){ .message = "3 regions" },
			    "{\"version\":1,\"status\":\"ok\",\"message\":\"3 regions\"}", &reload))
		ok(!reload.error && streq(reload.message, "3 regions"), "reload reply members");
	if (reply_roundtrip("destroy", PROTO_OP_DESTROY, &(struct proto_reply){ .message = (char *)m,
		.has_region = true, .region = pool },
		"{\"version\":1,\"status\":\"ok\",\"message\":\"region 'pool' (inode 4242) destroyed and created "
		"anew as configured (inode 4250)\",\"region\":" REGION_JSON "}", &destroyed))
		ok(streq(destroyed.message, m) && destroyed.has_region && region_equal(&destroyed.region, &pool),
		   "destroy reply members");
	if (reply_roundtrip("destroy of a region no longer configured", PROTO_OP_DESTROY,
			    &(struct proto_reply){ .message = "gone" },
			    "{\"version\":1,\"status\":\"ok\",\"message\":\"gone\"}", &gone))
		ok(!gone.has_region, "no region after a region that is no longer configured");
	reply_roundtrip("unregister", PROTO_OP_UNREGISTER, &(struct proto_reply){},
			"{\"version\":1,\"status\":\"ok\"}", &unreg);
}

static void test_reply_errors(void)
{
	_cleanup_(proto_reply_done) struct proto_reply r2 = {}, r3 = {};
	_cleanup_free_ char *t1 = NULL, *t2 = NULL, *error = NULL;
	size_t l1 = 0, l2 = 0;
	const char *unknown = "{\"version\":1,\"status\":\"error\",\"errno\":\"EFUTURE\",\"message\":\"m\"}";
	bool pass;

	pass = proto_error_encode(EACCES, "region 'pool' is not granted", &t1, &l1) == 0 &&
	       streq(t1, "{\"version\":1,\"status\":\"error\",\"errno\":\"EACCES\",\"message\":"
			 "\"region 'pool' is not granted\"}");
	ok(pass, "an error reply: %s", strna(t1));
	for (int op = 0; op < _PROTO_OP_MAX; op++) {
		_cleanup_(proto_reply_done) struct proto_reply r = {};
		_cleanup_free_ char *e = NULL;

		pass = t1 && proto_reply_decode(op, t1, l1, &r, &e) == 0 && r.error == EACCES &&
		       streq(r.message, "region 'pool' is not granted");
		ok(pass, "an error reply decodes as the reply to %s", proto_op_to_string(op));
	}
	pass = proto_error_encode(-EBADMSG, "bad \xff", &t2, &l2) == 0 &&
	       proto_reply_decode(PROTO_OP_HELLO, t2, l2, &r2, &error) == 0 && r2.error == EBADMSG &&
	       streq(r2.message, "(message not valid UTF-8)");
	ok(pass, "-errno is an error too, and a message that is not UTF-8 is replaced: %s", strna(t2));
	pass = proto_reply_decode(PROTO_OP_GET, unknown, strlen(unknown), &r3, &error) == 0 && r3.error == EPROTO;
	ok(pass, "an errno name this side does not know is EPROTO");
}

/* Replies that each decoder refuses. */
static void test_reply_rejections(void)
{
#define OK "{\"version\":1,\"status\":\"ok\","
	static const struct {
		enum proto_op op;
		const char *what, *msg;
		int expected;
	} bad[] = {
		{ PROTO_OP_HELLO, "a reply of another version", "{\"version\":2,\"status\":\"ok\"}", -EPROTONOSUPPORT },
		{ PROTO_OP_HELLO, "a reply without status", "{\"version\":1}", -EBADMSG },
		{ PROTO_OP_HELLO, "an odd status", "{\"version\":1,\"status\":\"maybe\"}", -EBADMSG },
		{ PROTO_OP_HELLO, "an error without errno", "{\"version\":1,\"status\":\"error\",\"message\":\"m\"}", -EBADMSG },
		{ PROTO_OP_HELLO, "an error without message", "{\"version\":1,\"status\":\"error\",\"errno\":\"EIO\"}", -EBADMSG },
		{ PROTO_OP_HELLO, "a reply that is no JSON", "ok", -EBADMSG },
		{ PROTO_OP_HELLO, "hello with versions as a number", OK "\"versions\":1}", -EBADMSG },
		{ PROTO_OP_HELLO, "hello with a negative version", OK "\"versions\":[-1]}", -EBADMSG },
		{ PROTO_OP_HELLO, "hello with uid as a string", OK "\"uid\":\"0\"}", -EBADMSG },
		{ PROTO_OP_GET, "get with region as a string", OK "\"mode\":\"rw\",\"region\":\"pool\"}", -EBADMSG },
		{ PROTO_OP_GET, "get with a region missing members", OK "\"mode\":\"rw\",\"region\":{\"name\":\"p\"}}", -EBADMSG },
		{ PROTO_OP_GET, "get with mode wx", OK "\"mode\":\"wx\"}", -EINVAL },
		{ PROTO_OP_LIST, "list without regions", OK "\"next\":3}", -EBADMSG },
		{ PROTO_OP_LIST, "list with a region that is no object", OK "\"regions\":[1]}", -EBADMSG },
		{ PROTO_OP_LIST, "list with next past 32 bits", OK "\"regions\":[],\"next\":4294967296}", -EINVAL },
		{ PROTO_OP_LIST, "list with a negative next", OK "\"regions\":[],\"next\":-1}", -EINVAL },
		{ PROTO_OP_SHOW, "show without region", OK "\"source\":\"a:1\"}", -EBADMSG },
		{ PROTO_OP_SHOW, "show with grants as an object", OK "\"region\":" REGION_JSON ",\"grants\":{}}", -EBADMSG },
		{ PROTO_OP_SHOW, "show with a grant without users",
		  OK "\"region\":" REGION_JSON ",\"grants\":[{\"source\":\"a\",\"region\":\"p\",\"mode\":\"ro\","
		  "\"groups\":[],\"containers\":[],\"container_ids\":[],\"annotations\":{}}]}", -EBADMSG },
		{ PROTO_OP_SHOW, "show with a grant annotation that is no string",
		  OK "\"region\":" REGION_JSON ",\"grants\":[{\"source\":\"a\",\"region\":\"p\",\"mode\":\"ro\","
		  "\"users\":[],\"groups\":[],\"containers\":[],\"container_ids\":[],\"annotations\":{\"a\":1}}]}", -EBADMSG },
		{ PROTO_OP_SHOW, "show with a container pattern that is no string",
		  OK "\"region\":" REGION_JSON ",\"grants\":[{\"source\":\"a\",\"region\":\"p\",\"mode\":\"ro\","
		  "\"users\":[],\"groups\":[],\"containers\":[1],\"container_ids\":[],\"annotations\":{}}]}", -EBADMSG },
		{ PROTO_OP_RELOAD, "reload with message as a number", OK "\"message\":1}", -EBADMSG },
		{ PROTO_OP_REGISTER, "register with no region", OK "\"regions\":[]}", -EINVAL },
		{ PROTO_OP_REGISTER, "register with a bad region name", OK "\"regions\":[{\"region\":\"../x\",\"mode\":\"ro\"}]}", -EINVAL },
		{ PROTO_OP_CONTAINERS, "containers without containers", OK "\"x\":[]}", -EBADMSG },
		{ PROTO_OP_CONTAINERS, "a container without id", OK "\"containers\":[{\"pid\":1,\"regions\":"
		  "[{\"region\":\"p\",\"mode\":\"ro\"}],\"connections\":0}]}", -EBADMSG },
		{ PROTO_OP_CONTAINERS, "a container with a negative pid", OK "\"containers\":[{\"id\":\"c\",\"pid\":-1,"
		  "\"regions\":[{\"region\":\"p\",\"mode\":\"ro\"}],\"connections\":0}]}", -EINVAL },
		{ PROTO_OP_DESTROY, "destroy with region as a string", OK "\"message\":\"m\",\"region\":\"p\"}", -EBADMSG },
	};
#undef OK
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		_cleanup_(proto_reply_done) struct proto_reply r = {};
		_cleanup_free_ char *e = NULL;
		int k = proto_reply_decode(bad[i].op, bad[i].msg, strlen(bad[i].msg), &r, &e);

		ok(k == bad[i].expected && e, "rejects %s with %s: %s", bad[i].what,
		   errno_to_name(bad[i].expected), strna(e));
	}
}

static void test_region_without_inode(void)
{
	_cleanup_(proto_reply_done) struct proto_reply r = {};
	_cleanup_free_ char *e = NULL;
	const char *m = "{\"version\":1,\"status\":\"ok\",\"region\":{\"name\":\"p\",\"state\":\"active\","
		"\"size\":1,\"region_size\":2,\"backing\":\"memfd\",\"protection\":\"rw\",\"populate\":false,"
		"\"rss_bytes\":0,\"pgtables_bytes\":0,\"attached\":0,\"windows\":0,\"owner_pid\":0,\"access\":\"rw\"}}";

	ok(proto_reply_decode(PROTO_OP_SHOW, m, strlen(m), &r, &e) == 0 && r.region.inode == 0,
	   "a region without inode (an older daemon) reads as inode 0");
}

static void test_reply_limit(void)
{
	_cleanup_free_ char *s = malloc(MSHARE_PROTOCOL_MAX_MESSAGE + 1), *text = NULL;
	size_t len;

	memset(s, 'a', MSHARE_PROTOCOL_MAX_MESSAGE);
	s[MSHARE_PROTOCOL_MAX_MESSAGE] = '\0';
	ok(proto_reply_encode(PROTO_OP_RELOAD, &(struct proto_reply){ .message = s }, &text, &len) == -EMSGSIZE &&
	   !text, "an oversized reply is never sent");
}

/* Text that JSON cannot carry is -EILSEQ, which the daemon answers as
 * such, not -ENOMEM, after which it would hang up; and the region's length
 * for list's paging says so too, rather than 0. */
static void test_not_utf8(void)
{
	struct proto_region_info bad_path = pool;
	struct proto_annotation bad_key[] = { { "tier\xc3", "prod" } };
	struct proto_grant grant = { .source = "/etc/mshare/regions.d/\xe9t\xe9.conf:3", .region = "pool",
				     .mode = ACCESS_RO };
	_cleanup_free_ char *text = NULL;
	size_t len;
	ssize_t n;

	bad_path.path = (char *)"/srv/caf\xe9";
	n = proto_region_info_length(&pool);
	ok(n > 0 && (size_t)n == strlen(REGION_JSON) + 1, "a region's length in a list reply: %zd", n);
	ok(proto_region_info_length(&bad_path) == -EILSEQ, "a region with a path that is not UTF-8: EILSEQ");
	ok(proto_reply_encode(PROTO_OP_LIST, &(struct proto_reply){ .list = { .regions = &bad_path, .n_regions = 1 } },
			      &text, &len) == -EILSEQ && !text, "a list reply with it: EILSEQ");
	ok(proto_reply_encode(PROTO_OP_SHOW, &(struct proto_reply){ .has_region = true, .region = pool,
			      .show = { .has_grants = true, .grants = &grant, .n_grants = 1 } },
			      &text, &len) == -EILSEQ && !text, "a show reply with a grant's source not UTF-8: EILSEQ");
	ok(proto_request_encode(&(struct proto_request){ .op = PROTO_OP_GET, .region = "pool", .mode = ACCESS_RO,
							 .has_container = true, .annotations = bad_key,
							 .n_annotations = 1 }, &text, &len) == -EILSEQ && !text,
	   "a request with an annotation key that is not UTF-8: EILSEQ");
}

int main(void)
{
	test_roundtrips();
	test_rejections();
	test_unknown_members();
	test_reply_hello_get();
	test_reply_list();
	test_reply_show();
	test_reply_containers_register();
	test_reply_messages();
	test_reply_errors();
	test_reply_rejections();
	test_region_without_inode();
	test_reply_limit();
	test_not_utf8();
	return tap_finish();
}
