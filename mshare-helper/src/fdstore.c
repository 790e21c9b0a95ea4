/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <inttypes.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>

#include "fdstore.h"
#include "log.h"
#include "util.h"

/* A state bigger than this is not ours (4096 containers with long
 * annotations stay far below it). */
#define STATE_MAX ((size_t)1 << 30)
#define STATE_SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

static const char *const kind_names[] = {
	[FDSTORE_REGION] = "region",
	[FDSTORE_CHANNEL] = "channel",
	[FDSTORE_PIDFD] = "pidfd",
	[FDSTORE_STATE] = "state",
};

void fdstore_init(struct fdstore *s, size_t max)
{
	const char *e = getenv("NOTIFY_SOCKET");

	*s = (struct fdstore){ .enabled = e && *e, .max = max };
}

int fdstore_reserve(const struct fdstore *s, size_t more)
{
	size_t n;

	if (!s->enabled || !s->count)
		return 0;
	n = s->count(s->count_userdata) + FDSTORE_STATE_ENTRIES;
	return n > s->max || more > s->max - n ? -ENOSPC : 0;
}

int fdstore_put(struct fdstore *s, const char *name, int fd)
{
	_cleanup_free_ char *msg = NULL;
	int k;

	if (!s->enabled)
		return 0;
	msg = strprintf("FDSTORE=1\nFDNAME=%s", name);
	if (!msg)
		return log_oom();
	k = sd_pid_notify_with_fds(0, false, msg, &fd, 1);
	if (k < 0)
		return log_warning_errno(k, "Cannot put %s into the service manager's fd store; "
					 "it will not survive a restart of mshare-owner: %m", name);
	return 0;
}

int fdstore_remove(struct fdstore *s, const char *name)
{
	_cleanup_free_ char *msg = NULL;
	int k;

	if (!s->enabled)
		return 0;
	msg = strprintf("FDSTOREREMOVE=1\nFDNAME=%s", name);
	if (!msg)
		return log_oom();
	k = sd_notify(false, msg);
	if (k < 0)
		return log_warning_errno(k, "Cannot remove %s from the service manager's fd store; "
					 "it stays there until the service stops: %m", name);
	return 0;
}

char *fdstore_region_name(const char *region)
{
	return strprintf(FDSTORE_PREFIX "%s-%s", kind_names[FDSTORE_REGION], region);
}

char *fdstore_channel_name(uint64_t serial, bool pidfd)
{
	return strprintf(FDSTORE_PREFIX "%s-%" PRIu64, kind_names[pidfd ? FDSTORE_PIDFD : FDSTORE_CHANNEL],
			 serial);
}

int fdstore_parse_number(const char *arg, uint64_t *ret)
{
	uint64_t v = 0;

	if (!*arg || (arg[0] == '0' && arg[1]))
		return -EINVAL;
	for (const char *p = arg; *p; p++) {
		if (*p < '0' || *p > '9' || v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*ret = v;
	return 0;
}

enum fdstore_kind fdstore_parse_name(const char *name, const char **ret_arg)
{
	const char *p;
	uint64_t n;

	*ret_arg = NULL;
	if (strncmp(name, FDSTORE_PREFIX, strlen(FDSTORE_PREFIX)))
		return FDSTORE_OTHER;
	p = name + strlen(FDSTORE_PREFIX);
	for (size_t k = 0; k < ARRAY_SIZE(kind_names); k++) {
		size_t len = strlen(kind_names[k]);

		if (strncmp(p, kind_names[k], len) || p[len] != '-')
			continue;
		*ret_arg = p + len + 1;
		if (k == FDSTORE_REGION ? !region_name_is_valid(*ret_arg) :
					  fdstore_parse_number(*ret_arg, &n) < 0)
			return FDSTORE_UNKNOWN;
		return (enum fdstore_kind)k;
	}
	return FDSTORE_UNKNOWN;
}

size_t fdstore_passed(void)
{
	const char *pid = getenv("LISTEN_PID"), *names = getenv("LISTEN_FDNAMES");
	size_t prefix = strlen(FDSTORE_PREFIX), n = 0;
	uint32_t u;

	if (!pid || !names || parse_u32(pid, &u) < 0 || (pid_t)u != getpid())
		return 0;
	for (const char *p = names; *p;) {
		size_t len = strcspn(p, ":");

		n += len > prefix && !strncmp(p, FDSTORE_PREFIX, prefix);
		p += len + (p[len] == ':');
	}
	return n;
}

int fdstore_receive(struct fdstore_entry **ret, size_t *ret_n)
{
	_cleanup_strv_free_ char **names = NULL;
	struct fdstore_entry *e;
	int n;

	*ret = NULL;
	*ret_n = 0;
	n = sd_listen_fds_with_names(true, &names);
	if (n < 0)
		return log_error_errno(n, "Cannot get the descriptors passed by the service manager: %m");
	*ret_n = (size_t)n;
	e = calloc((size_t)n ?: 1, sizeof(*e));
	if (!e)
		return log_oom();
	for (int i = 0; i < n; i++) {
		e[i].fd = SD_LISTEN_FDS_START + i;
		/* sd_listen_fds_with_names() gives every one a name
		 * ("unknown" without $LISTEN_FDNAMES). Copies: names
		 * stays whole for strv_free(). */
		e[i].name = strdup(names && names[i] ? names[i] : "unknown");
		if (!e[i].name) {
			while (i-- > 0)
				free(e[i].name);
			free(e);
			return log_oom();
		}
	}
	*ret = e;
	return 0;
}

void fdstore_entries_free(struct fdstore_entry *e, size_t n)
{
	for (size_t i = 0; e && i < n; i++) {
		safe_close(e[i].fd);
		free(e[i].name);
	}
	free(e);
}

static char *state_name(uint64_t generation)
{
	return strprintf(FDSTORE_PREFIX "%s-%" PRIu64, kind_names[FDSTORE_STATE], generation);
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int fdstore_save_state(struct fdstore *s, const char *text, size_t len)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *name = NULL, *old = NULL;
	int k;

	if (!s->enabled)
		return 0;
	fd = memfd_create("mshare-owner-state", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return log_warning_errno(errno, "Cannot save the state for a restart: memfd_create: %m");
	k = write_all(fd, text, len);
	if (k < 0)
		return log_warning_errno(k, "Cannot save the state for a restart: %m");
	if (fcntl(fd, F_ADD_SEALS, STATE_SEALS) < 0)
		return log_warning_errno(errno, "Cannot save the state for a restart: sealing it: %m");

	name = state_name(s->generation + 1);
	old = s->previous ? state_name(s->previous) : NULL;
	if (!name || (s->previous && !old))
		return log_oom();
	k = fdstore_put(s, name, fd);
	if (k < 0)
		return k;
	s->generation++;
	/* Not the one just before: systemd may have dropped the new one
	 * without telling us (its store full), and then that one is what
	 * the next start has. */
	if (old)
		(void)fdstore_remove(s, old);
	s->previous = s->stored;
	s->stored = s->generation;
	log_debug("Saved the state as %s (%zu bytes).", name, len);
	return 0;
}

int fdstore_read_state(int fd, char **ret, size_t *ret_len)
{
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t done = 0;
	int seals;

	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0)
		return errno == EINVAL ? -EBADMSG : -errno; /* EINVAL: no memfd */
	if ((seals & STATE_SEALS) != STATE_SEALS)
		return -EBADMSG;
	if (fstat(fd, &st) < 0)
		return -errno;
	if ((uint64_t)st.st_size > STATE_MAX)
		return -EFBIG;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return -ENOMEM;
	while (done < (size_t)st.st_size) {
		ssize_t n = pread(fd, buf + done, (size_t)st.st_size - done, (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EBADMSG;
		done += (size_t)n;
	}
	buf[done] = '\0';
	*ret = TAKE_PTR(buf);
	*ret_len = done;
	return 0;
}
