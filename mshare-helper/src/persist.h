/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Restarts: what the daemon leaves in the service manager's fd store
 * (fdstore.h) and what it makes of it on the next start.
 *
 * persist_save() writes the state (state.h) from the regions and channels
 * the daemon holds. The daemon calls it at the points where a crash must
 * find the state up to date: after a region's owner file went into the
 * store (before the region is populated and handed out), after populating,
 * after a region left the store, after a registration (before its reply),
 * after a channel ended.
 *
 * At start, persist_restore() sorts out what the service manager passed:
 * the listening socket, the newest valid state and the valid one before it
 * (kept in the store until the next state is saved; older and broken ones
 * are removed), and the descriptors of regions and channels. The two
 * generations protect against one save that systemd refused without a
 * word (its store full); after two in a row no state may be left, and
 * the rules for what no state names are the second line. The rules for
 * what a crash or a lost state can leave behind:
 *
 *	a region descriptor that the state does not name
 *		was stored moments before a crash, before the state named it,
 *		or the state naming it was lost: adopted by its name, without
 *		its contents touched; the first load takes the configuration
 *		of that name as its own if the region has the size it gives
 *		(and populates it again if configured so: that only faults
 *		pages in), and otherwise treats it as a region whose
 *		configuration changed or was removed (replaced or retired once
 *		nothing has it attached). It is left out of the state until
 *		then, so that a restart identifies it by name again
 *	a channel and pidfd that the state does not name
 *		were stored moments before a crash, before the state named
 *		them (the hook got no reply and failed the container's start),
 *		or the states naming them were lost. Their registration lived
 *		in the state only: while the pidfd says the process lives, the
 *		channel is held, not served (struct held_channel), and leaves
 *		the store once the process exits; one whose pidfd is gone or
 *		says it exited is removed from the store and closed, and so is
 *		a pidfd without its channel (it serves nothing)
 *	a region of the state that the store does not have
 *		was destroyed on purpose moments before a crash (retired,
 *		replaced, mshare-ctl destroy), or the store could not keep it
 *		(FileDescriptorStoreMax=): created anew if configured
 *	a region the state says was not populated in full
 *		a crash interrupted populating it: the first load finishes it
 *	a container whose pidfd is gone from the store or says it exited
 *		the container ended while the daemon was down: its channel is
 *		removed from the store and closed
 *
 * persist_adopt() then hands the regions to the manager (the first
 * manager_load() checks them against the configuration, with the reload
 * rules; one that cannot be adopted for now is held and tried again, see
 * manager_adopt()) and the channels to the server. Only positive evidence
 * removes an entry from the store: a descriptor the kernel says is no
 * live region's owner file, a container's process that exited.
 */

#include "fdstore.h"
#include "manager.h"
#include "server.h"
#include "state.h"

struct restore_region {
	struct state_region *saved;	/* in state; NULL: no state names it */
	char *name;
	int fd;
};

struct restore_channel {
	struct state_container *saved;	/* in state */
	int listen_fd;
	int pidfd;
};

/* A channel that no state names, to be held (struct held_channel). */
struct restore_held_channel {
	uint64_t serial;
	int listen_fd;
	int pidfd;
};

struct restore {
	struct fdstore_entry *passed;	/* what was passed and is not sorted out yet */
	size_t n_passed;
	size_t n_stored;		/* of them the daemon's own entries (not the socket) */
	int listen_fd;			/* the socket of mshare-owner.socket, or -1 */
	char *listen_name;
	struct state state;		/* the newest valid one, or empty */
	struct restore_region *regions;
	size_t n_regions;
	struct restore_channel *channels;
	size_t n_channels;
	struct restore_held_channel *held_channels;
	size_t n_held_channels;
};

/*
 * Takes the descriptors passed at start into rs (initialized with
 * listen_fd -1). want_socket: the listening socket must be among them
 * (else the caller listens on a path of its own, and a socket passed is
 * closed). Returns -errno on errors that stop the start (logged): no
 * socket or several, a state of a newer version or one that cannot be
 * read, no memory, descriptors that cannot be taken. Then nothing was
 * removed from the store, and rs holds every descriptor passed until
 * persist_restore_done(): with rs->n_stored > 0, the caller must not exit
 * (see mshare-owner(8), degraded mode).
 */
int persist_restore(struct fdstore *store, bool want_socket, struct restore *rs);
/*
 * The regions to the manager, the channels to the server (initialized).
 * An error (logged) that leaves something neither adopted nor held, and
 * not proven gone (no memory, a channel that cannot be served for now),
 * is returned at once, with what is left in rs: the caller runs degraded,
 * which keeps it all in the store.
 */
int persist_adopt(struct restore *rs, struct manager *m, struct server *s);
void persist_restore_done(struct restore *rs);

/* Writes the state of m's regions and s's channels into store. */
int persist_save(struct fdstore *store, const struct manager *m, const struct server *s);
