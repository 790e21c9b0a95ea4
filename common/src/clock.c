// SPDX-License-Identifier: LGPL-2.1-or-later
#include <time.h>

#include "mshare-common/clock.h"

usec_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (usec_t)ts.tv_sec * USEC_PER_SEC + (usec_t)ts.tv_nsec / 1000;
}
