/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "mshare-common/macro.h"
#include "mshare-common/strprintf.h"
#include "mshare-common/strv.h"
#include "oci.h"

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
	for (size_t i = 0; i < c->n_mounts; i++) {
		free(c->mounts[i].destination);
		strv_free(c->mounts[i].options);
	}
	free(c->mounts);
	strv_free(c->readonly_paths);
	json_decref(c->annotations);
	*c = (struct oci_config){};
}

/*
 * A mount's destination as an absolute path without empty or "."
 * components or a trailing slash. ".." stays: the runtime resolves it in
 * the root file system, which this cannot; such a destination is never the
 * channel's path or a prefix of it, which has no "..".
 */
static char *destination_normalize(const char *dest)
{
	char *out = malloc(strlen(dest) + 2), *o = out;

	if (!out)
		return NULL;
	for (const char *p = dest + strspn(dest, "/"); *p; p += strspn(p, "/")) {
		size_t n = strcspn(p, "/");

		if (n != 1 || p[0] != '.') {
			*o++ = '/';
			memcpy(o, p, n);
			o += n;
		}
		p += n;
	}
	if (o == out)
		*o++ = '/';
	*o = '\0';
	return out;
}

static bool path_has_dotdot(const char *path)
{
	for (const char *p = path + strspn(path, "/"); *p; p += strspn(p, "/")) {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.')
			return true;
		p += n;
	}
	return false;
}

/* Whether prefix is path or above it, component by component (both normalized). */
static bool path_is_prefix(const char *prefix, const char *path)
{
	size_t n = strlen(prefix);

	if (streq(prefix, "/"))
		return true;
	return strncmp(prefix, path, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* An array of strings, or absent: *ret gets them (destinations normalized) or NULL. */
static int strings_member(json_t *a, const char *what, bool destinations, char ***ret,
			  char **ret_error)
{
	_cleanup_strv_free_ char **l = NULL;
	size_t i;
	json_t *v;

	*ret = NULL;
	if (!a || json_is_null(a))
		return 0;
	if (!json_is_array(a))
		return error_set(ret_error, -EBADMSG, "config.json: %s is not an array", what);
	json_array_foreach(a, i, v) {
		const char *s = json_string_value(v);
		_cleanup_free_ char *d = NULL;

		if (!s || strlen(s) != json_string_length(v) || (destinations && !*s))
			return error_set(ret_error, -EBADMSG,
					 "config.json: %s[%zu] is not a%s string", what, i,
					 destinations ? " path" : "");
		d = destinations ? destination_normalize(s) : strdup(s);
		if (!d || strv_extend(&l, d) < 0)
			return -ENOMEM;
	}
	*ret = TAKE_PTR(l);
	return 0;
}

static int mounts_member(json_t *o, struct oci_config *c, char **ret_error)
{
	json_t *a = json_object_get(o, "mounts"), *m;
	size_t i;

	if (!a || json_is_null(a))
		return 0;
	if (!json_is_array(a))
		return error_set(ret_error, -EBADMSG, "config.json: \"mounts\" is not an array");
	c->mounts = calloc(json_array_size(a) ?: 1, sizeof(*c->mounts));
	if (!c->mounts)
		return -ENOMEM;
	json_array_foreach(a, i, m) {
		struct oci_mount *mount = &c->mounts[c->n_mounts++];
		json_t *dest = json_object_get(m, "destination");
		_cleanup_free_ char *what = NULL;
		int r;

		if (!json_string_value(dest) || !*json_string_value(dest) ||
		    strlen(json_string_value(dest)) != json_string_length(dest))
			return error_set(ret_error, -EBADMSG,
					 "config.json: mounts[%zu] has no \"destination\"", i);
		mount->destination = destination_normalize(json_string_value(dest));
		what = strprintf("mounts[%zu].options", i);
		if (!mount->destination || !what)
			return -ENOMEM;
		r = strings_member(json_object_get(m, "options"), what, false, &mount->options,
				   ret_error);
		if (r < 0)
			return r;
	}
	return 0;
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
	json_t *o = NULL, *root, *v;
	const char *path;
	int r;

	*ret_error = NULL;
	r = load(buf, len, "config.json", &o, ret_error);
	if (r < 0)
		return r;
	root = json_object_get(o, "root");
	path = json_string_value(json_object_get(root, "path"));
	if (!path || !*path) {
		r = error_set(ret_error, -EBADMSG, "config.json has no \"root\": {\"path\"}");
		goto out;
	}
	/* The runtime's own path: nothing in it may climb out of the bundle or
	 * elsewhere, nor make the root differ from what the runtime mounts. */
	if (path_has_dotdot(path)) {
		r = error_set(ret_error, -EINVAL,
			      "config.json's root.path \"%s\" has a '..' component", path);
		goto out;
	}
	v = json_object_get(root, "readonly");
	if (v && !json_is_null(v) && !json_is_boolean(v)) {
		r = error_set(ret_error, -EBADMSG, "config.json: root.readonly is not a boolean");
		goto out;
	}
	c.root_readonly = json_is_true(v);
	if (path[0] == '/')
		c.root_path = strdup(path);
	else
		c.root_path = strprintf("%s/%s", bundle, path);
	if (!c.root_path) {
		r = -ENOMEM;
		goto out;
	}
	r = mounts_member(o, &c, ret_error);
	if (r < 0)
		goto out;
	r = strings_member(json_object_get(json_object_get(o, "linux"), "readonlyPaths"),
			   "linux.readonlyPaths", true, &c.readonly_paths, ret_error);
	if (r < 0)
		goto out;
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

const char *oci_mount_readonly(const struct oci_mount *m)
{
	for (size_t i = 0; m->options && m->options[i]; i++)
		if (streq(m->options[i], "ro") || streq(m->options[i], "rro"))
			return m->options[i];
	return NULL;
}

const struct oci_mount *oci_config_mount_at(const struct oci_config *c, const char *path)
{
	for (size_t i = c->n_mounts; i > 0; i--)
		if (streq(c->mounts[i - 1].destination, path))
			return &c->mounts[i - 1];
	return NULL;
}

struct oci_readonly oci_config_readonly(const struct oci_config *c, const char *path)
{
	const struct oci_mount *cover = NULL, *rro = NULL;

	for (size_t i = 0; i < c->n_mounts; i++) {
		const struct oci_mount *m = &c->mounts[i];
		const char *option = oci_mount_readonly(m);

		if (!path_is_prefix(m->destination, path))
			continue;
		/* Prefixes of one path: the longer, the deeper. */
		if (!cover || strlen(m->destination) >= strlen(cover->destination))
			cover = m;
		if (option && streq(option, "rro") && !rro)
			rro = m;
	}
	if (cover && oci_mount_readonly(cover))
		return (struct oci_readonly){ OCI_READONLY_MOUNT, cover->destination,
					      oci_mount_readonly(cover) };
	if (rro)
		return (struct oci_readonly){ OCI_READONLY_MOUNT, rro->destination, "rro" };
	for (size_t i = 0; c->readonly_paths && c->readonly_paths[i]; i++) {
		const char *ro = c->readonly_paths[i];

		if (path_is_prefix(ro, path))
			return (struct oci_readonly){ OCI_READONLY_PATH, ro, NULL };
	}
	if (!cover && c->root_readonly)
		return (struct oci_readonly){ OCI_READONLY_ROOT, "/", NULL };
	return (struct oci_readonly){ OCI_WRITABLE, NULL, NULL };
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
