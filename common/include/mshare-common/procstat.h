/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What this process costs: its page tables, its page faults, its age. The
 * one reading of them for demo-app's programs and the in-guest probes
 * (mshare-helper's region-probe, preload's guest-preload), whose numbers
 * the tests compare.
 */

#include <stdint.h>

struct proc_sample {
	int64_t vmpte_kb;	/* VmPTE of /proc/self/status, -1 if unknown */
	uint64_t minflt;	/* minor faults so far (getrusage) */
	uint64_t majflt;	/* major faults so far */
};

void proc_sample(struct proc_sample *s);

/* VmPTE of /proc/self/status in kB, or -errno. */
int64_t proc_vmpte_kb(void);

/*
 * When this process started (field 22 of /proc/self/stat: the fork, in
 * clock ticks since boot), in nanoseconds of CLOCK_BOOTTIME; its
 * resolution is one tick (10 ms with USER_HZ 100). 0 if unknown.
 */
uint64_t proc_start_boottime_ns(void);
