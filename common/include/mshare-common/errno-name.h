/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * errno values by their symbolic names, "ENOENT" <-> ENOENT: how the
 * protocol (docs/protocol.md) carries errors, and how messages name them.
 * The table is the C library's (strerrorname_np()).
 */

/* The name of error (either sign); "EIO" for a value without one. */
const char *errno_to_name(int error);

/* The (positive) errno called name, or 0 for NULL or an unknown name. */
int errno_from_name(const char *name);
