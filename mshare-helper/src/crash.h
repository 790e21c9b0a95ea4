/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Places where a crash must leave what a restart can adopt: right after a
 * region's or a channel's descriptors went into the fd store and before the
 * state that names them did, in the middle of populating, and between
 * saving a registration and replying to it. Also where a signal must not
 * end the daemon (right after it received the store's descriptors,
 * "received") and where memory running out must not lose a region
 * (holding one from the store, "hold"). In mshare-owner this does nothing;
 * the host tests' build (tests/fake-crash.c) kills the daemon with SIGKILL,
 * sends it SIGHUP or fails its next allocation at the point that an
 * environment variable names, to check what it and the next start make of
 * it (docs/mshare-owner.8, RESTARTS).
 */
void crash_point(const char *where);
