/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>

#include "crash.h"
#include "log.h"
#include "manager.h"

struct region *manager_find(const struct manager *m, const char *name)
{
	for (size_t i = 0; i < m->n_regions; i++)
		if (streq(m->regions[i]->config.name, name))
			return m->regions[i];
	return NULL;
}

static ssize_t manager_index(const struct manager *m, const struct region *r)
{
	for (size_t i = 0; i < m->n_regions; i++)
		if (m->regions[i] == r)
			return (ssize_t)i;
	return -1;
}

char *manager_summary(const struct manager *m)
{
	size_t n[_REGION_STATE_MAX] = {}, full = 0;
	char full_note[96] = "", held_note[64] = "";

	for (size_t i = 0; i < m->n_regions; i++) {
		n[m->regions[i]->state]++;
		full += m->regions[i]->state == REGION_FAILED && m->regions[i]->no_room;
	}
	if (full)
		snprintf(full_note, sizeof(full_note), " (%zu for want of room in the fd store: --fdstore-max=%zu)",
			 full, m->store->max);
	if (m->n_held)
		snprintf(held_note, sizeof(held_note), ", %zu held in the fd store until adopted", m->n_held);
	return strprintf("%zu region%s: %zu active, %zu changed, %zu retiring, %zu failed%s%s",
			 m->n_regions, m->n_regions == 1 ? "" : "s", n[REGION_ACTIVE],
			 n[REGION_CHANGED], n[REGION_RETIRING], n[REGION_FAILED], full_note, held_note);
}

bool manager_has_pending(const struct manager *m)
{
	if (m->n_held > 0)
		return true;
	for (size_t i = 0; i < m->n_regions; i++)
		if (m->regions[i]->state == REGION_CHANGED || m->regions[i]->state == REGION_RETIRING)
			return true;
	return false;
}

size_t manager_store_entries(const struct manager *m)
{
	size_t n = m->n_held;

	for (size_t i = 0; i < m->n_regions; i++)
		n += m->regions[i]->fd >= 0;
	return n;
}

static void manager_save(struct manager *m)
{
	if (m->save)
		m->save(m->save_userdata);
}

/* Region name's owner file fd into the fd store, or (fd < 0) out of it. */
static void store_region_fd(struct manager *m, const char *name, int fd)
{
	_cleanup_free_ char *entry = NULL;

	if (!m->store->enabled)
		return;
	entry = fdstore_region_name(name);
	if (!entry) {
		log_oom();
		return;
	}
	if (fd >= 0)
		(void)fdstore_put(m->store, entry, fd);
	else
		(void)fdstore_remove(m->store, entry);
}

/* The region's owner file into the fd store, or out of it. */
static void store_region(struct manager *m, const struct region *r, bool put)
{
	if (r->fd >= 0)
		store_region_fd(m, r->config.name, put ? r->fd : -1);
}

/* Destroys a region the daemon lets go of: out of the store, then closed. */
static void manager_drop(struct manager *m, struct region *r)
{
	store_region(m, r, false);
	region_free(r);
}

/* Populates r, with the state saying so before and after: a crash in
 * between leaves "populated": false, and the next start finishes it. */
static void manager_populate(struct manager *m, struct region *r)
{
	r->populated = false;
	manager_save(m);
	region_populate(r, m->progress, m->progress_userdata);
	manager_save(m);
}

/* Room for one more region. */
static int manager_reserve(struct manager *m)
{
	struct region **t = reallocarray(m->regions, m->n_regions + 1, sizeof(*t));

	if (!t)
		return log_oom();
	m->regions = t;
	return 0;
}

/* Takes region i out of the list (not freed). */
static struct region *manager_take(struct manager *m, size_t i)
{
	struct region *r = m->regions[i];

	memmove(m->regions + i, m->regions + i + 1, (m->n_regions - i - 1) * sizeof(*m->regions));
	m->n_regions--;
	return r;
}

/*
 * A new region as c says, or a failed one, not even tried, if the fd store
 * has no room for it: systemd would drop it without a word, and the next
 * restart would lose the region.
 */
static int manager_make(struct manager *m, const struct region_config *c, struct region **ret)
{
	int k = fdstore_reserve(m->store, 1);

	if (k == 0)
		return region_create(c, ret);
	log_error_errno(k, "Region '%s' (%s) not created: the service manager's fd store would hold more than "
			"%zu entries (--fdstore-max=, FileDescriptorStoreMax=), and a restart of mshare-owner "
			"would lose it. Remove regions or containers, or raise both limits.", c->name, c->source,
			m->store->max);
	*ret = region_new_failed(c, k);
	if (!*ret)
		return -ENOMEM;
	(*ret)->no_room = true;
	return k;
}

/*
 * Creates (and populates) a region as region i of the list; a failed one is
 * kept as REGION_FAILED. Its owner file goes into the fd store and into the
 * state before it can be handed out; a crash before the state names it
 * leaves a descriptor in the store that the next start adopts by its name
 * (see persist.h), a crash while populating a state that says so.
 */
static int manager_create(struct manager *m, size_t i, const struct region_config *c)
{
	struct region *r = NULL;
	int k;

	k = manager_reserve(m);
	if (k < 0)
		return k;
	k = manager_make(m, c, &r);
	if (!r)
		return k;
	memmove(m->regions + i + 1, m->regions + i, (m->n_regions - i) * sizeof(*m->regions));
	m->regions[i] = r;
	m->n_regions++;
	if (k == 0) {
		store_region(m, r, true);
		crash_point("region-stored");
		r->populated = !c->populate;
		if (c->populate)
			manager_populate(m, r);
		else
			manager_save(m);
	}
	return k;
}

static int manager_add(struct manager *m, const struct region_config *c)
{
	int k = manager_create(m, m->n_regions, c);

	return k == -ENOSYS || k == -ENOMEM ? k : 0;
}

static struct held_region *manager_find_held(const struct manager *m, const char *name)
{
	for (size_t i = 0; i < m->n_held; i++)
		if (streq(m->held[i].config.name, name))
			return &m->held[i];
	return NULL;
}

/*
 * Adds *fd to the held regions, taking it (*fd becomes -1). If memory runs
 * out it stays the caller's: closed here, the daemon would forget a region
 * the store keeps, and the first load would create a second one under its
 * name.
 */
static int manager_hold(struct manager *m, const char *name, const struct region_config *config,
			uint64_t inode, int *fd, bool populated)
{
	struct held_region *t, h = { .inode = inode, .populated = populated, .unsaved = !config, .fd = -1 };
	int k;

	crash_point("hold");
	t = reallocarray(m->held, m->n_held + 1, sizeof(*t));
	if (!t)
		return log_oom();
	m->held = t;
	if (config)
		k = region_config_copy(config, &h.config);
	else
		k = (h.config.name = strdup(name)) ? 0 : -ENOMEM;
	if (k < 0)
		return log_oom();
	h.fd = TAKE_FD(*fd);
	m->held[m->n_held++] = h;
	return 0;
}

/* Forgets held region i, closing its descriptor unless it was taken. */
static void manager_unhold(struct manager *m, size_t i)
{
	struct held_region *h = &m->held[i];

	region_config_done(&h->config);
	safe_close(h->fd);
	memmove(h, h + 1, (m->n_held - i - 1) * sizeof(*h));
	m->n_held--;
}

/*
 * Adopts held region i: 0 if adopted (the last region now, unchecked
 * against the configuration), REGION_NOT_OWNER if it is no region's owner
 * file (dropped from the store, which destroys nothing), an error if it
 * stays held: logged as a warning when it is not the one of the last try.
 */
static int manager_try_adopt(struct manager *m, size_t i)
{
	struct held_region *h = &m->held[i];
	struct region *r = NULL;
	int k;

	k = manager_reserve(m);
	if (k == 0)
		k = region_adopt(h->config.name, h->unsaved ? NULL : &h->config, h->fd, h->populated, &r);
	if (k == REGION_NOT_OWNER) {
		log_warning("Region '%s': the descriptor in the fd store under its name is no region's owner file; "
			    "keeping it would keep nothing alive: dropped from the store.", h->config.name);
		store_region_fd(m, h->config.name, -1);
		manager_unhold(m, i);
		return k;
	}
	if (k < 0) {
		int level = k == h->error ? LOG_DEBUG : LOG_WARNING;

		h->error = k;
		return log_full_errno(level, k, "Region '%s': cannot adopt it from the fd store now: %m. Its owner "
				      "file is held (it stays in the store, the region alive), and adopting it is "
				      "tried again every 10 seconds and on each reload.", h->config.name);
	}
	h->fd = -1; /* r's now */
	manager_unhold(m, i);
	m->regions[m->n_regions++] = r;
	log_info("Region '%s' adopted from the fd store: inode %" PRIu64 ", %" PRIu64 " bytes%s.", r->config.name,
		 r->inode, r->config.size, r->unsaved ? ", no saved state names it" :
		 !r->populated ? ", populating it was interrupted" : "");
	return 0;
}

int manager_adopt(struct manager *m, const char *name, const struct region_config *config, uint64_t inode,
		  int *fd, bool populated)
{
	int k = manager_hold(m, name, config, inode, fd, populated);

	return k < 0 ? k : manager_try_adopt(m, m->n_held - 1);
}

/* What a reload (or the first load after a restart) does to a region that
 * exists already. */
static int manager_update(struct manager *m, size_t i, const struct region_config *c)
{
	struct region *r = m->regions[i];
	int k;

	if (r->state == REGION_FAILED) {
		log_info("Region '%s' failed before; trying to create it again.", c->name);
		region_free(manager_take(m, i));
		k = manager_create(m, i, c);
		return k == -ENOMEM ? k : 0;
	}

	if (r->unsaved) {
		/* Not the size c gives: the change below, in Size= only. */
		k = region_claim(r, c);
		if (k < 0)
			return log_oom();
		/* Populating only faults pages in, and a crash may have cut
		 * it short: manager_finish_populating() does it again. */
		if (k > 0 && c->populate)
			r->populated = false;
		if (k > 0)
			log_notice("Region '%s' adopted from the fd store by its name: no saved state names it "
				   "(mshare-owner stopped before saving one, or the service manager dropped it), "
				   "and its size is the one configured in %s. Its live contents are kept%s.", c->name,
				   c->source, c->populate ? "; it is populated again (read faults only)" : "");
	}

	if (!region_config_equal(&r->config, c)) {
		_cleanup_free_ char *diff = NULL;

		if (r->state == REGION_CHANGED && region_config_equal(&r->pending, c))
			return 0; /* logged already */
		region_config_done(&r->pending);
		if (region_config_copy(c, &r->pending) < 0)
			return log_oom();
		r->state = REGION_CHANGED;
		diff = region_config_diff(&r->config, c);
		if (r->adopted)
			log_warning("Region '%s', adopted from the fd store after a restart, no longer matches its "
				    "configuration in %s (%s); the change needs the old region released: it is kept "
				    "(and handed out) until no process has it attached, then replaced.",
				    c->name, c->source, strna(diff));
		else
			log_warning("Region '%s' changed in %s (%s); the change needs the old region released: "
				    "it is kept (and handed out) until no process has it attached, then replaced.",
				    c->name, c->source, strna(diff));
		return 0;
	}

	if (r->state != REGION_ACTIVE)
		log_notice("Region '%s' is configured as it is again (%s); keeping it.", c->name, c->source);
	r->state = REGION_ACTIVE;
	region_config_done(&r->pending);
	/* Populate= and the file position may change without touching the region. */
	r->config.populate = c->populate;
	free(r->config.source);
	r->config.source = strdup(c->source);
	return r->config.source ? 0 : log_oom();
}

/* Regions whose populating a crash interrupted: MADV_POPULATE_* of what is
 * populated already costs little, so it starts again from the beginning. */
static void manager_finish_populating(struct manager *m)
{
	for (size_t i = 0; i < m->n_regions; i++) {
		struct region *r = m->regions[i];

		if (r->fd < 0 || r->populated)
			continue;
		if (r->state == REGION_RETIRING || !r->config.populate) {
			r->populated = true; /* nothing left to do */
			continue;
		}
		/* A claimed one was logged as populated again (manager_update()). */
		if (!r->claimed)
			log_notice("Region '%s': populating it was interrupted (mshare-owner stopped in the "
				   "middle); finishing it.", r->config.name);
		manager_populate(m, r);
	}
}

/* What a load of configuration c does to region i, which exists: keep,
 * mark changed, retry, or retire. */
static int manager_check(struct manager *m, size_t i, const struct config *c)
{
	struct region *r = m->regions[i];
	const struct region_config *rc = config_find_region(c, r->config.name);

	if (rc)
		return manager_update(m, i, rc);
	if (r->state == REGION_FAILED) {
		/* Nothing to wait for: it has no descriptors. */
		r->state = REGION_RETIRING;
	} else if (r->state != REGION_RETIRING) {
		r->state = REGION_RETIRING;
		region_config_done(&r->pending);
		if (r->adopted)
			log_warning("Region '%s', adopted from the fd store after a restart, is no longer "
				    "configured in %s; no longer handed out, it is destroyed once no "
				    "process has it attached.", r->config.name, m->config_dir);
		else
			log_notice("Region '%s' was removed from the configuration; no longer handed out, "
				   "it is destroyed once no process has it attached.", r->config.name);
	}
	return 0;
}

/*
 * The held regions that can be adopted now, checked against the
 * configuration as at a load. Not before a configuration was loaded: only
 * that tells what to do with them.
 */
static void manager_retry_held(struct manager *m)
{
	bool adopted = false;

	if (!m->configured)
		return;
	for (size_t i = 0; i < m->n_held;) {
		struct region *r;
		int k = manager_try_adopt(m, i);

		if (k == REGION_NOT_OWNER)
			continue;
		if (k < 0) {
			i++;
			continue;
		}
		r = m->regions[m->n_regions - 1];
		k = manager_check(m, m->n_regions - 1, m->config);
		r->adopted = false;
		adopted = true;
		if (k < 0)
			break;
	}
	if (!adopted)
		return;
	manager_finish_populating(m);
	manager_save(m);
}

int manager_load(struct manager *m, char **ret_message)
{
	_cleanup_config_free_ struct config *c = NULL;
	_cleanup_strv_free_ char **errors = NULL;
	size_t n_old = m->n_regions;
	int k;

	*ret_message = NULL;
	k = config_load_dir(m->config_dir, &c, &errors);
	if (k < 0) {
		for (char **e = errors; e && *e; e++)
			log_error("%s", *e);
		if (k == -ENOMEM)
			return log_oom();
		*ret_message = strprintf("%zu configuration error%s, the first: %s",
					 strv_length(errors), strv_length(errors) == 1 ? "" : "s",
					 errors && errors[0] ? errors[0] : strerror(-k));
		return log_error_errno(k, "Configuration in %s not loaded (%zu errors).", m->config_dir,
				       strv_length(errors));
	}
	if (c->n_regions == 0)
		log_notice("No regions are configured in %s.", m->config_dir);

	/* Regions that exist: keep, mark changed, retry, or retire. */
	for (size_t i = 0; i < n_old && i < m->n_regions; i++) {
		k = manager_check(m, i, c);
		if (k == -ENOMEM)
			return k;
	}
	for (size_t i = 0; i < m->n_regions; i++)
		m->regions[i]->adopted = false;
	manager_finish_populating(m);

	/* New ones; not in place of a held one, which the store has under
	 * that name already (manager_collect() adopts it). */
	for (size_t i = 0; i < c->n_regions; i++) {
		if (manager_find(m, c->regions[i].name) || manager_find_held(m, c->regions[i].name))
			continue;
		k = manager_add(m, &c->regions[i]);
		if (k < 0)
			return k;
	}

	config_free(m->config);
	m->config = TAKE_PTR(c);
	m->configured = true;
	manager_collect(m, now_usec(), true);

	*ret_message = manager_summary(m);
	return 0;
}

/*
 * Destroys region i and, with c, creates it anew as c says in its place.
 * Its owner file leaves the fd store first: a crash before the next state
 * is written leaves a state that names a region the store no longer has,
 * which the next start creates anew if it is configured (or adopts by its
 * name the new one, if that was stored already).
 */
static void manager_replace(struct manager *m, size_t i, const struct region_config *c)
{
	manager_drop(m, manager_take(m, i));
	if (c)
		manager_create(m, i, c);
	else
		manager_save(m);
}

void manager_collect(struct manager *m, usec_t now, bool verbose)
{
	int level = verbose ? LOG_NOTICE : LOG_DEBUG;

	manager_retry_held(m);

	for (size_t i = 0; i < m->n_regions;) {
		struct region *r = m->regions[i];
		struct region_stats st = {};
		struct region_config c;
		int k;

		if (r->state != REGION_CHANGED && r->state != REGION_RETIRING) {
			i++;
			continue;
		}
		if (r->fd >= 0) {
			if (now < r->last_handout + MANAGER_HANDOUT_GRACE_USEC) {
				log_full_errno(level, 0, "Region '%s' is %s, but was handed out moments ago; keeping it for now.",
					       r->config.name, region_state_to_string(r->state));
				i++;
				continue;
			}
			k = region_stats(r, &st);
			if (k < 0 || st.attached > 0) {
				if (k < 0)
					log_warning_errno(k, "Region '%s': cannot read its state; keeping it: %m",
							  r->config.name);
				else
					log_full_errno(level, 0, "Region '%s' is %s, but still attached by %u process%s; keeping it.",
						       r->config.name, region_state_to_string(r->state),
						       st.attached, st.attached == 1 ? "" : "es");
				i++;
				continue;
			}
		}

		if (r->state == REGION_RETIRING) {
			log_notice("Region '%s' destroyed: it was removed from the configuration and "
				   "no process has it attached.", r->config.name);
			manager_replace(m, i, NULL);
			continue;
		}

		/* REGION_CHANGED: replace it with the new configuration. */
		c = r->pending;
		r->pending = (struct region_config){};
		log_notice("Region '%s' is no longer attached; replacing it as now configured (%s).",
			   c.name, c.source);
		manager_replace(m, i, &c);
		region_config_done(&c);
		i++;
	}
}

int manager_destroy(struct manager *m, struct region *r, struct region **ret)
{
	const struct region_config *c = m->config ? config_find_region(m->config, r->config.name) : NULL;
	ssize_t i = manager_index(m, r);

	*ret = NULL;
	if (i < 0)
		return -ENOENT;
	if (r->state == REGION_RETIRING)
		c = NULL;
	manager_replace(m, (size_t)i, c);
	if (c && (size_t)i < m->n_regions && streq(m->regions[i]->config.name, c->name))
		*ret = m->regions[i];
	return 0;
}

void manager_done(struct manager *m)
{
	size_t n = manager_store_entries(m);

	if (n && m->store->enabled)
		log_notice("Closing %zu region%s; the service manager's fd store keeps %s: a restart "
			   "adopts them, systemctl stop ends them.", n, n == 1 ? "" : "s", n == 1 ? "it" : "them");
	else if (n)
		log_notice("Destroying %zu region%s.", n, n == 1 ? "" : "s");
	for (size_t i = 0; i < m->n_regions; i++)
		region_free(m->regions[i]);
	free(m->regions);
	m->regions = NULL;
	m->n_regions = 0;
	while (m->n_held > 0)
		manager_unhold(m, m->n_held - 1);
	free(m->held);
	m->held = NULL;
	config_free(m->config);
	m->config = NULL;
}
