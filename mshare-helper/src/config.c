/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Parser for mshare-regions.conf(5). libinih does the INI syntax; this file
 * gives the keys their meaning. inih is used through ini_parse_stream() with
 * a line reader of our own, which counts lines (Debian's libinih is built
 * without INI_HANDLER_LINENO), notices section headers (so that two [Region]
 * sections in a row stay apart), rejects over-long lines instead of letting
 * inih split them, and strips leading blanks (so that an indented line is a
 * key of its own, never a continuation line).
 */
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <ini.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "config.h"
#include "mshare-common/escape.h"
#include "mshare-common/utf8.h"

static const char *const backing_names[_BACKING_MAX] = {
	[BACKING_ANONYMOUS] = "anonymous",
	[BACKING_MEMFD] = "memfd",
	[BACKING_FILE] = "file",
	[BACKING_HUGETLBFS] = "hugetlbfs",
};

const char *backing_to_string(enum region_backing b)
{
	return b < _BACKING_MAX ? backing_names[b] : "unknown";
}

int backing_from_string(const char *s)
{
	for (size_t i = 0; i < _BACKING_MAX; i++)
		if (streq(s, backing_names[i]))
			return (int)i;
	return -EINVAL;
}

static const struct {
	const char *name;
	int prot;
} prot_names[] = {
	{ "r", PROT_READ },
	{ "rw", PROT_READ | PROT_WRITE },
	{ "rx", PROT_READ | PROT_EXEC },
	{ "rwx", PROT_READ | PROT_WRITE | PROT_EXEC },
};

const char *prot_to_string(int prot)
{
	for (size_t i = 0; i < ARRAY_SIZE(prot_names); i++)
		if (prot_names[i].prot == prot)
			return prot_names[i].name;
	return "?";
}

int prot_from_string(const char *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(prot_names); i++)
		if (streq(s, prot_names[i].name))
			return prot_names[i].prot;
	return -EINVAL;
}

void region_config_done(struct region_config *r)
{
	free(r->name);
	free(r->path);
	free(r->source);
	*r = (struct region_config){};
}

int region_config_copy(const struct region_config *from, struct region_config *to)
{
	struct region_config c = *from;

	c.name = strdup(from->name);
	c.path = from->path ? strdup(from->path) : NULL;
	c.source = from->source ? strdup(from->source) : NULL;
	if (!c.name || (from->path && !c.path) || (from->source && !c.source)) {
		region_config_done(&c);
		return -ENOMEM;
	}
	*to = c;
	return 0;
}

bool region_config_equal(const struct region_config *a, const struct region_config *b)
{
	return streq(a->name, b->name) && a->size == b->size &&
	       a->backing == b->backing &&
	       streq(a->path ?: "", b->path ?: "") && a->offset == b->offset &&
	       a->huge_page_size == b->huge_page_size && a->prot == b->prot;
}

/* Appends ", " (unless first) and one "Key= old -> new" to *out. */
static int diff_append(char **out, const char *key, const char *old, const char *new)
{
	char *s = strprintf("%s%s%s %s -> %s", *out ?: "", *out ? ", " : "", key, old, new);

	if (!s)
		return -ENOMEM;
	free(*out);
	*out = s;
	return 0;
}

static int diff_u64(char **out, const char *key, uint64_t old, uint64_t new)
{
	char a[32], b[32];

	if (old == new)
		return 0;
	snprintf(a, sizeof(a), "%" PRIu64, old);
	snprintf(b, sizeof(b), "%" PRIu64, new);
	return diff_append(out, key, a, b);
}

char *region_config_diff(const struct region_config *old, const struct region_config *new)
{
	_cleanup_free_ char *out = NULL;
	int r = 0;

	r |= diff_u64(&out, "Size=", old->size, new->size);
	if (old->backing != new->backing)
		r |= diff_append(&out, "Backing=", backing_to_string(old->backing), backing_to_string(new->backing));
	if (!streq(old->path ?: "", new->path ?: ""))
		r |= diff_append(&out, "Path=", old->path ?: "(none)", new->path ?: "(none)");
	r |= diff_u64(&out, "Offset=", old->offset, new->offset);
	r |= diff_u64(&out, "HugePageSize=", old->huge_page_size, new->huge_page_size);
	if (old->prot != new->prot)
		r |= diff_append(&out, "Protection=", prot_to_string(old->prot), prot_to_string(new->prot));
	if (r < 0)
		return NULL;
	return out ? TAKE_PTR(out) : strdup("");
}

void grant_done(struct grant *g)
{
	free(g->region);
	free(g->uids);
	free(g->gids);
	strv_free(g->containers);
	strv_free(g->container_ids);
	for (size_t i = 0; i < g->n_annotations; i++) {
		free(g->annotations[i].key);
		free(g->annotations[i].pattern);
	}
	free(g->annotations);
	free(g->source);
	*g = (struct grant){};
}

struct config *config_new(void)
{
	return calloc(1, sizeof(struct config));
}

void config_free(struct config *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_regions; i++)
		region_config_done(&c->regions[i]);
	free(c->regions);
	for (size_t i = 0; i < c->n_grants; i++)
		grant_done(&c->grants[i]);
	free(c->grants);
	free(c);
}

const struct region_config *config_find_region(const struct config *c, const char *name)
{
	for (size_t i = 0; i < c->n_regions; i++)
		if (streq(c->regions[i].name, name))
			return &c->regions[i];
	return NULL;
}

/* ---- the parser ---- */

enum grant_key {
	GK_REGION, GK_MODE, GK_USER, GK_GROUP, GK_CONTAINER, GK_CONTAINER_ID,
	GK_ANNOTATION, _GK_MAX,
};

enum region_key {
	RK_NAME, RK_SIZE, RK_BACKING, RK_PATH, RK_OFFSET, RK_HUGE_PAGE_SIZE,
	RK_PROTECTION, RK_POPULATE, _RK_MAX,
};

enum section_kind {
	SECTION_NONE,		/* before the first header */
	SECTION_PENDING,	/* header seen, kind known at its first key */
	SECTION_REGION,
	SECTION_GRANT,
	SECTION_INVALID,	/* unknown name, reported once */
};

struct parser {
	struct config *config;
	FILE *f;
	const char *filename;
	char ***errors;
	int r;			/* first internal error (-ENOMEM) */
	unsigned n_errors;

	unsigned line;		/* line last handed to inih, 1-based */
	char *buf;
	size_t buf_size;

	enum section_kind kind;
	unsigned section_line;
	unsigned section_errors;	/* n_errors when the section began */
	unsigned long seen;	/* bit per key, for duplicates */
	unsigned key_line[16];	/* where each key of the section was */
	struct region_config region;
	struct grant grant;
};

_printf_(3, 4) static void parser_error(struct parser *p, unsigned line, const char *format, ...)
{
	_cleanup_free_ char *msg = NULL;
	va_list ap;

	p->n_errors++;
	va_start(ap, format);
	msg = vstrprintf(format, ap);
	va_end(ap);
	if (!msg || strv_extendf(p->errors, "%s:%u: %s", p->filename, line, msg) < 0)
		p->r = -ENOMEM;
}

static char *parser_source(struct parser *p)
{
	char *s = strprintf("%s:%u", p->filename, p->section_line);

	if (!s)
		p->r = -ENOMEM;
	return s;
}

static uint64_t page_size(void)
{
	return (uint64_t)sysconf(_SC_PAGESIZE);
}

static bool is_power_of_2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static bool has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* Checks of a [Region] once all its keys are known; adds it to the config. */
static void finish_region(struct parser *p)
{
	struct region_config *r = &p->region;
	const struct region_config *dup;
	unsigned l = p->section_line;
	uint64_t align;

	_Static_assert(_RK_MAX <= ARRAY_SIZE(p->key_line) && _GK_MAX <= ARRAY_SIZE(p->key_line),
		       "key_line too small");

	if (!(p->seen & (1UL << RK_NAME)))
		parser_error(p, l, "[Region] without Name=");
	if (!(p->seen & (1UL << RK_SIZE)))
		parser_error(p, l, "[Region] without Size=");
	if (r->backing == BACKING_FILE && !(p->seen & (1UL << RK_PATH)))
		parser_error(p, p->key_line[RK_BACKING], "Backing=file needs Path=");
	if (r->backing != BACKING_FILE && r->path)
		parser_error(p, p->key_line[RK_PATH], "Path=: only valid with Backing=file");
	if (r->backing != BACKING_FILE && (p->seen & (1UL << RK_OFFSET)))
		parser_error(p, p->key_line[RK_OFFSET], "Offset=: only valid with Backing=file");
	if (r->backing != BACKING_HUGETLBFS && (p->seen & (1UL << RK_HUGE_PAGE_SIZE)))
		parser_error(p, p->key_line[RK_HUGE_PAGE_SIZE],
			     "HugePageSize=: only valid with Backing=hugetlbfs");
	if (r->backing == BACKING_HUGETLBFS && !r->huge_page_size)
		r->huge_page_size = 2 << 20;
	if (!(p->seen & (1UL << RK_PROTECTION)))
		r->prot = PROT_READ | PROT_WRITE;

	align = r->backing == BACKING_HUGETLBFS ? r->huge_page_size : page_size();
	if (r->size % align)
		parser_error(p, p->key_line[RK_SIZE],
			     "Size=: %" PRIu64 " is not a multiple of %s (%" PRIu64 " bytes)",
			     r->size, r->backing == BACKING_HUGETLBFS ? "HugePageSize=" : "the page size",
			     align);
	if (r->offset % page_size())
		parser_error(p, p->key_line[RK_OFFSET],
			     "Offset=: %" PRIu64 " is not a multiple of the page size (%" PRIu64 " bytes)",
			     r->offset, page_size());
	else if (r->offset + r->size < r->offset)
		parser_error(p, p->key_line[RK_OFFSET], "Offset=: plus Size= overflows");

	if (r->name && (dup = config_find_region(p->config, r->name)))
		parser_error(p, p->key_line[RK_NAME], "Name=: duplicate region name '%s', first defined at %s",
			     r->name, dup->source);

	if (p->n_errors == p->section_errors && p->r == 0) {
		struct region_config *t;

		r->source = parser_source(p);
		t = reallocarray(p->config->regions, p->config->n_regions + 1, sizeof(*t));
		if (!t || !r->source) {
			p->r = -ENOMEM;
		} else {
			p->config->regions = t;
			t[p->config->n_regions++] = *r;
			*r = (struct region_config){};
		}
	}
	region_config_done(r);
}

static void finish_grant(struct parser *p)
{
	struct grant *g = &p->grant;

	if (!(p->seen & (1UL << GK_REGION)))
		parser_error(p, p->section_line, "[Grant] without Region=");
	if (!g->n_uids && !g->n_gids && strv_length(g->containers) == 0 &&
	    strv_length(g->container_ids) == 0 && !g->n_annotations)
		parser_error(p, p->section_line,
			     "[Grant] matches nobody: set User=, Group=, Container=, ContainerId= or Annotation=");
	if (g->mode == ACCESS_NONE)
		g->mode = ACCESS_RO;

	if (p->n_errors == p->section_errors && p->r == 0) {
		struct grant *t;

		g->source = parser_source(p);
		t = reallocarray(p->config->grants, p->config->n_grants + 1, sizeof(*t));
		if (!t || !g->source) {
			p->r = -ENOMEM;
		} else {
			p->config->grants = t;
			t[p->config->n_grants++] = *g;
			*g = (struct grant){};
		}
	}
	grant_done(g);
}

static void finish_section(struct parser *p)
{
	switch (p->kind) {
	case SECTION_PENDING:
		parser_error(p, p->section_line, "empty section");
		break;
	case SECTION_REGION:
		finish_region(p);
		break;
	case SECTION_GRANT:
		finish_grant(p);
		break;
	default:
		break;
	}
	p->kind = SECTION_NONE;
	p->seen = 0;
	memset(p->key_line, 0, sizeof(p->key_line));
	region_config_done(&p->region);
	grant_done(&p->grant);
}

/* ini_reader: one line per call, see the comment at the top. */
static char *parser_read_line(char *str, int num, void *userdata)
{
	struct parser *p = userdata;
	ssize_t n;
	char *s;

	n = getline(&p->buf, &p->buf_size, p->f);
	if (n < 0) {
		if (ferror(p->f))
			p->r = -EIO;
		finish_section(p);
		return NULL;
	}
	p->line++;

	if (memchr(p->buf, '\0', (size_t)n)) {
		parser_error(p, p->line, "NUL byte in line");
		strcpy(str, "\n");
		return str;
	}
	if (n > 0 && p->buf[n - 1] == '\n')
		p->buf[--n] = '\0';
	if (n > 0 && p->buf[n - 1] == '\r')
		p->buf[--n] = '\0';
	s = p->buf;
	if (p->line == 1 && strncmp(s, "\xEF\xBB\xBF", 3) == 0)
		s += 3; /* a UTF-8 byte order mark */
	s += strspn(s, " \t");
	if ((size_t)num < 2 || strlen(s) > (size_t)num - 2) {
		parser_error(p, p->line, "line too long (at most %d characters)", num - 2);
		strcpy(str, "\n");
		return str;
	}
	if (*s == '[') {
		finish_section(p);
		p->kind = SECTION_PENDING;
		p->section_line = p->line;
		p->section_errors = p->n_errors;
	}
	snprintf(str, (size_t)num, "%s\n", s);
	return str;
}

/* ---- [Region] keys ---- */

static int key_once(struct parser *p, unsigned bit, const char *key)
{
	if (p->seen & (1UL << bit)) {
		parser_error(p, p->line, "%s=: duplicate key in this section", key);
		return -EEXIST;
	}
	p->seen |= 1UL << bit;
	p->key_line[bit] = p->line;
	return 0;
}

static int parse_size_key(struct parser *p, const char *key, const char *value, uint64_t *ret)
{
	int r = parse_size(value, ret);

	if (r == -ERANGE)
		parser_error(p, p->line, "%s=: '%s' is too large", key, value);
	else if (r < 0)
		parser_error(p, p->line,
			     "%s=: invalid size '%s' (a number of bytes with an optional K, M, G, T or P suffix, as 64M or 64MiB)",
			     key, value);
	return r;
}

static const char *const region_keys[_RK_MAX] = {
	[RK_NAME] = "Name", [RK_SIZE] = "Size", [RK_BACKING] = "Backing",
	[RK_PATH] = "Path", [RK_OFFSET] = "Offset",
	[RK_HUGE_PAGE_SIZE] = "HugePageSize", [RK_PROTECTION] = "Protection",
	[RK_POPULATE] = "Populate",
};

static void region_key(struct parser *p, const char *key, const char *value)
{
	struct region_config *r = &p->region;
	int k = -1, v;

	for (size_t i = 0; i < _RK_MAX; i++)
		if (streq(key, region_keys[i]))
			k = (int)i;
	if (k < 0) {
		parser_error(p, p->line, "%s=: unknown key in [Region]", key);
		return;
	}
	if (key_once(p, (unsigned)k, key) < 0)
		return;
	if (!*value) {
		parser_error(p, p->line, "%s=: empty value", key);
		return;
	}

	switch ((enum region_key)k) {
	case RK_NAME:
		if (!region_name_is_valid(value)) {
			parser_error(p, p->line,
				     "Name=: invalid region name '%s' (1-%d characters of A-Z a-z 0-9 _ . -, starting with a letter or digit)",
				     value, REGION_NAME_MAX);
			return;
		}
		if (!(r->name = strdup(value)))
			p->r = -ENOMEM;
		break;
	case RK_SIZE:
		if (parse_size_key(p, key, value, &r->size) < 0)
			return;
		if (r->size == 0)
			parser_error(p, p->line, "Size=: must not be zero");
		break;
	case RK_BACKING:
		v = backing_from_string(value);
		if (v < 0)
			parser_error(p, p->line,
				     "Backing=: unknown backing '%s' (anonymous, memfd, file or hugetlbfs)", value);
		else
			r->backing = (enum region_backing)v;
		break;
	case RK_PATH:
		if (value[0] != '/') {
			parser_error(p, p->line, "Path=: '%s' is not an absolute path", value);
			return;
		}
		if (!(r->path = strdup(value)))
			p->r = -ENOMEM;
		break;
	case RK_OFFSET:
		parse_size_key(p, key, value, &r->offset);
		break;
	case RK_HUGE_PAGE_SIZE:
		if (parse_size_key(p, key, value, &r->huge_page_size) < 0)
			return;
		if (!is_power_of_2(r->huge_page_size) || r->huge_page_size <= page_size() ||
		    r->huge_page_size > ((uint64_t)1 << 40)) {
			parser_error(p, p->line,
				     "HugePageSize=: '%s' is not a huge page size (a power of two above the page size, e.g. 2M or 1G)",
				     value);
			r->huge_page_size = 0;
		}
		break;
	case RK_PROTECTION:
		v = prot_from_string(value);
		if (v < 0)
			parser_error(p, p->line, "Protection=: invalid protection '%s' (r, rw, rx or rwx)", value);
		else
			r->prot = v;
		break;
	case RK_POPULATE:
		v = parse_boolean(value);
		if (v < 0)
			parser_error(p, p->line, "Populate=: invalid boolean '%s' (yes or no)", value);
		else
			r->populate = v;
		break;
	default:
		break;
	}
}

/* ---- [Grant] keys ---- */

/* A user (or, with user false, a group) by name or number. -ESRCH if no
 * such name, -EINVAL for the invalid ID (uint32_t)-1. */
static int lookup_id(const char *word, bool user, uint32_t *ret)
{
	_cleanup_free_ char *buf = NULL;
	uint32_t u;

	if (parse_u32(word, &u) == 0) {
		if (u == UINT32_MAX)
			return -EINVAL;
		*ret = u;
		return 0;
	}
	/* A group with many members needs a big buffer: grow it on ERANGE. */
	for (size_t n = 4096; n <= 16 * 1024 * 1024; n *= 2) {
		struct passwd pw, *pwr = NULL;
		struct group gr, *grr = NULL;
		char *t = realloc(buf, n);
		int r;

		if (!t)
			return -ENOMEM;
		buf = t;
		r = user ? getpwnam_r(word, &pw, buf, n, &pwr) : getgrnam_r(word, &gr, buf, n, &grr);
		if (r == ERANGE)
			continue;
		if (r != 0 || !(user ? (void *)pwr : (void *)grr))
			return -ESRCH;
		*ret = user ? pwr->pw_uid : grr->gr_gid;
		return 0;
	}
	return -ESRCH;
}

static void grant_ids(struct parser *p, const char *key, const char *value, bool user)
{
	struct grant *g = &p->grant;
	_cleanup_strv_free_ char **words = NULL;
	uint32_t **ids = user ? &g->uids : &g->gids;
	size_t *n = user ? &g->n_uids : &g->n_gids;

	if (!*value) {		/* empty assignment resets the list */
		free(*ids);
		*ids = NULL;
		*n = 0;
		return;
	}
	if (strv_split_blanks(value, &words) < 0) {
		p->r = -ENOMEM;
		return;
	}
	for (char **w = words; *w; w++) {
		uint32_t id, *t;
		int r = lookup_id(*w, user, &id);

		if (r == -ENOMEM) {
			p->r = r;
			return;
		}
		if (r < 0) {
			parser_error(p, p->line, "%s=: %s '%s'", key,
				     r == -ESRCH ? (user ? "unknown user" : "unknown group") :
						   (user ? "invalid user ID" : "invalid group ID"),
				     *w);
			continue;
		}
		t = reallocarray(*ids, *n + 1, sizeof(uint32_t));
		if (!t) {
			p->r = -ENOMEM;
			return;
		}
		*ids = t;
		t[(*n)++] = id;
	}
}

static void grant_patterns(struct parser *p, char ***list, const char *value)
{
	_cleanup_strv_free_ char **words = NULL;

	if (!*value) {
		strv_free(*list);
		*list = NULL;
		return;
	}
	if (strv_split_blanks(value, &words) < 0) {
		p->r = -ENOMEM;
		return;
	}
	for (char **w = words; *w; w++)
		if (strv_extend(list, *w) < 0)
			p->r = -ENOMEM;
}

static void grant_annotation(struct parser *p, const char *value)
{
	struct grant *g = &p->grant;
	struct annotation_match *t;
	const char *eq;

	if (!*value) {
		for (size_t i = 0; i < g->n_annotations; i++) {
			free(g->annotations[i].key);
			free(g->annotations[i].pattern);
		}
		free(g->annotations);
		g->annotations = NULL;
		g->n_annotations = 0;
		return;
	}
	eq = strchr(value, '=');
	if (!eq || eq == value) {
		parser_error(p, p->line, "Annotation=: '%s' is not KEY=PATTERN", value);
		return;
	}
	t = reallocarray(g->annotations, g->n_annotations + 1, sizeof(*t));
	if (!t) {
		p->r = -ENOMEM;
		return;
	}
	g->annotations = t;
	t[g->n_annotations] = (struct annotation_match){
		.key = strndup(value, (size_t)(eq - value)),
		.pattern = strdup(eq + 1),
	};
	if (!t[g->n_annotations].key || !t[g->n_annotations].pattern)
		p->r = -ENOMEM;
	g->n_annotations++;
}

static const char *const grant_keys[_GK_MAX] = {
	[GK_REGION] = "Region", [GK_MODE] = "Mode", [GK_USER] = "User",
	[GK_GROUP] = "Group", [GK_CONTAINER] = "Container",
	[GK_CONTAINER_ID] = "ContainerId", [GK_ANNOTATION] = "Annotation",
};

static void grant_key(struct parser *p, const char *key, const char *value)
{
	struct grant *g = &p->grant;
	int k = -1, v;

	for (size_t i = 0; i < _GK_MAX; i++)
		if (streq(key, grant_keys[i]))
			k = (int)i;
	if (k < 0) {
		parser_error(p, p->line, "%s=: unknown key in [Grant]", key);
		return;
	}

	switch ((enum grant_key)k) {
	case GK_REGION:
		if (key_once(p, (unsigned)k, key) < 0)
			return;
		if (!region_name_is_valid(value) && !(has_glob(value) && *value)) {
			parser_error(p, p->line, "Region=: '%s' is neither a region name nor a pattern", value);
			return;
		}
		if (!(g->region = strdup(value)))
			p->r = -ENOMEM;
		break;
	case GK_MODE:
		if (key_once(p, (unsigned)k, key) < 0)
			return;
		v = access_mode_from_string(value);
		if (v < 0)
			parser_error(p, p->line, "Mode=: invalid mode '%s' (ro or rw)", value);
		else
			g->mode = (enum access_mode)v;
		break;
	case GK_USER:
		grant_ids(p, key, value, true);
		break;
	case GK_GROUP:
		grant_ids(p, key, value, false);
		break;
	case GK_CONTAINER:
		grant_patterns(p, &g->containers, value);
		break;
	case GK_CONTAINER_ID:
		grant_patterns(p, &g->container_ids, value);
		break;
	case GK_ANNOTATION:
		grant_annotation(p, value);
		break;
	default:
		break;
	}
}

/* ini_handler */
static int parser_handle(void *userdata, const char *section, const char *key, const char *value)
{
	struct parser *p = userdata;
	char escaped[128];

	/* Names, paths and patterns go into the replies to show and list,
	 * which are JSON, and into the journal: UTF-8 only. Refused here, with
	 * the file and line, rather than in a reply that cannot be sent. */
	if (!utf8_is_valid(section) || !utf8_is_valid(key) || !utf8_is_valid(value)) {
		parser_error(p, p->line, "%s=: not valid UTF-8 (the configuration is UTF-8 text)",
			     escape_control(key, escaped, sizeof(escaped)));
		return 1;
	}
	if (p->kind == SECTION_NONE) {
		parser_error(p, p->line, "%s=: key outside of a section", key);
		p->kind = SECTION_INVALID; /* report this once */
		return 1;
	}
	if (p->kind == SECTION_PENDING) {
		if (streq(section, "Region"))
			p->kind = SECTION_REGION;
		else if (streq(section, "Grant"))
			p->kind = SECTION_GRANT;
		else {
			parser_error(p, p->section_line, "unknown section [%s] (expected [Region] or [Grant])",
				     section);
			p->kind = SECTION_INVALID;
		}
	}
	if (p->kind == SECTION_REGION)
		region_key(p, key, value);
	else if (p->kind == SECTION_GRANT)
		grant_key(p, key, value);
	return 1;
}

int config_parse_file(struct config *c, FILE *f, const char *filename, char ***errors)
{
	struct parser p = {
		.config = c,
		.f = f,
		.filename = filename,
		.errors = errors,
	};
	int r;

	r = ini_parse_stream(parser_read_line, &p, parser_handle, &p);
	free(p.buf);
	region_config_done(&p.region);
	grant_done(&p.grant);
	if (p.r < 0)
		return p.r;
	if (r > 0)
		parser_error(&p, (unsigned)r, "syntax error (expected [Section], Key=Value, or a comment)");
	else if (r < 0)
		return -ENOMEM;
	if (p.r < 0)
		return p.r;
	return p.n_errors ? -EINVAL : 0;
}

int config_verify(const struct config *c, char ***errors)
{
	int r = 0;

	for (size_t i = 0; i < c->n_grants; i++) {
		const struct grant *g = &c->grants[i];

		if (has_glob(g->region) || config_find_region(c, g->region))
			continue;
		if (strv_extendf(errors, "%s: Region=: no region named '%s' is configured",
				 g->source, g->region) < 0)
			return -ENOMEM;
		r = -EINVAL;
	}
	return r;
}

static int conf_filter(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return d->d_name[0] != '.' && n > 5 && streq(d->d_name + n - 5, ".conf");
}

int config_load_dir(const char *dir, struct config **ret, char ***errors)
{
	_cleanup_config_free_ struct config *c = config_new();
	struct dirent **names = NULL;
	int n, r = 0;

	if (!c)
		return -ENOMEM;
	n = scandir(dir, &names, conf_filter, alphasort);
	if (n < 0) {
		if (errno != ENOENT) {
			r = -errno;
			if (strv_extendf(errors, "%s: cannot read the directory: %s", dir,
					 strerror(-r)) < 0)
				return -ENOMEM;
			return r;
		}
		n = 0;
	}

	for (int i = 0; i < n; i++) {
		_cleanup_free_ char *path = NULL;
		_cleanup_fclose_ FILE *f = NULL;
		struct stat st;
		int k;

		if (r == -ENOMEM)
			goto next;
		path = strprintf("%s/%s", dir, names[i]->d_name);
		if (!path) {
			r = -ENOMEM;
			goto next;
		}
		/* A file's name is in the source ("FILE:LINE") of what it
		 * configures, which show replies carry as JSON: UTF-8 only. */
		if (!utf8_is_valid(path)) {
			char escaped[PATH_MAX];

			if (strv_extendf(errors, "%s: the file name is not valid UTF-8; rename the file",
					 escape_control(path, escaped, sizeof(escaped))) < 0)
				r = -ENOMEM;
			else if (r == 0)
				r = -EINVAL;
			goto next;
		}
		f = fopen(path, "re");
		if (!f || fstat(fileno(f), &st) < 0) {
			k = -errno;
			if (strv_extendf(errors, "%s: cannot open: %s", path, strerror(-k)) < 0)
				r = -ENOMEM;
			else if (r == 0)
				r = k;
			goto next;
		}
		if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3))
			goto next; /* masked: a symlink to /dev/null */
		if (!S_ISREG(st.st_mode)) {
			if (strv_extendf(errors, "%s: not a regular file", path) < 0)
				r = -ENOMEM;
			else if (r == 0)
				r = -EINVAL;
			goto next;
		}
		k = config_parse_file(c, f, path, errors);
		if (k < 0 && (r == 0 || k == -ENOMEM))
			r = k;
next:
		free(names[i]);
	}
	free(names);
	if (r < 0)
		return r;

	r = config_verify(c, errors);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(c);
	return 0;
}
