/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>

#include "channel.h"
#include "crash.h"
#include "log.h"
#include "peer.h"
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
	regions = calloc(m->n_regions + m->n_held ?: 1, sizeof(*regions));
	containers = calloc(s->n_channels ?: 1, sizeof(*containers));
	if (!regions || !containers)
		return log_oom();
	/* Borrowed: state_to_json() only reads. */
	for (size_t i = 0; i < m->n_regions; i++) {
		const struct region *r = m->regions[i];

		/* An unsaved one's configuration is a guess: without it, the
		 * next start identifies it by name again. */
		if (r->fd < 0 || r->unsaved)
			continue;
		regions[st.n_regions++] = (struct state_region){
			.config = r->config,
			.inode = r->inode,
			.populated = r->populated,
		};
	}
	for (size_t i = 0; i < m->n_held; i++) {
		const struct held_region *h = &m->held[i];

		if (h->unsaved)
			continue;
		regions[st.n_regions++] = (struct state_region){
			.config = h->config,
			.inode = h->inode,
			.populated = h->populated,
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
	fdstore_entries_free(rs->passed, rs->n_passed);
	safe_close(rs->listen_fd);
	free(rs->listen_name);
	for (size_t i = 0; i < rs->n_regions; i++) {
		safe_close(rs->regions[i].fd);
		free(rs->regions[i].name);
	}
	free(rs->regions);
	for (size_t i = 0; i < rs->n_channels; i++) {
		safe_close(rs->channels[i].listen_fd);
		safe_close(rs->channels[i].pidfd);
	}
	free(rs->channels);
	for (size_t i = 0; i < rs->n_held_channels; i++) {
		safe_close(rs->held_channels[i].listen_fd);
		safe_close(rs->held_channels[i].pidfd);
	}
	free(rs->held_channels);
	state_done(&rs->state);
	*rs = (struct restore){ .listen_fd = -1 };
}

/* What happens to each descriptor passed at start. */
enum fate {
	FATE_DROP,	/* removed from the store, closed; unless matched later */
	FATE_GONE,	/* removed from the store, closed; logged why already */
	FATE_KEEP,	/* adopted: stays in the store */
	FATE_CLOSE,	/* closed, left in the store (or not ours) */
};

struct sorting {
	struct fdstore_entry *e;
	size_t n;
	enum fate *fate;
};

/*
 * Reads state entry e, of generation gen, into *st. -EBADMSG if it is not
 * a valid state (logged: it is dropped); any other error stops the start.
 */
static int read_state(const struct fdstore_entry *e, uint64_t gen, struct state *st)
{
	_cleanup_free_ char *text = NULL, *error = NULL;
	size_t len;
	int k;

	k = fdstore_read_state(e->fd, &text, &len);
	if (k == 0)
		k = state_from_json(text, len, st, &error);
	if (k == 0 && st->generation != gen) {
		state_done(st);
		k = error_set(&error, -EBADMSG, "it says generation %" PRIu64, st->generation);
	}
	if (k == -EPROTONOSUPPORT)
		return log_error_errno(k, "The fd store's %s was written by a newer mshare-owner: %s. Start that "
				       "version again, or stop the service to end its regions.", e->name,
				       strna(error));
	if (k == -EBADMSG || k == -EFBIG) {
		log_warning_errno(k, "Ignoring %s in the fd store: %s", e->name, error ?: strerror(-k));
		return -EBADMSG;
	}
	if (k < 0)
		return log_error_errno(k, "Cannot read %s from the fd store: %m", e->name);
	return 0;
}

/*
 * The state entries: the newest valid one into rs->state, and the valid
 * one before it; both stay in the store, the one before until the next
 * state is saved (fdstore_save_state()), since systemd may drop that one
 * without a word. The rest are dropped: by generation, which is by name.
 */
static int pick_state(struct fdstore *store, struct sorting *so, struct restore *rs)
{
	ssize_t best = -1;
	uint64_t previous = 0;

	for (size_t i = 0; i < so->n; i++) {
		_cleanup_(state_done) struct state st = {};
		const char *arg;
		uint64_t gen = 0;
		int k;

		if (fdstore_parse_name(so->e[i].name, &arg) != FDSTORE_STATE)
			continue;
		(void)fdstore_parse_number(arg, &gen);
		if (gen > store->generation)
			store->generation = gen;
		k = read_state(&so->e[i], gen, &st);
		if (k == -EBADMSG)
			continue;
		if (k < 0)
			return k;
		if (best >= 0 && gen <= rs->state.generation) {
			if (gen < rs->state.generation && gen > previous)
				previous = gen;
			continue;
		}
		if (best >= 0)
			previous = rs->state.generation;
		best = (ssize_t)i;
		state_done(&rs->state);
		rs->state = st;
		st = (struct state){};
	}
	for (size_t i = 0; i < so->n; i++) {
		const char *arg;
		uint64_t gen = 0;

		if (fdstore_parse_name(so->e[i].name, &arg) != FDSTORE_STATE)
			continue;
		(void)fdstore_parse_number(arg, &gen);
		/* The store keeps them; our copies are not needed. */
		if (best >= 0 && (gen == rs->state.generation || gen == previous))
			so->fate[i] = FATE_CLOSE;
	}
	if (best >= 0) {
		store->stored = rs->state.generation;
		store->previous = previous;
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

/* Takes entry i as a region to adopt, as saved (NULL: no state names it). */
static int take_region(struct sorting *so, size_t i, const char *name, struct state_region *saved,
		       struct restore *rs)
{
	char *copy = strdup(name);

	if (!copy)
		return log_oom();
	so->fate[i] = FATE_KEEP;
	rs->regions[rs->n_regions++] = (struct restore_region){
		.saved = saved,
		.name = copy,
		.fd = TAKE_FD(so->e[i].fd),
	};
	return 0;
}

static bool restore_has_region(const struct restore *rs, const char *name)
{
	for (size_t i = 0; i < rs->n_regions; i++)
		if (streq(rs->regions[i].name, name))
			return true;
	return false;
}

static int match_regions(struct sorting *so, struct restore *rs)
{
	/* Each takes an entry: so->n is room enough. */
	rs->regions = calloc(so->n ?: 1, sizeof(*rs->regions));
	if (!rs->regions)
		return log_oom();
	for (size_t j = 0; j < rs->state.n_regions; j++) {
		struct state_region *sr = &rs->state.regions[j];
		ssize_t i = find_entry(so, FDSTORE_REGION, sr->config.name, sr->inode);
		int k;

		if (i < 0 && find_entry(so, FDSTORE_REGION, sr->config.name, 0) >= 0) {
			log_notice("Region '%s' of the saved state (inode %" PRIu64 ") is not in the fd store, but "
				   "another region of that name is: it replaced that one moments before "
				   "mshare-owner stopped, and is adopted by its name.", sr->config.name, sr->inode);
			continue;
		}
		if (i < 0) {
			log_notice("Region '%s' of the saved state (inode %" PRIu64 ") is not in the fd store: it was "
				   "destroyed moments before mshare-owner stopped, or the store could not keep it; "
				   "it is created anew if it is configured.", sr->config.name, sr->inode);
			continue;
		}
		k = take_region(so, (size_t)i, sr->config.name, sr, rs);
		if (k < 0)
			return k;
	}
	return 0;
}

/*
 * Region owner files that the state does not name: stored moments before
 * a crash, before a state named them, or named by a state that systemd
 * dropped. Nothing tells what they were created as but their name and
 * size: persist_adopt() adopts them by name, and the first load checks
 * them against the configuration. A second one under a name that is
 * taken is left to apply_fates(): the daemon stored a region under that
 * name anew, after destroying the one before, whose removal was lost.
 */
static int match_unsaved_regions(struct sorting *so, struct restore *rs)
{
	for (size_t i = 0; i < so->n; i++) {
		const char *name;
		int k;

		if (so->fate[i] != FATE_DROP || fdstore_parse_name(so->e[i].name, &name) != FDSTORE_REGION ||
		    restore_has_region(rs, name))
			continue;
		k = take_region(so, i, name, NULL, rs);
		if (k < 0)
			return k;
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
			if (l >= 0 || p >= 0)
				so->fate[l >= 0 ? l : p] = FATE_GONE;
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

/* Channel entry i, which no state names, and its pidfd entry p (-1: none):
 * held while the pidfd says the process lives (or cannot tell), else
 * dropped. */
static void match_unsaved_channel(struct sorting *so, size_t i, ssize_t p, struct restore *rs)
{
	const char *arg;
	uint64_t serial = 0;

	if (p < 0 || pidfd_is_alive(so->e[p].fd) == 0) {
		log_info("Dropping %s%s from the fd store: no saved state names its container, and %s.",
			 so->e[i].name, p < 0 ? "" : " and its pidfd", p < 0 ? "its pidfd is gone (the service "
			 "manager drops it once the process is reaped)" : "its process has exited");
		so->fate[i] = FATE_GONE;
		if (p >= 0)
			so->fate[p] = FATE_GONE;
		return;
	}
	(void)fdstore_parse_name(so->e[i].name, &arg);
	(void)fdstore_parse_number(arg, &serial);
	so->fate[i] = so->fate[p] = FATE_KEEP;
	rs->held_channels[rs->n_held_channels++] = (struct restore_held_channel){
		.serial = serial,
		.listen_fd = TAKE_FD(so->e[i].fd),
		.pidfd = TAKE_FD(so->e[p].fd),
	};
}

/* The channels and pidfds that no state names (see persist.h). */
static int match_unsaved_channels(struct sorting *so, struct restore *rs)
{
	/* Each takes two entries: so->n is room enough. */
	rs->held_channels = calloc(so->n ?: 1, sizeof(*rs->held_channels));
	if (!rs->held_channels)
		return log_oom();
	for (size_t i = 0; i < so->n; i++) {
		const char *serial;

		if (so->fate[i] == FATE_DROP && fdstore_parse_name(so->e[i].name, &serial) == FDSTORE_CHANNEL)
			match_unsaved_channel(so, i, find_entry(so, FDSTORE_PIDFD, serial, 0), rs);
	}
	for (size_t i = 0; i < so->n; i++) {
		const char *serial;

		if (so->fate[i] != FATE_DROP || fdstore_parse_name(so->e[i].name, &serial) != FDSTORE_PIDFD)
			continue;
		log_info("Dropping %s from the fd store: its container's channel is not there (alone, a pidfd "
			 "serves nothing).", so->e[i].name);
		so->fate[i] = FATE_GONE;
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

/* The channel of serial back into the store, under the names removed. */
static void put_back_channel(struct fdstore *store, char **removed, uint64_t serial, int listen_fd, int pidfd)
{
	for (int p = 0; p < 2; p++) {
		_cleanup_free_ char *name = fdstore_channel_name(serial, p);

		if (name && strv_contains(removed, name))
			(void)fdstore_put(store, name, p ? pidfd : listen_fd);
	}
}

/* Removes the dropped entries from the store by name; an entry kept under
 * a name that was removed with them goes back in. */
static void apply_fates(struct fdstore *store, struct sorting *so, const struct restore *rs)
{
	_cleanup_strv_free_ char **removed = NULL;

	for (size_t i = 0; i < so->n; i++) {
		const char *arg;
		enum fdstore_kind kind = fdstore_parse_name(so->e[i].name, &arg);

		if (so->fate[i] != FATE_DROP && so->fate[i] != FATE_GONE)
			continue;
		if (kind == FDSTORE_UNKNOWN) {
			/* Of a newer version: not ours to judge. */
			log_warning("Leaving %s in the fd store alone: a kind this mshare-owner does not know.",
				    so->e[i].name);
			continue;
		}
		if (kind == FDSTORE_REGION)
			log_warning("Region '%s': a second owner descriptor under its name in the fd store, which "
				    "no saved state names (mshare-owner destroyed it, but its removal from the "
				    "store was lost): destroying it.", arg);
		if (strv_contains(removed, so->e[i].name))
			continue;
		(void)fdstore_remove(store, so->e[i].name);
		if (strv_extend(&removed, so->e[i].name) < 0)
			log_oom();
	}
	for (size_t i = 0; i < rs->n_regions; i++) {
		_cleanup_free_ char *name = fdstore_region_name(rs->regions[i].name);

		if (name && strv_contains(removed, name))
			(void)fdstore_put(store, name, rs->regions[i].fd);
	}
	for (size_t i = 0; i < rs->n_channels; i++)
		put_back_channel(store, removed, rs->channels[i].saved->serial, rs->channels[i].listen_fd,
				 rs->channels[i].pidfd);
	for (size_t i = 0; i < rs->n_held_channels; i++)
		put_back_channel(store, removed, rs->held_channels[i].serial, rs->held_channels[i].listen_fd,
				 rs->held_channels[i].pidfd);
}

/* How many of the entries are the daemon's own (not the socket); all of
 * them if their names are not known. */
static size_t count_ours(const struct fdstore_entry *e, size_t n)
{
	size_t ours = 0;

	if (!e)
		return n;
	for (size_t i = 0; i < n; i++) {
		const char *arg;

		ours += fdstore_parse_name(e[i].name, &arg) != FDSTORE_OTHER;
	}
	return ours;
}

/* Sorts out the entries passed (rs->passed); on failure what is left of
 * them stays there. */
static int sort_entries(struct fdstore *store, bool want_socket, struct restore *rs)
{
	_cleanup_free_ enum fate *fate = NULL;
	struct sorting so = { .e = rs->passed, .n = rs->n_passed };
	int k;

	fate = calloc(so.n ?: 1, sizeof(*fate)); /* FATE_DROP: until matched */
	if (!fate)
		return log_oom();
	so.fate = fate;
	k = pick_socket(&so, want_socket, rs);
	if (k == 0)
		k = pick_state(store, &so, rs);
	if (k == 0)
		k = match_regions(&so, rs);
	if (k == 0)
		k = match_unsaved_regions(&so, rs);
	if (k == 0)
		k = match_channels(&so, rs);
	if (k == 0)
		k = match_unsaved_channels(&so, rs);
	if (k < 0)
		return k;
	apply_fates(store, &so, rs);
	return 0;
}

int persist_restore(struct fdstore *store, bool want_socket, struct restore *rs)
{
	/* Before receiving, which unsets the environment: if that fails, the
	 * names still tell whether the store passed anything. */
	size_t named = fdstore_passed();
	int k;

	k = fdstore_receive(&rs->passed, &rs->n_passed);
	rs->n_stored = count_ours(rs->passed, rs->n_passed);
	if (rs->n_stored < named)
		rs->n_stored = named;
	crash_point("received");
	if (k < 0)
		return k;
	if (rs->n_passed > 0 && !store->enabled)
		log_warning("%zu descriptors were passed, but there is no service manager ($NOTIFY_SOCKET) "
			    "to keep regions across restarts.", rs->n_passed);
	k = sort_entries(store, want_socket, rs);
	if (k < 0)
		return k;
	/* What was not taken: closed (and dropped from the store before). */
	fdstore_entries_free(rs->passed, rs->n_passed);
	rs->passed = NULL;
	rs->n_passed = 0;
	return 0;
}

/* What persist_adopt() did, for its summary. */
struct adopted {
	size_t regions, held, channels, held_channels;
};

static int adopt_regions(struct restore *rs, struct manager *m, struct adopted *n)
{
	for (size_t i = 0; i < rs->n_regions; i++) {
		struct restore_region *rr = &rs->regions[i];
		const struct state_region *sr = rr->saved;
		int k;

		/* Logged; held by the manager unless it is no region's owner file. */
		k = manager_adopt(m, rr->name, sr ? &sr->config : NULL, sr ? sr->inode : 0, &rr->fd,
				  sr ? sr->populated : true);
		if (rr->fd >= 0)
			return k; /* not even held: no memory */
		if (k == 0)
			n->regions++;
		else if (k != REGION_NOT_OWNER)
			n->held++;
	}
	return 0;
}

/* The channel's entries out of the store: its process exited. */
static void drop_channel(struct server *s, const struct state_container *c, const char *id)
{
	log_info("Container %s, pid %d: its process exited while mshare-owner was not running; its channel is "
		 "closed.", strna(id), (int)c->pid);
	for (int pidfd = 0; pidfd < 2; pidfd++) {
		_cleanup_free_ char *name = fdstore_channel_name(c->serial, pidfd);

		if (name)
			(void)fdstore_remove(s->store, name);
	}
}

static int adopt_channels(struct restore *rs, struct server *s, struct adopted *n)
{
	if (s->next_serial < rs->state.next_serial)
		s->next_serial = rs->state.next_serial;
	for (size_t i = 0; i < rs->n_channels; i++) {
		struct restore_channel *rc = &rs->channels[i];
		struct state_container *c = rc->saved;
		_cleanup_free_ char *id = strdup(c->id);
		struct channel *ch;
		int k;

		k = channel_adopt(s, c, TAKE_FD(rc->listen_fd), TAKE_FD(rc->pidfd), &ch);
		if (k == -ESRCH) {
			drop_channel(s, c, id);
			continue;
		}
		/* Anything else proves nothing: the store keeps it, and a
		 * restart tries again (degraded mode until then). */
		if (k < 0)
			return log_error_errno(k, "Container %s: cannot serve its channel again: %m", strna(id));
		log_info("Container %s%s%s%s, pid %d: serving its channel again (%zu region%s).", ch->id,
			 ch->name ? " (" : "", strempty(ch->name), ch->name ? ")" : "", (int)ch->pid,
			 ch->n_regions, ch->n_regions == 1 ? "" : "s");
		n->channels++;
	}
	return 0;
}

static int hold_channels(struct restore *rs, struct server *s, struct adopted *n)
{
	for (size_t i = 0; i < rs->n_held_channels; i++) {
		struct restore_held_channel *h = &rs->held_channels[i];
		int k = channel_hold(s, h->serial, TAKE_FD(h->listen_fd), TAKE_FD(h->pidfd));

		if (k < 0)
			return k;
		n->held_channels++;
	}
	return 0;
}

int persist_adopt(struct restore *rs, struct manager *m, struct server *s)
{
	struct adopted n = {};
	int k;

	k = adopt_regions(rs, m, &n);
	if (k == 0)
		k = adopt_channels(rs, s, &n);
	if (k == 0)
		k = hold_channels(rs, s, &n);
	if (k < 0)
		return k;
	if (n.regions || n.channels || n.held || n.held_channels)
		log_notice("Adopted %zu region%s and %zu container%s from the fd store%s%s.", n.regions,
			   n.regions == 1 ? "" : "s", n.channels, n.channels == 1 ? "" : "s",
			   n.held ? "; some regions are held until they can be adopted (see above)" : "",
			   n.held_channels ? "; some channels are held, not served (see above)" : "");
	return 0;
}
