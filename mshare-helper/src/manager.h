/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The set of regions the daemon owns, kept in line with the configuration:
 * loading it the first time creates every region; a reload creates new ones,
 * retires removed ones and replaces changed ones, but only once no process
 * has them attached (and none was handed out for a grace period), so that a
 * reload never pulls memory away from a running client. Regions adopted
 * from the fd store after a restart go through the same rules on the first
 * load.
 *
 * Every owner descriptor goes into the fd store when its region is created,
 * and out of it when the daemon destroys the region (retired, replaced,
 * mshare-ctl destroy); save() is called after each change that the state
 * must record, before the region is handed out. manager_done() at exit
 * only closes the daemon's copies: the store decides.
 */

#include "config.h"
#include "fdstore.h"
#include "region.h"

/* A region handed out this recently is not retired or replaced yet: the
 * client may not have attached it so far. */
#define MANAGER_HANDOUT_GRACE_USEC (10 * USEC_PER_SEC)

struct manager {
	const char *config_dir;
	struct config *config;	/* grants are read from here */
	struct region **regions;
	size_t n_regions;
	region_progress_t progress; /* while populating */
	void *progress_userdata;
	struct fdstore *store;	/* never NULL; may be disabled */
	void (*save)(void *userdata); /* writes the state (may be NULL) */
	void *save_userdata;
};

/*
 * Takes fd (an owner descriptor from the fd store) as region config->name,
 * as it was created with config; the first manager_load() then checks it
 * against the configuration. On failure fd is closed, the region lost.
 */
int manager_adopt(struct manager *m, const struct region_config *config, int fd, bool populated);

/*
 * Loads the configuration and brings the regions in line with it. On a
 * configuration error nothing changes and -EINVAL is returned, with the
 * errors logged and the first one in *ret_message. -ENOSYS if the kernel
 * lacks mshare. *ret_message otherwise summarizes the result.
 */
int manager_load(struct manager *m, char **ret_message);

/* Retires or replaces the changed and removed regions nobody uses any more;
 * verbose logs the ones still in use as notices (on reload), else at debug
 * level (the periodic check). */
void manager_collect(struct manager *m, usec_t now, bool verbose);
bool manager_has_pending(const struct manager *m);

struct region *manager_find(const struct manager *m, const char *name);

/*
 * Destroys region r now (mshare-ctl destroy): out of the fd store, its
 * descriptors closed; every window onto it faults from then on. If it is
 * still configured it is created anew at once, as at a start, and *ret is
 * the new one, else NULL.
 */
int manager_destroy(struct manager *m, struct region *r, struct region **ret);
/* "N regions (a active, ...)" */
char *manager_summary(const struct manager *m);

/* Closes the daemon's descriptors of every region: that destroys them,
 * unless the fd store holds their owner files. */
void manager_done(struct manager *m);
