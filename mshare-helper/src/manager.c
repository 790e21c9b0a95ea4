/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "log.h"
#include "manager.h"

struct region *manager_find(const struct manager *m, const char *name)
{
	for (size_t i = 0; i < m->n_regions; i++)
		if (streq(m->regions[i]->config.name, name))
			return m->regions[i];
	return NULL;
}

char *manager_summary(const struct manager *m)
{
	size_t n[_REGION_STATE_MAX] = {};

	for (size_t i = 0; i < m->n_regions; i++)
		n[m->regions[i]->state]++;
	return strprintf("%zu region%s: %zu active, %zu changed, %zu retiring, %zu failed",
			 m->n_regions, m->n_regions == 1 ? "" : "s", n[REGION_ACTIVE],
			 n[REGION_CHANGED], n[REGION_RETIRING], n[REGION_FAILED]);
}

bool manager_has_pending(const struct manager *m)
{
	for (size_t i = 0; i < m->n_regions; i++)
		if (m->regions[i]->state == REGION_CHANGED || m->regions[i]->state == REGION_RETIRING)
			return true;
	return false;
}

/* Creates (and populates) a region; a failed one is kept as REGION_FAILED. */
static int manager_create(struct manager *m, const struct region_config *c, struct region **ret)
{
	struct region *r = NULL;
	int k;

	k = region_create(c, &r);
	if (!r)
		return k;
	if (k == 0 && c->populate)
		region_populate(r, m->progress, m->progress_userdata);
	*ret = r;
	return k;
}

static int manager_add(struct manager *m, const struct region_config *c)
{
	struct region **t, *r = NULL;
	int k;

	t = reallocarray(m->regions, m->n_regions + 1, sizeof(*t));
	if (!t)
		return log_oom();
	m->regions = t;
	k = manager_create(m, c, &r);
	if (r)
		m->regions[m->n_regions++] = r;
	return k == -ENOSYS || k == -ENOMEM ? k : 0;
}

/* What a reload does to a region that exists already. */
static int manager_update(struct manager *m, size_t i, const struct region_config *c)
{
	struct region *r = m->regions[i], *n = NULL;
	int k;

	if (r->state == REGION_FAILED) {
		log_info("Region '%s' failed before; trying to create it again.", c->name);
		k = manager_create(m, c, &n);
		if (!n)
			return k;
		m->regions[i] = n;
		region_free(r);
		return 0;
	}

	if (!region_config_equal(&r->config, c)) {
		if (r->state == REGION_CHANGED && region_config_equal(&r->pending, c))
			return 0; /* logged already */
		region_config_done(&r->pending);
		if (region_config_copy(c, &r->pending) < 0)
			return log_oom();
		r->state = REGION_CHANGED;
		log_warning("Region '%s' changed in %s; the change needs the old region released: "
			    "it is kept (and handed out) until no process has it attached, then replaced.",
			    c->name, c->source);
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
	for (size_t i = 0; i < n_old; i++) {
		struct region *r = m->regions[i];
		const struct region_config *rc = config_find_region(c, r->config.name);

		if (rc) {
			k = manager_update(m, i, rc);
			if (k == -ENOMEM)
				return k;
		} else if (r->state == REGION_FAILED) {
			/* Nothing to wait for: it has no descriptors. */
			r->state = REGION_RETIRING;
		} else if (r->state != REGION_RETIRING) {
			r->state = REGION_RETIRING;
			region_config_done(&r->pending);
			log_notice("Region '%s' was removed from the configuration; no longer handed out, "
				   "it is destroyed once no process has it attached.", r->config.name);
		}
	}

	/* New ones. */
	for (size_t i = 0; i < c->n_regions; i++) {
		if (manager_find(m, c->regions[i].name))
			continue;
		k = manager_add(m, &c->regions[i]);
		if (k < 0)
			return k;
	}

	config_free(m->config);
	m->config = TAKE_PTR(c);
	manager_collect(m, now_usec(), true);

	*ret_message = manager_summary(m);
	return 0;
}

static void manager_remove(struct manager *m, size_t i)
{
	region_free(m->regions[i]);
	memmove(m->regions + i, m->regions + i + 1, (m->n_regions - i - 1) * sizeof(*m->regions));
	m->n_regions--;
}

void manager_collect(struct manager *m, usec_t now, bool verbose)
{
	int level = verbose ? LOG_NOTICE : LOG_DEBUG;

	for (size_t i = 0; i < m->n_regions;) {
		struct region *r = m->regions[i], *n = NULL;
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
			manager_remove(m, i);
			continue;
		}

		/* REGION_CHANGED: replace it with the new configuration. */
		c = r->pending;
		r->pending = (struct region_config){};
		log_notice("Region '%s' is no longer attached; replacing it as now configured (%s).",
			   c.name, c.source);
		region_free(r);
		m->regions[i] = NULL;
		manager_create(m, &c, &n);
		region_config_done(&c);
		if (n)
			m->regions[i++] = n;
		else
			manager_remove(m, i); /* out of memory, logged */
	}
}

void manager_done(struct manager *m)
{
	size_t n = 0;

	for (size_t i = 0; i < m->n_regions; i++)
		n += m->regions[i]->fd >= 0;
	if (n)
		log_notice("Destroying %zu region%s.", n, n == 1 ? "" : "s");
	for (size_t i = 0; i < m->n_regions; i++)
		region_free(m->regions[i]);
	free(m->regions);
	m->regions = NULL;
	m->n_regions = 0;
	config_free(m->config);
	m->config = NULL;
}
