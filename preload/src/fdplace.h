/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Where the library keeps its region descriptors: high, out of the way of
 * programs that close, dup2() onto or count their low descriptors.
 */

/* The first descriptor number tried, if the limit on open files allows. */
#define PRELOAD_FD_BASE 1000

/*
 * A close-on-exec duplicate of fd at the lowest free number >= the base
 * (PRELOAD_FD_BASE if RLIMIT_NOFILE leaves 16 above it, else three
 * quarters of RLIMIT_NOFILE),
 * with fd closed; fd itself if no such number is free.
 */
int fd_move_high(int fd);
