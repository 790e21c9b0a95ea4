/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <limits.h>
#include <stdarg.h>

#include "mshare-common/protocol.h"

static const char *const op_names[_PROTO_OP_MAX] = {
	[PROTO_OP_HELLO] = "hello",
	[PROTO_OP_GET] = "get",
	[PROTO_OP_LIST] = "list",
	[PROTO_OP_SHOW] = "show",
	[PROTO_OP_RELOAD] = "reload",
	[PROTO_OP_REGISTER] = "register",
	[PROTO_OP_UNREGISTER] = "unregister",
	[PROTO_OP_CONTAINERS] = "containers",
	[PROTO_OP_DESTROY] = "destroy",
};

const char *proto_op_to_string(enum proto_op op)
{
	return op < _PROTO_OP_MAX ? op_names[op] : "unknown";
}

int proto_op_from_string(const char *s)
{
	for (size_t i = 0; i < _PROTO_OP_MAX; i++)
		if (streq(s, op_names[i]))
			return (int)i;
	return -EOPNOTSUPP;
}

/* Member key of o, NULL if absent; -EBADMSG if present with another type. */
static int member(json_t *o, const char *key, json_type type, bool required,
		  json_t **ret, char **ret_error)
{
	static const char *const type_names[] = {
		[JSON_OBJECT] = "an object", [JSON_ARRAY] = "an array",
		[JSON_STRING] = "a string",  [JSON_INTEGER] = "an integer",
		[JSON_REAL] = "a number",    [JSON_TRUE] = "a boolean",
		[JSON_FALSE] = "a boolean",  [JSON_NULL] = "null",
	};
	json_t *v = json_object_get(o, key);

	*ret = NULL;
	if (!v) {
		if (required)
			return error_set(ret_error, -EBADMSG, "member \"%s\" is missing", key);
		return 0;
	}
	if (json_typeof(v) != type &&
	    !(type == JSON_TRUE && json_is_boolean(v)))
		return error_set(ret_error, -EBADMSG, "member \"%s\" must be %s", key, type_names[type]);
	*ret = v;
	return 0;
}

static int string_member(json_t *o, const char *key, bool required, size_t max,
			 char **ret, char **ret_error)
{
	json_t *v;
	int r;

	r = member(o, key, JSON_STRING, required, &v, ret_error);
	if (r < 0 || !v)
		return r;
	if (json_string_length(v) > max)
		return error_set(ret_error, -EINVAL, "member \"%s\" is longer than %zu bytes", key, max);
	*ret = strdup(json_string_value(v));
	return *ret ? 0 : -ENOMEM;
}

static int u64_member(json_t *o, const char *key, bool required, uint64_t max,
		      uint64_t *ret, char **ret_error)
{
	json_t *v;
	int r;

	r = member(o, key, JSON_INTEGER, required, &v, ret_error);
	if (r < 0 || !v)
		return r;
	if (json_integer_value(v) < 0 || (uint64_t)json_integer_value(v) > max)
		return error_set(ret_error, -EINVAL, "member \"%s\" is out of range", key);
	*ret = (uint64_t)json_integer_value(v);
	return 0;
}

/* The checks every message starts with. */
static int load_message(const void *buf, size_t len, json_t **ret, char **ret_error)
{
	json_t *o, *v;
	json_error_t jerr;
	int r;

	if (len > MSHARE_PROTOCOL_MAX_MESSAGE)
		return error_set(ret_error, -EMSGSIZE, "message of %zu bytes is longer than the maximum of %d",
				 len, MSHARE_PROTOCOL_MAX_MESSAGE);
	o = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!o)
		return error_set(ret_error, -EBADMSG, "not valid JSON: %s (at byte %d)", jerr.text,
				 jerr.position);
	if (!json_is_object(o)) {
		json_decref(o);
		return error_set(ret_error, -EBADMSG, "message is not a JSON object");
	}
	r = member(o, "version", JSON_INTEGER, true, &v, ret_error);
	if (r < 0) {
		json_decref(o);
		return r;
	}
	if (json_integer_value(v) != MSHARE_PROTOCOL_VERSION) {
		r = error_set(ret_error, -EPROTONOSUPPORT,
			      "protocol version %lld is not supported (supported: %d)",
			      (long long)json_integer_value(v), MSHARE_PROTOCOL_VERSION);
		json_decref(o);
		return r;
	}
	*ret = o;
	return 0;
}

void proto_request_done(struct proto_request *req)
{
	free(req->client);
	free(req->region);
	free(req->container_name);
	free(req->container_id);
	for (size_t i = 0; i < req->n_annotations; i++) {
		free(req->annotations[i].key);
		free(req->annotations[i].value);
	}
	free(req->annotations);
	for (size_t i = 0; i < req->n_regions; i++)
		free(req->regions[i].region);
	free(req->regions);
	*req = (struct proto_request){};
}

static int decode_region_name(json_t *o, struct proto_request *req, char **ret_error)
{
	int r;

	r = string_member(o, "region", true, REGION_NAME_MAX * 4, &req->region, ret_error);
	if (r < 0)
		return r;
	if (!region_name_is_valid(req->region))
		return error_set(ret_error, -EINVAL, "\"%s\" is not a valid region name", req->region);
	return 0;
}

static int decode_container(json_t *o, struct proto_request *req, char **ret_error)
{
	json_t *c, *annotations, *v;
	const char *key;
	int r;

	r = member(o, "container", JSON_OBJECT, false, &c, ret_error);
	if (r < 0 || !c)
		return r;
	req->has_container = true;
	r = string_member(c, "name", false, PROTO_CONTAINER_STRING_MAX, &req->container_name, ret_error);
	if (r < 0)
		return r;
	r = string_member(c, "id", false, PROTO_CONTAINER_STRING_MAX, &req->container_id, ret_error);
	if (r < 0)
		return r;
	r = member(c, "annotations", JSON_OBJECT, false, &annotations, ret_error);
	if (r < 0)
		return r;
	if (!req->container_name && !req->container_id && !annotations)
		return error_set(ret_error, -EBADMSG,
				 "member \"container\" needs \"name\", \"id\" or \"annotations\"");
	if (!annotations)
		return 0;

	req->annotations = calloc(json_object_size(annotations) ?: 1, sizeof(*req->annotations));
	if (!req->annotations)
		return -ENOMEM;
	json_object_foreach(annotations, key, v) {
		struct proto_annotation *a = &req->annotations[req->n_annotations];

		if (!json_is_string(v))
			return error_set(ret_error, -EBADMSG, "annotation \"%s\" must be a string", key);
		a->key = strdup(key);
		a->value = strdup(json_string_value(v));
		req->n_annotations++;
		if (!a->key || !a->value)
			return -ENOMEM;
	}
	return 0;
}

static int decode_mode(json_t *o, enum access_mode *ret, char **ret_error)
{
	_cleanup_free_ char *mode = NULL;
	int r;

	r = string_member(o, "mode", true, 16, &mode, ret_error);
	if (r < 0)
		return r;
	r = access_mode_from_string(mode);
	if (r < 0)
		return error_set(ret_error, -EINVAL, "mode \"%s\" is neither \"ro\" nor \"rw\"", mode);
	*ret = (enum access_mode)r;
	return 0;
}

/* register and unregister name the container by its id, at least. */
static int decode_registered_container(json_t *o, struct proto_request *req, char **ret_error)
{
	int r;

	r = decode_container(o, req, ret_error);
	if (r < 0)
		return r;
	if (!req->has_container)
		return error_set(ret_error, -EBADMSG, "member \"container\" is missing");
	if (!req->container_id || !*req->container_id)
		return error_set(ret_error, -EBADMSG, "member \"container\" needs a non-empty \"id\"");
	return 0;
}

/* register: "regions", 1 to PROTO_REGISTER_REGIONS_MAX distinct
 * {"region": NAME, "mode": MODE} objects. */
static int decode_region_requests(json_t *o, struct proto_request *req, char **ret_error)
{
	json_t *regions, *v;
	size_t i;
	int r;

	r = member(o, "regions", JSON_ARRAY, true, &regions, ret_error);
	if (r < 0)
		return r;
	if (json_array_size(regions) == 0 || json_array_size(regions) > PROTO_REGISTER_REGIONS_MAX)
		return error_set(ret_error, -EINVAL, "\"regions\" must name 1 to %d regions, not %zu",
				 PROTO_REGISTER_REGIONS_MAX, json_array_size(regions));
	req->regions = calloc(json_array_size(regions), sizeof(*req->regions));
	if (!req->regions)
		return -ENOMEM;
	json_array_foreach(regions, i, v) {
		struct proto_region_request *rr = &req->regions[i];

		if (!json_is_object(v))
			return error_set(ret_error, -EBADMSG, "\"regions\"[%zu] must be an object", i);
		req->n_regions++;
		r = string_member(v, "region", true, REGION_NAME_MAX * 4, &rr->region, ret_error);
		if (r < 0)
			return r;
		if (!region_name_is_valid(rr->region))
			return error_set(ret_error, -EINVAL, "\"%s\" is not a valid region name", rr->region);
		r = decode_mode(v, &rr->mode, ret_error);
		if (r < 0)
			return r;
		for (size_t j = 0; j < i; j++)
			if (streq(req->regions[j].region, rr->region))
				return error_set(ret_error, -EINVAL, "region \"%s\" is named twice", rr->region);
	}
	return 0;
}

int proto_request_decode(const void *buf, size_t len, struct proto_request *ret,
			 char **ret_error)
{
	_cleanup_(json_decrefp) json_t *o = NULL;
	_cleanup_(proto_request_done) struct proto_request req = {};
	_cleanup_free_ char *op = NULL;
	uint64_t start = 0;
	int r;

	*ret_error = NULL;
	r = load_message(buf, len, &o, ret_error);
	if (r < 0)
		return r;
	r = string_member(o, "op", true, 64, &op, ret_error);
	if (r < 0)
		return r;
	r = proto_op_from_string(op);
	if (r < 0)
		return error_set(ret_error, -EOPNOTSUPP, "unknown op \"%s\"", op);
	req.op = (enum proto_op)r;

	switch (req.op) {
	case PROTO_OP_HELLO:
		r = string_member(o, "client", false, PROTO_CLIENT_MAX, &req.client, ret_error);
		break;
	case PROTO_OP_GET:
		r = decode_region_name(o, &req, ret_error);
		if (r < 0)
			break;
		r = decode_mode(o, &req.mode, ret_error);
		if (r < 0)
			break;
		r = decode_container(o, &req, ret_error);
		break;
	case PROTO_OP_REGISTER:
		r = decode_registered_container(o, &req, ret_error);
		if (r < 0)
			break;
		r = decode_region_requests(o, &req, ret_error);
		break;
	case PROTO_OP_UNREGISTER:
		r = decode_registered_container(o, &req, ret_error);
		break;
	case PROTO_OP_SHOW:
		r = decode_region_name(o, &req, ret_error);
		break;
	case PROTO_OP_DESTROY: {
		json_t *force;

		r = decode_region_name(o, &req, ret_error);
		if (r < 0)
			break;
		r = member(o, "force", JSON_TRUE, false, &force, ret_error);
		req.force = r == 0 && json_is_true(force);
		break;
	}
	case PROTO_OP_LIST:
		r = u64_member(o, "start", false, UINT32_MAX, &start, ret_error);
		req.start = (uint32_t)start;
		break;
	case PROTO_OP_RELOAD:
	default:
		r = 0;
		break;
	}
	if (r < 0)
		return r;
	*ret = req;
	req = (struct proto_request){};
	return 0;
}

int proto_dump(json_t *o, char **ret, size_t *ret_len)
{
	char *s = json_dumps(o, JSON_COMPACT);
	size_t n;

	if (!s)
		return -ENOMEM;
	n = strlen(s);
	if (n > MSHARE_PROTOCOL_MAX_MESSAGE) {
		free(s);
		return -EMSGSIZE;
	}
	*ret = s;
	*ret_len = n;
	return 0;
}

/*
 * A new empty object. Not json_object() by name: this file is linked into
 * libmshare-preload.so, which runs inside programs that may define a
 * function of that name themselves (the postgres executable exports its
 * SQL function json_object()), and a preloaded library's call by name binds
 * to the executable's definition first. json_pack() reaches jansson's own
 * json_object() from inside libjansson, which binds it locally.
 */
static json_t *new_object(void)
{
	return json_pack("{}");
}

static int set_new(json_t *o, const char *key, json_t *v)
{
	/* json_object_set_new() takes v even when it fails. */
	return v && json_object_set_new(o, key, v) == 0 ? 0 : -ENOMEM;
}

int proto_request_encode(const struct proto_request *req, char **ret, size_t *ret_len)
{
	_cleanup_(json_decrefp) json_t *o = new_object();
	int r = 0;

	if (!o || req->op >= _PROTO_OP_MAX)
		return o ? -EINVAL : -ENOMEM;
	r |= set_new(o, "version", json_integer(MSHARE_PROTOCOL_VERSION));
	r |= set_new(o, "op", json_string(proto_op_to_string(req->op)));
	if (req->client)
		r |= set_new(o, "client", json_string(req->client));
	if (req->region)
		r |= set_new(o, "region", json_string(req->region));
	if (req->op == PROTO_OP_GET)
		r |= set_new(o, "mode", json_string(access_mode_to_string(req->mode)));
	if (req->op == PROTO_OP_LIST && req->start)
		r |= set_new(o, "start", json_integer(req->start));
	if (req->op == PROTO_OP_DESTROY && req->force)
		r |= set_new(o, "force", json_true());
	if (req->has_container) {
		json_t *c = new_object(), *a = new_object();

		r |= set_new(o, "container", c);
		if (c && req->container_name)
			r |= set_new(c, "name", json_string(req->container_name));
		if (c && req->container_id)
			r |= set_new(c, "id", json_string(req->container_id));
		/* Always, even empty: a container named by none of the three
		 * is "annotations":{}, which must stay a valid request. */
		for (size_t i = 0; a && i < req->n_annotations; i++)
			r |= set_new(a, req->annotations[i].key, json_string(req->annotations[i].value));
		if (c)
			r |= set_new(c, "annotations", a);
		else
			json_decref(a);
	}
	if (req->op == PROTO_OP_REGISTER) {
		json_t *regions = json_array();

		r |= set_new(o, "regions", regions);
		for (size_t i = 0; regions && i < req->n_regions; i++) {
			json_t *rr = new_object();

			if (!rr || json_array_append_new(regions, rr) < 0) {
				r = -ENOMEM;
				break;
			}
			r |= set_new(rr, "region", json_string(req->regions[i].region));
			r |= set_new(rr, "mode", json_string(access_mode_to_string(req->regions[i].mode)));
		}
	}
	if (r < 0)
		return -ENOMEM;
	return proto_dump(o, ret, ret_len);
}

void proto_region_info_done(struct proto_region_info *info)
{
	free(info->name);
	free(info->state);
	free(info->backing);
	free(info->path);
	free(info->protection);
	free(info->access);
	*info = (struct proto_region_info){};
}

json_t *proto_region_info_to_json(const struct proto_region_info *info)
{
	json_t *o = new_object();
	int r = 0;

	if (!o)
		return NULL;
	r |= set_new(o, "name", json_string(info->name));
	r |= set_new(o, "state", json_string(info->state));
	r |= set_new(o, "size", json_integer((json_int_t)info->size));
	r |= set_new(o, "region_size", json_integer((json_int_t)info->region_size));
	r |= set_new(o, "backing", json_string(info->backing));
	if (info->path)
		r |= set_new(o, "path", json_string(info->path));
	r |= set_new(o, "protection", json_string(info->protection));
	r |= set_new(o, "populate", json_boolean(info->populate));
	r |= set_new(o, "rss_bytes", json_integer((json_int_t)info->rss_bytes));
	r |= set_new(o, "pgtables_bytes", json_integer((json_int_t)info->pgtables_bytes));
	r |= set_new(o, "attached", json_integer(info->attached));
	r |= set_new(o, "windows", json_integer(info->windows));
	r |= set_new(o, "owner_pid", json_integer(info->owner_pid));
	r |= set_new(o, "inode", json_integer((json_int_t)info->inode));
	r |= set_new(o, "access", json_string(info->access));
	if (r < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int proto_region_info_from_json(json_t *o, struct proto_region_info *ret, char **ret_error)
{
	_cleanup_(proto_region_info_done) struct proto_region_info info = {};
	uint64_t attached = 0, windows = 0, owner = 0;
	json_t *populate;
	int r;

	*ret_error = NULL;
	if (!json_is_object(o))
		return error_set(ret_error, -EBADMSG, "region is not a JSON object");
	if ((r = string_member(o, "name", true, PATH_MAX, &info.name, ret_error)) < 0 ||
	    (r = string_member(o, "state", true, PATH_MAX, &info.state, ret_error)) < 0 ||
	    (r = u64_member(o, "size", true, INT64_MAX, &info.size, ret_error)) < 0 ||
	    (r = u64_member(o, "region_size", true, INT64_MAX, &info.region_size, ret_error)) < 0 ||
	    (r = string_member(o, "backing", true, PATH_MAX, &info.backing, ret_error)) < 0 ||
	    (r = string_member(o, "path", false, PATH_MAX, &info.path, ret_error)) < 0 ||
	    (r = string_member(o, "protection", true, PATH_MAX, &info.protection, ret_error)) < 0 ||
	    (r = member(o, "populate", JSON_TRUE, true, &populate, ret_error)) < 0 ||
	    (r = u64_member(o, "rss_bytes", true, INT64_MAX, &info.rss_bytes, ret_error)) < 0 ||
	    (r = u64_member(o, "pgtables_bytes", true, INT64_MAX, &info.pgtables_bytes, ret_error)) < 0 ||
	    (r = u64_member(o, "attached", true, UINT32_MAX, &attached, ret_error)) < 0 ||
	    (r = u64_member(o, "windows", true, UINT32_MAX, &windows, ret_error)) < 0 ||
	    (r = u64_member(o, "owner_pid", true, INT32_MAX, &owner, ret_error)) < 0 ||
	    /* Daemons before issue 16 do not send it. */
	    (r = u64_member(o, "inode", false, INT64_MAX, &info.inode, ret_error)) < 0 ||
	    (r = string_member(o, "access", true, PATH_MAX, &info.access, ret_error)) < 0)
		return r;
	info.populate = json_is_true(populate);
	info.attached = (uint32_t)attached;
	info.windows = (uint32_t)windows;
	info.owner_pid = (int64_t)owner;
	*ret = info;
	info = (struct proto_region_info){};
	return 0;
}

void proto_reply_done(struct proto_reply *reply)
{
	free(reply->message);
	json_decref(reply->object);
	*reply = (struct proto_reply){};
}

int proto_reply_decode(const void *buf, size_t len, struct proto_reply *ret, char **ret_error)
{
	_cleanup_(json_decrefp) json_t *o = NULL;
	_cleanup_free_ char *status = NULL, *name = NULL, *message = NULL;
	int r, error = 0;

	*ret_error = NULL;
	r = load_message(buf, len, &o, ret_error);
	if (r < 0)
		return r;
	r = string_member(o, "status", true, 16, &status, ret_error);
	if (r < 0)
		return r;
	if (streq(status, "error")) {
		if ((r = string_member(o, "errno", true, 64, &name, ret_error)) < 0 ||
		    (r = string_member(o, "message", true, MSHARE_PROTOCOL_MAX_MESSAGE, &message,
				       ret_error)) < 0)
			return r;
		/* A name this libc does not know still is an error. */
		error = errno_from_name(name) ?: EPROTO;
	} else if (!streq(status, "ok"))
		return error_set(ret_error, -EBADMSG, "status \"%s\" is neither \"ok\" nor \"error\"", status);

	*ret = (struct proto_reply){
		.error = error,
		.message = TAKE_PTR(message),
		.object = TAKE_PTR(o),
	};
	return 0;
}

json_t *proto_reply_new_ok(void)
{
	json_t *o = new_object();

	if (!o)
		return NULL;
	if (set_new(o, "version", json_integer(MSHARE_PROTOCOL_VERSION)) < 0 ||
	    set_new(o, "status", json_string("ok")) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *proto_reply_new_error(int error, const char *format, ...)
{
	_cleanup_free_ char *msg = NULL;
	json_t *o = new_object();
	va_list ap;

	if (!o)
		return NULL;
	va_start(ap, format);
	msg = vstrprintf(format, ap);
	va_end(ap);
	if (!msg ||
	    set_new(o, "version", json_integer(MSHARE_PROTOCOL_VERSION)) < 0 ||
	    set_new(o, "status", json_string("error")) < 0 ||
	    set_new(o, "errno", json_string(errno_to_name(error))) < 0 ||
	    /* json_string() refuses invalid UTF-8, which a region name cannot
	     * have but a message quoting a peer's string might. */
	    set_new(o, "message", json_string(msg) ?: json_string("(message not valid UTF-8)")) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}
