/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The service manager's file descriptor store (systemd's
 * FileDescriptorStoreMax=, sd_pid_notify_with_fds(3)): what the daemon puts
 * there stays open while the daemon restarts, crashes or is upgraded, and
 * comes back with the next start in LISTEN_FDS and LISTEN_FDNAMES;
 * `systemctl stop` empties it. Since a region lives as long as its owner
 * file is open, the owner descriptors in the store are what keeps the
 * regions alive from one daemon to the next.
 *
 * Every entry the daemon makes is named FDSTORE_PREFIX KIND "-" ARG:
 *
 *	store-region-NAME	a region's owner descriptor (region names are
 *				valid descriptor names: no ':', at most 64
 *				printable ASCII characters)
 *	store-channel-SERIAL	a registered container's listening socket
 *	store-pidfd-SERIAL	and the pidfd of its process (systemd drops it
 *				from the store by itself once the process is
 *				reaped: the pidfd reports EPOLLHUP)
 *	store-state-GEN		the state (state.h), a sealed memfd; a new
 *				generation is stored before the old one is
 *				removed, so the newest valid one is the state
 *
 * Anything else that arrives, under a name without the prefix, is the
 * listening socket of mshare-owner.socket (named by its
 * FileDescriptorName=, by default the socket unit's name).
 *
 * Without $NOTIFY_SOCKET (started by hand) there is no store: storing does
 * nothing, and the regions end with the daemon, as before.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FDSTORE_PREFIX "store-"

enum fdstore_kind {
	FDSTORE_REGION,
	FDSTORE_CHANNEL,
	FDSTORE_PIDFD,
	FDSTORE_STATE,
	FDSTORE_UNKNOWN,	/* ours (the prefix), of a kind we do not know */
	FDSTORE_OTHER,		/* not ours: the listening socket */
};

struct fdstore {
	bool enabled;		/* a service manager keeps what we store */
	uint64_t generation;	/* the highest state generation seen or written */
	uint64_t stored;	/* the generation of the state in the store, 0: none */
};

/* A descriptor the service manager passed at start, with its name. */
struct fdstore_entry {
	int fd;
	char *name;
};

void fdstore_init(struct fdstore *s);

/* Puts fd into the store under name, or removes every entry named name.
 * Both log what fails (the daemon goes on: only a restart would lose it). */
int fdstore_put(struct fdstore *s, const char *name, int fd);
int fdstore_remove(struct fdstore *s, const char *name);

/* "store-region-NAME", "store-channel-N", "store-pidfd-N"; NULL on ENOMEM. */
char *fdstore_region_name(const char *region);
char *fdstore_channel_name(uint64_t serial, bool pidfd);

/*
 * The kind of an entry by its name, and what follows KIND- in *ret_arg
 * (the region name, the serial or generation as text). A name with the
 * prefix whose argument is not valid for its kind is FDSTORE_UNKNOWN.
 */
enum fdstore_kind fdstore_parse_name(const char *name, const char **ret_arg);
/* A decimal serial or generation, as fdstore_parse_name() returns it. */
int fdstore_parse_number(const char *arg, uint64_t *ret);

/* Takes the descriptors passed at start (sd_listen_fds_with_names(3)),
 * close-on-exec, with their names; the environment is unset. */
int fdstore_receive(struct fdstore_entry **ret, size_t *ret_n);
/* Closes what is left open in the entries and frees them. */
void fdstore_entries_free(struct fdstore_entry *e, size_t n);

/*
 * Stores text as the next generation of the state (a memfd sealed against
 * any change) and then removes the previous one. Logs what fails.
 */
int fdstore_save_state(struct fdstore *s, const char *text, size_t len);
/* Reads a state memfd: -EBADMSG if it is not sealed against writing,
 * shrinking and growing (not a state we wrote in full). */
int fdstore_read_state(int fd, char **ret, size_t *ret_len);
