/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One region the daemon owns. The daemon holding region->fd is what keeps
 * the region alive: the kernel destroys a region when its owner closes its
 * last descriptor of it or exits, and every window onto it then faults.
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
	int fd;			/* read-write: the daemon's ownership; -1 if failed */
	int fd_ro;		/* read-only descriptor for ro grants */
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
	pid_t owner;
};

const char *region_state_to_string(enum region_state s);

/*
 * Creates, sizes and fills the region (logging what fails, with the region's
 * name and configuration file). On failure *ret is still set, to a region in
 * REGION_FAILED, unless memory ran out; the error is returned.
 */
int region_create(const struct region_config *config, struct region **ret);

/* Faults in every page from the daemon, so that the pages and page tables
 * are charged to its memory cgroup. progress is called between chunks. */
typedef void (*region_progress_t)(void *userdata, const struct region *r, uint64_t done);
int region_populate(struct region *r, region_progress_t progress, void *userdata);

int region_stats(const struct region *r, struct region_stats *ret);

/* Closes the region's descriptors: this destroys it. */
void region_free(struct region *r);
