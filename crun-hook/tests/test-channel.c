/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The container's channel, made in a directory tree on the host for a
 * child process standing in for the container: where the socket goes, its
 * modes and owner, symlinks that try to lead out of the root file system, a
 * stale and a live socket in the way, a process that is gone, and a child
 * in a user namespace with a tmpfs of its own (as crun leaves a
 * user-namespaced container at createRuntime). Needs root.
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
#include "tap.h"
#include "util.h"

static char top[] = "/tmp/test-channel.XXXXXX";
static char rootfs[128];

struct child {
	pid_t pid;
	int pidfd;
};

/* A child that waits to be killed; in its own user and mount namespaces,
 * with a tmpfs on rootfs/run, if userns. */
static int child_start(struct child *c, bool userns)
{
	int to_child[2], to_parent[2];
	char b = 0;

	if (pipe2(to_child, O_CLOEXEC) < 0 || pipe2(to_parent, O_CLOEXEC) < 0)
		return -errno;
	c->pid = fork();
	if (c->pid < 0)
		return -errno;
	if (c->pid == 0) {
		char run[160];

		close(to_child[1]);
		close(to_parent[0]);
		if (userns) {
			if (unshare(CLONE_NEWUSER) < 0)
				_exit(10);
			(void)!write(to_parent[1], &b, 1);
			if (read(to_child[0], &b, 1) != 1)
				_exit(11);
			if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
				_exit(12);
			if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
				_exit(13);
			snprintf(run, sizeof(run), "%s/run", rootfs);
			if (mount("tmpfs", run, "tmpfs", 0, "mode=755") < 0)
				_exit(14);
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

static int create(const struct child *c, const char *root, const char *path, char **error)
{
	free(*error);
	*error = NULL;
	return channel_create(c->pid, c->pidfd, root, path, error);
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
	_cleanup_close_ int fd = -1, fd2 = -1;
	struct child c;
	int r;

	r = child_start(&c, false);
	ok(r == 0, "a child process stands in for the container (%d)", r);
	fd = create(&c, rootfs, "/run/mshare/mshare.sock", &error);
	ok(fd >= 0, "the channel is made (%s)", strna(error));
	ok(is_socket(sock, 0666, 0), "a socket, mode 0666, at rootfs/run/mshare/mshare.sock");
	ok(is_dir(dir, 0755, 0), "its missing directory was made, mode 0755");
	ok(fd >= 0 && fcntl(fd, F_GETFD) == FD_CLOEXEC, "the socket is close-on-exec");
	ok(fd >= 0 && reachable(sock, fd), "a client connects to it and the listener accepts");

	r = create(&c, rootfs, "/run/mshare/mshare.sock", &error);
	ok(r == -EADDRINUSE && error && strstr(error, "another live socket"),
	   "a live socket in the way is left alone: %s", strna(error));
	fd = safe_close(fd);
	fd2 = create(&c, rootfs, "/run/mshare/mshare.sock", &error);
	ok(fd2 >= 0 && reachable(sock, fd2), "a stale socket is replaced (%s)", strna(error));

	r = create(&c, rootfs, "/run/mshare", &error);
	ok(r == -EEXIST && error && strstr(error, "is not a socket"), "a directory in the way: %s", strna(error));
	fd2 = safe_close(fd2);

	child_stop(&c);
	r = create(&c, rootfs, "/run/mshare/mshare.sock", &error);
	ok(r < 0 && error, "a container process that is gone: %d %s", r, strna(error));
}

static void test_symlinks(void)
{
	_cleanup_free_ char *error = NULL, *outside = strprintf("%s/outside", top),
			    *l1 = strprintf("%s/abs", rootfs), *l2 = strprintf("%s/rel", rootfs),
			    *inside1 = NULL, *inside2 = NULL, *escaped1 = NULL, *escaped2 = NULL;
	_cleanup_close_ int fd1 = -1, fd2 = -1;
	struct child c;
	int r;

	_cleanup_free_ char *mirror = strprintf("%s%s", rootfs, outside), *cmd = strprintf("mkdir -p %s", mirror),
			    *dangling = strprintf("%s/dangling", rootfs),
			    *nowhere = strprintf("%s/nowhere-mshare-test", rootfs);

	r = child_start(&c, false);
	ok(r == 0 && mkdir(outside, 0755) == 0, "a directory outside the root file system");
	ok(system(cmd) == 0, "and the same path inside it");
	/* rootfs/abs -> TOP/outside, rootfs/rel -> ../../../..TOP/outside */
	ok(symlink(outside, l1) == 0, "rootfs/abs -> %s", outside);
	inside2 = strprintf("../../../../../../..%s", outside);
	ok(symlink(inside2, l2) == 0, "rootfs/rel -> %s", inside2);
	fd1 = create(&c, rootfs, "/abs/a.sock", &error);
	ok(fd1 >= 0, "a socket path through the absolute symlink (%s)", strna(error));
	fd2 = create(&c, rootfs, "/rel/b.sock", &error);
	ok(fd2 >= 0, "a socket path through the relative symlink (%s)", strna(error));
	escaped1 = strprintf("%s/a.sock", outside);
	escaped2 = strprintf("%s/b.sock", outside);
	ok(access(escaped1, F_OK) < 0 && access(escaped2, F_OK) < 0,
	   "neither socket is in the directory outside");
	free(inside2);
	inside1 = strprintf("%s%s/a.sock", rootfs, outside);
	inside2 = strprintf("%s%s/b.sock", rootfs, outside);
	ok(is_socket(inside1, 0666, 0) && is_socket(inside2, 0666, 0),
	   "both are where the symlinks lead inside the root file system");
	ok(symlink("/nowhere-mshare-test", dangling) == 0, "rootfs/dangling -> /nowhere-mshare-test");
	r = create(&c, rootfs, "/dangling/d.sock", &error);
	ok(r < 0 && access("/nowhere-mshare-test", F_OK) < 0 && access(nowhere, F_OK) < 0,
	   "a socket path through a dangling symlink fails and makes no directory anywhere (%s)", strna(error));
	child_stop(&c);
}

static void test_pivoted(void)
{
	_cleanup_free_ char *error = NULL, *path = strprintf("%s/pivoted/c.sock", top);
	_cleanup_close_ int fd = -1;
	struct child c;

	child_start(&c, false);
	/* A process whose root is the root file system already: "/" here. */
	fd = create(&c, "/", path, &error);
	ok(fd >= 0 && is_socket(path, 0666, 0), "a container already in its root: the path is taken from there (%s)",
	   strna(error));
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
	_cleanup_close_ int fd = -1;
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
	r = child_start(&c, true);
	ok(r == 0, "a child in a user namespace (0 -> 100000) with a tmpfs on rootfs/run (%d)", r);
	if (r < 0)
		return;
	fd = create(&c, rootfs, "/run/mshare/mshare.sock", &error);
	ok(fd >= 0, "the channel is made on the user namespace's tmpfs (%s)", strna(error));
	sock = strprintf("/proc/%d/root%s/run/mshare/mshare.sock", (int)c.pid, rootfs);
	dir = strprintf("/proc/%d/root%s/run/mshare", (int)c.pid, rootfs);
	ok(is_socket(sock, 0666, 100000), "the socket belongs to the container's root (host uid 100000), mode 0666");
	ok(is_dir(dir, 0755, 100000), "so does its directory, mode 0755");
	ok(access(host_view, F_OK) < 0, "the host's own view of rootfs/run has no trace of it");
	ok(fd >= 0 && reachable(sock, fd), "a client connects through /proc/PID/root");
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
	test_pivoted();
	test_userns();
	if (fork() == 0)
		execlp("rm", "rm", "-rf", top, (char *)NULL);
	wait(NULL);
	return tap_finish();
}
