/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Comparisons for the tests of what carries a container's regions and
 * annotations: protocol.c's messages (common/tests/test-protocol.c) and the
 * daemon's saved state (mshare-helper/tests/test-state.c).
 */

#include <stdbool.h>
#include <stddef.h>

#include "mshare-common/protocol.h"

/* The same n regions in the same modes, in the same order. */
static inline bool region_requests_equal(const struct proto_region_request *a,
					 const struct proto_region_request *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!streq(a[i].region, b[i].region) || a[i].mode != b[i].mode)
			return false;
	return true;
}

/*
 * Whether each of the n annotations at a is among the n at b: JSON objects
 * have no order. A macro, for arrays of any structure with strings key and
 * value: struct proto_annotation and the daemon's struct
 * container_annotation alike.
 */
#define annotations_equal(a, b, n)                                                      \
	({                                                                              \
		bool _all_ = true;                                                      \
		for (size_t _i_ = 0; _all_ && _i_ < (n); _i_++) {                       \
			bool _found_ = false;                                           \
			for (size_t _j_ = 0; _j_ < (n); _j_++)                          \
				_found_ |= streq((a)[_i_].key, (b)[_j_].key) &&         \
					   streq((a)[_i_].value, (b)[_j_].value);       \
			_all_ = _found_;                                                \
		}                                                                       \
		_all_;                                                                  \
	})
