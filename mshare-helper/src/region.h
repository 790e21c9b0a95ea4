/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One region the daemon owns. region->fd is the region's owner file, the
 * one mshare_create() returned: holding it is owning the region, and the
 * kernel destroys the region when the last reference to that file goes
 * (every window onto it then faults). The daemon keeps a copy in the
 * service manager's fd store (fdstore.h), so that the region outlives the
 * daemon's restarts. Clients never get the owner file: read-write grants
 * get fd_rw, read-only ones fd_ro, both opened anew from it and carrying
 * no ownership.
 */

#include <stdint.h>

#include "config.h"
#include "util.h"

enum region_state {
	REGION_ACTIVE,		/* configured as it is, handed out */
	REGION_CHANGED,		/* config changed; still handed out; replaced once unused */
	REGION_RETIRING,	/* removed from config; no longer handed out; closed once unused */
	REGION_FAILED,		/* configured, but creating it failed; retried on reload */
	_REGION_STATE_MAX,
};

struct region {
	struct region_config config;
	enum region_state state;
	int fd;			/* the owner file; -1 if failed */
	int fd_ro;		/* read-only, no ownership: for ro grants */
	int fd_rw;		/* read-write, no ownership: for rw grants */
	uint64_t inode;		/* of the owner file: the region's identity */
	bool populated;		/* populating finished (or was given up) */
	bool adopted;		/* from the fd store, not yet checked against the configuration */
	bool unsaved;		/* adopted without a saved configuration: config is a guess (region_claim()) */
	bool claimed;		/* config claimed by name, not known to be what it was created with */
	bool no_room;		/* REGION_FAILED: not created, the fd store has no room for it */
	uint64_t align;		/* the sharing alignment */
	uint64_t region_size;	/* config.size rounded up to the alignment */
	int error;		/* REGION_FAILED: why */
	struct region_config pending; /* REGION_CHANGED: the new configuration */
	usec_t last_handout;	/* when a descriptor was last handed out */
};

struct region_stats {
	uint64_t rss_bytes;
	uint64_t pgtables_bytes;
	unsigned attached;
	unsigned windows;
	bool owned;		/* the region has an owner (its contents live) */
	bool owner_fd;		/* region->fd is an owner file (or the kernel does not tell) */
};

const char *region_state_to_string(enum region_state s);

/*
 * Creates, sizes and fills the region (logging what fails, with the region's
 * name and configuration file). On failure *ret is still set, to a region in
 * REGION_FAILED, unless memory ran out; the error is returned.
 */
int region_create(const struct region_config *config, struct region **ret);

/* A region in REGION_FAILED for error, not even tried (NULL: no memory). */
struct region *region_new_failed(const struct region_config *config, int error);

/* What region_adopt() returns when the kernel says the descriptor is no
 * live region's owner file, and nothing else does: only that proves that
 * keeping it keeps nothing alive. */
#define REGION_NOT_OWNER 1

/*
 * Takes fd, an owner descriptor a previous daemon left in the fd store
 * under name, as the region that config (as it was created) describes:
 * checks that it is the owner file of a live region, and opens the
 * sharers' descriptors. Without config (no saved state names it), or if
 * the region's size is not the one config gives (logged), its
 * configuration is not known: the region gets one from its name and size,
 * marked unsaved, until region_claim(). fd is taken on success (0) only.
 * REGION_NOT_OWNER if fd is no live region's owner file. Errors (memory,
 * descriptors, /proc) pass; they prove nothing about fd. Nothing is
 * logged.
 */
int region_adopt(const char *name, const struct region_config *config, int fd, bool populated,
		 struct region **ret);

/*
 * r, unsaved, takes c, the configuration of its name, as its own: all of
 * it if r has the size c gives (returns 1), else c with r's size (returns
 * 0), which then differs from c in Size= only. r is marked claimed: its
 * protection and backing are c's guess.
 */
int region_claim(struct region *r, const struct region_config *c);

/* Faults in every page from the daemon, so that the pages and page tables
 * are charged to its memory cgroup; never changes the contents. progress
 * is called between chunks. Sets populated (also when it gives up: the
 * rest is faulted in on use). */
typedef void (*region_progress_t)(void *userdata, const struct region *r, uint64_t done);
int region_populate(struct region *r, region_progress_t progress, void *userdata);

int region_stats(const struct region *r, struct region_stats *ret);

/* Closes the region's descriptors: this destroys it, unless the service
 * manager's fd store holds the owner file too. */
void region_free(struct region *r);
