/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The set of regions the daemon owns, kept in line with the configuration:
 * loading it the first time creates every region; a reload creates new ones,
 * retires removed ones and replaces changed ones, but only once no process
 * has them attached (and none was handed out for a grace period), so that a
 * reload never pulls memory away from a running client.
 */

#include "config.h"
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
};

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
/* "N regions (a active, ...)" */
char *manager_summary(const struct manager *m);

/* Closes every region, which destroys them. */
void manager_done(struct manager *m);
