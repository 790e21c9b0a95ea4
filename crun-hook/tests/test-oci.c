/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The OCI state on standard input and the bundle's config.json. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "mshare-common/macro.h"
#include "mshare-common/strprintf.h"
#include "mshare-common/strv.h"
#include "mshare-common/tap.h"
#include "oci.h"

#define STATE_CRUN                                                                             \
	"{\"ociVersion\":\"1.0\",\"id\":\"e1\",\"pid\":181,\"root\":\"rootfs\",\"bundle\":\"/tmp/e1\"," \
	"\"status\":\"created\",\"annotations\":{\"run.oci.hooks.stderr\":\"/dev/stderr\","      \
	"\"io.mshare.regions\":\"pool\"}}"

static int parse_string(const char *json, struct oci_state *s, char **error)
{
	return oci_state_parse(json, strlen(json), s, error);
}

static void test_state_good(void)
{
	_cleanup_(oci_state_done) struct oci_state s = {};
	_cleanup_free_ char *error = NULL;
	_cleanup_strv_free_ char **strv = NULL;
	int r;

	r = oci_state_parse(STATE_CRUN, strlen(STATE_CRUN), &s, &error);
	ok(r == 0, "crun 1.8.1's createRuntime state parses (%s)", strna(error));
	ok(r == 0 && streq(s.id, "e1") && s.pid == 181 && streq(s.bundle, "/tmp/e1"),
	   "id e1, pid 181, bundle /tmp/e1");
	ok(r == 0 && streq(strna(oci_annotation(s.annotations, "io.mshare.regions")), "pool"),
	   "annotation io.mshare.regions=pool");
	ok(r == 0 && !oci_annotation(s.annotations, "io.mshare.socket"), "no io.mshare.socket");
	ok(r == 0 && !oci_container_name(s.annotations), "plain crun names no container");
	strv = r == 0 ? oci_annotations_strv(s.annotations) : NULL;
	ok(strv && strv_length(strv) == 2 && strv_contains(strv, "io.mshare.regions=pool") &&
	   strv_contains(strv, "run.oci.hooks.stderr=/dev/stderr"), "annotations as KEY=VALUE");
	oci_state_done(&s);

	/* poststop: pid 0, no annotations at all */
	r = parse_string("{\"id\":\"x\",\"pid\":0,\"bundle\":\"/b\",\"status\":\"stopped\"}", &s, &error);
	ok(r == 0 && s.pid == 0 && !s.annotations && streq(strna(s.status), "stopped"),
	   "a state with pid 0, status stopped and no annotations (%d)", r);
	oci_state_done(&s);
	r = parse_string("{\"id\":\"x\",\"bundle\":\"/b\",\"annotations\":null}", &s, &error);
	ok(r == 0 && s.pid == 0 && !s.annotations && !s.status, "no pid, no status, null annotations (%d %s)",
	   r, strna(error));
}

static void test_names(void)
{
	static const struct {
		const char *json, *name;
	} cases[] = {
		{ "{}", NULL },
		{ "{\"io.kubernetes.cri-o.Name\":\"k8s_db_web-1_prod_0f3c_0\","
		  "\"io.kubernetes.pod.name\":\"web-1\"}", "k8s_db_web-1_prod_0f3c_0" },
		{ "{\"io.kubernetes.cri.container-name\":\"db\","
		  "\"io.kubernetes.cri.sandbox-name\":\"web-1\"}", "db" },
		{ "{\"io.kubernetes.cri-o.Name\":\"\",\"io.kubernetes.cri.container-name\":\"db\"}", "db" },
		{ "{\"io.container.manager\":\"libpod\",\"io.podman.annotations.autoremove\":\"TRUE\"}", NULL },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		json_t *a = json_loads(cases[i].json, 0, NULL);
		const char *n = oci_container_name(a);

		ok(cases[i].name ? n && streq(n, cases[i].name) : !n, "name from %s: %s", cases[i].json,
		   strna(n));
		json_decref(a);
	}
}

static void test_sandbox(void)
{
	static const struct {
		const char *json;
		bool sandbox;
	} cases[] = {
		{ "{}", false },
		{ "{\"io.kubernetes.cri-o.ContainerType\":\"sandbox\"}", true },
		{ "{\"io.kubernetes.cri-o.ContainerType\":\"container\"}", false },
		{ "{\"io.kubernetes.cri.container-type\":\"sandbox\"}", true },
		{ "{\"io.kubernetes.cri.container-type\":\"container\"}", false },
		{ "{\"io.mshare.regions\":\"sandbox\"}", false },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		json_t *a = json_loads(cases[i].json, 0, NULL);

		ok(oci_is_sandbox(a) == cases[i].sandbox, "%s is %sa pod sandbox", cases[i].json,
		   cases[i].sandbox ? "" : "not ");
		json_decref(a);
	}
}

static void bad_state(const char *json, const char *want)
{
	_cleanup_(oci_state_done) struct oci_state s = {};
	_cleanup_free_ char *error = NULL;
	int r = oci_state_parse(json, strlen(json), &s, &error);

	ok(r == -EBADMSG && error && strstr(error, want) && !s.id, "state %s is refused: %s", json,
	   strna(error));
}

static void test_state_bad(void)
{
	char big_id[OCI_ID_MAX + 64];

	bad_state("", "is not JSON");
	bad_state("{", "is not JSON");
	bad_state("[]", "is not a JSON object");
	bad_state("\"id\"", "is not JSON"); /* jansson wants an array or object at the top */
	bad_state("{\"id\":\"a\",\"id\":\"b\",\"bundle\":\"/b\"}", "duplicate");
	bad_state("{\"bundle\":\"/b\",\"pid\":1}", "no usable \"id\"");
	bad_state("{\"id\":\"\",\"bundle\":\"/b\"}", "no usable \"id\"");
	bad_state("{\"id\":7,\"bundle\":\"/b\"}", "no usable \"id\"");
	bad_state("{\"id\":\"a\",\"bundle\":\"/b\",\"pid\":-1}", "is not a process id");
	bad_state("{\"id\":\"a\",\"bundle\":\"/b\",\"pid\":\"12\"}", "is not a process id");
	bad_state("{\"id\":\"a\",\"bundle\":\"/b\",\"pid\":1.5}", "is not a process id");
	bad_state("{\"id\":\"a\",\"bundle\":\"/b\",\"pid\":4294967296}", "is not a process id");
	bad_state("{\"id\":\"a\",\"pid\":1}", "no \"bundle\"");
	bad_state("{\"id\":\"a\",\"bundle\":\"/b\",\"status\":1}", "\"status\" is not a string");
	bad_state("{\"id\":\"a\",\"bundle\":\"rel/b\"}", "no \"bundle\"");
	bad_state("{\"id\":\"a\",\"bundle\":\"/b\",\"annotations\":[]}", "\"annotations\" is not an object");
	bad_state("{\"id\":\"a\",\"bundle\":\"/b\",\"annotations\":{\"k\":1}}", "annotation \"k\" is not a string");
	bad_state("{\"id\":\"a\\u0000b\",\"bundle\":\"/b\"}", "is not JSON");
	snprintf(big_id, sizeof(big_id), "{\"id\":\"%0*d\",\"bundle\":\"/b\"}", OCI_ID_MAX + 1, 0);
	bad_state(big_id, "no usable \"id\"");
}

static void test_config(void)
{
	_cleanup_(oci_config_done) struct oci_config c = {};
	_cleanup_free_ char *error = NULL;
	static const char rel[] = "{\"root\":{\"path\":\"rootfs\"},\"annotations\":{\"a\":\"b\"}}";
	static const char abs[] = "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"/var/lib/x/merged\",\"readonly\":true}}";
	static const struct {
		const char *json, *want;
	} bad[] = {
		{ "{}", "no \"root\"" },
		{ "{\"root\":{}}", "no \"root\"" },
		{ "{\"root\":{\"path\":\"\"}}", "no \"root\"" },
		{ "{\"root\":{\"path\":3}}", "no \"root\"" },
		{ "{\"root\":\"rootfs\"}", "no \"root\"" },
		{ "{\"root\":{\"path\":\"r\"},\"annotations\":{\"a\":null}}", "annotation \"a\" is not a string" },
		{ "{\"root\":{\"path\":\"r\"},\"root\":{\"path\":\"s\"}}", "duplicate" },
		{ "not json", "is not JSON" },
		{ "{\"root\":{\"path\":\"r\",\"readonly\":\"yes\"}}", "root.readonly is not a boolean" },
		{ "{\"root\":{\"path\":\"r\"},\"mounts\":{}}", "\"mounts\" is not an array" },
		{ "{\"root\":{\"path\":\"r\"},\"mounts\":[{\"type\":\"tmpfs\"}]}",
		  "mounts[0] has no \"destination\"" },
		{ "{\"root\":{\"path\":\"r\"},\"mounts\":[{\"destination\":\"\"}]}",
		  "mounts[0] has no \"destination\"" },
		{ "{\"root\":{\"path\":\"r\"},\"mounts\":[{\"destination\":\"/a\"},"
		  "{\"destination\":\"/b\",\"options\":\"ro\"}]}", "mounts[1].options is not an array" },
		{ "{\"root\":{\"path\":\"r\"},\"mounts\":[{\"destination\":\"/a\",\"options\":[\"ro\",1]}]}",
		  "mounts[0].options[1] is not a string" },
		{ "{\"root\":{\"path\":\"r\"},\"linux\":{\"readonlyPaths\":[\"\"]}}",
		  "linux.readonlyPaths[0] is not a path string" },
	};
	static const char *const dotdot[] = {
		"..", "../rootfs", "rootfs/..", "/var/lib/../../etc", "a/../b/",
	};
	static const char dots[] = "{\"root\":{\"path\":\"..rootfs/a..\"}}";
	int r;

	r = oci_config_parse(rel, strlen(rel), "/tmp/b", &c, &error);
	ok(r == 0 && streq(c.root_path, "/tmp/b/rootfs"), "a relative root.path is under the bundle: %s",
	   strna(c.root_path));
	ok(r == 0 && streq(strna(oci_annotation(c.annotations, "a")), "b"), "config.json's annotations");
	oci_config_done(&c);
	ok(r == 0 && !c.root_readonly && c.n_mounts == 0 && !c.readonly_paths,
	   "no root.readonly, no mounts, no linux.readonlyPaths");
	oci_config_done(&c);
	r = oci_config_parse(abs, strlen(abs), "/tmp/b", &c, &error);
	ok(r == 0 && streq(c.root_path, "/var/lib/x/merged") && !c.annotations,
	   "an absolute root.path stays as it is: %s", strna(c.root_path));
	ok(r == 0 && c.root_readonly, "root.readonly is kept");
	oci_config_done(&c);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		free(error);
		error = NULL;
		r = oci_config_parse(bad[i].json, strlen(bad[i].json), "/b", &c, &error);
		ok(r == -EBADMSG && error && strstr(error, bad[i].want), "config %s is refused: %s",
		   bad[i].json, strna(error));
	}
	for (size_t i = 0; i < ARRAY_SIZE(dotdot); i++) {
		_cleanup_free_ char *json = strprintf("{\"root\":{\"path\":\"%s\"}}", dotdot[i]);

		free(error);
		error = NULL;
		r = oci_config_parse(json, strlen(json), "/b", &c, &error);
		ok(r == -EINVAL && error && strstr(error, "has a '..' component") && !c.root_path,
		   "root.path \"%s\" is refused: %s", dotdot[i], strna(error));
	}
	r = oci_config_parse(dots, strlen(dots), "/b", &c, &error);
	ok(r == 0 && streq(strna(c.root_path), "/b/..rootfs/a.."),
	   "but \"..rootfs/a..\" has no '..' component");
	oci_config_done(&c);
}

#define CONFIG_MOUNTS                                                                          \
	"{\"root\":{\"path\":\"rootfs\",\"readonly\":true},\"mounts\":["                                \
	"{\"destination\":\"/proc\",\"type\":\"proc\",\"source\":\"proc\"},"                           \
	"{\"destination\":\"//run/\",\"type\":\"tmpfs\",\"options\":[\"nosuid\",\"mode=755\"]},"         \
	"{\"destination\":\"/data\",\"type\":\"bind\",\"source\":\"/srv\",\"options\":[\"rbind\",\"ro\"]}," \
	"{\"destination\":\"/data/./scratch\",\"type\":\"tmpfs\"},"                                \
	"{\"destination\":\"/srv\",\"type\":\"tmpfs\"},"                                          \
	"{\"destination\":\"/srv\",\"type\":\"bind\",\"options\":[\"bind\",\"ro\"]},"                 \
	"{\"destination\":\"/opt\",\"type\":\"bind\",\"options\":[\"rbind\",\"rro\"]},"               \
	"{\"destination\":\"/opt/tmp\",\"type\":\"tmpfs\"},"                                      \
	"{\"destination\":\"/x/../etc\",\"type\":\"bind\",\"options\":[\"ro\"]}],"                     \
	"\"linux\":{\"readonlyPaths\":[\"/proc/sys\",\"/run/secrets/\"]}}"

static void test_config_mounts(void)
{
	static const struct {
		const char *path;
		int kind;
		const char *what, *option;
	} cases[] = {
		{ "/", OCI_READONLY_ROOT, "/", NULL },
		{ "/var/lib", OCI_READONLY_ROOT, "/", NULL },
		{ "/runner", OCI_READONLY_ROOT, "/", NULL },
		{ "/run", OCI_WRITABLE, NULL, NULL },
		{ "/run/mshare", OCI_WRITABLE, NULL, NULL },
		{ "/run/secrets", OCI_READONLY_PATH, "/run/secrets", NULL },
		{ "/run/secrets/a", OCI_READONLY_PATH, "/run/secrets", NULL },
		{ "/data", OCI_READONLY_MOUNT, "/data", "ro" },
		{ "/data/x", OCI_READONLY_MOUNT, "/data", "ro" },
		{ "/data/scratch/y", OCI_WRITABLE, NULL, NULL },
		{ "/srv/z", OCI_READONLY_MOUNT, "/srv", "ro" },
		{ "/opt/a", OCI_READONLY_MOUNT, "/opt", "rro" },
		{ "/opt/tmp/b", OCI_READONLY_MOUNT, "/opt", "rro" },
		{ "/etc", OCI_READONLY_ROOT, "/", NULL },
		{ "/proc/self", OCI_WRITABLE, NULL, NULL },
		{ "/proc/sys/kernel", OCI_READONLY_PATH, "/proc/sys", NULL },
	};
	_cleanup_(oci_config_done) struct oci_config c = {};
	_cleanup_free_ char *error = NULL;
	const struct oci_mount *m;
	int r;

	r = oci_config_parse(CONFIG_MOUNTS, strlen(CONFIG_MOUNTS), "/b", &c, &error);
	ok(r == 0 && c.n_mounts == 9, "config.json with mounts (%d %s)", r, strna(error));
	if (r < 0)
		return;
	ok(streq(c.mounts[1].destination, "/run") && streq(c.mounts[3].destination, "/data/scratch") &&
	   streq(c.mounts[8].destination, "/x/../etc"),
	   "destinations lose empty and \".\" components and the trailing slash, keep \"..\": %s %s %s",
	   c.mounts[1].destination, c.mounts[3].destination, c.mounts[8].destination);
	ok(!c.mounts[0].options && strv_length(c.mounts[2].options) == 2 &&
	   streq(c.mounts[2].options[1], "ro"), "options are kept");
	ok(!oci_mount_readonly(&c.mounts[1]) && streq(strna(oci_mount_readonly(&c.mounts[2])), "ro") &&
	   streq(strna(oci_mount_readonly(&c.mounts[6])), "rro"),
	   "\"ro\" and \"rro\" make a mount read-only");
	ok(strv_length(c.readonly_paths) == 2 && streq(c.readonly_paths[1], "/run/secrets"),
	   "linux.readonlyPaths are kept, normalized");
	m = oci_config_mount_at(&c, "/srv");
	ok(m == &c.mounts[5], "the mount at /srv is the last one listed there");
	ok(oci_config_mount_at(&c, "/run") == &c.mounts[1] && !oci_config_mount_at(&c, "/ru") &&
	   !oci_config_mount_at(&c, "/run/mshare") && !oci_config_mount_at(&c, "/etc"),
	   "mounts are at their destinations only");
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct oci_readonly ro = oci_config_readonly(&c, cases[i].path);

		ok((int)ro.kind == cases[i].kind &&
		   (cases[i].what ? ro.what && streq(ro.what, cases[i].what) : !ro.what) &&
		   (cases[i].option ? ro.option && streq(ro.option, cases[i].option) : !ro.option),
		   "%s: kind %d (want %d), %s \"%s\"", cases[i].path, (int)ro.kind, cases[i].kind,
		   strna(ro.what), strna(ro.option));
	}
	c.root_readonly = false;
	ok(oci_config_readonly(&c, "/var/lib").kind == OCI_WRITABLE, "a writable root: /var/lib is writable");
}

static void test_config_load(void)
{
	char dir[] = "/tmp/test-oci.XXXXXX";
	_cleanup_(oci_config_done) struct oci_config c = {};
	_cleanup_free_ char *error = NULL, *path = NULL;
	FILE *f;
	int r;

	ok(mkdtemp(dir) != NULL, "a bundle directory");
	r = oci_config_load(dir, &c, &error);
	ok(r == -ENOENT && error && strstr(error, "cannot read"), "no config.json: %s", strna(error));
	free(error);
	error = NULL;
	path = strprintf("%s/config.json", dir);
	f = fopen(path, "we");
	fputs("{\"root\":{\"path\":\"rootfs\"}}", f);
	fclose(f);
	r = oci_config_load(dir, &c, &error);
	ok(r == 0 && c.root_path && strncmp(c.root_path, dir, strlen(dir)) == 0, "config.json is read: %s",
	   strna(c.root_path));
	unlink(path);
	mkdir(path, 0700);
	r = oci_config_load(dir, &c, &error);
	ok(r < 0 && error && strstr(error, "not a regular file"), "a directory config.json: %s", strna(error));
	rmdir(path);
	rmdir(dir);
}

int main(void)
{
	test_state_good();
	test_names();
	test_sandbox();
	test_state_bad();
	test_config();
	test_config_mounts();
	test_config_load();
	return tap_finish();
}
