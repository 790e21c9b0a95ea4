/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The JSON a worker prints: one line at the end on stdout, and the ready
 * line it hands to the barrier. README.md lists the members.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "mshare-common/procstat.h"
#include "pool.h"
#include "workload.h"

struct worker_report {
	const char *id;			/* --id, or NULL */
	pid_t pid;
	const char *backing;		/* mshare, shm, hugetlb */
	const char *backing_spec;	/* what was mapped */
	uint64_t pool_bytes, record_bytes, records;
	uint64_t page_bytes;		/* 0: unknown */
	const struct workload_opts *opts;

	/* Times, in ns: CLOCK_MONOTONIC at main() entry and after each phase. */
	uint64_t t_main, t_mapped, t_ready, t_go;
	uint64_t boot_main, boot_ready;	/* CLOCK_BOOTTIME at main() and at ready */
	uint64_t boot_proc_start;	/* the kernel's start time of the process, 0 if unknown */

	const char *warmup;		/* read, write, none */
	uint64_t warmup_pages;
	struct proc_sample at_main, at_mapped, at_ready, at_end;

	const struct workload_result *run;	/* NULL before the run */
	const struct latch_stats *latch;
	const struct pool_verify *verify;	/* NULL unless --verify */
};

/* The ready line (one JSON object, no newline); free() it. NULL: no memory. */
char *report_ready_line(const struct worker_report *w);

/* The final line (one JSON object, no newline); free() it. */
char *report_final_line(const struct worker_report *w);
