/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "mshare-common/protocol.h"
#include "mshare-common/tap.h"

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
	for (size_t i = 0; i < a->n_regions; i++)
		if (!streq(a->regions[i].region, b->regions[i].region) || a->regions[i].mode != b->regions[i].mode)
			return false;
	for (size_t i = 0; i < a->n_annotations; i++) {
		bool found = false;

		/* JSON objects have no order. */
		for (size_t j = 0; j < b->n_annotations; j++)
			if (streq(a->annotations[i].key, b->annotations[j].key) &&
			    streq(a->annotations[i].value, b->annotations[j].value))
				found = true;
		if (!found)
			return false;
	}
	return true;
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

static void test_replies(void)
{
	_cleanup_(proto_reply_done) struct proto_reply r1 = {}, r2 = {}, r3 = {};
	_cleanup_free_ char *t1 = NULL, *t2 = NULL, *error = NULL;
	json_t *ok_reply = proto_reply_new_ok();
	json_t *err_reply = proto_reply_new_error(EACCES, "region '%s' is not granted", "pool");
	size_t l1 = 0, l2 = 0;
	const char *unknown = "{\"version\":1,\"status\":\"error\",\"errno\":\"EFUTURE\",\"message\":\"m\"}";

	bool pass;

	pass = proto_dump(ok_reply, &t1, &l1) == 0 && proto_reply_decode(t1, l1, &r1, &error) == 0 &&
	       r1.error == 0 && !r1.message;
	ok(pass, "ok reply round trip: %s", strna(t1));
	pass = proto_dump(err_reply, &t2, &l2) == 0 && proto_reply_decode(t2, l2, &r2, &error) == 0 &&
	       r2.error == EACCES && r2.message && streq(r2.message, "region 'pool' is not granted");
	ok(pass, "error reply round trip: %s", strna(t2));
	pass = proto_reply_decode(unknown, strlen(unknown), &r3, &error) == 0 && r3.error == EPROTO;
	ok(pass, "an errno name this side does not know is EPROTO");
	json_decref(ok_reply);
	json_decref(err_reply);

	static const struct {
		const char *what, *msg;
		int expected;
	} bad[] = {
		{ "a reply of another version", "{\"version\":2,\"status\":\"ok\"}", -EPROTONOSUPPORT },
		{ "a reply without status", "{\"version\":1}", -EBADMSG },
		{ "an odd status", "{\"version\":1,\"status\":\"maybe\"}", -EBADMSG },
		{ "an error without errno", "{\"version\":1,\"status\":\"error\",\"message\":\"m\"}", -EBADMSG },
		{ "an error without message", "{\"version\":1,\"status\":\"error\",\"errno\":\"EIO\"}", -EBADMSG },
		{ "a reply that is no JSON", "ok", -EBADMSG },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		_cleanup_(proto_reply_done) struct proto_reply r = {};
		_cleanup_free_ char *e = NULL;

		pass = proto_reply_decode(bad[i].msg, strlen(bad[i].msg), &r, &e) == bad[i].expected;
		ok(pass && e, "rejects %s: %s", bad[i].what, strna(e));
	}
}

static void test_region_info(void)
{
	struct proto_region_info in = {
		.name = "pool", .state = "active", .size = 64 << 20, .region_size = 512ULL << 30,
		.backing = "file", .path = "/var/lib/pool", .protection = "rw", .populate = true,
		.rss_bytes = 12345 * 4096ULL, .pgtables_bytes = 8192, .attached = 3, .windows = 4,
		.owner_pid = 42, .inode = 4242, .access = "ro",
	};
	_cleanup_(proto_region_info_done) struct proto_region_info out = {}, bad = {};
	_cleanup_free_ char *error = NULL, *error2 = NULL;
	json_t *j = proto_region_info_to_json(&in), *b;
	int k;

	k = j ? proto_region_info_from_json(j, &out, &error) : -ENOMEM;
	ok(k == 0 && streq(out.name, in.name) && streq(out.state, in.state) && out.size == in.size &&
	   out.region_size == in.region_size && streq(out.backing, in.backing) &&
	   str_eq(out.path, in.path) && streq(out.protection, in.protection) &&
	   out.populate == in.populate && out.rss_bytes == in.rss_bytes &&
	   out.pgtables_bytes == in.pgtables_bytes && out.attached == in.attached &&
	   out.windows == in.windows && out.owner_pid == in.owner_pid && out.inode == in.inode &&
	   streq(out.access, in.access),
	   "region info round trip");

	b = json_deep_copy(j);
	json_object_del(b, "inode");
	proto_region_info_done(&bad);
	k = proto_region_info_from_json(b, &bad, &error2);
	ok(k == 0 && bad.inode == 0, "a region without inode (a daemon before issue 16) reads as inode 0");
	proto_region_info_done(&bad);
	json_decref(b);

	b = json_deep_copy(j);
	json_object_set_new(b, "attached", json_integer(-1));
	k = proto_region_info_from_json(b, &bad, &error2);
	ok(k == -EINVAL, "negative count rejected: %s", strna(error2));
	json_decref(b);
	json_decref(j);
}

static void test_dump_limit(void)
{
	json_t *o = proto_reply_new_ok();
	_cleanup_free_ char *s = malloc(MSHARE_PROTOCOL_MAX_MESSAGE + 1), *text = NULL;
	size_t len;

	memset(s, 'a', MSHARE_PROTOCOL_MAX_MESSAGE);
	s[MSHARE_PROTOCOL_MAX_MESSAGE] = '\0';
	json_object_set_new(o, "x", json_string(s));
	ok(proto_dump(o, &text, &len) == -EMSGSIZE && !text, "an oversized reply is never sent");
	json_decref(o);
}

int main(void)
{
	test_roundtrips();
	test_rejections();
	test_unknown_members();
	test_replies();
	test_region_info();
	test_dump_limit();
	return tap_finish();
}
