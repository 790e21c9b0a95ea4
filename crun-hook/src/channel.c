/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdint.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include "channel.h"
#include "idmap.h"
#include "mshare-common/macro.h"
#include "mshare-common/strprintf.h"
#include "mshare-common/strv.h"
#include "regions.h"

#define CHANNEL_BACKLOG 64
/* The most directories a channel's path can have: "/a/b/.../x". */
#define DEPTH_MAX (CHANNEL_PATH_MAX / 2 + 1)

static int openat2_retry(int dirfd, const char *path, const struct open_how *how)
{
	long fd;

	do
		fd = syscall(SYS_openat2, dirfd, path, how, sizeof(*how));
	while (fd < 0 && errno == EAGAIN); /* a rename or mount raced with the lookup */
	return fd < 0 ? -errno : (int)fd;
}

/* An O_PATH descriptor of path below dirfd, which serves as its root:
 * absolute symlinks and ".." stay under it. */
static int open_in_root(int dirfd, const char *path, int flags)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | (uint64_t)flags,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};

	return openat2_retry(dirfd, path, &how);
}

/*
 * An O_PATH descriptor of directory name, one component, in parent: never
 * a symbolic link (-ELOOP), and a mount point (-EXDEV) only if may_cross.
 */
static int open_step(int parent, const char *name, bool may_cross)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
			   (may_cross ? 0 : RESOLVE_NO_XDEV),
	};

	return openat2_retry(parent, name, &how);
}

/* Where a file is: its mount and its inode in there. */
struct place {
	uint64_t mnt_id;
	uint64_t ino;
};

static int place_of(int fd, struct place *ret)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_INO | STATX_MNT_ID, &stx) < 0)
		return -errno;
	/* Linux 5.8; openat2() alone would do with 5.6 */
	if (!(stx.stx_mask & STATX_MNT_ID))
		return -EOPNOTSUPP;
	*ret = (struct place){ stx.stx_mnt_id, stx.stx_ino };
	return 0;
}

static bool place_eq(const struct place *a, const struct place *b)
{
	return a->mnt_id == b->mnt_id && a->ino == b->ino;
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
	r = open_in_root(root, rootfs, O_DIRECTORY);
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

/*
 * Where config.json's read-only mounts and linux.readonlyPaths are, found
 * as the runtime found them: below the root file system, through its
 * symbolic links. A symlink in the image (/var/run -> /run) puts a mount
 * somewhere else than its destination says; the walk must not take that
 * place for a writable one. Those that cannot be found are nowhere on the
 * channel's path, which can be.
 */
struct readonly_place {
	struct place place;
	const char *what;	/* the destination or readonlyPaths entry */
	const char *option;	/* the mount's option; NULL for readonlyPaths */
};

struct readonly_places {
	struct readonly_place *items;
	size_t n;
};

static void readonly_places_done(struct readonly_places *l)
{
	free(l->items);
}

static void readonly_places_add(int root, struct readonly_places *l, const char *what,
				const char *option)
{
	_cleanup_close_ int fd = open_in_root(root, what, 0);

	if (fd >= 0 && place_of(fd, &l->items[l->n].place) == 0) {
		l->items[l->n].what = what;
		l->items[l->n].option = option;
		l->n++;
	}
}

static int readonly_places_find(int root, const struct oci_config *config,
				struct readonly_places *ret)
{
	size_t n = config->n_mounts + strv_length(config->readonly_paths);

	ret->n = 0;
	ret->items = calloc(n ?: 1, sizeof(*ret->items));
	if (!ret->items)
		return -ENOMEM;
	for (size_t i = 0; i < config->n_mounts; i++) {
		const char *option = oci_mount_readonly(&config->mounts[i]);

		if (option)
			readonly_places_add(root, ret, config->mounts[i].destination, option);
	}
	for (size_t i = 0; config->readonly_paths && config->readonly_paths[i]; i++)
		readonly_places_add(root, ret, config->readonly_paths[i], NULL);
	return 0;
}

#define WRITABLE_HINT "point io.mshare.socket at a writable place such as " CHANNEL_PATH_DEFAULT

/* Whether config.json makes directory path read-only; with *ret_error if so. */
static int check_config_writable(const struct oci_config *config, const char *dir, const char *path,
				 char **ret_error)
{
	struct oci_readonly ro = oci_config_readonly(config, path);

	switch (ro.kind) {
	case OCI_READONLY_ROOT:
		return failf(ret_error, -EROFS,
			     "the channel's directory %s is on the read-only root file system "
			     "(config.json has root.readonly); give the container a tmpfs on /run, "
			     "or point io.mshare.socket at a writable mount", dir);
	case OCI_READONLY_MOUNT:
		return failf(ret_error, -EROFS,
			     "the channel's directory %s is on a read-only mount "
			     "(mount %s has \"%s\"); " WRITABLE_HINT, dir, ro.what, ro.option);
	case OCI_READONLY_PATH:
		return failf(ret_error, -EROFS,
			     "the channel's directory %s is on a read-only path "
			     "(linux.readonlyPaths has %s); " WRITABLE_HINT, dir, ro.what);
	case OCI_WRITABLE:
		break;
	}
	return 0;
}

/*
 * The walk of the channel's directory, one component at a time. The cover
 * is the mount the last crossing entered (or the root file system): the
 * directory is on it. seen are the places from there on.
 */
struct walk {
	const struct oci_config *config;
	const struct readonly_places *readonly;
	const char *dir;
	size_t cover_len;		/* dir's prefix that is the cover's mount point */
	struct place seen[DEPTH_MAX + 1];
	size_t seen_len[DEPTH_MAX + 1];	/* the length of dir's prefix that each one is */
	size_t n_seen;
};

/* "/" for the root file system's prefix of length 0. */
#define PREFIX(w, len) (int)((len) ?: 1), (len) ? (w)->dir : "/"

/*
 * Before the first directory is made, and before the socket is (config.json
 * was asked about the directory already): whether the container can write
 * on the mount that the directory really is on (the cover), which is not
 * the one config.json says if that one is not mounted where it says; and
 * whether a read-only mount or path found through a symlink is the cover or
 * on the way from it.
 */
static int walk_check(const struct walk *w, char **ret_error)
{
	_cleanup_free_ char *cover = strndup(w->cover_len ? w->dir : "/", w->cover_len ?: 1);
	int r;

	if (!cover)
		return -ENOMEM;
	r = check_config_writable(w->config, w->dir, cover, ret_error);
	if (r < 0)
		return r;
	for (size_t i = 0; i < w->n_seen; i++)
		for (size_t j = 0; j < w->readonly->n; j++) {
			const struct readonly_place *ro = &w->readonly->items[j];
			size_t len = w->seen_len[i];

			if (!place_eq(&ro->place, &w->seen[i]))
				continue;
			if (ro->option)
				return failf(ret_error, -EROFS,
					     "the channel's directory %s is on a read-only mount "
					     "(mount %s has \"%s\" and is on %.*s, "
					     "through a symbolic link); " WRITABLE_HINT,
					     w->dir, ro->what, ro->option, PREFIX(w, len));
			return failf(ret_error, -EROFS,
				     "the channel's directory %s is on a read-only path "
				     "(linux.readonlyPaths has %s, which is %.*s, "
				     "through a symbolic link); " WRITABLE_HINT,
				     w->dir, ro->what, PREFIX(w, len));
		}
	return 0;
}

static int walk_see(struct walk *w, int fd, size_t len)
{
	int r;

	if (w->n_seen > DEPTH_MAX)
		return -ENAMETOOLONG;
	r = place_of(fd, &w->seen[w->n_seen]);
	if (r < 0)
		return r;
	w->seen_len[w->n_seen++] = len;
	return 0;
}

/*
 * Opens each directory of dir (absolute, as the container sees it) from
 * the root file system root, one component at a time, making those that
 * are missing, and returns the last one.
 */
static int walk_dirs(int root, const struct oci_config *config,
		     const struct readonly_places *readonly, const char *dir, char **ret_error)
{
	_cleanup_free_ struct walk *w = calloc(1, sizeof(*w));
	_cleanup_free_ char *prefix = strdup(dir);
	_cleanup_close_ int parent = -1;
	bool checked = false;
	int r;

	if (!w || !prefix)
		return -ENOMEM;
	*w = (struct walk){ .config = config, .readonly = readonly, .dir = dir };
	parent = fcntl(root, F_DUPFD_CLOEXEC, 3);
	if (parent < 0)
		return failf(ret_error, -errno, "dup: %m");
	r = walk_see(w, parent, 0);
	if (r < 0)
		return failf(ret_error, r, "cannot stat the root file system: %s", strerror(-r));

	for (char *p = prefix + 1; *p;) {
		char *slash = strchr(p, '/');
		const char *name = p;
		size_t len;
		bool may_cross;
		int fd;

		if (slash)
			*slash = '\0';
		len = strlen(prefix);
		/* Only into a mount that config.json has, none once directories are made. */
		may_cross = !checked && oci_config_mount_at(config, prefix);
		fd = open_step(parent, name, may_cross);
		if (fd == -ENOENT) {
			if (!checked) {
				r = walk_check(w, ret_error);
				if (r < 0)
					return r;
				checked = true;
			}
			if (mkdirat(parent, name, 0755) < 0 && errno != EEXIST)
				return failf(ret_error, -errno, "cannot make directory %s: %m",
					     prefix);
			fd = open_step(parent, name, false);
		}
		if (fd == -ELOOP)
			return failf(ret_error, fd, "%s is a symbolic link: the channel's path "
				     "must not go through one", prefix);
		if (fd == -EXDEV)
			return failf(ret_error, fd, "%s is a mount point that config.json does not "
				     "list: the hook does not enter mounts it was not told about",
				     prefix);
		if (fd < 0)
			return failf(ret_error, fd, "cannot open directory %s: %s", prefix,
				     strerror(-fd));
		safe_close(parent);
		parent = fd;
		if (!checked) {
			uint64_t parent_mnt = w->seen[w->n_seen - 1].mnt_id;

			r = walk_see(w, fd, len);
			if (r < 0)
				return failf(ret_error, r, "cannot stat %s: %s", prefix,
					     strerror(-r));
			if (w->seen[w->n_seen - 1].mnt_id != parent_mnt) {
				/* Into a mount: the directory is on it, or on a deeper one. */
				w->seen[0] = w->seen[w->n_seen - 1];
				w->seen_len[0] = len;
				w->n_seen = 1;
				w->cover_len = len;
			}
		}
		if (!slash)
			break;
		*slash = '/';
		p = slash + 1;
	}
	if (!checked) {
		r = walk_check(w, ret_error);
		if (r < 0)
			return r;
	}
	return TAKE_FD(parent);
}

int channel_probe(int dirfd, const char *name, struct stat *ret_st)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -1, s = -1;
	struct stat st;

	fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	if (!S_ISSOCK(st.st_mode))
		return -ENOTSOCK;
	/* The descriptor's /proc link leads to that very inode, whatever the
	 * name is by now; connect() accepts it for a socket. */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d", fd);
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0)
		return 1; /* cannot tell: leave it alone */
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0 || errno != ECONNREFUSED)
		return 1; /* listening (EAGAIN: its backlog is full), or cannot tell */
	if (ret_st)
		*ret_st = st;
	return 0;
}

/* Binds fd to name in the directory dir, replacing a stale socket, and
 * records which inode it bound. */
static int bind_in(int fd, int dir, const char *name, const char *path, struct stat *ret_st,
		   char **ret_error)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int cwd = -1;
	struct stat st, now;
	mode_t old;
	int r;

	if (strlen(name) >= sizeof(sa.sun_path))
		return failf(ret_error, -ENAMETOOLONG, "'%s' is too long a socket name", name);
	strcpy(sa.sun_path, name);
	/* A relative name, from the socket's directory: no path to resolve
	 * again, and it always fits sun_path. */
	cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fchdir(dir) < 0)
		return failf(ret_error, -errno, "cannot enter the directory of %s: %m", path);
	for (int attempt = 0;; attempt++) {
		/*
		 * The socket is 0666: any process of the container may
		 * connect. mshare-owner serves a peer only if it is a process
		 * of this container (its cgroup or one below), so the hook's
		 * part is only to put the socket where the container writes.
		 */
		old = umask(0111);
		r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
		umask(old);
		if (r == 0)
			break;
		if (errno != EADDRINUSE || attempt > 0) {
			r = failf(ret_error, -errno, "cannot bind %s: %m", path);
			goto out;
		}
		r = channel_probe(dir, name, &st);
		if (r == -ELOOP)
			r = failf(ret_error, r, "%s is a symbolic link", path);
		else if (r == -ENOTSOCK)
			r = failf(ret_error, -EEXIST, "%s exists and is not a socket", path);
		else if (r < 0)
			r = failf(ret_error, r, "cannot look at %s: %s", path, strerror(-r));
		else if (r > 0)
			r = failf(ret_error, -EADDRINUSE,
				  "%s is another live socket (does another container share "
				  "this root file system without a private /run?)", path);
		else if (fstatat(dir, name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
			 (now.st_dev != st.st_dev || now.st_ino != st.st_ino))
			r = failf(ret_error, -EBUSY, "%s changed while it was looked at", path);
		else if (unlinkat(dir, name, 0) < 0 && errno != ENOENT)
			r = failf(ret_error, -errno, "cannot remove the stale socket %s: %m", path);
		if (r < 0)
			goto out;
	}
	if (fstatat(dir, name, ret_st, AT_SYMLINK_NOFOLLOW) < 0)
		r = failf(ret_error, -errno, "cannot stat %s: %m", path);
	else if (!S_ISSOCK(ret_st->st_mode))
		r = failf(ret_error, -EBUSY, "%s was replaced right after it was bound", path);
out:
	if (cwd >= 0)
		(void)!fchdir(cwd);
	return r;
}

void channel_done(struct channel *ch)
{
	safe_close(ch->listen_fd);
	safe_close(ch->dir_fd);
	free(ch->name);
	*ch = CHANNEL_NULL;
}

int channel_remove(struct channel *ch)
{
	struct stat st;
	int r;

	if (ch->dir_fd < 0 || !ch->name)
		return 0;
	r = set_fsids(ch->uid, ch->gid);
	if (r < 0)
		return r;
	if (fstatat(ch->dir_fd, ch->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		r = errno == ENOENT ? 0 : -errno;
	else if (!S_ISSOCK(st.st_mode) || st.st_dev != ch->dev || st.st_ino != ch->ino)
		r = 0; /* not the socket bound: someone else's now */
	else if (unlinkat(ch->dir_fd, ch->name, 0) < 0)
		r = errno == ENOENT ? 0 : -errno;
	else
		r = 1;
	restore_fsids();
	return r;
}

int channel_create(pid_t pid, int pidfd, const struct oci_config *config, const char *path,
		   struct channel *ret, char **ret_error)
{
	_cleanup_(readonly_places_done) struct readonly_places readonly = {};
	_cleanup_(channel_done) struct channel ch = CHANNEL_NULL;
	_cleanup_close_ int root = -1;
	_cleanup_free_ char *dir = NULL;
	const char *slash = strrchr(path, '/');
	struct stat st;
	int r;

	*ret_error = NULL;
	*ret = CHANNEL_NULL;
	r = idmap_container_root(pid, &ch.uid, &ch.gid);
	if (r < 0)
		return failf(ret_error, r, "cannot tell who root is in the container: /proc/%d/uid_map, gid_map: %s",
			     (int)pid, strerror(-r));
	dir = slash > path ? strndup(path, (size_t)(slash - path)) : strdup("/");
	ch.name = strdup(slash + 1);
	if (!dir || !ch.name)
		return -ENOMEM;
	/* Nothing is made where config.json alone says the container cannot write. */
	r = check_config_writable(config, dir, dir, ret_error);
	if (r < 0)
		return r;
	root = open_rootfs(pid, pidfd, config->root_path, ret_error);
	if (root < 0)
		return root;
	r = readonly_places_find(root, config, &readonly);
	if (r < 0)
		return r;
	ch.listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (ch.listen_fd < 0)
		return failf(ret_error, -errno, "socket: %m");

	r = set_fsids(ch.uid, ch.gid);
	if (r < 0)
		return failf(ret_error, r, "cannot take the container root's ids %u:%u",
			     (unsigned)ch.uid, (unsigned)ch.gid);
	ch.dir_fd = walk_dirs(root, config, &readonly, dir, ret_error);
	r = ch.dir_fd < 0 ? ch.dir_fd :
			    bind_in(ch.listen_fd, ch.dir_fd, ch.name, path, &st, ret_error);
	restore_fsids();
	if (r < 0)
		return r;
	ch.dev = st.st_dev;
	ch.ino = st.st_ino;
	if (listen(ch.listen_fd, CHANNEL_BACKLOG) < 0) {
		r = failf(ret_error, -errno, "cannot listen on %s: %m", path);
		(void)channel_remove(&ch);
		return r;
	}
	*ret = ch;
	ch = CHANNEL_NULL;
	return 0;
}
