/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The start barrier between workers and a driver, so that a driver can
 * start many workers, wait until all are warmed up, measure them, and let
 * them run together:
 *
 *   ready  once warmed up, the worker writes one line (a JSON object, at
 *          most PIPE_BUF bytes, in one write(2), so lines from many workers
 *          never mix) to --ready-fd=N, or appends it to --ready=PATH (a FIFO
 *          the driver reads, or a regular file, created if missing), then
 *          closes it.
 *   go     then it waits until --go-fd=N, or the FIFO --go=PATH, is readable
 *          or hung up: the driver writes to it or closes its end. The FIFO is
 *          opened (non-blocking, for reading) when the worker starts, before
 *          it says ready, so a driver that opens it for writing and closes
 *          it once all are ready releases every worker, and none is missed.
 *
 * Without these options a worker neither reports ready nor waits.
 */

#include <stdbool.h>

struct barrier {
	int ready_fd;		/* -1: none */
	const char *ready_path;	/* NULL: none */
	int go_fd;		/* -1: none */
	const char *go_path;	/* NULL: none */
	bool go_fd_ours;	/* we opened go_path */
};

#define BARRIER_INIT { .ready_fd = -1, .go_fd = -1 }

/* Open --go=PATH (which must be a FIFO) now. */
int barrier_prepare(struct barrier *b);

/* Write line (with its newline) to the ready fd or file, and close it. */
int barrier_ready(struct barrier *b, const char *line);

/* Wait for the go signal; returns at once without a go fd. */
int barrier_wait_go(struct barrier *b);

void barrier_close(struct barrier *b);
