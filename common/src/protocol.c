/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>

#include "mshare-common/protocol.h"
#include "mshare-common/strv.h"
#include "mshare-common/utf8.h"

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

/* ---- encoding ---- */

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

/*
 * The encoders add the members of a message to an object and return 0 or
 * the first error: -ENOMEM, or -EILSEQ for a string that is not valid
 * UTF-8. JSON cannot carry such a string, and json_string() refuses it with
 * the same NULL as for a lack of memory; the daemon must tell the two apart
 * (it answers EILSEQ for the one and gives up on the other). An element
 * encoder, int (*)(const void *element, json_t **ret), makes one element
 * of an array.
 */

static int set_new(json_t *o, const char *key, json_t *v)
{
	/* json_object_set_new() takes v even when it fails. */
	return v && json_object_set_new(o, key, v) == 0 ? 0 : -ENOMEM;
}

static int text_to_json(const char *s, json_t **ret)
{
	if (!s)
		return -EINVAL; /* a member every such message has */
	if (!utf8_is_valid(s))
		return -EILSEQ;
	*ret = json_string(s);
	return *ret ? 0 : -ENOMEM;
}

/* A string member the message always has. */
static int set_text(json_t *o, const char *key, const char *s)
{
	json_t *v;
	int r = text_to_json(s, &v);

	return r < 0 ? r : set_new(o, key, v);
}

/* An optional string member: absent if s is NULL. */
static int set_string(json_t *o, const char *key, const char *s)
{
	return s ? set_text(o, key, s) : 0;
}

static int set_integer(json_t *o, const char *key, json_int_t v)
{
	return set_new(o, key, json_integer(v));
}

/* Member key, what to_json makes of element. */
static int set_encoded(json_t *o, const char *key, const void *element,
		       int (*to_json)(const void *element, json_t **ret))
{
	json_t *v;
	int r = to_json(element, &v);

	return r < 0 ? r : set_new(o, key, v);
}

/* Member key, an array of to_json(element) for the n elements of size
 * bytes at v. */
static int set_array(json_t *o, const char *key, const void *v, size_t n, size_t size,
		     int (*to_json)(const void *element, json_t **ret))
{
	_cleanup_(json_decrefp) json_t *a = json_array();

	if (!a)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		json_t *e;
		int r = to_json((const char *)v + i * size, &e);

		if (r < 0)
			return r;
		/* json_array_append_new() takes e even when it fails. */
		if (json_array_append_new(a, e) < 0)
			return -ENOMEM;
	}
	return set_new(o, key, TAKE_PTR(a));
}

/* uid_t and gid_t go through the same uint32_t arrays. */
_Static_assert(sizeof(uid_t) == sizeof(uint32_t) && sizeof(gid_t) == sizeof(uint32_t), "32-bit ids");

static int uint_to_json(const void *element, json_t **ret)
{
	*ret = json_integer(*(const uint32_t *)element);
	return *ret ? 0 : -ENOMEM;
}

static int string_to_json(const void *element, json_t **ret)
{
	return text_to_json(*(char *const *)element, ret);
}

/* Member key, a NULL-terminated vector (NULL: none) as an array of strings. */
static int set_strv(json_t *o, const char *key, char *const *v)
{
	return set_array(o, key, v, strv_length(v), sizeof(*v), string_to_json);
}

static int set_annotations(json_t *o, const char *key, const struct proto_annotation *annotations, size_t n)
{
	_cleanup_(json_decrefp) json_t *a = new_object();

	if (!a)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int r;

		/* The key is text too, which json_object_set_new() would
		 * refuse as if memory had run out. */
		if (!utf8_is_valid(annotations[i].key))
			return -EILSEQ;
		r = set_text(a, annotations[i].key, annotations[i].value);
		if (r < 0)
			return r;
	}
	return set_new(o, key, TAKE_PTR(a));
}

/* {"region": NAME, "mode": MODE}: in register requests and replies, and in
 * the containers reply. */
static int region_request_to_json(const void *element, json_t **ret)
{
	const struct proto_region_request *rr = element;
	_cleanup_(json_decrefp) json_t *o = new_object();
	int r = o ? 0 : -ENOMEM;

	if (r < 0 ||
	    (r = set_text(o, "region", rr->region)) < 0 ||
	    (r = set_text(o, "mode", access_mode_to_string(rr->mode))) < 0)
		return r;
	*ret = TAKE_PTR(o);
	return 0;
}

static int set_region_requests(json_t *o, const char *key, const struct proto_region_request *regions,
			       size_t n)
{
	return set_array(o, key, regions, n, sizeof(*regions), region_request_to_json);
}

/* Compact JSON, failing with -EMSGSIZE past the maximum message size. */
static int dump(json_t *o, char **ret, size_t *ret_len)
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

/* ---- decoding ---- */

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

static void annotations_free(struct proto_annotation *annotations, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(annotations[i].key);
		free(annotations[i].value);
	}
	free(annotations);
}

static void region_requests_free(struct proto_region_request *regions, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(regions[i].region);
	free(regions);
}

void proto_request_done(struct proto_request *req)
{
	free(req->client);
	free(req->region);
	free(req->container_name);
	free(req->container_id);
	annotations_free(req->annotations, req->n_annotations);
	region_requests_free(req->regions, req->n_regions);
	*req = (struct proto_request){};
}

/* A region name, checked. */
static int region_name_member(json_t *o, const char *key, char **ret, char **ret_error)
{
	int r;

	r = string_member(o, key, true, REGION_NAME_MAX * 4, ret, ret_error);
	if (r < 0)
		return r;
	if (!region_name_is_valid(*ret))
		return error_set(ret_error, -EINVAL, "\"%s\" is not a valid region name", *ret);
	return 0;
}

/* An object of strings: container annotations, or a grant's patterns. */
static int annotations_from_json(json_t *o, const char *what, struct proto_annotation **ret,
				 size_t *ret_n, char **ret_error)
{
	const char *key;
	json_t *v;

	*ret = calloc(json_object_size(o) ?: 1, sizeof(**ret));
	if (!*ret)
		return -ENOMEM;
	json_object_foreach(o, key, v) {
		struct proto_annotation *a = &(*ret)[*ret_n];

		if (!json_is_string(v))
			return error_set(ret_error, -EBADMSG, "%s \"%s\" must be a string", what, key);
		a->key = strdup(key);
		a->value = strdup(json_string_value(v));
		(*ret_n)++;
		if (!a->key || !a->value)
			return -ENOMEM;
	}
	return 0;
}

static int decode_container(json_t *o, struct proto_request *req, char **ret_error)
{
	json_t *c, *annotations;
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
	return annotations_from_json(annotations, "annotation", &req->annotations, &req->n_annotations,
				     ret_error);
}

static int mode_from_json(json_t *v, enum access_mode *ret, char **ret_error)
{
	int r;

	r = access_mode_from_string(json_string_value(v));
	if (r < 0)
		return error_set(ret_error, -EINVAL, "mode \"%s\" is neither \"ro\" nor \"rw\"",
				 json_string_value(v));
	*ret = (enum access_mode)r;
	return 0;
}

/* Member "mode": "ro" or "rw"; *ret stays ACCESS_NONE if it is optional
 * and absent. */
static int mode_member(json_t *o, bool required, enum access_mode *ret, char **ret_error)
{
	json_t *v;
	int r;

	r = member(o, "mode", JSON_STRING, required, &v, ret_error);
	if (r < 0 || !v)
		return r;
	return mode_from_json(v, ret, ret_error);
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

/* Member "regions" of a register request or reply, or of a registered
 * container: 1 to PROTO_REGISTER_REGIONS_MAX distinct {"region": NAME,
 * "mode": MODE} objects. */
static int region_requests_member(json_t *o, bool required, struct proto_region_request **ret,
				  size_t *ret_n, char **ret_error)
{
	json_t *regions, *v;
	size_t i;
	int r;

	r = member(o, "regions", JSON_ARRAY, required, &regions, ret_error);
	if (r < 0 || !regions)
		return r;
	if (json_array_size(regions) == 0 || json_array_size(regions) > PROTO_REGISTER_REGIONS_MAX)
		return error_set(ret_error, -EINVAL, "\"regions\" must name 1 to %d regions, not %zu",
				 PROTO_REGISTER_REGIONS_MAX, json_array_size(regions));
	*ret = calloc(json_array_size(regions), sizeof(**ret));
	if (!*ret)
		return -ENOMEM;
	json_array_foreach(regions, i, v) {
		struct proto_region_request *rr = &(*ret)[i];

		if (!json_is_object(v))
			return error_set(ret_error, -EBADMSG, "\"regions\"[%zu] must be an object", i);
		(*ret_n)++;
		r = region_name_member(v, "region", &rr->region, ret_error);
		if (r < 0)
			return r;
		r = mode_member(v, true, &rr->mode, ret_error);
		if (r < 0)
			return r;
		for (size_t j = 0; j < i; j++)
			if (streq((*ret)[j].region, rr->region))
				return error_set(ret_error, -EINVAL, "region \"%s\" is named twice", rr->region);
	}
	return 0;
}

static int decode_request_op(json_t *o, struct proto_request *req, char **ret_error)
{
	json_t *force;
	uint64_t start = 0;
	int r;

	switch (req->op) {
	case PROTO_OP_HELLO:
		return string_member(o, "client", false, PROTO_CLIENT_MAX, &req->client, ret_error);
	case PROTO_OP_GET:
		r = region_name_member(o, "region", &req->region, ret_error);
		if (r < 0)
			return r;
		r = mode_member(o, true, &req->mode, ret_error);
		if (r < 0)
			return r;
		return decode_container(o, req, ret_error);
	case PROTO_OP_REGISTER:
		r = decode_registered_container(o, req, ret_error);
		if (r < 0)
			return r;
		return region_requests_member(o, true, &req->regions, &req->n_regions, ret_error);
	case PROTO_OP_UNREGISTER:
		return decode_registered_container(o, req, ret_error);
	case PROTO_OP_SHOW:
		return region_name_member(o, "region", &req->region, ret_error);
	case PROTO_OP_DESTROY:
		r = region_name_member(o, "region", &req->region, ret_error);
		if (r < 0)
			return r;
		r = member(o, "force", JSON_TRUE, false, &force, ret_error);
		req->force = r == 0 && json_is_true(force);
		return r;
	case PROTO_OP_LIST:
		r = u64_member(o, "start", false, UINT32_MAX, &start, ret_error);
		req->start = (uint32_t)start;
		return r;
	default: /* reload, containers */
		return 0;
	}
}

int proto_request_decode(const void *buf, size_t len, struct proto_request *ret,
			 char **ret_error)
{
	_cleanup_(json_decrefp) json_t *o = NULL;
	_cleanup_(proto_request_done) struct proto_request req = {};
	_cleanup_free_ char *op = NULL;
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
	r = decode_request_op(o, &req, ret_error);
	if (r < 0)
		return r;
	*ret = req;
	req = (struct proto_request){};
	return 0;
}

static int container_to_json(const void *element, json_t **ret)
{
	const struct proto_request *req = element;
	_cleanup_(json_decrefp) json_t *c = new_object();
	int r = c ? 0 : -ENOMEM;

	if (r < 0 ||
	    (r = set_string(c, "name", req->container_name)) < 0 ||
	    (r = set_string(c, "id", req->container_id)) < 0 ||
	    /* Always, even empty: a container named by none of the three is
	     * "annotations":{}, which must stay a valid request. */
	    (r = set_annotations(c, "annotations", req->annotations, req->n_annotations)) < 0)
		return r;
	*ret = TAKE_PTR(c);
	return 0;
}

int proto_request_encode(const struct proto_request *req, char **ret, size_t *ret_len)
{
	_cleanup_(json_decrefp) json_t *o = new_object();
	int r;

	if (!o || req->op >= _PROTO_OP_MAX)
		return o ? -EINVAL : -ENOMEM;
	if ((r = set_integer(o, "version", MSHARE_PROTOCOL_VERSION)) < 0 ||
	    (r = set_text(o, "op", proto_op_to_string(req->op))) < 0 ||
	    (r = set_string(o, "client", req->client)) < 0 ||
	    (r = set_string(o, "region", req->region)) < 0 ||
	    (req->op == PROTO_OP_GET &&
	     (r = set_text(o, "mode", access_mode_to_string(req->mode))) < 0) ||
	    (req->op == PROTO_OP_LIST && req->start &&
	     (r = set_integer(o, "start", req->start)) < 0) ||
	    (req->op == PROTO_OP_DESTROY && req->force &&
	     (r = set_new(o, "force", json_true())) < 0) ||
	    (req->has_container &&
	     (r = set_encoded(o, "container", req, container_to_json)) < 0) ||
	    (req->op == PROTO_OP_REGISTER &&
	     (r = set_region_requests(o, "regions", req->regions, req->n_regions)) < 0))
		return r;
	return dump(o, ret, ret_len);
}

/* ---- replies: the parts ---- */

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

/* Here and below, element functions take void *: objects_member() and
 * set_array() call them for each element of an array. */
static int region_info_to_json(const void *element, json_t **ret)
{
	const struct proto_region_info *info = element;
	_cleanup_(json_decrefp) json_t *o = new_object();
	int r = o ? 0 : -ENOMEM;

	if (r < 0 ||
	    (r = set_text(o, "name", info->name)) < 0 ||
	    (r = set_text(o, "state", info->state)) < 0 ||
	    (r = set_integer(o, "size", (json_int_t)info->size)) < 0 ||
	    (r = set_integer(o, "region_size", (json_int_t)info->region_size)) < 0 ||
	    (r = set_text(o, "backing", info->backing)) < 0 ||
	    (r = set_string(o, "path", info->path)) < 0 ||
	    (r = set_text(o, "protection", info->protection)) < 0 ||
	    (r = set_new(o, "populate", json_boolean(info->populate))) < 0 ||
	    (r = set_integer(o, "rss_bytes", (json_int_t)info->rss_bytes)) < 0 ||
	    (r = set_integer(o, "pgtables_bytes", (json_int_t)info->pgtables_bytes)) < 0 ||
	    (r = set_integer(o, "attached", info->attached)) < 0 ||
	    (r = set_integer(o, "windows", info->windows)) < 0 ||
	    (r = set_integer(o, "owner_pid", info->owner_pid)) < 0 ||
	    (r = set_integer(o, "inode", (json_int_t)info->inode)) < 0 ||
	    (r = set_text(o, "access", info->access)) < 0)
		return r;
	*ret = TAKE_PTR(o);
	return 0;
}

ssize_t proto_region_info_length(const struct proto_region_info *info)
{
	_cleanup_(json_decrefp) json_t *o = NULL;
	_cleanup_free_ char *s = NULL;
	int r;

	r = region_info_to_json(info, &o);
	if (r < 0)
		return r;
	s = json_dumps(o, JSON_COMPACT);
	if (!s)
		return -ENOMEM;
	/* And the comma that separates it from the next. */
	return (ssize_t)strlen(s) + 1;
}

static int region_info_from_json(json_t *o, void *element, char **ret_error)
{
	struct proto_region_info *info = element;
	uint64_t attached = 0, windows = 0, owner = 0;
	json_t *populate;
	int r;

	if (!json_is_object(o))
		return error_set(ret_error, -EBADMSG, "region is not a JSON object");
	if ((r = string_member(o, "name", true, PATH_MAX, &info->name, ret_error)) < 0 ||
	    (r = string_member(o, "state", true, PATH_MAX, &info->state, ret_error)) < 0 ||
	    (r = u64_member(o, "size", true, INT64_MAX, &info->size, ret_error)) < 0 ||
	    (r = u64_member(o, "region_size", true, INT64_MAX, &info->region_size, ret_error)) < 0 ||
	    (r = string_member(o, "backing", true, PATH_MAX, &info->backing, ret_error)) < 0 ||
	    (r = string_member(o, "path", false, PATH_MAX, &info->path, ret_error)) < 0 ||
	    (r = string_member(o, "protection", true, PATH_MAX, &info->protection, ret_error)) < 0 ||
	    (r = member(o, "populate", JSON_TRUE, true, &populate, ret_error)) < 0 ||
	    (r = u64_member(o, "rss_bytes", true, INT64_MAX, &info->rss_bytes, ret_error)) < 0 ||
	    (r = u64_member(o, "pgtables_bytes", true, INT64_MAX, &info->pgtables_bytes, ret_error)) < 0 ||
	    (r = u64_member(o, "attached", true, UINT32_MAX, &attached, ret_error)) < 0 ||
	    (r = u64_member(o, "windows", true, UINT32_MAX, &windows, ret_error)) < 0 ||
	    (r = u64_member(o, "owner_pid", true, INT32_MAX, &owner, ret_error)) < 0 ||
	    /* Optional: older daemons omit it. */
	    (r = u64_member(o, "inode", false, INT64_MAX, &info->inode, ret_error)) < 0 ||
	    (r = string_member(o, "access", true, PATH_MAX, &info->access, ret_error)) < 0)
		return r;
	info->populate = json_is_true(populate);
	info->attached = (uint32_t)attached;
	info->windows = (uint32_t)windows;
	info->owner_pid = (int64_t)owner;
	return 0;
}

/* Member "region", a region object. */
static int region_member(json_t *o, bool required, struct proto_reply *reply, char **ret_error)
{
	json_t *v;
	int r;

	r = member(o, "region", JSON_OBJECT, required, &v, ret_error);
	if (r < 0 || !v)
		return r;
	reply->has_region = true;
	return region_info_from_json(v, &reply->region, ret_error);
}

/*
 * Member key, an array, in *ret_array (NULL if it is optional and absent),
 * and in *ret zeroed room for its elements of size bytes and extra more.
 */
static int array_member(json_t *o, const char *key, bool required, size_t size, size_t extra,
			json_t **ret_array, void **ret, char **ret_error)
{
	int r;

	r = member(o, key, JSON_ARRAY, required, ret_array, ret_error);
	if (r < 0 || !*ret_array)
		return r;
	*ret = calloc(json_array_size(*ret_array) + extra ?: 1, size);
	return *ret ? 0 : -ENOMEM;
}

/* Member key, an array of integers up to max. */
static int uints_member(json_t *o, const char *key, bool required, uint64_t max, uint32_t **ret,
			size_t *ret_n, char **ret_error)
{
	json_t *a, *v;
	size_t i;
	int r;

	r = array_member(o, key, required, sizeof(**ret), 0, &a, (void **)ret, ret_error);
	if (r < 0 || !a)
		return r;
	json_array_foreach(a, i, v) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 || (uint64_t)json_integer_value(v) > max)
			return error_set(ret_error, -EBADMSG, "\"%s\"[%zu] must be an integer of 0 to %" PRIu64,
					 key, i, max);
		(*ret)[i] = (uint32_t)json_integer_value(v);
		(*ret_n)++;
	}
	return 0;
}

/* Member key, an array of strings, as a NULL-terminated vector. */
static int strv_member(json_t *o, const char *key, char ***ret, char **ret_error)
{
	json_t *a, *v;
	size_t i;
	int r;

	/* One more for the NULL at the end. */
	r = array_member(o, key, true, sizeof(**ret), 1, &a, (void **)ret, ret_error);
	if (r < 0)
		return r;
	json_array_foreach(a, i, v) {
		if (!json_is_string(v))
			return error_set(ret_error, -EBADMSG, "\"%s\"[%zu] must be a string", key, i);
		(*ret)[i] = strdup(json_string_value(v));
		if (!(*ret)[i])
			return -ENOMEM;
	}
	return 0;
}

static void grant_done(struct proto_grant *g)
{
	free(g->source);
	free(g->region);
	free(g->users);
	free(g->groups);
	strv_free(g->containers);
	strv_free(g->container_ids);
	annotations_free(g->annotations, g->n_annotations);
	*g = (struct proto_grant){};
}

static int grant_to_json(const void *element, json_t **ret)
{
	const struct proto_grant *g = element;
	_cleanup_(json_decrefp) json_t *o = new_object();
	int r = o ? 0 : -ENOMEM;

	if (r < 0 ||
	    (r = set_text(o, "source", g->source)) < 0 ||
	    (r = set_text(o, "region", g->region)) < 0 ||
	    (r = set_text(o, "mode", access_mode_to_string(g->mode))) < 0 ||
	    (r = set_array(o, "users", g->users, g->n_users, sizeof(uid_t), uint_to_json)) < 0 ||
	    (r = set_array(o, "groups", g->groups, g->n_groups, sizeof(gid_t), uint_to_json)) < 0 ||
	    (r = set_strv(o, "containers", g->containers)) < 0 ||
	    (r = set_strv(o, "container_ids", g->container_ids)) < 0 ||
	    (r = set_annotations(o, "annotations", g->annotations, g->n_annotations)) < 0)
		return r;
	*ret = TAKE_PTR(o);
	return 0;
}

static int grant_from_json(json_t *o, void *element, char **ret_error)
{
	struct proto_grant *g = element;
	json_t *annotations;
	int r;

	if (!json_is_object(o))
		return error_set(ret_error, -EBADMSG, "grant is not a JSON object");
	if ((r = string_member(o, "source", true, PATH_MAX, &g->source, ret_error)) < 0 ||
	    (r = string_member(o, "region", true, PATH_MAX, &g->region, ret_error)) < 0 ||
	    (r = mode_member(o, true, &g->mode, ret_error)) < 0 ||
	    (r = uints_member(o, "users", true, UINT32_MAX, &g->users, &g->n_users, ret_error)) < 0 ||
	    (r = uints_member(o, "groups", true, UINT32_MAX, &g->groups, &g->n_groups, ret_error)) < 0 ||
	    (r = strv_member(o, "containers", &g->containers, ret_error)) < 0 ||
	    (r = strv_member(o, "container_ids", &g->container_ids, ret_error)) < 0 ||
	    (r = member(o, "annotations", JSON_OBJECT, true, &annotations, ret_error)) < 0)
		return r;
	return annotations_from_json(annotations, "grant annotation", &g->annotations, &g->n_annotations,
				     ret_error);
}

static void container_info_done(struct proto_container_info *c)
{
	free(c->id);
	free(c->name);
	region_requests_free(c->regions, c->n_regions);
	*c = (struct proto_container_info){};
}

static int container_info_to_json(const void *element, json_t **ret)
{
	const struct proto_container_info *c = element;
	_cleanup_(json_decrefp) json_t *o = new_object();
	int r = o ? 0 : -ENOMEM;

	if (r < 0 ||
	    (r = set_text(o, "id", c->id)) < 0 ||
	    (r = set_string(o, "name", c->name)) < 0 ||
	    (r = set_integer(o, "pid", c->pid)) < 0 ||
	    (r = set_region_requests(o, "regions", c->regions, c->n_regions)) < 0 ||
	    (r = set_integer(o, "connections", (json_int_t)c->connections)) < 0)
		return r;
	*ret = TAKE_PTR(o);
	return 0;
}

static int container_info_from_json(json_t *o, void *element, char **ret_error)
{
	struct proto_container_info *c = element;
	uint64_t pid = 0;
	int r;

	if (!json_is_object(o))
		return error_set(ret_error, -EBADMSG, "container is not a JSON object");
	if ((r = string_member(o, "id", true, PROTO_CONTAINER_STRING_MAX, &c->id, ret_error)) < 0 ||
	    (r = string_member(o, "name", false, PROTO_CONTAINER_STRING_MAX, &c->name, ret_error)) < 0 ||
	    (r = u64_member(o, "pid", true, INT32_MAX, &pid, ret_error)) < 0 ||
	    (r = region_requests_member(o, true, &c->regions, &c->n_regions, ret_error)) < 0 ||
	    (r = u64_member(o, "connections", true, INT64_MAX, &c->connections, ret_error)) < 0)
		return r;
	c->pid = (int64_t)pid;
	return 0;
}

/*
 * Member key, an array of objects, each decoded by from_json into the n-th
 * of *ret (elements of size bytes, zeroed first); *ret_n counts them all, so
 * that the caller frees them whatever failed.
 */
static int objects_member(json_t *o, const char *key, bool required, size_t size,
			  int (*from_json)(json_t *v, void *element, char **ret_error), void **ret,
			  size_t *ret_n, char **ret_error)
{
	json_t *a, *v;
	size_t i;
	int r;

	r = array_member(o, key, required, size, 0, &a, ret, ret_error);
	if (r < 0 || !a)
		return r;
	*ret_n = json_array_size(a);
	json_array_foreach(a, i, v) {
		r = from_json(v, (char *)*ret + i * size, ret_error);
		if (r < 0)
			return r;
	}
	return 0;
}

void proto_reply_done(struct proto_reply *reply)
{
	free(reply->message);
	proto_region_info_done(&reply->region);
	free(reply->hello.versions);
	free(reply->hello.server);
	for (size_t i = 0; i < reply->list.n_regions; i++)
		proto_region_info_done(&reply->list.regions[i]);
	free(reply->list.regions);
	free(reply->show.source);
	free(reply->show.error);
	free(reply->show.pending_source);
	for (size_t i = 0; i < reply->show.n_grants; i++)
		grant_done(&reply->show.grants[i]);
	free(reply->show.grants);
	region_requests_free(reply->reg.regions, reply->reg.n_regions);
	for (size_t i = 0; i < reply->containers.n_containers; i++)
		container_info_done(&reply->containers.containers[i]);
	free(reply->containers.containers);
	json_decref(reply->object);
	*reply = (struct proto_reply){};
}

/* ---- replies: one encoder and one decoder for the reply to each op ---- */

static int encode_hello_reply(json_t *o, const struct proto_reply *reply)
{
	int r;

	if ((r = set_array(o, "versions", reply->hello.versions, reply->hello.n_versions, sizeof(uint32_t),
			   uint_to_json)) < 0 ||
	    (r = set_string(o, "server", reply->hello.server)) < 0 ||
	    (r = set_integer(o, "max_message", (json_int_t)reply->hello.max_message)) < 0)
		return r;
	return set_integer(o, "uid", reply->hello.uid);
}

/* Daemons say who they are; what a client needs of that is only that it
 * is well-formed. */
static int decode_hello_reply(json_t *o, struct proto_reply *reply, char **ret_error)
{
	uint64_t uid = 0;
	int r;

	if ((r = uints_member(o, "versions", false, UINT32_MAX, &reply->hello.versions,
			      &reply->hello.n_versions, ret_error)) < 0 ||
	    (r = string_member(o, "server", false, PATH_MAX, &reply->hello.server, ret_error)) < 0 ||
	    (r = u64_member(o, "max_message", false, INT64_MAX, &reply->hello.max_message, ret_error)) < 0 ||
	    (r = u64_member(o, "uid", false, UINT32_MAX, &uid, ret_error)) < 0)
		return r;
	reply->hello.uid = (uid_t)uid;
	return 0;
}

static int encode_get_reply(json_t *o, const struct proto_reply *reply)
{
	int r = 0;

	/* The daemon always says; a decoded reply may not have. */
	if (reply->get.mode != ACCESS_NONE)
		r = set_text(o, "mode", access_mode_to_string(reply->get.mode));
	if (r == 0 && reply->has_region)
		r = set_encoded(o, "region", &reply->region, region_info_to_json);
	return r;
}

/* The descriptor is what counts: mshare_request() needs nothing else, and
 * libmshare-client checks has_region itself. */
static int decode_get_reply(json_t *o, struct proto_reply *reply, char **ret_error)
{
	int r;

	r = mode_member(o, false, &reply->get.mode, ret_error);
	if (r < 0)
		return r;
	return region_member(o, false, reply, ret_error);
}

static int encode_list_reply(json_t *o, const struct proto_reply *reply)
{
	int r;

	r = set_array(o, "regions", reply->list.regions, reply->list.n_regions, sizeof(*reply->list.regions),
		      region_info_to_json);
	if (r == 0 && reply->list.has_next)
		r = set_integer(o, "next", reply->list.next);
	return r;
}

static int decode_list_reply(json_t *o, struct proto_reply *reply, char **ret_error)
{
	uint64_t next = 0;
	json_t *v;
	int r;

	r = objects_member(o, "regions", true, sizeof(*reply->list.regions), region_info_from_json,
			   (void **)&reply->list.regions, &reply->list.n_regions, ret_error);
	if (r < 0)
		return r;
	r = member(o, "next", JSON_INTEGER, false, &v, ret_error);
	if (r < 0 || !v)
		return r;
	reply->list.has_next = true;
	r = u64_member(o, "next", true, UINT32_MAX, &next, ret_error);
	reply->list.next = (uint32_t)next;
	return r;
}

static int encode_show_reply(json_t *o, const struct proto_reply *reply)
{
	int r;

	if ((r = set_encoded(o, "region", &reply->region, region_info_to_json)) < 0 ||
	    (r = set_string(o, "source", reply->show.source)) < 0 ||
	    (r = set_string(o, "error", reply->show.error)) < 0 ||
	    (r = set_string(o, "pending_source", reply->show.pending_source)) < 0 ||
	    !reply->show.has_grants)
		return r;
	return set_array(o, "grants", reply->show.grants, reply->show.n_grants, sizeof(*reply->show.grants),
			 grant_to_json);
}

static int decode_show_reply(json_t *o, struct proto_reply *reply, char **ret_error)
{
	json_t *grants;
	int r;

	if ((r = region_member(o, true, reply, ret_error)) < 0 ||
	    (r = string_member(o, "source", false, PATH_MAX, &reply->show.source, ret_error)) < 0 ||
	    (r = string_member(o, "error", false, 64, &reply->show.error, ret_error)) < 0 ||
	    (r = string_member(o, "pending_source", false, PATH_MAX, &reply->show.pending_source,
			       ret_error)) < 0 ||
	    (r = member(o, "grants", JSON_ARRAY, false, &grants, ret_error)) < 0)
		return r;
	reply->show.has_grants = grants != NULL;
	return objects_member(o, "grants", false, sizeof(*reply->show.grants), grant_from_json,
			      (void **)&reply->show.grants, &reply->show.n_grants, ret_error);
}

/* reload and destroy: what was done. */
static int encode_message_reply(json_t *o, const struct proto_reply *reply)
{
	return set_string(o, "message", reply->message);
}

static int decode_message_reply(json_t *o, struct proto_reply *reply, char **ret_error)
{
	return string_member(o, "message", false, MSHARE_PROTOCOL_MAX_MESSAGE, &reply->message, ret_error);
}

static int encode_register_reply(json_t *o, const struct proto_reply *reply)
{
	/* The daemon registers 1 or more; a decoded reply may have none. */
	if (reply->reg.n_regions == 0)
		return 0;
	return set_region_requests(o, "regions", reply->reg.regions, reply->reg.n_regions);
}

static int decode_register_reply(json_t *o, struct proto_reply *reply, char **ret_error)
{
	return region_requests_member(o, false, &reply->reg.regions, &reply->reg.n_regions, ret_error);
}

static int encode_containers_reply(json_t *o, const struct proto_reply *reply)
{
	return set_array(o, "containers", reply->containers.containers, reply->containers.n_containers,
			 sizeof(*reply->containers.containers), container_info_to_json);
}

static int decode_containers_reply(json_t *o, struct proto_reply *reply, char **ret_error)
{
	return objects_member(o, "containers", true, sizeof(*reply->containers.containers),
			      container_info_from_json, (void **)&reply->containers.containers,
			      &reply->containers.n_containers, ret_error);
}

static int encode_destroy_reply(json_t *o, const struct proto_reply *reply)
{
	int r = encode_message_reply(o, reply);

	if (r == 0 && reply->has_region)
		r = set_encoded(o, "region", &reply->region, region_info_to_json);
	return r;
}

static int decode_destroy_reply(json_t *o, struct proto_reply *reply, char **ret_error)
{
	int r = decode_message_reply(o, reply, ret_error);

	return r < 0 ? r : region_member(o, false, reply, ret_error);
}

/* unregister's reply is "ok" and nothing else. */
static const struct {
	int (*encode)(json_t *o, const struct proto_reply *reply);
	int (*decode)(json_t *o, struct proto_reply *reply, char **ret_error);
} reply_kinds[_PROTO_OP_MAX] = {
	[PROTO_OP_HELLO] = { encode_hello_reply, decode_hello_reply },
	[PROTO_OP_GET] = { encode_get_reply, decode_get_reply },
	[PROTO_OP_LIST] = { encode_list_reply, decode_list_reply },
	[PROTO_OP_SHOW] = { encode_show_reply, decode_show_reply },
	[PROTO_OP_RELOAD] = { encode_message_reply, decode_message_reply },
	[PROTO_OP_REGISTER] = { encode_register_reply, decode_register_reply },
	[PROTO_OP_CONTAINERS] = { encode_containers_reply, decode_containers_reply },
	[PROTO_OP_DESTROY] = { encode_destroy_reply, decode_destroy_reply },
};

static int encode_error(json_t *o, const struct proto_reply *reply)
{
	int r;

	r = set_text(o, "errno", errno_to_name(reply->error));
	if (r < 0)
		return r;
	r = set_text(o, "message", strempty(reply->message));
	/* A region name cannot be other than UTF-8, but a message quoting
	 * a peer's string can: the error must get through all the same. */
	if (r == -EILSEQ)
		r = set_text(o, "message", "(message not valid UTF-8)");
	return r;
}

/* The envelope, and the members of the reply kind (NULL: none). */
static int reply_encode(const struct proto_reply *reply,
			int (*encode)(json_t *o, const struct proto_reply *reply), char **ret, size_t *ret_len)
{
	_cleanup_(json_decrefp) json_t *o = new_object();
	int r;

	if (!o)
		return -ENOMEM;
	if ((r = set_integer(o, "version", MSHARE_PROTOCOL_VERSION)) < 0 ||
	    (r = set_text(o, "status", reply->error ? "error" : "ok")) < 0 ||
	    (r = reply->error ? encode_error(o, reply) : encode ? encode(o, reply) : 0) < 0)
		return r;
	return dump(o, ret, ret_len);
}

int proto_reply_encode(enum proto_op op, const struct proto_reply *reply, char **ret, size_t *ret_len)
{
	if (op >= _PROTO_OP_MAX)
		return -EINVAL;
	return reply_encode(reply, reply_kinds[op].encode, ret, ret_len);
}

int proto_error_encode(int error, const char *message, char **ret, size_t *ret_len)
{
	return reply_encode(&(struct proto_reply){ .error = error, .message = (char *)message }, NULL, ret,
			    ret_len);
}

static int decode_error(json_t *o, struct proto_reply *reply, char **ret_error)
{
	_cleanup_free_ char *name = NULL;
	int r;

	if ((r = string_member(o, "errno", true, 64, &name, ret_error)) < 0 ||
	    (r = string_member(o, "message", true, MSHARE_PROTOCOL_MAX_MESSAGE, &reply->message,
			       ret_error)) < 0)
		return r;
	/* A name this libc does not know still is an error. */
	reply->error = errno_from_name(name) ?: EPROTO;
	return 0;
}

int proto_reply_decode(enum proto_op op, const void *buf, size_t len, struct proto_reply *ret,
		       char **ret_error)
{
	_cleanup_(proto_reply_done) struct proto_reply reply = {};
	_cleanup_free_ char *status = NULL;
	int r;

	*ret_error = NULL;
	if (op >= _PROTO_OP_MAX)
		return -EINVAL;
	r = load_message(buf, len, &reply.object, ret_error);
	if (r < 0)
		return r;
	r = string_member(reply.object, "status", true, 16, &status, ret_error);
	if (r < 0)
		return r;
	if (streq(status, "error"))
		r = decode_error(reply.object, &reply, ret_error);
	else if (!streq(status, "ok"))
		return error_set(ret_error, -EBADMSG, "status \"%s\" is neither \"ok\" nor \"error\"", status);
	else if (reply_kinds[op].decode)
		r = reply_kinds[op].decode(reply.object, &reply, ret_error);
	if (r < 0)
		return r;
	*ret = reply;
	reply = (struct proto_reply){};
	return 0;
}
