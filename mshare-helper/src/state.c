/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <limits.h>

#include "state.h"

static void container_done(struct state_container *c)
{
	free(c->id);
	free(c->name);
	for (size_t i = 0; i < c->n_annotations; i++) {
		free((char *)c->annotations[i].key);
		free((char *)c->annotations[i].value);
	}
	free(c->annotations);
	for (size_t i = 0; i < c->n_regions; i++)
		free(c->regions[i].region);
	free(c->regions);
	free(c->cgroup);
	*c = (struct state_container){};
}

void state_done(struct state *s)
{
	for (size_t i = 0; i < s->n_regions; i++)
		region_config_done(&s->regions[i].config);
	free(s->regions);
	for (size_t i = 0; i < s->n_containers; i++)
		container_done(&s->containers[i]);
	free(s->containers);
	*s = (struct state){};
}

/* ---- encoding ---- */

static int set_new(json_t *o, const char *key, json_t *v)
{
	/* json_object_set_new() takes v even when it fails. */
	return v && json_object_set_new(o, key, v) == 0 ? 0 : -ENOMEM;
}

static json_t *config_json(const struct region_config *c)
{
	json_t *o = json_object();
	int r = 0;

	if (!o)
		return NULL;
	r |= set_new(o, "name", json_string(c->name));
	r |= set_new(o, "size", json_integer((json_int_t)c->size));
	r |= set_new(o, "backing", json_string(backing_to_string(c->backing)));
	if (c->path)
		r |= set_new(o, "path", json_string(c->path));
	r |= set_new(o, "offset", json_integer((json_int_t)c->offset));
	r |= set_new(o, "huge_page_size", json_integer((json_int_t)c->huge_page_size));
	r |= set_new(o, "protection", json_string(prot_to_string(c->prot)));
	r |= set_new(o, "populate", json_boolean(c->populate));
	if (c->source)
		r |= set_new(o, "source", json_string(c->source));
	if (r < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *container_json(const struct state_container *c)
{
	json_t *o = json_object(), *a = json_object(), *regions = json_array();
	int r = 0;

	if (!o || !a || !regions) {
		json_decref(o);
		json_decref(a);
		json_decref(regions);
		return NULL;
	}
	r |= set_new(o, "annotations", a);
	r |= set_new(o, "regions", regions);
	r |= set_new(o, "serial", json_integer((json_int_t)c->serial));
	r |= set_new(o, "id", json_string(c->id));
	if (c->name)
		r |= set_new(o, "name", json_string(c->name));
	for (size_t i = 0; r == 0 && i < c->n_annotations; i++)
		r |= set_new(a, c->annotations[i].key, json_string(c->annotations[i].value));
	for (size_t i = 0; r == 0 && i < c->n_regions; i++)
		if (json_array_append_new(regions, json_pack("{s:s, s:s}", "region", c->regions[i].region,
							     "mode", access_mode_to_string(c->regions[i].mode))) < 0)
			r = -ENOMEM;
	r |= set_new(o, "pid", json_integer(c->pid));
	r |= set_new(o, "cgroup", json_string(c->cgroup));
	if (r < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int state_to_json(const struct state *s, char **ret, size_t *ret_len)
{
	_cleanup_(json_decrefp) json_t *o = json_object();
	json_t *regions = json_array(), *containers = json_array();
	char *text;
	int r = 0;

	if (!o || !regions || !containers) {
		json_decref(regions);
		json_decref(containers);
		return -ENOMEM;
	}
	r |= set_new(o, "regions", regions);
	r |= set_new(o, "containers", containers);
	r |= set_new(o, "version", json_integer(STATE_VERSION));
	r |= set_new(o, "generation", json_integer((json_int_t)s->generation));
	r |= set_new(o, "next_serial", json_integer((json_int_t)s->next_serial));
	for (size_t i = 0; r == 0 && i < s->n_regions; i++) {
		const struct state_region *sr = &s->regions[i];
		json_t *e = json_object();

		if (!e || json_array_append_new(regions, e) < 0)
			return -ENOMEM;
		r |= set_new(e, "inode", json_integer((json_int_t)sr->inode));
		r |= set_new(e, "populated", json_boolean(sr->populated));
		r |= set_new(e, "config", config_json(&sr->config));
	}
	for (size_t i = 0; r == 0 && i < s->n_containers; i++)
		if (json_array_append_new(containers, container_json(&s->containers[i])) < 0)
			r = -ENOMEM;
	if (r < 0)
		return -ENOMEM;
	/* Not the protocol's encoder: the state is no message and may be
	 * longer. */
	text = json_dumps(o, JSON_COMPACT);
	if (!text)
		return -ENOMEM;
	*ret = text;
	*ret_len = strlen(text);
	return 0;
}

/* ---- decoding ---- */

/* Member key of o as type, NULL if absent and optional. */
static int get(json_t *o, const char *key, json_type type, bool required, json_t **ret,
	       char **ret_error)
{
	json_t *v = json_object_get(o, key);

	*ret = NULL;
	if (!v)
		return required ? error_set(ret_error, -EBADMSG, "member \"%s\" is missing", key) : 0;
	if (json_typeof(v) != type && !(type == JSON_TRUE && json_is_boolean(v)))
		return error_set(ret_error, -EBADMSG, "member \"%s\" has the wrong type", key);
	*ret = v;
	return 0;
}

static int get_u64(json_t *o, const char *key, bool required, uint64_t min, uint64_t *ret,
		   char **ret_error)
{
	json_t *v;
	int r = get(o, key, JSON_INTEGER, required, &v, ret_error);

	if (r < 0 || !v)
		return r;
	if (json_integer_value(v) < 0 || (uint64_t)json_integer_value(v) < min)
		return error_set(ret_error, -EBADMSG, "member \"%s\" is out of range", key);
	*ret = (uint64_t)json_integer_value(v);
	return 0;
}

static int get_string(json_t *o, const char *key, bool required, char **ret, char **ret_error)
{
	json_t *v;
	int r = get(o, key, JSON_STRING, required, &v, ret_error);

	if (r < 0 || !v)
		return r;
	*ret = strdup(json_string_value(v));
	return *ret ? 0 : -ENOMEM;
}

static int get_bool(json_t *o, const char *key, bool *ret, char **ret_error)
{
	json_t *v;
	int r = get(o, key, JSON_TRUE, true, &v, ret_error);

	if (r < 0)
		return r;
	*ret = json_is_true(v);
	return 0;
}

static int config_from_json(json_t *o, struct region_config *c, char **ret_error)
{
	_cleanup_free_ char *backing = NULL, *prot = NULL;
	int r;

	if (!json_is_object(o))
		return error_set(ret_error, -EBADMSG, "a region's \"config\" is not an object");
	if ((r = get_string(o, "name", true, &c->name, ret_error)) < 0 ||
	    (r = get_u64(o, "size", true, 1, &c->size, ret_error)) < 0 ||
	    (r = get_string(o, "backing", true, &backing, ret_error)) < 0 ||
	    (r = get_string(o, "path", false, &c->path, ret_error)) < 0 ||
	    (r = get_u64(o, "offset", false, 0, &c->offset, ret_error)) < 0 ||
	    (r = get_u64(o, "huge_page_size", false, 0, &c->huge_page_size, ret_error)) < 0 ||
	    (r = get_string(o, "protection", true, &prot, ret_error)) < 0 ||
	    (r = get_bool(o, "populate", &c->populate, ret_error)) < 0 ||
	    (r = get_string(o, "source", false, &c->source, ret_error)) < 0)
		return r;
	if (!region_name_is_valid(c->name))
		return error_set(ret_error, -EBADMSG, "\"%s\" is not a valid region name", c->name);
	r = backing_from_string(backing);
	if (r < 0)
		return error_set(ret_error, -EBADMSG, "region '%s': unknown backing \"%s\"", c->name, backing);
	c->backing = (enum region_backing)r;
	if ((c->backing == BACKING_FILE) != !!c->path)
		return error_set(ret_error, -EBADMSG, "region '%s': \"path\" goes with backing \"file\" only",
				 c->name);
	r = prot_from_string(prot);
	if (r < 0)
		return error_set(ret_error, -EBADMSG, "region '%s': unknown protection \"%s\"", c->name, prot);
	c->prot = r;
	return 0;
}

static int region_from_json(json_t *o, struct state_region *sr, char **ret_error)
{
	json_t *config;
	int r;

	if (!json_is_object(o))
		return error_set(ret_error, -EBADMSG, "a region is not an object");
	if ((r = get_u64(o, "inode", true, 1, &sr->inode, ret_error)) < 0 ||
	    (r = get_bool(o, "populated", &sr->populated, ret_error)) < 0 ||
	    (r = get(o, "config", JSON_OBJECT, true, &config, ret_error)) < 0)
		return r;
	return config_from_json(config, &sr->config, ret_error);
}

static int container_from_json(json_t *o, struct state_container *c, char **ret_error)
{
	json_t *annotations, *regions, *v;
	const char *key;
	uint64_t pid = 0;
	size_t i;
	int r;

	if (!json_is_object(o))
		return error_set(ret_error, -EBADMSG, "a container is not an object");
	if ((r = get_u64(o, "serial", true, 0, &c->serial, ret_error)) < 0 ||
	    (r = get_string(o, "id", true, &c->id, ret_error)) < 0 ||
	    (r = get_string(o, "name", false, &c->name, ret_error)) < 0 ||
	    (r = get(o, "annotations", JSON_OBJECT, false, &annotations, ret_error)) < 0 ||
	    (r = get(o, "regions", JSON_ARRAY, true, &regions, ret_error)) < 0 ||
	    (r = get_u64(o, "pid", true, 1, &pid, ret_error)) < 0 ||
	    (r = get_string(o, "cgroup", true, &c->cgroup, ret_error)) < 0)
		return r;
	if (!*c->id)
		return error_set(ret_error, -EBADMSG, "a container has an empty \"id\"");
	if (pid > INT_MAX)
		return error_set(ret_error, -EBADMSG, "container %s: \"pid\" is out of range", c->id);
	c->pid = (pid_t)pid;
	if (c->cgroup[0] != '/')
		return error_set(ret_error, -EBADMSG, "container %s: \"cgroup\" is not a path", c->id);

	c->annotations = calloc(json_object_size(annotations) ?: 1, sizeof(*c->annotations));
	if (!c->annotations)
		return -ENOMEM;
	json_object_foreach(annotations, key, v) {
		struct container_annotation *a = &c->annotations[c->n_annotations];

		if (!json_is_string(v))
			return error_set(ret_error, -EBADMSG, "container %s: annotation \"%s\" is not a string",
					 c->id, key);
		a->key = strdup(key);
		a->value = strdup(json_string_value(v));
		c->n_annotations++;
		if (!a->key || !a->value)
			return -ENOMEM;
	}

	if (json_array_size(regions) == 0)
		return error_set(ret_error, -EBADMSG, "container %s has no regions", c->id);
	c->regions = calloc(json_array_size(regions), sizeof(*c->regions));
	if (!c->regions)
		return -ENOMEM;
	json_array_foreach(regions, i, v) {
		struct proto_region_request *rr = &c->regions[i];
		_cleanup_free_ char *mode = NULL;

		if (!json_is_object(v))
			return error_set(ret_error, -EBADMSG, "container %s: a region is not an object", c->id);
		c->n_regions++;
		if ((r = get_string(v, "region", true, &rr->region, ret_error)) < 0 ||
		    (r = get_string(v, "mode", true, &mode, ret_error)) < 0)
			return r;
		r = access_mode_from_string(mode);
		if (!region_name_is_valid(rr->region) || r < 0)
			return error_set(ret_error, -EBADMSG, "container %s: bad region \"%s\" or mode \"%s\"",
					 c->id, rr->region, mode);
		rr->mode = (enum access_mode)r;
	}
	return 0;
}

int state_from_json(const char *text, size_t len, struct state *ret, char **ret_error)
{
	_cleanup_(json_decrefp) json_t *o = NULL;
	_cleanup_(state_done) struct state s = {};
	json_t *regions, *containers, *v;
	json_error_t jerr;
	uint64_t version = 0;
	size_t i;
	int r;

	*ret_error = NULL;
	o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!o)
		return error_set(ret_error, -EBADMSG, "not valid JSON: %s (at byte %d)", jerr.text,
				 jerr.position);
	if (!json_is_object(o))
		return error_set(ret_error, -EBADMSG, "not a JSON object");
	r = get_u64(o, "version", true, 1, &version, ret_error);
	if (r < 0)
		return r;
	if (version != STATE_VERSION)
		return error_set(ret_error, -EPROTONOSUPPORT, "state version %" PRIu64 " (this daemon reads %d)",
				 version, STATE_VERSION);
	if ((r = get_u64(o, "generation", true, 1, &s.generation, ret_error)) < 0 ||
	    (r = get_u64(o, "next_serial", true, 0, &s.next_serial, ret_error)) < 0 ||
	    (r = get(o, "regions", JSON_ARRAY, true, &regions, ret_error)) < 0 ||
	    (r = get(o, "containers", JSON_ARRAY, true, &containers, ret_error)) < 0)
		return r;

	s.regions = calloc(json_array_size(regions) ?: 1, sizeof(*s.regions));
	s.containers = calloc(json_array_size(containers) ?: 1, sizeof(*s.containers));
	if (!s.regions || !s.containers)
		return -ENOMEM;
	json_array_foreach(regions, i, v) {
		s.n_regions++;
		r = region_from_json(v, &s.regions[i], ret_error);
		if (r < 0)
			return r;
		for (size_t j = 0; j < i; j++)
			if (streq(s.regions[j].config.name, s.regions[i].config.name) ||
			    s.regions[j].inode == s.regions[i].inode)
				return error_set(ret_error, -EBADMSG, "region '%s' or its inode is there twice",
						 s.regions[i].config.name);
	}
	json_array_foreach(containers, i, v) {
		s.n_containers++;
		r = container_from_json(v, &s.containers[i], ret_error);
		if (r < 0)
			return r;
		if (s.containers[i].serial >= s.next_serial)
			return error_set(ret_error, -EBADMSG, "container %s: serial %" PRIu64 " is not below next_serial",
					 s.containers[i].id, s.containers[i].serial);
		for (size_t j = 0; j < i; j++)
			if (s.containers[j].serial == s.containers[i].serial ||
			    streq(s.containers[j].id, s.containers[i].id))
				return error_set(ret_error, -EBADMSG, "container %s or its serial is there twice",
						 s.containers[i].id);
	}
	*ret = s;
	s = (struct state){};
	return 0;
}
