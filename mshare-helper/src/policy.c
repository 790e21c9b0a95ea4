/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fnmatch.h>

#include "policy.h"

bool grant_matches_region(const struct grant *g, const char *region)
{
	return fnmatch(g->region, region, 0) == 0;
}

bool grant_matches_peer(const struct grant *g, const struct peer_identity *peer)
{
	for (size_t i = 0; i < g->n_uids; i++)
		if (g->uids[i] == peer->uid)
			return true;
	for (size_t i = 0; i < g->n_gids; i++) {
		if (g->gids[i] == peer->gid)
			return true;
		for (size_t j = 0; j < peer->n_groups; j++)
			if (g->gids[i] == peer->groups[j])
				return true;
	}
	return false;
}

static bool match_any(char *const *patterns, const char *s)
{
	if (!s)
		return false;
	for (size_t i = 0; patterns && patterns[i]; i++)
		if (fnmatch(patterns[i], s, 0) == 0)
			return true;
	return false;
}

static bool annotation_matches(const struct annotation_match *m,
			       const struct container_identity *ct)
{
	for (size_t i = 0; i < ct->n_annotations; i++)
		if (streq(ct->annotations[i].key, m->key))
			return fnmatch(m->pattern, ct->annotations[i].value, 0) == 0;
	return false;
}

bool grant_matches_container(const struct grant *g, const struct container_identity *ct)
{
	bool any = false;

	if (g->containers) {
		if (!match_any(g->containers, ct->name))
			return false;
		any = true;
	}
	if (g->container_ids) {
		if (!match_any(g->container_ids, ct->id))
			return false;
		any = true;
	}
	for (size_t i = 0; i < g->n_annotations; i++) {
		if (!annotation_matches(&g->annotations[i], ct))
			return false;
		any = true;
	}
	/* A grant with no container keys is for host processes only. */
	return any;
}

enum access_mode policy_access(const struct config *c, const char *region,
			       const struct peer_identity *peer,
			       const struct container_identity *ct)
{
	enum access_mode best = ACCESS_NONE;

	for (size_t i = 0; i < c->n_grants; i++) {
		const struct grant *g = &c->grants[i];
		bool match;

		if (g->mode <= best || !grant_matches_region(g, region))
			continue;
		match = ct ? grant_matches_container(g, ct) : grant_matches_peer(g, peer);
		if (match)
			best = g->mode;
	}
	return best;
}
