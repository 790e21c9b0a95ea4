/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The container's channel, made in a directory tree on the host for a
 * child process standing in for the container: where the socket goes, its
 * modes and owner, symlinks on the way (refused), a stale and a live socket
 * in the way and a symlink to a live one elsewhere, a process that is gone,
 * read-only roots and mounts (the runtime makes them read-only only after
 * createRuntime, so here they are writable and config.json says ro),
 * mounts that config.json does not list, and a child in a user namespace
 * with a tmpfs of its own (as crun leaves a user-namespaced container at
 * createRuntime). Needs root.
 */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "channel.h"
#include "mshare-common/macro.h"
#include "mshare-common/strprintf.h"
#include "mshare-common/tap.h"
#include "oci.h"

static char top[] = "/tmp/test-channel.XXXXXX";
static char rootfs[128];
/* The root file system that the child's mounts() set up: rootfs or another one. */
static const char *mount_root = rootfs;

struct child {
	pid_t pid;
	int pidfd;
};

/* In the child: a tmpfs on mount_root/run. Returns 0 or an exit status. */
static int mount_run(void)
{
	char run[160];

	snprintf(run, sizeof(run), "%s/run", mount_root);
	return mount("tmpfs", run, "tmpfs", 0, "mode=755") < 0 ? 14 : 0;
}

/*
 * A child that waits to be killed; in its own user namespace if userns,
 * and in its own mount namespace with what mounts() mounts there if that
 * is not NULL.
 */
static int child_start(struct child *c, bool userns, int (*mounts)(void))
{
	int to_child[2], to_parent[2];
	char b = 0;

	if (pipe2(to_child, O_CLOEXEC) < 0 || pipe2(to_parent, O_CLOEXEC) < 0)
		return -errno;
	c->pid = fork();
	if (c->pid < 0)
		return -errno;
	if (c->pid == 0) {
		close(to_child[1]);
		close(to_parent[0]);
		int r;

		if (userns) {
			if (unshare(CLONE_NEWUSER) < 0)
				_exit(10);
			(void)!write(to_parent[1], &b, 1);
			if (read(to_child[0], &b, 1) != 1)
				_exit(11);
			if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
				_exit(12);
		}
		if (mounts) {
			if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
				_exit(13);
			r = mounts();
			if (r)
				_exit(r);
		}
		(void)!write(to_parent[1], &b, 1);
		pause();
		_exit(0);
	}
	close(to_child[0]);
	close(to_parent[1]);
	if (userns) {
		char path[64];
		int fd;

		if (read(to_parent[0], &b, 1) != 1) {
			int status = 0;

			waitpid(c->pid, &status, 0);
			printf("# the child failed before its user namespace was mapped: exit status %d\n",
			       WEXITSTATUS(status));
			return -ECHILD;
		}
		snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)c->pid);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "0 100000 65536\n", 15) != 15)
			return -errno;
		close(fd);
		snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)c->pid);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "0 100000 65536\n", 15) != 15)
			return -errno;
		close(fd);
		(void)!write(to_child[1], &b, 1);
	}
	if (read(to_parent[0], &b, 1) != 1) {
		int status = 0;

		waitpid(c->pid, &status, 0);
		printf("# the child failed: exit status %d\n", WEXITSTATUS(status));
		return -ECHILD;
	}
	close(to_child[1]);
	close(to_parent[0]);
	c->pidfd = (int)syscall(SYS_pidfd_open, c->pid, 0);
	return c->pidfd < 0 ? -errno : 0;
}

static void child_stop(struct child *c)
{
	kill(c->pid, SIGKILL);
	waitpid(c->pid, NULL, 0);
	safe_close(c->pidfd);
}

/* Makes the channel at path with config.json text json. */
static int create_with(const struct child *c, const char *json, const char *path, struct channel *ch,
		       char **error)
{
	_cleanup_(oci_config_done) struct oci_config config = {};
	int r;

	channel_done(ch);
	free(*error);
	*error = NULL;
	r = oci_config_parse(json, strlen(json), "/nonexistent-bundle", &config, error);
	if (r < 0)
		return r;
	return channel_create(c->pid, c->pidfd, &config, path, ch, error);
}

/* With the root file system root, writable, and mounts (JSON objects) in config.json. */
static int create_mounts(const struct child *c, const char *root, const char *mounts, const char *path,
			 struct channel *ch, char **error)
{
	_cleanup_free_ char *json = strprintf("{\"root\":{\"path\":\"%s\"},\"mounts\":[%s]}", root,
					      mounts);

	return create_with(c, json, path, ch, error);
}

static int create(const struct child *c, const char *root, const char *path, struct channel *ch,
		  char **error)
{
	return create_mounts(c, root, "", path, ch, error);
}

/* A root file system of its own below top, for one test. */
static char *make_root(const char *name)
{
	char *root = strprintf("%s/%s", top, name);

	if (root && mkdir(root, 0755) < 0) {
		free(root);
		return NULL;
	}
	return root;
}

/* Whether directory path has no entries (a host directory behind a mount, untouched). */
static bool is_empty_dir(const char *path)
{
	_cleanup_free_ char *cmd = strprintf("test -d %s && test -z \"$(ls -A %s)\"", path, path);

	return cmd && system(cmd) == 0;
}

static bool is_socket(const char *path, mode_t mode, uid_t uid)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) && (st.st_mode & 07777) == mode &&
	       st.st_uid == uid;
}

static bool is_dir(const char *path, mode_t mode, uid_t uid)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == mode &&
	       st.st_uid == uid;
}

/* Connects to the socket at path and accepts the connection on listen_fd. */
static bool reachable(const char *path, int listen_fd)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0), a = -1;

	if (strlen(path) >= sizeof(sa.sun_path))
		return false;
	strcpy(sa.sun_path, path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return false;
	a = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
	return a >= 0;
}

static void test_plain(void)
{
	_cleanup_free_ char *error = NULL, *sock = strprintf("%s/run/mshare/mshare.sock", rootfs),
			    *dir = strprintf("%s/run/mshare", rootfs);
	_cleanup_(channel_done) struct channel ch = CHANNEL_NULL, ch2 = CHANNEL_NULL;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int other = -1;
	struct child c;
	int r;

	r = child_start(&c, false, NULL);
	ok(r == 0, "a child process stands in for the container (%d)", r);
	r = create(&c, rootfs, "/run/mshare/mshare.sock", &ch, &error);
	ok(r == 0 && ch.listen_fd >= 0, "the channel is made (%s)", strna(error));
	ok(is_socket(sock, 0666, 0), "a socket, mode 0666, at rootfs/run/mshare/mshare.sock");
	ok(is_dir(dir, 0755, 0), "its missing directory was made, mode 0755");
	ok(ch.listen_fd >= 0 && fcntl(ch.listen_fd, F_GETFD) == FD_CLOEXEC, "the socket is close-on-exec");
	ok(ch.listen_fd >= 0 && reachable(sock, ch.listen_fd),
	   "a client connects to it and the listener accepts");

	r = create(&c, rootfs, "/run/mshare/mshare.sock", &ch2, &error);
	ok(r == -EADDRINUSE && error && strstr(error, "another live socket") && ch2.listen_fd < 0,
	   "a live socket in the way is left alone: %s", strna(error));
	channel_done(&ch);
	r = create(&c, rootfs, "/run/mshare/mshare.sock", &ch2, &error);
	ok(r == 0 && reachable(sock, ch2.listen_fd), "a stale socket is replaced (%s)", strna(error));

	r = channel_remove(&ch2);
	ok(r == 1 && access(sock, F_OK) < 0 && is_dir(dir, 0755, 0),
	   "channel_remove() removes the socket it bound, not its directory (%d)", r);
	r = create(&c, rootfs, "/run/mshare/mshare.sock", &ch2, &error);
	ok(r == 0, "the channel is made again (%s)", strna(error));
	/* Another socket under the name by now: not the hook's to remove. */
	other = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	strcpy(sa.sun_path, sock);
	ok(unlink(sock) == 0 && bind(other, (struct sockaddr *)&sa, sizeof(sa)) == 0,
	   "another socket takes the name");
	r = channel_remove(&ch2);
	ok(r == 0 && access(sock, F_OK) == 0,
	   "channel_remove() leaves another socket under the name (%d)", r);
	ok(unlink(sock) == 0, "which the test removes");

	r = create(&c, rootfs, "/run/mshare", &ch2, &error);
	ok(r == -EEXIST && error && strstr(error, "is not a socket"), "a directory in the way: %s", strna(error));

	child_stop(&c);
	r = create(&c, rootfs, "/run/mshare/mshare.sock", &ch2, &error);
	ok(r < 0 && error, "a container process that is gone: %d %s", r, strna(error));
}

/* A socket listening at path, non-blocking, so that accept() tells whether anyone connected. */
static int listen_at(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	strcpy(sa.sun_path, path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 512) < 0)
		return safe_close(fd);
	return fd;
}

/* How many connections wait on listen_fd; accepts them. */
static int connections(int listen_fd)
{
	int n = 0, fd;

	while ((fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		close(fd);
		n++;
	}
	return n;
}

static void test_symlinks(void)
{
	_cleanup_free_ char *error = NULL, *outside = strprintf("%s/outside", top),
			    *l1 = strprintf("%s/abs", rootfs), *l2 = strprintf("%s/rel", rootfs),
			    *rel = NULL, *mirror = strprintf("%s%s", rootfs, outside),
			    *cmd = strprintf("mkdir -p %s %s/run/real", mirror, rootfs),
			    *dangling = strprintf("%s/dangling", rootfs),
			    *nowhere = strprintf("%s/nowhere-mshare-test", rootfs),
			    *inner = strprintf("%s/run/lnk", rootfs),
			    *elsewhere = strprintf("%s/elsewhere.sock", top),
			    *evil = strprintf("%s/run/real/evil.sock", rootfs),
			    *real = strprintf("%s/run/real", rootfs);
	_cleanup_(channel_done) struct channel ch = CHANNEL_NULL;
	_cleanup_close_ int listener = -1;
	struct child c;
	int r;

	r = child_start(&c, false, NULL);
	ok(r == 0 && mkdir(outside, 0755) == 0, "a directory outside the root file system");
	ok(system(cmd) == 0, "and the same path inside it");
	/* rootfs/abs -> TOP/outside, rootfs/rel -> ../../../..TOP/outside */
	ok(symlink(outside, l1) == 0, "rootfs/abs -> %s", outside);
	rel = strprintf("../../../../../../..%s", outside);
	ok(symlink(rel, l2) == 0, "rootfs/rel -> %s", rel);
	r = create(&c, rootfs, "/abs/a.sock", &ch, &error);
	ok(r == -ELOOP && error && strstr(error, "/abs is a symbolic link"),
	   "a socket path through an absolute symlink is refused: %s", strna(error));
	r = create(&c, rootfs, "/rel/b.sock", &ch, &error);
	ok(r == -ELOOP && error && strstr(error, "/rel is a symbolic link"),
	   "a socket path through a relative symlink is refused: %s", strna(error));
	ok(is_empty_dir(outside) && is_empty_dir(mirror),
	   "no socket outside, nor where the symlinks would lead inside");
	ok(symlink("/nowhere-mshare-test", dangling) == 0, "rootfs/dangling -> /nowhere-mshare-test");
	r = create(&c, rootfs, "/dangling/d.sock", &ch, &error);
	ok(r == -ELOOP && access("/nowhere-mshare-test", F_OK) < 0 && access(nowhere, F_OK) < 0,
	   "a socket path through a dangling symlink fails and makes no directory anywhere (%s)", strna(error));
	ok(symlink("real", inner) == 0, "rootfs/run/lnk -> real, a symlink that stays inside");
	r = create(&c, rootfs, "/run/lnk/mshare/e.sock", &ch, &error);
	ok(r == -ELOOP && error && strstr(error, "/run/lnk is a symbolic link") && is_empty_dir(real),
	   "is refused as well, deeper in the path: %s", strna(error));

	/* The socket's own name a symlink to a live socket elsewhere on the host. */
	listener = listen_at(elsewhere);
	ok(listener >= 0 && symlink(elsewhere, evil) == 0,
	   "rootfs/run/real/evil.sock -> a live socket elsewhere");
	r = create(&c, rootfs, "/run/real/evil.sock", &ch, &error);
	ok(r == -ELOOP && error && strstr(error, "is a symbolic link"), "the channel there is refused: %s",
	   strna(error));
	ok(connections(listener) == 0, "and the socket elsewhere saw no connection");
	child_stop(&c);
}

/*
 * The stale-socket probe, directly: it must never connect through a
 * symlink, which a name in a directory the container writes can become at
 * any time.
 */
static void test_probe(void)
{
	_cleanup_free_ char *dir = strprintf("%s/probe", top),
			    *elsewhere = strprintf("%s/elsewhere2.sock", top),
			    *name = strprintf("%s/probe/mshare.sock", top),
			    *file = strprintf("%s/probe/file", top);
	_cleanup_close_ int dirfd = -1, listener = -1, live = -1, stale = -1;
	struct stat st, want;
	int r;

	ok(mkdir(dir, 0755) == 0 && (dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) >= 0,
	   "a directory to probe in");
	listener = listen_at(elsewhere);
	ok(listener >= 0 && symlink(elsewhere, name) == 0,
	   "a symlink named like the socket, to a live socket elsewhere");
	r = channel_probe(dirfd, "mshare.sock", &st);
	ok(r == -ELOOP, "the probe does not take it for a socket, live or stale (%d)", r);
	ok(connections(listener) == 0, "and the socket elsewhere saw no connection");

	ok(unlink(name) == 0 && (live = listen_at(name)) >= 0, "a live socket under the name");
	r = channel_probe(dirfd, "mshare.sock", &st);
	ok(r == 1 && connections(live) == 1, "is live (%d), and the probe connected to it", r);
	live = safe_close(live);
	ok(lstat(name, &want) == 0, "once closed, it is stale");
	r = channel_probe(dirfd, "mshare.sock", &st);
	ok(r == 0 && st.st_ino == want.st_ino && st.st_dev == want.st_dev,
	   "and the probe says so, with its inode (%d)", r);
	stale = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	r = channel_probe(dirfd, "file", &st);
	ok(stale >= 0 && r == -ENOTSOCK, "a regular file is not a socket (%d)", r);
	r = channel_probe(dirfd, "missing", &st);
	ok(r == -ENOENT, "nothing at all (%d)", r);
}
/*
 * The review's race: the name flips between a stale socket and a symlink
 * to a live socket elsewhere while the hook makes the channel again and
 * again. A probe that connects to the name connects elsewhere now and then.
 */
static void test_probe_race(void)
{
	_cleanup_free_ char *root = make_root("race-root"), *dir = NULL, *name = NULL, *tmp_sock = NULL,
			    *tmp_link = NULL, *elsewhere = strprintf("%s/elsewhere3.sock", top);
	_cleanup_(channel_done) struct channel ch = CHANNEL_NULL;
	_cleanup_close_ int listener = -1;
	_cleanup_free_ char *error = NULL;
	int made = 0, refused = 0, seen = 0;
	struct child c;
	pid_t swapper;

	dir = strprintf("%s/run", root);
	name = strprintf("%s/run/mshare.sock", root);
	tmp_sock = strprintf("%s/run/tmp.sock", root);
	tmp_link = strprintf("%s/run/tmp.link", root);
	listener = listen_at(elsewhere);
	ok(root && mkdir(dir, 0755) == 0 && listener >= 0 && child_start(&c, false, NULL) == 0,
	   "a container, and a live socket elsewhere");
	swapper = fork();
	if (swapper == 0) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };

		strcpy(sa.sun_path, tmp_sock);
		for (;;) {
			int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

			unlink(tmp_sock);
			(void)!bind(fd, (struct sockaddr *)&sa, sizeof(sa));
			close(fd);
			(void)!rename(tmp_sock, name);
			(void)!symlink(elsewhere, tmp_link);
			(void)!rename(tmp_link, name);
		}
	}
	for (int i = 0; i < 400; i++) {
		if (create(&c, root, "/run/mshare.sock", &ch, &error) == 0)
			made++;
		else
			refused++;
		seen += connections(listener);
	}
	kill(swapper, SIGKILL);
	waitpid(swapper, NULL, 0);
	child_stop(&c);
	seen += connections(listener);
	ok(seen == 0, "in 400 runs against a name that flips to a symlink, none connected elsewhere: %d did "
	   "(%d made, %d refused)", seen, made, refused);
}

static void test_pivoted(void)
{
	_cleanup_free_ char *error = NULL, *path = strprintf("%s/pivoted/c.sock", top);
	_cleanup_(channel_done) struct channel ch = CHANNEL_NULL;
	struct child c;
	int r;

	child_start(&c, false, NULL);
	/* A process whose root is the root file system already: "/" here.
	 * /tmp may be a mount of its own: config.json lists it. */
	r = create_mounts(&c, "/", "{\"destination\":\"/tmp\",\"type\":\"tmpfs\"}", path, &ch, &error);
	ok(r == 0 && is_socket(path, 0666, 0), "a container already in its root: the path is taken from there (%s)",
	   strna(error));
	child_stop(&c);
}

static void test_readonly_root(void)
{
	_cleanup_free_ char *error = NULL, *root = make_root("ro-root"), *json = NULL, *run = NULL,
			    *srv = NULL, *json2 = NULL;
	_cleanup_(channel_done) struct channel ch = CHANNEL_NULL;
	struct child c;
	int r;

	r = child_start(&c, false, NULL);
	ok(r == 0 && root, "a container whose config.json has root.readonly (%d)", r);
	json = strprintf("{\"root\":{\"path\":\"%s\",\"readonly\":true}}", root);
	r = create_with(&c, json, "/run/mshare/mshare.sock", &ch, &error);
	ok(r == -EROFS && error &&
	   strstr(error, "the channel's directory /run/mshare is on the read-only root file system"),
	   "the channel on its root is refused: %s", strna(error));
	run = strprintf("%s/run", root);
	ok(access(run, F_OK) < 0, "and nothing was made in the root file system");
	r = create_with(&c, json, "/x.sock", &ch, &error);
	ok(r == -EROFS && is_empty_dir(root), "nor for a socket right in / (%s)", strna(error));

	/* config.json says /srv is a mount, but nothing is mounted there: the
	 * directory would be on the read-only root all the same. */
	json2 = strprintf("{\"root\":{\"path\":\"%s\",\"readonly\":true},"
			  "\"mounts\":[{\"destination\":\"/srv\",\"type\":\"tmpfs\"}]}", root);
	srv = strprintf("%s/srv", root);
	ok(mkdir(srv, 0755) == 0, "rootfs/srv, a plain directory");
	r = create_with(&c, json2, "/srv/mshare/mshare.sock", &ch, &error);
	ok(r == -EROFS && error && strstr(error, "read-only root file system") && is_empty_dir(srv),
	   "a mount of config.json that is not there does not make its place writable: %s", strna(error));
	child_stop(&c);
}

static char *bind_root, *bind_source;

/* In the child: bind_source on bind_root/data (as a bind mount that the
 * runtime makes read-only only later), and a tmpfs on bind_root/run with
 * bind_source on it too (where the image's /var/run -> /run leads a bind
 * mount on /var/run). */
static int mount_binds(void)
{
	char path[192];

	snprintf(path, sizeof(path), "%s/data", bind_root);
	if (mount(bind_source, path, NULL, MS_BIND, NULL) < 0)
		return 20;
	snprintf(path, sizeof(path), "%s/run", bind_root);
	if (mount("tmpfs", path, "tmpfs", 0, "mode=755") < 0 ||
	    mount(bind_source, path, NULL, MS_BIND, NULL) < 0)
		return 21;
	return 0;
}

static void test_readonly_mounts(void)
{
	_cleanup_free_ char *error = NULL, *cmd = NULL, *data_ro = NULL, *data_rw = NULL, *var_run = NULL,
			    *srv = NULL;
	_cleanup_(channel_done) struct channel ch = CHANNEL_NULL;
	struct child c;
	int r;

	bind_root = make_root("bind-root");
	bind_source = make_root("host-data");
	cmd = strprintf("mkdir -p %s/data %s/run %s/var && ln -s /run %s/var/run", bind_root, bind_root,
			bind_root, bind_root);
	ok(bind_root && bind_source && system(cmd) == 0, "a root file system with /var/run -> /run");
	mount_root = bind_root;
	r = child_start(&c, false, mount_binds);
	ok(r == 0, "a container with a host directory bound on /data and on /run (%d)", r);
	if (r < 0)
		return;

	data_ro = strprintf("{\"destination\":\"/data\",\"type\":\"bind\",\"source\":\"%s\","
			    "\"options\":[\"rbind\",\"ro\"]}", bind_source);
	r = create_mounts(&c, bind_root, data_ro, "/data/mshare.sock", &ch, &error);
	ok(r == -EROFS && error &&
	   strstr(error, "the channel's directory /data is on a read-only mount (mount /data has "
			 "\"ro\"); point io.mshare.socket at a writable place"),
	   "io.mshare.socket=/data/mshare.sock on a read-only bind mount is refused: %s", strna(error));
	r = create_mounts(&c, bind_root, data_ro, "/data/sub/mshare.sock", &ch, &error);
	ok(r == -EROFS, "and so is a directory below it (%s)", strna(error));
	ok(is_empty_dir(bind_source), "the host directory behind it is untouched");

	data_rw = strprintf("{\"destination\":\"/data\",\"type\":\"bind\",\"source\":\"%s\","
			    "\"options\":[\"rbind\",\"rw\"]}", bind_source);
	r = create_mounts(&c, bind_root, data_rw, "/data/mshare.sock", &ch, &error);
	ok(r == 0 && ch.listen_fd >= 0, "a read-write bind mount there is fine (%s)", strna(error));
	ok(channel_remove(&ch) == 1 && is_empty_dir(bind_source), "(and its socket is removed again)");

	/* The image's /var/run -> /run led the runtime's bind mount of
	 * /var/run onto /run, on top of the tmpfs that config.json has there. */
	var_run = strprintf("{\"destination\":\"/run\",\"type\":\"tmpfs\"},"
			    "{\"destination\":\"/var/run\",\"type\":\"bind\",\"source\":\"%s\","
			    "\"options\":[\"rbind\",\"ro\"]}", bind_source);
	r = create_mounts(&c, bind_root, var_run, "/run/mshare/mshare.sock", &ch, &error);
	ok(r == -EROFS && error &&
	   strstr(error, "(mount /var/run has \"ro\" and is on /run, through a symbolic link)"),
	   "a read-only mount that a symlink put on the way is found: %s", strna(error));
	ok(is_empty_dir(bind_source), "the host directory is still untouched");

	/* linux.readonlyPaths, made read-only after createRuntime as well */
	srv = strprintf("{\"root\":{\"path\":\"%s\"},\"mounts\":[{\"destination\":\"/data\","
			"\"type\":\"bind\"}],\"linux\":{\"readonlyPaths\":[\"/data\"]}}", bind_root);
	r = create_with(&c, srv, "/data/mshare.sock", &ch, &error);
	ok(r == -EROFS && error && strstr(error, "linux.readonlyPaths has /data") &&
	   is_empty_dir(bind_source), "a directory under linux.readonlyPaths is refused: %s", strna(error));
	child_stop(&c);
	mount_root = rootfs;
	free(bind_root);
	free(bind_source);
}

static void test_mounts(void)
{
	_cleanup_free_ char *error = NULL, *root = make_root("mount-root"), *run = NULL, *json = NULL,
			    *sock = NULL, *dir = NULL;
	_cleanup_(channel_done) struct channel ch = CHANNEL_NULL;
	struct child c;
	int r;

	run = strprintf("%s/run", root);
	ok(root && run && mkdir(run, 0755) == 0, "a root file system with /run");
	mount_root = root;
	r = child_start(&c, false, mount_run);
	mount_root = rootfs;
	ok(r == 0, "a container with a tmpfs on /run (%d)", r);
	if (r < 0)
		return;
	dir = strprintf("/proc/%d/root%s/run/mshare", (int)c.pid, root);
	r = create(&c, root, "/run/mshare/mshare.sock", &ch, &error);
	ok(r == -EXDEV && error && strstr(error, "/run is a mount point that config.json does not list"),
	   "config.json without the mount on /run: refused: %s", strna(error));
	ok(access(dir, F_OK) < 0 && is_empty_dir(run), "and nothing was made, on the tmpfs or below it");

	json = strprintf("{\"root\":{\"path\":\"%s\",\"readonly\":true},\"mounts\":[{\"destination\":"
			 "\"/run\",\"type\":\"tmpfs\",\"options\":[\"nosuid\",\"mode=755\"]}]}", root);
	r = create_with(&c, json, "/run/mshare/mshare.sock", &ch, &error);
	ok(r == 0 && ch.listen_fd >= 0, "with it (and a read-only root), the channel is made (%s)",
	   strna(error));
	sock = strprintf("%s/mshare.sock", dir);
	ok(is_socket(sock, 0666, 0) && is_empty_dir(run), "on the tmpfs, not in the directory below it");
	ok(ch.listen_fd >= 0 && reachable(sock, ch.listen_fd), "a client connects through /proc/PID/root");
	child_stop(&c);
}

/*
 * Whether this process may make a user namespace at all: not in a chroot
 * (EPERM), nor with user.max_user_namespaces = 0 (ENOSPC). Returns 0 or
 * -errno.
 */
static int userns_available(void)
{
	int status = 0;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0)
		_exit(unshare(CLONE_NEWUSER) < 0 ? errno : 0);
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) ? -WEXITSTATUS(status) : -ECHILD;
}

static void test_userns(void)
{
	_cleanup_free_ char *error = NULL, *host_view = strprintf("%s/run/mshare", rootfs), *sock = NULL,
			    *dir = NULL;
	_cleanup_(channel_done) struct channel ch = CHANNEL_NULL;
	struct child c;
	int r;

	_cleanup_free_ char *cmd = strprintf("rm -rf %s", host_view);

	ok(system(cmd) == 0, "rootfs/run/mshare is removed on the host");
	r = userns_available();
	if (r < 0) {
		tap_skip("user namespaces cannot be made here (%s): the channel in a user namespace is not checked",
			 strerror(-r));
		return;
	}
	r = child_start(&c, true, mount_run);
	ok(r == 0, "a child in a user namespace (0 -> 100000) with a tmpfs on rootfs/run (%d)", r);
	if (r < 0)
		return;
	r = create_mounts(&c, rootfs, "{\"destination\":\"/run\",\"type\":\"tmpfs\"}",
			  "/run/mshare/mshare.sock", &ch, &error);
	ok(r == 0, "the channel is made on the user namespace's tmpfs (%s)", strna(error));
	sock = strprintf("/proc/%d/root%s/run/mshare/mshare.sock", (int)c.pid, rootfs);
	dir = strprintf("/proc/%d/root%s/run/mshare", (int)c.pid, rootfs);
	ok(is_socket(sock, 0666, 100000), "the socket belongs to the container's root (host uid 100000), mode 0666");
	ok(is_dir(dir, 0755, 100000), "so does its directory, mode 0755");
	ok(access(host_view, F_OK) < 0, "the host's own view of rootfs/run has no trace of it");
	ok(ch.listen_fd >= 0 && reachable(sock, ch.listen_fd), "a client connects through /proc/PID/root");
	child_stop(&c);
}

int main(void)
{
	if (geteuid() != 0) {
		ok(false, "test-channel needs root (it makes sockets for other processes and user namespaces)");
		return tap_finish();
	}
	if (!mkdtemp(top))
		return perror("mkdtemp"), 1;
	chmod(top, 0755); /* the user-namespaced child must reach rootfs */
	snprintf(rootfs, sizeof(rootfs), "%s/rootfs", top);
	mkdir(rootfs, 0755);
	test_plain();
	test_symlinks();
	test_probe();
	test_probe_race();
	test_pivoted();
	test_readonly_root();
	test_readonly_mounts();
	test_mounts();
	test_userns();
	if (fork() == 0)
		execlp("rm", "rm", "-rf", top, (char *)NULL);
	wait(NULL);
	return tap_finish();
}
