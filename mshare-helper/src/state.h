/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the daemon must know to adopt, after a restart, the descriptors it
 * left in the service manager's fd store (fdstore.h): each region's
 * configuration as it was created, whether populating it finished, and each
 * registered container. JSON, version STATE_VERSION; see "The state" in
 * docs/protocol.md. This file only turns the state into text and back.
 *
 * Members a later version adds are ignored (a downgrade keeps the regions);
 * an incompatible change takes a new version, which an older daemon refuses
 * to read.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "mshare-common/protocol.h"
#include "policy.h"

#define STATE_VERSION 1

struct state_region {
	struct region_config config;	/* as the region was created */
	uint64_t inode;			/* of its owner file: which region it is */
	bool populated;			/* populating finished (or was given up) */
};

struct state_container {
	uint64_t serial;		/* names its channel and pidfd in the store */
	char *id;
	char *name;			/* or NULL */
	struct container_annotation *annotations; /* owned strings */
	size_t n_annotations;
	struct proto_region_request *regions;
	size_t n_regions;
	pid_t pid;			/* at registration, for the log */
	char *cgroup;			/* its process's at registration */
};

struct state {
	uint64_t generation;		/* of the store entry it was read from or goes to */
	uint64_t next_serial;		/* for the next container */
	struct state_region *regions;
	size_t n_regions;
	struct state_container *containers;
	size_t n_containers;
};

/* Frees what state_from_json() made (a state built by hand for
 * state_to_json() may borrow its strings: free its arrays only). */
void state_done(struct state *s);

/* Compact JSON of s, which is only read. */
int state_to_json(const struct state *s, char **ret, size_t *ret_len);

/*
 * Parses and checks a state: -EBADMSG (not a state: not JSON, a member
 * missing or of the wrong type, a bad value), -EPROTONOSUPPORT (a newer
 * version), -ENOMEM; *ret_error says what is wrong.
 */
int state_from_json(const char *text, size_t len, struct state *ret, char **ret_error);
