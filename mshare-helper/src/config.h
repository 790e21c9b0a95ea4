/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The configuration: /etc/mshare/regions.d/NAME.conf, INI files with [Region]
 * and [Grant] sections; see mshare-regions.conf(5). Parsing never logs: every
 * problem becomes one message "FILE:LINE: Key=: what is wrong" in *errors, and
 * the parse fails with -EINVAL when there is any.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "mshare-common/mode.h"
#include "util.h"

#define CONFIG_DIR_DEFAULT "/etc/mshare/regions.d"

enum region_backing {
	BACKING_ANONYMOUS,	/* anonymous shared memory */
	BACKING_MEMFD,		/* a memfd the daemon creates */
	BACKING_FILE,		/* a regular file, Path= */
	BACKING_HUGETLBFS,	/* anonymous hugetlbfs memory, HugePageSize= */
	_BACKING_MAX,
};

struct region_config {
	char *name;
	uint64_t size;		/* bytes of the object mapped at offset 0 */
	enum region_backing backing;
	char *path;		/* BACKING_FILE */
	uint64_t offset;	/* BACKING_FILE: offset into the file */
	uint64_t huge_page_size; /* BACKING_HUGETLBFS */
	int prot;		/* PROT_READ, PROT_WRITE, PROT_EXEC */
	bool populate;		/* fault everything in at creation */
	char *source;		/* "FILE:LINE" of the section */
};

struct annotation_match {
	char *key;
	char *pattern;		/* fnmatch(3) pattern for the value */
};

struct grant {
	char *region;		/* a region name or an fnmatch(3) pattern */
	enum access_mode mode;
	/* Host processes: the peer's uid, or one of its gids, is listed. */
	uid_t *uids;
	size_t n_uids;
	gid_t *gids;
	size_t n_gids;
	/* Containers (requests made by a root peer for a container, as the
	 * OCI hook does): every kind of key that is set must match. */
	char **containers;	/* name patterns, any may match */
	char **container_ids;	/* id patterns, any may match */
	struct annotation_match *annotations; /* all must match */
	size_t n_annotations;
	char *source;
};

struct config {
	struct region_config *regions;
	size_t n_regions;
	struct grant *grants;
	size_t n_grants;
};

const char *backing_to_string(enum region_backing b);
int backing_from_string(const char *s);
/* "r", "rw", "rx", "rwx" */
const char *prot_to_string(int prot);
int prot_from_string(const char *s);

struct config *config_new(void);
void config_free(struct config *c);
static inline void config_freep(struct config **c)
{
	config_free(*c);
}
#define _cleanup_config_free_ _cleanup_(config_freep)

/* Adds the sections of one file to c. */
int config_parse_file(struct config *c, FILE *f, const char *filename, char ***errors);
/* Checks across files (grants naming unknown regions). */
int config_verify(const struct config *c, char ***errors);
/* Every DIR/NAME.conf in lexical order, then config_verify(). A missing
 * directory is an empty configuration. */
int config_load_dir(const char *dir, struct config **ret, char ***errors);

const struct region_config *config_find_region(const struct config *c, const char *name);
/* Whether two regions of the same name would be created the same way
 * (Populate= only matters at creation and is not compared). */
bool region_config_equal(const struct region_config *a, const struct region_config *b);
/* What region_config_equal() compares and differs, for the log: "Size=
 * 67108864 -> 134217728, Backing= anonymous -> memfd" ("" if nothing); NULL
 * if memory ran out. */
char *region_config_diff(const struct region_config *old, const struct region_config *new);
int region_config_copy(const struct region_config *from, struct region_config *to);
void region_config_done(struct region_config *r);
void grant_done(struct grant *g);
