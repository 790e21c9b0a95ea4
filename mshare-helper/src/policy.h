/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Who may receive which region, and how: the [Grant] sections of the
 * configuration applied to a peer. No implicit grants exist, not even for
 * root: a region is handed out only as a grant says.
 */

#include <sys/types.h>

#include "config.h"

/* A host process, as SO_PEERCRED and SO_PEERGROUPS describe it. */
struct peer_identity {
	uid_t uid;
	gid_t gid;
	const gid_t *groups;	/* supplementary groups */
	size_t n_groups;
};

struct container_annotation {
	const char *key;
	const char *value;
};

/* A container, as a trusted (root) peer such as the OCI hook names it. */
struct container_identity {
	const char *name;	/* NULL if unknown */
	const char *id;		/* NULL if unknown */
	const struct container_annotation *annotations;
	size_t n_annotations;
};

bool grant_matches_region(const struct grant *g, const char *region);
bool grant_matches_peer(const struct grant *g, const struct peer_identity *peer);
bool grant_matches_container(const struct grant *g, const struct container_identity *ct);

/*
 * The best access the grants give to region: ACCESS_RW, ACCESS_RO or
 * ACCESS_NONE. With ct set, only container grants count (the request is made
 * for the container, not for the peer); otherwise only host grants do.
 */
enum access_mode policy_access(const struct config *c, const char *region,
			       const struct peer_identity *peer,
			       const struct container_identity *ct);

/* Whether a peer asking for want gets it, given the access it has. */
static inline bool access_allows(enum access_mode have, enum access_mode want)
{
	return want != ACCESS_NONE && have >= want;
}
