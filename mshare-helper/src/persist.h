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
 * the listening socket, the newest valid state (older and broken ones are
 * removed from the store), and the descriptors that state names. The rules
 * for what a crash can leave behind:
 *
 *	a region or channel descriptor that the state does not name
 *		was stored moments before a crash, before the state named it,
 *		and was never handed out (a region) or never acknowledged (a
 *		registration: the hook got no reply and failed the container's
 *		start): removed from the store and closed (the region is
 *		destroyed, then created anew as configured)
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
 * rules) and the channels to the server.
 */

#include "fdstore.h"
#include "manager.h"
#include "server.h"
#include "state.h"

struct restore_region {
	struct state_region *saved;	/* in state */
	int fd;
};

struct restore_channel {
	struct state_container *saved;	/* in state */
	int listen_fd;
	int pidfd;
};

struct restore {
	int listen_fd;			/* the socket of mshare-owner.socket, or -1 */
	char *listen_name;
	struct state state;		/* the newest valid one, or empty */
	struct restore_region *regions;
	size_t n_regions;
	struct restore_channel *channels;
	size_t n_channels;
};

/*
 * Takes the descriptors passed at start. want_socket: the listening socket
 * must be among them (else the caller listens on a path of its own, and a
 * socket passed is closed). Returns -errno on errors that stop the start
 * (logged): no socket or several, a state of a newer version.
 */
int persist_restore(struct fdstore *store, bool want_socket, struct restore *ret);
/* The regions to the manager, the channels to the server (initialized). */
void persist_adopt(struct restore *rs, struct manager *m, struct server *s);
void persist_restore_done(struct restore *rs);

/* Writes the state of m's regions and s's channels into store. */
int persist_save(struct fdstore *store, const struct manager *m, const struct server *s);
