/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "channel.h"
#include "crash.h"
#include "log.h"
#include "peer.h"
#include "server.h"
#include "state.h"

static void channel_free(struct channel *ch)
{
	free(ch->id);
	free(ch->name);
	for (size_t i = 0; i < ch->n_annotations; i++) {
		free((char *)ch->annotations[i].key);
		free((char *)ch->annotations[i].value);
	}
	free(ch->annotations);
	for (size_t i = 0; i < ch->n_regions; i++)
		free(ch->regions[i].region);
	free(ch->regions);
	free(ch->cgroup);
	free(ch);
}

static void channel_unlink(struct channel *ch)
{
	struct server *s = ch->server;

	if (ch->prev)
		ch->prev->next = ch->next;
	else
		s->channels = ch->next;
	if (ch->next)
		ch->next->prev = ch->prev;
	ch->prev = ch->next = NULL;
}

struct channel *channel_find(struct server *s, const char *id)
{
	for (struct channel *ch = s->channels; ch; ch = ch->next)
		if (!ch->dead && streq(ch->id, id))
			return ch;
	return NULL;
}

enum access_mode channel_registered_mode(const struct channel *ch, const char *region)
{
	for (size_t i = 0; i < ch->n_regions; i++)
		if (streq(ch->regions[i].region, region))
			return ch->regions[i].mode;
	return ACCESS_NONE;
}

struct container_identity channel_identity(const struct channel *ch)
{
	return (struct container_identity){
		.name = ch->name,
		.id = ch->id,
		.annotations = ch->annotations,
		.n_annotations = ch->n_annotations,
	};
}

bool channel_admits(const struct channel *ch, const char *cgroup)
{
	return !ch->dead && cgroup && cgroup_is_below(cgroup, ch->cgroup);
}

static void channel_close_fds(struct channel *ch)
{
	watch_remove(ch->server->epoll_fd, &ch->listen);
	watch_remove(ch->server->epoll_fd, &ch->process);
	ch->listen.fd = safe_close(ch->listen.fd);
	ch->process.fd = safe_close(ch->process.fd);
}

/* The socket and pidfd of channel serial into the fd store (fds: both),
 * or (fds NULL) out of it. */
static void channel_store_serial(struct server *s, uint64_t serial, const int fds[2])
{
	if (!s->store->enabled)
		return;
	for (int pidfd = 0; pidfd < 2; pidfd++) {
		_cleanup_free_ char *name = fdstore_channel_name(serial, pidfd);

		if (!name) {
			log_oom();
			continue;
		}
		if (fds)
			(void)fdstore_put(s->store, name, fds[pidfd]);
		else
			(void)fdstore_remove(s->store, name);
	}
}

/* The channel's socket and pidfd into the fd store, or out of it. */
static void channel_store(struct channel *ch, bool put)
{
	channel_store_serial(ch->server, ch->serial, put ? (int[2]){ ch->listen.fd, ch->process.fd } : NULL);
}

void channel_close(struct channel *ch, const char *why)
{
	struct server *s = ch->server;

	if (ch->dead)
		return;
	log_info("Container %s%s%s%s, pid %d: %s; its channel is closed.", ch->id, ch->name ? " (" : "",
		 strempty(ch->name), ch->name ? ")" : "", (int)ch->pid, why);
	/* Else the store would keep the socket open, and connections to it
	 * would wait instead of being refused. */
	channel_store(ch, false);
	/* The hook that sent them may still hold the same files: the epoll
	 * registrations go explicitly. Events already fetched in this batch
	 * see ch->dead. */
	channel_close_fds(ch);
	ch->dead = true;
	s->n_channels--;
	if (s->save)
		s->save(s->userdata);
}

void channel_collect(struct server *s)
{
	struct channel *ch = s->channels, *next;

	for (; ch; ch = next) {
		next = ch->next;
		if (ch->dead && ch->n_connections == 0) {
			channel_unlink(ch);
			channel_free(ch);
		}
	}
}

static void held_channel_free(struct held_channel *h)
{
	watch_remove(h->server->epoll_fd, &h->process);
	safe_close(h->process.fd);
	safe_close(h->listen_fd);
	free(h);
}

static void held_channel_unlink(struct held_channel *h)
{
	struct server *s = h->server;

	for (struct held_channel **p = &s->held_channels; *p; p = &(*p)->next)
		if (*p == h) {
			*p = h->next;
			s->n_held_channels--;
			return;
		}
}

void channel_close_all(struct server *s)
{
	while (s->held_channels) {
		struct held_channel *h = s->held_channels;

		held_channel_unlink(h);
		held_channel_free(h);
	}
	while (s->channels) {
		struct channel *ch = s->channels;

		if (!ch->dead) {
			channel_close_fds(ch);
			s->n_channels--;
		}
		channel_unlink(ch);
		channel_free(ch);
	}
}

static void channel_dispatch_listen(struct watch *w, uint32_t events)
{
	struct channel *ch = (struct channel *)((char *)w - offsetof(struct channel, listen));

	(void)events;
	if (!ch->dead)
		server_accept(ch->server, w, ch);
}

static void channel_dispatch_process(struct watch *w, uint32_t events)
{
	struct channel *ch = (struct channel *)((char *)w - offsetof(struct channel, process));

	(void)events;
	channel_close(ch, "its process exited");
}

/* The pid of a pidfd's process (in our pid namespace), or -ESRCH once it
 * has exited, -EBADF if fd is no pidfd. */
static int pidfd_pid(int pidfd)
{
	_cleanup_fclose_ FILE *f = NULL;
	char path[64], line[128];
	long pid = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", pidfd);
	n = readlink(path, line, sizeof(line) - 1);
	if (n < 0)
		return -errno;
	line[n] = 0;
	if (!streq(line, "anon_inode:[pidfd]"))
		return -EBADF;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Pid: %ld", &pid) == 1)
			break;
	/* -1: the process has exited. 0: not in our pid namespace, where
	 * nothing can be told about it either. */
	if (pid <= 0)
		return -ESRCH;
	n = pidfd_is_alive(pidfd);
	if (n <= 0)
		return n < 0 ? (int)n : -ESRCH;
	return (int)pid;
}

/* A held channel's process exited: the proof that it may go. Freed here:
 * its one watch is all that an event of this batch can refer to. */
static void held_channel_dispatch(struct watch *w, uint32_t events)
{
	struct held_channel *h = (struct held_channel *)((char *)w - offsetof(struct held_channel, process));

	(void)events;
	log_info("Container channel %" PRIu64 " (pid %d), held without a registration: its process exited; "
		 "it leaves the fd store.", h->serial, (int)h->pid);
	channel_store_serial(h->server, h->serial, NULL);
	held_channel_unlink(h);
	held_channel_free(h);
}

int channel_hold(struct server *s, uint64_t serial, int listen_fd, int pidfd)
{
	_cleanup_close_ int lfd = listen_fd, pfd = pidfd;
	struct held_channel *h;
	int pid, k;

	h = calloc(1, sizeof(*h));
	if (!h)
		return log_oom();
	pid = pidfd_pid(pfd);
	*h = (struct held_channel){
		.process = { .fd = TAKE_FD(pfd), .dispatch = held_channel_dispatch },
		.listen_fd = TAKE_FD(lfd),
		.serial = serial,
		.pid = pid > 0 ? pid : 0,
		.server = s,
	};
	/* Level-triggered: a process gone already is reported at once. */
	k = watch_add(s->epoll_fd, &h->process, EPOLLIN);
	if (k < 0) {
		held_channel_free(h);
		return log_error_errno(k, "Container channel %" PRIu64 ": cannot watch its process: %m", serial);
	}
	h->next = s->held_channels;
	s->held_channels = h;
	s->n_held_channels++;
	/* A new registration must not take its names in the store. */
	if (s->next_serial <= serial)
		s->next_serial = serial + 1;
	log_warning("Container channel %" PRIu64 " (pid %d) is in the fd store, but no saved state names its "
		    "registration (the service manager refused the saves that did, or mshare-owner stopped "
		    "before confirming it): it cannot be served safely and is not; it stays in the store "
		    "until its process exits.", serial, (int)h->pid);
	return 0;
}

/* Copies the container and its regions out of req, leaving req without them. */
static int channel_take(struct channel *ch, struct proto_request *req)
{
	ch->id = TAKE_PTR(req->container_id);
	ch->name = TAKE_PTR(req->container_name);
	ch->regions = TAKE_PTR(req->regions);
	ch->n_regions = req->n_regions;
	req->n_regions = 0;
	ch->annotations = calloc(req->n_annotations ?: 1, sizeof(*ch->annotations));
	if (!ch->annotations)
		return -ENOMEM;
	for (size_t i = 0; i < req->n_annotations; i++) {
		ch->annotations[i] = (struct container_annotation){
			.key = TAKE_PTR(req->annotations[i].key),
			.value = TAKE_PTR(req->annotations[i].value),
		};
		ch->n_annotations++;
	}
	return 0;
}

/*
 * The cgroup the container's process is in, in *ret; returns 1 if it is a
 * cgroup of its own, 0 if not: the root cgroup, or a cgroup that holds the
 * registering hook or this daemon (a container left in the runtime's
 * cgroup) would admit strangers.
 */
static int container_cgroup(int pidfd, pid_t pid, const char *registrar_cgroup, char **ret)
{
	_cleanup_free_ char *cgroup = NULL, *own = NULL;
	_cleanup_close_ int self = -1;
	int k;

	k = pidfd_cgroup(pidfd, pid, &cgroup);
	if (k < 0)
		return k;
	self = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (self < 0)
		return -errno;
	k = pidfd_cgroup(self, getpid(), &own);
	if (k < 0)
		return k;
	k = !streq(cgroup, "/") && !cgroup_is_below(own, cgroup) &&
	    !cgroup_is_below(registrar_cgroup, cgroup);
	*ret = TAKE_PTR(cgroup);
	return k;
}

/* Watches a new channel's descriptors and adds it to the server's list;
 * frees it on failure. */
static int channel_start(struct server *s, struct channel *ch)
{
	int k;

	/* Edge-triggered: server_accept() takes a burst and re-arms. Queued
	 * connections (a restart) are reported at once. */
	k = watch_add(s->epoll_fd, &ch->listen, EPOLLIN | EPOLLET);
	if (k == 0)
		k = watch_add(s->epoll_fd, &ch->process, EPOLLIN);
	if (k < 0) {
		channel_close_fds(ch);
		channel_free(ch);
		return k;
	}
	ch->next = s->channels;
	if (s->channels)
		s->channels->prev = ch;
	s->channels = ch;
	s->n_channels++;
	return 0;
}

/*
 * A new channel of server s for the container process pid, on the
 * listening socket lfd (made non-blocking here; the caller still owns it
 * and puts it in the channel), with no descriptors yet.
 */
static int channel_alloc(struct server *s, int lfd, uint64_t serial, int pid,
			 struct channel **ret)
{
	struct channel *ch;
	int flags;

	flags = fcntl(lfd, F_GETFL);
	if (flags < 0 || fcntl(lfd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -errno;
	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return -ENOMEM;
	*ch = (struct channel){
		.listen = { .fd = -1, .dispatch = channel_dispatch_listen },
		.process = { .fd = -1, .dispatch = channel_dispatch_process },
		.serial = serial,
		.server = s,
		.pid = pid,
	};
	*ret = ch;
	return 0;
}

int channel_register(struct server *s, struct proto_request *req, int listen_fd, int pidfd,
		     const char *registrar_cgroup, struct channel **ret, char **ret_error)
{
	_cleanup_close_ int lfd = listen_fd, pfd = pidfd;
	_cleanup_free_ char *cgroup = NULL;
	struct channel *ch;
	int pid, k;

	if (channel_find(s, req->container_id))
		return -EEXIST;
	if (s->n_channels >= s->max_channels)
		return -ENOSPC;
	/* Else systemd would drop its descriptors without a word, and a
	 * restart would lose the registration. */
	if (fdstore_reserve(s->store, 2) < 0)
		return error_set(ret_error, -ENOSPC, "the service manager's fd store would hold more than %zu "
				 "entries (--fdstore-max=, FileDescriptorStoreMax=): the registration would not "
				 "survive a restart of mshare-owner", s->store->max);
	if (sd_is_socket_unix(lfd, SOCK_SEQPACKET, 1, NULL, 0) <= 0)
		return -EBADF;
	pid = pidfd_pid(pfd);
	if (pid < 0)
		return pid;
	k = container_cgroup(pfd, pid, registrar_cgroup, &cgroup);
	if (k == 0)
		return error_set(ret_error, -EPERM, "its process %d is in cgroup %s, which is not a cgroup "
				 "of its own (the root, or one that holds the hook or mshare-owner): its "
				 "processes could not be told from others", pid, cgroup);
	if (k == -EOPNOTSUPP)
		return error_set(ret_error, k, "the cgroup of its process %d cannot be told (cgroup v2 "
				 "is needed, outside a cgroup namespace)", pid);
	if (k < 0)
		return k;
	k = channel_alloc(s, lfd, s->next_serial++, pid, &ch);
	if (k < 0)
		return k;
	ch->cgroup = TAKE_PTR(cgroup);
	k = channel_take(ch, req);
	if (k < 0) {
		channel_free(ch);
		return k;
	}
	ch->listen.fd = TAKE_FD(lfd);
	ch->process.fd = TAKE_FD(pfd);
	k = channel_start(s, ch);
	if (k < 0)
		return k;
	/* The caller saves the state before it replies: a crash before
	 * that leaves these in the store for the next start to drop, and
	 * the hook without a reply fails the container's start. */
	channel_store(ch, true);
	crash_point("register-stored");
	*ret = ch;
	return 0;
}

int channel_adopt(struct server *s, struct state_container *c, int listen_fd, int pidfd,
		  struct channel **ret)
{
	_cleanup_close_ int lfd = listen_fd, pfd = pidfd;
	struct channel *ch;
	int pid, k;

	if (sd_is_socket_unix(lfd, SOCK_SEQPACKET, 1, NULL, 0) <= 0)
		return -EBADF;
	pid = pidfd_pid(pfd);
	if (pid < 0)
		return pid;
	k = channel_alloc(s, lfd, c->serial, pid, &ch);
	if (k < 0)
		return k;
	ch->listen.fd = TAKE_FD(lfd);
	ch->process.fd = TAKE_FD(pfd);
	ch->id = TAKE_PTR(c->id);
	ch->name = TAKE_PTR(c->name);
	ch->annotations = TAKE_PTR(c->annotations);
	ch->n_annotations = c->n_annotations;
	ch->regions = TAKE_PTR(c->regions);
	ch->n_regions = c->n_regions;
	ch->cgroup = TAKE_PTR(c->cgroup);
	c->n_annotations = c->n_regions = 0;
	/* Serials go on from the highest one adopted. */
	if (s->next_serial <= ch->serial)
		s->next_serial = ch->serial + 1;
	k = channel_start(s, ch);
	if (k < 0)
		return k;
	*ret = ch;
	return 0;
}
