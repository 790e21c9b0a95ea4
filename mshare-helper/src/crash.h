/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Places where a crash must leave what a restart can adopt: right after a
 * region's or a channel's descriptors went into the fd store and before the
 * state that names them did, in the middle of populating, and between
 * saving a registration and replying to it. In mshare-owner this does
 * nothing; the host tests' build (tests/fake-crash.c) kills the daemon
 * with SIGKILL at the point that $FAKE_MSHARE_CRASH names, to check what
 * the next start makes of it (docs/mshare-owner.8, RESTARTS).
 */
void crash_point(const char *where);
