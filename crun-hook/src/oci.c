/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "oci.h"
#include "util.h"

/*
 * Annotations in which engines name their containers, in the order tried:
 * CRI-O's full name (k8s_CONTAINER_POD_NAMESPACE_UID_ATTEMPT), containerd's
 * container name within its pod. podman 4.3 puts no name among a
 * container's annotations, and plain crun has none: the daemon is then told
 * the id only.
 */
static const char *const name_annotations[] = {
	"io.kubernetes.cri-o.Name",
	"io.kubernetes.cri.container-name",
};

/* Annotations that say "this is a pod sandbox": CRI-O's, containerd's. */
static const char *const sandbox_annotations[] = {
	"io.kubernetes.cri-o.ContainerType",
	"io.kubernetes.cri.container-type",
};

void oci_state_done(struct oci_state *s)
{
	free(s->id);
	free(s->bundle);
	free(s->status);
	json_decref(s->annotations);
	*s = (struct oci_state){};
}

void oci_config_done(struct oci_config *c)
{
	free(c->root_path);
	json_decref(c->annotations);
	*c = (struct oci_config){};
}

static int load(const char *buf, size_t len, const char *what, json_t **ret, char **ret_error)
{
	json_error_t e;
	json_t *o = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &e);

	if (!o)
		return error_set(ret_error, -EBADMSG, "%s is not JSON: line %d: %s", what, e.line, e.text);
	if (!json_is_object(o)) {
		json_decref(o);
		return error_set(ret_error, -EBADMSG, "%s is not a JSON object", what);
	}
	*ret = o;
	return 0;
}

/* An object of strings, or absent: *ret gets a new reference or NULL. */
static int annotations_member(json_t *o, const char *what, json_t **ret, char **ret_error)
{
	json_t *a = json_object_get(o, "annotations"), *v;
	const char *key;

	*ret = NULL;
	if (!a || json_is_null(a))
		return 0;
	if (!json_is_object(a))
		return error_set(ret_error, -EBADMSG, "%s: \"annotations\" is not an object", what);
	json_object_foreach(a, key, v)
		if (!json_is_string(v))
			return error_set(ret_error, -EBADMSG, "%s: annotation \"%s\" is not a string", what, key);
	*ret = json_incref(a);
	return 0;
}

int oci_state_parse(const char *buf, size_t len, struct oci_state *ret, char **ret_error)
{
	_cleanup_(oci_state_done) struct oci_state s = {};
	json_t *o = NULL, *v;
	const char *str;
	int r;

	*ret_error = NULL;
	r = load(buf, len, "the container state", &o, ret_error);
	if (r < 0)
		return r;

	v = json_object_get(o, "id");
	str = json_string_value(v);
	if (!str || !*str || strlen(str) > OCI_ID_MAX || strlen(str) != json_string_length(v)) {
		r = error_set(ret_error, -EBADMSG,
			      "the container state has no usable \"id\" (a string of 1 to %d bytes)",
			      OCI_ID_MAX);
		goto out;
	}
	s.id = strdup(str);

	v = json_object_get(o, "pid");
	if (v && !(json_is_integer(v) && json_integer_value(v) >= 0 &&
		   json_integer_value(v) <= INT32_MAX)) {
		r = error_set(ret_error, -EBADMSG, "the container state's \"pid\" is not a process id");
		goto out;
	}
	s.pid = v ? (pid_t)json_integer_value(v) : 0;

	str = json_string_value(json_object_get(o, "bundle"));
	if (!str || str[0] != '/') {
		r = error_set(ret_error, -EBADMSG, "the container state has no \"bundle\" (an absolute path)");
		goto out;
	}
	s.bundle = strdup(str);
	v = json_object_get(o, "status");
	if (v && !json_is_string(v)) {
		r = error_set(ret_error, -EBADMSG, "the container state's \"status\" is not a string");
		goto out;
	}
	s.status = v ? strdup(json_string_value(v)) : NULL;
	if (!s.id || !s.bundle || (v && !s.status)) {
		r = -ENOMEM;
		goto out;
	}
	r = annotations_member(o, "the container state", &s.annotations, ret_error);
	if (r < 0)
		goto out;
	*ret = s;
	s = (struct oci_state){};
out:
	json_decref(o);
	return r;
}

int oci_config_parse(const char *buf, size_t len, const char *bundle, struct oci_config *ret,
		     char **ret_error)
{
	_cleanup_(oci_config_done) struct oci_config c = {};
	json_t *o = NULL;
	const char *path;
	int r;

	*ret_error = NULL;
	r = load(buf, len, "config.json", &o, ret_error);
	if (r < 0)
		return r;
	path = json_string_value(json_object_get(json_object_get(o, "root"), "path"));
	if (!path || !*path) {
		r = error_set(ret_error, -EBADMSG, "config.json has no \"root\": {\"path\"}");
		goto out;
	}
	if (path[0] == '/')
		c.root_path = strdup(path);
	else
		c.root_path = strprintf("%s/%s", bundle, path);
	if (!c.root_path) {
		r = -ENOMEM;
		goto out;
	}
	r = annotations_member(o, "config.json", &c.annotations, ret_error);
	if (r < 0)
		goto out;
	*ret = c;
	c = (struct oci_config){};
out:
	json_decref(o);
	return r;
}

int oci_config_load(const char *bundle, struct oci_config *ret, char **ret_error)
{
	_cleanup_free_ char *path = strprintf("%s/config.json", bundle), *buf = NULL;
	_cleanup_close_ int fd = -1;
	struct stat st;
	size_t len = 0;

	*ret_error = NULL;
	if (!path)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 || fstat(fd, &st) < 0) {
		int r = negative_errno();

		*ret_error = strprintf("cannot read %s: %s", path, strerror(-r));
		return r;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > OCI_CONFIG_MAX)
		return error_set(ret_error, -EBADMSG, "%s is not a regular file of at most %d bytes",
				 path, OCI_CONFIG_MAX);
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return -ENOMEM;
	while (len <= (size_t)st.st_size) {
		ssize_t n = read(fd, buf + len, (size_t)st.st_size + 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int r = negative_errno();

			*ret_error = strprintf("cannot read %s: %s", path, strerror(-r));
			return r;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > (size_t)st.st_size)
		return error_set(ret_error, -EBADMSG, "%s grew while it was read", path);
	return oci_config_parse(buf, len, bundle, ret, ret_error);
}

const char *oci_annotation(json_t *annotations, const char *key)
{
	return json_string_value(json_object_get(annotations, key));
}

const char *oci_container_name(json_t *annotations)
{
	for (size_t i = 0; i < ARRAY_SIZE(name_annotations); i++) {
		const char *v = oci_annotation(annotations, name_annotations[i]);

		if (v && *v)
			return v;
	}
	return NULL;
}

bool oci_is_sandbox(json_t *annotations)
{
	for (size_t i = 0; i < ARRAY_SIZE(sandbox_annotations); i++) {
		const char *v = oci_annotation(annotations, sandbox_annotations[i]);

		if (v && streq(v, "sandbox"))
			return true;
	}
	return false;
}

char **oci_annotations_strv(json_t *annotations)
{
	_cleanup_strv_free_ char **l = calloc(1, sizeof(char *));
	const char *key;
	json_t *v;

	if (!l)
		return NULL;
	json_object_foreach(annotations, key, v) {
		/* "KEY=VALUE" cannot carry a key with '=' (none is valid in OCI). */
		if (!*key || strchr(key, '='))
			continue;
		if (strv_extendf(&l, "%s=%s", key, json_string_value(v)) < 0)
			return NULL;
	}
	return TAKE_PTR(l);
}
