/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The OCI runtime's input to a hook: the container's state on standard input
 * (runtime-spec "State") and the bundle's config.json. Parsing only (jansson);
 * unit-tested on the host.
 */

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

/* Bounds on what we are willing to read. */
#define OCI_STATE_MAX (1024 * 1024)
#define OCI_CONFIG_MAX (16 * 1024 * 1024)
#define OCI_ID_MAX 1024

struct oci_state {
	char *id;
	pid_t pid;		/* 0 where the runtime gives none (poststop) */
	char *bundle;		/* absolute */
	char *status;		/* "creating", "created", "running", "stopped", or NULL */
	json_t *annotations;	/* an object of strings; NULL if the state has none */
};

void oci_state_done(struct oci_state *s);

/*
 * Parses the state. id (non-empty, at most OCI_ID_MAX bytes) and bundle
 * (absolute) are required; pid, if present, is a non-negative integer;
 * status, if present, a string; annotations, if present, an object of
 * strings. Duplicate members are an
 * error. Returns 0, or -EBADMSG with *ret_error (NULL on -ENOMEM).
 */
int oci_state_parse(const char *buf, size_t len, struct oci_state *ret, char **ret_error);

/*
 * A mount of config.json. The runtime makes them all before it runs the
 * createRuntime hooks, but makes the read-only ones read-only only after
 * them (and root.readonly, and linux.readonlyPaths): what the container
 * will be able to write is known from config.json, not from the mounts.
 */
struct oci_mount {
	char *destination;	/* absolute, without empty or "." components or a trailing slash */
	char **options;		/* NULL-terminated; NULL if there are none */
};

struct oci_config {
	char *root_path;	/* root.path, made absolute against the bundle */
	bool root_readonly;	/* root.readonly */
	struct oci_mount *mounts;	/* in config.json's order, which is the order of mounting */
	size_t n_mounts;
	char **readonly_paths;	/* linux.readonlyPaths, as the destinations; NULL if none */
	json_t *annotations;	/* an object of strings, or NULL */
};

void oci_config_done(struct oci_config *c);

/*
 * Parses config.json text of the bundle at bundle (absolute): root.path
 * (required, without a ".." component: -EINVAL), root.readonly, the mounts'
 * destinations and options, linux.readonlyPaths and the annotations.
 * Returns 0, or -EBADMSG or -EINVAL with *ret_error (NULL on -ENOMEM).
 */
int oci_config_parse(const char *buf, size_t len, const char *bundle, struct oci_config *ret,
		     char **ret_error);

/* Reads and parses bundle/config.json; -errno or -EBADMSG with *ret_error. */
int oci_config_load(const char *bundle, struct oci_config *ret, char **ret_error);

/*
 * The mount option that makes m read-only, "ro" or "rro" (recursively), or
 * NULL. Any such option counts, even if a later "rw" would undo it.
 */
const char *oci_mount_readonly(const struct oci_mount *m);

/*
 * The mount whose destination is path (absolute, without empty, "." or ".."
 * components), the last one listed if several are (it is mounted on top),
 * or NULL.
 */
const struct oci_mount *oci_config_mount_at(const struct oci_config *c, const char *path);

/*
 * Why the container cannot write in directory path (as oci_config_mount_at()
 * takes it) once its runtime has finished, from config.json alone. path is
 * on the deepest mount whose destination is path or a prefix of it
 * (component-wise; the last one listed of equal depth), or on the root file
 * system. It is read-only if that is: "ro" among the mount's options, or
 * root.readonly; or if an "rro" mount is above it, or an entry of
 * linux.readonlyPaths is path or above it. what is the mount's destination
 * or the readonlyPaths entry, option the mount's option.
 */
struct oci_readonly {
	enum {
		OCI_WRITABLE,
		OCI_READONLY_ROOT,
		OCI_READONLY_MOUNT,
		OCI_READONLY_PATH,
	} kind;
	const char *what;
	const char *option;
};

struct oci_readonly oci_config_readonly(const struct oci_config *c, const char *path);

/* The value of annotation key, or NULL. */
const char *oci_annotation(json_t *annotations, const char *key);

/*
 * The container's name as its engine tells it in an annotation (CRI-O,
 * containerd; see oci.c), or NULL.
 */
const char *oci_container_name(json_t *annotations);

/*
 * Whether the container is a Kubernetes pod's sandbox (its "pause"
 * container), which CRI-O and containerd mark with an annotation and which
 * gets the pod's annotations too, but never runs a workload.
 */
bool oci_is_sandbox(json_t *annotations);

/* The annotations as "KEY=VALUE" strings, NULL-terminated; NULL on ENOMEM. */
char **oci_annotations_strv(json_t *annotations);
