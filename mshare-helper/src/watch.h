/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What sits behind an epoll registration: the daemon's loop calls
 * w->dispatch(w, events) for every event, with w as the epoll data pointer.
 */

#include <stdint.h>
#include <sys/epoll.h>

struct watch {
	int fd;
	void (*dispatch)(struct watch *w, uint32_t events);
};

static inline int watch_add(int epoll_fd, struct watch *w, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = w };

	return epoll_ctl(epoll_fd, EPOLL_CTL_ADD, w->fd, &ev) < 0 ? -errno : 0;
}

static inline int watch_modify(int epoll_fd, struct watch *w, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = w };

	return epoll_ctl(epoll_fd, EPOLL_CTL_MOD, w->fd, &ev) < 0 ? -errno : 0;
}

/*
 * Needed before closing a descriptor whose file another process may hold
 * too (one received with SCM_RIGHTS): epoll keys its registrations on the
 * file, not the descriptor, so closing ours alone would leave the
 * registration, and events for a watch that is gone, behind.
 */
static inline void watch_remove(int epoll_fd, struct watch *w)
{
	if (w->fd >= 0)
		(void)epoll_ctl(epoll_fd, EPOLL_CTL_DEL, w->fd, NULL);
}
