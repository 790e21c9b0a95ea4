/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <signal.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include "channel.h"
#include "idmap.h"
#include "util.h"

#define CHANNEL_BACKLOG 64

/* An O_PATH descriptor of directory path below dirfd, which serves as its
 * root: absolute symlinks and ".." stay under it. */
static int openat2_dir(int dirfd, const char *path)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	do
		fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	while (fd < 0 && errno == EAGAIN); /* a rename raced with RESOLVE_IN_ROOT */
	return fd < 0 ? -errno : (int)fd;
}

static int failf(char **ret_error, int r, const char *format, ...) _printf_(3, 4);
static int failf(char **ret_error, int r, const char *format, ...)
{
	va_list ap;

	va_start(ap, format);
	*ret_error = vstrprintf(format, ap);
	va_end(ap);
	return r;
}

/*
 * The container's root file system, as an O_PATH descriptor: rootfs
 * under /proc/PID/root, or /proc/PID/root itself when it is rootfs
 * already (the container was moved into it).
 */
static int open_rootfs(pid_t pid, int pidfd, const char *rootfs, char **ret_error)
{
	_cleanup_close_ int root = -1;
	struct stat st_root, st_rootfs;
	char proc[64];
	int r;

	snprintf(proc, sizeof(proc), "/proc/%d/root", (int)pid);
	root = open(proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return failf(ret_error, -errno, "cannot open %s: %m", proc);
	/* Still the process the pidfd refers to, so /proc/PID was it. */
	if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0)
		return failf(ret_error, -errno, "the container's process %d: %m", (int)pid);

	if (fstat(root, &st_root) < 0)
		return failf(ret_error, -errno, "cannot stat %s: %m", proc);
	if (stat(rootfs, &st_rootfs) == 0 && st_rootfs.st_dev == st_root.st_dev &&
	    st_rootfs.st_ino == st_root.st_ino)
		return TAKE_FD(root);
	r = openat2_dir(root, rootfs);
	if (r < 0)
		return failf(ret_error, r, "cannot open the container's root file system %s in its mount namespace: %s",
			     rootfs, strerror(-r));
	return r;
}

/* Switches the file-system ids; returns 0 or -EPERM. */
static int set_fsids(uid_t uid, gid_t gid)
{
	setfsgid(gid);
	if ((gid_t)setfsgid((gid_t)-1) != gid)
		return -EPERM;
	setfsuid(uid);
	if ((uid_t)setfsuid((uid_t)-1) != uid)
		return -EPERM;
	return 0;
}

static void restore_fsids(void)
{
	setfsuid(geteuid());
	setfsgid(getegid());
}

/* Opens, making it if needed, each directory of dir (relative to the root
 * file system, no leading slash) and returns the last one. */
static int make_dirs(int rootfs, const char *dir, char **ret_error)
{
	_cleanup_close_ int parent = -1;
	_cleanup_free_ char *prefix = strdup(dir);
	char *slash = prefix;

	if (!prefix)
		return -ENOMEM;
	parent = fcntl(rootfs, F_DUPFD_CLOEXEC, 3);
	if (parent < 0)
		return failf(ret_error, -errno, "dup: %m");
	while (*dir) {
		const char *name;
		int fd;

		slash = strchr(slash, '/');
		if (slash)
			*slash = '\0';
		name = strrchr(prefix, '/') ? strrchr(prefix, '/') + 1 : prefix;
		fd = openat2_dir(rootfs, prefix);
		if (fd == -ENOENT) {
			if (mkdirat(parent, name, 0755) < 0 && errno != EEXIST)
				return failf(ret_error, -errno, "cannot make directory /%s: %m", prefix);
			fd = openat2_dir(rootfs, prefix);
		}
		if (fd < 0)
			return failf(ret_error, fd, "cannot open directory /%s: %s", prefix, strerror(-fd));
		safe_close(parent);
		parent = fd;
		if (!slash)
			break;
		*slash++ = '/';
	}
	return TAKE_FD(parent);
}

/* Whether something listens on the socket name in the current directory. */
static bool socket_is_live(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return true; /* cannot tell: leave it alone */
	strcpy(sa.sun_path, name);
	return connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 || errno == EAGAIN;
}

/* Binds fd to name in the directory dir, replacing a stale socket. */
static int bind_in(int fd, int dir, const char *name, const char *path, char **ret_error)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int r;

	if (strlen(name) >= sizeof(sa.sun_path))
		return failf(ret_error, -ENAMETOOLONG, "'%s' is too long a socket name", name);
	strcpy(sa.sun_path, name);
	/* A relative name, from the socket's directory: no path to resolve
	 * again, and it always fits sun_path. */
	if (fchdir(dir) < 0)
		return failf(ret_error, -errno, "cannot enter the directory of %s: %m", path);
	for (int attempt = 0;; attempt++) {
		old = umask(0111); /* the socket is 0666: anyone in the container may connect */
		r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
		umask(old);
		if (r == 0)
			return 0;
		if (errno != EADDRINUSE || attempt > 0)
			return failf(ret_error, -errno, "cannot bind %s: %m", path);
		if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return failf(ret_error, -errno, "cannot bind %s: %m", path);
		if (!S_ISSOCK(st.st_mode))
			return failf(ret_error, -EEXIST, "%s exists and is not a socket", path);
		if (socket_is_live(name))
			return failf(ret_error, -EADDRINUSE,
				     "%s is another live socket (does another container share this root file "
				     "system without a private /run?)", path);
		if (unlinkat(dir, name, 0) < 0 && errno != ENOENT)
			return failf(ret_error, -errno, "cannot remove the stale socket %s: %m", path);
	}
}

int channel_create(pid_t pid, int pidfd, const char *rootfs, const char *path, char **ret_error)
{
	_cleanup_close_ int root = -1, dir = -1, fd = -1;
	_cleanup_free_ char *dirname = NULL;
	const char *slash = strrchr(path, '/');
	uid_t uid;
	gid_t gid;
	int r;

	*ret_error = NULL;
	r = idmap_container_root(pid, &uid, &gid);
	if (r < 0)
		return failf(ret_error, r, "cannot tell who root is in the container: /proc/%d/uid_map, gid_map: %s",
			     (int)pid, strerror(-r));
	root = open_rootfs(pid, pidfd, rootfs, ret_error);
	if (root < 0)
		return root;

	dirname = strndup(path + 1, (size_t)(slash - path - (slash > path ? 1 : 0)));
	if (!dirname)
		return -ENOMEM;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return failf(ret_error, -errno, "socket: %m");

	r = set_fsids(uid, gid);
	if (r < 0)
		return failf(ret_error, r, "cannot take the container root's ids %u:%u", (unsigned)uid,
			     (unsigned)gid);
	dir = make_dirs(root, dirname, ret_error);
	r = dir < 0 ? dir : bind_in(fd, dir, slash + 1, path, ret_error);
	restore_fsids();
	if (r < 0)
		return r;
	if (listen(fd, CHANNEL_BACKLOG) < 0)
		return failf(ret_error, -errno, "cannot listen on %s: %m", path);
	return TAKE_FD(fd);
}
