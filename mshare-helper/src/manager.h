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

/*
 * An owner descriptor from the fd store that could not be adopted yet: out
 * of memory or descriptors, /proc unreadable, ... Destroying a live region
 * for that would be wrong, so it is held (it stays in the store, and in
 * the state) and adopted again by manager_collect(), every time it runs
 * while the configuration is loaded: every 10 seconds and on each reload.
 * No region of its name is created meanwhile.
 */
struct held_region {
	struct region_config config;	/* as saved; only the name if unsaved */
	uint64_t inode;
	bool populated;
	bool unsaved;			/* no saved state names it */
	int error;			/* of the last try, logged */
	int fd;
};

struct manager {
	const char *config_dir;
	struct config *config;	/* grants are read from here */
	bool configured;	/* config was loaded from config_dir (not a stand-in) */
	struct region **regions;
	size_t n_regions;
	struct held_region *held;
	size_t n_held;
	region_progress_t progress; /* while populating */
	void *progress_userdata;
	struct fdstore *store;	/* never NULL; may be disabled */
	void (*save)(void *userdata); /* writes the state (may be NULL) */
	void *save_userdata;
};

/*
 * Takes *fd (an owner descriptor from the fd store, of inode) as region
 * name, as it was created with config (NULL: no saved state names it; see
 * region_adopt()); the first manager_load() then checks it against the
 * configuration. Returns REGION_NOT_OWNER (logged) if it is no region's
 * owner file: it is dropped from the store, which destroys nothing. On an
 * error (logged) it is held (struct held_region), unless memory ran out
 * before that could be recorded: then *fd is not taken (not -1), and the
 * caller must keep it (degraded mode), or the first load would create a
 * second region of its name.
 */
int manager_adopt(struct manager *m, const char *name, const struct region_config *config, uint64_t inode,
		  int *fd, bool populated);

/* The entries of the fd store that m's regions take: one per owner file. */
size_t manager_store_entries(const struct manager *m);

/*
 * Loads the configuration and brings the regions in line with it. On a
 * configuration error nothing changes and -EINVAL is returned, with the
 * errors logged and the first one in *ret_message. -ENOSYS if the kernel
 * lacks mshare. *ret_message otherwise summarizes the result.
 */
int manager_load(struct manager *m, char **ret_message);

/* Adopts the held regions again (with the configuration loaded), and
 * retires or replaces the changed and removed regions nobody uses any more;
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
/* "N regions: a active, ..." */
char *manager_summary(const struct manager *m);

/* Closes the daemon's descriptors of every region (and held one): that
 * destroys them, unless the fd store holds their owner files. */
void manager_done(struct manager *m);
