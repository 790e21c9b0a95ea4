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
 *	store-state-GEN		the state (state.h), a sealed memfd. The two
 *				newest generations stay: systemd may drop a
 *				new one without telling us (its store full),
 *				and the one before is then the state. Two
 *				generations survive one lost save; after two
 *				in a row, a start adopts what no state names
 *				by name (persist.h)
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
/* The entries of the state: its two newest generations, and a third
 * while a new one is saved, since the new one goes in before the oldest
 * leaves (fdstore_save_state()). */
#define FDSTORE_STATE_ENTRIES 3
/* FileDescriptorStoreMax= of mshare-owner.service. */
#define FDSTORE_MAX_DEFAULT 16384

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
	uint64_t previous;	/* the one before it, kept until a newer one is stored; 0: none */
	size_t max;		/* entries the service manager keeps (--fdstore-max=) */
	/* The entries the daemon keeps besides the state's (NULL: not counted). */
	size_t (*count)(void *userdata);
	void *count_userdata;
};

/* A descriptor the service manager passed at start, with its name. */
struct fdstore_entry {
	int fd;
	char *name;
};

void fdstore_init(struct fdstore *s, size_t max);

/* -ENOSPC if more entries would make what the daemon keeps in the store
 * (its count, and the state's) exceed max: the service manager would
 * drop them without a word, and a restart would lose them. */
int fdstore_reserve(const struct fdstore *s, size_t more);

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

/* How many of the descriptors passed to this process at start
 * ($LISTEN_PID, $LISTEN_FDNAMES) are named as the daemon's own entries:
 * if any, exiting would make systemd empty the store. Only before
 * fdstore_receive(), which unsets the environment. */
size_t fdstore_passed(void);

/* Takes the descriptors passed at start (sd_listen_fds_with_names(3)),
 * close-on-exec, with their names; the environment is unset. If memory
 * runs out, *ret is NULL, *ret_n how many were passed, and they are left
 * open: closing them could end regions. */
int fdstore_receive(struct fdstore_entry **ret, size_t *ret_n);
/* Closes what is left open in the entries and frees them. */
void fdstore_entries_free(struct fdstore_entry *e, size_t n);

/*
 * Stores text as the next generation of the state (a memfd sealed against
 * any change) and then removes the one before the previous one: the
 * previous one stays in the store at every moment. Logs what fails.
 */
int fdstore_save_state(struct fdstore *s, const char *text, size_t len);
/* Reads a state memfd: -EBADMSG if it is not sealed against writing,
 * shrinking and growing (not a state we wrote in full). */
int fdstore_read_state(int fd, char **ret, size_t *ret_len);
