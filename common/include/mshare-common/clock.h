/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Time in microseconds, for deadlines and timeouts. */

#include <stdint.h>

typedef uint64_t usec_t;
#define USEC_PER_SEC ((usec_t)1000000)
#define USEC_PER_MSEC ((usec_t)1000)
#define USEC_INFINITY ((usec_t)UINT64_MAX)

/* CLOCK_MONOTONIC in microseconds. */
usec_t now_usec(void);
