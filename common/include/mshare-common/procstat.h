/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What this process costs: its page tables, its page faults, its age. The
 * one reading of them for demo-app's programs and the in-guest probes
 * (mshare-helper's region-probe, preload's guest-preload), whose numbers
 * the tests compare.
 */

#include <stddef.h>
#include <stdint.h>

struct proc_sample {
	int64_t vmpte_kb;	/* VmPTE of /proc/self/status, -1 if unknown */
	uint64_t minflt;	/* minor faults so far (getrusage) */
	uint64_t majflt;	/* major faults so far */
};

void proc_sample(struct proc_sample *s);

/*
 * The numbers of keys in a file of "Key: value [kB]" lines (/proc/meminfo,
 * /proc/PID/status) or "key value" lines (a cgroup's memory.stat): values[i]
 * gets the value of keys[i] as written (kB where the file says kB), or -1
 * if no line has it. The number of keys found, or -errno (-EBADMSG for a
 * key without a number).
 */
int proc_fields(const char *path, const char *const *keys, int64_t *values, size_t n);

/* One key's value as proc_fields(): 0, -ENOENT if no line has it, or -errno. */
int proc_field(const char *path, const char *key, int64_t *ret);

/* VmPTE of /proc/self/status in kB, or -errno. */
int64_t proc_vmpte_kb(void);

/*
 * When this process started (field 22 of /proc/self/stat: the fork, in
 * clock ticks since boot), in nanoseconds of CLOCK_BOOTTIME; its
 * resolution is one tick (10 ms with USER_HZ 100). 0 if unknown.
 */
uint64_t proc_start_boottime_ns(void);
