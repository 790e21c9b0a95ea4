/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>

#include "channel.h"
#include "log.h"
#include "persist.h"

/* ---- saving ---- */

int persist_save(struct fdstore *store, const struct manager *m, const struct server *s)
{
	_cleanup_free_ struct state_region *regions = NULL;
	_cleanup_free_ struct state_container *containers = NULL;
	_cleanup_free_ char *text = NULL;
	struct state st = {
		.generation = store->generation + 1,
		.next_serial = s->next_serial,
	};
	size_t len;
	int k;

	if (!store->enabled)
		return 0;
	regions = calloc(m->n_regions ?: 1, sizeof(*regions));
	containers = calloc(s->n_channels ?: 1, sizeof(*containers));
	if (!regions || !containers)
		return log_oom();
	/* Borrowed: state_to_json() only reads. */
	for (size_t i = 0; i < m->n_regions; i++) {
		const struct region *r = m->regions[i];

		if (r->fd < 0)
			continue;
		regions[st.n_regions++] = (struct state_region){
			.config = r->config,
			.inode = r->inode,
			.populated = r->populated,
		};
	}
	for (const struct channel *ch = s->channels; ch; ch = ch->next) {
		if (ch->dead || st.n_containers >= s->n_channels)
			continue;
		containers[st.n_containers++] = (struct state_container){
			.serial = ch->serial,
			.id = ch->id,
			.name = ch->name,
			.annotations = ch->annotations,
			.n_annotations = ch->n_annotations,
			.regions = ch->regions,
			.n_regions = ch->n_regions,
			.pid = ch->pid,
			.cgroup = ch->cgroup,
		};
	}
	st.regions = regions;
	st.containers = containers;
	k = state_to_json(&st, &text, &len);
	if (k < 0)
		return log_oom();
	return fdstore_save_state(store, text, len);
}

/* ---- restoring ---- */

void persist_restore_done(struct restore *rs)
{
	safe_close(rs->listen_fd);
	free(rs->listen_name);
	for (size_t i = 0; i < rs->n_regions; i++)
		safe_close(rs->regions[i].fd);
	free(rs->regions);
	for (size_t i = 0; i < rs->n_channels; i++) {
		safe_close(rs->channels[i].listen_fd);
		safe_close(rs->channels[i].pidfd);
	}
	free(rs->channels);
	state_done(&rs->state);
	*rs = (struct restore){ .listen_fd = -1 };
}

/* What happens to each descriptor passed at start. */
enum fate {
	FATE_DROP,	/* removed from the store, closed */
	FATE_KEEP,	/* adopted: stays in the store */
	FATE_CLOSE,	/* closed, left in the store (or not ours) */
};

struct sorting {
	struct fdstore_entry *e;
	size_t n;
	enum fate *fate;
};

/* The state entries: the newest valid one into rs->state, the rest dropped. */
static int pick_state(struct fdstore *store, struct sorting *so, struct restore *rs)
{
	ssize_t best = -1;

	for (size_t i = 0; i < so->n; i++) {
		_cleanup_(state_done) struct state st = {};
		_cleanup_free_ char *text = NULL, *error = NULL;
		const char *arg;
		uint64_t gen = 0;
		size_t len;
		int k;

		if (fdstore_parse_name(so->e[i].name, &arg) != FDSTORE_STATE)
			continue;
		(void)fdstore_parse_number(arg, &gen);
		if (gen > store->generation)
			store->generation = gen;
		k = fdstore_read_state(so->e[i].fd, &text, &len);
		if (k == 0)
			k = state_from_json(text, len, &st, &error);
		if (k == -EPROTONOSUPPORT)
			return log_error_errno(k, "The fd store's %s was written by a newer mshare-owner: %s. "
					       "Not starting, and not touching the store: start that version again, "
					       "or stop the service to end its regions.", so->e[i].name, strna(error));
		if (k == 0 && st.generation != gen)
			k = error_set(&error, -EBADMSG, "it says generation %" PRIu64, st.generation);
		if (k < 0) {
			log_warning_errno(k, "Ignoring %s in the fd store: %s", so->e[i].name,
					  error ?: strerror(-k));
			continue;
		}
		if (best >= 0 && gen < rs->state.generation)
			continue;
		best = (ssize_t)i;
		state_done(&rs->state);
		rs->state = st;
		st = (struct state){};
	}
	for (size_t i = 0; i < so->n; i++) {
		const char *arg;

		if (fdstore_parse_name(so->e[i].name, &arg) != FDSTORE_STATE)
			continue;
		/* The store keeps the one in use until the next is saved;
		 * our copy is not needed. */
		so->fate[i] = (ssize_t)i == best ? FATE_CLOSE : FATE_DROP;
	}
	if (best >= 0) {
		store->stored = rs->state.generation;
		log_info("Restoring from %s: %zu region%s, %zu container%s.", so->e[best].name,
			 rs->state.n_regions, rs->state.n_regions == 1 ? "" : "s", rs->state.n_containers,
			 rs->state.n_containers == 1 ? "" : "s");
	}
	return 0;
}

/* The entry of kind named arg whose file has the inode (0: any), or -1. */
static ssize_t find_entry(struct sorting *so, enum fdstore_kind kind, const char *arg, uint64_t inode)
{
	for (size_t i = 0; i < so->n; i++) {
		const char *a;
		struct stat st;

		if (so->fate[i] != FATE_DROP || fdstore_parse_name(so->e[i].name, &a) != kind || !streq(a, arg))
			continue;
		if (inode && (fstat(so->e[i].fd, &st) < 0 || (uint64_t)st.st_ino != inode))
			continue;
		return (ssize_t)i;
	}
	return -1;
}

static int match_regions(struct sorting *so, struct restore *rs)
{
	rs->regions = calloc(rs->state.n_regions ?: 1, sizeof(*rs->regions));
	if (!rs->regions)
		return log_oom();
	for (size_t j = 0; j < rs->state.n_regions; j++) {
		struct state_region *sr = &rs->state.regions[j];
		ssize_t i = find_entry(so, FDSTORE_REGION, sr->config.name, sr->inode);

		if (i < 0) {
			log_notice("Region '%s' of the saved state (inode %" PRIu64 ") is not in the fd store: it was "
				   "destroyed moments before mshare-owner stopped, or the store could not keep it; "
				   "it is created anew if it is configured.", sr->config.name, sr->inode);
			continue;
		}
		so->fate[i] = FATE_KEEP;
		rs->regions[rs->n_regions++] = (struct restore_region){ .saved = sr, .fd = TAKE_FD(so->e[i].fd) };
	}
	return 0;
}

static int match_channels(struct sorting *so, struct restore *rs)
{
	rs->channels = calloc(rs->state.n_containers ?: 1, sizeof(*rs->channels));
	if (!rs->channels)
		return log_oom();
	for (size_t j = 0; j < rs->state.n_containers; j++) {
		struct state_container *c = &rs->state.containers[j];
		char serial[32];
		ssize_t l, p;

		snprintf(serial, sizeof(serial), "%" PRIu64, c->serial);
		l = find_entry(so, FDSTORE_CHANNEL, serial, 0);
		p = find_entry(so, FDSTORE_PIDFD, serial, 0);
		if (l < 0 || p < 0) {
			/* systemd drops a pidfd by itself once its process is
			 * reaped: the container ended while we were down. */
			log_info("Container %s, pid %d: %s while mshare-owner was not running; its channel is "
				 "closed.", c->id, (int)c->pid, p < 0 ? "its process exited" :
				 "its channel's socket left the fd store");
			continue;
		}
		so->fate[l] = so->fate[p] = FATE_KEEP;
		rs->channels[rs->n_channels++] = (struct restore_channel){
			.saved = c,
			.listen_fd = TAKE_FD(so->e[l].fd),
			.pidfd = TAKE_FD(so->e[p].fd),
		};
	}
	return 0;
}

/* The entries without our prefix: the listening socket. */
static int pick_socket(struct sorting *so, bool want_socket, struct restore *rs)
{
	for (size_t i = 0; i < so->n; i++) {
		const char *arg;

		if (fdstore_parse_name(so->e[i].name, &arg) != FDSTORE_OTHER)
			continue;
		so->fate[i] = FATE_CLOSE;
		if (!want_socket) {
			log_warning("Closing %s, passed by the service manager: --socket= names the socket.",
				    so->e[i].name);
			continue;
		}
		if (rs->listen_fd >= 0)
			return log_error_errno(EINVAL, "Two sockets were passed, %s and %s; expected one.",
					       rs->listen_name, so->e[i].name);
		if (sd_is_socket_unix(so->e[i].fd, SOCK_SEQPACKET, 1, NULL, 0) <= 0)
			return log_error_errno(EINVAL, "The socket passed, %s, is not a listening AF_UNIX "
					       "SOCK_SEQPACKET socket.", so->e[i].name);
		rs->listen_name = strdup(so->e[i].name);
		if (!rs->listen_name)
			return log_oom();
		rs->listen_fd = TAKE_FD(so->e[i].fd);
	}
	if (want_socket && rs->listen_fd < 0)
		return log_error_errno(EBADF, "No socket was passed: start mshare-owner.socket, or use --socket=PATH.");
	return 0;
}

/* Removes the dropped entries from the store by name; an entry kept under
 * a name that was removed with them goes back in. */
static void apply_fates(struct fdstore *store, struct sorting *so, const struct restore *rs)
{
	_cleanup_strv_free_ char **removed = NULL;

	for (size_t i = 0; i < so->n; i++) {
		const char *arg;
		enum fdstore_kind kind = fdstore_parse_name(so->e[i].name, &arg);

		if (so->fate[i] != FATE_DROP)
			continue;
		if (kind == FDSTORE_UNKNOWN) {
			/* Of a newer version: not ours to judge. */
			log_warning("Leaving %s in the fd store alone: a kind this mshare-owner does not know.",
				    so->e[i].name);
			continue;
		}
		if (kind == FDSTORE_REGION)
			log_warning("Region '%s': its owner descriptor in the fd store is not in the saved state "
				    "(mshare-owner stopped between storing it and saving the state; nobody had it): "
				    "destroying it.", arg);
		else if (kind == FDSTORE_CHANNEL || kind == FDSTORE_PIDFD)
			log_notice("Dropping %s from the fd store: the saved state has no such container (a "
				   "registration that mshare-owner never confirmed).", so->e[i].name);
		if (strv_contains(removed, so->e[i].name))
			continue;
		(void)fdstore_remove(store, so->e[i].name);
		if (strv_extend(&removed, so->e[i].name) < 0)
			log_oom();
	}
	for (size_t i = 0; i < rs->n_regions; i++) {
		_cleanup_free_ char *name = fdstore_region_name(rs->regions[i].saved->config.name);

		if (name && strv_contains(removed, name))
			(void)fdstore_put(store, name, rs->regions[i].fd);
	}
	for (size_t i = 0; i < rs->n_channels; i++)
		for (int pidfd = 0; pidfd < 2; pidfd++) {
			_cleanup_free_ char *name = fdstore_channel_name(rs->channels[i].saved->serial, pidfd);

			if (name && strv_contains(removed, name))
				(void)fdstore_put(store, name, pidfd ? rs->channels[i].pidfd : rs->channels[i].listen_fd);
		}
}

int persist_restore(struct fdstore *store, bool want_socket, struct restore *ret)
{
	_cleanup_(persist_restore_done) struct restore rs = { .listen_fd = -1 };
	_cleanup_free_ enum fate *fate = NULL;
	struct sorting so = {};
	int k;

	k = fdstore_receive(&so.e, &so.n);
	if (k < 0)
		return k;
	fate = calloc(so.n ?: 1, sizeof(*fate)); /* FATE_DROP: until matched */
	if (!fate) {
		fdstore_entries_free(so.e, so.n);
		return log_oom();
	}
	so.fate = fate;
	if (so.n > 0 && !store->enabled)
		log_warning("%zu descriptors were passed, but there is no service manager ($NOTIFY_SOCKET) "
			    "to keep regions across restarts.", so.n);

	k = pick_socket(&so, want_socket, &rs);
	if (k == 0)
		k = pick_state(store, &so, &rs);
	if (k == 0)
		k = match_regions(&so, &rs);
	if (k == 0)
		k = match_channels(&so, &rs);
	if (k < 0) {
		fdstore_entries_free(so.e, so.n);
		return k;
	}
	apply_fates(store, &so, &rs);
	fdstore_entries_free(so.e, so.n);
	*ret = rs;
	rs = (struct restore){ .listen_fd = -1 };
	return 0;
}

void persist_adopt(struct restore *rs, struct manager *m, struct server *s)
{
	size_t regions = 0, channels = 0;

	for (size_t i = 0; i < rs->n_regions; i++) {
		struct restore_region *rr = &rs->regions[i];
		_cleanup_free_ char *name = fdstore_region_name(rr->saved->config.name);

		/* Logged; the region is lost: out of the store. */
		if (manager_adopt(m, &rr->saved->config, TAKE_FD(rr->fd), rr->saved->populated) < 0) {
			if (name)
				(void)fdstore_remove(m->store, name);
			continue;
		}
		regions++;
	}

	if (s->next_serial < rs->state.next_serial)
		s->next_serial = rs->state.next_serial;
	for (size_t i = 0; i < rs->n_channels; i++) {
		struct restore_channel *rc = &rs->channels[i];
		struct state_container *c = rc->saved;
		_cleanup_free_ char *id = strdup(c->id);
		struct channel *ch;
		int k;

		k = channel_adopt(s, c, TAKE_FD(rc->listen_fd), TAKE_FD(rc->pidfd), &ch);
		if (k < 0) {
			if (k == -ESRCH)
				log_info("Container %s, pid %d: its process exited while mshare-owner was not "
					 "running; its channel is closed.", strna(id), (int)c->pid);
			else
				log_warning_errno(k, "Container %s: cannot serve its channel again; it is closed: %m",
						  strna(id));
			for (int pidfd = 0; pidfd < 2; pidfd++) {
				_cleanup_free_ char *name = fdstore_channel_name(c->serial, pidfd);

				if (name)
					(void)fdstore_remove(s->store, name);
			}
			continue;
		}
		log_info("Container %s%s%s%s, pid %d: serving its channel again (%zu region%s).", ch->id,
			 ch->name ? " (" : "", strempty(ch->name), ch->name ? ")" : "", (int)ch->pid,
			 ch->n_regions, ch->n_regions == 1 ? "" : "s");
		channels++;
	}
	if (regions || channels)
		log_notice("Adopted %zu region%s and %zu container%s from the fd store.", regions,
			   regions == 1 ? "" : "s", channels, channels == 1 ? "" : "s");
}
