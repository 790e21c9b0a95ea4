/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <inttypes.h>
#include <sys/socket.h>

#include "channel.h"
#include "crash.h"
#include "log.h"
#include "mshare-common/fd-pass.h"
#include "mshare-common/protocol.h"
#include "peer.h"
#include "policy.h"
#include "server.h"

#ifndef MSHARE_HELPER_VERSION
#define MSHARE_HELPER_VERSION "unknown"
#endif

/* Accepting pauses this long after running out of descriptors or memory. */
#define LISTEN_PAUSE_USEC (100 * USEC_PER_MSEC)
/* At most one "too many connections" line per this long. */
#define REFUSAL_LOG_INTERVAL_USEC (10 * USEC_PER_SEC)
/* Accepted per wakeup, so that a flood does not starve the connections. */
#define ACCEPT_BURST 64
/* Messages read from a refused connection before it is closed, at most. */
#define REFUSE_DRAIN_MAX 8
/* Descriptors a request may carry (register: 2); more are a protocol error. */
#define REQUEST_MAX_FDS 4

struct conn {
	struct watch watch;	/* first: the epoll data pointer */
	struct server *server;
	struct peer peer;
	struct channel *channel;	/* the container channel it came in on, or NULL */
	usec_t deadline;
	struct conn *prev, *next;	/* in server->head..tail */
	bool linked;
	/* A reply the socket had no room for yet, sent on EPOLLOUT. */
	char *out;
	size_t out_len;
	int out_fd;
	bool close_after;	/* once out is sent */
};

/* ---- connection bookkeeping ---- */

static void conn_unlink(struct conn *c)
{
	struct server *s = c->server;

	if (c->prev)
		c->prev->next = c->next;
	else
		s->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		s->tail = c->prev;
	c->prev = c->next = NULL;
	c->linked = false;
}

/* Every deadline is "last activity + timeout": appending keeps the order. */
static void conn_touch(struct conn *c, usec_t now)
{
	struct server *s = c->server;

	if (c->linked)
		conn_unlink(c);
	c->prev = s->tail;
	if (s->tail)
		s->tail->next = c;
	else
		s->head = c;
	s->tail = c;
	c->linked = true;
	c->deadline = now + s->timeout;
}

static struct uid_count *uid_count_find(struct server *s, uid_t uid)
{
	for (size_t i = 0; i < s->n_uids; i++)
		if (s->uids[i].uid == uid)
			return &s->uids[i];
	return NULL;
}

static size_t uid_connections(struct server *s, uid_t uid)
{
	struct uid_count *u = uid_count_find(s, uid);

	return u ? u->n : 0;
}

static int uid_count_add(struct server *s, uid_t uid)
{
	struct uid_count *u = uid_count_find(s, uid), *t;

	if (u) {
		u->n++;
		return 0;
	}
	t = reallocarray(s->uids, s->n_uids + 1, sizeof(*s->uids));
	if (!t)
		return -ENOMEM;
	s->uids = t;
	s->uids[s->n_uids++] = (struct uid_count){ .uid = uid, .n = 1 };
	return 0;
}

static void uid_count_drop(struct server *s, uid_t uid)
{
	struct uid_count *u = uid_count_find(s, uid);

	if (u && --u->n == 0)
		*u = s->uids[--s->n_uids];
}

/* Only the owner socket's non-root peers are counted by uid. */
static bool conn_counts_by_uid(const struct conn *c)
{
	return !c->channel && c->peer.uid != 0;
}

static void conn_free(struct conn *c)
{
	struct server *s = c->server;

	conn_unlink(c);
	/* Closing drops the epoll registration too. */
	safe_close(c->watch.fd);
	safe_close(c->out_fd);
	free(c->out);
	peer_done(&c->peer);
	if (conn_counts_by_uid(c))
		uid_count_drop(s, c->peer.uid);
	if (c->channel)
		c->channel->n_connections--;
	s->n_connections--;
	free(c);
}

/* ---- sending ---- */

/* One reply, with pass_fd if it is >= 0; never blocks (EAGAIN: the peer's
 * queue is full). */
static int send_message(int fd, const char *buf, size_t len, int pass_fd)
{
	return send_fds(fd, buf, len, &pass_fd, pass_fd >= 0 ? 1 : 0, MSG_DONTWAIT);
}

/*
 * Sends text, a reply (with pass_fd, if >= 0), and frees it. If the peer's
 * queue is full, the reply is kept and sent when the socket is writable; no
 * further request is read meanwhile. Returns < 0 if the connection is to be
 * closed.
 */
static int conn_send(struct conn *c, char *text, size_t len, int pass_fd, bool close_after)
{
	_cleanup_free_ char *t = text;
	int k;

	k = send_message(c->watch.fd, t, len, pass_fd);
	if (k == -EAGAIN) {
		if (pass_fd >= 0) {
			/* The region may be retired before the reply goes out:
			 * the reply holds its own descriptor. */
			c->out_fd = fcntl(pass_fd, F_DUPFD_CLOEXEC, 3);
			if (c->out_fd < 0)
				return log_warning_errno(errno, "Cannot keep a reply to pid %d: %m",
							 (int)c->peer.pid);
		}
		c->out = TAKE_PTR(t);
		c->out_len = len;
		c->close_after = close_after;
		k = watch_modify(c->server->epoll_fd, &c->watch, EPOLLOUT);
		return k < 0 ? log_warning_errno(k, "Cannot wait for pid %d to read: %m", (int)c->peer.pid) : 0;
	}
	if (k < 0) {
		/* The client went away (EPIPE, ECONNRESET) or broke: its loss. */
		log_debug_errno(k, "Cannot reply to pid %d (%s): %m", (int)c->peer.pid, c->peer.comm);
		return k;
	}
	return close_after ? -ECONNABORTED : 0;
}

/* A refusal, and with close_after the reply to a malformed request, after
 * which the connection is closed. */
_printf_(4, 5) static int conn_error(struct conn *c, bool close_after, int error, const char *format, ...)
{
	_cleanup_free_ char *message = NULL;
	char *text;
	va_list ap;
	size_t len;
	int k;

	va_start(ap, format);
	message = vstrprintf(format, ap);
	va_end(ap);
	if (!message)
		return log_oom();
	k = proto_error_encode(error, message, &text, &len);
	if (k < 0)
		return log_error_errno(k, "Cannot encode a reply to pid %d: %m", (int)c->peer.pid);
	return conn_send(c, text, len, -1, close_after);
}

/*
 * The reply to op (with pass_fd, if >= 0), as conn_send(). A reply too
 * large for one message (a show with many grants) or with text that JSON
 * cannot carry is answered with an error that says so (EMSGSIZE, EILSEQ):
 * a hang-up would tell the client nothing. The request was well-formed, so
 * the connection stays open.
 */
static int conn_reply(struct conn *c, enum proto_op op, const struct proto_reply *reply, int pass_fd)
{
	char *text;
	size_t len;
	int k;

	k = proto_reply_encode(op, reply, &text, &len);
	if (k == -EMSGSIZE || k == -EILSEQ) {
		log_warning_errno(k, "Cannot encode the reply to %s for pid %d (%s): %m; answering %s.",
				  proto_op_to_string(op), (int)c->peer.pid, c->peer.comm, errno_to_name(k));
		if (k == -EMSGSIZE)
			return conn_error(c, false, EMSGSIZE, "the reply could not be encoded: it would be "
					  "longer than the maximum message of %d bytes",
					  MSHARE_PROTOCOL_MAX_MESSAGE);
		return conn_error(c, false, EILSEQ,
				  "the reply could not be encoded: it would carry text that is not valid UTF-8");
	}
	if (k < 0)
		return log_error_errno(k, "Cannot encode a reply to pid %d: %m", (int)c->peer.pid);
	return conn_send(c, text, len, pass_fd, false);
}

static void conn_flush(struct conn *c)
{
	int k;

	k = send_message(c->watch.fd, c->out, c->out_len, c->out_fd);
	if (k == -EAGAIN)
		return;
	c->out = (free(c->out), NULL);
	c->out_fd = safe_close(c->out_fd);
	if (k < 0 || c->close_after ||
	    watch_modify(c->server->epoll_fd, &c->watch, EPOLLIN) < 0) {
		conn_free(c);
		return;
	}
	conn_touch(c, now_usec());
}

/* ---- requests ---- */

static bool peer_is_root(const struct conn *c)
{
	return c->peer.uid == 0;
}

/* What the peer may get of region: by its own credentials, or, on a
 * container channel, what the container registered and its grants still
 * allow. */
static enum access_mode conn_access(const struct conn *c, const char *region)
{
	struct peer_identity id = peer_identity(&c->peer);
	const struct config *config = c->server->manager->config;
	struct container_identity ct;
	enum access_mode registered, granted;

	if (!c->channel)
		return policy_access(config, region, &id, NULL);
	registered = channel_registered_mode(c->channel, region);
	if (c->channel->dead || registered == ACCESS_NONE)
		return ACCESS_NONE;
	ct = channel_identity(c->channel);
	granted = policy_access(config, region, &id, &ct);
	return granted < registered ? granted : registered;
}

/* What the peer is told of r; the strings stay r's. */
static struct proto_region_info region_info(const struct region *r, enum access_mode access)
{
	const struct region_config *rc = &r->config;
	struct region_stats st = {};
	struct proto_region_info info = {
		.name = rc->name,
		.state = (char *)region_state_to_string(r->state),
		.size = rc->size,
		.region_size = r->region_size,
		.backing = (char *)backing_to_string(rc->backing),
		.path = rc->path,
		.protection = (char *)prot_to_string(rc->prot),
		.populate = rc->populate,
		.inode = r->inode,
		.access = (char *)access_mode_to_string(access),
	};

	if (region_stats(r, &st) == 0) {
		info.rss_bytes = st.rss_bytes;
		info.pgtables_bytes = st.pgtables_bytes;
		info.attached = st.attached;
		info.windows = st.windows;
		/* The daemon holds the owner file of a live region. */
		info.owner_pid = st.owned && st.owner_fd ? getpid() : 0;
	}
	return info;
}

/* The container a request names, for the policy; *ret_annotations (to be
 * freed) holds the annotation array, whose strings stay req's. */
static int request_container(const struct proto_request *req, struct container_identity *ret,
			     struct container_annotation **ret_annotations)
{
	struct container_annotation *a = calloc(req->n_annotations ?: 1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	for (size_t i = 0; i < req->n_annotations; i++)
		a[i] = (struct container_annotation){ req->annotations[i].key, req->annotations[i].value };
	*ret = (struct container_identity){
		.name = req->container_name,
		.id = req->container_id,
		.annotations = a,
		.n_annotations = req->n_annotations,
	};
	*ret_annotations = a;
	return 0;
}

static int op_hello(struct conn *c, const struct proto_request *req)
{
	uint32_t versions[] = { MSHARE_PROTOCOL_VERSION };
	struct proto_reply reply = {
		.hello = {
			.versions = versions,
			.n_versions = ARRAY_SIZE(versions),
			.server = (char *)"mshare-owner " MSHARE_HELPER_VERSION,
			.max_message = MSHARE_PROTOCOL_MAX_MESSAGE,
			.uid = c->peer.uid,
		},
	};

	log_debug("Hello from pid %d (%s), uid %u, client \"%s\".", (int)c->peer.pid, c->peer.comm,
		  c->peer.uid, strna(req->client));
	return conn_reply(c, PROTO_OP_HELLO, &reply, -1);
}

static int op_get(struct conn *c, const struct proto_request *req)
{
	struct manager *m = c->server->manager;
	struct region *r = manager_find(m, req->region);
	struct peer_identity id = peer_identity(&c->peer);
	_cleanup_free_ struct container_annotation *annotations = NULL;
	struct container_identity ct = {};
	_cleanup_free_ char *who = NULL;
	enum access_mode access;
	struct proto_reply reply;

	if (req->has_container) {
		/* Only a trusted runtime hook may speak for a container, and
		 * not from inside one. */
		if (c->channel || !peer_is_root(c))
			return conn_error(c, false, EPERM,
				"only root may ask for a region on behalf of a container");
		if (request_container(req, &ct, &annotations) < 0)
			return log_oom();
	}

	if (c->channel)
		who = strprintf("pid %d (%s) of container %s", (int)c->peer.pid, c->peer.comm,
				c->channel->id);
	else
		who = strprintf("pid %d (%s), uid %u%s%s%s%s", (int)c->peer.pid, c->peer.comm, c->peer.uid,
				req->has_container ? ", for container " : "",
				req->has_container ? (req->container_name ?: "?") : "",
				req->container_id ? " id " : "", req->container_id ?: "");
	if (!who)
		return log_oom();

	/* An unsaved region's configuration is a guess until a load claims it. */
	if (!r || r->state == REGION_RETIRING || r->unsaved) {
		log_info("Refused region '%s' to %s: not configured.", req->region, who);
		return conn_error(c, false, ENOENT, "no region '%s' is configured",
							   req->region);
	}
	if (c->channel)
		access = conn_access(c, req->region);
	else
		access = policy_access(m->config, req->region, &id, req->has_container ? &ct : NULL);
	if (access == ACCESS_NONE && c->channel) {
		log_notice("Refused region '%s' to %s: not registered for it, or no grant.", req->region, who);
		return conn_error(c, false, EACCES,
			"region '%s' is not granted to container %s", req->region, c->channel->id);
	}
	if (access == ACCESS_NONE) {
		log_notice("Refused region '%s' to %s: no grant.", req->region, who);
		return conn_error(c, false, EACCES,
			"region '%s' is not granted to uid %u%s", req->region, c->peer.uid,
			req->has_container ? " for this container" : "");
	}
	if (!access_allows(access, req->mode)) {
		log_notice("Refused region '%s' read-write to %s: granted read-only.", req->region, who);
		return conn_error(c, false, EACCES,
			"region '%s' is granted read-only; ask for mode \"ro\"", req->region);
	}
	if (r->state == REGION_FAILED)
		return conn_error(c, false, ENXIO,
			"region '%s' could not be created (%s); see the journal of mshare-owner",
			req->region, strerror(r->error));

	reply = (struct proto_reply){
		.get.mode = req->mode,
		.has_region = true,
		.region = region_info(r, access),
	};
	r->last_handout = now_usec();
	log_info("Handed region '%s' %s to %s.", req->region,
		 req->mode == ACCESS_RW ? "read-write" : "read-only", who);
	/* Never the owner file: a client must not own the region. */
	return conn_reply(c, PROTO_OP_GET, &reply, req->mode == ACCESS_RW ? r->fd_rw : r->fd_ro);
}

static int op_list(struct conn *c, const struct proto_request *req)
{
	struct manager *m = c->server->manager;
	_cleanup_free_ struct proto_region_info *infos = calloc(m->n_regions ?: 1, sizeof(*infos));
	struct proto_reply reply = { .list.regions = infos };
	/* Room for the envelope and "next". */
	size_t room = MSHARE_PROTOCOL_MAX_MESSAGE - 256;
	size_t i;

	if (!infos)
		return log_oom();
	for (i = req->start; i < m->n_regions; i++) {
		const struct region *r = m->regions[i];
		enum access_mode access = conn_access(c, r->config.name);
		struct proto_region_info info;
		ssize_t n;

		/* A container sees only the regions it may get. */
		if (c->channel && access == ACCESS_NONE)
			continue;
		info = region_info(r, access);
		n = proto_region_info_length(&info);
		if (n == -EILSEQ) {
			/* Only this region cannot be told (the configuration
			 * refuses such text, so this is a bug); the others can. */
			log_error_errno((int)n, "Leaving region '%s' out of the list for pid %d: %m "
					"(Path=%s)", r->config.name, (int)c->peer.pid, strna(info.path));
			continue;
		}
		if (n < 0)
			return log_oom();
		if ((size_t)n > room)
			break; /* the rest on the next page */
		room -= (size_t)n;
		infos[reply.list.n_regions++] = info;
	}
	if (i < m->n_regions) {
		reply.list.has_next = true;
		reply.list.next = (uint32_t)i;
	}
	return conn_reply(c, PROTO_OP_LIST, &reply, -1);
}

/* A grant as the peer is told it: the strings and arrays stay g's, the
 * annotation array is ret's own (grant_infos_free()). */
static int grant_info(const struct grant *g, struct proto_grant *ret)
{
	struct proto_annotation *a = calloc(g->n_annotations ?: 1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	for (size_t i = 0; i < g->n_annotations; i++)
		a[i] = (struct proto_annotation){ g->annotations[i].key, g->annotations[i].pattern };
	*ret = (struct proto_grant){
		.source = g->source,
		.region = g->region,
		.mode = g->mode,
		.users = g->uids,
		.n_users = g->n_uids,
		.groups = g->gids,
		.n_groups = g->n_gids,
		.containers = g->containers,
		.container_ids = g->container_ids,
		.annotations = a,
		.n_annotations = g->n_annotations,
	};
	return 0;
}

static void grant_infos_free(struct proto_grant *grants, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(grants[i].annotations);
	free(grants);
}

/* The grants that name region r, for root. */
static int show_grants(const struct config *config, const struct region *r, struct proto_reply *reply)
{
	int k;

	reply->show.has_grants = true;
	reply->show.grants = calloc(config->n_grants ?: 1, sizeof(*reply->show.grants));
	if (!reply->show.grants)
		return -ENOMEM;
	for (size_t i = 0; i < config->n_grants; i++) {
		const struct grant *g = &config->grants[i];

		if (!grant_matches_region(g, r->config.name))
			continue;
		k = grant_info(g, &reply->show.grants[reply->show.n_grants]);
		if (k < 0)
			return k;
		reply->show.n_grants++;
	}
	return 0;
}

static int op_show(struct conn *c, const struct proto_request *req)
{
	struct manager *m = c->server->manager;
	struct region *r = manager_find(m, req->region);
	struct proto_reply reply = {};
	int k;

	if (!r)
		return conn_error(c, false, ENOENT, "no region '%s' is configured", req->region);

	reply = (struct proto_reply){
		.has_region = true,
		.region = region_info(r, conn_access(c, r->config.name)),
		.show = {
			.source = r->config.source ?: (char *)"",
			.error = r->state == REGION_FAILED ? (char *)errno_to_name(r->error) : NULL,
			.pending_source = r->state == REGION_CHANGED ? r->pending.source ?: (char *)"" : NULL,
		},
	};
	k = peer_is_root(c) ? show_grants(m->config, r, &reply) : 0;
	if (k == 0)
		k = conn_reply(c, PROTO_OP_SHOW, &reply, -1);
	else
		k = log_oom();
	grant_infos_free(reply.show.grants, reply.show.n_grants);
	return k;
}

static int op_reload(struct conn *c)
{
	struct server *s = c->server;
	_cleanup_free_ char *message = NULL;
	int k;

	if (!peer_is_root(c)) {
		log_notice("Refused reload to pid %d (%s), uid %u.", (int)c->peer.pid, c->peer.comm,
			   c->peer.uid);
		return conn_error(c, false, EPERM, "reload is only allowed for root");
	}
	log_info("Reload requested by pid %d (%s).", (int)c->peer.pid, c->peer.comm);
	k = s->reload(s->userdata, &message);
	if (k < 0)
		return conn_error(c, false, k, "%s", message ?: strerror(-k));
	return conn_reply(c, PROTO_OP_RELOAD, &(struct proto_reply){ .message = message }, -1);
}

/* register: the container's regions must all exist and be granted to it in
 * the mode asked; then its channel is served. fds: the listening socket
 * and the pidfd, both taken. */
static int op_register(struct conn *c, struct proto_request *req, int fds[2])
{
	struct server *s = c->server;
	struct manager *m = s->manager;
	_cleanup_close_ int listen_fd = fds[0], pidfd = fds[1];
	_cleanup_free_ struct container_annotation *annotations = NULL;
	struct peer_identity id = peer_identity(&c->peer);
	struct container_identity ct;
	_cleanup_free_ char *id_copy = NULL, *registrar_cgroup = NULL, *error = NULL;
	struct channel *ch;
	int k;

	fds[0] = fds[1] = -1;
	if (c->channel || !peer_is_root(c)) {
		log_notice("Refused to register container %s for pid %d (%s), uid %u: not root.",
			   req->container_id, (int)c->peer.pid, c->peer.comm, c->peer.uid);
		return conn_error(c, false, EPERM, "only root may register a container");
	}
	if (listen_fd < 0 || pidfd < 0)
		return conn_error(c, true, EBADMSG,
			"register carries two descriptors: the container's listening socket and a pidfd");

	if (request_container(req, &ct, &annotations) < 0)
		return log_oom();
	for (size_t i = 0; i < req->n_regions; i++) {
		const struct proto_region_request *rr = &req->regions[i];
		struct region *r = manager_find(m, rr->region);
		enum access_mode access;

		if (!r || r->state == REGION_RETIRING) {
			log_notice("Refused to register container %s: region '%s' is not configured.",
				   req->container_id, rr->region);
			return conn_error(c, false, ENOENT, "no region '%s' is configured", rr->region);
		}
		access = policy_access(m->config, rr->region, &id, &ct);
		if (!access_allows(access, rr->mode)) {
			log_notice("Refused to register container %s%s%s%s: region '%s' %s is not granted to it.",
				   req->container_id, req->container_name ? " (" : "",
				   strempty(req->container_name), req->container_name ? ")" : "",
				   rr->region, rr->mode == ACCESS_RW ? "read-write" : "read-only");
			return conn_error(c, false, EACCES,
				"region '%s' is not granted %s to container %s%s", rr->region,
				rr->mode == ACCESS_RW ? "read-write" : "read-only", req->container_id,
				access == ACCESS_RO ? " (only read-only)" : "");
		}
	}

	id_copy = strdup(req->container_id);
	if (!id_copy)
		return log_oom();
	/* The hook's cgroup: the container must have one apart from it. */
	k = peer_cgroup(c->watch.fd, &registrar_cgroup);
	if (k < 0) {
		log_notice_errno(k, "Refused to register container %s: cannot tell the cgroup of pid %d (%s): %m",
				 id_copy, (int)c->peer.pid, c->peer.comm);
		return conn_error(c, false, EOPNOTSUPP,
			"cannot tell the cgroup of the registering process (cgroup v2 and Linux 6.5 are needed): %s",
			strerror(-k));
	}
	k = channel_register(s, req, TAKE_FD(listen_fd), TAKE_FD(pidfd), registrar_cgroup, &ch, &error);
	if (k < 0 && error) {
		log_notice("Refused to register container %s: %s.", id_copy, error);
		return conn_error(c, false, -k, "container %s: %s", id_copy, error);
	}
	if (k < 0) {
		switch (k) {
		case -EEXIST:
			return conn_error(c, false, EEXIST, "container %s is registered already", id_copy);
		case -ESRCH:
			return conn_error(c, false, ESRCH, "the process of container %s has exited", id_copy);
		case -EBADF:
			return conn_error(c, true, EBADMSG,
				"register carries a listening AF_UNIX SOCK_SEQPACKET socket, then a pidfd");
		case -ENOSPC:
			log_warning("Refused to register container %s: %zu containers are registered, the maximum.",
				    id_copy, s->max_channels);
			return conn_error(c, false, ENOSPC, "too many containers registered (%zu)", s->max_channels);
		default:
			log_warning_errno(k, "Cannot register container %s: %m", id_copy);
			return conn_error(c, false, k, "cannot register container %s: %s", id_copy, strerror(-k));
		}
	}
	log_info("Container %s%s%s%s, pid %d, registered by pid %d (%s) for %zu region%s.", ch->id,
		 ch->name ? " (" : "", strempty(ch->name), ch->name ? ")" : "", (int)ch->pid,
		 (int)c->peer.pid, c->peer.comm, ch->n_regions, ch->n_regions == 1 ? "" : "s");
	/* Registered only once the state says so: see channel_register(). */
	if (s->save)
		s->save(s->userdata);
	crash_point("register-saved");
	/* The regions were req's: the channel has them now. */
	return conn_reply(c, PROTO_OP_REGISTER,
			  &(struct proto_reply){ .reg = { .regions = ch->regions, .n_regions = ch->n_regions } }, -1);
}

/* destroy: ends a region now, and creates it anew if it is configured. */
static int op_destroy(struct conn *c, const struct proto_request *req)
{
	struct manager *m = c->server->manager;
	struct region *r = manager_find(m, req->region), *n = NULL;
	struct region_stats st = {};
	_cleanup_free_ char *message = NULL;
	uint64_t inode;
	struct proto_reply reply;
	int k;

	if (!peer_is_root(c)) {
		log_notice("Refused to destroy region '%s' for pid %d (%s), uid %u: not root.", req->region,
			   (int)c->peer.pid, c->peer.comm, c->peer.uid);
		return conn_error(c, false, EPERM, "only root may destroy a region");
	}
	if (!r)
		return conn_error(c, false, ENOENT, "no region '%s' is configured",
							   req->region);
	if (r->fd < 0)
		return conn_error(c, false, ENXIO,
			"region '%s' could not be created (%s); there is nothing to destroy", req->region,
			strerror(r->error));
	k = region_stats(r, &st);
	if (k < 0)
		return conn_error(c, false, -k, "cannot tell whether region '%s' is attached: %s",
							   req->region, strerror(-k));
	if (st.attached > 0 && !req->force)
		return conn_error(c, false, EBUSY,
			"region '%s' is attached by %u process%s, which would get SIGSEGV on their next access "
			"to it; destroy it with \"force\" (mshare-ctl destroy --force) to do that anyway",
			req->region, st.attached, st.attached == 1 ? "" : "es");

	inode = r->inode;
	log_notice("Destroying region '%s' (inode %" PRIu64 "%s) as pid %d (%s) asked; %u process%s had it "
		   "attached.", req->region, inode, r->state == REGION_RETIRING ? ", retiring" : "",
		   (int)c->peer.pid, c->peer.comm, st.attached, st.attached == 1 ? "" : "es");
	k = manager_destroy(m, r, &n);
	if (k < 0)
		return conn_error(c, false, -k, "cannot destroy region '%s': %s", req->region,
							   strerror(-k));
	if (n && n->state == REGION_FAILED)
		message = strprintf("region '%s' (inode %" PRIu64 ") destroyed; creating it anew failed (%s), "
				    "see the journal", req->region, inode, strerror(n->error));
	else if (n)
		message = strprintf("region '%s' (inode %" PRIu64 ") destroyed and created anew as configured "
				    "(inode %" PRIu64 ")", req->region, inode, n->inode);
	else
		message = strprintf("region '%s' (inode %" PRIu64 ") destroyed; it is no longer configured",
				    req->region, inode);
	if (!message)
		return log_oom();
	reply = (struct proto_reply){ .message = message, .has_region = n };
	if (n)
		reply.region = region_info(n, conn_access(c, n->config.name));
	return conn_reply(c, PROTO_OP_DESTROY, &reply, -1);
}

static int op_unregister(struct conn *c, const struct proto_request *req)
{
	struct channel *ch;

	if (c->channel || !peer_is_root(c))
		return conn_error(c, false, EPERM, "only root may unregister a container");
	ch = channel_find(c->server, req->container_id);
	if (!ch)
		return conn_error(c, false, ENOENT, "container %s is not registered",
							   req->container_id);
	channel_close(ch, "unregistered");
	return conn_reply(c, PROTO_OP_UNREGISTER, &(struct proto_reply){}, -1);
}

static int op_containers(struct conn *c)
{
	_cleanup_free_ struct proto_container_info *all = NULL;
	struct proto_reply reply = {};

	if (c->channel || !peer_is_root(c))
		return conn_error(c, false, EPERM, "only root may list the containers");
	for (struct channel *ch = c->server->channels; ch; ch = ch->next)
		reply.containers.n_containers++;
	all = calloc(reply.containers.n_containers ?: 1, sizeof(*all));
	if (!all)
		return log_oom();
	reply.containers.containers = all;
	reply.containers.n_containers = 0;
	for (struct channel *ch = c->server->channels; ch; ch = ch->next)
		if (!ch->dead)
			all[reply.containers.n_containers++] = (struct proto_container_info){
				.id = ch->id,
				.name = ch->name,
				.pid = ch->pid,
				.regions = ch->regions,
				.n_regions = ch->n_regions,
				.connections = ch->n_connections,
			};
	return conn_reply(c, PROTO_OP_CONTAINERS, &reply, -1);
}

static int conn_dispatch(struct conn *c, struct proto_request *req, int fds[2])
{
	if (c->channel && c->channel->dead)
		return conn_error(c, true, ENXIO, "container %s is no longer registered",
							   c->channel->id);
	if (c->channel && req->op != PROTO_OP_HELLO && req->op != PROTO_OP_GET && req->op != PROTO_OP_LIST)
		return conn_error(c, false, EPERM, "\"%s\" is not available to containers",
							   proto_op_to_string(req->op));
	if (req->op == PROTO_OP_REGISTER)
		return op_register(c, req, fds);
	switch (req->op) {
	case PROTO_OP_HELLO:
		return op_hello(c, req);
	case PROTO_OP_GET:
		return op_get(c, req);
	case PROTO_OP_LIST:
		return op_list(c, req);
	case PROTO_OP_SHOW:
		return op_show(c, req);
	case PROTO_OP_RELOAD:
		return op_reload(c);
	case PROTO_OP_UNREGISTER:
		return op_unregister(c, req);
	case PROTO_OP_CONTAINERS:
		return op_containers(c);
	case PROTO_OP_DESTROY:
		return op_destroy(c, req);
	default:
		return -EOPNOTSUPP;
	}
}

/* Reads and answers one message. < 0: close the connection. */
static int conn_process(struct conn *c)
{
	struct server *s = c->server;
	_cleanup_(proto_request_done) struct proto_request req = {};
	_cleanup_free_ char *error = NULL;
	int fds[REQUEST_MAX_FDS];
	size_t n_fds = 0;
	ssize_t n;
	int k;

	/* Credentials are never asked for (no SO_PASSCRED). */
	n = recv_fds(c->watch.fd, s->buf, MSHARE_PROTOCOL_MAX_MESSAGE, fds, REQUEST_MAX_FDS, &n_fds,
		     MSG_DONTWAIT);
	if (n == -EAGAIN)
		return 0;
	if (n == -EBADMSG) {
		/* recv_fds() closed what came. */
		log_notice("Pid %d (%s), uid %u sent more than %d file descriptors, or other "
			   "control data; closing.", (int)c->peer.pid, c->peer.comm, c->peer.uid,
			   REQUEST_MAX_FDS);
		return conn_error(c, true, EBADMSG,
			"only register may carry file descriptors, and nothing carries credentials");
	}
	if (n < 0)
		return log_debug_errno((int)n, "Cannot read from pid %d: %m", (int)c->peer.pid);
	if (n == 0)
		return -ECONNRESET; /* hung up */

	if ((size_t)n > MSHARE_PROTOCOL_MAX_MESSAGE) {
		close_fds(fds, n_fds);
		log_notice("Pid %d (%s), uid %u sent a message of %zd bytes, more than %d; closing.",
			   (int)c->peer.pid, c->peer.comm, c->peer.uid, n, MSHARE_PROTOCOL_MAX_MESSAGE);
		return conn_error(c, true, EMSGSIZE,
			"message of %zd bytes is longer than the maximum of %d", n,
			MSHARE_PROTOCOL_MAX_MESSAGE);
	}

	k = proto_request_decode(s->buf, (size_t)n, &req, &error);
	if (k == -ENOMEM) {
		close_fds(fds, n_fds);
		return log_oom();
	}
	if (k < 0) {
		close_fds(fds, n_fds);
		log_notice("Bad request from pid %d (%s), uid %u: %s; closing.", (int)c->peer.pid,
			   c->peer.comm, c->peer.uid, strna(error));
		return conn_error(c, true, k, "%s", error ?: strerror(-k));
	}
	/* Only register carries descriptors: exactly two. */
	if (req.op == PROTO_OP_REGISTER ? n_fds != 2 : n_fds != 0) {
		close_fds(fds, n_fds);
		log_notice("Pid %d (%s), uid %u sent %s with %zu file descriptor%s; closing.",
			   (int)c->peer.pid, c->peer.comm, c->peer.uid, proto_op_to_string(req.op),
			   n_fds, n_fds == 1 ? "" : "s");
		return conn_error(c, true, EBADMSG, req.op == PROTO_OP_REGISTER ?
			"register carries exactly two file descriptors: a listening socket and a pidfd" :
			"only register may carry file descriptors, and nothing carries credentials");
	}
	conn_touch(c, now_usec());
	k = conn_dispatch(c, &req, fds);
	/* register took its two; nothing else has any. */
	return k;
}

static void conn_dispatch_event(struct watch *w, uint32_t events)
{
	struct conn *c = (struct conn *)w;

	if (c->out) {
		if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
			conn_flush(c);
		return;
	}
	/* Read even after a hang-up: the last request may still be queued. */
	if (events & EPOLLIN) {
		if (conn_process(c) < 0)
			conn_free(c);
		return;
	}
	if (events & (EPOLLERR | EPOLLHUP))
		conn_free(c);
}

/* ---- accepting ---- */

static bool ratelimit_pass(struct ratelimit *rl, usec_t now)
{
	if (rl->last && now < rl->last + REFUSAL_LOG_INTERVAL_USEC) {
		rl->suppressed++;
		return false;
	}
	rl->last = now;
	return true;
}

/*
 * Answers a connection that is not served with error and message, and
 * closes it. The client's first request may be queued by now: it is read
 * first, since closing a socket with unread data resets the peer's, and
 * the reset would reach the client before the refusal.
 */
static void server_refuse(struct server *s, int fd, int error, const char *message)
{
	_cleanup_free_ char *text = NULL;
	size_t len;

	s->n_refused++;
	if (proto_error_encode(error, message, &text, &len) == 0)
		(void)send_message(fd, text, len, -1);
	/* What is queued stays readable; more can no longer be sent. */
	(void)shutdown(fd, SHUT_RD);
	for (int i = 0; i < REFUSE_DRAIN_MAX; i++)
		if (recv(fd, s->buf, MSHARE_PROTOCOL_MAX_MESSAGE, MSG_DONTWAIT | MSG_TRUNC) < 0)
			break;
	safe_close(fd);
}

/*
 * Whether a new connection may be served: 0, or the errno of the refusal
 * with *ret_message saying which limit it hit. Root on the owner socket may
 * use every slot; everyone else leaves max_connections / 8 of them free.
 */
static int server_admit(struct server *s, const struct peer *p, const struct channel *ch,
			char **ret_message)
{
	size_t reserve = s->max_connections / 8;

	if (s->n_connections >= s->max_connections) {
		*ret_message = strprintf("too many connections (%zu); try again later", s->max_connections);
		return -EAGAIN;
	}
	if (!ch && p->uid == 0)
		return 0;
	if (s->n_connections + reserve >= s->max_connections) {
		*ret_message = strprintf("too many connections (%zu, of which %zu are kept for root); "
					 "try again later", s->max_connections, reserve);
		return -EAGAIN;
	}
	if (ch && ch->n_connections >= s->max_per_container) {
		*ret_message = strprintf("too many connections of container %s (%zu); try again later",
					 ch->id, s->max_per_container);
		return -EAGAIN;
	}
	if (!ch && uid_connections(s, p->uid) >= s->max_per_user) {
		*ret_message = strprintf("too many connections of uid %u (%zu); try again later",
					 p->uid, s->max_per_user);
		return -EAGAIN;
	}
	return 0;
}

/* A channel serves the processes of its container and no one else. */
static int channel_check_peer(struct server *s, int fd, const struct peer *p, struct channel *ch,
			      char **ret_message)
{
	_cleanup_free_ char *cgroup = NULL;
	int k;

	k = peer_cgroup(fd, &cgroup);
	if (k == 0 && channel_admits(ch, cgroup))
		return 0;
	if (ratelimit_pass(&s->outsider_log, now_usec())) {
		log_notice("Refused pid %d (%s), uid %u, on the channel of container %s: %s%s%s "
			   "(%" PRIu64 " more such refusals not logged).", (int)p->pid, p->comm, p->uid,
			   ch->id, k < 0 ? "its cgroup cannot be told: " : "it is not in the container's cgroup ",
			   k < 0 ? strerror(-k) : ch->cgroup, k < 0 ? "" : " but in another",
			   s->outsider_log.suppressed);
		s->outsider_log.suppressed = 0;
	}
	*ret_message = strprintf("this socket serves the processes of container %s only", ch->id);
	return -EACCES;
}

static void server_accept_one(struct server *s, int fd, struct channel *ch)
{
	_cleanup_free_ char *message = NULL;
	struct peer p;
	struct conn *c;
	int k;

	k = peer_from_socket(fd, &p);
	if (k < 0) {
		log_warning_errno(k, "Cannot tell who is connecting, closing: %m");
		safe_close(fd);
		return;
	}
	k = ch ? channel_check_peer(s, fd, &p, ch, &message) : 0;
	if (k == 0)
		k = server_admit(s, &p, ch, &message);
	if (k == 0 && !ch && p.uid != 0 && uid_count_add(s, p.uid) < 0)
		k = log_oom();
	if (k < 0) {
		if (k == -EAGAIN && ratelimit_pass(&s->refusal_log, now_usec())) {
			log_warning("Refusing pid %d (%s), uid %u: %s (%" PRIu64 " refused so far, %" PRIu64
				    " of them not logged).", (int)p.pid, p.comm, p.uid, strna(message),
				    s->n_refused + 1, s->refusal_log.suppressed);
			s->refusal_log.suppressed = 0;
		}
		server_refuse(s, fd, -k, message ?: strerror(-k));
		peer_done(&p);
		return;
	}

	c = calloc(1, sizeof(*c));
	if (!c) {
		log_oom();
		goto fail;
	}
	*c = (struct conn){
		.watch = { .fd = fd, .dispatch = conn_dispatch_event },
		.server = s,
		.peer = p,
		.channel = ch,
		.out_fd = -1,
	};
	k = watch_add(s->epoll_fd, &c->watch, EPOLLIN);
	if (k < 0) {
		log_warning_errno(k, "Cannot watch a connection: %m");
		free(c);
		goto fail;
	}
	if (ch)
		ch->n_connections++;
	s->n_connections++;
	conn_touch(c, now_usec());
	log_debug("Connection from pid %d (%s), uid %u, gid %u%s%s.", (int)c->peer.pid, c->peer.comm,
		  c->peer.uid, c->peer.gid, ch ? ", container " : "", ch ? ch->id : "");
	return;
fail:
	if (!ch && p.uid != 0)
		uid_count_drop(s, p.uid);
	peer_done(&p);
	safe_close(fd);
}

static void server_pause_listening(struct server *s, int error)
{
	log_warning_errno(error, "Cannot accept connections, pausing for %" PRIu64 " ms: %m",
			  LISTEN_PAUSE_USEC / USEC_PER_MSEC);
	if (watch_modify(s->epoll_fd, &s->listen, 0) == 0)
		s->listen_paused_until = now_usec() + LISTEN_PAUSE_USEC;
}

void server_accept(struct server *s, struct watch *w, struct channel *ch)
{
	for (int i = 0; i < ACCEPT_BURST; i++) {
		int fd = accept4(w->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			switch (errno) {
			case EAGAIN:
				return;
			case EINTR:
			case ECONNABORTED:
			case EPROTO:
			case EPERM: /* a security module said no */
				continue;
			default:
				/* EMFILE, ENFILE, ENOBUFS, ENOMEM: the
				 * connection stays queued, and accepting again
				 * at once would spin. A channel's socket is
				 * edge-triggered: it is looked at again when
				 * its container connects next. */
				if (ch)
					log_warning_errno(errno, "Cannot accept a connection of container %s: %m",
							  ch->id);
				else
					server_pause_listening(s, errno);
				return;
			}
		}
		server_accept_one(s, fd, ch);
	}
	/* More may be queued: an edge-triggered socket reports them again
	 * once re-armed. */
	if (ch && watch_modify(s->epoll_fd, w, EPOLLIN | EPOLLET) < 0)
		log_warning_errno(errno, "Cannot watch the socket of container %s: %m", ch->id);
}

static void server_dispatch_listen(struct watch *w, uint32_t events)
{
	struct server *s = (struct server *)((char *)w - offsetof(struct server, listen));

	(void)events;
	server_accept(s, w, NULL);
}

int server_init(struct server *s, int epoll_fd, int listen_fd, struct manager *m, struct fdstore *store)
{
	int k;

	*s = (struct server){
		.listen = { .fd = listen_fd, .dispatch = server_dispatch_listen },
		.epoll_fd = epoll_fd,
		.manager = m,
		.store = store,
		.timeout = SERVER_TIMEOUT_DEFAULT_USEC,
		.max_connections = SERVER_MAX_CONNECTIONS_DEFAULT,
		.max_per_user = SERVER_MAX_PER_USER_DEFAULT,
		.max_per_container = SERVER_MAX_PER_CONTAINER_DEFAULT,
		.max_channels = CHANNELS_MAX,
	};
	s->buf = malloc(MSHARE_PROTOCOL_MAX_MESSAGE);
	if (!s->buf)
		return log_oom();
	/* Socket activation may hand it over blocking. */
	k = fcntl(listen_fd, F_GETFL);
	if (k < 0 || fcntl(listen_fd, F_SETFL, k | O_NONBLOCK) < 0)
		return log_error_errno(errno, "Cannot make the listening socket non-blocking: %m");
	k = watch_add(epoll_fd, &s->listen, EPOLLIN);
	if (k < 0)
		return log_error_errno(k, "Cannot watch the listening socket: %m");
	return 0;
}

void server_size_for_fds(size_t nofile, size_t reserve, size_t *max_connections, size_t *max_channels)
{
	size_t room = nofile > reserve ? nofile - reserve : 0;

	/* Channels get at most a quarter of the room, connections the rest;
	 * at least a few of each, whatever the limit. */
	*max_channels = room / 4 / 2;
	if (*max_channels > CHANNELS_MAX)
		*max_channels = CHANNELS_MAX;
	if (*max_channels < 4)
		*max_channels = 4;
	room = room > *max_channels * 2 ? room - *max_channels * 2 : 0;
	if (room / 2 < 16)
		room = 32;
	if (*max_connections > room / 2)
		*max_connections = room / 2;
}

static bool conn_has_request(const struct conn *c)
{
	char b;

	return recv(c->watch.fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

usec_t server_next_wakeup(const struct server *s)
{
	usec_t t = s->head ? s->head->deadline : USEC_INFINITY;

	if (s->listen_paused_until && s->listen_paused_until < t)
		t = s->listen_paused_until;
	return t;
}

void server_process_timeouts(struct server *s, usec_t now)
{
	if (s->listen_paused_until && now >= s->listen_paused_until) {
		if (watch_modify(s->epoll_fd, &s->listen, EPOLLIN) == 0)
			s->listen_paused_until = 0;
		else
			s->listen_paused_until = now + LISTEN_PAUSE_USEC;
	}
	while (s->head && s->head->deadline <= now) {
		struct conn *c = s->head;
		_cleanup_free_ char *text = NULL, *message = NULL;
		size_t len;

		/* The deadline is the client's, not ours: a request that
		 * arrived while we were busy with others is served. */
		if (!c->out && conn_has_request(c)) {
			conn_touch(c, now);
			continue;
		}

		log_debug("Connection from pid %d (%s) idle for too long; closing.", (int)c->peer.pid,
			  c->peer.comm);
		message = strprintf("no request within %" PRIu64 " ms", s->timeout / USEC_PER_MSEC);
		if (!c->out && message && proto_error_encode(ETIMEDOUT, message, &text, &len) == 0)
			(void)send_message(c->watch.fd, text, len, -1);
		conn_free(c);
	}
	channel_collect(s);
}

void server_done(struct server *s)
{
	while (s->head)
		conn_free(s->head);
	channel_close_all(s);
	free(s->buf);
	s->buf = NULL;
	free(s->uids);
	s->uids = NULL;
	s->n_uids = 0;
}
